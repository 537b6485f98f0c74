/* query.h — the query side of the engine: dataset views over Parquet slices,
 * the current-state projection of a changelog, and running one SQL statement
 * with its result written as text (table, CSV, JSON, NDJSON) or Parquet.
 *
 * Output formats (docs in silt.h, `silt sql`); every value of every text
 * format is rendered from the result vectors by render.h:
 *  - table: header line, a separator line of '-' and '+', then one line per
 *    row; columns separated by " | ", numbers right-aligned, everything else
 *    left-aligned, widths in UTF-8 code points; SQL NULL is shown as "NULL",
 *    a NUL byte inside a value as U+2400 "␀" (one column wide); values are
 *    SILT_RENDER_TEXT (nested values as compact JSON); with a max_width the
 *    widest columns are narrowed so that a line fits and longer values (and
 *    names) are cut, ending in "…";
 *  - csv: RFC 4180 with a header line; values SILT_RENDER_TEXT; NULL is an
 *    empty field, an empty string is written as "" (quoted); fields holding
 *    ',', '"', CR, LF or a NUL byte are quoted with "" escaping, and every
 *    byte of the value is written as it is (a NUL byte too); lines end with
 *    "\n";
 *  - json: one array of objects "[\n{...},\n{...}\n]\n" ("[]\n" when empty);
 *    ndjson: one object per line; keys are the column names in order,
 *    values SILT_RENDER_JSON;
 *  - parquet: COPY of the result to a file (needs a path).
 *
 * Errors: negative SILT_E* after silt_err(); engine errors are the first line
 * of DuckDB's message prefixed with "sql: ".
 */
#ifndef SILT_ENGINE_QUERY_H
#define SILT_ENGINE_QUERY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/engine.h"
#include "silt.h"

typedef enum silt_qfmt {
    SILT_QFMT_TABLE = 0,
    SILT_QFMT_CSV,
    SILT_QFMT_JSON,
    SILT_QFMT_NDJSON,
    SILT_QFMT_PARQUET,
    /* compact JSON for the ODF node API (kamu's dataFormat), no trailing
     * newline: json-aos [{"a":1},…], json-soa {"a":[1,…],…}, json-aoa
     * [[1,…],…]; values as in json */
    SILT_QFMT_JSON_AOS,
    SILT_QFMT_JSON_SOA,
    SILT_QFMT_JSON_AOA,
    /* an Arrow IPC stream (uncompressed; the writer of readTable,
     * arrow_stream.h): one RecordBatch per engine chunk of 2048 rows */
    SILT_QFMT_ARROW,
} silt_qfmt;

/* "table" | "csv" | "json" | "ndjson" | "parquet" | "json-aos" | "json-soa"
 * | "json-aoa" (NULL = table). SILT_EINVAL "unknown output format 'x' (use
 * table, csv, json, ndjson or parquet)" otherwise. */
int silt_qfmt_parse(const char *name, silt_qfmt *out);

/* Checks a user's query as silt_query_exec does (one statement, read-only
 * when the engine is confined) and starts it as an Arrow stream
 * (arrow_stream.h; errors prefixed "sql:"): SILT_EINVAL "sql: an Arrow
 * stream needs a SELECT query" for any other statement. Caller owns *out. */
struct silt_rstream;
int silt_query_stream_open(struct silt_rstream **out, silt_engine *e, const char *sql);

/* A page of the result of a query: `skip` rows left out, then at most
 * `limit` rows (when has_limit). Applied inside the engine to a SELECT-like
 * statement (silt's wrapper gets LIMIT/OFFSET, so the engine stops early);
 * other statements (EXPLAIN) are not paged. */
typedef struct silt_query_page {
    uint64_t skip;
    bool has_limit;
    uint64_t limit;
} silt_query_page;

/* Where and how silt_query_exec writes a result.
 *  fmt: the format; out: the stream for text (NULL = stdout) unless `path`
 *  (created/truncated; removed again on failure) is given;
 *  rows_out (may be NULL): receives the number of result rows;
 *  max_width (table only): the width of a line in code points that values
 *    are cut to fit (0 = no limit: every value whole);
 *  op_column (table only, may be NULL): a UTINYINT column of that name is
 *    shown as the ODF op names +A, -R, -C, +C (0..3) instead of numbers. */
typedef struct silt_query_out {
    silt_qfmt fmt;
    FILE *out;
    const char *path;
    uint64_t *rows_out;
    size_t max_width;
    const char *op_column;
    const silt_query_page *page; /* NULL = every row */
    /* Progress (may be NULL; silt.h, silt_sql_opts; parquet: the file's
     * size from a ticker thread, see run_parquet). The text formats:
     * called after every chunk of result rows with phase `phase`, unit
     * "rows", done = rows written (table: rendered), bytes = bytes written
     * (table: of the rendered values), and once more with total = done when
     * every row is in (the table before its first line). A nonzero return
     * (except to that last call) stops the output: SILT_ECANCELED
     * "interrupted", *rows_out = the rows written before it. */
    silt_progress_fn progress;
    void *progress_ctx;
    const char *phase;
} silt_query_out;

/* Runs exactly one SQL statement and writes its result as `o` says (see
 * silt_query_run for the rules). */
int silt_query_exec(silt_engine *e, const char *sql, const silt_query_out *o);

/* Runs exactly one SQL statement and writes its result in `fmt`, to `path`
 * when non-NULL (created/truncated; removed again on failure), else to `out`.
 * Parquet needs `path` (SILT_EINVAL otherwise; on a confined engine `path`
 * must be one of its allowed files, as DuckDB writes it). `rows_out` (may be
 * NULL) receives the number of result rows. A query with several statements
 * is SILT_EINVAL "sql: only one statement is allowed (got N)". On a confined
 * engine (engine.h) the statement must be a query (SELECT …) or EXPLAIN
 * [ANALYZE] of one; anything else is refused before it runs. This is the one
 * entry point for queries of users: `silt sql`, `silt tail` and the coming
 * `silt serve` query endpoint. */
int silt_query_run(silt_engine *e, const char *sql, silt_qfmt fmt, FILE *out, const char *path,
                   uint64_t *rows_out);


/* silt_query_run with a page (NULL = every row). */
int silt_query_run_page(silt_engine *e, const char *sql, silt_qfmt fmt, FILE *out, const char *path,
                        uint64_t *rows_out, const silt_query_page *page);

/* Names of the system columns of a dataset (its SetVocab, or the ODF
 * defaults offset, op, system_time, event_time). Borrowed strings. */
typedef struct silt_vocab_names {
    const char *offset;
    const char *op;
    const char *system_time;
    const char *event_time;
} silt_vocab_names;

/* CREATE OR REPLACE TEMP VIEW `view` over the Parquet slice files `files`
 * (in offset order) read with union_by_name, records in file order; the
 * files are registered with silt_engine_allow_file, so the view can be
 * queried once the engine is confined (which must not have happened yet). The
 * offset and op columns are cast to UBIGINT / UTINYINT so slices written with
 * Int64 offsets / Int32 ops read the same. When `min_offset` is non-zero only
 * records with offset >= min_offset are kept. n must be > 0. */
int silt_query_create_slice_view(silt_engine *e, const char *view, const char *const *files,
                                 size_t n, const silt_vocab_names *vocab, uint64_t min_offset);

/* CREATE OR REPLACE TEMP VIEW `view` with no rows whose columns are the
 * DuckDB column list `columns` ("\"a\" BIGINT, \"b\" VARCHAR"); the offset
 * and op columns, when present, get the types of a slice view. */
int silt_query_create_empty_view(silt_engine *e, const char *view, const char *columns);

/* CREATE OR REPLACE TEMP VIEW `view` = the current state of the changelog
 * in view `source`: for every distinct tuple of all columns except offset,
 * op and system_time, net = #(+A, +C) - #(-R, -C); the tuple is kept net
 * times, as its `net` latest additions (with their offset, op and
 * system_time), ordered by offset. NULLs compare equal. */
int silt_query_create_current_view(silt_engine *e, const char *view, const char *source,
                                   const silt_vocab_names *vocab);

/* Creates the table macro current_state(name) = SELECT * FROM "name:current"
 * (the view must exist when the macro is used). */
int silt_query_create_current_macro(silt_engine *e);

#endif
