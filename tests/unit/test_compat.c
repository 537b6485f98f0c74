/* test_compat.c — the SQL compatibility layer (engine/compat.h): the
 * pattern translators, the token rewrite rules and every silt_df_* /
 * silt_java_* function, run on a real engine. Expected values are the
 * examples of the original engines' documentation (cited per case):
 *  [DF]    apache/datafusion docs/source/user-guide/sql/scalar_functions.md
 *  [SPARK] Spark SQL built-in functions (sql/functions; docs/sql-ref-functions-builtin)
 *  [PAT]   apache/spark docs/sql-ref-datetime-pattern.md
 *  [CHRONO] docs.rs chrono::format::strftime
 * Spark's examples assume the session zone America/Los_Angeles where they
 * print local times; silt's engine runs in UTC, so those cases give the
 * UTC value of the same instant (noted next to them). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/compat.h"
#include "engine/engine.h"
#include "util/error.h"

static silt_engine *g_e;

static int setup(void **state)
{
    (void)state;
    if (silt_engine_open(&g_e, NULL) < 0 || silt_compat_register(g_e) < 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    silt_engine_free(g_e);
    return 0;
}

static char *rewrite(silt_dialect d, const char *sql)
{
    char *out = NULL;
    int rc = silt_compat_rewrite(d, sql, &out, NULL);
    if (rc < 0)
        fail_msg("rewrite '%s': %s", sql, silt_error_last());
    return out;
}

/* The first value of `sql` (dialect d) run on the engine, as text ("NULL"). */
static char *value(silt_dialect d, const char *sql)
{
    char *q = rewrite(d, sql);
    char *v = NULL;
    int rc = silt_engine_query_text(g_e, &v, q);
    if (rc < 0)
        fail_msg("'%s' -> '%s': %s", sql, q, silt_error_last());
    free(q);
    return v ? v : strdup("NULL");
}

#define DF SILT_DIALECT_DATAFUSION
#define SPARK SILT_DIALECT_SPARK

static void expect(silt_dialect d, const char *sql, const char *want)
{
    char *v = value(d, sql);
    if (strcmp(v, want) != 0)
        fail_msg("%s: got '%s', want '%s'", sql, v, want);
    free(v);
}

/* The query fails with a message starting with `prefix`. */
static void expect_error(silt_dialect d, const char *sql, const char *prefix)
{
    char *q = NULL;
    int rc = silt_compat_rewrite(d, sql, &q, NULL);
    char *v = NULL;
    if (rc == 0)
        rc = silt_engine_query_text(g_e, &v, q);
    free(q);
    free(v);
    assert_int_equal(rc, SILT_EINVAL);
    if (strncmp(silt_error_last(), prefix, strlen(prefix)) != 0)
        fail_msg("%s: error '%s', want '%s…'", sql, silt_error_last(), prefix);
}

static void expect_rewrite(silt_dialect d, const char *sql, const char *want)
{
    char *out = rewrite(d, sql);
    assert_string_equal(out, want);
    free(out);
}

/* ---- pattern translators ---------------------------------------------------- */

static void chrono_is(const char *in, const char *want)
{
    char *out = NULL;
    if (silt_compat_chrono_to_strftime(in, &out) < 0)
        fail_msg("chrono '%s': %s", in, silt_error_last());
    assert_string_equal(out, want);
    free(out);
}

static void java_is(const char *in, const char *want)
{
    char *out = NULL;
    if (silt_compat_java_to_strftime(in, &out) < 0)
        fail_msg("java '%s': %s", in, silt_error_last());
    assert_string_equal(out, want);
    free(out);
}

static void test_chrono_specifiers(void **state)
{
    (void)state;
    /* [CHRONO] every specifier of the table, one by one */
    const char *pairs[][2] = {
        {"%Y", "%Y"}, {"%y", "%y"}, {"%m", "%m"}, {"%b", "%b"}, {"%h", "%b"}, {"%B", "%B"},
        {"%d", "%d"}, {"%e", "%-d"}, {"%a", "%a"}, {"%A", "%A"}, {"%w", "%w"}, {"%U", "%U"},
        {"%W", "%W"}, {"%j", "%j"}, {"%D", "%m/%d/%y"}, {"%x", "%m/%d/%y"}, {"%F", "%Y-%m-%d"},
        {"%v", "%-d-%b-%Y"}, {"%H", "%H"}, {"%k", "%-H"}, {"%I", "%I"}, {"%l", "%-I"}, {"%P", "%p"},
        {"%p", "%p"}, {"%M", "%M"}, {"%S", "%S"}, {"%f", "%n"}, {"%.f", ".%n"}, {"%.3f", ".%g"},
        {"%.6f", ".%f"}, {"%.9f", ".%n"}, {"%3f", "%g"}, {"%6f", "%f"}, {"%9f", "%n"},
        {"%R", "%H:%M"}, {"%T", "%H:%M:%S"}, {"%X", "%H:%M:%S"}, {"%r", "%I:%M:%S %p"},
        {"%Z", "%Z"}, {"%z", "%z"}, {"%:z", "%z"}, {"%::z", "%z"}, {"%:::z", "%z"}, {"%#z", "%z"},
        {"%c", "%a %b %-d %H:%M:%S %Y"}, {"%+", "%Y-%m-%dT%H:%M:%S.%n%z"}, {"%t", "\t"},
        {"%n", "\n"}, {"%%", "%%"}, {"%-d", "%-d"}, {"%_m", "%-m"}, {"%0H", "%H"},
        {"at %H:%M on %d.%m.%Y", "at %H:%M on %d.%m.%Y"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        chrono_is(pairs[i][0], pairs[i][1]);
    const char *refused[][2] = {
        {"%C", "unsupported chrono specifier '%C' in '%C'"},
        {"%s", "unsupported chrono specifier '%s' in '%s'"},
        {"%q", "unsupported chrono specifier '%q' in '%q'"},
        {"%Y-%G", "unsupported chrono specifier '%G' in '%Y-%G'"},
        {"%", "unsupported chrono specifier '%' in '%'"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char *out = NULL;
        assert_int_equal(silt_compat_chrono_to_strftime(refused[i][0], &out), SILT_EINVAL);
        assert_string_equal(silt_error_last(), refused[i][1]);
        assert_null(out);
    }
}

static void test_java_pattern_letters(void **state)
{
    (void)state;
    /* [PAT] the letters of the pattern table and their widths */
    const char *pairs[][2] = {
        {"yyyy", "%Y"}, {"yy", "%y"}, {"y", "%Y"}, {"M", "%-m"}, {"MM", "%m"}, {"MMM", "%b"},
        {"MMMM", "%B"}, {"LL", "%m"}, {"d", "%-d"}, {"dd", "%d"}, {"D", "%-j"}, {"DDD", "%j"},
        {"E", "%a"}, {"EEE", "%a"}, {"EEEE", "%A"}, {"a", "%p"}, {"h", "%-I"}, {"hh", "%I"},
        {"H", "%-H"}, {"HH", "%H"}, {"m", "%-M"}, {"mm", "%M"}, {"s", "%-S"}, {"ss", "%S"},
        {"SSS", "%g"}, {"SSSSSS", "%f"}, {"SSSSSSSSS", "%n"}, {"XXX", "%z"}, {"x", "%z"},
        {"Z", "%z"}, {"z", "%Z"}, {"yyyy-MM-dd HH:mm:ss", "%Y-%m-%d %H:%M:%S"},
        {"yyyy-MM-dd'T'HH:mm", "%Y-%m-%dT%H:%M"}, {"''hh''", "'%I'"}, {"'at' H 'o''clock'", "at %-H o'clock"},
        {"100%", "100%%"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        java_is(pairs[i][0], pairs[i][1]);
    const char *refused[][2] = {
        {"G yyyy", "unsupported pattern letter 'G' (era) in 'G yyyy'"},
        {"QQ", "unsupported pattern letter 'QQ' (quarter) in 'QQ'"},
        {"q", "unsupported pattern letter 'q' (quarter) in 'q'"},
        {"F", "unsupported pattern letter 'F' (aligned week of month) in 'F'"},
        {"K", "unsupported pattern letter 'K' (hour of am-pm (0-11)) in 'K'"},
        {"k", "unsupported pattern letter 'k' (clock hour of day (1-24)) in 'k'"},
        {"VV", "unsupported pattern letter 'VV' (time-zone id) in 'VV'"},
        {"O", "unsupported pattern letter 'O' (localized zone offset) in 'O'"},
        {"w", "unsupported pattern letter 'w' (week of week-based year) in 'w'"},
        {"W", "unsupported pattern letter 'W' (week of month) in 'W'"},
        {"u", "unsupported pattern letter 'u' (day of week number) in 'u'"},
        {"e", "unsupported pattern letter 'e' (localized day of week) in 'e'"},
        {"YYYY", "unsupported pattern letter 'YYYY' (week-based year) in 'YYYY'"},
        {"MMMMM", "unsupported pattern letter 'MMMMM' (unsupported width) in 'MMMMM'"},
        {"SS", "unsupported pattern letter 'SS' (unsupported width) in 'SS'"},
        {"yyyy[-MM]", "unsupported optional section '[' in pattern 'yyyy[-MM]'"},
        {"'open", "unterminated quoted text in pattern ''open'"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char *out = NULL;
        assert_int_equal(silt_compat_java_to_strftime(refused[i][0], &out), SILT_EINVAL);
        assert_string_equal(silt_error_last(), refused[i][1]);
    }
}

/* ---- rewrite rules ----------------------------------------------------------- */

static void test_rewrite_rules(void **state)
{
    (void)state;
    /* backticks → double quotes (`` and " inside) */
    expect_rewrite(SPARK, "SELECT `a b`, `x``y`, `q\"` FROM t", "SELECT \"a b\", \"x`y\", \"q\"\"\" FROM t");
    /* reserved words as column names, and as keywords */
    expect_rewrite(DF, "SELECT offset, t.to, a AS window FROM t WHERE offset > 1 ORDER BY offset LIMIT 2 OFFSET 1",
                   "SELECT \"offset\", t.\"to\", a AS \"window\" FROM t WHERE \"offset\" > 1 ORDER BY \"offset\" LIMIT 2 OFFSET 1");
    expect_rewrite(DF, "SELECT a FROM t WHERE b SIMILAR TO 'x' OFFSET 3", "SELECT a FROM t WHERE b SIMILAR TO 'x' OFFSET 3");
    /* calls renamed, qualified names and look-alikes left */
    expect_rewrite(DF, "SELECT to_timestamp(s), TO_TIMESTAMP(s, '%Y', '%d'), x.to_timestamp(s), to_timestamps(s)",
                   "SELECT silt_df_to_timestamp(s), silt_df_to_timestamp_fmt(s, [silt_chrono_fmt( '%Y'), silt_chrono_fmt( '%d')]), x.to_timestamp(s), to_timestamps(s)");
    expect_rewrite(DF, "SELECT date_trunc('day', to_timestamp(x)), make_date(2023, 1, 31)",
                   "SELECT silt_df_date_trunc('day', silt_df_to_timestamp(x)), silt_df_make_date(2023, 1, 31)");
    expect_rewrite(DF, "SELECT arrow_cast(a + 1, 'Int64')", "SELECT CAST(a + 1 AS BIGINT)");
    expect_rewrite(SPARK, "SELECT unix_timestamp(), unix_timestamp(s), unix_timestamp(s, 'yyyy'), date_format(d, 'y')",
                   "SELECT silt_java_unix_timestamp_now(), silt_java_unix_timestamp(s), silt_java_unix_timestamp_fmt(s, silt_java_fmt( 'yyyy')), silt_java_date_format(d, silt_java_fmt( 'y'))");
    /* literals, quoted identifiers and comments never change */
    expect_rewrite(DF, "SELECT 'to_timestamp(x) offset', \"offset\", E'a\\'to(', $$ offset $$ -- to_timestamp(x)\n/* offset */",
                   "SELECT 'to_timestamp(x) offset', \"offset\", E'a\\'to(', $$ offset $$ -- to_timestamp(x)\n/* offset */");
    /* Spark literals: "…" is a string; backslash escapes re-spelled */
    expect_rewrite(SPARK, "SELECT \"it's\", 'a\\'b', 'plain'", "SELECT 'it''s', 'a''b', 'plain'");
    /* DuckDB: untouched */
    expect_rewrite(SILT_DIALECT_DUCKDB, "SELECT `x`, offset", "SELECT `x`, offset");
    /* errors */
    char *out = NULL;
    assert_int_equal(silt_compat_rewrite(DF, "SELECT 'open", &out, NULL), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "unterminated string literal at offset 7");
    assert_int_equal(silt_compat_rewrite(DF, "SELECT arrow_cast(x, 'Foo')", &out, NULL), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "arrow_cast: unsupported Arrow type 'Foo'");
    assert_int_equal(silt_compat_rewrite(DF, "SELECT arrow_cast(x, t)", &out, NULL), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "arrow_cast: the type must be one string literal (arrow_cast(value, 'Int64'))");
    assert_int_equal(silt_dialect_of("Spark"), SPARK);
    assert_int_equal(silt_dialect_of("flink"), SILT_DIALECT_FLINK);
    assert_int_equal(silt_dialect_of(NULL), SILT_DIALECT_DUCKDB);
    assert_true(silt_compat_is_foreign("datafusion"));
    assert_false(silt_compat_is_foreign("duckdb"));
}

/* silt_compat_check: the rewrite's errors for a manifest's queries, named
 * by step; DuckDB's queries are not looked at */
static void test_check(void **state)
{
    (void)state;
    odf_SqlQueryStep s0 = {"parsed", "SELECT to_timestamp(s, '%Y') AS t FROM input"};
    odf_SqlQueryStep s1 = {NULL, "SELECT arrow_cast(t, 'Int128') AS n FROM parsed"};
    void *steps[] = {&s0, &s1};
    odf_TransformSql t = {.engine = "datafusion", .queries = {steps, 2, true}};
    assert_int_equal(silt_compat_check(&t, "transform query"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "transform query: arrow_cast: unsupported Arrow type 'Int128'");
    s0.query = "SELECT to_timestamp(s, '%Y-%q') AS t FROM input";
    assert_int_equal(silt_compat_check(&t, "transform query"), SILT_EINVAL);
    assert_string_equal(silt_error_last(),
                        "transform query 'parsed': to_timestamp: unsupported chrono specifier '%q' in '%Y-%q'");
    t.engine = "duckdb";
    assert_int_equal(silt_compat_check(&t, "transform query"), 0);
    odf_TransformSql q = {.engine = "spark", .query = "SELECT to_date(s, 'yyyy-MM-dd') FROM `input`"};
    assert_int_equal(silt_compat_check(&q, "preprocess query"), 0);
    q.query = "SELECT from_unixtime(n, 'yyyy G') FROM input";
    assert_int_equal(silt_compat_check(&q, "preprocess query"), SILT_EINVAL);
    assert_string_equal(silt_error_last(),
                        "preprocess query: from_unixtime: unsupported pattern letter 'G' (era) in 'yyyy G'");
}

/* ---- DataFusion functions ------------------------------------------------------ */

static void test_datafusion_functions(void **state)
{
    (void)state;
    /* [DF] to_timestamp: RFC 3339 with offset (nanoseconds: silt keeps microseconds) */
    expect(DF, "SELECT to_timestamp('2023-01-31T09:26:56.123456789-05:00')", "2023-01-31 14:26:56.123456");
    /* [DF] no offset = UTC ("or UTC if no session time zone is set") */
    expect(DF, "SELECT to_timestamp('2023-07-20T05:44:00')", "2023-07-20 05:44:00");
    /* [DF] formats tried in order; '%c' and '%+' do not match, the third does */
    /* (DuckDB's strptime over a list of formats rounds the 9-digit fraction
     * to microseconds: silt's documented precision limit) */
    expect(DF, "SELECT to_timestamp('03:59:00.123456789 05-17-2023', '%c', '%+', '%H:%M:%S%.f %m-%d-%Y')",
           "2023-05-17 03:59:00.123457");
    /* [DF] integers and doubles are seconds since the epoch */
    expect(DF, "SELECT to_timestamp(1599566400)", "2020-09-08 12:00:00");
    expect(DF, "SELECT to_timestamp(1.5)", "1970-01-01 00:00:01.5");
    /* [DF] to_timestamp_seconds / _millis / _micros examples */
    expect(DF, "SELECT to_timestamp_seconds('2023-01-31T09:26:56.123456789-05:00')", "2023-01-31 14:26:56");
    expect(DF, "SELECT to_timestamp_millis('2023-01-31T09:26:56.123456789-05:00')", "2023-01-31 14:26:56.123");
    expect(DF, "SELECT to_timestamp_micros('2023-01-31T09:26:56.123456789-05:00')", "2023-01-31 14:26:56.123456");
    expect(DF, "SELECT to_timestamp_millis('03:59:00.123456789 05-17-2023', '%c', '%+', '%H:%M:%S%.f %m-%d-%Y')",
           "2023-05-17 03:59:00.123");
    expect(DF, "SELECT to_timestamp_seconds('03:59:00.123456789 05-17-2023', '%c', '%+', '%H:%M:%S%.f %m-%d-%Y')",
           "2023-05-17 03:59:00");
    /* [DF] integers: milliseconds / microseconds / nanoseconds */
    expect(DF, "SELECT to_timestamp_millis(1599566400123)", "2020-09-08 12:00:00.123");
    expect(DF, "SELECT to_timestamp_micros(1599566400123456)", "2020-09-08 12:00:00.123456");
    expect(DF, "SELECT to_timestamp_nanos(1599566400123456000)", "2020-09-08 12:00:00.123456");
    /* [DF] to_date examples */
    expect(DF, "SELECT to_date('2023-01-31')", "2023-01-31");
    expect(DF, "SELECT to_date('2023/01/31', '%Y-%m-%d', '%Y/%m/%d')", "2023-01-31");
    /* [DF] date_trunc / date_part of a string timestamp */
    expect(DF, "SELECT date_trunc('month', '2020-09-08T12:00:00Z')", "2020-09-01 00:00:00");
    expect(DF, "SELECT date_trunc('hour', to_timestamp('2020-09-08T12:34:56Z'))", "2020-09-08 12:00:00");
    expect(DF, "SELECT date_part('year', '2020-09-08T12:00:00+00:00')", "2020");
    expect(DF, "SELECT datepart('month', to_timestamp('2020-09-08T12:00:00Z'))", "9");
    /* [DF] make_date(2023, 1, 31) and make_date('2023', '01', '31') */
    expect(DF, "SELECT make_date(2023, 1, 31)", "2023-01-31");
    expect(DF, "SELECT make_date('2023', '01', '31')", "2023-01-31");
    /* [DF] arrow_cast(-5, 'Int8'), arrow_cast('bar', 'LargeUtf8'), timestamps */
    expect(DF, "SELECT arrow_cast(-5, 'Int8')", "-5");
    expect(DF, "SELECT typeof(arrow_cast(-5, 'Int8'))", "TINYINT");
    expect(DF, "SELECT arrow_cast('bar', 'LargeUtf8')", "bar");
    expect(DF, "SELECT arrow_cast('2023-01-02T12:53:02', 'Timestamp(Microsecond, None)')", "2023-01-02 12:53:02");
    expect(DF, "SELECT typeof(arrow_cast(1.5, 'Decimal128(10, 2)'))", "DECIMAL(10,2)");
    /* bad input: an error as in DataFusion, never NULL */
    expect_error(DF, "SELECT to_timestamp('garbage')", "Conversion Error: invalid timestamp field format: \"garbage\"");
    expect_error(DF, "SELECT to_timestamp('x', '%Y-%m-%d')", "Invalid Input Error: Could not parse string \"x\" according to format specifier \"%Y-%m-%d\"");
    /* an unsupported specifier: refused by the rewrite when the pattern is a
     * literal, by silt_chrono_fmt at bind time when it is an expression */
    expect_error(DF, "SELECT to_timestamp('2020', '%C')", "to_timestamp: unsupported chrono specifier '%C' in '%C'");
    expect_error(DF, "SELECT to_timestamp('2020', '%Y', ('%' || 'C'))", "Invalid Input Error: unsupported chrono specifier '%C' in '%C'");
    expect_error(DF, "SELECT make_date(2023, 13, 1)", "Conversion Error: Date out of range: 2023-13-1");
    expect(DF, "SELECT to_timestamp(NULL)", "NULL");
}

/* ---- Spark functions ---------------------------------------------------------- */

static void test_spark_functions(void **state)
{
    (void)state;
    /* [SPARK] unix_timestamp('2016-04-08', 'yyyy-MM-dd') → 1460098800 in
     * America/Los_Angeles; the same local date in UTC is 1460073600 */
    expect(SPARK, "SELECT unix_timestamp('2016-04-08', 'yyyy-MM-dd')", "1460073600");
    expect(SPARK, "SELECT unix_timestamp('2016-04-08 07:00:00')", "1460098800");
    expect(SPARK, "SELECT unix_timestamp(to_timestamp('2016-04-08 07:00:00'))", "1460098800");
    /* [SPARK] to_date('2009-07-30 04:17:52') → 2009-07-30; to_date('2016-12-31', 'yyyy-MM-dd') */
    expect(SPARK, "SELECT to_date('2009-07-30 04:17:52')", "2009-07-30");
    expect(SPARK, "SELECT to_date('2016-12-31', 'yyyy-MM-dd')", "2016-12-31");
    /* [SPARK] from_unixtime(0, 'yyyy-MM-dd HH:mm:ss') → 1969-12-31 16:00:00 in LA = 1970-01-01 00:00:00 UTC */
    expect(SPARK, "SELECT from_unixtime(0, 'yyyy-MM-dd HH:mm:ss')", "1970-01-01 00:00:00");
    expect(SPARK, "SELECT from_unixtime(1460098800)", "2016-04-08 07:00:00");
    /* [SPARK] date_format('2016-04-08', 'y') → 2016 */
    expect(SPARK, "SELECT date_format('2016-04-08', 'y')", "2016");
    expect(SPARK, "SELECT date_format(to_timestamp('2016-04-08 07:05:09'), 'dd.MM.yyyy HH:mm:ss')", "08.04.2016 07:05:09");
    /* [SPARK] to_timestamp('2016-12-31 00:12:00'); to_timestamp('2016-12-31', 'yyyy-MM-dd') */
    expect(SPARK, "SELECT to_timestamp('2016-12-31 00:12:00')", "2016-12-31 00:12:00");
    expect(SPARK, "SELECT to_timestamp('2016-12-31', 'yyyy-MM-dd')", "2016-12-31 00:00:00");
    /* non-ANSI Spark: unparsable input is NULL, not an error */
    expect(SPARK, "SELECT to_date('garbage', 'yyyy-MM-dd')", "NULL");
    expect(SPARK, "SELECT to_date('garbage')", "NULL");
    expect(SPARK, "SELECT unix_timestamp('garbage')", "NULL");
    expect(SPARK, "SELECT to_timestamp('garbage')", "NULL");
    /* an invalid pattern is an error, as in Spark */
    expect_error(SPARK, "SELECT to_date('2016', 'G yyyy')", "to_date: unsupported pattern letter 'G' (era) in 'G yyyy'");
    expect_error(SPARK, "SELECT date_format(current_date, \"yyyy-QQ\")", "date_format: unsupported pattern letter 'QQ' (quarter) in 'yyyy-QQ'");
    expect_error(SPARK, "SELECT to_date('2016', concat('G ', 'yyyy'))", "Invalid Input Error: unsupported pattern letter 'G' (era) in 'G yyyy'");
    /* backticks and "…" strings end to end */
    expect(SPARK, "SELECT `a b` FROM (SELECT \"x\" AS `a b`)", "x");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chrono_specifiers),
        cmocka_unit_test(test_java_pattern_letters),
        cmocka_unit_test(test_rewrite_rules),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_datafusion_functions),
        cmocka_unit_test(test_spark_functions),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
