/* query.c — dataset views, the current-state projection and result output
 * for `silt sql` / `silt tail` (see query.h for the formats).
 *
 * Invariants:
 *  - a query is exactly one statement, split and prepared by DuckDB
 *    (silt_engine_prepare); on a confined engine only a read-only query;
 *  - a statement runs as the user wrote it (no wrapper), and its values
 *    are rendered from the result's data chunks by render.h, so the text of
 *    a value is the same in every format and at every nesting depth; only
 *    Parquet output wraps the query, in COPY (…) TO, which is prepared
 *    again and must still be one COPY statement, so no text of a query can
 *    turn the wrapper into something else;
 *  - rows are written in the order of the result (the slice views keep
 *    file order = offset order, preserve_insertion_order); csv/json/ndjson
 *    stream row by row, the table holds the rendered text to size columns;
 *  - output to a path is removed again when anything fails.
 */
#include "engine/query.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/arrow_ipc.h"
#include "engine/arrow_stream.h"
#include "engine/engine_internal.h"
#include "engine/render.h"
#include "util/buf.h"
#include "util/error.h"

int silt_qfmt_parse(const char *name, silt_qfmt *out)
{
    static const char *const names[] = {"table",    "csv",      "json",     "ndjson", "parquet",
                                        "json-aos", "json-soa", "json-aoa", "arrow"};
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
    return silt_err(SILT_EINVAL, "unknown output format '%s' (use table, csv, json, ndjson, parquet or arrow)",
                    name);
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

/* ---- output ------------------------------------------------------------------ */

/* One column of a result being written. */
typedef struct qcol {
    const char *name; /* borrowed from the result */
    silt_render *r;
    bool number; /* right-aligned in a table */
    bool op;     /* table: the op column, shown as +A/-R/-C/+C */
} qcol;

typedef struct qout {
    duckdb_result *res;
    size_t ncols;
    qcol *cols;
    const silt_query_out *o;
    silt_buf cell; /* scratch: the current value */
    uint64_t bytes;   /* written so far (table: rendered) */
    uint64_t written; /* rows written so far (table: 0 until its lines are out) */
} qout;

static void qout_close(qout *q)
{
    for (size_t c = 0; q->cols && c < q->ncols; c++)
        silt_render_free(q->cols[c].r);
    free(q->cols);
    silt_buf_free(&q->cell);
}

static int qout_open(qout *q, duckdb_result *res, const silt_query_out *o)
{
    memset(q, 0, sizeof *q);
    q->res = res;
    q->o = o;
    q->ncols = duckdb_column_count(res);
    q->cols = calloc(q->ncols ? q->ncols : 1, sizeof *q->cols);
    if (!q->cols)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    for (size_t c = 0; c < q->ncols; c++) {
        qcol *col = &q->cols[c];
        col->name = duckdb_column_name(res, c);
        duckdb_logical_type t = duckdb_column_logical_type(res, c);
        int rc = t ? silt_render_new(&col->r, t) : silt_err(SILT_ENOMEM, "sql: out of memory");
        duckdb_destroy_logical_type(&t);
        if (rc < 0) {
            qout_close(q);
            return rc;
        }
        col->number = silt_render_is_number(col->r);
        col->op = o->fmt == SILT_QFMT_TABLE && o->op_column && strcmp(col->name, o->op_column) == 0 &&
                  duckdb_column_type(res, c) == DUCKDB_TYPE_UTINYINT;
        if (col->op)
            col->number = false;
    }
    return 0;
}

static const char *const OP_NAMES[] = {"+A", "-R", "-C", "+C"};

/* Renders the value of column c at `row` of `chunk` into q->cell; *null
 * tells a SQL NULL (q->cell is then empty). */
static int render_cell(qout *q, duckdb_data_chunk chunk, size_t c, idx_t row, silt_render_style st,
                       bool *null)
{
    duckdb_vector v = duckdb_data_chunk_get_vector(chunk, c);
    silt_buf_clear(&q->cell);
    *null = silt_render_is_null(v, row);
    if (*null)
        return 0;
    uint8_t op = q->cols[c].op ? ((const uint8_t *)duckdb_vector_get_data(v))[row] : 0;
    int rc = q->cols[c].op && op < 4 ? silt_buf_puts(&q->cell, OP_NAMES[op])
                                     : silt_render_put(&q->cell, q->cols[c].r, v, row, st);
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "sql: out of memory") : rc;
}

/* Calls row_fn(q, chunk, row, arg) for every row of the result in order;
 * returns the number of rows (>= 0) or an error. */
typedef int (*row_fn)(qout *q, duckdb_data_chunk chunk, idx_t row, void *arg);

/* Reports n rows (and q->bytes) to o->progress; `last`: every row is in
 * (total = done; its answer is not asked for). Returns nonzero when the
 * callback asks to stop. */
static int report(qout *q, uint64_t n, bool last)
{
    const silt_query_out *o = q->o;
    if (!o->progress)
        return 0;
    silt_progress p = {.phase = o->phase ? o->phase : "sql", .unit = "rows", .done = n,
                       .total = last ? n : 0, .bytes = q->bytes};
    int stop = o->progress(o->progress_ctx, &p);
    return last ? 0 : stop;
}

/* Calls row_fn(q, chunk, row, arg) for every row of the result in order,
 * reporting progress after every chunk; returns the number of rows (>= 0)
 * or an error (SILT_ECANCELED when the progress callback asked to stop). */
static int64_t for_each_row(qout *q, row_fn fn, void *arg)
{
    int64_t n = 0;
    duckdb_data_chunk chunk;
    while ((chunk = duckdb_fetch_chunk(*q->res)) != NULL) {
        idx_t size = duckdb_data_chunk_get_size(chunk);
        int rc = 0;
        for (idx_t r = 0; rc == 0 && r < size; r++, n++)
            rc = fn(q, chunk, r, arg);
        duckdb_destroy_data_chunk(&chunk);
        if (rc < 0)
            return rc;
        if (report(q, (uint64_t)n, false))
            return silt_err(SILT_ECANCELED, "interrupted");
    }
    return n;
}

/* ---- csv, json, ndjson ---------------------------------------------------------- */

/* A field holding ',', '"', CR, LF or a NUL byte is quoted; the bytes are
 * written as they are (a NUL byte stays a NUL byte). */
static int put_csv_field(silt_buf *b, const char *p, size_t n)
{
    bool quote = n == 0;
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] == '\r' || p[i] == '\n' || p[i] == '\0';
    if (!quote)
        return silt_buf_append(b, p, n);
    int rc = silt_buf_putc(b, '"');
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = p[i] == '"' ? silt_buf_puts(b, "\"\"") : silt_buf_putc(b, p[i]);
    return rc ? rc : silt_buf_putc(b, '"');
}

typedef struct stream_arg {
    FILE *f;
    silt_buf line;
    uint64_t n;
} stream_arg;

static int flush_line(qout *q, stream_arg *a)
{
    if (a->line.len)
        fwrite(a->line.data, 1, a->line.len, a->f);
    q->bytes += a->line.len;
    silt_buf_clear(&a->line);
    return 0;
}

static int csv_row(qout *q, duckdb_data_chunk chunk, idx_t row, void *arg)
{
    stream_arg *a = arg;
    int rc = 0;
    for (size_t c = 0; rc == 0 && c < q->ncols; c++) {
        bool null;
        rc = render_cell(q, chunk, c, row, SILT_RENDER_TEXT, &null);
        if (rc == 0 && c)
            rc = silt_buf_putc(&a->line, ',');
        if (rc == 0 && !null)
            rc = put_csv_field(&a->line, q->cell.data ? q->cell.data : "", q->cell.len);
    }
    if (rc == 0)
        rc = silt_buf_putc(&a->line, '\n');
    if (rc == 0)
        q->written++;
    return rc ? (rc == SILT_ENOMEM ? silt_err(rc, "sql: out of memory") : rc) : flush_line(q, a);
}

static int json_row(qout *q, duckdb_data_chunk chunk, idx_t row, void *arg)
{
    stream_arg *a = arg;
    bool array = q->o->fmt == SILT_QFMT_JSON;
    int rc = array ? silt_buf_puts(&a->line, a->n++ ? ",\n{" : "[\n{") : silt_buf_putc(&a->line, '{');
    for (size_t c = 0; rc == 0 && c < q->ncols; c++) {
        bool null;
        rc = render_cell(q, chunk, c, row, SILT_RENDER_JSON, &null);
        if (rc == 0 && c)
            rc = silt_buf_putc(&a->line, ',');
        if (rc == 0)
            rc = silt_render_json_string(&a->line, q->cols[c].name, strlen(q->cols[c].name));
        if (rc == 0)
            rc = silt_buf_putc(&a->line, ':');
        if (rc == 0)
            rc = null ? silt_buf_puts(&a->line, "null") : silt_buf_append(&a->line, q->cell.data, q->cell.len);
    }
    if (rc == 0)
        rc = silt_buf_puts(&a->line, array ? "}" : "}\n");
    if (rc == 0)
        q->written++;
    return rc ? (rc == SILT_ENOMEM ? silt_err(rc, "sql: out of memory") : rc) : flush_line(q, a);
}

static int64_t write_stream(FILE *f, qout *q)
{
    stream_arg a = {.f = f, .line = SILT_BUF_INIT};
    int rc = 0;
    if (q->o->fmt == SILT_QFMT_CSV) {
        for (size_t c = 0; rc == 0 && c < q->ncols; c++) {
            if (c)
                rc = silt_buf_putc(&a.line, ',');
            if (rc == 0)
                rc = put_csv_field(&a.line, q->cols[c].name, strlen(q->cols[c].name));
        }
        if (rc == 0)
            rc = silt_buf_putc(&a.line, '\n');
        if (rc < 0) {
            silt_buf_free(&a.line);
            return silt_err(SILT_ENOMEM, "sql: out of memory");
        }
        flush_line(q, &a);
    }
    int64_t n = for_each_row(q, q->o->fmt == SILT_QFMT_CSV ? csv_row : json_row, &a);
    silt_buf_free(&a.line);
    if (n >= 0 && q->o->fmt == SILT_QFMT_JSON) {
        fputs(n ? "\n]\n" : "[]\n", f);
        q->bytes += 3; /* "\n]\n" or "[]\n" */
    }
    if (n >= 0)
        report(q, (uint64_t)n, true);
    return n;
}

/* ---- json-aos, json-soa, json-aoa (the ODF node API) ------------------------------ */

typedef struct shape_arg {
    FILE *f;
    silt_buf *cols; /* json-soa: the values of each column so far */
    int64_t n;
} shape_arg;

static int put_json_name(silt_buf *b, const char *name)
{
    return silt_render_json_string(b, name, strlen(name));
}

/* One row of json-aos / json-aoa written at once, or appended to the
 * columns of json-soa. */
static int shape_row(qout *q, duckdb_data_chunk chunk, idx_t row, void *arg)
{
    shape_arg *a = arg;
    silt_qfmt fmt = q->o->fmt;
    silt_buf line = SILT_BUF_INIT;
    int rc = fmt == SILT_QFMT_JSON_SOA ? 0 : silt_buf_puts(&line, fmt == SILT_QFMT_JSON_AOA ? "[" : "{");
    if (rc == 0 && a->n && fmt != SILT_QFMT_JSON_SOA)
        fputc(',', a->f);
    for (size_t c = 0; rc == 0 && c < q->ncols; c++) {
        bool null;
        rc = render_cell(q, chunk, c, row, SILT_RENDER_JSON, &null);
        silt_buf *b = fmt == SILT_QFMT_JSON_SOA ? &a->cols[c] : &line;
        if (rc == 0 && (fmt == SILT_QFMT_JSON_SOA ? a->n > 0 : c > 0))
            rc = silt_buf_putc(b, ',');
        if (rc == 0 && fmt == SILT_QFMT_JSON_AOS) {
            rc = put_json_name(b, q->cols[c].name);
            if (rc == 0)
                rc = silt_buf_putc(b, ':');
        }
        if (rc == 0)
            rc = null ? silt_buf_puts(b, "null") : silt_buf_append(b, q->cell.data, q->cell.len);
    }
    if (rc == 0 && fmt != SILT_QFMT_JSON_SOA) {
        rc = silt_buf_puts(&line, fmt == SILT_QFMT_JSON_AOA ? "]" : "}");
        if (rc == 0) {
            fwrite(line.data, 1, line.len, a->f);
            q->bytes += line.len + (a->n > 0);
            q->written++;
        }
    }
    silt_buf_free(&line);
    a->n++;
    return rc == SILT_ENOMEM ? silt_err(rc, "sql: out of memory") : rc;
}

/* Compact JSON without a trailing newline: [{"a":1},…], {"a":[1,…],…},
 * [[1,…],…]. json-soa holds the values until the end (the result is paged
 * by the caller). */
static int64_t write_shapes(FILE *f, qout *q)
{
    shape_arg a = {.f = f};
    bool soa = q->o->fmt == SILT_QFMT_JSON_SOA;
    if (soa) {
        a.cols = calloc(q->ncols ? q->ncols : 1, sizeof *a.cols);
        if (!a.cols)
            return silt_err(SILT_ENOMEM, "sql: out of memory");
    } else {
        fputc('[', f);
        q->bytes++;
    }
    int64_t n = for_each_row(q, shape_row, &a);
    if (n >= 0 && soa) {
        fputc('{', f);
        for (size_t c = 0; c < q->ncols; c++) {
            silt_buf name = SILT_BUF_INIT;
            if (put_json_name(&name, q->cols[c].name) < 0) {
                n = silt_err(SILT_ENOMEM, "sql: out of memory");
                break;
            }
            fprintf(f, "%s%.*s:[", c ? "," : "", (int)name.len, name.data);
            silt_buf_free(&name);
            fwrite(a.cols[c].data ? a.cols[c].data : "", 1, a.cols[c].len, f);
            fputc(']', f);
        }
        fputc('}', f);
    } else if (n >= 0) {
        fputc(']', f);
        q->bytes++;
    }
    if (n >= 0)
        report(q, (uint64_t)n, true);
    for (size_t c = 0; soa && c < q->ncols; c++)
        silt_buf_free(&a.cols[c]);
    free(a.cols);
    return n;
}

/* ---- table ------------------------------------------------------------------------ */

/* A table cell: `n` bytes at `off` of the table's text; null = SQL NULL. */
typedef struct tcell {
    size_t off, n;
    bool null;
} tcell;

typedef struct table_arg {
    silt_buf text;
    tcell *cells;
    size_t n, cap;
} table_arg;

static int table_row(qout *q, duckdb_data_chunk chunk, idx_t row, void *arg)
{
    table_arg *t = arg;
    if (t->n + q->ncols > t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 64 + q->ncols;
        tcell *ncells = realloc(t->cells, nc * sizeof *ncells);
        if (!ncells)
            return silt_err(SILT_ENOMEM, "sql: out of memory");
        t->cells = ncells;
        t->cap = nc;
    }
    for (size_t c = 0; c < q->ncols; c++) {
        bool null;
        int rc = render_cell(q, chunk, c, row, SILT_RENDER_TEXT, &null);
        if (rc == 0 && q->cell.len && silt_buf_append(&t->text, q->cell.data, q->cell.len) < 0)
            rc = silt_err(SILT_ENOMEM, "sql: out of memory");
        if (rc < 0)
            return rc;
        t->cells[t->n++] = (tcell){t->text.len - q->cell.len, q->cell.len, null};
    }
    q->bytes = t->text.len - 1; /* the rendered values (text starts with a NUL) */
    return 0;
}

/* Display width: UTF-8 code points (a NUL byte is shown as one, U+2400). */
static size_t text_width(const char *p, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)p[i] & 0xC0) != 0x80)
            w++;
    return w;
}

/* Writes the value padded to `width` code points, or, when it is wider than
 * `limit` (0 = no limit), its first limit-1 code points and "…". A NUL byte
 * is shown as U+2400 SYMBOL FOR NULL ("␀"). */
static void put_padded(FILE *f, const char *p, size_t n, size_t width, size_t limit, bool right)
{
    size_t w = text_width(p, n);
    bool cut = limit && w > limit;
    if (cut)
        w = limit;
    if (right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        bool lead = ((unsigned char)p[i] & 0xC0) != 0x80;
        if (cut && lead && ++shown == limit)
            break;
        if (p[i] == '\0')
            fputs("\xe2\x90\x80", f);
        else
            fputc(p[i], f);
    }
    if (cut)
        fputs("\xe2\x80\xa6", f);
    if (!right)
        for (size_t i = w; i < width; i++)
            fputc(' ', f);
}

enum { MIN_COL_WIDTH = 4 };

/* Narrows the widest columns so that a line fits in `max` code points: all
 * columns wider than a cap C get C (or C+1, left to right, to use up the
 * room), and no column goes below MIN_COL_WIDTH (the line may then stay
 * wider than max). */
static void fit_widths(size_t *w, size_t ncols, size_t max)
{
    size_t sep = ncols ? 3 * (ncols - 1) : 0, total = sep, widest = 0;
    for (size_t c = 0; c < ncols; c++) {
        total += w[c];
        if (w[c] > widest)
            widest = w[c];
    }
    if (!max || total <= max || max <= sep)
        return;
    size_t room = max - sep, cap = MIN_COL_WIDTH;
    for (size_t lo = MIN_COL_WIDTH + 1, hi = widest; lo <= hi;) { /* largest cap that fits */
        size_t mid = lo + (hi - lo) / 2, sum = 0;
        for (size_t c = 0; c < ncols; c++)
            sum += w[c] < mid ? w[c] : mid;
        if (sum <= room) {
            cap = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    size_t used = 0;
    for (size_t c = 0; c < ncols; c++)
        used += w[c] < cap ? w[c] : cap;
    for (size_t c = 0; c < ncols; c++) {
        if (w[c] <= cap)
            continue;
        w[c] = cap;
        if (used < room) { /* was wider than cap: one more fits */
            w[c]++;
            used++;
        }
    }
}

static void put_table(FILE *f, qout *q, const table_arg *t, size_t nrows, const size_t *w, const size_t *natural)
{
    size_t ncols = q->ncols;
    for (size_t c = 0; c < ncols; c++) {
        if (c)
            fputs(" | ", f);
        const char *name = q->cols[c].name;
        put_padded(f, name, strlen(name), c + 1 < ncols ? w[c] : 0, w[c] < natural[c] ? w[c] : 0, false);
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
            tcell v = t->cells[r * ncols + c];
            bool right = q->cols[c].number;
            const char *p = v.null ? "NULL" : t->text.data + v.off;
            size_t n = v.null ? 4 : v.n;
            if (c)
                fputs(" | ", f);
            put_padded(f, p, n, (right || c + 1 < ncols) ? w[c] : 0, w[c] < natural[c] ? w[c] : 0, right);
        }
        fputc('\n', f);
    }
}

static int64_t write_table(FILE *f, qout *q)
{
    table_arg t = {.text = SILT_BUF_INIT};
    if (silt_buf_putc(&t.text, '\0') < 0) /* text.data is never NULL */
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    int64_t nrows = for_each_row(q, table_row, &t);
    size_t ncols = q->ncols;
    size_t *w = nrows >= 0 ? calloc(2 * (ncols ? ncols : 1), sizeof *w) : NULL;
    if (nrows >= 0 && !w)
        nrows = silt_err(SILT_ENOMEM, "sql: out of memory");
    if (nrows >= 0) {
        size_t *natural = w + ncols;
        for (size_t c = 0; c < ncols; c++) {
            natural[c] = text_width(q->cols[c].name, strlen(q->cols[c].name));
            for (size_t r = 0; r < (size_t)nrows; r++) {
                tcell v = t.cells[r * ncols + c];
                size_t vw = v.null ? 4 : text_width(t.text.data + v.off, v.n);
                if (vw > natural[c])
                    natural[c] = vw;
            }
            w[c] = natural[c];
        }
        fit_widths(w, ncols, q->o->max_width);
        report(q, (uint64_t)nrows, true); /* before the first line: a progress line can be erased */
        put_table(f, q, &t, (size_t)nrows, w, natural);
        q->written = (uint64_t)nrows;
    }
    free(w);
    free(t.cells);
    silt_buf_free(&t.text);
    return nrows;
}

/* ---- running --------------------------------------------------------------- */

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

/* Progress while DuckDB runs a statement: a ticker thread reports every
 * TICK_MS, while the caller's thread runs the statement (and works on its
 * tasks), the output file's size (a Parquet export, which DuckDB writes
 * inside one COPY statement) or 0 bytes (a text format still computing its
 * result), with unit "" (no rows known yet); a nonzero answer interrupts
 * the statement (duckdb_interrupt, which DuckDB allows from another
 * thread), so Ctrl-C stops a long query, not only its output. The first
 * report comes after `first_ms` (TICK_MS for Parquet; 1 s for a text
 * result, so quick queries report only their rows). The thread is joined
 * before the statement's caller goes on, so no callback outlives it. */
#define TICK_MS 200
#define TICK_FIRST_TEXT_MS 1000

typedef struct exec_ticker {
    const silt_query_out *o;
    silt_engine *e;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    long first_ms;
    const char *sized; /* the file whose size is reported (Parquet), or NULL: 0 bytes */
    atomic_bool canceled;
} exec_ticker;

static uint64_t file_size(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
}

static void *ticker_run(void *arg)
{
    exec_ticker *t = arg;
    pthread_mutex_lock(&t->lock);
    for (long wait_ms = t->first_ms; !t->stop; wait_ms = TICK_MS) {
        struct timespec dl;
        clock_gettime(CLOCK_REALTIME, &dl);
        dl.tv_sec += wait_ms / 1000;
        dl.tv_nsec += wait_ms % 1000 * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
        int w = 0;
        while (!t->stop && w != ETIMEDOUT)
            w = pthread_cond_timedwait(&t->cond, &t->lock, &dl);
        if (t->stop)
            break;
        pthread_mutex_unlock(&t->lock);
        /* unit "": the rows are known only at the end */
        silt_progress p = {.phase = t->o->phase ? t->o->phase : "sql", .unit = "",
                           .bytes = file_size(t->sized)};
        if (!atomic_load(&t->canceled) && t->o->progress(t->o->progress_ctx, &p)) {
            atomic_store(&t->canceled, true);
            duckdb_interrupt(silt_engine_conn(t->e));
        }
        pthread_mutex_lock(&t->lock);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

static bool ticker_start(exec_ticker *t, silt_engine *e, const silt_query_out *o, long first_ms,
                            const char *sized)
{
    memset(t, 0, sizeof *t);
    t->o = o;
    t->e = e;
    t->first_ms = first_ms;
    t->sized = sized;
    atomic_init(&t->canceled, false);
    if (!o->progress || pthread_mutex_init(&t->lock, NULL) != 0)
        return false;
    if (pthread_cond_init(&t->cond, NULL) != 0) {
        pthread_mutex_destroy(&t->lock);
        return false;
    }
    if (pthread_create(&t->thread, NULL, ticker_run, t) != 0) { /* no progress, still the export */
        pthread_cond_destroy(&t->cond);
        pthread_mutex_destroy(&t->lock);
        return false;
    }
    return true;
}

/* Stops and joins the ticker; returns whether it interrupted the statement. */
static bool ticker_stop(exec_ticker *t)
{
    pthread_mutex_lock(&t->lock);
    t->stop = true;
    pthread_cond_signal(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_cond_destroy(&t->cond);
    pthread_mutex_destroy(&t->lock);
    return atomic_load(&t->canceled);
}

static int run_parquet(silt_engine *e, duckdb_prepared_statement prep, const char *inner, const silt_query_out *o)
{
    if (duckdb_prepared_statement_type(prep) != DUCKDB_STATEMENT_TYPE_SELECT)
        return silt_err(SILT_EINVAL, "sql: only a query (SELECT) can be written as Parquet");
    char *qp = silt_sql_str(o->path);
    if (!qp)
        return SILT_ENOMEM;
    silt_buf b = SILT_BUF_INIT;
    /* written in place (no tmp_<name> beside it): a confined engine may
     * write exactly `path`; a failure removes it below */
    int rc = silt_buf_printf(&b, "COPY (%s\n) TO %s (FORMAT parquet, USE_TMP_FILE false)", inner, qp);
    free(qp);
    duckdb_result res;
    bool have_res = false;
    exec_ticker t;
    bool ticking = rc == 0 && ticker_start(&t, e, o, TICK_MS, o->path);
    if (rc == 0)
        rc = run_wrapper(e, b.data, DUCKDB_STATEMENT_TYPE_COPY, &res, &have_res);
    if (ticking && ticker_stop(&t))
        rc = silt_err(SILT_ECANCELED, "interrupted");
    uint64_t rows = rc == 0 ? duckdb_rows_changed(&res) : 0;
    if (o->rows_out)
        *o->rows_out = rows;
    if (have_res)
        duckdb_destroy_result(&res);
    silt_buf_free(&b);
    if (rc == 0 && o->progress) {
        silt_progress p = {.phase = o->phase ? o->phase : "sql", .unit = "rows", .done = rows, .total = rows,
                           .bytes = file_size(o->path)};
        o->progress(o->progress_ctx, &p);
    }
    if (rc)
        unlink(o->path);
    return rc;
}

/* Writes the result of an executed statement as text to `path` or o->out. */
static int write_text(duckdb_result *res, const silt_query_out *o)
{
    FILE *f = o->out ? o->out : stdout;
    if (o->path && !(f = fopen(o->path, "w")))
        return silt_err(SILT_EIO, "%s: cannot create: %s", o->path, strerror(errno));
    qout q;
    int rc = qout_open(&q, res, o);
    if (rc == 0) {
        int64_t n = o->fmt == SILT_QFMT_TABLE      ? write_table(f, &q)
                    : o->fmt >= SILT_QFMT_JSON_AOS ? write_shapes(f, &q)
                                                   : write_stream(f, &q);
        if (n < 0)
            rc = (int)n;
        if (o->rows_out && (n >= 0 || n == SILT_ECANCELED))
            *o->rows_out = n >= 0 ? (uint64_t)n : q.written;
        qout_close(&q);
    }
    if ((fflush(f) != 0 || ferror(f)) && rc == 0)
        rc = silt_err(SILT_EIO, "%s: write error: %s", o->path ? o->path : "output", strerror(errno));
    if (o->path) {
        if (fclose(f) != 0 && rc == 0)
            rc = silt_err(SILT_EIO, "%s: write error: %s", o->path, strerror(errno));
        if (rc)
            unlink(o->path);
    }
    return rc;
}

/* --format arrow: the rows of `sql` (a SELECT, already checked) as an Arrow
 * IPC stream, written piece by piece (one engine chunk at a time) to `path`
 * or o->out; a failed export leaves no file. */
static int write_arrow(silt_engine *e, const char *sql, const silt_query_out *o)
{
    FILE *f = o->out ? o->out : stdout;
    if (o->path && !(f = fopen(o->path, "wb")))
        return silt_err(SILT_EIO, "%s: cannot create: %s", o->path, strerror(errno));
    silt_rstream *s = NULL;
    int rc = silt_rstream_open(&s, e, sql, SILT_RSTREAM_ARROW, 0, "sql");
    silt_buf piece = SILT_BUF_INIT;
    while (rc == 0) {
        silt_buf_clear(&piece);
        int more = silt_rstream_next(s, &piece);
        if (more <= 0) {
            rc = more;
            break;
        }
        if (fwrite(piece.data, 1, piece.len, f) != piece.len)
            rc = silt_err(SILT_EIO, "%s: write error: %s", o->path ? o->path : "output", strerror(errno));
    }
    if (o->rows_out && s)
        *o->rows_out = silt_rstream_rows(s);
    silt_rstream_free(s);
    silt_buf_free(&piece);
    if ((fflush(f) != 0 || ferror(f)) && rc == 0)
        rc = silt_err(SILT_EIO, "%s: write error: %s", o->path ? o->path : "output", strerror(errno));
    if (o->path) {
        if (fclose(f) != 0 && rc == 0)
            rc = silt_err(SILT_EIO, "%s: write error: %s", o->path, strerror(errno));
        if (rc)
            unlink(o->path);
    }
    return rc;
}

int silt_query_stream_open(silt_rstream **out, silt_engine *e, const char *sql)
{
    *out = NULL;
    char *inner = strip_query(sql);
    if (!inner)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    duckdb_prepared_statement prep = NULL;
    int rc = silt_engine_prepare(e, inner, "sql", SILT_PREP_USER, DUCKDB_STATEMENT_TYPE_INVALID, &prep);
    if (rc == 0 && duckdb_prepared_statement_type(prep) != DUCKDB_STATEMENT_TYPE_SELECT)
        rc = silt_err(SILT_EINVAL, "sql: an Arrow stream needs a SELECT query");
    duckdb_destroy_prepare(&prep);
    if (rc == 0)
        rc = silt_rstream_open(out, e, inner, SILT_RSTREAM_ARROW, 0, "sql");
    free(inner);
    return rc;
}

int silt_query_exec(silt_engine *e, const char *sql, const silt_query_out *o)
{
    if (o->rows_out)
        *o->rows_out = 0;
    if (o->fmt == SILT_QFMT_PARQUET && !o->path)
        return silt_err(SILT_EINVAL, "sql: format parquet needs an output file");
    char *inner = strip_query(sql);
    if (!inner)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    duckdb_prepared_statement prep = NULL;
    int rc = silt_engine_prepare(e, inner, "sql", SILT_PREP_USER | SILT_PREP_EXPLAIN,
                                 DUCKDB_STATEMENT_TYPE_INVALID, &prep);
    const silt_query_page *pg = o->page;
    if (rc == 0 && o->fmt == SILT_QFMT_ARROW && duckdb_prepared_statement_type(prep) != DUCKDB_STATEMENT_TYPE_SELECT)
        rc = silt_err(SILT_EINVAL, "sql: format arrow needs a SELECT query");
    char *paged = NULL; /* the query with silt's LIMIT / OFFSET (for the Arrow stream, which prepares its own) */
    if (rc == 0 && pg && (pg->has_limit || pg->skip) &&
        duckdb_prepared_statement_type(prep) == DUCKDB_STATEMENT_TYPE_SELECT) {
        /* the page inside the engine, which stops early: the checked user
         * query becomes a subquery of silt's LIMIT / OFFSET */
        silt_buf w = SILT_BUF_INIT;
        rc = silt_buf_printf(&w, "SELECT * FROM (%s\n) AS __silt_q", inner);
        if (rc == 0 && pg->has_limit)
            rc = silt_buf_printf(&w, " LIMIT %llu", (unsigned long long)pg->limit);
        if (rc == 0 && pg->skip)
            rc = silt_buf_printf(&w, " OFFSET %llu", (unsigned long long)pg->skip);
        if (rc == 0) {
            duckdb_destroy_prepare(&prep);
            rc = silt_engine_prepare(e, w.data, "sql", 0, DUCKDB_STATEMENT_TYPE_SELECT, &prep);
        } else {
            rc = silt_err(SILT_ENOMEM, "sql: out of memory");
        }
        paged = silt_buf_detach(&w);
        silt_buf_free(&w);
    }
    if (rc == 0 && o->fmt == SILT_QFMT_ARROW) {
        duckdb_destroy_prepare(&prep); /* the stream prepares (and may wrap) it again */
        rc = write_arrow(e, paged ? paged : inner, o);
    } else if (rc == 0 && o->fmt == SILT_QFMT_PARQUET) {
        rc = run_parquet(e, prep, inner, o);
    } else if (rc == 0) {
        duckdb_result res;
        exec_ticker t;
        bool ticking = ticker_start(&t, e, o, TICK_FIRST_TEXT_MS, NULL);
        if (duckdb_execute_prepared(prep, &res) == DuckDBError)
            rc = silt_engine_error(e, &res, "sql");
        if (ticking && ticker_stop(&t))
            rc = silt_err(SILT_ECANCELED, "interrupted");
        else if (rc == 0)
            rc = write_text(&res, o);
        duckdb_destroy_result(&res);
    }
    duckdb_destroy_prepare(&prep);
    free(paged);
    free(inner);
    return rc;
}

int silt_query_run(silt_engine *e, const char *sql, silt_qfmt fmt, FILE *out, const char *path,
                   uint64_t *rows_out)
{
    silt_query_out o = {.fmt = fmt, .out = out, .path = path, .rows_out = rows_out};
    return silt_query_exec(e, sql, &o);
}

int silt_query_run_page(silt_engine *e, const char *sql, silt_qfmt fmt, FILE *out, const char *path,
                        uint64_t *rows_out, const silt_query_page *page)
{
    silt_query_out o = {.fmt = fmt, .out = out, .path = path, .rows_out = rows_out, .page = page};
    return silt_query_exec(e, sql, &o);
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
