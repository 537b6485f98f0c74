/* test_parquet_required.c — unit tests for the OPTIONAL -> REQUIRED Parquet
 * rewrite (src/engine/parquet_required.c) and its building blocks: the
 * Thrift compact value tree (thrift.c), the Snappy codec (snappy.c) and the
 * definition level re-encoder.
 *
 * Files are written by DuckDB; after the rewrite DuckDB must read back
 * exactly the same rows (compared with EXCEPT ALL both ways against the
 * original), parquet_schema() must report the new repetitions, and the
 * logical hash must be unchanged (nullability is not part of the ODF
 * digest). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/digest.h"
#include "engine/engine.h"
#include "engine/parquet_meta.h"
#include "engine/parquet_required.h"
#include "engine/snappy.h"
#include "engine/thrift.h"
#include "engine/writer.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/hash.h"

static silt_engine *g_eng;

static int group_setup(void **state)
{
    (void)state;
    if (silt_engine_open(&g_eng, NULL))
        return -1;
    return silt_engine_exec(g_eng, "SET enable_external_file_cache = false");
}

static int group_teardown(void **state)
{
    (void)state;
    silt_engine_free(g_eng);
    return 0;
}

typedef struct fx {
    char *dir;
    char path[512], orig[512];
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = tu_mkdtemp()))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/x.parquet", f->dir);
    snprintf(f->orig, sizeof f->orig, "%s/orig.parquet", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

static char *query_text(const char *sql)
{
    char *out = NULL;
    if (silt_engine_query_text(g_eng, &out, sql))
        fail_msg("query failed: %s: %s", sql, silt_error_last());
    return out;
}

static void assert_query(const char *sql, const char *expect)
{
    char *got = query_text(sql);
    assert_non_null(got);
    assert_string_equal(got, expect);
    free(got);
}

static void copy_file(const char *from, const char *to)
{
    size_t n = 0;
    char *data = tu_read_file(from, &n);
    assert_non_null(data);
    assert_int_equal(tu_write_file(to, data, n), 0);
    free(data);
}

static const char *file_sha(const char *path)
{
    static char hex[80];
    uint8_t d[SILT_SHA3_256_LEN];
    uint64_t n = 0;
    assert_int_equal(silt_sha3_file(path, d, &n), 0);
    snprintf(hex, sizeof hex, "%s", tu_hex(d, sizeof d));
    return hex;
}

/* ------------------------------------------------------------ snappy */

static void roundtrip_snappy(const uint8_t *src, size_t n)
{
    silt_buf c = SILT_BUF_INIT;
    assert_int_equal(silt_snappy_compress(&c, src, n), 0);
    size_t len = 0;
    assert_int_equal(silt_snappy_uncompressed_length((const uint8_t *)c.data, c.len, &len), 0);
    assert_int_equal(len, n);
    uint8_t *back = malloc(n ? n : 1);
    assert_non_null(back);
    assert_int_equal(silt_snappy_uncompress((const uint8_t *)c.data, c.len, back, n), 0);
    assert_memory_equal(back, src, n);
    free(back);
    silt_buf_free(&c);
}

static void test_snappy(void **state)
{
    (void)state;
    roundtrip_snappy((const uint8_t *)"", 0);
    roundtrip_snappy((const uint8_t *)"a", 1);
    roundtrip_snappy((const uint8_t *)"abcabcabcabcabcabcabcabcabc", 27);
    size_t n = 300000;
    uint8_t *buf = malloc(n);
    assert_non_null(buf);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) { /* runs, repeats at every distance, noise */
        x = x * 1103515245u + 12345u;
        buf[i] = i < 70000 ? 'z' : i < 140000 ? (uint8_t)(i % 251) : i < 200000 ? buf[i - 65537] : (uint8_t)(x >> 24);
    }
    roundtrip_snappy(buf, n);
    /* compressible input compresses */
    silt_buf c = SILT_BUF_INIT;
    assert_int_equal(silt_snappy_compress(&c, buf, 70000), 0);
    assert_true(c.len < 4000);
    silt_buf_free(&c);
    free(buf);

    /* hand-made streams: literal "ab", copy offset 2 length 4 -> "ababab" */
    uint8_t s1[] = {6, 1 << 2, 'a', 'b', 1 | (0 << 2), 2};
    uint8_t out[8];
    assert_int_equal(silt_snappy_uncompress(s1, sizeof s1, out, 6), 0);
    assert_memory_equal(out, "ababab", 6);
    /* wrong expected length, offset beyond the output, truncated literal */
    assert_int_equal(silt_snappy_uncompress(s1, sizeof s1, out, 7), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "snappy: uncompressed length differs from the expected one");
    uint8_t s2[] = {6, 1 << 2, 'a', 'b', 1 | (0 << 2), 3};
    assert_int_equal(silt_snappy_uncompress(s2, sizeof s2, out, 6), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "snappy: copy offset outside the output");
    uint8_t s3[] = {6, 5 << 2, 'a', 'b'};
    assert_int_equal(silt_snappy_uncompress(s3, sizeof s3, out, 6), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "snappy: literal overruns its buffer");
    uint8_t s4[] = {3, 0, 'a'};
    assert_int_equal(silt_snappy_uncompress(s4, sizeof s4, out, 3), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "snappy: stream ends before the uncompressed length");
    uint8_t s5[] = {0x80, 0x80};
    assert_int_equal(silt_snappy_uncompress(s5, sizeof s5, out, 0), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "snappy: truncated length preamble");
}

/* ------------------------------------------------------------ thrift */

static void test_thrift(void **state)
{
    fx *f = *state;
    /* a DuckDB footer parses and writes back byte for byte */
    assert_int_equal(silt_engine_execf(g_eng,
                                       "COPY (SELECT i::UBIGINT AS \"offset\", 'x' || i AS s, [i, NULL] AS l, "
                                       "{'a': i, 'b': i > 3} AS st, MAP {'k': i} AS m FROM range(10) r(i)) TO '%s' "
                                       "(FORMAT parquet, parquet_version v2, compression snappy)",
                                       f->path),
                     0);
    size_t n = 0;
    char *file = tu_read_file(f->path, &n);
    assert_non_null(file);
    uint32_t flen = (uint32_t)(uint8_t)file[n - 8] | (uint32_t)(uint8_t)file[n - 7] << 8 |
                    (uint32_t)(uint8_t)file[n - 6] << 16 | (uint32_t)(uint8_t)file[n - 5] << 24;
    const uint8_t *footer = (const uint8_t *)file + n - 8 - flen;
    silt_arena *a = silt_arena_new();
    silt_thrift_value *v = NULL;
    size_t used = 0;
    assert_int_equal(silt_thrift_parse(a, footer, flen, &used, &v), 0);
    assert_int_equal(used, flen);
    silt_buf out = SILT_BUF_INIT;
    assert_int_equal(silt_thrift_write(&out, v), 0);
    assert_int_equal(out.len, flen);
    assert_memory_equal(out.data, footer, flen);
    assert_int_equal(silt_thrift_get_int(v, 3, -1), 10); /* num_rows */
    /* edits: a bigger value, a new field in id order, a removed field */
    assert_int_equal(silt_thrift_set_int(a, v, 3, SILT_TH_I64, 1000000), 0);
    assert_int_equal(silt_thrift_set_int(a, v, 5, SILT_TH_I32, 7), 0);
    silt_thrift_remove(v, 6);
    silt_buf_clear(&out);
    assert_int_equal(silt_thrift_write(&out, v), 0);
    silt_thrift_value *w = NULL;
    assert_int_equal(silt_thrift_parse(a, (const uint8_t *)out.data, out.len, &used, &w), 0);
    assert_int_equal(used, out.len);
    assert_int_equal(silt_thrift_get_int(w, 3, -1), 1000000);
    assert_int_equal(silt_thrift_get_int(w, 5, -1), 7);
    assert_null(silt_thrift_get(w, 6));
    assert_int_equal(w->u.st.ids[0], 1);
    assert_int_equal(w->u.st.ids[w->u.st.n - 1], 5);
    /* every truncation of the footer is rejected cleanly */
    for (size_t k = 0; k < flen; k++)
        assert_int_equal(silt_thrift_parse(a, footer, k, NULL, &w), SILT_ECORRUPT);
    /* bools in fields and lists, long lists, negative and long field ids */
    uint8_t hand[] = {0x11, 0x02 | 0x10, 0x19, 0x21, 0x01, 0x02, 0x08, 0xc8, 0x01, 0x03, 'a', 'b', 'c',
                      0x09, 0xf5, 0x10, 0x00};
    /* field 1 true; field 2 false; field 3 list<bool>[true,false];
     * field 100 (long form, zigzag 200) binary "abc"; field 99 -> see below */
    hand[13] = 0x00; /* stop right after the binary */
    assert_int_equal(silt_thrift_parse(a, hand, 14, &used, &w), 0);
    assert_int_equal(used, 14);
    assert_true(silt_thrift_get(w, 1)->u.b);
    assert_false(silt_thrift_get(w, 2)->u.b);
    silt_thrift_value *l = silt_thrift_get(w, 3);
    assert_int_equal(l->u.list.n, 2);
    assert_true(l->u.list.items[0]->u.b);
    assert_false(l->u.list.items[1]->u.b);
    assert_int_equal(silt_thrift_get(w, 100)->u.bin.n, 3);
    silt_buf_clear(&out);
    assert_int_equal(silt_thrift_write(&out, w), 0);
    assert_int_equal(out.len, 14);
    assert_memory_equal(out.data, hand, 14);
    /* nesting deeper than the limit */
    uint8_t deep[200];
    for (size_t k = 0; k < sizeof deep; k++)
        deep[k] = 0x1c; /* field +1, struct */
    assert_int_equal(silt_thrift_parse(a, deep, sizeof deep, NULL, &w), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "thrift: nesting too deep at byte 64");
    /* a list claiming more elements than there are bytes */
    uint8_t big[] = {0x19, 0xf5, 0xff, 0xff, 0x03, 0x00};
    assert_int_equal(silt_thrift_parse(a, big, sizeof big, NULL, &w), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "thrift: list longer than the input at byte 5");
    silt_buf_free(&out);
    silt_arena_free(a);
    free(file);
}

/* ------------------------------------------------------------ levels */

static void test_lower_levels(void **state)
{
    (void)state;
    silt_buf out = SILT_BUF_INIT;
    size_t used = 0;
    /* RLE run of 5 x 1 (bw 1) -> nothing at bw 0 */
    uint8_t r1[] = {5 << 1, 1};
    assert_int_equal(silt_parquet_lower_levels(r1, sizeof r1, 5, 1, 1, 0, &out, &used), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(used, 2);
    /* a null */
    uint8_t r0[] = {2 << 1, 1, 1 << 1, 0};
    assert_int_equal(silt_parquet_lower_levels(r0, sizeof r0, 3, 1, 1, 0, &out, &used), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "null");
    /* bit-packed levels 3,3,2,1,3,3,3,3 | 3 (bw 2, one group + padding),
     * then a run of 4 x 3: lowered to 2,2,1,0,2,2,2,2,2,2,2,2,2 at bw 2 */
    uint8_t bp[] = {(1 << 1) | 1, 0x00, 0x00, (4 << 1), 3};
    uint32_t lv[8] = {3, 3, 2, 1, 3, 3, 3, 3};
    for (int i = 0; i < 8; i++) {
        int bit = 2 * i;
        bp[1 + bit / 8] |= (uint8_t)(lv[i] << (bit % 8));
    }
    silt_buf_clear(&out);
    assert_int_equal(silt_parquet_lower_levels(bp, sizeof bp, 12, 2, 3, 2, &out, &used), 0);
    assert_int_equal(used, sizeof bp);
    /* 2,2,1,0,2,2,2,2 | 2,2,2,2 + padding: one bit-packed run of two groups */
    uint8_t expect[] = {(2 << 1) | 1, 0x1a, 0xaa, 0xaa, 0x00};
    assert_int_equal(out.len, sizeof expect);
    assert_memory_equal(out.data, expect, sizeof expect);
    /* 2,1 then 18 x 2 (bw 2) -> 1,0,1,1,1,1,1,1 bit-packed, then a run of 12 x 1 */
    uint8_t mixed[] = {1 << 1, 2, 1 << 1, 1, 18 << 1, 2};
    silt_buf_clear(&out);
    assert_int_equal(silt_parquet_lower_levels(mixed, sizeof mixed, 20, 2, 2, 1, &out, &used), 0);
    uint8_t expect2[] = {(1 << 1) | 1, 0xfd, 12 << 1, 1};
    assert_int_equal(out.len, sizeof expect2);
    assert_memory_equal(out.data, expect2, sizeof expect2);
    /* above the maximum; truncated */
    assert_int_equal(silt_parquet_lower_levels(bp, sizeof bp, 12, 2, 2, 1, &out, &used), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "definition level 3 above the maximum 2");
    assert_int_equal(silt_parquet_lower_levels(bp, 2, 12, 2, 3, 2, &out, &used), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "truncated definition levels");
    assert_int_equal(silt_parquet_level_width(0), 0);
    assert_int_equal(silt_parquet_level_width(1), 1);
    assert_int_equal(silt_parquet_level_width(3), 2);
    assert_int_equal(silt_parquet_level_width(4), 3);
    silt_buf_free(&out);
    /* CRC-32 check value */
    assert_int_equal(silt_parquet_crc32((const uint8_t *)"123456789", 9), 0xcbf43926u);
}

/* ------------------------------------------------------------ rewrite */

/* Every column kind silt writes; n has nulls and stays OPTIONAL. */
#define ALL_TYPES                                                                                              \
    "SELECT i::UBIGINT AS \"offset\", (i %% 4)::UTINYINT AS op, TIMESTAMP_MS '2020-01-01 12:00:00' AS system_time, " \
    "CAST(TIMESTAMP '2020-01-01' + INTERVAL (i) SECOND AS TIMESTAMP_MS) AS event_time, 'city ' || (i %% 7) AS s, " \
    "CASE WHEN i %% 3 = 0 THEN NULL ELSE i END AS n, i / 3.0 AS d, i %% 2 = 0 AS b, "                        \
    "CAST(i AS DECIMAL(18, 3)) AS dec, CAST('bytes' || i AS BLOB) AS bl, DATE '2020-01-01' + CAST(i AS INTEGER) AS dt, " \
    "{'a': i, 'b': CASE WHEN i %% 5 = 0 THEN NULL ELSE 'x' END} AS st, "                                   \
    "CASE WHEN i %% 4 = 0 THEN [] ELSE [i, NULL, i + 1] END AS l, "                                         \
    "CASE WHEN i %% 2 = 0 THEN NULL ELSE {'z': i} END AS ost FROM range(%d) r(i)"

static const char *const REQ[] = {"offset", "op", "system_time", "event_time", "s", "d", "b",
                                  "dec", "bl", "dt", "st", "l"};
#define NREQ (sizeof REQ / sizeof *REQ)

static void write_all(const char *path, int rows, const char *opts)
{
    char sel[4096];
    snprintf(sel, sizeof sel, ALL_TYPES, rows);
    if (silt_engine_execf(g_eng, "COPY (%s) TO '%s' (FORMAT parquet, %s)", sel, path, opts))
        fail_msg("COPY: %s", silt_error_last());
}

/* The rewritten file reads back as the original, row for row, and hashes the same. */
static void check_same_data(const char *orig, const char *path, bool hash)
{
    char sql[9000];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM (SELECT * FROM read_parquet('%s') EXCEPT ALL SELECT * FROM read_parquet('%s')))"
             " || ' ' || (SELECT count(*) FROM (SELECT * FROM read_parquet('%s') EXCEPT ALL SELECT * FROM read_parquet('%s')))"
             " || ' ' || (SELECT count(*) FROM read_parquet('%s'))",
             orig, path, path, orig, path);
    char *got = query_text(sql);
    char *expect = query_text(
        (snprintf(sql, sizeof sql, "SELECT '0 0 ' || count(*) FROM read_parquet('%s')", orig), sql));
    assert_string_equal(got, expect);
    free(got);
    free(expect);
    /* in the same order */
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM (SELECT row_number() OVER () AS k, t AS r FROM read_parquet('%s') t) a JOIN "
             "(SELECT row_number() OVER () AS k, t AS r FROM read_parquet('%s') t) b ON a.k = b.k AND "
             "a.r IS NOT DISTINCT FROM b.r",
             orig, path);
    got = query_text(sql);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM read_parquet('%s')", orig);
    expect = query_text(sql);
    assert_string_equal(got, expect);
    free(got);
    free(expect);
    if (!hash)
        return;
    uint8_t h1[SILT_LOGICAL_HASH_LEN], h2[SILT_LOGICAL_HASH_LEN];
    uint64_t r1 = 0, r2 = 0;
    if (silt_parquet_logical_hash(g_eng, orig, h1, &r1))
        fail_msg("logical hash: %s", silt_error_last());
    assert_int_equal(silt_parquet_logical_hash(g_eng, path, h2, &r2), 0);
    assert_int_equal(r1, r2);
    assert_memory_equal(h1, h2, sizeof h1);
}

static const char *REPS_AFTER =
    "duckdb_schema:REQUIRED offset:REQUIRED op:REQUIRED system_time:REQUIRED event_time:REQUIRED s:REQUIRED "
    "n:OPTIONAL d:REQUIRED b:REQUIRED dec:REQUIRED bl:REQUIRED dt:REQUIRED st:REQUIRED a:OPTIONAL b:OPTIONAL "
    "l:REQUIRED list:REPEATED element:OPTIONAL ost:OPTIONAL z:OPTIONAL";

static void check_reps(const char *path, const char *expect)
{
    char sql[5000];
    snprintf(sql, sizeof sql,
             "SELECT string_agg(name || ':' || repetition_type, ' ') FROM parquet_schema('%s')", path);
    char *got = query_text(sql);
    assert_string_equal(got, expect);
    free(got);
}

static void rewrite_and_check(fx *f, int rows, const char *opts)
{
    write_all(f->path, rows, opts);
    copy_file(f->path, f->orig);
    int rc = silt_parquet_set_required(f->path, REQ, NREQ);
    if (rc < 0)
        fail_msg("set_required: %s", silt_error_last());
    assert_int_equal(rc, (int)NREQ);
    check_reps(f->path, REPS_AFTER);
    check_same_data(f->orig, f->path, true);
    /* our own reader agrees; nothing left next to the file */
    silt_parquet_meta *m = NULL;
    assert_int_equal(silt_parquet_read_meta(f->path, &m), 0);
    assert_int_equal(silt_parquet_meta_column(m, "offset")->repetition, SILT_PQ_REQUIRED);
    assert_int_equal(silt_parquet_meta_column(m, "st.a")->top_repetition, SILT_PQ_REQUIRED);
    assert_int_equal(silt_parquet_meta_column(m, "st.a")->repetition, SILT_PQ_OPTIONAL);
    assert_int_equal(silt_parquet_meta_column(m, "n")->repetition, SILT_PQ_OPTIONAL);
    assert_int_equal(silt_parquet_meta_column(m, "ost.z")->top_repetition, SILT_PQ_OPTIONAL);
    silt_parquet_meta_free(m);
    char sql[5000];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM glob('%s/*')", f->dir);
    assert_query(sql, "2");
    /* a second call changes nothing */
    char before[80];
    snprintf(before, sizeof before, "%s", file_sha(f->path));
    assert_int_equal(silt_parquet_set_required(f->path, REQ, NREQ), 0);
    assert_string_equal(file_sha(f->path), before);
}

static void test_rewrite_snappy_v2(void **state)
{
    /* several row groups, several pages per chunk, bloom filters */
    rewrite_and_check(*state, 250000, "parquet_version v2, compression snappy, row_group_size 100000");
}

static void test_rewrite_uncompressed(void **state)
{
    rewrite_and_check(*state, 3000, "compression uncompressed, row_group_size 1000");
}

static void test_rewrite_small_and_empty(void **state)
{
    fx *f = *state;
    rewrite_and_check(f, 1, "parquet_version v2, compression snappy");
    unlink(f->orig);
    rewrite_and_check(f, 0, "parquet_version v2, compression snappy");
}

/* Maps (not hashable by the ODF digest, but valid in Parquet), lists of
 * structs, nested lists: deeper definition levels lowered by one. */
static void test_rewrite_nested(void **state)
{
    fx *f = *state;
    if (silt_engine_execf(g_eng,
                          "COPY (SELECT MAP {'k' || (i %% 3): CASE WHEN i %% 2 = 0 THEN NULL ELSE i END} AS m, "
                          "[{'x': i, 'y': [i, NULL]}, NULL] AS ls, [[i], [], NULL] AS ll, i AS keep "
                          "FROM range(5000) r(i)) TO '%s' (FORMAT parquet, parquet_version v2, compression snappy, "
                          "row_group_size 2048)",
                          f->path))
        fail_msg("COPY: %s", silt_error_last());
    copy_file(f->path, f->orig);
    const char *cols[] = {"m", "ls", "ll"};
    assert_int_equal(silt_parquet_set_required(f->path, cols, 3), 3);
    check_reps(f->path, "duckdb_schema:REQUIRED m:REQUIRED key_value:REPEATED key:REQUIRED value:OPTIONAL "
                        "ls:REQUIRED list:REPEATED element:OPTIONAL x:OPTIONAL y:OPTIONAL list:REPEATED "
                        "element:OPTIONAL ll:REQUIRED list:REPEATED element:OPTIONAL list:REPEATED element:OPTIONAL "
                        "keep:OPTIONAL");
    check_same_data(f->orig, f->path, false);
}

static void test_rewrite_errors_leave_file(void **state)
{
    fx *f = *state;
    write_all(f->path, 100, "parquet_version v2, compression snappy");
    char before[80];
    snprintf(before, sizeof before, "%s", file_sha(f->path));
    const char *nul[] = {"offset", "n"};
    assert_int_equal(silt_parquet_set_required(f->path, nul, 2), SILT_EINVAL);
    char msg[1200];
    snprintf(msg, sizeof msg, "%s: column 'n' holds a null (row group 0): it cannot be REQUIRED", f->path);
    assert_string_equal(silt_error_last(), msg);
    assert_string_equal(file_sha(f->path), before);
    /* a null inside a struct that is itself never null is fine; a null struct is not */
    const char *ost[] = {"ost"};
    assert_int_equal(silt_parquet_set_required(f->path, ost, 1), SILT_EINVAL);
    snprintf(msg, sizeof msg, "%s: column 'ost' holds a null (row group 0): it cannot be REQUIRED", f->path);
    assert_string_equal(silt_error_last(), msg);
    const char *none[] = {"offset", "nope"};
    assert_int_equal(silt_parquet_set_required(f->path, none, 2), SILT_ENOTFOUND);
    snprintf(msg, sizeof msg, "%s: no column 'nope'", f->path);
    assert_string_equal(silt_error_last(), msg);
    const char *nested[] = {"a"};
    assert_int_equal(silt_parquet_set_required(f->path, nested, 1), SILT_ENOTFOUND);
    assert_string_equal(file_sha(f->path), before);
    char sql[5000];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM glob('%s/*')", f->dir);
    assert_query(sql, "1");
    /* not Parquet; missing */
    char bogus[600];
    snprintf(bogus, sizeof bogus, "%s/bogus", f->dir);
    assert_int_equal(tu_write_file(bogus, "hello world, not parquet", 24), 0);
    assert_int_equal(silt_parquet_set_required(bogus, REQ, 1), SILT_EINVAL);
    unlink(bogus);
    assert_int_equal(silt_parquet_set_required(bogus, REQ, 1), SILT_ENOTFOUND);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snappy),
        cmocka_unit_test_setup_teardown(test_thrift, setup, teardown),
        cmocka_unit_test(test_lower_levels),
        cmocka_unit_test_setup_teardown(test_rewrite_snappy_v2, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_uncompressed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_small_and_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rewrite_errors_leave_file, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
