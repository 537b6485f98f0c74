/* test_parquet_meta.c — unit tests for src/engine/parquet_meta: the Thrift
 * footer reader and the isAdjustedToUTC patcher.
 *
 * Real files are written by DuckDB (through engine.h); every result of our
 * reader is cross-checked against DuckDB's own parquet_schema() /
 * parquet_metadata() and by reading the data back. Hand-built footers (a tiny
 * compact-protocol writer below) cover what DuckDB never writes: INTEGER
 * logical types, legacy converted-only timestamps, unknown fields of every
 * compact type, odd field order, and corrupt input. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/parquet_meta.h"
#include "util/error.h"

static silt_engine *g_eng;

typedef struct fx {
    char *dir;
    char path[4200];
} fx;

static int group_setup(void **state)
{
    (void)state;
    if (silt_engine_open(&g_eng, NULL))
        return -1;
    /* DuckDB's external file cache keys on path + mtime with one-second
     * resolution: a file patched within the second it was written would be
     * served from the stale cache. Tests read what is on disk. */
    return silt_engine_exec(g_eng, "SET enable_external_file_cache = false");
}

static int group_teardown(void **state)
{
    (void)state;
    silt_engine_free(g_eng);
    return 0;
}

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    if (!f || !(f->dir = tu_mkdtemp()))
        return -1;
    snprintf(f->path, sizeof f->path, "%s/x.parquet", f->dir);
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

/* The query of the brief: constant values in every column. */
#define BRIEF_SELECT                                                                                        \
    "SELECT 1::UBIGINT AS \"offset\", 0::UTINYINT AS op, TIMESTAMP_MS '2020-01-01 12:00:00' AS system_time, " \
    "DATE '2020-01-01' AS event_time, 'a' AS s, TIMESTAMP_MS '2020-01-01' AS t, 1.5::DOUBLE AS d, "          \
    "[1,2] AS l, {'a': 1} AS st FROM range(1000)"

/* A slice-shaped variant: offsets are distinct (0..999), as in a real slice. */
#define SLICE_SELECT                                                                                        \
    "SELECT i::UBIGINT AS \"offset\", 0::UTINYINT AS op, TIMESTAMP_MS '2020-01-01 12:00:00' AS system_time, " \
    "DATE '2020-01-01' AS event_time, 'a' AS s, TIMESTAMP_MS '2020-01-01' AS t, 1.5::DOUBLE AS d, "          \
    "[1,2] AS l, {'a': 1} AS st FROM range(1000) r(i)"

static void write_parquet(const char *select, const char *path)
{
    int rc = silt_engine_execf(g_eng, "COPY (%s) TO '%s' (FORMAT parquet, parquet_version v2)", select, path);
    if (rc)
        fail_msg("COPY failed: %s", silt_error_last());
}

static char *query_text(const char *fmt, const char *path)
{
    char sql[8192];
    snprintf(sql, sizeof sql, fmt, path);
    char *out = NULL;
    int rc = silt_engine_query_text(g_eng, &out, sql);
    if (rc)
        fail_msg("query failed: %s: %s", sql, silt_error_last());
    return out;
}

static void assert_query(const char *fmt, const char *path, const char *expect)
{
    char *got = query_text(fmt, path);
    assert_non_null(got);
    assert_string_equal(got, expect);
    free(got);
}

static silt_parquet_meta *read_meta(const char *path)
{
    silt_parquet_meta *m = NULL;
    int rc = silt_parquet_read_meta(path, &m);
    if (rc)
        fail_msg("read_meta: %s", silt_error_last());
    return m;
}

/* Checks one leaf column exactly. */
static void check_col(const silt_parquet_meta *m, const char *path, int phys, int rep, int conv, int lt,
                      int unit, bool utc, uint32_t enc)
{
    const silt_parquet_column *c = silt_parquet_meta_column(m, path);
    if (!c)
        fail_msg("no column %s", path);
    assert_int_equal(c->physical_type, phys);
    assert_int_equal(c->repetition, rep);
    assert_int_equal(c->converted_type, conv);
    assert_int_equal(c->logical_type, lt);
    assert_int_equal(c->time_unit, unit);
    assert_int_equal(c->utc, utc);
    assert_int_equal(c->encodings, enc);
    assert_int_equal(c->int_bit_width, 0);
}

/* ---- cross-check with DuckDB's parquet_schema() / parquet_metadata() ---- */

typedef struct xcheck {
    const silt_parquet_meta *m;
    size_t rows;
} xcheck;

static uint32_t enc_mask(const char *list)
{
    uint32_t mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        int e = 0;
        while (e < 32 && strcmp(silt_parquet_encoding_name(e), tok) != 0)
            e++;
        if (e == 32)
            fail_msg("unknown encoding %s", tok);
        mask |= SILT_PQ_ENC_BIT(e);
    }
    return mask;
}

/* parquet_metadata rows: path_in_schema ("a, b"), type, encodings ("X, Y"). */
static int meta_row(void *ctx, size_t n, const char *const *names, const char *const *v)
{
    xcheck *x = ctx;
    assert_int_equal(n, 3);
    (void)names;
    char path[512];
    size_t k = 0;
    for (const char *p = v[0]; *p && k + 1 < sizeof path; p++) {
        if (p[0] == ',' && p[1] == ' ') {
            path[k++] = '.';
            p++;
        } else {
            path[k++] = *p;
        }
    }
    path[k] = '\0';
    const silt_parquet_column *c = silt_parquet_meta_column(x->m, path);
    if (!c)
        fail_msg("DuckDB reports column %s that we do not", path);
    assert_string_equal(silt_parquet_type_name(c->physical_type), v[1]);
    assert_int_equal(c->encodings, enc_mask(v[2]));
    x->rows++;
    return 0;
}

/* parquet_schema rows of leaves: name, type, converted_type, logical_type. */
static int schema_row(void *ctx, size_t n, const char *const *names, const char *const *v)
{
    xcheck *x = ctx;
    (void)names;
    assert_int_equal(n, 4);
    /* leaves only (type not NULL); find ours by leaf name and schema order */
    const silt_parquet_column *c = &x->m->columns[x->rows++];
    assert_string_equal(c->name, v[0]);
    assert_string_equal(silt_parquet_type_name(c->physical_type), v[1]);
    assert_string_equal(silt_parquet_converted_name(c->converted_type), v[2] ? v[2] : "NONE");
    if (c->logical_type == SILT_PQ_LT_TIMESTAMP) {
        char expect[256];
        snprintf(expect, sizeof expect,
                 "TimestampType(isAdjustedToUTC=%d, unit=TimeUnit(MILLIS=%s, MICROS=%s, NANOS=%s))", c->utc,
                 c->time_unit == SILT_PQ_MILLIS ? "MilliSeconds()" : "<null>",
                 c->time_unit == SILT_PQ_MICROS ? "MicroSeconds()" : "<null>",
                 c->time_unit == SILT_PQ_NANOS ? "NanoSeconds()" : "<null>");
        assert_non_null(v[3]);
        assert_string_equal(v[3], expect);
    } else if (c->logical_type == SILT_PQ_LT_NONE) {
        assert_null(v[3]);
    } else {
        assert_non_null(v[3]);
    }
    return 0;
}

static void cross_check(const char *path)
{
    silt_parquet_meta *m = read_meta(path);
    xcheck x = {m, 0};
    char sql[8192];
    snprintf(sql, sizeof sql,
             "SELECT path_in_schema, type, encodings FROM parquet_metadata('%s')",
             path);
    if (silt_engine_query_rows(g_eng, sql, meta_row, &x))
        fail_msg("parquet_metadata: %s", silt_error_last());
    assert_int_equal(x.rows, m->num_columns * m->num_row_groups);
    x.rows = 0;
    snprintf(sql, sizeof sql,
             "SELECT name, type, converted_type, logical_type FROM parquet_schema('%s') WHERE type IS NOT NULL",
             path);
    if (silt_engine_query_rows(g_eng, sql, schema_row, &x))
        fail_msg("parquet_schema: %s", silt_error_last());
    assert_int_equal(x.rows, m->num_columns);
    silt_parquet_meta_free(m);
}

static size_t count_diff(const char *a, size_t na, const char *b, size_t nb, size_t *first)
{
    assert_int_equal(na, nb);
    size_t d = 0;
    *first = SIZE_MAX;
    for (size_t i = 0; i < na; i++)
        if (a[i] != b[i]) {
            d++;
            if (*first == SIZE_MAX)
                *first = i;
        }
    return d;
}

/* ------------------------------------------------------------ DuckDB files */

#define E(x) SILT_PQ_ENC_BIT(SILT_PQ_ENC_##x)

static void test_slice_read_and_patch(void **state)
{
    fx *f = *state;
    write_parquet(SLICE_SELECT, f->path);
    size_t n0;
    char *before = tu_read_file(f->path, &n0);
    assert_non_null(before);

    silt_parquet_meta *m = read_meta(f->path);
    assert_int_equal(m->num_rows, 1000);
    assert_int_equal(m->version, 1);
    assert_int_equal(m->num_row_groups, 1);
    assert_non_null(m->created_by);
    assert_int_equal(strncmp(m->created_by, "DuckDB version v1.4.4", 21), 0);
    assert_int_equal(m->num_columns, 9);
    assert_int_equal(m->footer_pos + m->footer_len + 8, n0);
    static const char *const paths[] = {"offset", "op", "system_time", "event_time", "s", "t", "d",
                                        "l.list.element", "st.a"};
    for (size_t i = 0; i < 9; i++) {
        assert_string_equal(m->columns[i].path, paths[i]);
        assert_int_equal(m->columns[i].top_level, i < 7);
    }
    assert_string_equal(m->columns[7].name, "element");
    assert_string_equal(m->columns[7].top_name, "l");
    assert_string_equal(m->columns[8].top_name, "st");
    const int OPT = SILT_PQ_OPTIONAL;
    check_col(m, "offset", SILT_PQ_INT64, OPT, SILT_PQ_CT_UINT_64, 0, 0, false, E(DELTA_BINARY_PACKED));
    check_col(m, "op", SILT_PQ_INT32, OPT, SILT_PQ_CT_UINT_8, 0, 0, false, E(RLE_DICTIONARY));
    check_col(m, "system_time", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP,
              SILT_PQ_MILLIS, false, E(RLE_DICTIONARY));
    check_col(m, "event_time", SILT_PQ_INT32, OPT, SILT_PQ_CT_DATE, 0, 0, false, E(RLE_DICTIONARY));
    check_col(m, "s", SILT_PQ_BYTE_ARRAY, OPT, SILT_PQ_CT_UTF8, 0, 0, false, E(RLE_DICTIONARY));
    check_col(m, "t", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MILLIS,
              false, E(RLE_DICTIONARY));
    check_col(m, "d", SILT_PQ_DOUBLE, OPT, -1, 0, 0, false, E(RLE_DICTIONARY));
    check_col(m, "l.list.element", SILT_PQ_INT32, OPT, SILT_PQ_CT_INT_32, 0, 0, false, E(RLE_DICTIONARY));
    check_col(m, "st.a", SILT_PQ_INT32, OPT, SILT_PQ_CT_INT_32, 0, 0, false, E(RLE_DICTIONARY));
    uint64_t fpos = m->footer_pos;
    size_t flen = m->footer_len;
    silt_parquet_meta_free(m);
    cross_check(f->path);

    /* DuckDB's view before the patch: naive timestamps */
    assert_query("SELECT typeof(system_time) FROM '%s' LIMIT 1", f->path, "TIMESTAMP");
    assert_query("SELECT typeof(t) FROM '%s' LIMIT 1", f->path, "TIMESTAMP");

    /* patch all timestamp columns */
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, NULL, 0), 2);
    size_t n1, first;
    char *after = tu_read_file(f->path, &n1);
    assert_non_null(after);
    assert_int_equal(count_diff(before, n0, after, n1, &first), 2); /* one byte per column */
    assert_true(first >= fpos && first < fpos + flen);                /* inside the footer */

    m = read_meta(f->path);
    assert_int_equal(m->footer_len, flen);
    check_col(m, "system_time", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP,
              SILT_PQ_MILLIS, true, E(RLE_DICTIONARY));
    check_col(m, "t", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MILLIS,
              true, E(RLE_DICTIONARY));
    check_col(m, "offset", SILT_PQ_INT64, OPT, SILT_PQ_CT_UINT_64, 0, 0, false, E(DELTA_BINARY_PACKED));
    silt_parquet_meta_free(m);
    cross_check(f->path);

    /* DuckDB's own reading of the patched footer */
    assert_query("SELECT logical_type FROM parquet_schema('%s') WHERE name = 'system_time'", f->path,
                 "TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=MilliSeconds(), MICROS=<null>, "
                 "NANOS=<null>))");
    assert_query("SELECT string_agg(encodings, '|' ORDER BY column_id) FROM parquet_metadata('%s')", f->path,
                 "DELTA_BINARY_PACKED|RLE_DICTIONARY|RLE_DICTIONARY|RLE_DICTIONARY|RLE_DICTIONARY|"
                 "RLE_DICTIONARY|RLE_DICTIONARY|RLE_DICTIONARY|RLE_DICTIONARY");
    assert_query("SELECT typeof(system_time) || ',' || typeof(t) || ',' || typeof(\"offset\") || ',' || "
                 "typeof(op) || ',' || typeof(event_time) FROM '%s' LIMIT 1",
                 f->path, "TIMESTAMP WITH TIME ZONE,TIMESTAMP WITH TIME ZONE,UBIGINT,UTINYINT,DATE");
    /* values unchanged: same instants */
    assert_query("SELECT count(*) || ',' || min(epoch_ms(system_time)) || ',' || max(epoch_ms(system_time)) || "
                 "',' || min(epoch_ms(t)) || ',' || sum(\"offset\") || ',' || min(event_time) FROM '%s'",
                 f->path, "1000,1577880000000,1577880000000,1577836800000,499500,2020-01-01");

    /* idempotent: a second run changes nothing */
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, NULL, 0), 0);
    size_t n2;
    char *again = tu_read_file(f->path, &n2);
    assert_int_equal(count_diff(after, n1, again, n2, &first), 0);
    free(before);
    free(after);
    free(again);
}

static void test_brief_query_named_columns(void **state)
{
    fx *f = *state;
    write_parquet(BRIEF_SELECT, f->path);
    silt_parquet_meta *m = read_meta(f->path);
    assert_int_equal(m->num_rows, 1000);
    assert_int_equal(m->num_columns, 9);
    /* a constant offset column is dictionary-encoded, not DELTA_BINARY_PACKED */
    for (size_t i = 0; i < m->num_columns; i++)
        assert_int_equal(m->columns[i].encodings, E(RLE_DICTIONARY));
    silt_parquet_meta_free(m);
    cross_check(f->path);

    const char *only_st[] = {"system_time"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, only_st, 1), 1);
    m = read_meta(f->path);
    assert_true(silt_parquet_meta_column(m, "system_time")->utc);
    assert_false(silt_parquet_meta_column(m, "t")->utc);
    silt_parquet_meta_free(m);
    assert_query("SELECT typeof(system_time) || ',' || typeof(t) FROM '%s' LIMIT 1", f->path,
                 "TIMESTAMP WITH TIME ZONE,TIMESTAMP");

    const char *both[] = {"system_time", "t", "t"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, both, 3), 1);
    m = read_meta(f->path);
    assert_true(silt_parquet_meta_column(m, "t")->utc);
    silt_parquet_meta_free(m);
    cross_check(f->path);
    assert_query("SELECT epoch_ms(system_time) || ',' || epoch_ms(t) FROM '%s' LIMIT 1", f->path,
                 "1577880000000,1577836800000");
}

static void test_patch_errors_leave_file_unchanged(void **state)
{
    fx *f = *state;
    write_parquet(BRIEF_SELECT, f->path);
    size_t n0;
    char *before = tu_read_file(f->path, &n0);
    char expect[8192];
    struct {
        const char *cols[2];
        size_t n;
        int code;
        const char *msg;
    } cases[] = {
        {{"nope"}, 1, SILT_ENOTFOUND, "no column 'nope'"},
        {{"s"}, 1, SILT_EINVAL, "column 's' is not a timestamp column"},
        {{"event_time"}, 1, SILT_EINVAL, "column 'event_time' is not a timestamp column"},
        {{"offset"}, 1, SILT_EINVAL, "column 'offset' is not a timestamp column"},
        {{"st"}, 1, SILT_EINVAL, "column 'st' is not a timestamp column"},
        {{"a"}, 1, SILT_ENOTFOUND, "no column 'a'"}, /* nested leaf names are not top-level columns */
        {{"system_time", "nope"}, 2, SILT_ENOTFOUND, "no column 'nope'"},
        {{"t", "d"}, 2, SILT_EINVAL, "column 'd' is not a timestamp column"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(silt_parquet_set_timestamps_utc(f->path, cases[i].cols, cases[i].n), cases[i].code);
        snprintf(expect, sizeof expect, "%s: %s", f->path, cases[i].msg);
        assert_string_equal(silt_error_last(), expect);
        size_t n1, first;
        char *now = tu_read_file(f->path, &n1);
        assert_int_equal(count_diff(before, n0, now, n1, &first), 0);
        free(now);
    }
    free(before);
}

static void test_timestamp_kinds(void **state)
{
    fx *f = *state;
    write_parquet("SELECT TIMESTAMP_MS '2021-06-01 01:02:03.456' AS ms, TIMESTAMP '2021-06-01 01:02:03.456789' AS us, "
                  "TIMESTAMPTZ '2021-06-01 01:02:03.456789+00' AS tz, TIMESTAMP_NS '2021-06-01 01:02:03.456789123' "
                  "AS ns, TIMESTAMP_S '2021-06-01 01:02:03' AS sec, TIME '12:00:00' AS tm, "
                  "{'t': TIMESTAMP_MS '2021-06-01 00:00:00'} AS st, [TIMESTAMP_MS '2021-06-02 00:00:00'] AS lt, "
                  "(i/100)::DECIMAL(10,2) AS dec, uuid() AS u, i % 2 = 0 AS b FROM range(10) r(i)",
                  f->path);
    silt_parquet_meta *m = read_meta(f->path);
    const int OPT = SILT_PQ_OPTIONAL;
    check_col(m, "ms", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MILLIS,
              false, E(RLE_DICTIONARY));
    check_col(m, "us", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MICROS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MICROS,
              false, E(RLE_DICTIONARY));
    check_col(m, "tz", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MICROS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MICROS,
              true, E(RLE_DICTIONARY));
    check_col(m, "ns", SILT_PQ_INT64, OPT, -1, SILT_PQ_LT_TIMESTAMP, SILT_PQ_NANOS, false, E(RLE_DICTIONARY));
    check_col(m, "sec", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MICROS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MICROS,
              false, E(RLE_DICTIONARY));
    check_col(m, "tm", SILT_PQ_INT64, OPT, 8 /* TIME_MICROS */, SILT_PQ_LT_TIME, SILT_PQ_MICROS, false,
              E(RLE_DICTIONARY));
    check_col(m, "st.t", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP, SILT_PQ_MILLIS,
              false, E(RLE_DICTIONARY));
    check_col(m, "lt.list.element", SILT_PQ_INT64, OPT, SILT_PQ_CT_TIMESTAMP_MILLIS, SILT_PQ_LT_TIMESTAMP,
              SILT_PQ_MILLIS, false, E(RLE_DICTIONARY));
    check_col(m, "dec", SILT_PQ_INT64, OPT, SILT_PQ_CT_DECIMAL, SILT_PQ_LT_DECIMAL, 0, false,
              E(DELTA_BINARY_PACKED));
    check_col(m, "u", SILT_PQ_FIXED_LEN_BYTE_ARRAY, OPT, -1, SILT_PQ_LT_UUID, 0, false, E(PLAIN));
    check_col(m, "b", SILT_PQ_BOOLEAN, OPT, -1, 0, 0, false, E(PLAIN));
    assert_int_equal(silt_parquet_meta_column(m, "dec")->scale, 2);
    assert_int_equal(silt_parquet_meta_column(m, "dec")->precision, 10);
    assert_int_equal(silt_parquet_meta_column(m, "u")->type_length, 16);
    assert_int_equal(silt_parquet_meta_column(m, "l.list") == NULL, 1);
    assert_int_equal(silt_parquet_meta_column(m, "lt.list.element")->top_level, false);
    silt_parquet_meta_free(m);
    cross_check(f->path);

    assert_query("SELECT typeof(ns) || ',' || epoch_ns(ns) FROM '%s' LIMIT 1", f->path,
                 "TIMESTAMP_NS,1622509323456789123");
    const char *tm[] = {"tm"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, tm, 1), SILT_EINVAL);
    const char *tz[] = {"tz"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, tz, 1), 0); /* already UTC */

    /* NULL: every TIMESTAMP leaf, nested ones too: ms us ns sec st.t lt.list.element */
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, NULL, 0), 6);
    m = read_meta(f->path);
    for (size_t i = 0; i < m->num_columns; i++)
        assert_int_equal(m->columns[i].utc, m->columns[i].logical_type == SILT_PQ_LT_TIMESTAMP);
    silt_parquet_meta_free(m);
    cross_check(f->path);
    assert_query("SELECT typeof(ms) || ',' || typeof(us) || ',' || typeof(ns) || ',' || typeof(sec) || ',' || "
                 "typeof(st) || ',' || typeof(lt) || ',' || typeof(tm) FROM '%s' LIMIT 1",
                 f->path,
                 "TIMESTAMP WITH TIME ZONE,TIMESTAMP WITH TIME ZONE,TIMESTAMP WITH TIME ZONE,"
                 "TIMESTAMP WITH TIME ZONE,STRUCT(t TIMESTAMP WITH TIME ZONE),TIMESTAMP WITH TIME ZONE[],TIME");
    /* same instants; DuckDB reads a UTC NANOS column as TIMESTAMPTZ, which has
     * microsecond precision, so the nanosecond digits are cut off on read */
    assert_query("SELECT epoch_ms(ms) || ',' || epoch_us(us) || ',' || epoch_ns(ns) || ',' || epoch_ms(sec) || ',' || "
                 "epoch_ms(st.t) || ',' || epoch_ms(lt[1]) FROM '%s' LIMIT 1",
                 f->path, "1622509323456,1622509323456789,1622509323456789000,1622509323000,1622505600000,1622592000000");
}

/* ------------------------------------------------------------ bad files */

static void expect_read_error(const char *path, int code, const char *msg)
{
    silt_parquet_meta *m = (silt_parquet_meta *)1;
    assert_int_equal(silt_parquet_read_meta(path, &m), code);
    assert_null(m);
    char expect[8192];
    snprintf(expect, sizeof expect, "%s: %s", path, msg);
    assert_string_equal(silt_error_last(), expect);
    /* the patcher fails the same way and leaves the file alone */
    size_t n0 = 0, n1 = 0, first;
    char *before = tu_read_file(path, &n0);
    assert_int_equal(silt_parquet_set_timestamps_utc(path, NULL, 0), code);
    assert_string_equal(silt_error_last(), expect);
    char *after = tu_read_file(path, &n1);
    if (before)
        assert_int_equal(count_diff(before, n0, after, n1, &first), 0);
    free(before);
    free(after);
}

static void put_le32(char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (char)(v >> (8 * i));
}

static void test_bad_files(void **state)
{
    fx *f = *state;
    char p[4400], msg[4700];
    write_parquet(BRIEF_SELECT, f->path);
    size_t n;
    char *good = tu_read_file(f->path, &n);
    assert_non_null(good);
    uint32_t flen = (uint8_t)good[n - 8] | (uint32_t)(uint8_t)good[n - 7] << 8 |
                    (uint32_t)(uint8_t)good[n - 6] << 16 | (uint32_t)(uint8_t)good[n - 5] << 24;

    snprintf(p, sizeof p, "%s/missing.parquet", f->dir);
    silt_parquet_meta *m = NULL;
    assert_int_equal(silt_parquet_read_meta(p, &m), SILT_ENOTFOUND);
    snprintf(msg, sizeof msg, "%s: cannot open: No such file or directory", p);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(silt_parquet_set_timestamps_utc(p, NULL, 0), SILT_ENOTFOUND);

    snprintf(p, sizeof p, "%s/slice.parquet", f->dir);
    const char *text = "offset,op\n0,0\n1,0\nthis is a CSV file, not Parquet\n";
    assert_int_equal(tu_write_file(p, text, strlen(text)), 0);
    expect_read_error(p, SILT_EINVAL, "not a Parquet file (bad magic)");

    assert_int_equal(tu_write_file(p, "PAR1PAR1", 8), 0);
    expect_read_error(p, SILT_EINVAL, "not a Parquet file (8 bytes, too short)");

    assert_int_equal(tu_write_file(p, good, n / 2), 0); /* truncated */
    expect_read_error(p, SILT_ECORRUPT, "truncated Parquet file (no footer magic at the end)");

    assert_int_equal(tu_write_file(p, good, n - 1), 0);
    expect_read_error(p, SILT_ECORRUPT, "truncated Parquet file (no footer magic at the end)");

    char *bad = malloc(n);
    assert_non_null(bad);
    memcpy(bad, good, n);
    put_le32(bad + n - 8, 0xfffffff0u);
    assert_int_equal(tu_write_file(p, bad, n), 0);
    snprintf(msg, sizeof msg, "corrupt footer: length 4294967280 does not fit in a file of %zu bytes", n);
    expect_read_error(p, SILT_ECORRUPT, msg);

    put_le32(bad + n - 8, (uint32_t)n - 11);
    assert_int_equal(tu_write_file(p, bad, n), 0);
    snprintf(msg, sizeof msg, "corrupt footer: length %zu does not fit in a file of %zu bytes", n - 11, n);
    expect_read_error(p, SILT_ECORRUPT, msg);

    put_le32(bad + n - 8, 0);
    assert_int_equal(tu_write_file(p, bad, n), 0);
    snprintf(msg, sizeof msg, "corrupt footer: length 0 does not fit in a file of %zu bytes", n);
    expect_read_error(p, SILT_ECORRUPT, msg);

    /* footer length one short: parsing starts one byte late */
    put_le32(bad + n - 8, flen - 1);
    assert_int_equal(tu_write_file(p, bad, n), 0);
    m = NULL;
    assert_int_equal(silt_parquet_read_meta(p, &m), SILT_ECORRUPT);
    snprintf(msg, sizeof msg, "%s: corrupt footer: ", p);
    assert_int_equal(strncmp(silt_error_last(), msg, strlen(msg)), 0);

    /* a garbled footer byte in the middle of the schema */
    memcpy(bad, good, n);
    bad[n - 8 - flen + 3] = (char)0xff;
    assert_int_equal(tu_write_file(p, bad, n), 0);
    assert_int_equal(silt_parquet_read_meta(p, &m), SILT_ECORRUPT);
    assert_int_equal(strncmp(silt_error_last(), msg, strlen(msg)), 0);

    memcpy(bad, good, n);
    memcpy(bad + n - 4, "PARE", 4);
    assert_int_equal(tu_write_file(p, bad, n), 0);
    expect_read_error(p, SILT_EUNSUPPORTED, "encrypted Parquet footers are not supported");

    /* every proper prefix of a real footer is rejected cleanly */
    const uint8_t *footer = (const uint8_t *)good + n - 8 - flen;
    for (size_t k = 0; k < flen; k++) {
        m = (silt_parquet_meta *)1;
        assert_int_equal(silt_parquet_parse_footer(footer, k, &m), SILT_ECORRUPT);
        assert_null(m);
        assert_int_equal(strncmp(silt_error_last(), "corrupt footer: ", 16), 0);
    }
    assert_int_equal(silt_parquet_parse_footer(footer, flen, &m), 0);
    silt_parquet_meta_free(m);
    /* every single-byte change either parses or fails cleanly (ASan run) */
    uint8_t *mut = malloc(flen);
    assert_non_null(mut);
    for (size_t k = 0; k < flen; k++) {
        static const uint8_t vals[] = {0x00, 0x01, 0x0f, 0x19, 0x7f, 0x80, 0xff};
        for (size_t v = 0; v < sizeof vals; v++) {
            memcpy(mut, footer, flen);
            mut[k] = vals[v];
            int rc = silt_parquet_parse_footer(mut, flen, &m);
            assert_true(rc == 0 || rc == SILT_ECORRUPT);
            silt_parquet_meta_free(m);
        }
    }
    free(mut);
    free(bad);
    free(good);
}

/* ------------------------------------------------------------ hand-built footers */

typedef struct tw {
    uint8_t b[8192];
    size_t n;
    int16_t last[64];
    int depth;
} tw;

static void w_byte(tw *w, uint8_t v) { w->b[w->n++] = v; }
static void w_varint(tw *w, uint64_t v)
{
    while (v >= 0x80) {
        w_byte(w, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    w_byte(w, (uint8_t)v);
}
static void w_zz(tw *w, int64_t v) { w_varint(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }
static void w_field(tw *w, int16_t id, int type)
{
    int d = id - w->last[w->depth];
    if (d > 0 && d <= 15) {
        w_byte(w, (uint8_t)(d << 4 | type));
    } else {
        w_byte(w, (uint8_t)type);
        w_zz(w, id);
    }
    w->last[w->depth] = id;
}
static void w_begin(tw *w) { w->last[++w->depth] = 0; }        /* after a struct header */
static void w_end(tw *w) { w_byte(w, 0); w->depth--; }          /* stop byte */
static void w_list(tw *w, int et, size_t n)
{
    if (n < 15) {
        w_byte(w, (uint8_t)(n << 4 | et));
    } else {
        w_byte(w, (uint8_t)(0xf0 | et));
        w_varint(w, n);
    }
}
static void w_str(tw *w, const char *s)
{
    w_varint(w, strlen(s));
    memcpy(w->b + w->n, s, strlen(s));
    w->n += strlen(s);
}
static void f_i32(tw *w, int16_t id, int32_t v) { w_field(w, id, 5); w_zz(w, v); }
static void f_i64(tw *w, int16_t id, int64_t v) { w_field(w, id, 6); w_zz(w, v); }
static void f_str(tw *w, int16_t id, const char *s) { w_field(w, id, 8); w_str(w, s); }
static void f_struct(tw *w, int16_t id) { w_field(w, id, 12); w_begin(w); }

static void column_chunk(tw *w, const char *const *path, size_t np, int32_t type, const int32_t *enc, size_t ne)
{
    w_begin(w);
    f_i64(w, 2, 4); /* file_offset */
    f_struct(w, 3); /* meta_data */
    f_i32(w, 1, type);
    w_field(w, 2, 9);
    w_list(w, 5, ne);
    for (size_t i = 0; i < ne; i++)
        w_zz(w, enc[i]);
    w_field(w, 3, 9);
    w_list(w, 8, np);
    for (size_t i = 0; i < np; i++)
        w_str(w, path[i]);
    f_i32(w, 4, 1);
    f_i64(w, 5, 7);
    w_end(w);
    w_end(w);
}

/* A FileMetaData with row_groups before the schema, unknown fields of every
 * compact type, an INTEGER(16, signed) column, a nested TIMESTAMP(MILLIS,
 * non-UTC) and a legacy TIMESTAMP_MILLIS column without LogicalType. */
static void build_synthetic(tw *w, int root_children)
{
    memset(w, 0, sizeof *w);
    /* 4: row_groups */
    w_field(w, 4, 9);
    w_list(w, 12, 1);
    w_begin(w);
    w_field(w, 1, 9);
    w_list(w, 12, 3);
    static const char *const pa[] = {"a"}, *const pg[] = {"g", "ts"}, *const pl[] = {"legacy"};
    static const int32_t e1[] = {0, 3}, e2[] = {8, 3, 0}, e3[] = {5};
    column_chunk(w, pa, 1, 1, e1, 2);
    column_chunk(w, pg, 2, 2, e2, 3);
    column_chunk(w, pl, 1, 2, e3, 1);
    f_i64(w, 2, 100);
    f_i64(w, 3, 7);
    w_end(w);
    /* 1: version (field id goes down: long form header) */
    f_i32(w, 1, 2);
    /* 2: schema */
    w_field(w, 2, 9);
    w_list(w, 12, 5);
    w_begin(w); /* root */
    f_str(w, 4, "schema");
    f_i32(w, 5, root_children);
    w_end(w);
    w_begin(w); /* a: INT32, INTEGER(16, signed) */
    f_i32(w, 1, 1);
    f_i32(w, 3, 0);
    f_str(w, 4, "a");
    f_i32(w, 6, 16);
    f_i32(w, 9, 42); /* field_id */
    f_struct(w, 10);
    f_struct(w, 10);
    w_field(w, 1, 3);
    w_byte(w, 16);
    w_field(w, 2, 1); /* isSigned = true */
    w_end(w);
    w_end(w);
    f_struct(w, 30); /* unknown struct field in SchemaElement */
    f_str(w, 1, "x");
    w_end(w);
    w_end(w);
    w_begin(w); /* g: group of one */
    f_i32(w, 3, 1);
    f_str(w, 4, "g");
    f_i32(w, 5, 1);
    w_end(w);
    w_begin(w); /* g.ts: TIMESTAMP(MILLIS, false) */
    f_i32(w, 1, 2);
    f_i32(w, 3, 1);
    f_str(w, 4, "ts");
    f_i32(w, 6, 9);
    f_struct(w, 10);
    f_struct(w, 8);
    w_field(w, 1, 2); /* isAdjustedToUTC = false */
    f_struct(w, 2);
    f_struct(w, 1);
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_end(w);
    w_begin(w); /* legacy: INT64 TIMESTAMP_MILLIS, no logicalType */
    f_i32(w, 1, 2);
    f_str(w, 4, "legacy");
    f_i32(w, 6, 9);
    w_end(w);
    /* 3: num_rows */
    f_i64(w, 3, 7);
    /* 5: key_value_metadata */
    w_field(w, 5, 9);
    w_list(w, 12, 1);
    w_begin(w);
    f_str(w, 1, "k");
    f_str(w, 2, "v");
    w_end(w);
    f_str(w, 6, "synthetic");
    /* unknown fields of every other type */
    w_field(w, 99, 7); /* double */
    for (int i = 0; i < 8; i++)
        w_byte(w, 0x40);
    w_field(w, 100, 11); /* map<binary, list<bool>> */
    w_varint(w, 2);
    w_byte(w, 8 << 4 | 9);
    w_str(w, "k1");
    w_list(w, 1, 3);
    w_byte(w, 1);
    w_byte(w, 0);
    w_byte(w, 2);
    w_str(w, "k2");
    w_list(w, 2, 0);
    w_field(w, 101, 11); /* empty map */
    w_varint(w, 0);
    w_field(w, 102, 10); /* set<i16> of 20 (long list header) */
    w_list(w, 4, 20);
    for (int i = 0; i < 20; i++)
        w_zz(w, -i * 1000);
    w_field(w, 103, 3);
    w_byte(w, 0xff);
    w_field(w, 104, 4);
    w_zz(w, -300);
    w_field(w, 105, 1); /* bare bool fields */
    w_field(w, 106, 2);
    f_struct(w, 107); /* nested struct with a list of structs */
    w_field(w, 1, 9);
    w_list(w, 12, 2);
    w_begin(w);
    w_field(w, 1, 1);
    w_end(w);
    w_begin(w);
    w_end(w);
    w_end(w);
    w_byte(w, 0); /* FileMetaData stop */
}

static void test_synthetic_footer(void **state)
{
    fx *f = *state;
    tw w;
    build_synthetic(&w, 3);
    silt_parquet_meta *m = NULL;
    if (silt_parquet_parse_footer(w.b, w.n, &m))
        fail_msg("%s", silt_error_last());
    assert_int_equal(m->version, 2);
    assert_int_equal(m->num_rows, 7);
    assert_string_equal(m->created_by, "synthetic");
    assert_int_equal(m->num_row_groups, 1);
    assert_int_equal(m->num_columns, 3);
    const silt_parquet_column *a = &m->columns[0], *ts = &m->columns[1], *lg = &m->columns[2];
    assert_string_equal(a->path, "a");
    assert_int_equal(a->physical_type, SILT_PQ_INT32);
    assert_int_equal(a->repetition, SILT_PQ_REQUIRED);
    assert_int_equal(a->converted_type, SILT_PQ_CT_INT_16);
    assert_int_equal(a->logical_type, SILT_PQ_LT_INTEGER);
    assert_int_equal(a->int_bit_width, 16);
    assert_true(a->int_signed);
    assert_int_equal(a->encodings, E(PLAIN) | E(RLE));
    assert_string_equal(ts->path, "g.ts");
    assert_string_equal(ts->name, "ts");
    assert_string_equal(ts->top_name, "g");
    assert_false(ts->top_level);
    assert_int_equal(ts->logical_type, SILT_PQ_LT_TIMESTAMP);
    assert_int_equal(ts->time_unit, SILT_PQ_MILLIS);
    assert_false(ts->utc);
    assert_int_equal(ts->encodings, E(PLAIN) | E(RLE) | E(RLE_DICTIONARY));
    assert_string_equal(lg->path, "legacy");
    assert_int_equal(lg->repetition, -1);
    assert_int_equal(lg->logical_type, SILT_PQ_LT_NONE);
    assert_int_equal(lg->converted_type, SILT_PQ_CT_TIMESTAMP_MILLIS);
    assert_int_equal(lg->encodings, E(DELTA_BINARY_PACKED));
    silt_parquet_meta_free(m);

    /* every proper prefix fails cleanly */
    for (size_t k = 0; k < w.n; k++) {
        assert_int_equal(silt_parquet_parse_footer(w.b, k, &m), SILT_ECORRUPT);
        assert_null(m);
    }

    /* as a file: PAR1 <footer> <len> PAR1 */
    uint8_t file[9000];
    memcpy(file, "PAR1", 4);
    memcpy(file + 4, w.b, w.n);
    put_le32((char *)file + 4 + w.n, (uint32_t)w.n);
    memcpy(file + 8 + w.n, "PAR1", 4);
    assert_int_equal(tu_write_file(f->path, file, w.n + 12), 0);
    const char *lcol[] = {"legacy"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, lcol, 1), 0); /* UTC by definition */
    const char *acol[] = {"a"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, acol, 1), SILT_EINVAL);
    char msg[8192];
    snprintf(msg, sizeof msg, "%s: column 'a' is not a timestamp column", f->path);
    assert_string_equal(silt_error_last(), msg);
    const char *gcol[] = {"g"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, gcol, 1), SILT_EINVAL);
    const char *tscol[] = {"ts"};
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, tscol, 1), SILT_ENOTFOUND);
    assert_int_equal(silt_parquet_set_timestamps_utc(f->path, NULL, 0), 1);
    m = read_meta(f->path);
    assert_true(silt_parquet_meta_column(m, "g.ts")->utc);
    assert_int_equal(m->footer_pos, 4);
    assert_int_equal(m->footer_len, w.n);
    silt_parquet_meta_free(m);
    size_t n;
    char *now = tu_read_file(f->path, &n);
    size_t first;
    assert_int_equal(count_diff((const char *)file, w.n + 12, now, n, &first), 1);
    assert_int_equal((uint8_t)now[first], ((uint8_t)file[first] & 0xf0) | 1);
    free(now);
}

static void test_corrupt_structures(void **state)
{
    (void)state;
    tw w;
    silt_parquet_meta *m = NULL;

    build_synthetic(&w, 4); /* root claims one child too many */
    assert_int_equal(silt_parquet_parse_footer(w.b, w.n, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: schema tree needs more than its 5 elements");

    build_synthetic(&w, 2); /* one element left over */
    assert_int_equal(silt_parquet_parse_footer(w.b, w.n, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: schema has 5 elements, the tree uses 4");

    /* struct nesting deeper than the limit */
    memset(&w, 0, sizeof w);
    w_byte(&w, 0xfc); /* field 15, struct */
    for (int i = 0; i < 200; i++)
        w_byte(&w, 0x1c);
    assert_int_equal(silt_parquet_parse_footer(w.b, w.n, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: nesting too deep at byte 65");

    /* list nesting: list<list<list<...>>> */
    memset(&w, 0, sizeof w);
    w_byte(&w, 0xf9); /* field 15, list */
    for (int i = 0; i < 200; i++)
        w_byte(&w, 0x19); /* one element of type list */
    assert_int_equal(silt_parquet_parse_footer(w.b, w.n, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: nesting too deep at byte 66");

    /* a list claiming more elements than there are bytes */
    static const uint8_t biglist[] = {0x29, 0xfc, 0xff, 0xff, 0xff, 0x0f, 0x00};
    assert_int_equal(silt_parquet_parse_footer(biglist, sizeof biglist, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: list longer than the footer at byte 6");

    /* a string longer than the input */
    static const uint8_t bigstr[] = {0x68, 0x80, 0x80, 0x04, 'x'};
    assert_int_equal(silt_parquet_parse_footer(bigstr, sizeof bigstr, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: string longer than the footer at byte 4");

    /* an 11-byte varint */
    static const uint8_t longvar[] = {0x36, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    assert_int_equal(silt_parquet_parse_footer(longvar, sizeof longvar, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: varint overflow at byte 11");

    /* known field with the wrong wire type */
    static const uint8_t wrongtype[] = {0x18, 0x00, 0x00};
    assert_int_equal(silt_parquet_parse_footer(wrongtype, sizeof wrongtype, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: field FileMetaData.version has wrong type 8 at byte 1");

    /* empty struct: no schema */
    static const uint8_t empty[] = {0x00};
    assert_int_equal(silt_parquet_parse_footer(empty, sizeof empty, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: no schema");
    assert_int_equal(silt_parquet_parse_footer(NULL, 0, &m), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "corrupt footer: unexpected end at byte 0");
    assert_null(m);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(silt_parquet_type_name(SILT_PQ_FIXED_LEN_BYTE_ARRAY), "FIXED_LEN_BYTE_ARRAY");
    assert_string_equal(silt_parquet_type_name(8), "?");
    assert_string_equal(silt_parquet_converted_name(SILT_PQ_CT_UINT_64), "UINT_64");
    assert_string_equal(silt_parquet_converted_name(-1), "NONE");
    assert_string_equal(silt_parquet_logical_name(SILT_PQ_LT_TIMESTAMP), "TIMESTAMP");
    assert_string_equal(silt_parquet_logical_name(9), "?");
    assert_string_equal(silt_parquet_unit_name(SILT_PQ_NANOS), "NANOS");
    assert_string_equal(silt_parquet_encoding_name(SILT_PQ_ENC_DELTA_BINARY_PACKED), "DELTA_BINARY_PACKED");
    assert_string_equal(silt_parquet_encoding_name(1), "?");
    assert_string_equal(silt_parquet_repetition_name(SILT_PQ_REPEATED), "REPEATED");
    silt_parquet_meta_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slice_read_and_patch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_brief_query_named_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_patch_errors_leave_file_unchanged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timestamp_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
        cmocka_unit_test_setup_teardown(test_synthetic_footer, setup, teardown),
        cmocka_unit_test(test_corrupt_structures),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
