/* test_merge.c — unit tests for src/engine/merge: the five ODF merge
 * strategies over several rounds (state fed back), with exact rows, ops,
 * order, column types, every error message, and the "nothing left behind on
 * error" rule. Rows are dumped as "op|event_time|col…" lines in rowid order. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/merge.h"
#include "odf/odf_types.h"
#include "util/buf.h"
#include "util/error.h"

static silt_engine *E;

static int setup(void **st)
{
    (void)st;
    return silt_engine_open(&E, NULL);
}

static int teardown(void **st)
{
    (void)st;
    silt_engine_free(E);
    E = NULL;
    return 0;
}

static void ex(const char *sql)
{
    int rc = silt_engine_exec(E, sql);
    if (rc)
        fail_msg("%s: %s", sql, silt_error_last());
}

static int dump_row(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    (void)names;
    silt_buf *b = ctx;
    for (size_t i = 0; i < ncols; i++) {
        if (i)
            silt_buf_putc(b, '|');
        silt_buf_puts(b, values[i] ? values[i] : "NULL");
    }
    silt_buf_putc(b, '\n');
    return 0;
}

/* All columns as text, one line per row, in the given order (default rowid). */
static char *dump(const char *table, const char *order)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT COLUMNS(*)::VARCHAR FROM %s ORDER BY %s", table, order ? order : "rowid");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_engine_query_rows(E, sql, dump_row, &b);
    if (rc)
        fail_msg("%s: %s", sql, silt_error_last());
    /* Terminates the buffer even when no row was written (silt_buf_detach
     * of a never-written buffer returns unterminated memory). */
    if (silt_buf_append(&b, "", 0))
        fail_msg("out of memory");
    return silt_buf_detach(&b);
}

static void assert_table(const char *table, const char *order, const char *expected)
{
    char *got = dump(table, order);
    assert_string_equal(got, expected);
    free(got);
}

static void assert_types(const char *table, const char *expected)
{
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE %s)", table);
    char *got = NULL;
    assert_int_equal(silt_engine_query_text(E, &got, sql), 0);
    assert_string_equal(got, expected);
    free(got);
}

static uint64_t count_q(const char *sql)
{
    uint64_t n = 0;
    int rc = silt_engine_query_u64(E, &n, sql);
    if (rc)
        fail_msg("%s: %s", sql, silt_error_last());
    return n;
}

/* Runs a merge that must succeed and checks `out` (in rowid order). */
static void merge_ok(const silt_merge_spec *s, const char *prev, const char *state, const char *expected)
{
    uint64_t n = 12345;
    int rc = silt_merge(E, s, "input", prev, "out", state, &n);
    if (rc)
        fail_msg("merge failed: %s", silt_error_last());
    assert_table("out", NULL, expected);
    size_t lines = 0;
    for (const char *p = expected; *p; p++)
        lines += *p == '\n';
    assert_int_equal(n, lines);
    assert_int_equal(count_q("SELECT count(*) FROM duckdb_tables() WHERE starts_with(table_name, '__silt_merge')"), 0);
}

/* Runs a merge that must fail with SILT_EINVAL and exactly `msg`, leaving no
 * tables behind. */
static void merge_err(const silt_merge_spec *s, const char *prev, const char *msg)
{
    ex("DROP TABLE IF EXISTS out; DROP TABLE IF EXISTS err_state");
    uint64_t n = 7;
    int rc = silt_merge(E, s, "input", prev, "out", "err_state", &n);
    assert_int_equal(rc, SILT_EINVAL);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(n, 0);
    assert_int_equal(count_q("SELECT count(*) FROM duckdb_tables() WHERE starts_with(table_name, '__silt_merge') "
                             "OR table_name IN ('out', 'err_state')"),
                     0);
}

static void input(const char *cols, const char *values)
{
    char sql[4096];
    snprintf(sql, sizeof sql, "CREATE OR REPLACE TEMP TABLE input AS SELECT * FROM (VALUES %s) v(%s)", values, cols);
    ex(sql);
}

/* --------------------------------------------------------------- Append */

static void test_append(void **st)
{
    (void)st;
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Append};
    /* Event time in the middle: it moves to the front, right after op. */
    input("city, event_time, population",
          "('b', DATE '2020-01-02', 2), ('a', DATE '2020-01-01', 1), ('b', DATE '2020-01-02', 2)");
    merge_ok(&s, NULL, NULL,
             "0|2020-01-02|b|2\n"
             "0|2020-01-01|a|1\n"
             "0|2020-01-02|b|2\n");
    assert_types("out", "op UTINYINT, event_time DATE, city VARCHAR, population INTEGER");
    /* Second round: still everything, input order, no state involved. */
    input("city, event_time, population", "('c', DATE '2019-01-01', NULL), ('a', DATE '2020-01-01', 1)");
    merge_ok(&s, NULL, NULL,
             "0|2019-01-01|c|NULL\n"
             "0|2020-01-01|a|1\n");
    /* Empty input. */
    ex("DELETE FROM input");
    merge_ok(&s, NULL, NULL, "");
    /* Custom vocabulary. */
    silt_merge_spec v = {.strategy = ODF_MergeStrategy_Append, .event_time_column = "ts", .op_column = "operation"};
    input("ts, x", "(1, 'p')");
    merge_ok(&v, NULL, NULL, "0|1|p\n");
    assert_types("out", "operation UTINYINT, ts INTEGER, x VARCHAR");
}

/* --------------------------------------------------------------- Ledger */

static void test_ledger_spec_example(void **st)
{
    (void)st;
    /* The spec's example: primary key (year, country, city), event time = year. */
    static const char *const pk[] = {"year", "country", "city"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Ledger, .primary_key = pk, .npk = 3, .event_time_column = "year"};
    input("year, country, city, population", "(2019, 'CA', 'Vancouver', 2581000), (2019, 'US', 'Seattle', 3433000)");
    merge_ok(&s, NULL, "s1",
             "0|2019|CA|Vancouver|2581000\n"
             "0|2019|US|Seattle|3433000\n");
    assert_types("s1", "year INTEGER, country VARCHAR, city VARCHAR");
    assert_table("s1", "ALL", "2019|CA|Vancouver\n2019|US|Seattle\n");

    input("year, country, city, population",
          "(2019, 'CA', 'Vancouver', 2581000), (2019, 'US', 'Seattle', 3433000), (2020, 'CA', 'Vancouver', 2606000)");
    merge_ok(&s, "s1", "s2", "0|2020|CA|Vancouver|2606000\n");
    assert_table("s2", "ALL", "2019|CA|Vancouver\n2019|US|Seattle\n2020|CA|Vancouver\n");

    /* Same export again: nothing new. A changed value of a seen key is
     * ignored (ledger rows are immutable). */
    input("year, country, city, population",
          "(2019, 'CA', 'Vancouver', 1), (2019, 'US', 'Seattle', 3433000), (2020, 'CA', 'Vancouver', 2606000)");
    merge_ok(&s, "s2", "s3", "");
    assert_table("s3", "ALL", "2019|CA|Vancouver\n2019|US|Seattle\n2020|CA|Vancouver\n");
}

static void test_ledger_order_and_duplicates(void **st)
{
    (void)st;
    static const char *const pk[] = {"id"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Ledger, .primary_key = pk, .npk = 1};
    /* Ordered by event time; ties keep input order; identical duplicates
     * collapse into their first occurrence; NULL event time sorts first. */
    input("id, event_time, v",
          "(1, TIMESTAMP '2021-01-01 00:00:00', 'x'), (2, TIMESTAMP '2020-01-01 00:00:00', 'y'), "
          "(3, TIMESTAMP '2021-01-01 00:00:00', 'z'), (2, TIMESTAMP '2020-01-01 00:00:00', 'y'), "
          "(4, TIMESTAMP '2020-01-01 00:00:00', NULL), (5, NULL, 'n'), (4, TIMESTAMP '2020-01-01 00:00:00', NULL)");
    merge_ok(&s, NULL, "l1",
             "0|NULL|5|n\n"
             "0|2020-01-01 00:00:00|2|y\n"
             "0|2020-01-01 00:00:00|4|NULL\n"
             "0|2021-01-01 00:00:00|1|x\n"
             "0|2021-01-01 00:00:00|3|z\n");
    assert_table("l1", "ALL", "1\n2\n3\n4\n5\n");
    /* Round 2: only unseen keys; earlier event time still sorts first. */
    input("id, event_time, v",
          "(6, TIMESTAMP '2022-01-01 00:00:00', 'a'), (1, TIMESTAMP '2021-01-01 00:00:00', 'x'), "
          "(7, TIMESTAMP '2019-01-01 00:00:00', 'b')");
    merge_ok(&s, "l1", "l2",
             "0|2019-01-01 00:00:00|7|b\n"
             "0|2022-01-01 00:00:00|6|a\n");
    assert_table("l2", "ALL", "1\n2\n3\n4\n5\n6\n7\n");

    /* Errors. */
    static const char *const pk2[] = {"country", "city"};
    silt_merge_spec s2 = {.strategy = ODF_MergeStrategy_Ledger, .primary_key = pk2, .npk = 2};
    input("event_time, country, city, population",
          "(2019, 'US', 'Seattle', 1), (2019, 'CA', 'Vancouver', 2), (2019, 'US', 'Seattle', 1), "
          "(2020, 'CA', 'Vancouver', 2)");
    merge_err(&s2, NULL, "duplicate primary key (country='CA', city='Vancouver') with different values");
    input("event_time, country, city, population",
          "(2019, 'US', 'Seattle', 1), (2019, 'CA', 'Vancouver', 2), (2019, 'CA', NULL, 3), (2019, NULL, NULL, 3)");
    merge_err(&s2, NULL, "NULL primary key column 'city' in row 3");
    merge_err(&s2, "l2", "NULL primary key column 'city' in row 3");
}

/* ------------------------------------------------------------- Snapshot */

static void test_snapshot_spec_example(void **st)
{
    (void)st;
    static const char *const pk[] = {"country", "city"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 2};
    /* Round 1 (event time e1 from the source metadata): all appends, by key. */
    input("event_time, country, city, population",
          "(DATE '2020-01-01', 'US', 'Seattle', 3433000), (DATE '2020-01-01', 'CA', 'Vancouver', 2581000)");
    merge_ok(&s, NULL, "s1",
             "0|2020-01-01|CA|Vancouver|2581000\n"
             "0|2020-01-01|US|Seattle|3433000\n");
    assert_types("s1", "event_time DATE, country VARCHAR, city VARCHAR, population INTEGER");
    /* Round 2 (e2): Vancouver changed -> -C (old values, e1) then +C (new, e2);
     * Seattle unchanged although its event time moved: nothing. */
    input("event_time, country, city, population",
          "(DATE '2020-02-01', 'CA', 'Vancouver', 2606000), (DATE '2020-02-01', 'US', 'Seattle', 3433000)");
    merge_ok(&s, "s1", "s2",
             "2|2020-01-01|CA|Vancouver|2581000\n"
             "3|2020-02-01|CA|Vancouver|2606000\n");
    /* The state keeps Seattle's old event time (what the dataset holds). */
    assert_table("s2", "country, city", "2020-02-01|CA|Vancouver|2606000\n2020-01-01|US|Seattle|3433000\n");
    /* Round 3: no changes at all -> 0 rows. */
    input("event_time, country, city, population",
          "(DATE '2020-03-01', 'US', 'Seattle', 3433000), (DATE '2020-03-01', 'CA', 'Vancouver', 2606000)");
    merge_ok(&s, "s2", "s3", "");
    assert_table("s3", "country, city", "2020-02-01|CA|Vancouver|2606000\n2020-01-01|US|Seattle|3433000\n");
    /* Round 4: Seattle disappears (-R with its old values and event time),
     * Toronto appears (+A). Ordered by key. */
    input("event_time, country, city, population",
          "(DATE '2020-04-01', 'CA', 'Vancouver', 2606000), (DATE '2020-04-01', 'CA', 'Toronto', 6200000)");
    merge_ok(&s, "s3", "s4",
             "0|2020-04-01|CA|Toronto|6200000\n"
             "1|2020-01-01|US|Seattle|3433000\n");
    assert_table("s4", "country, city", "2020-04-01|CA|Toronto|6200000\n2020-02-01|CA|Vancouver|2606000\n");
    /* Round 5: empty snapshot retracts everything. */
    ex("DELETE FROM input");
    merge_ok(&s, "s4", "s5",
             "1|2020-04-01|CA|Toronto|6200000\n"
             "1|2020-02-01|CA|Vancouver|2606000\n");
    assert_int_equal(count_q("SELECT count(*) FROM s5"), 0);
}

static void test_snapshot_mix_and_nulls(void **st)
{
    (void)st;
    /* kamu's "mix of changes" scenario, with year as the event time. */
    static const char *const pk[] = {"city"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 1, .event_time_column = "year"};
    input("year, city, population", "(2020, 'vancouver', 1), (2020, 'seattle', 2), (2020, 'kyiv', 3)");
    merge_ok(&s, NULL, "m1", "0|2020|kyiv|3\n0|2020|seattle|2\n0|2020|vancouver|1\n");
    input("year, city, population", "(2021, 'seattle', 2), (2021, 'kyiv', 4), (2021, 'odessa', 5)");
    merge_ok(&s, "m1", "m2",
             "2|2020|kyiv|3\n"
             "3|2021|kyiv|4\n"
             "0|2021|odessa|5\n"
             "1|2020|vancouver|1\n");
    assert_table("m2", "city", "2021|kyiv|4\n2021|odessa|5\n2020|seattle|2\n");

    /* NULLs in compare columns are compared null-safely. */
    static const char *const pk2[] = {"id"};
    silt_merge_spec s2 = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk2, .npk = 1};
    input("event_time, id, a, b", "(1, 1, NULL, 'x'), (1, 2, 5, NULL), (1, 3, NULL, NULL), (1, 4, 7, 'y')");
    merge_ok(&s2, NULL, "n1", "0|1|1|NULL|x\n0|1|2|5|NULL\n0|1|3|NULL|NULL\n0|1|4|7|y\n");
    input("event_time, id, a, b", "(2, 1, NULL, 'x'), (2, 2, NULL, NULL), (2, 3, 6, NULL), (2, 4, 7, 'y')");
    merge_ok(&s2, "n1", "n2",
             "2|1|2|5|NULL\n"
             "3|2|2|NULL|NULL\n"
             "2|1|3|NULL|NULL\n"
             "3|2|3|6|NULL\n");
    input("event_time, id, a, b", "(3, 1, NULL, 'x'), (3, 2, NULL, NULL), (3, 3, 6, NULL), (3, 4, 7, 'y')");
    merge_ok(&s2, "n2", "n3", "");

    /* Multi-column key whose parts sort independently; NULL event time in
     * the new snapshot is passed through. */
    static const char *const pk3[] = {"k1", "k2"};
    silt_merge_spec s3 = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk3, .npk = 2};
    input("event_time, k1, k2, v", "(1, 2, 'a', 1), (1, 1, 'b', 1), (1, 1, 'a', 1)");
    merge_ok(&s3, NULL, "k1s", "0|1|1|a|1\n0|1|1|b|1\n0|1|2|a|1\n");
    input("event_time, k1, k2, v", "(NULL, 2, 'a', 2), (NULL, 1, 'b', 1), (NULL, 1, 'c', 1)");
    ex("CREATE OR REPLACE TEMP TABLE input AS SELECT CAST(event_time AS INTEGER) AS event_time, k1, k2, v FROM input");
    merge_ok(&s3, "k1s", "k2s",
             "1|1|1|a|1\n"
             "0|NULL|1|c|1\n"
             "2|1|2|a|1\n"
             "3|NULL|2|a|2\n");
    assert_table("k2s", "k1, k2", "1|1|b|1\nNULL|1|c|1\nNULL|2|a|2\n");
}

static void test_snapshot_compare_columns(void **st)
{
    (void)st;
    static const char *const pk[] = {"id"};
    static const char *const cmp[] = {"version"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 1,
                         .compare_columns = cmp, .ncompare = 1};
    input("event_time, id, version, v", "(1, 'a', 1, 'first'), (1, 'b', 1, 'x')");
    merge_ok(&s, NULL, "c1", "0|1|a|1|first\n0|1|b|1|x\n");
    /* v changed but version did not: not a change; the state keeps the old
     * row (old event time, old v). */
    input("event_time, id, version, v", "(2, 'a', 1, 'second'), (2, 'b', 1, 'x')");
    merge_ok(&s, "c1", "c2", "");
    assert_table("c2", "id", "1|a|1|first\n1|b|1|x\n");
    /* version changed: -C carries what the dataset holds ("first"). */
    input("event_time, id, version, v", "(3, 'a', 2, 'third'), (3, 'b', 1, 'y')");
    merge_ok(&s, "c2", "c3", "2|1|a|1|first\n3|3|a|2|third\n");
    assert_table("c3", "id", "3|a|2|third\n1|b|1|x\n");

    /* Event time as an explicit compare column: a different event time is a
     * change, a NULL one is not. */
    static const char *const cmp2[] = {"event_time", "v"};
    silt_merge_spec s2 = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 1,
                          .compare_columns = cmp2, .ncompare = 2};
    input("event_time, id, v", "(1, 'a', 'x'), (1, 'b', 'y')");
    merge_ok(&s2, NULL, "e1", "0|1|a|x\n0|1|b|y\n");
    input("event_time, id, v", "(2, 'a', 'x'), (NULL, 'b', 'y')");
    merge_ok(&s2, "e1", "e2", "2|1|a|x\n3|2|a|x\n");
    assert_table("e2", "id", "2|a|x\n1|b|y\n");
    /* Only key and event time columns: default compare set is empty, so only
     * appearance/disappearance matters. */
    static const char *const pk3[] = {"id", "v"};
    silt_merge_spec s3 = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk3, .npk = 2};
    input("event_time, id, v", "(5, 'a', 'x'), (5, 'c', 'z')");
    merge_ok(&s3, "e2", "e3", "1|1|b|y\n0|5|c|z\n");
    assert_table("e3", "id", "2|a|x\n5|c|z\n");

    input("event_time, id, v", "(1, 'a', 'x')");
    static const char *const bad[] = {"nope"};
    silt_merge_spec s4 = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 1,
                          .compare_columns = bad, .ncompare = 1};
    merge_err(&s4, NULL, "merge: compare column 'nope' not found in input 'input'");
}

static void test_snapshot_errors(void **st)
{
    (void)st;
    static const char *const pk[] = {"country", "city"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 2};
    /* Identical duplicates collapse. */
    input("event_time, country, city, population",
          "(1, 'CA', 'Vancouver', 2), (1, 'CA', 'Vancouver', 2), (1, 'US', 'Seattle', NULL), (1, 'US', 'Seattle', NULL)");
    merge_ok(&s, NULL, "d1", "0|1|CA|Vancouver|2\n0|1|US|Seattle|NULL\n");
    input("event_time, country, city, population",
          "(1, 'CA', 'Vancouver', 2), (1, 'US', 'Seattle', 1), (1, 'US', 'Seattle', NULL)");
    merge_err(&s, "d1", "duplicate primary key (country='US', city='Seattle') with different values");
    /* Differing only in event time is still a conflicting duplicate. */
    input("event_time, country, city, population", "(1, 'CA', 'Vancouver', 2), (2, 'CA', 'Vancouver', 2)");
    merge_err(&s, "d1", "duplicate primary key (country='CA', city='Vancouver') with different values");
    input("event_time, country, city, population", "(1, NULL, 'Vancouver', 2)");
    merge_err(&s, "d1", "NULL primary key column 'country' in row 1");
    /* State lacking a key column. */
    ex("CREATE OR REPLACE TEMP TABLE badstate AS SELECT 1 AS event_time, 'CA' AS country");
    input("event_time, country, city, population", "(1, 'CA', 'Vancouver', 2)");
    merge_err(&s, "badstate", "merge: previous state table 'badstate' has no primary key column 'city'");
}

/* ------------------------------------------------------ ChangelogStream */

static void test_changelog(void **st)
{
    (void)st;
    static const char *const pk[] = {"city"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_ChangelogStream, .primary_key = pk, .npk = 1};
    /* Input order is kept even though it is not key order; rows of the same
     * key change several times within the batch. */
    input("op, event_time, city, population",
          "(0, 1, 'b', 10), (0, 1, 'a', 1), (2, 1, 'a', 1), (3, 2, 'a', 2), (1, 1, 'b', 10), (0, 3, 'b', 11), "
          "(0, 1, 'c', 5)");
    merge_ok(&s, NULL, "c1",
             "0|1|b|10\n"
             "0|1|a|1\n"
             "2|1|a|1\n"
             "3|2|a|2\n"
             "1|1|b|10\n"
             "0|3|b|11\n"
             "0|1|c|5\n");
    assert_types("out", "op UTINYINT, event_time INTEGER, city VARCHAR, population INTEGER");
    assert_types("c1", "event_time INTEGER, city VARCHAR, population INTEGER");
    assert_table("c1", "city", "2|a|2\n3|b|11\n1|c|5\n");
    /* Round 2 refers to the state: correct a, retract c, re-add c. */
    input("op, event_time, city, population",
          "(2, 2, 'a', 2), (3, 4, 'a', 3), (1, 1, 'c', 5), (0, 4, 'c', 6), (0, 4, 'd', NULL)");
    merge_ok(&s, "c1", "c2",
             "2|2|a|2\n"
             "3|4|a|3\n"
             "1|1|c|5\n"
             "0|4|c|6\n"
             "0|4|d|NULL\n");
    assert_table("c2", "city", "4|a|3\n3|b|11\n4|c|6\n4|d|NULL\n");
    /* Retraction carrying a NULL value matches null-safely. */
    input("op, event_time, city, population", "(1, 4, 'd', NULL)");
    merge_ok(&s, "c2", "c3", "1|4|d|NULL\n");
    assert_table("c3", "city", "4|a|3\n3|b|11\n4|c|6\n");
    ex("DELETE FROM input");
    merge_ok(&s, "c3", "c4", "");
    assert_table("c4", "city", "4|a|3\n3|b|11\n4|c|6\n");

    /* Errors, each naming the first offending row. */
    input("op, event_time, city, population", "(0, 1, 'x', 1), (7, 1, 'y', 1)");
    merge_err(&s, "c3", "invalid op 7 in row 2 (expected 0..3)");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (NULL, 1, 'y', 1)");
    merge_err(&s, "c3", "invalid op NULL in row 2 (expected 0..3)");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (0, 1, NULL, 1)");
    merge_err(&s, "c3", "NULL primary key column 'city' in row 2");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (3, 5, 'a', 4)");
    merge_err(&s, "c3", "+C in row 2 does not directly follow a -C of the same key (city='a')");
    input("op, event_time, city, population", "(2, 4, 'a', 3), (0, 1, 'x', 1), (3, 5, 'a', 4)");
    merge_err(&s, "c3", "-C in row 1 is not directly followed by a +C of the same key (city='a')");
    input("op, event_time, city, population", "(2, 4, 'a', 3), (3, 5, 'b', 4)");
    merge_err(&s, "c3", "-C in row 1 is not directly followed by a +C of the same key (city='a')");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (2, 4, 'a', 3)");
    merge_err(&s, "c3", "-C in row 2 is not directly followed by a +C of the same key (city='a')");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (1, 1, 'zz', 1)");
    merge_err(&s, "c3", "-R in row 2 for key (city='zz') that is not present");
    input("op, event_time, city, population", "(1, 4, 'c', 6), (1, 4, 'c', 6)");
    merge_err(&s, "c3", "-R in row 2 for key (city='c') that is not present");
    input("op, event_time, city, population", "(2, 4, 'a', 99), (3, 5, 'a', 4)");
    merge_err(&s, "c3", "-C in row 1 for key (city='a') does not carry the current values");
    /* only the event time differs: the message says the retraction must carry it exactly */
    input("op, event_time, city, population", "(1, 3, 'c', 6)");
    merge_err(&s, "c3", "-R in row 1 for key (city='c'): event_time 3 must equal the retracted record's event time "
                        "exactly (4)");
    input("op, event_time, city, population", "(1, 3, 'c', 7)");
    merge_err(&s, "c3", "-R in row 1 for key (city='c') does not carry the current values");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (2, 1, 'x', 2), (3, 1, 'x', 3)");
    merge_err(&s, "c3", "-C in row 2 for key (city='x') does not carry the current values");
    input("op, event_time, city, population", "(0, 9, 'a', 1)");
    merge_err(&s, "c3", "+A in row 1 for key (city='a') that is already present");
    input("op, event_time, city, population", "(0, 1, 'x', 1), (0, 1, 'x', 1)");
    merge_err(&s, "c3", "+A in row 2 for key (city='x') that is already present");
    input("op, event_time, city, population", "('+A', 1, 'x', 1)");
    merge_err(&s, "c3", "op column 'op' has type VARCHAR, expected an integer type");
    input("event_time, city, population", "(1, 'x', 1)");
    merge_err(&s, "c3", "merge: input 'input' has no op column 'op' (ChangelogStream strategy)");
}

static void test_changelog_rowid_gaps(void **st)
{
    (void)st;
    static const char *const pk[] = {"k"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_ChangelogStream, .primary_key = pk, .npk = 1};
    /* A deleted row leaves a rowid gap: -C/+C adjacency and row numbers
     * follow the remaining rows. */
    input("op, event_time, k, v", "(0, 1, 'a', 1), (0, 1, 'junk', 0), (2, 1, 'a', 1), (3, 2, 'a', 2)");
    ex("DELETE FROM input WHERE k = 'junk'");
    merge_ok(&s, NULL, "g1", "0|1|a|1\n2|1|a|1\n3|2|a|2\n");
    input("op, event_time, k, v", "(0, 1, 'b', 1), (0, 1, 'junk', 0), (0, 1, 'junk2', 0), (2, 2, 'a', 2), "
                                  "(0, 1, 'c', 1), (3, 2, 'a', 3)");
    ex("DELETE FROM input WHERE k LIKE 'junk%'");
    merge_err(&s, "g1", "-C in row 2 is not directly followed by a +C of the same key (k='a')");
    /* Row numbers in other messages count the remaining rows too. */
    input("op, event_time, k, v", "(0, 1, 'junk', 0), (9, 1, 'b', 1)");
    ex("DELETE FROM input WHERE k = 'junk'");
    merge_err(&s, "g1", "invalid op 9 in row 1 (expected 0..3)");
    static const char *const pk2[] = {"k"};
    silt_merge_spec l = {.strategy = ODF_MergeStrategy_Ledger, .primary_key = pk2, .npk = 1};
    input("event_time, k, v", "(1, 'junk', 0), (1, 'a', 1), (1, NULL, 2)");
    ex("DELETE FROM input WHERE k = 'junk'");
    merge_err(&l, NULL, "NULL primary key column 'k' in row 2");
}

/* --------------------------------------------------------- UpsertStream */

static void test_upsert(void **st)
{
    (void)st;
    static const char *const pk[] = {"city"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_UpsertStream, .primary_key = pk, .npk = 1, .event_time_column = "year"};
    /* History: vancouver 1, seattle 2, kyiv 3 -> 4, bakhmut 4 deleted. */
    input("op, year, city, population",
          "(0, 2020, 'vancouver', 1), (0, 2020, 'seattle', 2), (0, 2020, 'kyiv', 3), (0, 2020, 'bakhmut', 4)");
    merge_ok(&s, NULL, "u1",
             "0|2020|bakhmut|4\n"
             "0|2020|kyiv|3\n"
             "0|2020|seattle|2\n"
             "0|2020|vancouver|1\n");
    input("op, year, city, population", "(1, 2020, 'bakhmut', 4), (0, 2020, 'kyiv', 4)");
    merge_ok(&s, "u1", "u2",
             "1|2020|bakhmut|4\n"
             "2|2020|kyiv|3\n"
             "3|2020|kyiv|4\n");
    assert_table("u2", "city", "2020|kyiv|4\n2020|seattle|2\n2020|vancouver|1\n");
    /* kamu's scenario: append, no-op, correction, append after delete,
     * delete; ordered by key then op. */
    input("op, year, city, population",
          "(0, 2020, 'odessa', 5), (0, 2020, 'kyiv', 4), (0, 2021, 'vancouver', 2), (0, 2021, 'bakhmut', 1), "
          "(1, 2020, 'seattle', 2)");
    merge_ok(&s, "u2", "u3",
             "0|2021|bakhmut|1\n"
             "0|2020|odessa|5\n"
             "1|2020|seattle|2\n"
             "2|2020|vancouver|1\n"
             "3|2021|vancouver|2\n");
    assert_table("u3", "city", "2021|bakhmut|1\n2020|kyiv|4\n2020|odessa|5\n2021|vancouver|2\n");
    /* Last row per key wins; delete of an unknown key is dropped; an upsert
     * then delete of a new key produces nothing; a delete carries the old
     * values whatever the delete row says; same values at a later event time
     * are no change. */
    input("op, year, city, population",
          "(0, 2022, 'kyiv', 5), (0, 2022, 'kyiv', 6), (1, 2022, 'atlantis', 0), (0, 2022, 'lviv', 1), "
          "(1, 2022, 'lviv', 1), (1, 2099, 'odessa', NULL), (0, 2022, 'bakhmut', 1), (3, 2022, 'vancouver', 2)");
    merge_ok(&s, "u3", "u4",
             "2|2020|kyiv|4\n"
             "3|2022|kyiv|6\n"
             "1|2020|odessa|5\n");
    assert_table("u4", "city", "2021|bakhmut|1\n2022|kyiv|6\n2021|vancouver|2\n");
    /* A repeated batch: no changes. */
    merge_ok(&s, "u4", "u5", "");
    assert_table("u5", "city", "2021|bakhmut|1\n2022|kyiv|6\n2021|vancouver|2\n");
    /* Without an op column every row is an upsert; NULLs compare safely. */
    input("year, city, population", "(2023, 'kyiv', NULL), (2023, 'bakhmut', 1), (2023, 'new', NULL)");
    merge_ok(&s, "u5", "u6",
             "2|2022|kyiv|6\n"
             "3|2023|kyiv|NULL\n"
             "0|2023|new|NULL\n");
    input("year, city, population", "(2024, 'kyiv', NULL)");
    merge_ok(&s, "u6", "u7", "");
    assert_table("u7", "city", "2021|bakhmut|1\n2023|kyiv|NULL\n2023|new|NULL\n2021|vancouver|2\n");
    /* Errors. */
    input("op, year, city, population", "(0, 1, 'x', 1), (4, 1, 'y', 1)");
    merge_err(&s, "u7", "invalid op 4 in row 2 (expected 0..3)");
    input("op, year, city, population", "(0, 1, 'x', 1), (0, 1, NULL, 1)");
    merge_err(&s, "u7", "NULL primary key column 'city' in row 2");
}

/* ------------------------------------------- state through Parquet files */

static void test_state_parquet_roundtrip(void **st)
{
    (void)st;
    char *dir = tu_mkdtemp();
    char sql[1024];
    static const char *const pk[] = {"id"};
    silt_merge_spec s = {.strategy = ODF_MergeStrategy_Snapshot, .primary_key = pk, .npk = 1};
    ex("CREATE OR REPLACE TEMP TABLE input AS SELECT * FROM (VALUES "
       "(TIMESTAMP_MS '2020-01-01 00:00:00.123', 1::UBIGINT, 'a'::ENUM('a', 'b'), 1.5::DECIMAL(10, 2), [1, 2]), "
       "(TIMESTAMP_MS '2020-01-01 00:00:00.123', 2::UBIGINT, 'b'::ENUM('a', 'b'), NULL, NULL)) "
       "v(event_time, id, kind, amount, tags)");
    merge_ok(&s, NULL, "p1",
             "0|2020-01-01 00:00:00.123|1|a|1.50|[1, 2]\n"
             "0|2020-01-01 00:00:00.123|2|b|NULL|NULL\n");
    snprintf(sql, sizeof sql, "COPY p1 TO '%s/state1.parquet' (FORMAT parquet)", dir);
    ex(sql);
    snprintf(sql, sizeof sql, "CREATE TEMP TABLE p1r AS SELECT * FROM read_parquet('%s/state1.parquet')", dir);
    ex(sql);
    /* Parquet widened TIMESTAMP_MS and ENUM ... */
    assert_types("p1r", "event_time TIMESTAMP, id UBIGINT, kind VARCHAR, amount DECIMAL(10,2), tags INTEGER[]");
    ex("CREATE OR REPLACE TEMP TABLE input AS SELECT * FROM (VALUES "
       "(TIMESTAMP_MS '2020-02-01 00:00:00', 1::UBIGINT, 'a'::ENUM('a', 'b'), 1.5::DECIMAL(10, 2), [1, 2, 3]), "
       "(TIMESTAMP_MS '2020-02-01 00:00:00', 3::UBIGINT, 'a'::ENUM('a', 'b'), 2::DECIMAL(10, 2), [])) "
       "v(event_time, id, kind, amount, tags)");
    merge_ok(&s, "p1r", "p2",
             "2|2020-01-01 00:00:00.123|1|a|1.50|[1, 2]\n"
             "3|2020-02-01 00:00:00|1|a|1.50|[1, 2, 3]\n"
             "1|2020-01-01 00:00:00.123|2|b|NULL|NULL\n"
             "0|2020-02-01 00:00:00|3|a|2.00|[]\n");
    /* ... but out and the new state carry the input's types again. */
    assert_types("out", "op UTINYINT, event_time TIMESTAMP_MS, id UBIGINT, kind ENUM('a', 'b'), "
                        "amount DECIMAL(10,2), tags INTEGER[]");
    assert_types("p2", "event_time TIMESTAMP_MS, id UBIGINT, kind ENUM('a', 'b'), amount DECIMAL(10,2), tags INTEGER[]");
    /* Additive schema evolution: a column missing from the state reads NULL. */
    ex("CREATE OR REPLACE TEMP TABLE input AS SELECT * FROM (VALUES "
       "(TIMESTAMP_MS '2020-03-01 00:00:00', 1::UBIGINT, 'x')) v(event_time, id, note)");
    ex("CREATE OR REPLACE TEMP TABLE p3 AS SELECT event_time, id FROM p2 WHERE id = 1");
    merge_ok(&s, "p3", "p4", "2|2020-02-01 00:00:00|1|NULL\n3|2020-03-01 00:00:00|1|x\n");

    /* Replacing the state in place (out_state == prev_state) and an existing
     * out table. */
    merge_ok(&s, "p4", "p4", "");
    assert_table("p4", NULL, "2020-03-01 00:00:00|1|x\n");
    tu_rmrf(dir);
    free(dir);
}

/* --------------------------------------------------------- spec errors */

static void test_spec_errors(void **st)
{
    (void)st;
    static const char *const pk[] = {"id"};
    static const char *const pk_bad[] = {"nope"};
    static const char *const pk_op[] = {"op"};
    input("event_time, id, op", "(1, 1, 0)");
    silt_merge_spec s = {.strategy = 42, .primary_key = pk, .npk = 1};
    merge_err(&s, NULL, "merge: unknown merge strategy 42");
    s.strategy = ODF_MergeStrategy_Append;
    merge_err(&s, NULL, "merge: input column 'op' is reserved for the operation type (Append strategy)");
    s.strategy = ODF_MergeStrategy_Snapshot;
    merge_err(&s, NULL, "merge: input column 'op' is reserved for the operation type (Snapshot strategy)");
    s.strategy = ODF_MergeStrategy_UpsertStream;
    s.primary_key = pk_op;
    merge_err(&s, NULL, "merge: primary key column 'op' is the op column");
    s.primary_key = pk_bad;
    merge_err(&s, NULL, "merge: primary key column 'nope' not found in input 'input'");
    s.npk = 0;
    merge_err(&s, NULL, "merge: the UpsertStream strategy needs a primary key");
    s.npk = 1;
    s.primary_key = pk;
    s.event_time_column = "ts";
    merge_err(&s, NULL, "merge: event time column 'ts' not found in input 'input'");
    s.event_time_column = NULL;
    uint64_t n = 3;
    assert_int_equal(silt_merge(E, &s, "input", NULL, "out", NULL, &n), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "merge: the UpsertStream strategy needs an output state table");
    assert_int_equal(silt_merge(E, &s, "missing_table", NULL, "out", "x", &n), SILT_EINVAL);
    assert_true(strncmp(silt_error_last(), "merge: cannot read the input table: ", 36) == 0);
    /* An existing out table survives a failed merge. */
    ex("CREATE OR REPLACE TEMP TABLE out AS SELECT 42 AS keep");
    s.strategy = ODF_MergeStrategy_Ledger;
    assert_int_equal(silt_merge(E, &s, "input", NULL, "out", "x", &n), SILT_EINVAL);
    assert_table("out", NULL, "42\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_append, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ledger_spec_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ledger_order_and_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_spec_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_mix_and_nulls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_compare_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changelog, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changelog_rowid_gaps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upsert, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_parquet_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_errors, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
