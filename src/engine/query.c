/* query.c — dataset views, the current-state projection and result output
 * for `silt sql` / `silt tail` (see query.h for the formats).
 *
 * Invariants:
 *  - a query is exactly one statement, split and prepared by DuckDB
 *    (silt_engine_prepare); on a confined engine only a read-only query;
 *  - silt's wrappers around it (conversions, COPY to Parquet) are prepared
 *    again and must still be one statement of the expected kind, so no text
 *    of a query can turn a wrapper into something else;
 *  - a SELECT-like statement is wrapped in
 *    `SELECT <conversions> FROM (<query>)` using positional references (#i)
 *    so that duplicate or odd column names survive, timestamps become
 *    RFC 3339 text and (for JSON) nested values JSON text inside the engine;
 *    any other statement runs as is and its values are printed as DuckDB
 *    text;
 *  - the wrapper is a plain projection: the row order of the query (and of
 *    the slice views: file order = offset order, preserve_insertion_order)
 *    is kept;
 *  - output to a path is removed again when anything fails.
 */
#include "engine/query.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "util/buf.h"
#include "util/error.h"

int silt_qfmt_parse(const char *name, silt_qfmt *out)
{
    static const char *const names[] = {"table", "csv", "json", "ndjson", "parquet", "json-aos", "json-soa",
                                        "json-aoa"};
    if (!name) {
        *out = SILT_QFMT_TABLE;
        return 0;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0) {
            *out = (silt_qfmt)i;
            return 0;
        }
    }
    return silt_err(SILT_EINVAL, "unknown output format '%s' (use table, csv, json, ndjson or parquet)",
                    name);
}

/* ---- output kinds --------------------------------------------------------- */

typedef enum col_kind { K_STRING, K_NUMBER, K_FLOAT, K_BOOL, K_JSON } col_kind;

static bool is_timestamp(duckdb_type t)
{
    return t == DUCKDB_TYPE_TIMESTAMP || t == DUCKDB_TYPE_TIMESTAMP_S ||
           t == DUCKDB_TYPE_TIMESTAMP_MS || t == DUCKDB_TYPE_TIMESTAMP_NS ||
           t == DUCKDB_TYPE_TIMESTAMP_TZ;
}

static bool is_nested(duckdb_type t)
{
    return t == DUCKDB_TYPE_LIST || t == DUCKDB_TYPE_STRUCT || t == DUCKDB_TYPE_MAP ||
           t == DUCKDB_TYPE_ARRAY || t == DUCKDB_TYPE_UNION;
}

static col_kind kind_of(duckdb_type t)
{
    switch (t) {
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
    case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UHUGEINT:
    case DUCKDB_TYPE_DECIMAL:
        return K_NUMBER;
    case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE:
        return K_FLOAT;
    case DUCKDB_TYPE_BOOLEAN:
        return K_BOOL;
    default:
        return K_STRING;
    }
}

/* Appends the RFC 3339 conversion of column reference `x` (VARCHAR result). */
static int put_rfc3339(silt_buf *b, const char *x, bool nanos)
{
    const char *ep = nanos ? "epoch_ns" : "epoch_us";
    const char *full = nanos ? "1000000000" : "1000000";
    const char *milli = nanos ? "1000000" : "1000";
    int rc = silt_buf_printf(b,
                             "CASE WHEN %s IS NULL THEN NULL WHEN NOT isfinite(%s) THEN CAST(%s AS VARCHAR) "
                             "WHEN %s(%s) %% %s = 0 THEN strftime(%s, '%%Y-%%m-%%dT%%H:%%M:%%SZ') "
                             "WHEN %s(%s) %% %s = 0 THEN strftime(%s, '%%Y-%%m-%%dT%%H:%%M:%%S.%%gZ') ",
                             x, x, x, ep, x, full, x, ep, x, milli, x);
    if (rc == 0 && nanos)
        rc = silt_buf_printf(b,
                             "WHEN epoch_ns(%s) %% 1000 = 0 THEN strftime(%s, '%%Y-%%m-%%dT%%H:%%M:%%S.%%fZ') "
                             "ELSE strftime(%s, '%%Y-%%m-%%dT%%H:%%M:%%S.') || "
                             "lpad(CAST((epoch_ns(%s) %% 1000000000 + 1000000000) %% 1000000000 AS VARCHAR), "
                             "9, '0') || 'Z' END",
                             x, x, x, x);
    else if (rc == 0)
        rc = silt_buf_printf(b, "ELSE strftime(%s, '%%Y-%%m-%%dT%%H:%%M:%%S.%%fZ') END", x);
    return rc;
}

/* Query text without trailing whitespace, comments and semicolons
 * (malloc'd), so that it can be wrapped in a subquery. Strings, quoted
 * identifiers and comments are skipped while looking for the end. */
static char *strip_query(const char *sql)
{
    size_t end = 0;
    const char *p = sql;
    while (*p) {
        if (p[0] == '-' && p[1] == '-') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else if (*p == '\'' || *p == '"') {
            char q = *p++;
            while (*p && !(*p == q && p[1] != q)) {
                if (*p == q)
                    p++; /* doubled quote */
                p++;
            }
            if (*p)
                p++;
            end = (size_t)(p - sql);
        } else {
            if (*p != ';' && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
                end = (size_t)(p - sql) + 1;
            p++;
        }
    }
    char *s = malloc(end + 1);
    if (!s)
        return NULL;
    memcpy(s, sql, end);
    s[end] = '\0';
    return s;
}

/* ---- values ------------------------------------------------------------------ */

/* One value of a result row: `n` bytes at `p` (which may contain NUL bytes);
 * p == NULL is SQL NULL. */
typedef struct cell {
    const char *p;
    size_t n;
} cell;

static bool cell_is(cell v, const char *s) { return v.p && v.n == strlen(s) && memcmp(v.p, s, v.n) == 0; }

/* Hands out the rows of a result. A SELECT is wrapped so that every column
 * is VARCHAR (build_wrapper); its values are read from the result's data
 * chunks, which keep the exact bytes of a value (duckdb_value_varchar stops
 * at the first NUL byte and fails on nested values). The result of any
 * other statement is read with duckdb_value_varchar (the two APIs must not
 * be mixed on one result). The cells of the current row stay valid until
 * the next call of rows_next or rows_close. */
typedef struct rows {
    duckdb_result *res;
    size_t ncols;
    bool chunked;
    cell *cur;
    /* chunked */
    idx_t nchunks, next_chunk, in_chunk, chunk_size;
    duckdb_data_chunk chunk;
    /* legacy */
    idx_t row, nrows;
    char **owned; /* duckdb_value_varchar strings of the current row */
} rows;

static int rows_open(rows *s, duckdb_result *res, size_t ncols, bool chunked)
{
    memset(s, 0, sizeof *s);
    s->res = res;
    s->ncols = ncols;
    s->chunked = chunked;
    s->cur = calloc(ncols ? ncols : 1, sizeof *s->cur);
    s->owned = calloc(ncols ? ncols : 1, sizeof *s->owned);
    if (!s->cur || !s->owned) {
        free(s->cur);
        free(s->owned);
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    }
    if (chunked)
        s->nchunks = duckdb_result_chunk_count(*res);
    else
        s->nrows = duckdb_row_count(res);
    return 0;
}

static void rows_release(rows *s)
{
    for (size_t c = 0; c < s->ncols; c++) {
        duckdb_free(s->owned[c]);
        s->owned[c] = NULL;
    }
}

static void rows_close(rows *s)
{
    rows_release(s);
    if (s->chunk)
        duckdb_destroy_data_chunk(&s->chunk);
    free(s->cur);
    free(s->owned);
    memset(s, 0, sizeof *s);
}

static int rows_next_chunked(rows *s)
{
    while (!s->chunk || s->in_chunk >= s->chunk_size) {
        if (s->chunk)
            duckdb_destroy_data_chunk(&s->chunk);
        if (s->next_chunk >= s->nchunks)
            return 0;
        s->chunk = duckdb_result_get_chunk(*s->res, s->next_chunk++);
        if (!s->chunk)
            return silt_err(SILT_ENOMEM, "sql: out of memory (result chunk %llu)",
                            (unsigned long long)(s->next_chunk - 1));
        s->chunk_size = duckdb_data_chunk_get_size(s->chunk);
        s->in_chunk = 0;
    }
    idx_t r = s->in_chunk++;
    for (size_t c = 0; c < s->ncols; c++) {
        duckdb_vector v = duckdb_data_chunk_get_vector(s->chunk, c);
        uint64_t *valid = duckdb_vector_get_validity(v);
        duckdb_string_t *d = duckdb_vector_get_data(v);
        if (valid && !duckdb_validity_row_is_valid(valid, r))
            s->cur[c] = (cell){NULL, 0};
        else
            s->cur[c] = (cell){duckdb_string_t_data(&d[r]), duckdb_string_t_length(d[r])};
    }
    return 1;
}

static int rows_next_legacy(rows *s)
{
    rows_release(s);
    if (s->row >= s->nrows)
        return 0;
    idx_t r = s->row++;
    for (size_t c = 0; c < s->ncols; c++) {
        if (duckdb_value_is_null(s->res, c, r)) {
            s->cur[c] = (cell){NULL, 0};
            continue;
        }
        char *v = duckdb_value_varchar(s->res, c, r);
        if (!v)
            return silt_err(SILT_ENOMEM, "sql: out of memory (row %llu, column %zu)", (unsigned long long)r,
                            c + 1);
        s->owned[c] = v;
        s->cur[c] = (cell){v, strlen(v)};
    }
    return 1;
}

/* 1: s->cur holds the next row; 0: no more rows; < 0: error. */
static int rows_next(rows *s) { return s->chunked ? rows_next_chunked(s) : rows_next_legacy(s); }

/* ---- text writers ---------------------------------------------------------- */

static void put_json_string(FILE *f, cell v)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)v.p, *e = p + v.n; p < e; p++) {
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p); /* NUL is \u0000 */
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

static void put_name_json(FILE *f, const char *name) { put_json_string(f, (cell){name, strlen(name)}); }

static void put_json_value(FILE *f, col_kind k, cell v)
{
    if (!v.p) {
        fputs("null", f);
        return;
    }
    switch (k) {
    case K_NUMBER:
    case K_BOOL:
    case K_JSON:
        fwrite(v.p, 1, v.n, f);
        break;
    case K_FLOAT:
        if (cell_is(v, "nan") || cell_is(v, "-nan") || cell_is(v, "inf") || cell_is(v, "-inf"))
            fputs("null", f);
        else
            fwrite(v.p, 1, v.n, f);
        break;
    default:
        put_json_string(f, v);
    }
}

/* A field holding ',', '"', CR, LF or a NUL byte is quoted; the bytes are
 * written as they are (a NUL byte stays a NUL byte). */
static void put_csv_field(FILE *f, cell v)
{
    if (!v.p)
        return;
    bool quote = v.n == 0;
    for (size_t i = 0; i < v.n && !quote; i++)
        quote = v.p[i] == ',' || v.p[i] == '"' || v.p[i] == '\r' || v.p[i] == '\n' || v.p[i] == '\0';
    if (!quote) {
        fwrite(v.p, 1, v.n, f);
        return;
    }
    fputc('"', f);
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] == '"')
            fputc('"', f);
        fputc(v.p[i], f);
    }
    fputc('"', f);
}

static void put_name_csv(FILE *f, const char *name) { put_csv_field(f, (cell){name, strlen(name)}); }

/* Display width: UTF-8 code points (a NUL byte is shown as one, U+2400). */
static size_t text_width(cell v)
{
    size_t w = 0;
    for (size_t i = 0; i < v.n; i++)
        if (((unsigned char)v.p[i] & 0xC0) != 0x80)
            w++;
    return w;
}

/* The table shows a NUL byte as U+2400 SYMBOL FOR NULL ("␀"). */
static void put_padded(FILE *f, cell v, size_t width, bool right)
{
    size_t w = text_width(v);
    if (right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] == '\0')
            fputs("\xe2\x90\x80", f);
        else
            fputc(v.p[i], f);
    }
    if (!right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
}

static const cell NULL_TEXT = {"NULL", 4};

/* All values of the result, row-major, as malloc'd copies (p NULL = SQL NULL). */
static int fetch_all(rows *s, cell **cells_out, size_t *nrows_out)
{
    *cells_out = NULL;
    *nrows_out = 0;
    cell *cells = NULL;
    size_t n = 0, cap = 0;
    int rc;
    while ((rc = rows_next(s)) == 1) {
        if (n + s->ncols > cap) {
            size_t ncap = cap ? cap * 2 : 64 + s->ncols;
            cell *nc = realloc(cells, ncap * sizeof *nc);
            if (!nc) {
                rc = silt_err(SILT_ENOMEM, "sql: out of memory");
                break;
            }
            cells = nc;
            cap = ncap;
        }
        for (size_t c = 0; c < s->ncols; c++) {
            cell v = s->cur[c];
            char *copy = NULL;
            if (v.p && !(copy = malloc(v.n + 1))) {
                rc = silt_err(SILT_ENOMEM, "sql: out of memory (row %zu, column %zu)", n / (s->ncols ? s->ncols : 1) + 1,
                              c + 1);
                break;
            }
            if (copy)
                memcpy(copy, v.p, v.n);
            cells[n++] = (cell){copy, v.n};
        }
        if (rc < 0)
            break;
    }
    if (rc < 0) {
        for (size_t i = 0; i < n; i++)
            free((char *)cells[i].p);
        free(cells);
        return rc;
    }
    *cells_out = cells;
    *nrows_out = s->ncols ? n / s->ncols : 0;
    return 0;
}

static int write_table(FILE *f, rows *s, const col_kind *kinds, uint64_t *nrows_out)
{
    size_t ncols = s->ncols, nrows;
    cell *cells;
    int rc = fetch_all(s, &cells, &nrows);
    if (rc)
        return rc;
    size_t *w = calloc(ncols ? ncols : 1, sizeof *w);
    if (!w) {
        for (size_t i = 0; i < nrows * ncols; i++)
            free((char *)cells[i].p);
        free(cells);
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    }
    for (size_t c = 0; c < ncols; c++) {
        const char *name = duckdb_column_name(s->res, c);
        w[c] = text_width((cell){name, strlen(name)});
        for (size_t r = 0; r < nrows; r++) {
            cell v = cells[r * ncols + c];
            size_t vw = v.p ? text_width(v) : 4;
            if (vw > w[c])
                w[c] = vw;
        }
    }
    for (size_t c = 0; c < ncols; c++) {
        const char *name = duckdb_column_name(s->res, c);
        if (c)
            fputs(" | ", f);
        put_padded(f, (cell){name, strlen(name)}, c + 1 < ncols ? w[c] : 0, false);
    }
    fputc('\n', f);
    for (size_t c = 0; c < ncols; c++) {
        if (c)
            fputs("-+-", f);
        for (size_t i = 0; i < w[c]; i++)
            fputc('-', f);
    }
    fputc('\n', f);
    for (size_t r = 0; r < nrows; r++) {
        for (size_t c = 0; c < ncols; c++) {
            cell v = cells[r * ncols + c];
            bool right = kinds[c] == K_NUMBER || kinds[c] == K_FLOAT;
            if (c)
                fputs(" | ", f);
            put_padded(f, v.p ? v : NULL_TEXT, (right || c + 1 < ncols) ? w[c] : 0, right);
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < nrows * ncols; i++)
        free((char *)cells[i].p);
    free(cells);
    free(w);
    *nrows_out = nrows;
    return 0;
}

static int write_rows(FILE *f, rows *s, const col_kind *kinds, silt_qfmt fmt, uint64_t *nrows_out)
{
    size_t ncols = s->ncols;
    if (fmt == SILT_QFMT_CSV) {
        for (size_t c = 0; c < ncols; c++) {
            if (c)
                fputc(',', f);
            put_name_csv(f, duckdb_column_name(s->res, c));
        }
        fputc('\n', f);
    }
    uint64_t n = 0;
    int rc;
    while ((rc = rows_next(s)) == 1) {
        if (fmt == SILT_QFMT_JSON)
            fputs(n ? ",\n" : "[\n", f);
        if (fmt != SILT_QFMT_CSV)
            fputc('{', f);
        for (size_t c = 0; c < ncols; c++) {
            if (c)
                fputc(',', f);
            if (fmt == SILT_QFMT_CSV) {
                put_csv_field(f, s->cur[c]);
            } else {
                put_name_json(f, duckdb_column_name(s->res, c));
                fputc(':', f);
                put_json_value(f, kinds[c], s->cur[c]);
            }
        }
        if (fmt != SILT_QFMT_CSV)
            fputc('}', f);
        if (fmt != SILT_QFMT_JSON)
            fputc('\n', f);
        n++;
    }
    if (rc < 0)
        return rc;
    if (fmt == SILT_QFMT_JSON)
        fputs(n ? "\n]\n" : "[]\n", f);
    *nrows_out = n;
    return 0;
}

/* The compact JSON shapes of the ODF node API (json-aos / -soa / -aoa). */
static int write_json_shapes(FILE *f, rows *s, const col_kind *kinds, silt_qfmt fmt, uint64_t *nrows_out)
{
    size_t ncols = s->ncols;
    if (fmt == SILT_QFMT_JSON_SOA) {
        cell *cells;
        size_t nrows;
        int rc = fetch_all(s, &cells, &nrows);
        if (rc)
            return rc;
        fputc('{', f);
        for (size_t c = 0; c < ncols; c++) {
            if (c)
                fputc(',', f);
            put_name_json(f, duckdb_column_name(s->res, c));
            fputs(":[", f);
            for (size_t r = 0; r < nrows; r++) {
                if (r)
                    fputc(',', f);
                put_json_value(f, kinds[c], cells[r * ncols + c]);
            }
            fputc(']', f);
        }
        fputc('}', f);
        for (size_t i = 0; i < nrows * ncols; i++)
            free((char *)cells[i].p);
        free(cells);
        *nrows_out = nrows;
        return 0;
    }
    uint64_t n = 0;
    int rc;
    fputc('[', f);
    while ((rc = rows_next(s)) == 1) {
        if (n)
            fputc(',', f);
        fputc(fmt == SILT_QFMT_JSON_AOA ? '[' : '{', f);
        for (size_t c = 0; c < ncols; c++) {
            if (c)
                fputc(',', f);
            if (fmt == SILT_QFMT_JSON_AOS) {
                put_name_json(f, duckdb_column_name(s->res, c));
                fputc(':', f);
            }
            put_json_value(f, kinds[c], s->cur[c]);
        }
        fputc(fmt == SILT_QFMT_JSON_AOA ? ']' : '}', f);
        n++;
    }
    if (rc < 0)
        return rc;
    fputc(']', f);
    *nrows_out = n;
    return 0;
}

/* ---- running --------------------------------------------------------------- */

static bool fmt_is_json(silt_qfmt fmt)
{
    return fmt == SILT_QFMT_JSON || fmt == SILT_QFMT_NDJSON || fmt == SILT_QFMT_JSON_AOS ||
           fmt == SILT_QFMT_JSON_SOA || fmt == SILT_QFMT_JSON_AOA;
}

/* Builds the converting wrapper of a SELECT: every output column is
 * VARCHAR (rows_next reads them from data chunks); *kinds_out gets the
 * output kind of every column (from its type before the conversion); a
 * page becomes LIMIT / OFFSET of the wrapper. */
static int build_wrapper(silt_buf *b, duckdb_prepared_statement prep, const char *inner,
                         silt_qfmt fmt, col_kind *kinds, const silt_query_page *page)
{
    size_t ncols = duckdb_prepared_statement_column_count(prep);
    int rc = silt_buf_puts(b, "SELECT ");
    for (size_t c = 0; rc == 0 && c < ncols; c++) {
        duckdb_type t = duckdb_prepared_statement_column_type(prep, c);
        char ref[32];
        snprintf(ref, sizeof ref, "#%zu", c + 1);
        if (c)
            rc = silt_buf_puts(b, ", ");
        kinds[c] = kind_of(t);
        if (rc == 0 && is_timestamp(t)) {
            rc = put_rfc3339(b, ref, t == DUCKDB_TYPE_TIMESTAMP_NS);
            kinds[c] = K_STRING;
        } else if (rc == 0 && fmt_is_json(fmt) && is_nested(t)) {
            rc = silt_buf_printf(b, "CAST(to_json(%s) AS VARCHAR)", ref);
            kinds[c] = K_JSON;
        } else if (rc == 0) {
            rc = silt_buf_printf(b, "CAST(%s AS VARCHAR)", ref); /* text as DuckDB prints it */
        }
        /* column names of a prepared statement are owned by the caller */
        const char *cname = rc == 0 ? duckdb_prepared_statement_column_name(prep, c) : NULL;
        char *alias = cname ? silt_sql_ident(cname) : NULL;
        duckdb_free((void *)cname);
        if (rc == 0 && !alias)
            rc = SILT_ENOMEM;
        if (rc == 0)
            rc = silt_buf_printf(b, " AS %s", alias);
        free(alias);
    }
    if (rc == 0)
        rc = silt_buf_printf(b, " FROM (%s\n) AS __silt_q", inner);
    if (rc == 0 && page && page->has_limit)
        rc = silt_buf_printf(b, " LIMIT %llu", (unsigned long long)page->limit);
    if (rc == 0 && page && page->skip)
        rc = silt_buf_printf(b, " OFFSET %llu", (unsigned long long)page->skip);
    return rc;
}

int silt_query_csv_wrapper(silt_buf *b, duckdb_prepared_statement prep, const char *inner)
{
    size_t ncols = duckdb_prepared_statement_column_count(prep);
    col_kind *kinds = calloc(ncols ? ncols : 1, sizeof *kinds);
    int rc = kinds ? build_wrapper(b, prep, inner, SILT_QFMT_CSV, kinds, NULL) : SILT_ENOMEM;
    free(kinds);
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "sql: out of memory") : rc;
}

/* Runs silt's wrapper `sql` around the checked user query, which must still
 * be one statement of type `type`, into *res (destroyed by the caller when
 * *have_res). */
static int run_wrapper(silt_engine *e, const char *sql, duckdb_statement_type type, duckdb_result *res,
                       bool *have_res)
{
    duckdb_prepared_statement wp = NULL;
    int rc = silt_engine_prepare(e, sql, "sql", 0, type, &wp);
    if (rc == 0) {
        *have_res = true;
        if (duckdb_execute_prepared(wp, res) == DuckDBError)
            rc = silt_engine_error(e, res, "sql");
    }
    duckdb_destroy_prepare(&wp);
    return rc;
}

static int run_parquet(silt_engine *e, duckdb_prepared_statement prep, const char *inner,
                       const char *path, uint64_t *rows_out)
{
    if (duckdb_prepared_statement_type(prep) != DUCKDB_STATEMENT_TYPE_SELECT)
        return silt_err(SILT_EINVAL, "sql: only a query (SELECT) can be written as Parquet");
    char *qp = silt_sql_str(path);
    if (!qp)
        return SILT_ENOMEM;
    silt_buf b = SILT_BUF_INIT;
    /* written in place (no tmp_<name> beside it): a confined engine may
     * write exactly `path`; a failure removes it below */
    int rc = silt_buf_printf(&b, "COPY (%s\n) TO %s (FORMAT parquet, USE_TMP_FILE false)", inner, qp);
    free(qp);
    duckdb_result res;
    bool have_res = false;
    if (rc == 0)
        rc = run_wrapper(e, b.data, DUCKDB_STATEMENT_TYPE_COPY, &res, &have_res);
    if (rc == 0 && rows_out)
        *rows_out = duckdb_rows_changed(&res);
    if (have_res)
        duckdb_destroy_result(&res);
    silt_buf_free(&b);
    if (rc)
        unlink(path);
    return rc;
}

int silt_query_run(silt_engine *e, const char *sql, silt_qfmt fmt, FILE *out, const char *path,
                   uint64_t *rows_out)
{
    return silt_query_run_page(e, sql, fmt, out, path, rows_out, NULL);
}

int silt_query_run_page(silt_engine *e, const char *sql, silt_qfmt fmt, FILE *out, const char *path,
                        uint64_t *rows_out, const silt_query_page *page)
{
    if (rows_out)
        *rows_out = 0;
    if (fmt == SILT_QFMT_PARQUET && !path)
        return silt_err(SILT_EINVAL, "sql: format parquet needs an output file");
    char *inner = strip_query(sql);
    if (!inner)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    duckdb_prepared_statement prep = NULL;
    int rc = silt_engine_prepare(e, inner, "sql", SILT_PREP_USER | SILT_PREP_EXPLAIN,
                                 DUCKDB_STATEMENT_TYPE_INVALID, &prep);
    if (rc) {
        free(inner);
        return rc;
    }
    if (fmt == SILT_QFMT_PARQUET) {
        rc = run_parquet(e, prep, inner, path, rows_out);
        duckdb_destroy_prepare(&prep);
        free(inner);
        return rc;
    }
    size_t ncols = duckdb_prepared_statement_column_count(prep);
    col_kind *kinds = calloc(ncols ? ncols : 1, sizeof *kinds);
    silt_buf wrapped = SILT_BUF_INIT;
    duckdb_result res;
    bool have_res = false, chunked = false;
    if (!kinds)
        rc = silt_err(SILT_ENOMEM, "sql: out of memory");
    if (rc == 0 && duckdb_prepared_statement_type(prep) == DUCKDB_STATEMENT_TYPE_SELECT) {
        rc = build_wrapper(&wrapped, prep, inner, fmt, kinds, page);
        if (rc == SILT_ENOMEM)
            rc = silt_err(SILT_ENOMEM, "sql: out of memory");
        if (rc == 0) {
            chunked = true;
            rc = run_wrapper(e, wrapped.data, DUCKDB_STATEMENT_TYPE_SELECT, &res, &have_res);
        }
    } else if (rc == 0) {
        have_res = true;
        if (duckdb_execute_prepared(prep, &res) == DuckDBError)
            rc = silt_engine_error(e, &res, "sql");
        else
            for (size_t c = 0; c < ncols && c < duckdb_column_count(&res); c++)
                kinds[c] = kind_of(duckdb_column_type(&res, c));
    }
    FILE *f = out ? out : stdout;
    if (rc == 0 && path) {
        f = fopen(path, "w");
        if (!f)
            rc = silt_err(SILT_EIO, "%s: cannot create: %s", path, strerror(errno));
    }
    if (rc == 0) {
        size_t rc_cols = duckdb_column_count(&res);
        if (rc_cols > ncols)
            rc_cols = ncols; /* defensive: never index past `kinds` */
        rows src;
        uint64_t nrows = 0;
        rc = rows_open(&src, &res, rc_cols, chunked);
        if (rc == 0) {
            rc = fmt == SILT_QFMT_TABLE ? write_table(f, &src, kinds, &nrows)
                 : fmt >= SILT_QFMT_JSON_AOS ? write_json_shapes(f, &src, kinds, fmt, &nrows)
                                             : write_rows(f, &src, kinds, fmt, &nrows);
            rows_close(&src);
        }
        if (rc == 0 && rows_out)
            *rows_out = nrows;
        if (fflush(f) != 0 || ferror(f))
            if (rc == 0)
                rc = silt_err(SILT_EIO, "%s: write error: %s", path ? path : "output", strerror(errno));
        if (path) {
            if (fclose(f) != 0 && rc == 0)
                rc = silt_err(SILT_EIO, "%s: write error: %s", path, strerror(errno));
            if (rc)
                unlink(path);
        }
    }
    if (have_res)
        duckdb_destroy_result(&res);
    silt_buf_free(&wrapped);
    duckdb_destroy_prepare(&prep);
    free(kinds);
    free(inner);
    return rc;
}

/* ---- views ----------------------------------------------------------------- */

static int exec_buf(silt_engine *e, silt_buf *b, int rc, const char *view)
{
    if (rc == 0) {
        rc = silt_engine_exec(e, b->data);
        if (rc < 0)
            rc = silt_err_context(rc, "view %s", view);
    } else if (rc == SILT_ENOMEM) {
        rc = silt_err(SILT_ENOMEM, "view %s: out of memory", view);
    }
    silt_buf_free(b);
    return rc;
}

/* Appends "* REPLACE (CAST(offset AS UBIGINT) AS offset, CAST(op AS UTINYINT) AS op)". */
static int put_system_casts(silt_buf *b, const silt_vocab_names *v)
{
    char *o = silt_sql_ident(v->offset), *p = silt_sql_ident(v->op);
    int rc = (o && p) ? silt_buf_printf(b,
                                        "* REPLACE (CAST(%s AS UBIGINT) AS %s, CAST(%s AS UTINYINT) AS %s)",
                                        o, o, p, p)
                      : SILT_ENOMEM;
    free(o);
    free(p);
    return rc;
}

int silt_query_create_slice_view(silt_engine *e, const char *view, const char *const *files,
                                 size_t n, const silt_vocab_names *vocab, uint64_t min_offset)
{
    if (n == 0)
        return silt_err(SILT_EINVAL, "view %s: no slice files", view);
    /* the view reads its files when queried: a confined engine may read them */
    for (size_t i = 0; i < n; i++) {
        int ar = silt_engine_allow_file(e, files[i]);
        if (ar < 0)
            return silt_err_context(ar, "view %s", view);
    }
    silt_buf b = SILT_BUF_INIT;
    char *qv = silt_sql_ident(view);
    int rc = qv ? silt_buf_printf(&b, "CREATE OR REPLACE TEMP VIEW %s AS SELECT ", qv) : SILT_ENOMEM;
    free(qv);
    if (rc == 0)
        rc = put_system_casts(&b, vocab);
    if (rc == 0)
        rc = silt_buf_puts(&b, " FROM read_parquet([");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        char *q = silt_sql_str(files[i]);
        rc = q ? silt_buf_printf(&b, "%s%s", i ? ", " : "", q) : SILT_ENOMEM;
        free(q);
    }
    if (rc == 0)
        rc = silt_buf_puts(&b, "], union_by_name = true)");
    if (rc == 0 && min_offset) {
        char *o = silt_sql_ident(vocab->offset);
        rc = o ? silt_buf_printf(&b, " WHERE %s >= %llu", o, (unsigned long long)min_offset) : SILT_ENOMEM;
        free(o);
    }
    return exec_buf(e, &b, rc, view);
}

int silt_query_create_empty_view(silt_engine *e, const char *view, const char *columns)
{
    silt_buf b = SILT_BUF_INIT;
    size_t tn = strlen(view) + 16;
    char *tname = malloc(tn);
    if (!tname)
        return silt_err(SILT_ENOMEM, "view %s: out of memory", view);
    snprintf(tname, tn, "__silt_empty:%s", view);
    char *qt = silt_sql_ident(tname), *qv = silt_sql_ident(view);
    free(tname);
    int rc = (qt && qv) ? silt_buf_printf(&b,
                                          "CREATE OR REPLACE TEMP TABLE %s (%s); "
                                          "CREATE OR REPLACE TEMP VIEW %s AS SELECT * FROM %s",
                                          qt, columns, qv, qt)
                        : SILT_ENOMEM;
    free(qt);
    free(qv);
    return exec_buf(e, &b, rc, view);
}

int silt_query_create_current_view(silt_engine *e, const char *view, const char *source,
                                   const silt_vocab_names *vocab)
{
    /* column names of the source */
    char *qs = silt_sql_ident(source);
    if (!qs)
        return silt_err(SILT_ENOMEM, "view %s: out of memory", view);
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_printf(&b, "SELECT * FROM %s", qs);
    duckdb_prepared_statement prep = NULL;
    if (rc == 0 && duckdb_prepare(silt_engine_conn(e), b.data, &prep) == DuckDBError) {
        const char *m = duckdb_prepare_error(prep);
        rc = silt_err(SILT_EINVAL, "view %s: %.*s", view, m ? (int)strcspn(m, "\n") : 7,
                      m ? m : "unknown");
    }
    silt_buf_clear(&b);
    silt_buf keys = SILT_BUF_INIT;
    bool has_offset = false, has_op = false;
    size_t nkeys = 0;
    size_t ncols = rc == 0 ? duckdb_prepared_statement_column_count(prep) : 0;
    for (size_t c = 0; rc == 0 && c < ncols; c++) {
        const char *name = duckdb_prepared_statement_column_name(prep, c); /* ours to free */
        if (!name) {
            rc = silt_err(SILT_ENOMEM, "view %s: out of memory", view);
            break;
        }
        bool skip = strcmp(name, vocab->system_time) == 0;
        if (strcmp(name, vocab->offset) == 0) {
            has_offset = true;
            skip = true;
        } else if (strcmp(name, vocab->op) == 0) {
            has_op = true;
            skip = true;
        }
        if (!skip) {
            char *q = silt_sql_ident(name);
            rc = q ? silt_buf_printf(&keys, "%s%s", nkeys ? ", " : "", q) : SILT_ENOMEM;
            free(q);
            nkeys++;
        }
        duckdb_free((void *)name);
    }
    if (prep)
        duckdb_destroy_prepare(&prep);
    if (rc == 0 && (!has_offset || !has_op))
        rc = silt_err(SILT_EINVAL, "view %s: source has no '%s' column", view,
                      has_offset ? vocab->op : vocab->offset);
    char *qv = silt_sql_ident(view), *qo = silt_sql_ident(vocab->offset), *qp = silt_sql_ident(vocab->op);
    if (rc == 0 && (!qv || !qo || !qp))
        rc = SILT_ENOMEM;
    if (rc == 0) {
        const char *part = nkeys ? "PARTITION BY " : "";
        rc = silt_buf_printf(
            &b,
            "CREATE OR REPLACE TEMP VIEW %s AS SELECT * EXCLUDE (__silt_net, __silt_rn) FROM ("
            "SELECT *, sum(CASE WHEN %s IN (0, 3) THEN 1 ELSE -1 END) OVER (%s%s) AS __silt_net, "
            "row_number() OVER (PARTITION BY %s%s(%s IN (0, 3)) ORDER BY %s DESC) AS __silt_rn "
            "FROM %s) WHERE %s IN (0, 3) AND __silt_rn <= __silt_net ORDER BY %s",
            qv, qp, part, nkeys ? keys.data : "", keys.data && nkeys ? keys.data : "",
            nkeys ? ", " : "", qp, qo, qs, qp, qo);
    }
    free(qv);
    free(qo);
    free(qp);
    free(qs);
    silt_buf_free(&keys);
    return exec_buf(e, &b, rc, view);
}

int silt_query_create_current_macro(silt_engine *e)
{
    /* query_table() parses its argument as a (qualified) name: quote it so
     * that dataset names with dots work */
    return silt_engine_exec(e, "CREATE OR REPLACE TEMP MACRO current_state(name) AS TABLE "
                               "SELECT * FROM query_table('\"' || replace(name, '\"', '\"\"') || "
                               "':current\"')");
}
