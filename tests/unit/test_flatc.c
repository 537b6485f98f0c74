/* test_flatc.c — cross-checks our FlatBuffers codec with an independent
 * implementation, Debian's `flatc` (package flatbuffers-compiler):
 *   our binary -> flatc --json      : flatc reads our buffers (its verifier
 *                                     accepts them) and sees the expected values
 *   flatc JSON -> flatc --binary    : flatc's own (differently laid out)
 *                -> our decoder      buffers decode to the same object, which
 *                -> our encoder      re-encodes to our original canonical bytes
 * flatc is found via PATH; the test fails loudly when it is missing. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "testutil.h"

#include "odf/block.h"
#include "odf/flatbuf.h"
#include "odf_golden_cases.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

static char *g_dir;

static int run(const char *cmd)
{
    int st = system(cmd);
    return (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
    (void)state;
    if (run("command -v flatc >/dev/null 2>&1") != 0) {
        fprintf(stderr, "test_flatc: `flatc` not found in PATH "
                        "(install Debian package flatbuffers-compiler)\n");
        return -1;
    }
    g_dir = tu_mkdtemp();
    return g_dir ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    if (g_dir) {
        tu_rmrf(g_dir);
        free(g_dir);
    }
    return 0;
}

static const char *fbs_path(void)
{
    return SILT_SOURCE_DIR "/src/odf/odf.fbs";
}

/* Encodes b, converts with flatc to JSON, checks it, converts back with flatc
 * and checks our decoder + encoder reproduce the original bytes. */
static void crosscheck(odf_MetadataBlock *b, const char *event_name, const char *name)
{
    char bin[512], json[512], cmd[2048], back_dir[512], back[1024];
    silt_buf enc = SILT_BUF_INIT;
    if (odf_fb_encode(&enc, &odf_desc_MetadataBlock, b) < 0)
        fail_msg("%s: encode: %s", name, silt_error_last());
    snprintf(bin, sizeof(bin), "%s/%s.bin", g_dir, name);
    snprintf(json, sizeof(json), "%s/%s.json", g_dir, name);
    assert_int_equal(tu_write_file(bin, enc.data, enc.len), 0);

    snprintf(cmd, sizeof(cmd),
             "flatc --json --strict-json --raw-binary -o '%s' '%s' --root-type MetadataBlock -- '%s'",
             g_dir, fbs_path(), bin);
    if (run(cmd) != 0)
        fail_msg("%s: flatc rejected our buffer: %s", name, cmd);

    json_error_t jerr;
    json_t *root = json_load_file(json, 0, &jerr);
    if (!root)
        fail_msg("%s: flatc JSON unreadable: %s", name, jerr.text);
    assert_int_equal(json_integer_value(json_object_get(root, "sequence_number")), 117);
    assert_string_equal(json_string_value(json_object_get(root, "event_type")), event_name);
    json_t *st = json_object_get(root, "system_time");
    assert_non_null(st);
    assert_int_equal(json_integer_value(json_object_get(st, "year")), 2020);
    assert_int_equal(json_integer_value(json_object_get(st, "ordinal")), 1);
    assert_int_equal(json_integer_value(json_object_get(st, "seconds_from_midnight")), 43200);
    json_t *ph = json_object_get(root, "prev_block_hash");
    assert_true(json_is_array(ph));
    assert_int_equal(json_array_size(ph), 34);
    for (size_t i = 0; i < 34; i++)
        assert_int_equal(json_integer_value(json_array_get(ph, i)), b->prev_block_hash.data[i]);
    assert_true(json_is_object(json_object_get(root, "event")));

    /* JSON -> flatc binary -> our decoder -> our encoder */
    snprintf(back_dir, sizeof(back_dir), "%s/back", g_dir);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && flatc --binary -o '%s' '%s' '%s'", back_dir,
             back_dir, fbs_path(), json);
    if (run(cmd) != 0)
        fail_msg("%s: flatc could not build a binary from its JSON", name);
    snprintf(back, sizeof(back), "%s/%s.bin", back_dir, name);
    size_t blen = 0;
    char *bdata = tu_read_file(back, &blen);
    assert_non_null(bdata);
    silt_arena *a = silt_arena_new();
    void *dec = NULL;
    if (odf_fb_decode(a, &odf_desc_MetadataBlock, (const uint8_t *)bdata, blen, &dec) < 0)
        fail_msg("%s: cannot decode flatc's buffer: %s", name, silt_error_last());
    silt_buf enc2 = SILT_BUF_INIT;
    assert_int_equal(odf_fb_encode(&enc2, &odf_desc_MetadataBlock, dec), 0);
    assert_int_equal(enc.len, enc2.len);
    assert_memory_equal(enc.data, enc2.data, enc.len);

    json_decref(root);
    free(bdata);
    silt_buf_free(&enc);
    silt_buf_free(&enc2);
    silt_arena_free(a);
}

static const char *event_name(int type)
{
    return odf_udesc_MetadataEvent.variants[type - 1]->name;
}

static void test_golden_cases(void **state)
{
    (void)state;
    for (int n = 0; n < GOLDEN_NCASES; n++) {
        silt_arena *a = silt_arena_new();
        odf_MetadataBlock *b = golden_case_block(a, n);
        char name[32];
        snprintf(name, sizeof(name), "case%d", n);
        crosscheck(b, event_name(b->event.type), name);
        silt_arena_free(a);
    }
}

static void test_values_case9(void **state)
{
    (void)state;
    /* spot-check nested values as flatc sees them */
    silt_arena *a = silt_arena_new();
    odf_MetadataBlock *b = golden_case_block(a, 9);
    silt_buf enc = SILT_BUF_INIT;
    assert_int_equal(odf_fb_encode(&enc, &odf_desc_MetadataBlock, b), 0);
    char bin[512], json[512], cmd[2048];
    snprintf(bin, sizeof(bin), "%s/v9.bin", g_dir);
    snprintf(json, sizeof(json), "%s/v9.json", g_dir);
    assert_int_equal(tu_write_file(bin, enc.data, enc.len), 0);
    snprintf(cmd, sizeof(cmd),
             "flatc --json --strict-json --raw-binary -o '%s' '%s' --root-type MetadataBlock -- '%s'",
             g_dir, fbs_path(), bin);
    assert_int_equal(run(cmd), 0);
    json_error_t jerr;
    json_t *root = json_load_file(json, 0, &jerr);
    assert_non_null(root);
    json_t *ev = json_object_get(root, "event");
    assert_int_equal(json_integer_value(json_object_get(ev, "prev_offset")), 9);
    json_t *qi = json_object_get(ev, "query_inputs");
    assert_int_equal(json_array_size(qi), 2);
    json_t *q0 = json_array_get(qi, 0);
    assert_int_equal(json_integer_value(json_object_get(q0, "new_offset")), 20);
    assert_int_equal(json_array_size(json_object_get(q0, "dataset_id")), 34);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(q0, "dataset_id"), 0)), 0xed);
    json_t *q1 = json_array_get(qi, 1);
    assert_null(json_object_get(q1, "new_offset"));
    json_t *nd = json_object_get(ev, "new_data");
    assert_int_equal(json_integer_value(json_object_get(nd, "size")), 10);
    json_t *oi = json_object_get(nd, "offset_interval");
    assert_int_equal(json_integer_value(json_object_get(oi, "start")), 10);
    assert_int_equal(json_integer_value(json_object_get(oi, "end")), 19);
    json_decref(root);
    silt_buf_free(&enc);
    silt_arena_free(a);
}

static void test_more_events(void **state)
{
    (void)state;
    silt_arena *a = silt_arena_new();
    /* Seed */
    odf_MetadataBlock *b = golden_case_block(a, 0);
    odf_Seed *seed = GNEW(a, odf_Seed);
    seed->dataset_id = golden_did(a, "x");
    seed->dataset_kind = ODF_DatasetKind_Derivative;
    b->event.type = ODF_MetadataEvent_Seed;
    b->event.value = seed;
    crosscheck(b, "Seed", "seed");
    /* SetInfo with empty strings */
    odf_SetInfo *si = GNEW(a, odf_SetInfo);
    const char *kw[2] = {"", "x y"};
    si->description = "";
    si->keywords = golden_strvec(a, 2, kw);
    b->event.type = ODF_MetadataEvent_SetInfo;
    b->event.value = si;
    crosscheck(b, "SetInfo", "setinfo");
    /* DisablePollingSource (empty table) */
    b->event.type = ODF_MetadataEvent_DisablePollingSource;
    b->event.value = GNEW(a, odf_DisablePollingSource);
    crosscheck(b, "DisablePollingSource", "disable");
    silt_arena_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_cases),
        cmocka_unit_test(test_values_case9),
        cmocka_unit_test(test_more_events),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
