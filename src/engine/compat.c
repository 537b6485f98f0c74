/* compat.c — the functions of the compatibility layer in the engine (the
 * silt_df_* and silt_java_* macros over DuckDB built-ins), Arrow type names
 * for arrow_cast, and the hook that rewrites a manifest's queries
 * (compat.h).
 *
 * Invariants:
 *  - every name silt registers starts with silt_, so no DuckDB built-in is
 *    shadowed and a DuckDB query means what DuckDB says;
 *  - the macros dispatch on typeof(x), which DuckDB folds at bind time, so
 *    a branch that does not apply is never evaluated; every branch binds for
 *    every type (casts go through VARCHAR where a direct cast would not bind);
 *  - behaviour on bad input follows the original: DataFusion's parsers fail
 *    the query (a cast / strptime error), Spark's (non-ANSI) return NULL
 *    (try_cast / try_strptime); instants without an offset are UTC (the
 *    engine's TimeZone, engine.c).
 */
#include "engine/compat.h"
#include "engine/engine_internal.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int silt_compat_register_fmt(silt_engine *e);
int silt_compat_arrow_type(const char *arrow, char **out);

/* ---- Arrow type names (arrow-rs DataType display form) --------------------- */

static int arrow_timestamp(const char *t, char **out)
{
    static const struct { const char *unit, *type; } UNITS[] = {
        {"Second", "TIMESTAMP_S"}, {"Millisecond", "TIMESTAMP_MS"},
        {"Microsecond", "TIMESTAMP"}, {"Nanosecond", "TIMESTAMP_NS"},
    };
    for (size_t i = 0; i < sizeof UNITS / sizeof UNITS[0]; i++) {
        char none[64], utc[64], zero[64];
        snprintf(none, sizeof none, "Timestamp(%s,None)", UNITS[i].unit);
        snprintf(utc, sizeof utc, "Timestamp(%s,Some(\"UTC\"))", UNITS[i].unit);
        snprintf(zero, sizeof zero, "Timestamp(%s,Some(\"+00:00\"))", UNITS[i].unit);
        if (strcmp(t, none) == 0)
            *out = strdup(UNITS[i].type);
        else if (strcmp(t, utc) == 0 || strcmp(t, zero) == 0)
            *out = strdup("TIMESTAMPTZ");
        else
            continue;
        return *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    }
    return 1;
}

int silt_compat_arrow_type(const char *arrow, char **out)
{
    static const struct { const char *arrow, *duck; } PLAIN[] = {
        {"Boolean", "BOOLEAN"}, {"Int8", "TINYINT"}, {"Int16", "SMALLINT"}, {"Int32", "INTEGER"},
        {"Int64", "BIGINT"}, {"UInt8", "UTINYINT"}, {"UInt16", "USMALLINT"}, {"UInt32", "UINTEGER"},
        {"UInt64", "UBIGINT"}, {"Float32", "FLOAT"}, {"Float64", "DOUBLE"}, {"Utf8", "VARCHAR"},
        {"LargeUtf8", "VARCHAR"}, {"Utf8View", "VARCHAR"}, {"Binary", "BLOB"}, {"LargeBinary", "BLOB"},
        {"BinaryView", "BLOB"}, {"Date32", "DATE"}, {"Date64", "DATE"},
        {"Interval(MonthDayNano)", "INTERVAL"},
    };
    *out = NULL;
    char t[128];
    size_t n = 0;
    for (const char *p = arrow; *p && n + 1 < sizeof t; p++)
        if (*p != ' ')
            t[n++] = *p;
    t[n] = '\0';
    for (size_t i = 0; i < sizeof PLAIN / sizeof PLAIN[0]; i++)
        if (strcmp(t, PLAIN[i].arrow) == 0) {
            *out = strdup(PLAIN[i].duck);
            return *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
        }
    int rc = arrow_timestamp(t, out);
    if (rc <= 0)
        return rc;
    unsigned p = 0, s = 0;
    char end = 0;
    if (sscanf(t, "Decimal128(%u,%u%c", &p, &s, &end) == 3 && end == ')' && p >= 1 && p <= 38 && s <= p) {
        char d[32];
        snprintf(d, sizeof d, "DECIMAL(%u,%u)", p, s);
        *out = strdup(d);
        return *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    }
    return silt_err(SILT_EINVAL, "arrow_cast: unsupported Arrow type '%s'", arrow);
}

/* ---- the macros --------------------------------------------------------------- */

#define INTS "('TINYINT','SMALLINT','INTEGER','BIGINT','HUGEINT','UTINYINT','USMALLINT','UINTEGER','UBIGINT')"
#define VIA(x, T) "CAST(CAST(" x " AS VARCHAR) AS " T ")"

static const char MACROS[] =
    /* DataFusion: numbers are seconds / per_s units since the epoch; strings
     * RFC 3339, UTC without an offset; a bad string is an error */
    "CREATE OR REPLACE TEMP MACRO silt_df_ts(x, per_s) AS CASE"
    " WHEN typeof(x) = 'VARCHAR' THEN CAST(" VIA("x", "TIMESTAMPTZ") " AS TIMESTAMP)"
    " WHEN typeof(x) IN " INTS " THEN make_timestamp(CAST(" VIA("x", "HUGEINT") " * 1000000 // per_s AS BIGINT))"
    " WHEN typeof(x) IN ('FLOAT','DOUBLE') OR typeof(x) LIKE 'DECIMAL%' THEN"
    "  make_timestamp(CAST(trunc(" VIA("x", "DOUBLE") " * 1000000 / per_s) AS BIGINT))"
    " ELSE CAST(" VIA("x", "TIMESTAMPTZ") " AS TIMESTAMP) END;"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp(x) AS silt_df_ts(x, 1);"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_seconds(x) AS date_trunc('second', silt_df_ts(x, 1));"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_millis(x) AS date_trunc('millisecond', silt_df_ts(x, 1000));"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_micros(x) AS silt_df_ts(x, 1000000);"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_nanos(x) AS silt_df_ts(x, 1000000000);"
    /* strptime's %n gives nanoseconds: truncated (not rounded) to microseconds */
    "CREATE OR REPLACE TEMP MACRO silt_df_us(v) AS make_timestamp((epoch_ns(v) - ((epoch_ns(v) % 1000) + 1000) % 1000) // 1000);"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_fmt(x, f) AS silt_df_us(strptime(CAST(x AS VARCHAR), f));"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_seconds_fmt(x, f) AS date_trunc('second', silt_df_to_timestamp_fmt(x, f));"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_millis_fmt(x, f) AS date_trunc('millisecond', silt_df_to_timestamp_fmt(x, f));"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_micros_fmt(x, f) AS silt_df_to_timestamp_fmt(x, f);"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_timestamp_nanos_fmt(x, f) AS silt_df_to_timestamp_fmt(x, f);"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_date(x) AS CASE"
    " WHEN typeof(x) = 'VARCHAR' THEN " VIA("x", "DATE")
    " WHEN typeof(x) IN " INTS " THEN CAST('1970-01-01' AS DATE) + CAST(" VIA("x", "BIGINT") " AS INTEGER)"
    " ELSE CAST(silt_df_ts(x, 1) AS DATE) END;"
    "CREATE OR REPLACE TEMP MACRO silt_df_to_date_fmt(x, f) AS CAST(strptime(CAST(x AS VARCHAR), f) AS DATE);"
    "CREATE OR REPLACE TEMP MACRO silt_df_date_part(f, x) AS date_part(f, silt_df_ts(x, 1));"
    "CREATE OR REPLACE TEMP MACRO silt_df_date_trunc(f, x) AS CAST(date_trunc(f, silt_df_ts(x, 1)) AS TIMESTAMP);"
    "CREATE OR REPLACE TEMP MACRO silt_df_make_date(y, m, d) AS"
    " make_date(" VIA("y", "INTEGER") ", " VIA("m", "INTEGER") ", " VIA("d", "INTEGER") ");"
    /* Spark (non-ANSI): unparsable input is NULL; default pattern
     * yyyy-MM-dd HH:mm:ss; the session time zone is UTC */
    "CREATE OR REPLACE TEMP MACRO silt_java_ts(x) AS CASE"
    " WHEN typeof(x) IN " INTS " THEN make_timestamp(CAST(" VIA("x", "HUGEINT") " * 1000000 AS BIGINT))"
    " ELSE CAST(TRY_CAST(CAST(x AS VARCHAR) AS TIMESTAMPTZ) AS TIMESTAMP) END;"
    "CREATE OR REPLACE TEMP MACRO silt_java_to_timestamp(x) AS silt_java_ts(x);"
    "CREATE OR REPLACE TEMP MACRO silt_java_to_timestamp_fmt(x, f) AS CAST(try_strptime(CAST(x AS VARCHAR), f) AS TIMESTAMP);"
    "CREATE OR REPLACE TEMP MACRO silt_java_to_date(x) AS CAST(silt_java_ts(x) AS DATE);"
    "CREATE OR REPLACE TEMP MACRO silt_java_to_date_fmt(x, f) AS CAST(try_strptime(CAST(x AS VARCHAR), f) AS DATE);"
    "CREATE OR REPLACE TEMP MACRO silt_java_unix_timestamp_now() AS CAST(floor(epoch(current_timestamp)) AS BIGINT);"
    "CREATE OR REPLACE TEMP MACRO silt_java_unix_timestamp_fmt(x, f) AS"
    " CAST(floor(epoch(try_strptime(CAST(x AS VARCHAR), f))) AS BIGINT);"
    "CREATE OR REPLACE TEMP MACRO silt_java_unix_timestamp(x) AS CASE"
    " WHEN typeof(x) = 'VARCHAR' THEN silt_java_unix_timestamp_fmt(x, '%Y-%m-%d %H:%M:%S')"
    " ELSE CAST(floor(epoch(silt_java_ts(x))) AS BIGINT) END;"
    "CREATE OR REPLACE TEMP MACRO silt_java_from_unixtime_fmt(x, f) AS"
    " strftime(make_timestamp(CAST(" VIA("x", "HUGEINT") " * 1000000 AS BIGINT)), f);"
    "CREATE OR REPLACE TEMP MACRO silt_java_from_unixtime(x) AS silt_java_from_unixtime_fmt(x, '%Y-%m-%d %H:%M:%S');"
    "CREATE OR REPLACE TEMP MACRO silt_java_date_format(x, f) AS strftime(silt_java_ts(x), f);";

int silt_compat_register(silt_engine *e)
{
    uint64_t have = 0;
    int rc = silt_engine_query_u64(e, &have,
                                   "SELECT count(*) FROM duckdb_functions() WHERE function_name = 'silt_chrono_fmt'");
    if (!rc && have == 0)
        rc = silt_compat_register_fmt(e);
    if (!rc)
        rc = silt_engine_exec(e, MACROS);
    return rc < 0 ? silt_err_context(rc, "engine: cannot register the compatibility functions") : 0;
}

/* ---- the hook -------------------------------------------------------------------- */

/* Rewrites sql into *out (arena a); with a == NULL only checks it. */
static int rewrite_into(silt_arena *a, silt_dialect d, const char *sql, char **out, const char *context,
                        const char *alias)
{
    *out = NULL;
    if (!sql)
        return 0;
    char *r = NULL;
    int rc = silt_compat_rewrite(d, sql, &r, NULL);
    if (rc < 0)
        return alias ? silt_err_context(rc, "%s '%s'", context, alias) : silt_err_context(rc, "%s", context);
    if (!a) {
        free(r);
        return 0;
    }
    *out = silt_arena_strdup(a, r);
    free(r);
    return *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
}

int silt_compat_check(const odf_TransformSql *in, const char *context)
{
    silt_dialect d = silt_dialect_of(in ? in->engine : NULL);
    char *unused = NULL;
    if (d == SILT_DIALECT_DUCKDB)
        return 0;
    int rc = rewrite_into(NULL, d, in->query, &unused, context, NULL);
    for (size_t i = 0; !rc && i < in->queries.n; i++) {
        const odf_SqlQueryStep *s = in->queries.items[i];
        if (s)
            rc = rewrite_into(NULL, d, s->query, &unused, context, s->alias);
    }
    return rc;
}

int silt_compat_prepare(silt_engine *e, silt_arena *a, const odf_TransformSql *in,
                        const odf_TransformSql **out, const char *context)
{
    *out = in;
    silt_dialect d = silt_dialect_of(in ? in->engine : NULL);
    if (d == SILT_DIALECT_DUCKDB)
        return 0;
    odf_TransformSql *c = silt_arena_alloc(a, sizeof *c);
    void **steps = silt_arena_alloc(a, (in->queries.n + 1) * sizeof *steps);
    if (!c || !steps)
        return silt_err(SILT_ENOMEM, "out of memory");
    *c = *in;
    int rc = rewrite_into(a, d, in->query, &c->query, context, NULL);
    for (size_t i = 0; !rc && i < in->queries.n; i++) {
        const odf_SqlQueryStep *s = in->queries.items[i];
        odf_SqlQueryStep *n = silt_arena_alloc(a, sizeof *n);
        if (!n)
            return silt_err(SILT_ENOMEM, "out of memory");
        *n = *s;
        rc = rewrite_into(a, d, s->query, &n->query, context, s->alias);
        steps[i] = n;
    }
    c->queries.items = steps;
    if (!rc)
        rc = silt_compat_register(e);
    if (!rc)
        *out = c;
    return rc;
}
