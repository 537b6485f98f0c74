/* test_yaml_input.c — the YAML front door (odf/yaml.h: input limits, byte
 * offsets of libyaml marks), the multi-document splitter (silt_yaml_split)
 * on non-ASCII text, the limits on the secrets file, and version 2 block
 * encoding. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "dataset/dataset_internal.h"
#include "ingest/config.h"
#include "odf/block.h"
#include "odf/odf_types.h"
#include "odf/yaml.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/multiformats.h"

/* ---------------------------------------------------------------- helpers */

static silt_ydoc *split_ok(silt_arena *a, const char *text, size_t *n)
{
    silt_ydoc *docs = NULL;
    int rc = silt_yaml_split(a, text, strlen(text), "t.yaml", &docs, n);
    if (rc != 0)
        fail_msg("split failed: %s", silt_error_last());
    return docs;
}

static void split_fails(const char *text, size_t len, const char *msg)
{
    silt_arena *a = silt_arena_new();
    silt_ydoc *docs = NULL;
    size_t n = 0;
    int rc = silt_yaml_split(a, text, len, "t.yaml", &docs, &n);
    if (rc != SILT_EINVAL)
        fail_msg("expected EINVAL (%s), got %d (%s)", msg, rc, silt_error_last());
    assert_string_equal(silt_error_last(), msg);
    silt_arena_free(a);
}

static void check_fails(const char *text, size_t len, const char *msg)
{
    assert_int_equal(odf_yaml_check(text, len, "t.yaml", 1), SILT_EINVAL);
    assert_string_equal(silt_error_last(), msg);
}

/* n nested flow sequences around a scalar: the scalar is at level n + 1 */
static char *nested(size_t n, const char *prefix)
{
    silt_buf b = SILT_BUF_INIT;
    silt_buf_puts(&b, prefix);
    for (size_t i = 0; i < n; i++)
        silt_buf_putc(&b, '[');
    silt_buf_putc(&b, 'x');
    for (size_t i = 0; i < n; i++)
        silt_buf_putc(&b, ']');
    silt_buf_putc(&b, '\n');
    return silt_buf_detach(&b);
}

/* --------------------------------------------------- byte offsets of marks */

static void test_offsets(void **state)
{
    (void)state;
    /* a, é (2 bytes), д (2), 中 (3), 😀 (4), b */
    const char *t = "a\xc3\xa9\xd0\xb4\xe4\xb8\xad\xf0\x9f\x98\x80" "b";
    odf_yaml_offsets o;
    odf_yaml_offsets_init(&o, t, strlen(t));
    size_t want[] = {0, 1, 3, 5, 8, 12, 13};
    for (size_t i = 0; i < 7; i++)
        assert_int_equal(odf_yaml_offset(&o, i), want[i]);
    /* backwards, and beyond the end (clamped) */
    assert_int_equal(odf_yaml_offset(&o, 2), 3);
    assert_int_equal(odf_yaml_offset(&o, 0), 0);
    assert_int_equal(odf_yaml_offset(&o, 99), 13);
    assert_int_equal(odf_yaml_offset(&o, 4), 8);
}

/* ------------------------------------------------------------- the splitter */

static const char MULTI[] =
    "# Комментарий — commentaire — 注释 — 😀\n"        /* line 1 */
    "kind: MetadataEvent\n"                              /* 2 */
    "version: 1\n"
    "content:\n"
    "  kind: SetInfo\n"                                  /* 5 */
    "  description: \"Données — данные — 数据 — 😀\"\n"
    "  keywords: [clé, ключ, 鍵, 🔑]\n"
    "---\n"
    "# second — второй\n"
    "kind: MetadataEvent\n"                              /* 10 */
    "version: 1\n"
    "content: {kind: SetLicense, shortName: ОДЛ, name: \"Licence — лицензия\", websiteUrl: \"https://é.org/\"}\n"
    "--- |\n"                                            /* 13: a scalar root */
    "  ligne été\n"
    "---\n"
    "---\n"                                              /* an empty document: skipped */
    "clé: valeur\n"                                      /* 17 */
    "kind: >\n"
    "  pliée — 折り\n"
    "  fin\n";

static void test_split_utf8(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    size_t n = 0;
    silt_ydoc *d = split_ok(a, MULTI, &n);
    assert_int_equal(n, 4);
    assert_int_equal(d[0].line, 2);
    assert_string_equal(d[0].kind, "MetadataEvent");
    assert_string_equal(d[0].text, "kind: MetadataEvent\nversion: 1\ncontent:\n  kind: SetInfo\n"
                                   "  description: \"Données — данные — 数据 — 😀\"\n"
                                   "  keywords: [clé, ключ, 鍵, 🔑]\n");
    assert_int_equal(d[0].content_line, 5);
    assert_string_equal(d[0].content, "  kind: SetInfo\n  description: \"Données — данные — 数据 — 😀\"\n"
                                      "  keywords: [clé, ключ, 鍵, 🔑]\n");
    /* a flow mapping cut at byte offsets, indented as in the file */
    assert_int_equal(d[1].line, 10);
    assert_int_equal(d[1].content_line, 12);
    assert_string_equal(d[1].content, "         {kind: SetLicense, shortName: ОДЛ, name: \"Licence — лицензия\", "
                                      "websiteUrl: \"https://é.org/\"}");
    assert_null(d[2].kind);
    assert_null(d[2].content);
    assert_int_equal(d[2].line, 13);
    assert_string_equal(d[2].text, "    |\n  ligne été\n");
    assert_int_equal(d[3].line, 17);
    assert_string_equal(d[3].kind, "pliée — 折り fin\n");
    assert_string_equal(d[3].text, "clé: valeur\nkind: >\n  pliée — 折り\n  fin\n");

    /* the slices parse with the right values and lines */
    odf_union ev;
    assert_int_equal(odf_yaml_parse_event_at(a, d[0].content, d[0].content_len, "t.yaml", d[0].content_line, &ev),
                     0);
    assert_int_equal(ev.type, ODF_MetadataEvent_SetInfo);
    const odf_SetInfo *si = ev.value;
    assert_string_equal(si->description, "Données — данные — 数据 — 😀");
    assert_int_equal(si->keywords.n, 4);
    assert_string_equal(si->keywords.items[3], "🔑");
    assert_int_equal(odf_yaml_parse_event_at(a, d[1].content, d[1].content_len, "t.yaml", d[1].content_line, &ev),
                     0);
    const odf_SetLicense *sl = ev.value;
    assert_string_equal(sl->short_name, "ОДЛ");
    assert_string_equal(sl->website_url, "https://é.org/");
    /* an error in a later document names the file's line */
    assert_int_equal(odf_yaml_parse_event_at(a, d[3].text, d[3].len, "t.yaml", d[3].line, &ev), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "t.yaml:18: kind: unknown kind 'pliée — 折り fin?' for MetadataEvent");
    silt_arena_free(a);
}

static void test_split_bom_crlf(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    size_t n = 0;
    silt_ydoc *d = split_ok(a, "\xef\xbb\xbfkind: SetInfo\r\ndescription: é\r\n---\r\nkind: x\r\n", &n);
    assert_int_equal(n, 2);
    assert_string_equal(d[0].text, "kind: SetInfo\r\ndescription: é\r\n");
    assert_string_equal(d[0].kind, "SetInfo");
    assert_string_equal(d[1].text, "kind: x\r\n");
    assert_int_equal(d[1].line, 4);
    silt_arena_free(a);
    /* the ODF parser skips a BOM too (libyaml alone would misread line 1) */
    a = silt_arena_new();
    odf_union ev;
    const char *t = "\xef\xbb\xbfkind: SetInfo\ndescription: é\n";
    assert_int_equal(odf_yaml_parse_event(a, t, strlen(t), "t.yaml", &ev), 0);
    assert_string_equal(((odf_SetInfo *)ev.value)->description, "é");
    silt_arena_free(a);
}

static void test_split_errors(void **state)
{
    (void)state;
    split_fails("a: é\n---\nb: [\n", 14, "t.yaml:4: YAML syntax error: did not find expected node content while "
                                         "parsing a flow node");
    split_fails("kind: x\n\xff\n", 10, "t.yaml:2: YAML syntax error: invalid leading UTF-8 octet");
    split_fails("a: &x 1\n", 8, "t.yaml:1: YAML anchors and aliases are not supported");
    split_fails("a: 1\n---\nb: *x\n", 15, "t.yaml:3: YAML anchors and aliases are not supported");
    /* UTF-16 (with and without a BOM) and UTF-32 */
    split_fails("\xff\xfek\0:\0", 6, "t.yaml: UTF-16 or UTF-32 text is not supported: save the file as UTF-8");
    split_fails("\0k\0:", 4, "t.yaml: UTF-16 or UTF-32 text is not supported: save the file as UTF-8");
    split_fails("\0\0\xfe\xff", 4, "t.yaml: UTF-16 or UTF-32 text is not supported: save the file as UTF-8");
}

/* ------------------------------------------------------------------ limits */

static void test_depth(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    /* 63 sequences: the scalar is at level 64 — accepted everywhere */
    char *ok = nested(63, "");
    size_t n = 0;
    silt_ydoc *d = split_ok(a, ok, &n);
    assert_int_equal(d[0].len, strlen(ok) - 1); /* the flow node, without the newline */
    assert_memory_equal(d[0].text, ok, d[0].len);
    assert_int_equal(n, 1);
    assert_int_equal(odf_yaml_check(ok, strlen(ok), "t.yaml", 1), 0);
    free(ok);
    /* one more, in the second document: refused by all, naming the line */
    char *bad = nested(64, "a: 1\n---\n");
    split_fails(bad, strlen(bad), "t.yaml:3: nesting deeper than 64 levels");
    check_fails(bad, strlen(bad), "t.yaml:3: nesting deeper than 64 levels");
    void *obj;
    assert_int_equal(odf_yaml_parse_at(a, bad + 9, strlen(bad + 9), "t.yaml", 3, &odf_desc_SetInfo, &obj),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "t.yaml:3: nesting deeper than 64 levels");
    free(bad);
    /* block nesting counts the same way: the keys of the mapping on line i
     * are at level i + 1 */
    silt_buf b = SILT_BUF_INIT;
    for (int i = 0; i < 63; i++)
        silt_buf_printf(&b, "%*sk:\n", i, "");
    d = split_ok(a, b.data, &n);
    assert_int_equal(n, 1);
    silt_buf_printf(&b, "%*sk:\n", 63, "");
    split_fails(b.data, b.len, "t.yaml:64: nesting deeper than 64 levels");
    silt_buf_free(&b);
    silt_arena_free(a);
}

/* 100,000 nested flow sequences (200 KB): libyaml's loader takes about a
 * minute on this (its simple-key bookkeeping is quadratic in flow depth);
 * the event-stream check stops at level 65. */
static void test_deep_is_fast(void **state)
{
    (void)state;
    char *deep = nested(100000, "kind: DatasetSnapshot\ncontent: ");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    split_fails(deep, strlen(deep), "t.yaml:2: nesting deeper than 64 levels");
    check_fails(deep, strlen(deep), "t.yaml:2: nesting deeper than 64 levels");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    if (s > 5.0) /* generous: about 0.01 s here */
        fail_msg("rejecting a 100,000-deep document took %.1f s", s);
    free(deep);
}

static void test_size(void **state)
{
    (void)state;
    size_t len = ODF_YAML_MAX_BYTES + 1;
    char *big = malloc(len + 1);
    assert_non_null(big);
    memset(big, ' ', len);
    memcpy(big, "a: ", 3);
    big[len - 1] = 'x';
    big[len] = '\0';
    split_fails(big, len, "t.yaml: larger than 32 MiB, the limit for YAML/JSON input");
    check_fails(big, len, "t.yaml: larger than 32 MiB, the limit for YAML/JSON input");
    silt_arena *a = silt_arena_new();
    void *obj;
    assert_int_equal(odf_yaml_parse(a, big, len, "t.yaml", &odf_desc_SetInfo, &obj), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "t.yaml: larger than 32 MiB, the limit for YAML/JSON input");
    /* exactly at the limit: accepted */
    assert_int_equal(odf_yaml_check(big, len - 1, "t.yaml", 1), 0);
    /* files: refused before reading, nothing appended */
    char *dir = tu_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    assert_int_equal(tu_write_file(path, big, len), 0);
    silt_buf b = SILT_BUF_INIT;
    silt_buf_puts(&b, "keep");
    assert_int_equal(odf_yaml_read_file(path, &b), SILT_EINVAL);
    char msg[4300];
    snprintf(msg, sizeof msg, "%s: larger than 32 MiB, the limit for YAML/JSON input", path);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(b.len, 4);
    assert_int_equal(tu_write_file(path, big, len - 1), 0);
    assert_int_equal(odf_yaml_read_file(path, &b), 0);
    assert_int_equal(b.len, 4 + len - 1);
    snprintf(path, sizeof path, "%s/none.yaml", dir);
    assert_int_equal(odf_yaml_read_file(path, &b), SILT_ENOTFOUND);
    snprintf(msg, sizeof msg, "%s: no such file", path);
    assert_string_equal(silt_error_last(), msg);
    silt_buf_free(&b);
    tu_rmrf(dir);
    free(dir);
    silt_arena_free(a);
    free(big);
}

/* .silt/secrets.yaml goes through the same limits */
static void test_secrets_limits(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char path[4200], msg[4400];
    snprintf(path, sizeof path, "%s/secrets.yaml", dir);
    silt_arena *a = silt_arena_new();
    odf_ValueRefs *r = silt_arena_alloc(a, sizeof *r);
    odf_ValueRefsEntry *e = silt_arena_alloc(a, sizeof *e);
    e->key = "token";
    e->value = silt_arena_alloc(a, sizeof(odf_ValueRef));
    e->value->type = "SecretSet";
    e->value->name = "bank";
    e->value->path = "token";
    r->entries.n = 1;
    r->entries.present = true;
    r->entries.items = silt_arena_alloc(a, sizeof(void *));
    r->entries.items[0] = e;
    silt_config *c = NULL;

    char *deep = nested(64, "bank:\n  token: t0ken\nother: ");
    assert_int_equal(tu_write_file(path, deep, strlen(deep)), 0);
    chmod(path, 0600);
    assert_int_equal(silt_config_load(&c, dir, r), SILT_EINVAL);
    snprintf(msg, sizeof msg, "%s:3: nesting deeper than 64 levels", path);
    assert_string_equal(silt_error_last(), msg);
    free(deep);

    const char *alias = "base: &b {token: t0ken}\nbank: *b\n";
    assert_int_equal(tu_write_file(path, alias, strlen(alias)), 0);
    assert_int_equal(silt_config_load(&c, dir, r), SILT_EINVAL);
    snprintf(msg, sizeof msg, "%s:1: YAML anchors and aliases are not supported", path);
    assert_string_equal(silt_error_last(), msg);

    const char *good = "\xef\xbb\xbf# секреты\nbank:\n  token: \"t0ken — é\"\n";
    assert_int_equal(tu_write_file(path, good, strlen(good)), 0);
    assert_int_equal(silt_config_load(&c, dir, r), 0);
    char *out = NULL;
    assert_int_equal(silt_config_render(c, "url", "k=${{ config.token }}", &out), 0);
    assert_string_equal(out, "k=t0ken — é");
    free(out);
    silt_config_free(c);
    silt_arena_free(a);
    tu_rmrf(dir);
    free(dir);
}

/* --------------------------------------------------- version 2 block encoding */

static void test_block_v2(void **state)
{
    (void)state;
    for (int i = 0; i < 10; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "odf-golden/case%d.yaml", i);
        size_t len;
        char *text = tu_read_file(tu_fixture(rel), &len);
        assert_non_null(text);
        silt_arena *a = silt_arena_new();
        void *obj = NULL;
        int version = 0;
        assert_int_equal(odf_yaml_parse_manifest(a, text, len, rel, "MetadataBlock", &version, &obj), 0);
        assert_int_equal(version, 3);
        for (int v = 2; v <= 3; v++) {
            snprintf(rel, sizeof rel, v == 2 ? "odf-golden/case%d.v2.hash" : "odf-golden/case%d.hash", i);
            char *want = tu_read_file(tu_fixture(rel), NULL);
            assert_non_null(want);
            want[strcspn(want, "\n")] = '\0';
            silt_buf enc = SILT_BUF_INIT;
            uint8_t mh[ODF_BLOCK_HASH_LEN];
            assert_int_equal(odf_block_encode_hash_version(&enc, obj, v, mh), 0);
            assert_string_equal(tu_hex(mh + 2, 32), want);
            /* the version 2 bytes decode back to the same block, as version 2 */
            silt_arena *b = silt_arena_new();
            odf_MetadataBlock *back = NULL;
            int got = 0;
            assert_int_equal(odf_block_decode(b, (const uint8_t *)enc.data, enc.len, &back, &got), 0);
            assert_int_equal(got, v);
            assert_int_equal(back->sequence_number, ((odf_MetadataBlock *)obj)->sequence_number);
            silt_arena_free(b);
            silt_buf_free(&enc);
            free(want);
        }
        silt_buf enc = SILT_BUF_INIT;
        assert_int_equal(odf_block_encode_version(&enc, obj, 4), SILT_EINVAL);
        assert_string_equal(silt_error_last(),
                            "cannot encode block: unsupported metadata block version 4 (supported: 2..3)");
        assert_int_equal(enc.len, 0);
        silt_arena_free(a);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_offsets),
        cmocka_unit_test(test_split_utf8),
        cmocka_unit_test(test_split_bom_crlf),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_depth),
        cmocka_unit_test(test_deep_is_fast),
        cmocka_unit_test(test_size),
        cmocka_unit_test(test_secrets_limits),
        cmocka_unit_test(test_block_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
