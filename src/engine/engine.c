/* engine.c — DuckDB lifecycle, statement execution and small query helpers.
 * Invariant: one database + one connection per silt_engine; the connection is
 * used by one thread at a time. */
#include "engine/engine_internal.h"
#include "util/buf.h"
#include "util/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct silt_engine {
    duckdb_database db;
    duckdb_connection conn;
};

duckdb_connection silt_engine_conn(silt_engine *e) { return e->conn; }

int silt_engine_result_error(duckdb_result *res, const char *context)
{
    const char *msg = duckdb_result_error(res);
    if (!msg)
        msg = "unknown engine error";
    /* DuckDB messages may span lines (hints, carets): keep the first line. */
    size_t n = strcspn(msg, "\n");
    duckdb_error_type t = duckdb_result_error_type(res);
    int code = (t == DUCKDB_ERROR_IO || t == DUCKDB_ERROR_OUT_OF_MEMORY) ? SILT_EIO : SILT_EINVAL;
    if (context)
        return silt_err(code, "%s: %.*s", context, (int)n, msg);
    return silt_err(code, "%.*s", (int)n, msg);
}

int silt_engine_open(silt_engine **out, const silt_engine_opts *opts)
{
    *out = NULL;
    silt_engine *e = calloc(1, sizeof *e);
    if (!e)
        return silt_err(SILT_ENOMEM, "out of memory");
    duckdb_config cfg;
    if (duckdb_create_config(&cfg) == DuckDBError) {
        free(e);
        return silt_err(SILT_EINTERNAL, "cannot create engine configuration");
    }
    const char *mem = opts && opts->memory_limit ? opts->memory_limit : getenv("SILT_MEMORY_LIMIT");
    if (!mem || !*mem)
        mem = "1536MB";
    int rc = 0;
    if (duckdb_set_config(cfg, "max_memory", mem) == DuckDBError)
        rc = silt_err(SILT_EINVAL, "invalid memory limit '%s'", mem);
    if (!rc && opts && opts->spill_dir && duckdb_set_config(cfg, "temp_directory", opts->spill_dir) == DuckDBError)
        rc = silt_err(SILT_EINVAL, "invalid spill directory '%s'", opts->spill_dir);
    if (!rc && opts && opts->threads > 0) {
        char t[16];
        snprintf(t, sizeof t, "%d", opts->threads);
        if (duckdb_set_config(cfg, "threads", t) == DuckDBError)
            rc = silt_err(SILT_EINVAL, "invalid thread count %d", opts->threads);
    }
    char *err = NULL;
    if (!rc && duckdb_open_ext(NULL, &e->db, cfg, &err) == DuckDBError) {
        rc = silt_err(SILT_EIO, "cannot start the engine: %s", err ? err : "unknown error");
        duckdb_free(err);
    }
    duckdb_destroy_config(&cfg);
    if (!rc && duckdb_connect(e->db, &e->conn) == DuckDBError) {
        duckdb_close(&e->db);
        rc = silt_err(SILT_EIO, "cannot connect to the engine");
    }
    if (rc) {
        free(e);
        return rc;
    }
    /* silt stores instants in UTC; make casts between TIMESTAMPTZ and
     * TIMESTAMP independent of the machine's zone */
    rc = silt_engine_exec(e, "SET TimeZone = 'UTC'");
    /* slices are patched in place after COPY (footer flags): never serve a
     * cached copy of a file this engine wrote */
    if (!rc)
        rc = silt_engine_exec(e, "SET enable_external_file_cache = false");
    if (rc) {
        silt_engine_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

void silt_engine_free(silt_engine *e)
{
    if (!e)
        return;
    duckdb_disconnect(&e->conn);
    duckdb_close(&e->db);
    free(e);
}

int silt_engine_exec(silt_engine *e, const char *sql)
{
    duckdb_result res;
    if (duckdb_query(e->conn, sql, &res) == DuckDBError) {
        int rc = silt_engine_result_error(&res, NULL);
        duckdb_destroy_result(&res);
        return rc;
    }
    duckdb_destroy_result(&res);
    return 0;
}

int silt_engine_execf(silt_engine *e, const char *fmt, ...)
{
    silt_buf b = SILT_BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    int rc = n < 0 ? silt_err(SILT_EINTERNAL, "format error") : silt_buf_reserve(&b, (size_t)n);
    if (!rc) {
        vsnprintf(b.data, (size_t)n + 1, fmt, ap2);
        b.len = (size_t)n;
        rc = silt_engine_exec(e, b.data);
    }
    va_end(ap2);
    silt_buf_free(&b);
    return rc;
}

int silt_engine_query_text(silt_engine *e, char **out, const char *sql)
{
    *out = NULL;
    duckdb_result res;
    if (duckdb_query(e->conn, sql, &res) == DuckDBError) {
        int rc = silt_engine_result_error(&res, NULL);
        duckdb_destroy_result(&res);
        return rc;
    }
    int rc = 0;
    if (duckdb_row_count(&res) == 0 || duckdb_column_count(&res) == 0) {
        rc = silt_err(SILT_ENOTFOUND, "query returned no rows");
    } else if (!duckdb_value_is_null(&res, 0, 0)) {
        char *v = duckdb_value_varchar(&res, 0, 0);
        if (!v) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
        } else {
            *out = strdup(v);
            duckdb_free(v);
            if (!*out)
                rc = silt_err(SILT_ENOMEM, "out of memory");
        }
    }
    duckdb_destroy_result(&res);
    return rc;
}

static int query_int(silt_engine *e, const char *sql, bool is_signed, uint64_t *u, int64_t *i)
{
    char *t = NULL;
    int rc = silt_engine_query_text(e, &t, sql);
    if (rc)
        return rc;
    if (!t)
        return silt_err(SILT_EINVAL, "query returned NULL where a number was expected");
    char *end;
    if (is_signed)
        *i = strtoll(t, &end, 10);
    else
        *u = strtoull(t, &end, 10);
    rc = (*end || end == t) ? silt_err(SILT_EINVAL, "query returned '%s', not a number", t) : 0;
    free(t);
    return rc;
}

int silt_engine_query_u64(silt_engine *e, uint64_t *out, const char *sql)
{
    return query_int(e, sql, false, out, NULL);
}

int silt_engine_query_i64(silt_engine *e, int64_t *out, const char *sql)
{
    return query_int(e, sql, true, NULL, out);
}

int silt_engine_query_rows(silt_engine *e, const char *sql, silt_engine_row_fn row, void *ctx)
{
    duckdb_result res;
    if (duckdb_query(e->conn, sql, &res) == DuckDBError) {
        int rc = silt_engine_result_error(&res, NULL);
        duckdb_destroy_result(&res);
        return rc;
    }
    size_t ncols = duckdb_column_count(&res);
    idx_t nrows = duckdb_row_count(&res);
    const char **names = calloc(ncols ? ncols : 1, sizeof *names);
    char **vals = calloc(ncols ? ncols : 1, sizeof *vals);
    int rc = 0;
    if (!names || !vals)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    for (size_t c = 0; !rc && c < ncols; c++)
        names[c] = duckdb_column_name(&res, c);
    for (idx_t r = 0; !rc && r < nrows; r++) {
        for (size_t c = 0; c < ncols; c++)
            vals[c] = duckdb_value_is_null(&res, c, r) ? NULL : duckdb_value_varchar(&res, c, r);
        rc = row(ctx, ncols, names, (const char *const *)vals);
        for (size_t c = 0; c < ncols; c++) {
            duckdb_free(vals[c]);
            vals[c] = NULL;
        }
    }
    free(names);
    free(vals);
    duckdb_destroy_result(&res);
    return rc;
}

static char *quote(const char *s, char q)
{
    size_t n = 2;
    for (const char *p = s; *p; p++)
        n += *p == q ? 2 : 1;
    char *o = malloc(n + 1);
    if (!o) {
        silt_err(SILT_ENOMEM, "out of memory");
        return NULL;
    }
    char *w = o;
    *w++ = q;
    for (const char *p = s; *p; p++) {
        if (*p == q)
            *w++ = q;
        *w++ = *p;
    }
    *w++ = q;
    *w = '\0';
    return o;
}

char *silt_sql_ident(const char *name) { return quote(name, '"'); }
char *silt_sql_str(const char *s) { return quote(s, '\''); }
