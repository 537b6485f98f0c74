/* test_golden.c — canonical block encoding against reference vectors.
 *
 * Each tests/fixtures/odf-golden/caseN.yaml describes a block; here the same
 * block is built by hand in C, encoded, and the SHA3-256 of the manifest is
 * compared with caseN.hash (computed by the ODF reference implementation).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "odf/block.h"
#include "odf/flatbuf.h"
#include "odf_golden_cases.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/hash.h"

static void check_case(int n)
{
    silt_arena *a = silt_arena_new();
    assert_non_null(a);
    odf_MetadataBlock *b = golden_case_block(a, n);
    assert_non_null(b);

    silt_buf out = SILT_BUF_INIT;
    int rc = odf_block_encode(&out, b);
    if (rc < 0)
        fail_msg("case%d: encode failed: %s", n, silt_error_last());
    uint8_t digest[32];
    assert_int_equal(silt_sha3_256(out.data, out.len, digest), 0);

    char path[64];
    snprintf(path, sizeof(path), "odf-golden/case%d.hash", n);
    size_t hlen = 0;
    char *expected = tu_read_file(tu_fixture(path), &hlen);
    assert_non_null(expected);
    while (hlen && (expected[hlen - 1] == '\n' || expected[hlen - 1] == '\r' ||
                    expected[hlen - 1] == ' '))
        expected[--hlen] = '\0';
    if (strcmp(tu_hex(digest, 32), expected) != 0)
        fail_msg("case%d: hash %s, expected %s", n, tu_hex(digest, 32), expected);

    /* the multihash helper agrees */
    uint8_t mh[ODF_BLOCK_HASH_LEN];
    assert_int_equal(odf_block_hash((const uint8_t *)out.data, out.len, mh), 0);
    assert_int_equal(mh[0], 0x16);
    assert_int_equal(mh[1], 0x20);
    assert_memory_equal(mh + 2, digest, 32);
    uint8_t mh2[ODF_BLOCK_HASH_LEN];
    assert_int_equal(odf_block_encode_hash(NULL, b, mh2), 0);
    assert_memory_equal(mh, mh2, sizeof(mh));

    /* decode and re-encode: byte identical */
    odf_MetadataBlock *d = NULL;
    int version = 0;
    rc = odf_block_decode(a, (const uint8_t *)out.data, out.len, &d, &version);
    if (rc < 0)
        fail_msg("case%d: decode failed: %s", n, silt_error_last());
    assert_int_equal(version, 3);
    silt_buf out2 = SILT_BUF_INIT;
    assert_int_equal(odf_block_encode(&out2, d), 0);
    assert_int_equal(out.len, out2.len);
    assert_memory_equal(out.data, out2.data, out.len);

    free(expected);
    silt_buf_free(&out);
    silt_buf_free(&out2);
    silt_arena_free(a);
}

#define CASE(n) \
    static void test_case##n(void **state) { (void)state; check_case(n); }
CASE(0)
CASE(1)
CASE(2)
CASE(3)
CASE(4)
CASE(5)
CASE(6)
CASE(7)
CASE(8)
CASE(9)

static void test_seeded_did(void **state)
{
    (void)state;
    uint8_t did[34];
    golden_seeded_did("input1", did);
    assert_int_equal(did[0], 0xed);
    assert_int_equal(did[1], 0x01);
    uint8_t did2[34];
    golden_seeded_did("input2", did2);
    assert_memory_not_equal(did, did2, 34);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_case0), cmocka_unit_test(test_case1), cmocka_unit_test(test_case2),
        cmocka_unit_test(test_case3), cmocka_unit_test(test_case4), cmocka_unit_test(test_case5),
        cmocka_unit_test(test_case6), cmocka_unit_test(test_case7), cmocka_unit_test(test_case8),
        cmocka_unit_test(test_case9), cmocka_unit_test(test_seeded_did),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
