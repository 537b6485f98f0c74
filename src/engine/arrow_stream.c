/* arrow_stream.c — a streaming DuckDB query encoded as Arrow IPC or CSV,
 * one data chunk per piece (arrow_stream.h).
 *
 * Invariants:
 *  - the statement is prepared and started (duckdb_pending_prepared_streaming
 *    + duckdb_execute_pending) in silt_rstream_open, so every error of the
 *    statement itself comes before the first byte; the Arrow schema (the
 *    C Data Interface schema from duckdb_to_arrow_schema) is checked by
 *    writing the Schema message there too;
 *  - chunks are fetched one at a time with duckdb_fetch_chunk, converted
 *    (duckdb_data_chunk_to_arrow, the result's own Arrow options: UTC time
 *    zone, 32-bit offsets, no string views) and released before the next;
 *  - CSV uses the same wrapper and field quoting as `silt sql --format csv`
 *    (query.c), so both print every value identically.
 */
#include "engine/arrow_stream.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/arrow_c.h"
#include "engine/arrow_ipc.h"
#include "engine/engine_internal.h"
#include "engine/render.h"
#include "util/error.h"

struct silt_rstream {
    silt_rstream_format fmt;
    const char *what;          /* prefix of error messages ("read-table", "sql") */
    duckdb_prepared_statement prep;
    duckdb_pending_result pending;
    duckdb_result res;
    bool have_res;
    duckdb_arrow_options aopts;
    struct ArrowSchema schema; /* release == NULL until made */
    silt_buf head;             /* Schema message / CSV header, handed out first */
    bool head_done, finished;
    size_t ncols;
    duckdb_logical_type *types; /* Arrow: the columns' types and names (kept for silt_rstream_arrow_schema) */
    const char **names;
    uint64_t rows;
    silt_render **render;      /* CSV: one renderer per column (render.h) */
    silt_buf cell;             /* CSV: scratch for one value */
};

int silt_query_view_columns(silt_engine *e, const char *view, silt_buf *names)
{
    char *qv = silt_sql_ident(view);
    silt_buf sql = SILT_BUF_INIT;
    int rc = qv ? silt_buf_printf(&sql, "SELECT * FROM %s", qv) : SILT_ENOMEM;
    free(qv);
    if (rc < 0) {
        silt_buf_free(&sql);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    duckdb_prepared_statement prep = NULL;
    rc = silt_engine_prepare(e, sql.data, "read-table", 0, DUCKDB_STATEMENT_TYPE_SELECT, &prep);
    silt_buf_free(&sql);
    size_t n = rc ? 0 : duckdb_prepared_statement_column_count(prep);
    for (size_t i = 0; !rc && i < n; i++) {
        const char *name = duckdb_prepared_statement_column_name(prep, i); /* caller owns it */
        rc = name ? silt_buf_append(names, name, strlen(name) + 1) : SILT_ENOMEM;
        duckdb_free((void *)name);
        if (rc)
            rc = silt_err(SILT_ENOMEM, "out of memory");
    }
    duckdb_destroy_prepare(&prep);
    return rc ? rc : (int)n;
}

static int duck_error(duckdb_error_data err, const char *phase, const char *what)
{
    int rc = 0;
    if (err && duckdb_error_data_has_error(err)) {
        const char *m = duckdb_error_data_message(err);
        size_t len = m ? strcspn(m, "\n") : 0;
        rc = silt_err(SILT_EUNSUPPORTED, "%s: %s: %.*s", phase, what, (int)len, m ? m : "?");
    }
    duckdb_destroy_error_data(&err);
    return rc;
}

/* The Arrow schema of the result and its Schema message. */
static int start_arrow(silt_rstream *s, int flags)
{
    s->aopts = duckdb_result_get_arrow_options(&s->res);
    if (!s->aopts)
        return silt_err(SILT_ENOMEM, "read-table: out of memory");
    duckdb_logical_type *types = s->types = calloc(s->ncols ? s->ncols : 1, sizeof *types);
    const char **names = s->names = calloc(s->ncols ? s->ncols : 1, sizeof *names);
    int rc = types && names ? 0 : silt_err(SILT_ENOMEM, "read-table: out of memory");
    for (size_t i = 0; !rc && i < s->ncols; i++) {
        types[i] = duckdb_column_logical_type(&s->res, i);
        names[i] = duckdb_column_name(&s->res, i);
    }
    if (!rc)
        rc = duck_error(duckdb_to_arrow_schema(s->aopts, types, names, s->ncols, &s->schema), s->what, "Arrow schema");
    if (!rc)
        rc = silt_arrow_ipc_schema(&s->head, &s->schema, flags, NULL, 0);
    return rc;
}

/* A CSV field as query.c writes it: quoted when it holds ',', '"', CR, LF
 * or NUL, or is empty; NULL is an empty field. */
static int put_csv(silt_buf *b, const char *p, size_t n, bool null)
{
    if (null)
        return 0;
    bool quote = n == 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n' || p[i] == '\0';
    if (!quote)
        return silt_buf_append(b, p, n);
    int rc = silt_buf_putc(b, '"');
    for (size_t i = 0; !rc && i < n; i++)
        rc = p[i] == '"' ? silt_buf_append(b, "\"\"", 2) : silt_buf_putc(b, p[i]);
    return rc ? rc : silt_buf_putc(b, '"');
}

static int start_csv(silt_rstream *s)
{
    s->render = calloc(s->ncols ? s->ncols : 1, sizeof *s->render);
    if (!s->render)
        return silt_err(SILT_ENOMEM, "read-table: out of memory");
    for (size_t i = 0; i < s->ncols; i++) {
        duckdb_logical_type t = duckdb_column_logical_type(&s->res, i);
        int rrc = t ? silt_render_new(&s->render[i], t) : silt_err(SILT_ENOMEM, "read-table: out of memory");
        duckdb_destroy_logical_type(&t);
        if (rrc < 0)
            return rrc;
    }
    int rc = 0;
    for (size_t i = 0; !rc && i < s->ncols; i++) {
        const char *name = duckdb_column_name(&s->res, i);
        if (i)
            rc = silt_buf_putc(&s->head, ',');
        if (!rc)
            rc = put_csv(&s->head, name, strlen(name), false);
    }
    if (!rc)
        rc = silt_buf_putc(&s->head, '\n');
    return rc ? silt_err(SILT_ENOMEM, "read-table: out of memory") : 0;
}

typedef struct time_ns {
    bool *is; /* per column */
    size_t n, row;
} time_ns;

static int describe_row(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    time_ns *t = ctx;
    for (size_t c = 0; c < ncols; c++)
        if (strcmp(names[c], "column_type") == 0 && t->row < t->n)
            t->is[t->row] = values[c] && strcmp(values[c], "TIME_NS") == 0;
    t->row++;
    return 0;
}

/* Which columns are TIME_NS: the C API reports them as INVALID, so the
 * column types of DESCRIBE tell, asked only when some type is INVALID. */
static int find_time_ns(silt_engine *e, duckdb_prepared_statement prep, const char *inner, time_ns *t)
{
    bool invalid = false;
    for (size_t c = 0; c < t->n && !invalid; c++)
        invalid = duckdb_prepared_statement_column_type(prep, c) == DUCKDB_TYPE_INVALID;
    if (!invalid)
        return 0;
    silt_buf d = SILT_BUF_INIT;
    int rc = silt_buf_printf(&d, "DESCRIBE %s", inner);
    if (!rc)
        rc = silt_engine_query_rows(e, d.data, describe_row, t);
    else
        rc = silt_err(SILT_ENOMEM, "read-table: out of memory");
    silt_buf_free(&d);
    return rc;
}

/* The Arrow wrapper of `inner` when a top-level column has a type DuckDB's
 * Arrow export lacks: TIME_NS becomes TIME (microseconds). 0 with w empty
 * when no column needs it. */
static int arrow_wrapper(silt_buf *w, silt_engine *e, duckdb_prepared_statement prep, const char *inner)
{
    size_t n = duckdb_prepared_statement_column_count(prep);
    time_ns t = {calloc(n ? n : 1, sizeof(bool)), n, 0};
    if (!t.is)
        return silt_err(SILT_ENOMEM, "read-table: out of memory");
    int rc = find_time_ns(e, prep, inner, &t);
    bool need = false;
    for (size_t c = 0; c < n && !need; c++)
        need = t.is[c];
    if (!rc && need)
        rc = silt_buf_puts(w, "SELECT ");
    for (size_t c = 0; need && !rc && c < n; c++) {
        const char *name = duckdb_prepared_statement_column_name(prep, c); /* caller owns it */
        char *id = name ? silt_sql_ident(name) : NULL;
        duckdb_free((void *)name);
        if (!id) {
            free(t.is);
            return silt_err(SILT_ENOMEM, "read-table: out of memory");
        }
        rc = silt_buf_printf(w, t.is[c] ? "%sCAST(#%zu AS TIME) AS %s" : "%s#%zu AS %s", c ? ", " : "", c + 1, id);
        free(id);
    }
    if (need && !rc)
        rc = silt_buf_printf(w, " FROM (%s\n) AS __silt_q", inner);
    free(t.is);
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "read-table: out of memory") : rc;
}

/* Prepares the statement (inside the CSV or Arrow wrapper, if any) into
 * s->prep. */
static int prepare(silt_rstream *s, silt_engine *e, const char *sql)
{
    int rc = silt_engine_prepare(e, sql, s->what, 0, DUCKDB_STATEMENT_TYPE_SELECT, &s->prep);
    if (rc)
        return rc;
    silt_buf w = SILT_BUF_INIT;
    /* CSV is rendered from the result vectors as silt sql does (render.h);
     * Arrow may need a wrapper for types its export lacks */
    rc = s->fmt == SILT_RSTREAM_CSV ? 0 : arrow_wrapper(&w, e, s->prep, sql);
    if (rc || !w.len) {
        silt_buf_free(&w);
        return rc;
    }
    duckdb_destroy_prepare(&s->prep);
    if (!rc)
        rc = silt_engine_prepare(e, w.data, s->what, 0, DUCKDB_STATEMENT_TYPE_SELECT, &s->prep);
    silt_buf_free(&w);
    return rc;
}

int silt_rstream_open(silt_rstream **out, silt_engine *e, const char *sql, silt_rstream_format fmt, int arrow_flags,
                      const char *what)
{
    *out = NULL;
    silt_rstream *s = calloc(1, sizeof *s);
    if (!s)
        return silt_err(SILT_ENOMEM, "%s: out of memory", what);
    s->fmt = fmt;
    s->what = what;
    int rc = prepare(s, e, sql);
    if (!rc && duckdb_pending_prepared_streaming(s->prep, &s->pending) == DuckDBError) {
        const char *m = s->pending ? duckdb_pending_error(s->pending) : NULL;
        rc = silt_err(SILT_EINVAL, "%s: %.*s", what, m ? (int)strcspn(m, "\n") : 2, m ? m : "?");
    }
    if (!rc) {
        s->have_res = true;
        if (duckdb_execute_pending(s->pending, &s->res) == DuckDBError)
            rc = silt_engine_error(e, &s->res, what);
    }
    if (!rc) {
        s->ncols = duckdb_column_count(&s->res);
        rc = fmt == SILT_RSTREAM_ARROW ? start_arrow(s, arrow_flags) : start_csv(s);
    }
    if (rc) {
        silt_rstream_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

static int csv_chunk(silt_rstream *s, duckdb_data_chunk chunk, silt_buf *out)
{
    idx_t n = duckdb_data_chunk_get_size(chunk);
    int rc = 0;
    for (idx_t r = 0; !rc && r < n; r++) {
        for (size_t c = 0; !rc && c < s->ncols; c++) {
            duckdb_vector v = duckdb_data_chunk_get_vector(chunk, c);
            if (c)
                rc = silt_buf_putc(out, ',');
            if (rc || silt_render_is_null(v, r))
                continue;
            silt_buf_clear(&s->cell);
            rc = silt_render_put(&s->cell, s->render[c], v, r, SILT_RENDER_TEXT);
            if (!rc)
                rc = put_csv(out, s->cell.data ? s->cell.data : "", s->cell.len, false);
        }
        if (!rc)
            rc = silt_buf_putc(out, '\n');
    }
    return rc ? silt_err(SILT_ENOMEM, "read-table: out of memory") : 0;
}

static int arrow_chunk(silt_rstream *s, duckdb_data_chunk chunk, silt_buf *out)
{
    struct ArrowArray a;
    memset(&a, 0, sizeof a);
    int rc = duck_error(duckdb_data_chunk_to_arrow(s->aopts, chunk, &a), s->what, "Arrow array");
    if (!rc)
        rc = silt_arrow_ipc_batch(out, &s->schema, &a);
    if (a.release)
        a.release(&a);
    return rc;
}

int silt_rstream_next(silt_rstream *s, silt_buf *out)
{
    if (!s->head_done) {
        s->head_done = true;
        int rc = silt_buf_append(out, s->head.data ? s->head.data : "", s->head.len);
        silt_buf_free(&s->head);
        return rc ? silt_err(SILT_ENOMEM, "read-table: out of memory") : 1;
    }
    if (s->finished)
        return 0;
    duckdb_data_chunk chunk = duckdb_fetch_chunk(s->res);
    while (chunk && duckdb_data_chunk_get_size(chunk) == 0) {
        duckdb_destroy_data_chunk(&chunk);
        chunk = duckdb_fetch_chunk(s->res);
    }
    if (!chunk) {
        s->finished = true;
        const char *m = duckdb_result_error(&s->res);
        if (m && *m)
            return silt_err(SILT_EIO, "%s: %.*s", s->what, (int)strcspn(m, "\n"), m);
        if (s->fmt == SILT_RSTREAM_CSV)
            return 0;
        int rc = silt_arrow_ipc_eos(out);
        return rc ? rc : 1;
    }
    s->rows += duckdb_data_chunk_get_size(chunk);
    int rc = s->fmt == SILT_RSTREAM_ARROW ? arrow_chunk(s, chunk, out) : csv_chunk(s, chunk, out);
    duckdb_destroy_data_chunk(&chunk);
    if (rc)
        s->finished = true;
    return rc ? rc : 1;
}

uint64_t silt_rstream_rows(const silt_rstream *s) { return s->rows; }

int silt_rstream_arrow_schema(silt_rstream *s, struct ArrowSchema *out)
{
    memset(out, 0, sizeof *out);
    if (s->fmt != SILT_RSTREAM_ARROW)
        return silt_err(SILT_EINVAL, "%s: not an Arrow stream", s->what);
    return duck_error(duckdb_to_arrow_schema(s->aopts, s->types, s->names, s->ncols, out), s->what, "Arrow schema");
}

int silt_rstream_next_array(silt_rstream *s, struct ArrowArray *out)
{
    memset(out, 0, sizeof *out);
    if (s->fmt != SILT_RSTREAM_ARROW)
        return silt_err(SILT_EINVAL, "%s: not an Arrow stream", s->what);
    s->head_done = true; /* the IPC Schema message is not wanted here */
    if (s->finished)
        return 0;
    duckdb_data_chunk chunk = duckdb_fetch_chunk(s->res);
    while (chunk && duckdb_data_chunk_get_size(chunk) == 0) {
        duckdb_destroy_data_chunk(&chunk);
        chunk = duckdb_fetch_chunk(s->res);
    }
    if (!chunk) {
        s->finished = true;
        const char *m = duckdb_result_error(&s->res);
        return m && *m ? silt_err(SILT_EIO, "%s: %.*s", s->what, (int)strcspn(m, "\n"), m) : 0;
    }
    s->rows += duckdb_data_chunk_get_size(chunk);
    int rc = duck_error(duckdb_data_chunk_to_arrow(s->aopts, chunk, out), s->what, "Arrow array");
    duckdb_destroy_data_chunk(&chunk);
    if (rc) {
        if (out->release)
            out->release(out);
        memset(out, 0, sizeof *out);
        s->finished = true;
    }
    return rc ? rc : 1;
}

void silt_rstream_free(silt_rstream *s)
{
    if (!s)
        return;
    if (s->schema.release)
        s->schema.release(&s->schema);
    for (size_t i = 0; s->types && i < s->ncols; i++)
        duckdb_destroy_logical_type(&s->types[i]);
    free(s->types);
    free(s->names);
    if (s->aopts)
        duckdb_destroy_arrow_options(&s->aopts);
    if (s->have_res)
        duckdb_destroy_result(&s->res);
    if (s->pending)
        duckdb_destroy_pending(&s->pending);
    duckdb_destroy_prepare(&s->prep);
    silt_buf_free(&s->head);
    for (size_t i = 0; s->render && i < s->ncols; i++)
        silt_render_free(s->render[i]);
    free(s->render);
    silt_buf_free(&s->cell);
    free(s);
}
