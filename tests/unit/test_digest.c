/* test_digest.c — the arrow0-sha3-256 logical hash (src/engine/digest.h).
 *
 * (a) hand-written byte streams of RecordDigestV0, hashed with silt_sha3_256,
 *     against the streaming hasher; (b) batch-split invariance; (c) validity
 *     bitmap without nulls == no bitmap; (d) Parquet files written by DuckDB
 *     against the core fed with the same values, layout independence,
 *     sensitivity to one value, unsupported types; (e) oracle vectors under
 *     tests/fixtures/digest/ when present. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/digest.h"
#include "engine/engine.h"
#include "engine/parquet_meta.h"
#include "util/error.h"
#include "util/hash.h"

#include <jansson.h>

/* ------------------------------------------------------------------ helpers */

/* Appends the bytes of a hex string (spaces/newlines ignored) to buf. */
static size_t hexcat(uint8_t *buf, size_t at, const char *hex)
{
    unsigned v;
    while (*hex) {
        if (*hex == ' ' || *hex == '\n') {
            hex++;
            continue;
        }
        assert_int_equal(sscanf(hex, "%2x", &v), 1);
        buf[at++] = (uint8_t)v;
        hex += 2;
    }
    return at;
}

static void sha3_hex(const char *hex, uint8_t out[32])
{
    uint8_t buf[4096];
    size_t n = hexcat(buf, 0, hex);
    assert_int_equal(silt_sha3_256(buf, n, out), 0);
}

/* record digest = sha3(prefix || col digests…) */
static void record_expected(const char *prefix_hex, const uint8_t (*cols)[32], size_t ncols,
                            uint8_t out[32])
{
    uint8_t buf[4096];
    size_t n = hexcat(buf, 0, prefix_hex);
    for (size_t i = 0; i < ncols; i++) {
        memcpy(buf + n, cols[i], 32);
        n += 32;
    }
    assert_int_equal(silt_sha3_256(buf, n, out), 0);
}

static void digest_of(const silt_arrow_field *f, size_t nf, const silt_arrow_array *cols,
                      size_t rows, uint8_t out[32])
{
    silt_record_digest *d = NULL;
    assert_int_equal(silt_record_digest_new(&d, f, nf), 0);
    assert_int_equal(silt_record_digest_update(d, cols, rows), 0);
    assert_int_equal(silt_record_digest_finalize(d, out), 0);
    silt_record_digest_free(d);
}

#define T_INT(bw, sgn) ((silt_arrow_type){.id = SILT_ARROW_INT, .bit_width = (bw), .is_signed = (sgn)})

/* ------------------------------------------------------------------ (a) vectors */

static void test_multihash(void **state)
{
    (void)state;
    uint8_t dg[32], mh[SILT_ARROW_MH_LEN];
    for (int i = 0; i < 32; i++)
        dg[i] = (uint8_t)i;
    silt_arrow_multihash(dg, mh);
    assert_string_equal(tu_hex(mh, 5), "9680c00120");
    assert_memory_equal(mh + 5, dg, 32);
    char text[SILT_ARROW_MH_TEXT_LEN + 1];
    silt_arrow_multihash_text(mh, text);
    assert_string_equal(text, "f9680c00120000102030405060708090a0b0c0d0e0f"
                              "101112131415161718191a1b1c1d1e1f");
    assert_int_equal(strlen(text), 75);
}

/* a: Int32 [1,2,3]; b: Utf8 ["x", null, "yz"] */
static void test_vector_int_utf8(void **state)
{
    (void)state;
    silt_arrow_field f[2] = {
        {.name = "a", .type = T_INT(32, true)},
        {.name = "b", .nullable = true, .type = {.id = SILT_ARROW_UTF8}},
    };
    int32_t a[3] = {1, 2, 3};
    uint8_t bv = 0x05; /* rows 0 and 2 valid */
    silt_arrow_bytes b[3] = {{(const uint8_t *)"x", 1}, {NULL, 0}, {(const uint8_t *)"yz", 2}};
    silt_arrow_array cols[2] = {
        {.length = 3, .values = a},
        {.length = 3, .validity = &bv, .bytes = b},
    };
    uint8_t got[32];
    digest_of(f, 2, cols, 3, got);

    uint8_t colh[2][32], want[32];
    /* Int32: type u16 1, signed u8 1, width u64 32; then 3 x i32 LE */
    sha3_hex("0100 01 2000000000000000"
             "01000000 02000000 03000000", colh[0]);
    /* Utf8: type u16 4; "x" = len u64 1 + 78; null = 00; "yz" = len 2 + 79 7a */
    sha3_hex("0400"
             "0100000000000000 78"
             "00"
             "0200000000000000 797a", colh[1]);
    record_expected("0100000000000000 61 0000000000000000"
                    "0100000000000000 62 0000000000000000", colh, 2, want);
    assert_memory_equal(got, want, 32);
}

/* s: Struct{c: Bool, t: Timestamp(ms, "UTC")}, l: List<UInt8>, d: Decimal128(5,2),
 * dt: Date32, tm: Time32(ms), fb: FixedSizeBinary(2). Three rows:
 *   s = {true, 1000}, null, {false, null}
 *   l = [1, null], null, []
 * The struct has a null (row 1) and t has its own null (row 2), so t's
 * validity is the OR of both (arrow-digest quirk): row 2 is hashed as the
 * value in its slot (0), row 1 as null. */
static void test_vector_nested(void **state)
{
    (void)state;
    silt_arrow_field sk[2] = {
        {.name = "c", .nullable = true, .type = {.id = SILT_ARROW_BOOL}},
        {.name = "t", .nullable = true,
         .type = {.id = SILT_ARROW_TIMESTAMP, .unit = SILT_ARROW_MILLI, .timezone = "UTC"}},
    };
    silt_arrow_field item = {.name = "element", .nullable = true, .type = T_INT(8, false)};
    silt_arrow_field f[6] = {
        {.name = "s", .nullable = true,
         .type = {.id = SILT_ARROW_STRUCT, .children = sk, .num_children = 2}},
        {.name = "l", .nullable = true,
         .type = {.id = SILT_ARROW_LIST, .children = &item, .num_children = 1}},
        {.name = "d", .type = {.id = SILT_ARROW_DECIMAL, .bit_width = 128, .precision = 5, .scale = 2}},
        {.name = "dt", .type = {.id = SILT_ARROW_DATE, .bit_width = 32}},
        {.name = "tm", .type = {.id = SILT_ARROW_TIME, .bit_width = 32, .unit = SILT_ARROW_MILLI}},
        {.name = "fb", .type = {.id = SILT_ARROW_FIXED_BINARY, .byte_width = 2}},
    };
    uint8_t s_valid = 0x05, c_valid = 0x05, t_valid = 0x01;
    uint8_t c_vals[3] = {1, 0, 0};
    int64_t t_vals[3] = {1000, 0, 0};
    silt_arrow_array s_kids[2] = {
        {.length = 3, .validity = &c_valid, .values = c_vals},
        {.length = 3, .validity = &t_valid, .values = t_vals},
    };
    uint8_t items[2] = {1, 0}, items_valid = 0x01, l_valid = 0x05;
    silt_arrow_array l_items = {.length = 2, .validity = &items_valid, .values = items};
    silt_arrow_list_entry l_ent[3] = {{0, 2}, {2, 0}, {2, 0}};
    uint8_t d_vals[48] = {0};
    d_vals[0] = 0x39; d_vals[1] = 0x30;                      /* 123.45 -> 12345 */
    memset(d_vals + 16, 0xff, 16);                            /* -0.01 -> -1 */
    d_vals[32] = 0x01;                                        /* 0.01 -> 1 */
    int32_t dt_vals[3] = {0, 18262, -1};
    int32_t tm_vals[3] = {0, 3723456, 86399999};
    uint8_t fb_vals[6] = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};
    silt_arrow_array cols[6] = {
        {.length = 3, .validity = &s_valid, .children = s_kids},
        {.length = 3, .validity = &l_valid, .lists = l_ent, .children = &l_items},
        {.length = 3, .values = d_vals},
        {.length = 3, .values = dt_vals},
        {.length = 3, .values = tm_vals},
        {.length = 3, .values = fb_vals},
    };
    uint8_t got[32];
    digest_of(f, 6, cols, 3, got);

    uint8_t colh[6][32], want[32];
    sha3_hex("0500" "02 00 01", colh[0]); /* Bool: u16 5; true=2, null=0, false=1 */
    sha3_hex("0900 0100 0300000000000000 555443" /* Timestamp: u16 9, unit ms, tz "UTC" */
             "e803000000000000"                  /* 1000 */
             "00"                                /* null (struct and child null) */
             "0000000000000000", colh[1]);       /* OR quirk: slot value 0 */
    sha3_hex("0b00 0100 00 0800000000000000"     /* List<UInt8> */
             "0200000000000000 01 00"            /* [1, null] */
             "00"                                /* null */
             "0000000000000000", colh[2]);       /* [] */
    sha3_hex("0600 8000000000000000 0500000000000000 0200000000000000"
             "39300000000000000000000000000000"
             "ffffffffffffffffffffffffffffffff"
             "01000000000000000000000000000000", colh[3]);
    sha3_hex("0700 2000000000000000 0000" "00000000 56470000 ffffffff", colh[4]);
    sha3_hex("0800 2000000000000000 0100" "00000000 c0d03800 ff5b2605", colh[5]);
    uint8_t colh2[7][32];
    memcpy(colh2, colh, sizeof colh);
    sha3_hex("0300" "0200000000000000 dead" "0200000000000000 beef" "0200000000000000 0001",
             colh2[6]);
    /* leaves: c, t, l, d, dt, tm, fb */
    const uint8_t(*order[7]) = {colh2[0], colh2[1], colh2[2], colh2[3], colh2[4], colh2[5], colh2[6]};
    uint8_t leaves[7][32];
    for (int i = 0; i < 7; i++)
        memcpy(leaves[i], order[i], 32);
    record_expected("0100000000000000 73 0000000000000000"   /* s, level 0 */
                    "0100000000000000 63 0100000000000000"   /* c, level 1 */
                    "0100000000000000 74 0100000000000000"   /* t, level 1 */
                    "0100000000000000 6c 0000000000000000"   /* l */
                    "0100000000000000 64 0000000000000000"   /* d */
                    "0200000000000000 6474 0000000000000000" /* dt */
                    "0200000000000000 746d 0000000000000000" /* tm */
                    "0200000000000000 6662 0000000000000000", /* fb */
                    (const uint8_t(*)[32])leaves, 7, want);
    assert_memory_equal(got, want, 32);
}

/* ------------------------------------------------------------------ (b), (c) */

#define NROWS 23

typedef struct sample {
    silt_arrow_field item, sk[2], f[6];
    int32_t i32[NROWS];
    uint8_t i32_valid[4];
    silt_arrow_bytes str[NROWS];
    char strbuf[NROWS][8];
    uint8_t str_valid[4];
    int16_t items[3 * NROWS];
    uint8_t items_valid[8];
    silt_arrow_list_entry lists[NROWS];
    uint8_t list_valid[4];
    uint8_t bools[NROWS];
    int64_t st_i64[NROWS];
    uint8_t st_valid[4], st_i64_valid[4];
    uint8_t dec[16 * NROWS];
    silt_arrow_array l_items, st_kids[1];
} sample;

static void sample_init(sample *s, bool with_nulls)
{
    memset(s, 0, sizeof *s);
    s->item = (silt_arrow_field){.name = "item", .nullable = true, .type = T_INT(16, true)};
    s->sk[0] = (silt_arrow_field){.name = "x", .nullable = true, .type = T_INT(64, true)};
    s->f[0] = (silt_arrow_field){.name = "i", .nullable = true, .type = T_INT(32, true)};
    s->f[1] = (silt_arrow_field){.name = "s", .nullable = true, .type = {.id = SILT_ARROW_UTF8}};
    s->f[2] = (silt_arrow_field){.name = "l", .nullable = true,
                                 .type = {.id = SILT_ARROW_LIST, .children = &s->item, .num_children = 1}};
    s->f[3] = (silt_arrow_field){.name = "b", .type = {.id = SILT_ARROW_BOOL}};
    s->f[4] = (silt_arrow_field){.name = "st", .nullable = true,
                                 .type = {.id = SILT_ARROW_STRUCT, .children = s->sk, .num_children = 1}};
    s->f[5] = (silt_arrow_field){.name = "dec", .type = {.id = SILT_ARROW_DECIMAL, .bit_width = 128,
                                                         .precision = 20, .scale = 3}};
    size_t nitems = 0;
    memset(s->items_valid, 0xff, sizeof s->items_valid);
    for (int r = 0; r < NROWS; r++) {
        s->i32[r] = r * 7 - 50;
        snprintf(s->strbuf[r], sizeof s->strbuf[r], "r%d", r * r);
        s->str[r] = (silt_arrow_bytes){(const uint8_t *)s->strbuf[r], strlen(s->strbuf[r])};
        s->lists[r].offset = nitems;
        s->lists[r].length = (size_t)(r % 4);
        for (int k = 0; k < r % 4; k++, nitems++) {
            s->items[nitems] = (int16_t)(r * 10 + k);
            if (with_nulls && nitems % 5 == 2)
                s->items_valid[nitems / 8] &= (uint8_t) ~(1u << (nitems % 8));
        }
        s->bools[r] = (uint8_t)(r % 3 == 0);
        s->st_i64[r] = (int64_t)r * 1000000007LL;
        int64_t dv = (int64_t)r * 12345 - 99999;
        for (int k = 0; k < 16; k++)
            s->dec[16 * r + k] = k < 8 ? (uint8_t)((uint64_t)dv >> (8 * k)) : (dv < 0 ? 0xff : 0);
    }
    memset(s->i32_valid, 0xff, 4);
    memset(s->str_valid, 0xff, 4);
    memset(s->list_valid, 0xff, 4);
    memset(s->st_valid, 0xff, 4);
    memset(s->st_i64_valid, 0xff, 4);
    if (with_nulls)
        for (int r = 0; r < NROWS; r++) {
            if (r % 3 == 1)
                s->i32_valid[r / 8] &= (uint8_t) ~(1u << (r % 8));
            if (r % 5 == 4)
                s->str_valid[r / 8] &= (uint8_t) ~(1u << (r % 8));
            if (r % 6 == 5) {
                s->list_valid[r / 8] &= (uint8_t) ~(1u << (r % 8));
                s->lists[r].length = 0; /* as arrow-rs: null lists are empty */
            }
            if (r % 7 == 3) { /* struct null => child null (definition levels) */
                s->st_valid[r / 8] &= (uint8_t) ~(1u << (r % 8));
                s->st_i64_valid[r / 8] &= (uint8_t) ~(1u << (r % 8));
            }
        }
    s->l_items = (silt_arrow_array){.length = nitems, .validity = s->items_valid, .values = s->items};
    s->st_kids[0] = (silt_arrow_array){.length = NROWS, .validity = s->st_i64_valid,
                                       .values = s->st_i64};
}

/* Columns for rows [off, off+len) of the sample (Arrow-style slicing). */
static void sample_cols(sample *s, size_t off, size_t len, silt_arrow_array cols[6],
                        silt_arrow_array *kid, bool bitmaps)
{
    *kid = s->st_kids[0];
    kid->offset = off;
    kid->length = len;
    if (!bitmaps)
        kid->validity = NULL;
    cols[0] = (silt_arrow_array){len, off, bitmaps ? s->i32_valid : NULL, s->i32, NULL, NULL, NULL};
    cols[1] = (silt_arrow_array){len, off, bitmaps ? s->str_valid : NULL, NULL, s->str, NULL, NULL};
    cols[2] = (silt_arrow_array){len, off, bitmaps ? s->list_valid : NULL, NULL, NULL, s->lists,
                                 &s->l_items};
    cols[3] = (silt_arrow_array){len, off, NULL, s->bools, NULL, NULL, NULL};
    cols[4] = (silt_arrow_array){len, off, bitmaps ? s->st_valid : NULL, NULL, NULL, NULL, kid};
    cols[5] = (silt_arrow_array){len, off, NULL, s->dec, NULL, NULL, NULL};
}

static void sample_digest(sample *s, const size_t *splits, size_t nsplits, bool bitmaps,
                          uint8_t out[32])
{
    silt_record_digest *d = NULL;
    assert_int_equal(silt_record_digest_new(&d, s->f, 6), 0);
    size_t off = 0;
    for (size_t i = 0; off < NROWS; i++) {
        size_t len = nsplits ? splits[i % nsplits] : NROWS;
        if (len > NROWS - off)
            len = NROWS - off;
        silt_arrow_array cols[6], kid;
        sample_cols(s, off, len, cols, &kid, bitmaps);
        assert_int_equal(silt_record_digest_update(d, cols, len), 0);
        off += len;
    }
    /* an empty batch changes nothing */
    silt_arrow_array cols[6], kid;
    sample_cols(s, NROWS, 0, cols, &kid, bitmaps);
    assert_int_equal(silt_record_digest_update(d, cols, 0), 0);
    assert_int_equal(silt_record_digest_finalize(d, out), 0);
    silt_record_digest_free(d);
}

static void test_batch_split(void **state)
{
    (void)state;
    sample *s = malloc(sizeof *s);
    assert_non_null(s);
    sample_init(s, true);
    uint8_t whole[32], part[32];
    sample_digest(s, NULL, 0, true, whole);
    static const size_t splits[][3] = {{1, 1, 1}, {2, 2, 2}, {3, 5, 1}, {7, 7, 7}, {22, 1, 1}};
    for (size_t i = 0; i < sizeof splits / sizeof splits[0]; i++) {
        sample_digest(s, splits[i], 3, true, part);
        assert_memory_equal(whole, part, 32);
    }
    /* different data, different digest */
    s->i32[3] += 1; /* row 3 is valid */
    sample_digest(s, NULL, 0, true, part);
    assert_memory_not_equal(whole, part, 32);
    free(s);
}

static void test_validity_equivalence(void **state)
{
    (void)state;
    sample *s = malloc(sizeof *s);
    assert_non_null(s);
    uint8_t with_bitmaps[32], without[32], nulls[32];
    sample_init(s, false); /* bitmaps present, all ones */
    sample_digest(s, NULL, 0, true, with_bitmaps);
    sample_digest(s, NULL, 0, false, without);
    assert_memory_equal(with_bitmaps, without, 32);
    sample_init(s, true);
    sample_digest(s, NULL, 0, true, nulls);
    assert_memory_not_equal(with_bitmaps, nulls, 32);

    /* a null is one 0 byte, whatever the slot holds */
    silt_arrow_field f = {.name = "v", .nullable = true, .type = T_INT(64, false)};
    uint64_t v1[2] = {5, 0}, v2[2] = {5, 999};
    uint8_t bm = 0x01, d1[32], d2[32], want[32];
    silt_arrow_array a1 = {.length = 2, .validity = &bm, .values = v1};
    silt_arrow_array a2 = {.length = 2, .validity = &bm, .values = v2};
    digest_of(&f, 1, &a1, 2, d1);
    digest_of(&f, 1, &a2, 2, d2);
    assert_memory_equal(d1, d2, 32);
    uint8_t col[1][32];
    sha3_hex("0100 00 4000000000000000 0500000000000000 00", col[0]);
    record_expected("0100000000000000 76 0000000000000000", col, 1, want);
    assert_memory_equal(d1, want, 32);
    free(s);
}

static void test_unsupported(void **state)
{
    (void)state;
    silt_arrow_field sk = {.name = "x", .type = T_INT(32, true)};
    silt_arrow_field item = {.name = "item", .type = {.id = SILT_ARROW_STRUCT, .children = &sk,
                                                      .num_children = 1}};
    silt_arrow_field f = {.name = "ls", .type = {.id = SILT_ARROW_LIST, .children = &item,
                                                 .num_children = 1}};
    silt_record_digest *d = NULL;
    assert_int_equal(silt_record_digest_new(&d, &f, 1), SILT_EUNSUPPORTED);
    assert_null(d);
    assert_string_equal(silt_error_last(), "logical hash: column 'ls': lists of structs are not "
                                           "supported by arrow0-sha3-256");
    silt_arrow_field bad = {.name = "w", .type = T_INT(24, true)};
    assert_int_equal(silt_record_digest_new(&d, &bad, 1), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(),
                        "logical hash: column 'w': unsupported Arrow type (id 2, width 24)");

    /* update after finalize */
    silt_arrow_field ok = {.name = "a", .type = T_INT(8, true)};
    int8_t v = 1;
    silt_arrow_array a = {.length = 1, .values = &v};
    uint8_t out[32];
    assert_int_equal(silt_record_digest_new(&d, &ok, 1), 0);
    assert_int_equal(silt_record_digest_update(d, &a, 1), 0);
    assert_int_equal(silt_record_digest_finalize(d, out), 0);
    assert_int_equal(silt_record_digest_update(d, &a, 1), SILT_EINVAL);
    silt_record_digest_free(d);

    /* column length mismatch */
    assert_int_equal(silt_record_digest_new(&d, &ok, 1), 0);
    assert_int_equal(silt_record_digest_update(d, &a, 2), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "logical hash: column 'a' has 1 rows, expected 2");
    silt_record_digest_free(d);
}

/* ------------------------------------------------------------------ (d) Parquet */

typedef struct pq_fixture {
    silt_engine *e;
    char *dir;
} pq_fixture;

static int pq_setup(void **state)
{
    pq_fixture *fx = calloc(1, sizeof *fx);
    if (!fx)
        return -1;
    fx->dir = tu_mkdtemp();
    silt_engine_opts o = {.threads = 2};
    if (!fx->dir || silt_engine_open(&fx->e, &o) != 0)
        return -1;
    *state = fx;
    return 0;
}

static int pq_teardown(void **state)
{
    pq_fixture *fx = *state;
    silt_engine_free(fx->e);
    tu_rmrf(fx->dir);
    free(fx->dir);
    free(fx);
    return 0;
}

static const char *pq_path(pq_fixture *fx, const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", fx->dir, name);
    return buf[k];
}

/* Table `t`: a slice-like layout plus nested and temporal columns. */
static const char *TABLE_SQL =
    "CREATE OR REPLACE TABLE t AS SELECT * FROM (VALUES "
    "(0::UBIGINT, 0::UTINYINT, TIMESTAMP_MS '2024-01-02 03:04:05.678', DATE '2024-01-01', "
    "  'alpha', 12.34::DECIMAL(10,2), true, ['x','y'], {'n': 1, 'm': 'one'}, "
    "  TIMESTAMPTZ '2024-01-02 03:04:05.123456+00', TIME '01:02:03.5', 'ab'::BLOB, -5::SMALLINT), "
    "(1, 1, TIMESTAMP_MS '2024-01-02 03:04:05.678', DATE '2024-01-02', "
    "  NULL, -0.01, false, NULL, NULL, NULL, NULL, NULL, NULL), "
    "(2, 3, TIMESTAMP_MS '1969-12-31 23:59:59.999', NULL, "
    "  'gamma', NULL, NULL, ['z', NULL], {'n': 3, 'm': 'three'}, "
    "  TIMESTAMPTZ '1970-01-01 00:00:00+00', TIME '23:59:59.999999', ''::BLOB, 32767)"
    ") v(\"offset\", op, system_time, event_time, name, amount, flag, tags, st, tz, tm, bin, small)";

/* The same three rows as Arrow arrays, with the types arrow-rs derives. */
static void expected_table_digest(uint8_t out[32])
{
    silt_arrow_field tag_item = {.name = "element", .nullable = true, .type = {.id = SILT_ARROW_UTF8}};
    silt_arrow_field st_kids[2] = {
        {.name = "n", .nullable = true, .type = T_INT(32, true)},
        {.name = "m", .nullable = true, .type = {.id = SILT_ARROW_UTF8}},
    };
    silt_arrow_field f[13] = {
        {.name = "offset", .nullable = true, .type = T_INT(64, false)},
        {.name = "op", .nullable = true, .type = T_INT(8, false)},
        /* DuckDB writes TIMESTAMP_MS as TIMESTAMP(MILLIS, isAdjustedToUTC=false) */
        {.name = "system_time", .nullable = true,
         .type = {.id = SILT_ARROW_TIMESTAMP, .unit = SILT_ARROW_MILLI}},
        {.name = "event_time", .nullable = true, .type = {.id = SILT_ARROW_DATE, .bit_width = 32}},
        {.name = "name", .nullable = true, .type = {.id = SILT_ARROW_UTF8}},
        {.name = "amount", .nullable = true,
         .type = {.id = SILT_ARROW_DECIMAL, .bit_width = 128, .precision = 10, .scale = 2}},
        {.name = "flag", .nullable = true, .type = {.id = SILT_ARROW_BOOL}},
        {.name = "tags", .nullable = true,
         .type = {.id = SILT_ARROW_LIST, .children = &tag_item, .num_children = 1}},
        {.name = "st", .nullable = true,
         .type = {.id = SILT_ARROW_STRUCT, .children = st_kids, .num_children = 2}},
        {.name = "tz", .nullable = true,
         .type = {.id = SILT_ARROW_TIMESTAMP, .unit = SILT_ARROW_MICRO, .timezone = "UTC"}},
        {.name = "tm", .nullable = true,
         .type = {.id = SILT_ARROW_TIME, .bit_width = 64, .unit = SILT_ARROW_MICRO}},
        {.name = "bin", .nullable = true, .type = {.id = SILT_ARROW_BINARY}},
        {.name = "small", .nullable = true, .type = T_INT(16, true)},
    };
    uint64_t off[3] = {0, 1, 2};
    uint8_t op[3] = {0, 1, 3};
    int64_t st[3] = {1704164645678LL, 1704164645678LL, -1};
    int32_t et[3] = {19723, 19724, 0};
    uint8_t et_v = 0x03;
    silt_arrow_bytes name[3] = {{(const uint8_t *)"alpha", 5}, {NULL, 0}, {(const uint8_t *)"gamma", 5}};
    uint8_t name_v = 0x05;
    uint8_t amount[48] = {0};
    amount[0] = 0xd2; amount[1] = 0x04;  /* 1234 */
    memset(amount + 16, 0xff, 16);       /* -1 */
    uint8_t amount_v = 0x03;
    uint8_t flag[3] = {1, 0, 0}, flag_v = 0x03;
    silt_arrow_bytes tag_vals[4] = {{(const uint8_t *)"x", 1}, {(const uint8_t *)"y", 1},
                                    {(const uint8_t *)"z", 1}, {NULL, 0}};
    uint8_t tag_items_v = 0x07;
    silt_arrow_array tag_items = {.length = 4, .validity = &tag_items_v, .bytes = tag_vals};
    silt_arrow_list_entry tags[3] = {{0, 2}, {2, 0}, {2, 2}};
    uint8_t tags_v = 0x05;
    int32_t n_vals[3] = {1, 0, 3};
    silt_arrow_bytes m_vals[3] = {{(const uint8_t *)"one", 3}, {NULL, 0}, {(const uint8_t *)"three", 5}};
    uint8_t st_v = 0x05;
    silt_arrow_array st_arr[2] = {
        {.length = 3, .validity = &st_v, .values = n_vals},
        {.length = 3, .validity = &st_v, .bytes = m_vals},
    };
    int64_t tz[3] = {1704164645123456LL, 0, 0};
    uint8_t tz_v = 0x05;
    int64_t tm[3] = {3723500000LL, 0, 86399999999LL};
    silt_arrow_bytes bin[3] = {{(const uint8_t *)"ab", 2}, {NULL, 0}, {(const uint8_t *)"", 0}};
    int16_t small[3] = {-5, 0, 32767};
    silt_arrow_array cols[13] = {
        {.length = 3, .values = off},
        {.length = 3, .values = op},
        {.length = 3, .values = st},
        {.length = 3, .validity = &et_v, .values = et},
        {.length = 3, .validity = &name_v, .bytes = name},
        {.length = 3, .validity = &amount_v, .values = amount},
        {.length = 3, .validity = &flag_v, .values = flag},
        {.length = 3, .validity = &tags_v, .lists = tags, .children = &tag_items},
        {.length = 3, .validity = &st_v, .children = st_arr},
        {.length = 3, .validity = &tz_v, .values = tz},
        {.length = 3, .validity = &tz_v, .values = tm},
        {.length = 3, .validity = &tz_v, .bytes = bin},
        {.length = 3, .validity = &tz_v, .values = small},
    };
    digest_of(f, 13, cols, 3, out);
}

static void copy_to(pq_fixture *fx, const char *file, const char *opts)
{
    int rc = silt_engine_execf(fx->e, "COPY (SELECT * FROM t ORDER BY \"offset\") TO '%s' (%s)",
                               pq_path(fx, file), opts);
    if (rc)
        fail_msg("COPY failed: %s", silt_error_last());
}

static void test_parquet_matches_core(void **state)
{
    pq_fixture *fx = *state;
    assert_int_equal(silt_engine_exec(fx->e, TABLE_SQL), 0);
    copy_to(fx, "a.parquet", "FORMAT parquet, parquet_version v2");
    uint8_t mh[SILT_ARROW_MH_LEN], want_dg[32], want[SILT_ARROW_MH_LEN];
    uint64_t rows = 0;
    int rc = silt_parquet_logical_hash(fx->e, pq_path(fx, "a.parquet"), mh, &rows);
    if (rc)
        fail_msg("hash failed: %s", silt_error_last());
    assert_int_equal(rows, 3);
    expected_table_digest(want_dg);
    silt_arrow_multihash(want_dg, want);
    assert_string_equal(tu_hex(mh, 5), "9680c00120");
    assert_memory_equal(mh, want, SILT_ARROW_MH_LEN);

    /* other physical layouts of the same rows */
    static const char *layouts[] = {
        "FORMAT parquet, parquet_version v1",
        "FORMAT parquet, parquet_version v2, COMPRESSION lz4",
        "FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 2",
        "FORMAT parquet, COMPRESSION zstd, DICTIONARY_SIZE_LIMIT 1",
        "FORMAT parquet, COMPRESSION gzip, DICTIONARY_COMPRESSION_RATIO_THRESHOLD -1",
    };
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "l%zu.parquet", i);
        copy_to(fx, name, layouts[i]);
        uint8_t other[SILT_ARROW_MH_LEN];
        rc = silt_parquet_logical_hash(fx->e, pq_path(fx, name), other, NULL);
        if (rc)
            fail_msg("hash of layout %zu failed: %s", i, silt_error_last());
        assert_memory_equal(mh, other, SILT_ARROW_MH_LEN);
        uint8_t p1[32], p2[32];
        assert_int_equal(silt_sha3_file(pq_path(fx, "a.parquet"), p1, NULL), 0);
        assert_int_equal(silt_sha3_file(pq_path(fx, name), p2, NULL), 0);
        if (memcmp(p1, p2, 32) == 0)
            fail_msg("layout %zu wrote the same file", i); /* really a different file */
    }

    /* one value changed */
    assert_int_equal(silt_engine_exec(fx->e, "UPDATE t SET amount = 12.35 WHERE \"offset\" = 0"), 0);
    copy_to(fx, "b.parquet", "FORMAT parquet, parquet_version v2");
    uint8_t changed[SILT_ARROW_MH_LEN];
    assert_int_equal(silt_parquet_logical_hash(fx->e, pq_path(fx, "b.parquet"), changed, NULL), 0);
    assert_memory_not_equal(mh, changed, SILT_ARROW_MH_LEN);
}

/* Many rows (several DuckDB chunks and row groups): same hash for every layout,
 * and equal to the core fed in one batch. */
static void test_parquet_many_rows(void **state)
{
    pq_fixture *fx = *state;
    enum { N = 5000 };
    assert_int_equal(silt_engine_exec(fx->e,
        "CREATE OR REPLACE TABLE t AS SELECT i::UBIGINT AS \"offset\", "
        "CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 3)::INTEGER END AS v FROM range(5000) r(i)"), 0);
    copy_to(fx, "m1.parquet", "FORMAT parquet, ROW_GROUP_SIZE 1000");
    copy_to(fx, "m2.parquet", "FORMAT parquet, parquet_version v2");
    uint8_t h1[SILT_ARROW_MH_LEN], h2[SILT_ARROW_MH_LEN];
    uint64_t rows = 0;
    assert_int_equal(silt_parquet_logical_hash(fx->e, pq_path(fx, "m1.parquet"), h1, &rows), 0);
    assert_int_equal(rows, N);
    assert_int_equal(silt_parquet_logical_hash(fx->e, pq_path(fx, "m2.parquet"), h2, NULL), 0);
    assert_memory_equal(h1, h2, SILT_ARROW_MH_LEN);
    uint64_t groups = 0;
    char sql[700];
    snprintf(sql, sizeof sql, "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('%s')",
             pq_path(fx, "m1.parquet"));
    assert_int_equal(silt_engine_query_u64(fx->e, &groups, sql), 0);
    assert_true(groups >= 2); /* really several row groups */

    silt_arrow_field f[2] = {
        {.name = "offset", .nullable = true, .type = T_INT(64, false)},
        {.name = "v", .nullable = true, .type = T_INT(32, true)},
    };
    uint64_t *off = malloc(N * sizeof *off);
    int32_t *v = malloc(N * sizeof *v);
    uint8_t *bm = calloc(N / 8 + 1, 1);
    assert_true(off && v && bm);
    for (int i = 0; i < N; i++) {
        off[i] = (uint64_t)i;
        v[i] = i % 7 ? i * 3 : 12345; /* null slots' contents do not matter */
        if (i % 7)
            bm[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    silt_arrow_array cols[2] = {{.length = N, .values = off}, {.length = N, .validity = bm, .values = v}};
    uint8_t dg[32], want[SILT_ARROW_MH_LEN];
    digest_of(f, 2, cols, N, dg);
    silt_arrow_multihash(dg, want);
    assert_memory_equal(h1, want, SILT_ARROW_MH_LEN);
    free(off);
    free(v);
    free(bm);
}

static void test_parquet_errors(void **state)
{
    pq_fixture *fx = *state;
    assert_int_equal(silt_engine_exec(fx->e,
        "CREATE OR REPLACE TABLE t AS SELECT 1::UBIGINT AS \"offset\", MAP {'a': 1} AS m"), 0);
    copy_to(fx, "map.parquet", "FORMAT parquet");
    uint8_t mh[SILT_ARROW_MH_LEN];
    const char *p = pq_path(fx, "map.parquet");
    assert_int_equal(silt_parquet_logical_hash(fx->e, p, mh, NULL), SILT_EUNSUPPORTED);
    char want[600];
    snprintf(want, sizeof want, "%s: logical hash: column 'm': MAP is not supported", p);
    assert_string_equal(silt_error_last(), want);

    assert_int_equal(silt_engine_exec(fx->e,
        "CREATE OR REPLACE TABLE t AS SELECT 1::UBIGINT AS \"offset\", [{'a': 1}] AS ls"), 0);
    copy_to(fx, "ls.parquet", "FORMAT parquet");
    p = pq_path(fx, "ls.parquet");
    assert_int_equal(silt_parquet_logical_hash(fx->e, p, mh, NULL), SILT_EUNSUPPORTED);
    snprintf(want, sizeof want, "%s: logical hash: column 'ls': lists of structs is not supported", p);
    assert_string_equal(silt_error_last(), want);

    assert_true(silt_parquet_logical_hash(fx->e, pq_path(fx, "missing.parquet"), mh, NULL) < 0);
    assert_non_null(strstr(silt_error_last(), "missing.parquet"));
}

/* A slice written like the silt writer does (TIMESTAMP_MS, then the UTC flag
 * patched in the footer, parquet_meta.h): system_time must now hash as
 * Timestamp(ms, "UTC") and event_time (DATE) as Date32. */
static void test_parquet_utc_ms(void **state)
{
    pq_fixture *fx = *state;
    assert_int_equal(silt_engine_exec(fx->e,
        "CREATE OR REPLACE TABLE t AS SELECT * FROM (VALUES "
        "(0::UBIGINT, 0::UTINYINT, TIMESTAMP_MS '2023-11-14 22:13:20', DATE '2020-01-01'), "
        "(1, 0, TIMESTAMP_MS '2023-11-14 22:13:20', DATE '2020-01-02')) "
        "v(\"offset\", op, system_time, event_time)"), 0);
    copy_to(fx, "utc.parquet", "FORMAT parquet, parquet_version v2");
    const char *p = pq_path(fx, "utc.parquet");
    uint8_t naive[SILT_ARROW_MH_LEN], utc[SILT_ARROW_MH_LEN];
    assert_int_equal(silt_parquet_logical_hash(fx->e, p, naive, NULL), 0);
    assert_int_equal(silt_parquet_set_timestamps_utc(p, NULL, 0), 1);
    /* DuckDB 1.4 external file cache keys on path + mtime: after an in-place
     * patch within the same second it serves the old footer. */
    assert_int_equal(silt_engine_exec(fx->e, "SET enable_external_file_cache = false"), 0);
    assert_int_equal(silt_parquet_logical_hash(fx->e, p, utc, NULL), 0);
    assert_memory_not_equal(naive, utc, SILT_ARROW_MH_LEN); /* the type is hashed */

    silt_arrow_field f[4] = {
        {.name = "offset", .nullable = true, .type = T_INT(64, false)},
        {.name = "op", .nullable = true, .type = T_INT(8, false)},
        {.name = "system_time", .nullable = true,
         .type = {.id = SILT_ARROW_TIMESTAMP, .unit = SILT_ARROW_MILLI, .timezone = "UTC"}},
        {.name = "event_time", .nullable = true, .type = {.id = SILT_ARROW_DATE, .bit_width = 32}},
    };
    uint64_t off[2] = {0, 1};
    uint8_t op[2] = {0, 0};
    int64_t st[2] = {1700000000000LL, 1700000000000LL};
    int32_t et[2] = {18262, 18263};
    silt_arrow_array cols[4] = {{.length = 2, .values = off}, {.length = 2, .values = op},
                                {.length = 2, .values = st}, {.length = 2, .values = et}};
    uint8_t dg[32], want[SILT_ARROW_MH_LEN];
    digest_of(f, 4, cols, 2, dg);
    silt_arrow_multihash(dg, want);
    assert_memory_equal(utc, want, SILT_ARROW_MH_LEN);
}

/* A nullable struct whose children are null in rows where the struct is
 * present, while other rows of the same reader batch have the struct itself
 * null: the reference hashes those children as the values arrow-rs's
 * Parquet reader leaves in the slots (the p-th non-null value of the read
 * segment, else 0), and combines struct nulls per batch of 10,000 rows.
 * 25,000 rows; the formulas are those of tests/fixtures/digest/
 * struct_segments.py, which gives the oracle's input. */
static const char *STRUCT_SEGMENTS_SQL =
    "CREATE OR REPLACE TABLE t AS SELECT i::BIGINT AS \"offset\", "
    " CASE WHEN i % 10 = 3 THEN NULL ELSE (i * 7)::INTEGER END AS top, "
    " CASE WHEN i % 5 = 1 AND i % 10000 < 1500 AND i < 20000 THEN NULL ELSE "
    "  {'a': CASE WHEN i % 7 = 3 THEN NULL ELSE (i * 3 - 5000)::INTEGER END, "
    "   'b': CASE WHEN i % 11 = 4 THEN NULL ELSE i % 3 = 0 END, "
    "   'c': CASE WHEN i % 13 = 6 THEN NULL ELSE i::DOUBLE / 4 END} END AS s, "
    " CASE WHEN i % 9 = 2 AND i % 10000 >= 8000 THEN NULL ELSE "
    "  {'inner': CASE WHEN i % 4 = 1 THEN NULL ELSE "
    "     {'x': CASE WHEN i % 6 = 5 THEN NULL ELSE i * 1000003 END, "
    "      'd': DATE '2020-01-01' + (i % 400)::INTEGER} END, "
    "   'w': CASE WHEN i % 8 = 7 THEN NULL ELSE 'w' || (i % 17)::VARCHAR END, "
    "   'l': CASE WHEN i % 10 = 9 THEN NULL ELSE "
    "        [(i % 5)::INTEGER, NULL, (i % 3)::INTEGER][1:(i % 4)] END, "
    "   'm': CASE WHEN i % 12 = 11 THEN NULL ELSE (i * 7 - 3)::DECIMAL(20,2) END} END AS n "
    "FROM range(25000) r(i)";

static char *fixture_hex(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "digest/%s.hex", name);
    char *hex = tu_read_file(tu_fixture(rel), NULL);
    assert_non_null(hex);
    hex[strcspn(hex, "\r\n")] = '\0';
    return hex;
}

/* Writes table t with `opts`, checks the row groups ("6144,6144,…"), and
 * compares the logical hash with the oracle's digest in fixture `name`. */
static void check_struct_segments(pq_fixture *fx, const char *file, const char *opts,
                                  const char *groups, const char *name)
{
    copy_to(fx, file, opts);
    const char *p = pq_path(fx, file);
    char sql[700], *got_groups = NULL;
    snprintf(sql, sizeof sql,
             "SELECT string_agg(n::VARCHAR, ',' ORDER BY g) FROM (SELECT row_group_id AS g, "
             "any_value(row_group_num_rows) AS n FROM parquet_metadata('%s') GROUP BY g)", p);
    assert_int_equal(silt_engine_query_text(fx->e, &got_groups, sql), 0);
    assert_string_equal(got_groups, groups); /* the layout the oracle input describes */
    free(got_groups);
    uint8_t mh[SILT_ARROW_MH_LEN];
    uint64_t rows = 0;
    if (silt_parquet_logical_hash(fx->e, p, mh, &rows) != 0)
        fail_msg("hash failed: %s", silt_error_last());
    assert_int_equal(rows, 25000);
    char *want = fixture_hex(name);
    assert_string_equal(tu_hex(mh + 5, 32), want);
    free(want);
}

/* The rows of tests/fixtures/digest/struct_slots.json (one batch, one row
 * group): null children of a present struct hashed as the reader's slot
 * contents, for each kind of fixed-width child DuckDB writes. */
static void test_parquet_struct_slots(void **state)
{
    pq_fixture *fx = *state;
    assert_int_equal(silt_engine_exec(fx->e,
        "CREATE OR REPLACE TABLE t (\"offset\" BIGINT, s STRUCT(i8 TINYINT, u16 USMALLINT, "
        "f32 FLOAT, dec DECIMAL(9,2), ts TIMESTAMPTZ, id UUID, flag BOOLEAN, name VARCHAR))"), 0);
    assert_int_equal(silt_engine_exec(fx->e,
        "INSERT INTO t VALUES "
        "(0, {'i8': NULL, 'u16': NULL, 'f32': NULL, 'dec': NULL, 'ts': NULL, 'id': NULL, "
        "     'flag': NULL, 'name': NULL}), "
        "(1, NULL), "
        "(2, {'i8': -7, 'u16': 65535, 'f32': 1.5, 'dec': -123.45, "
        "     'ts': TIMESTAMPTZ '2023-11-14 22:13:20+00', "
        "     'id': UUID '01234567-89ab-cdef-0123-456789abcdef', 'flag': true, 'name': 'x'}), "
        "(3, {'i8': 3, 'u16': NULL, 'f32': 2.25, 'dec': 0.05, 'ts': NULL, "
        "     'id': UUID 'fedcba98-7654-3210-0123-456789abcdef', 'flag': false, 'name': NULL}), "
        "(4, NULL), "
        "(5, {'i8': NULL, 'u16': 7, 'f32': NULL, 'dec': NULL, "
        "     'ts': TIMESTAMPTZ '1970-01-01 00:00:00.000005+00', 'id': NULL, 'flag': NULL, "
        "     'name': 'z'})"), 0);
    copy_to(fx, "slots.parquet", "FORMAT parquet");
    uint8_t mh[SILT_ARROW_MH_LEN];
    if (silt_parquet_logical_hash(fx->e, pq_path(fx, "slots.parquet"), mh, NULL) != 0)
        fail_msg("hash failed: %s", silt_error_last());
    char *want = fixture_hex("struct_slots");
    assert_string_equal(tu_hex(mh + 5, 32), want);
    free(want);
}

static void test_parquet_struct_segments(void **state)
{
    pq_fixture *fx = *state;
    assert_int_equal(silt_engine_exec(fx->e, STRUCT_SEGMENTS_SQL), 0);
    check_struct_segments(fx, "seg.parquet", "FORMAT parquet, ROW_GROUP_SIZE 6144",
                          "6144,6144,6144,6144,424", "struct_segments");
    check_struct_segments(fx, "one.parquet", "FORMAT parquet", "25000",
                          "struct_segments.25000");
}

/* ------------------------------------------------------------------ (e) oracle vectors */

/* tests/fixtures/digest/NAME.json (input format of tests/tools/
 * arrow_digest_oracle.py) -> Arrow arrays -> core; compare with NAME.hex,
 * the digest the independent Python oracle produced. */

typedef struct pool {
    void *p[4096];
    size_t n;
} pool;

static void *palloc(pool *pl, size_t size)
{
    assert_true(pl->n < 4096);
    void *m = calloc(size ? size : 1, 1);
    assert_non_null(m);
    pl->p[pl->n++] = m;
    return m;
}

static void pool_free(pool *pl)
{
    for (size_t i = 0; i < pl->n; i++)
        free(pl->p[i]);
    pl->n = 0;
}

static silt_arrow_unit unit_of(const char *u)
{
    if (!strcmp(u, "s"))
        return SILT_ARROW_SECOND;
    if (!strcmp(u, "ms"))
        return SILT_ARROW_MILLI;
    if (!strcmp(u, "us"))
        return SILT_ARROW_MICRO;
    assert_string_equal(u, "ns");
    return SILT_ARROW_NANO;
}

static void parse_type(pool *pl, json_t *t, silt_arrow_type *out)
{
    memset(out, 0, sizeof *out);
    const char *k = json_string_value(json_object_get(t, "kind"));
    assert_non_null(k);
    int bits = (int)json_integer_value(json_object_get(t, "bits"));
    if (!strcmp(k, "int") || !strcmp(k, "uint")) {
        *out = (silt_arrow_type){.id = SILT_ARROW_INT, .bit_width = bits, .is_signed = k[0] == 'i'};
    } else if (!strcmp(k, "float")) {
        *out = (silt_arrow_type){.id = SILT_ARROW_FLOAT, .bit_width = bits};
    } else if (!strcmp(k, "bool")) {
        out->id = SILT_ARROW_BOOL;
    } else if (!strcmp(k, "utf8") || !strcmp(k, "large_utf8") || !strcmp(k, "utf8_view")) {
        out->id = SILT_ARROW_UTF8;
    } else if (!strcmp(k, "binary") || !strcmp(k, "large_binary") || !strcmp(k, "binary_view")) {
        out->id = SILT_ARROW_BINARY;
    } else if (!strcmp(k, "fixed_size_binary")) {
        out->id = SILT_ARROW_FIXED_BINARY;
        out->byte_width = (int)json_integer_value(json_object_get(t, "byte_width"));
    } else if (!strcmp(k, "date32") || !strcmp(k, "date64")) {
        *out = (silt_arrow_type){.id = SILT_ARROW_DATE, .bit_width = k[4] == '3' ? 32 : 64};
    } else if (!strcmp(k, "time32") || !strcmp(k, "time64")) {
        *out = (silt_arrow_type){.id = SILT_ARROW_TIME, .bit_width = k[4] == '3' ? 32 : 64,
                                 .unit = unit_of(json_string_value(json_object_get(t, "unit")))};
    } else if (!strcmp(k, "timestamp")) {
        out->id = SILT_ARROW_TIMESTAMP;
        out->unit = unit_of(json_string_value(json_object_get(t, "unit")));
        out->timezone = json_string_value(json_object_get(t, "tz")); /* borrowed from the doc */
    } else if (!strcmp(k, "decimal")) {
        *out = (silt_arrow_type){.id = SILT_ARROW_DECIMAL, .bit_width = bits ? bits : 128,
                                 .precision = (int)json_integer_value(json_object_get(t, "precision")),
                                 .scale = (int)json_integer_value(json_object_get(t, "scale"))};
    } else if (!strcmp(k, "list") || !strcmp(k, "large_list")) {
        json_t *item = json_object_get(t, "item");
        silt_arrow_field *f = palloc(pl, sizeof *f);
        f->name = "item";
        f->nullable = json_is_true(json_object_get(item, "nullable"));
        parse_type(pl, json_object_get(item, "type"), &f->type);
        out->id = SILT_ARROW_LIST;
        out->children = f;
        out->num_children = 1;
    } else if (!strcmp(k, "struct")) {
        json_t *fs = json_object_get(t, "fields");
        size_t n = json_array_size(fs);
        silt_arrow_field *f = palloc(pl, n * sizeof *f);
        for (size_t i = 0; i < n; i++) {
            json_t *fi = json_array_get(fs, i);
            f[i].name = json_string_value(json_object_get(fi, "name"));
            f[i].nullable = json_is_true(json_object_get(fi, "nullable"));
            parse_type(pl, json_object_get(fi, "type"), &f[i].type);
        }
        out->id = SILT_ARROW_STRUCT;
        out->children = f;
        out->num_children = n;
    } else {
        fail_msg("oracle fixture: unknown kind %s", k);
    }
}

static void hex_into(const char *hex, uint8_t *out, size_t max)
{
    size_t n = strlen(hex) / 2;
    assert_true(n <= max);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
}

static uint16_t to_half(double d) /* exact for the normal values used in fixtures */
{
    float f = (float)d;
    uint32_t b;
    memcpy(&b, &f, 4);
    uint16_t sign = (uint16_t)((b >> 16) & 0x8000);
    if ((b & 0x7fffffff) == 0)
        return sign;
    int e = (int)((b >> 23) & 0xff) - 127 + 15;
    assert_true(e > 0 && e < 31);
    return (uint16_t)(sign | (e << 10) | ((b >> 13) & 0x3ff));
}

static void put_value(const silt_arrow_type *t, json_t *v, uint8_t *dst)
{
    size_t w = t->id == SILT_ARROW_TIMESTAMP ? 8 : (size_t)t->bit_width / 8;
    if (t->id == SILT_ARROW_FLOAT) {
        json_t *hx = json_object_get(v, "hex");
        if (hx) {
            hex_into(json_string_value(hx), dst, w);
            return;
        }
        double d = json_number_value(v);
        if (w == 2) {
            uint16_t h = to_half(d);
            memcpy(dst, &h, 2);
        } else if (w == 4) {
            float f = (float)d;
            memcpy(dst, &f, 4);
        } else {
            memcpy(dst, &d, 8);
        }
        return;
    }
    if (t->id == SILT_ARROW_DECIMAL) {
        const char *s = json_is_string(v) ? json_string_value(v) : NULL;
        char buf[64];
        if (!s) {
            snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
            s = buf;
        }
        bool neg = *s == '-';
        unsigned __int128 acc = 0;
        for (const char *c = s + neg; *c; c++)
            acc = acc * 10 + (unsigned)(*c - '0');
        if (neg)
            acc = ~acc + 1;
        for (size_t i = 0; i < w; i++)
            dst[i] = i < 16 ? (uint8_t)(acc >> (8 * i)) : (neg ? 0xff : 0);
        return;
    }
    uint64_t u = (uint64_t)json_integer_value(v);
    for (size_t i = 0; i < w; i++)
        dst[i] = (uint8_t)(u >> (8 * i));
}

/* The null slots of a boolean or fixed-width struct child as arrow-rs's
 * Parquet reader leaves them in one read segment: slot p keeps the p-th
 * non-null value (in row order), if there are more than p of them. */
static void reader_fill(pool *pl, uint8_t *v, size_t w, const uint8_t *valid, size_t n)
{
    size_t *dense = palloc(pl, (n ? n : 1) * sizeof *dense), nd = 0;
    for (size_t i = 0; i < n; i++)
        if (valid[i])
            dense[nd++] = i;
    for (size_t i = 0; i < n && i < nd; i++)
        if (!valid[i])
            memcpy(v + i * w, v + dense[i] * w, w);
}

/* Builds the array for n JSON values (NULL entries = null); anc = validity
 * of the enclosing structs (byte per row) or NULL. The vectors are one
 * reader batch and one row group. */
static void build_array(pool *pl, const silt_arrow_type *t, json_t **vals, size_t n,
                        const uint8_t *anc, silt_arrow_array *out)
{
    memset(out, 0, sizeof *out);
    out->length = n;
    uint8_t *valid = palloc(pl, n);
    uint8_t *bm = palloc(pl, n / 8 + 1);
    for (size_t i = 0; i < n; i++) {
        valid[i] = vals[i] && !json_is_null(vals[i]) && (!anc || anc[i]);
        if (valid[i])
            bm[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    out->validity = bm;
    switch (t->id) {
    case SILT_ARROW_BOOL: {
        uint8_t *v = palloc(pl, n);
        for (size_t i = 0; i < n; i++)
            v[i] = valid[i] && json_is_true(vals[i]);
        if (anc)
            reader_fill(pl, v, 1, valid, n);
        out->values = v;
        break;
    }
    case SILT_ARROW_UTF8:
    case SILT_ARROW_BINARY: {
        silt_arrow_bytes *b = palloc(pl, n * sizeof *b);
        for (size_t i = 0; i < n; i++) {
            if (!valid[i])
                continue;
            const char *s = json_string_value(vals[i]);
            if (t->id == SILT_ARROW_UTF8) {
                b[i].ptr = (const uint8_t *)s;
                b[i].len = json_string_length(vals[i]);
            } else {
                uint8_t *d = palloc(pl, strlen(s) / 2);
                hex_into(s, d, strlen(s) / 2);
                b[i].ptr = d;
                b[i].len = strlen(s) / 2;
            }
        }
        out->bytes = b;
        break;
    }
    case SILT_ARROW_FIXED_BINARY: {
        uint8_t *v = palloc(pl, n * (size_t)t->byte_width);
        for (size_t i = 0; i < n; i++)
            if (valid[i])
                hex_into(json_string_value(vals[i]), v + i * (size_t)t->byte_width,
                         (size_t)t->byte_width);
        if (anc)
            reader_fill(pl, v, (size_t)t->byte_width, valid, n);
        out->values = v;
        break;
    }
    case SILT_ARROW_LIST: {
        size_t total = 0;
        for (size_t i = 0; i < n; i++)
            if (valid[i])
                total += json_array_size(vals[i]);
        json_t **items = palloc(pl, total * sizeof *items);
        silt_arrow_list_entry *e = palloc(pl, n * sizeof *e);
        size_t at = 0;
        for (size_t i = 0; i < n; i++) {
            e[i].offset = at;
            if (!valid[i])
                continue;
            for (size_t k = 0; k < json_array_size(vals[i]); k++)
                items[at++] = json_array_get(vals[i], k);
            e[i].length = at - e[i].offset;
        }
        silt_arrow_array *child = palloc(pl, sizeof *child);
        build_array(pl, &t->children[0].type, items, total, NULL, child);
        out->lists = e;
        out->children = child;
        break;
    }
    case SILT_ARROW_STRUCT: {
        silt_arrow_array *kids = palloc(pl, t->num_children * sizeof *kids);
        json_t **kv = palloc(pl, n * sizeof *kv);
        for (size_t k = 0; k < t->num_children; k++) {
            for (size_t i = 0; i < n; i++)
                kv[i] = valid[i] ? json_object_get(vals[i], t->children[k].name) : NULL;
            build_array(pl, &t->children[k].type, kv, n, valid, &kids[k]);
        }
        out->children = kids;
        break;
    }
    default: {
        size_t w = t->id == SILT_ARROW_TIMESTAMP ? 8 : (size_t)t->bit_width / 8;
        uint8_t *v = palloc(pl, n * w);
        for (size_t i = 0; i < n; i++)
            if (valid[i])
                put_value(t, vals[i], v + i * w);
        if (anc)
            reader_fill(pl, v, w, valid, n);
        out->values = v;
        break;
    }
    }
}

static void check_oracle_vector(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "digest/%s.json", name);
    json_error_t jerr;
    json_t *doc = json_load_file(tu_fixture(rel), 0, &jerr);
    if (!doc)
        fail_msg("%s: %s", rel, jerr.text);
    /* one batch and one row group: not used by these vectors */
    assert_null(json_object_get(doc, "batch_sizes"));
    assert_null(json_object_get(doc, "batch_size"));
    assert_null(json_object_get(doc, "row_groups"));
    snprintf(rel, sizeof rel, "digest/%s.hex", name);
    char *want = tu_read_file(tu_fixture(rel), NULL);
    assert_non_null(want);
    want[strcspn(want, "\r\n")] = '\0';

    pool *pl = calloc(1, sizeof *pl);
    assert_non_null(pl);
    json_t *fs = json_object_get(doc, "fields");
    size_t nf = json_array_size(fs);
    silt_arrow_field *f = palloc(pl, nf * sizeof *f);
    silt_arrow_array *cols = palloc(pl, nf * sizeof *cols);
    size_t rows = 0;
    for (size_t i = 0; i < nf; i++) {
        json_t *fi = json_array_get(fs, i);
        f[i].name = json_string_value(json_object_get(fi, "name"));
        f[i].nullable = json_is_true(json_object_get(fi, "nullable"));
        parse_type(pl, json_object_get(fi, "type"), &f[i].type);
        json_t *vs = json_object_get(fi, "values");
        rows = json_array_size(vs);
        json_t **vals = palloc(pl, rows * sizeof *vals);
        for (size_t r = 0; r < rows; r++)
            vals[r] = json_array_get(vs, r);
        build_array(pl, &f[i].type, vals, rows, NULL, &cols[i]);
    }
    uint8_t got[32];
    digest_of(f, nf, cols, rows, got);
    if (strcmp(tu_hex(got, 32), want) != 0)
        fail_msg("oracle vector %s: got %s, oracle %s", name, tu_hex(got, 32), want);
    pool_free(pl);
    free(pl);
    free(want);
    json_decref(doc);
}

static void test_oracle_vectors(void **state)
{
    (void)state;
    static const char *names[] = {"binary_empty", "bools_nulls", "decimal_date", "empty",
                                  "list_int32",   "misc_types",  "odf_slice",    "struct_nulls",
                                  "struct_nulls_quirk", "struct_slots"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        check_oracle_vector(names[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_multihash),
        cmocka_unit_test(test_vector_int_utf8),
        cmocka_unit_test(test_vector_nested),
        cmocka_unit_test(test_batch_split),
        cmocka_unit_test(test_validity_equivalence),
        cmocka_unit_test(test_unsupported),
        cmocka_unit_test(test_oracle_vectors),
        cmocka_unit_test_setup_teardown(test_parquet_matches_core, pq_setup, pq_teardown),
        cmocka_unit_test_setup_teardown(test_parquet_many_rows, pq_setup, pq_teardown),
        cmocka_unit_test_setup_teardown(test_parquet_errors, pq_setup, pq_teardown),
        cmocka_unit_test_setup_teardown(test_parquet_utc_ms, pq_setup, pq_teardown),
        cmocka_unit_test_setup_teardown(test_parquet_struct_slots, pq_setup, pq_teardown),
        cmocka_unit_test_setup_teardown(test_parquet_struct_segments, pq_setup, pq_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
