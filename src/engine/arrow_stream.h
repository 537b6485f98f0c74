/* arrow_stream.h — one SELECT of silt's own, run as a DuckDB streaming
 * query and encoded piece by piece as an Arrow IPC stream (arrow_ipc.h) or
 * as CSV (the csv format of query.h), for pull-style consumers
 * (silt_table_stream in src/ops/table.c, `silt read-table`, readTable of
 * `silt serve`).
 *
 * Memory is bounded by one DuckDB data chunk (STANDARD_VECTOR_SIZE = 2048
 * rows) and its encoding: the query is never materialised. Arrow: the
 * Schema message, then one RecordBatch per chunk, then the end-of-stream
 * marker; CSV: the header line, then the rows of one chunk per piece.
 *
 * The engine must outlive the stream; nothing else may run on it while
 * the stream is open (DuckDB allows one active result per connection).
 */
#ifndef SILT_ENGINE_ARROW_STREAM_H
#define SILT_ENGINE_ARROW_STREAM_H

#include <stddef.h>

#include "engine/engine.h"
#include "util/buf.h"

typedef enum silt_rstream_format { SILT_RSTREAM_ARROW = 0, SILT_RSTREAM_CSV = 1 } silt_rstream_format;

typedef struct silt_rstream silt_rstream;

/* Column names of view (or table) `view` of e, in order, appended to
 * `names` each followed by a NUL byte; returns the count. */
int silt_query_view_columns(silt_engine *e, const char *view, silt_buf *names);

/* Prepares `sql` (one SELECT) and starts it streaming; `what` (a static
 * string, "read-table" or "sql") prefixes its error messages. Errors of the
 * statement (binding, types the Arrow writer does not support) are
 * reported here, before any byte is produced. arrow_flags: flags of
 * silt_arrow_ipc_schema. Caller owns *out (silt_rstream_free). */
int silt_rstream_open(silt_rstream **out, silt_engine *e, const char *sql, silt_rstream_format fmt,
                      int arrow_flags, const char *what);

/* Appends the next piece of the encoding to `out`: 1 = a piece was
 * appended, 0 = the stream is complete (nothing appended), < 0 = error
 * while reading (the stream is then finished). */
int silt_rstream_next(silt_rstream *s, silt_buf *out);

/* Rows produced so far. */
uint64_t silt_rstream_rows(const silt_rstream *s);

/* An Arrow stream (SILT_RSTREAM_ARROW) through the C Data Interface
 * instead of IPC bytes: the result's schema (a fresh export each call; the
 * caller releases it), and the next chunk as one ArrowArray (a struct of
 * the columns; the caller releases it): 1 = filled, 0 = the end (out
 * zeroed), < 0 = error. Do not mix with silt_rstream_next. */
struct ArrowSchema;
struct ArrowArray;
int silt_rstream_arrow_schema(silt_rstream *s, struct ArrowSchema *out);
int silt_rstream_next_array(silt_rstream *s, struct ArrowArray *out);

void silt_rstream_free(silt_rstream *s);

#endif
