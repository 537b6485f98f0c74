/* engine.h — the embedded SQL engine (DuckDB) behind a narrow interface.
 *
 * One engine per process: an in-memory DuckDB database with a memory limit
 * and a spill directory inside the workspace, so inputs larger than memory
 * work. Only files under src/engine/ include duckdb.h; everything else talks
 * SQL text and silt types through this header.
 *
 * Errors from DuckDB become SILT_EINVAL (bad query / bad data) or SILT_EIO,
 * with DuckDB's message as the silt error message (first line only).
 */
#ifndef SILT_ENGINE_H
#define SILT_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct silt_engine silt_engine;

typedef struct silt_engine_opts {
    const char *spill_dir;    /* temp_directory for spilling; NULL = DuckDB default */
    const char *memory_limit; /* e.g. "1536MB"; NULL = $SILT_MEMORY_LIMIT or "1536MB" */
    int threads;              /* 0 = number of cores */
} silt_engine_opts;

/* Opens a new in-memory engine. Caller owns *out (silt_engine_free). */
int silt_engine_open(silt_engine **out, const silt_engine_opts *opts);
void silt_engine_free(silt_engine *e);

/* Runs one or more statements, discarding results. */
int silt_engine_exec(silt_engine *e, const char *sql);
int silt_engine_execf(silt_engine *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* First column of the first row as text (malloc'd; NULL value -> *out NULL,
 * returns 0). SILT_ENOTFOUND when the query returns no rows. */
int silt_engine_query_text(silt_engine *e, char **out, const char *sql);
/* First column of the first row as an unsigned / signed integer. */
int silt_engine_query_u64(silt_engine *e, uint64_t *out, const char *sql);
int silt_engine_query_i64(silt_engine *e, int64_t *out, const char *sql);

/* Runs a query and calls `row` for every row with the values as text
 * (NULL for SQL NULL); ncols/names describe the columns. Stops early when the
 * callback returns non-zero (that value is returned). */
typedef int (*silt_engine_row_fn)(void *ctx, size_t ncols, const char *const *names,
                                  const char *const *values);
int silt_engine_query_rows(silt_engine *e, const char *sql, silt_engine_row_fn row, void *ctx);

/* SQL quoting; results are malloc'd (caller frees), NULL on ENOMEM. */
char *silt_sql_ident(const char *name); /* "name" with "" escaping */
char *silt_sql_str(const char *s);      /* 'text' with '' escaping */

#endif
