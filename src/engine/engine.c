/* engine.c — DuckDB lifecycle, statement execution, small query helpers and
 * the confinement of queries written by users (engine.h).
 *
 * Invariants:
 *  - one database + one connection per silt_engine; the connection is used
 *    by one thread at a time;
 *  - confinement fails closed: the engine counts as confined from the first
 *    setting silt_engine_confine applies, so a half-confined engine still
 *    refuses user statements other than one query;
 *  - what a user statement may be is decided by DuckDB (its statement split,
 *    its prepared statement type, its refusal to open a file); the text of
 *    the statement is only looked at to name a refused statement. */
#include "engine/avro.h"
#include "engine/duckdb_shim.h"
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
    bool confined;
    char **allowed; /* files lazy views read (silt_engine_allow_file), owned */
    size_t nallowed, capallowed;
    char *hint_write, *hint_other, *hint_files; /* owned; NULL = no advice */
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
    silt_engine_note_error_type((int)t);
    int code = (t == DUCKDB_ERROR_IO || t == DUCKDB_ERROR_OUT_OF_MEMORY) ? SILT_EIO : SILT_EINVAL;
    if (context)
        return silt_err(code, "%s: %.*s", context, (int)n, msg);
    return silt_err(code, "%.*s", (int)n, msg);
}

int silt_engine_open(silt_engine **out, const silt_engine_opts *opts)
{
    *out = NULL;
    /* libduckdb is mapped here, by the first engine, not at start-up */
    int rc = silt_duckdb_load();
    if (rc)
        return rc;
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
    if (!rc)
        rc = silt_avro_register(e);
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
    for (size_t i = 0; i < e->nallowed; i++)
        free(e->allowed[i]);
    free(e->allowed);
    free(e->hint_write);
    free(e->hint_other);
    free(e->hint_files);
    free(e);
}

int silt_engine_exec(silt_engine *e, const char *sql)
{
    duckdb_result res;
    if (duckdb_query(e->conn, sql, &res) == DuckDBError) {
        int rc = silt_engine_error(e, &res, NULL);
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
        int rc = silt_engine_error(e, &res, NULL);
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
        int rc = silt_engine_error(e, &res, NULL);
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

/* ---- confinement ------------------------------------------------------------ */

/* DuckDB's prefix of the messages of its PERMISSION errors; prepare and
 * extract errors come as text only. */
static const char PERMISSION_PREFIX[] = "Permission Error: ";

/* silt_read_avro's refusal (avro_read.c) as DuckDB reports a bind error. */
static const char AVRO_REFUSAL[] = "Binder Error: " SILT_AVRO_REFUSAL;

static bool is_permission_msg(const char *msg)
{
    return strncmp(msg, PERMISSION_PREFIX, sizeof PERMISSION_PREFIX - 1) == 0 ||
           strncmp(msg, AVRO_REFUSAL, sizeof AVRO_REFUSAL - 1) == 0;
}

/* "<context>: reading files is not allowed: <msg> (<hint>)" */
static int files_refused(silt_engine *e, const char *context, const char *msg)
{
    if (strncmp(msg, PERMISSION_PREFIX, sizeof PERMISSION_PREFIX - 1) == 0)
        msg += sizeof PERMISSION_PREFIX - 1;
    else if (strncmp(msg, AVRO_REFUSAL, sizeof AVRO_REFUSAL - 1) == 0)
        msg += sizeof "Binder Error: " - 1;
    int n = (int)strcspn(msg, "\n");
    const char *h = e->hint_files;
    return silt_err(SILT_EINVAL, "%s%sreading files is not allowed: %.*s%s%s%s", context ? context : "",
                    context ? ": " : "", n, msg, h ? " (" : "", h ? h : "", h ? ")" : "");
}

int silt_engine_error(silt_engine *e, duckdb_result *res, const char *context)
{
    const char *msg = duckdb_result_error(res);
    if (e && e->confined && msg && (duckdb_result_error_type(res) == DUCKDB_ERROR_PERMISSION || is_permission_msg(msg)))
        return files_refused(e, context, msg);
    return silt_engine_result_error(res, context);
}

int silt_engine_allow_file(silt_engine *e, const char *path)
{
    if (e->confined)
        return silt_err(SILT_EINTERNAL, "engine: file '%s' registered after the engine was confined", path);
    if (e->nallowed == e->capallowed) {
        size_t nc = e->capallowed ? 2 * e->capallowed : 16;
        char **na = realloc(e->allowed, nc * sizeof *na);
        if (!na)
            return silt_err(SILT_ENOMEM, "out of memory");
        e->allowed = na;
        e->capallowed = nc;
    }
    e->allowed[e->nallowed] = strdup(path);
    if (!e->allowed[e->nallowed])
        return silt_err(SILT_ENOMEM, "out of memory");
    e->nallowed++;
    return 0;
}

bool silt_engine_is_confined(const silt_engine *e) { return e->confined; }

bool silt_engine_may_read(silt_engine *e, const char *path)
{
    for (size_t i = 0; e->confined && i < e->nallowed; i++)
        if (strcmp(e->allowed[i], path) == 0)
            return true;
    return !e->confined;
}

/* Appends the SQL list literal ['a', 'b', …] of a[0..na) and b[0..nb). */
static int put_path_list(silt_buf *sql, const char *const *a, size_t na, const char *const *b, size_t nb)
{
    int rc = silt_buf_putc(sql, '[');
    for (size_t i = 0; rc == 0 && i < na + nb; i++) {
        char *q = silt_sql_str(i < na ? a[i] : b[i - na]);
        rc = q ? silt_buf_printf(sql, "%s%s", i ? ", " : "", q) : SILT_ENOMEM;
        free(q);
    }
    return rc ? rc : silt_buf_putc(sql, ']');
}

static int dup_hint(char **dst, const char *src)
{
    *dst = src ? strdup(src) : NULL;
    return src && !*dst ? silt_err(SILT_ENOMEM, "out of memory") : 0;
}

int silt_engine_confine(silt_engine *e, const silt_confine_opts *o)
{
    static const silt_confine_opts none = {0};
    if (e->confined)
        return silt_err(SILT_EINTERNAL, "engine: already confined");
    if (!o)
        o = &none;
    int rc = 0;
    for (size_t i = 0; !rc && i < o->n_files; i++)
        rc = silt_engine_allow_file(e, o->files[i]); /* one list: DuckDB's and silt_engine_may_read's */
    e->confined = true; /* fail closed, see the invariants */
    if (!rc)
        rc = dup_hint(&e->hint_write, o->hint_write);
    if (!rc)
        rc = dup_hint(&e->hint_other, o->hint_other);
    if (!rc)
        rc = dup_hint(&e->hint_files, o->hint_files);
    silt_buf sql = SILT_BUF_INIT;
    /* allowed_paths and allowed_directories can only be set while external
     * access is still on; the lock comes last */
    if (!rc && e->nallowed > 0) {
        rc = silt_buf_puts(&sql, "SET allowed_paths = ");
        if (!rc)
            rc = put_path_list(&sql, (const char *const *)e->allowed, e->nallowed, NULL, 0);
        if (!rc)
            rc = silt_buf_puts(&sql, "; ");
    }
    if (!rc && o->n_dirs > 0) {
        rc = silt_buf_puts(&sql, "SET allowed_directories = ");
        if (!rc)
            rc = put_path_list(&sql, o->dirs, o->n_dirs, NULL, 0);
        if (!rc)
            rc = silt_buf_puts(&sql, "; ");
    }
    if (!rc)
        rc = silt_buf_puts(&sql, "SET autoload_known_extensions = false; "
                                 "SET autoinstall_known_extensions = false; "
                                 "SET allow_community_extensions = false; "
                                 "SET enable_external_access = false; "
                                 "SET lock_configuration = true");
    if (rc == SILT_ENOMEM)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc && (rc = silt_engine_exec(e, sql.data)) < 0)
        rc = silt_err_context(rc, "engine: cannot confine the engine");
    silt_buf_free(&sql);
    return rc;
}

/* ---- user statements ------------------------------------------------------------ */

/* Skips white space and comments. */
static const char *skip_space(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
            p++;
        if (p[0] == '-' && p[1] == '-') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else {
            return p;
        }
    }
}

/* The word (letters) at p after white space and comments, upper-cased into
 * buf ("" when there is none); returns the position after it. */
static const char *next_word(const char *p, char *buf, size_t cap)
{
    p = skip_space(p);
    size_t n = 0;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) {
        if (n + 1 < cap)
            buf[n++] = (char)(*p >= 'a' ? *p - 'a' + 'A' : *p);
        p++;
    }
    buf[n] = '\0';
    return p;
}

/* The statement after "EXPLAIN [ANALYZE]" at the start of sql. */
static const char *explained(const char *sql)
{
    char w[16];
    const char *inner = next_word(sql, w, sizeof w); /* EXPLAIN */
    const char *after = next_word(inner, w, sizeof w);
    return strcmp(w, "ANALYZE") == 0 || strcmp(w, "ANALYSE") == 0 ? after : inner;
}

/* The statement's leading keyword(s) as the user wrote them ("FORCE
 * INSTALL"), to name a refused statement; never used to decide anything. */
static void leading_keyword(const char *sql, char *buf, size_t cap)
{
    const char *p = next_word(sql, buf, cap);
    if (strcmp(buf, "FORCE") == 0 && cap > 7) {
        char w[24];
        next_word(p, w, sizeof w);
        if (*w)
            snprintf(buf + 5, cap - 5, " %s", w);
    }
}

static bool word_in(const char *w, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(w, *list) == 0)
            return true;
    return false;
}

/* Name of a refused statement of type t: its type where the type has one
 * keyword, else the keyword the user wrote. */
static const char *statement_name(duckdb_statement_type t, const char *kw)
{
    switch (t) {
    case DUCKDB_STATEMENT_TYPE_INSERT: return "INSERT";
    case DUCKDB_STATEMENT_TYPE_UPDATE: return "UPDATE";
    case DUCKDB_STATEMENT_TYPE_DELETE: return "DELETE";
    case DUCKDB_STATEMENT_TYPE_PREPARE: return "PREPARE";
    case DUCKDB_STATEMENT_TYPE_EXECUTE: return "EXECUTE";
    case DUCKDB_STATEMENT_TYPE_CREATE:
    case DUCKDB_STATEMENT_TYPE_CREATE_FUNC: return "CREATE";
    case DUCKDB_STATEMENT_TYPE_ALTER: return "ALTER";
    case DUCKDB_STATEMENT_TYPE_COPY: return "COPY";
    case DUCKDB_STATEMENT_TYPE_DROP: return "DROP";
    case DUCKDB_STATEMENT_TYPE_EXPORT: return "EXPORT";
    case DUCKDB_STATEMENT_TYPE_PRAGMA: return "PRAGMA";
    case DUCKDB_STATEMENT_TYPE_ATTACH: return "ATTACH";
    case DUCKDB_STATEMENT_TYPE_DETACH: return "DETACH";
    case DUCKDB_STATEMENT_TYPE_EXPLAIN: return "EXPLAIN";
    case DUCKDB_STATEMENT_TYPE_LOAD: return *kw ? kw : "INSTALL/LOAD";
    case DUCKDB_STATEMENT_TYPE_SET:
    case DUCKDB_STATEMENT_TYPE_VARIABLE_SET: return *kw ? kw : "SET";
    case DUCKDB_STATEMENT_TYPE_TRANSACTION: return *kw ? kw : "BEGIN/COMMIT";
    default: return *kw ? kw : "this statement";
    }
}

/* "<context>: <NAME> is not allowed in a query (<hint>)" */
static int statement_refused(silt_engine *e, const char *context, const char *name, bool write)
{
    const char *h = write ? e->hint_write : e->hint_other;
    return silt_err(SILT_EINVAL, "%s: %s is not allowed in a query%s%s%s", context, name, h ? " (" : "",
                    h ? h : "", h ? ")" : "");
}

/* DuckDB refused to split or prepare `sql` with message m. On a confined
 * engine a refused file of a statement that is not a query anyway names the
 * statement; otherwise DuckDB's message (first line) with the context. */
static int prepare_failed(silt_engine *e, const char *sql, const char *context, const char *m, bool rules)
{
    static const char *const WRITES[] = {"COPY", "EXPORT", NULL};
    static const char *const OTHERS[] = {"IMPORT", "ATTACH", "INSTALL", "FORCE INSTALL", "LOAD", NULL};
    if (e->confined && is_permission_msg(m)) {
        char kw[32];
        leading_keyword(sql, kw, sizeof kw);
        if (strcmp(kw, "EXPLAIN") == 0)
            leading_keyword(explained(sql), kw, sizeof kw);
        if (rules && word_in(kw, WRITES))
            return statement_refused(e, context, kw, true);
        if (rules && word_in(kw, OTHERS))
            return statement_refused(e, context, kw, false);
        return files_refused(e, context, m);
    }
    return silt_err(SILT_EINVAL, "%s: %.*s", context, (int)strcspn(m, "\n"), m);
}

/* 1 when `sql` is exactly one statement that prepares as a SELECT. */
static bool is_one_query(silt_engine *e, const char *sql)
{
    duckdb_extracted_statements ex = NULL;
    idx_t n = duckdb_extract_statements(e->conn, sql, &ex);
    duckdb_prepared_statement p = NULL;
    bool ok = n == 1 && duckdb_prepare_extracted_statement(e->conn, ex, 0, &p) == DuckDBSuccess &&
              duckdb_prepared_statement_type(p) == DUCKDB_STATEMENT_TYPE_SELECT;
    duckdb_destroy_prepare(&p);
    duckdb_destroy_extracted(&ex);
    return ok;
}

/* The rules of a confined engine for a prepared user statement of type t. */
static int check_type(silt_engine *e, const char *sql, const char *context, int flags,
                      duckdb_statement_type t)
{
    if (t == DUCKDB_STATEMENT_TYPE_SELECT)
        return 0;
    char kw[32];
    leading_keyword(sql, kw, sizeof kw);
    if (t == DUCKDB_STATEMENT_TYPE_EXPLAIN && (flags & SILT_PREP_EXPLAIN)) {
        /* EXPLAIN [ANALYZE] runs (ANALYZE) or plans its statement: it must be
         * one query. The words are skipped only to find that statement, which
         * DuckDB then checks; any other form is refused. */
        if (is_one_query(e, explained(sql)))
            return 0;
        const char *h = e->hint_other;
        return silt_err(SILT_EINVAL, "%s: EXPLAIN is only allowed as EXPLAIN [ANALYZE] SELECT …%s%s%s",
                        context, h ? " (" : "", h ? h : "", h ? ")" : "");
    }
    return statement_refused(e, context, statement_name(t, kw),
                             t == DUCKDB_STATEMENT_TYPE_COPY || t == DUCKDB_STATEMENT_TYPE_EXPORT);
}

int silt_engine_prepare(silt_engine *e, const char *sql, const char *context, int flags,
                        duckdb_statement_type expect, duckdb_prepared_statement *prep)
{
    *prep = NULL;
    if (!context)
        context = "sql";
    bool rules = (flags & SILT_PREP_USER) && e->confined;
    duckdb_extracted_statements ex = NULL;
    idx_t n = duckdb_extract_statements(e->conn, sql, &ex);
    int rc = 0;
    if (n == 0) {
        const char *m = ex ? duckdb_extract_statements_error(ex) : NULL;
        rc = m && *m ? prepare_failed(e, sql, context, m, rules)
                     : silt_err(SILT_EINVAL, "%s: no statement", context);
    } else if (n > 1) {
        rc = silt_err(SILT_EINVAL, "%s: only one statement is allowed (got %llu)", context,
                      (unsigned long long)n);
    } else if (duckdb_prepare_extracted_statement(e->conn, ex, 0, prep) == DuckDBError) {
        /* never ask a failed prepared statement for its type: DuckDB aborts */
        const char *m = duckdb_prepare_error(*prep);
        rc = prepare_failed(e, sql, context, m ? m : "cannot prepare the statement", rules);
    } else {
        duckdb_statement_type t = duckdb_prepared_statement_type(*prep);
        if (expect != DUCKDB_STATEMENT_TYPE_INVALID && t != expect)
            rc = silt_err(SILT_EINTERNAL, "%s: the query is not of the kind silt wrapped it as", context);
        else if (rules)
            rc = check_type(e, sql, context, flags, t);
    }
    if (rc) {
        duckdb_destroy_prepare(prep);
        *prep = NULL;
    }
    duckdb_destroy_extracted(&ex);
    return rc;
}

int silt_engine_check_query(silt_engine *e, const char *sql, const char *context)
{
    duckdb_prepared_statement p = NULL;
    int rc = silt_engine_prepare(e, sql, context, SILT_PREP_USER, DUCKDB_STATEMENT_TYPE_INVALID, &p);
    duckdb_destroy_prepare(&p);
    return rc;
}

int silt_engine_create_from_query(silt_engine *e, const char *name, bool table, const char *sql,
                                  const char *context)
{
    int rc = silt_engine_check_query(e, sql, context);
    if (rc)
        return rc;
    char *qn = silt_sql_ident(name);
    silt_buf b = SILT_BUF_INIT;
    rc = qn ? silt_buf_printf(&b, "CREATE OR REPLACE TEMP %s %s AS %s\n", table ? "TABLE" : "VIEW", qn, sql)
            : SILT_ENOMEM;
    free(qn);
    if (rc == SILT_ENOMEM)
        rc = silt_err(SILT_ENOMEM, "%s: out of memory", context ? context : "sql");
    duckdb_prepared_statement p = NULL;
    if (!rc)
        rc = silt_engine_prepare(e, b.data, context, 0, DUCKDB_STATEMENT_TYPE_CREATE, &p);
    silt_buf_free(&b);
    if (!rc) {
        duckdb_result res;
        if (duckdb_execute_prepared(p, &res) == DuckDBError)
            rc = silt_engine_error(e, &res, context ? context : "sql");
        duckdb_destroy_result(&res);
    }
    duckdb_destroy_prepare(&p);
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
