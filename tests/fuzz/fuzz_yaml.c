/* fuzz_yaml.c — libFuzzer target for the ODF YAML parser/emitter and the
 * multi-document splitter.
 *
 * Feeds arbitrary bytes to odf_yaml_parse_manifest for both manifest kinds
 * (and as a bare MetadataEvent). Whatever parses must emit, and the emitted
 * text must parse again and emit identically (round-trip stability).
 *
 * The same bytes go through silt_yaml_split (`silt add` / `silt append`):
 * it must succeed exactly when odf_yaml_check accepts the stream (both apply
 * the input limits to the same events), each document's slice split again
 * must give back the same document (libyaml's marks count characters: a
 * slice cut at a wrong byte offset would not), and each slice goes through
 * the ODF parsers like `silt add` does.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "dataset/dataset_internal.h"
#include "odf/json.h"
#include "odf/odf_types.h"
#include "odf/yaml.h"
#include "util/arena.h"
#include "util/buf.h"

static void check_roundtrip(const char *kind, int version, const odf_table_desc *d, void *obj)
{
    silt_buf out1 = SILT_BUF_INIT, out2 = SILT_BUF_INIT;
    if (odf_yaml_emit_manifest(&out1, kind, version, d, obj) != 0)
        goto done; /* e.g. strings the emitter refuses; must not crash */
    silt_arena *a2 = silt_arena_new();
    if (!a2)
        goto done;
    void *obj2 = NULL;
    int v2 = 0;
    if (odf_yaml_parse_manifest(a2, out1.data, out1.len, "roundtrip", kind, &v2, &obj2) != 0)
        __builtin_trap(); /* our own output must read back */
    if (odf_yaml_emit_manifest(&out2, kind, v2, d, obj2) != 0)
        __builtin_trap();
    if (out1.len != out2.len || memcmp(out1.data, out2.data, out1.len) != 0)
        __builtin_trap();
    silt_arena_free(a2);
done:
    silt_buf_free(&out1);
    silt_buf_free(&out2);
}

static bool same(const char *a, size_t an, const char *b, size_t bn)
{
    return an == bn && (!an || !memcmp(a, b, an));
}

/* A document's slice, split again, must give back the same document: a
 * slice cut at a character count instead of a byte offset does not. (Only
 * when the slice parses alone: a %TAG directive stays behind.) */
static void check_resplit(const silt_ydoc *d)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return;
    silt_ydoc *docs = NULL;
    size_t n = 0;
    if (silt_yaml_split(a, d->text, d->len, "again.yaml", &docs, &n) == 0) {
        if (n != 1 || !same(docs[0].text, docs[0].len, d->text, d->len))
            __builtin_trap();
        if ((docs[0].kind == NULL) != (d->kind == NULL) || (d->kind && strcmp(docs[0].kind, d->kind)))
            __builtin_trap();
        if ((docs[0].content == NULL) != (d->content == NULL) ||
            (d->content && !same(docs[0].content, docs[0].content_len, d->content, d->content_len)))
            __builtin_trap();
        if (d->content && docs[0].content_line != d->content_line - d->line + 1)
            __builtin_trap();
    }
    silt_arena_free(a);
}

static void fuzz_split(const uint8_t *data, size_t size)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return;
    silt_ydoc *docs = NULL;
    size_t n = 0;
    int rc = silt_yaml_split(a, (const char *)data, size, "fuzz.yaml", &docs, &n);
    int check = odf_yaml_check((const char *)data, size, "fuzz.yaml", 1);
    if (rc != SILT_ENOMEM && (rc == 0) != (check == 0))
        __builtin_trap();
    for (size_t i = 0; rc == 0 && i < n; i++) {
        check_resplit(&docs[i]);
        void *obj = NULL;
        (void)odf_yaml_parse_manifest_at(a, docs[i].text, docs[i].len, "fuzz.yaml", docs[i].line, NULL, NULL,
                                         &obj);
        if (docs[i].content) {
            odf_union ev;
            (void)odf_yaml_parse_event_at(a, docs[i].content, docs[i].content_len, "fuzz.yaml",
                                          docs[i].content_line, &ev);
        }
    }
    silt_arena_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_split(data, size);
    static const char *const kinds[] = {"MetadataBlock", "DatasetSnapshot"};
    for (int k = 0; k < 2; k++) {
        silt_arena *a = silt_arena_new();
        if (!a)
            return 0;
        void *obj = NULL;
        int version = 0;
        if (odf_yaml_parse_manifest(a, (const char *)data, size, "fuzz.yaml", kinds[k], &version, &obj) == 0) {
            const odf_table_desc *d = k == 0 ? &odf_desc_MetadataBlock : &odf_desc_DatasetSnapshot;
            check_roundtrip(kinds[k], version, d, obj);
            json_t *j = odf_to_json(d, obj);
            json_decref(j);
        }
        silt_arena_free(a);
    }
    silt_arena *a = silt_arena_new();
    if (!a)
        return 0;
    odf_union ev;
    if (odf_yaml_parse_event(a, (const char *)data, size, "fuzz.yaml", &ev) == 0) {
        silt_buf out = SILT_BUF_INIT;
        (void)odf_yaml_emit_union(&out, &odf_udesc_MetadataEvent, &ev, 2);
        silt_buf_free(&out);
    }
    silt_arena_free(a);
    return 0;
}
