/* fuzz_yaml.c — libFuzzer target for the ODF YAML parser/emitter.
 *
 * Feeds arbitrary bytes to odf_yaml_parse_manifest for both manifest kinds
 * (and as a bare MetadataEvent). Whatever parses must emit, and the emitted
 * text must parse again and emit identically (round-trip stability).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
