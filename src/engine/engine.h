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

/* Opens a new in-memory engine. Caller owns *out (silt_engine_free). The
 * first call of the process loads libduckdb (duckdb_shim.h): SILT_EIO when
 * it cannot be loaded, SILT_EUNSUPPORTED when it is another DuckDB version. */
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

/* ---- confinement: queries written by someone else ---------------------------
 *
 * A query of a user (`silt sql`, a preprocess step, later `silt serve`) runs
 * on a confined engine. Confining sets DuckDB's allowed_paths (the files of
 * silt_engine_allow_file plus `files`), allowed_directories (`dirs`),
 * autoload/autoinstall of extensions and community extensions off,
 * enable_external_access = false and finally lock_configuration = true: from
 * then on the engine reads and writes only those paths and its spill
 * directory (DuckDB allows its temp_directory itself), loads no extension,
 * and no statement can change a setting back. It is irreversible and holds
 * for everything the engine runs, so silt does its own file work (views that
 * materialise files, checkpoints it reads at a path it did not allow) first,
 * then confines, then runs the user's statement.
 *
 * Views over files are lazy: silt_query_create_slice_view registers the
 * slice files it reads (silt_engine_allow_file), so a confined engine can
 * read exactly the files of the datasets whose views were created. Files
 * registered after confinement are an error (they could not be read).
 *
 * On a confined engine a user statement must be exactly one read-only query:
 * its text is split and prepared by DuckDB (duckdb_extract_statements,
 * duckdb_prepare_extracted_statement) and only DUCKDB_STATEMENT_TYPE_SELECT
 * (SELECT, FROM, VALUES, WITH, DESCRIBE, SHOW, SUMMARIZE, PIVOT … IN …) is
 * accepted, plus EXPLAIN [ANALYZE] of such a query where the caller allows it.
 * Refusals are one line: "<context>: only one statement is allowed (got 2)",
 * "<context>: COPY is not allowed in a query (<hint_write>)", "<context>:
 * ATTACH is not allowed in a query (<hint_other>)", and a file DuckDB refused
 * "<context>: reading files is not allowed: <DuckDB's message> (<hint_files>)".
 */
typedef struct silt_confine_opts {
    const char *const *files; /* further exact paths it may read and write (e.g. the --output file) */
    size_t n_files;
    const char *const *dirs;  /* directories it may read and write, and everything below */
    size_t n_dirs;
    const char *hint_write;   /* advice for COPY/EXPORT refusals (NULL = none) */
    const char *hint_other;   /* advice for other refused statements (NULL = none) */
    const char *hint_files;   /* advice when DuckDB refuses a file (NULL = none) */
} silt_confine_opts;

/* Lets a confined engine read `path` (as spelled: DuckDB compares the exact
 * string, so use the same spelling in the SQL). SILT_EINTERNAL once the
 * engine is confined. */
int silt_engine_allow_file(silt_engine *e, const char *path);

/* Confines the engine (see above). `o` may be NULL (no further paths, no
 * hints). Irreversible; a second call is SILT_EINTERNAL. */
int silt_engine_confine(silt_engine *e, const silt_confine_opts *o);
bool silt_engine_is_confined(const silt_engine *e);

/* Checks that `sql` is exactly one statement (any kind on an engine that is
 * not confined; one read-only SELECT on a confined engine) that DuckDB can
 * prepare. Errors are prefixed with `context` ("sql", "preprocess query
 * 'x'"). Preparing binds the statement, so call this on the confined engine:
 * binding a table function may already open its files. */
int silt_engine_check_query(silt_engine *e, const char *sql, const char *context);

/* CREATE OR REPLACE TEMP VIEW (or TABLE when `table`) `name` AS the user
 * query `sql`, which must pass silt_engine_check_query; the wrapped statement
 * is itself checked to be one CREATE before it runs. */
int silt_engine_create_from_query(silt_engine *e, const char *name, bool table, const char *sql,
                                  const char *context);

/* ---- per-query limits (limits.c) ------------------------------------------- */

/* A watchdog for one statement: after timeout_ms it interrupts whatever the
 * engine runs (duckdb_interrupt; again every 20 ms until stopped), so the
 * statement fails with DuckDB's "Interrupted" error. Caller stops it with
 * silt_engine_watch_stop, which joins the thread, frees it and returns
 * whether it fired (the caller then reports the timeout). */
typedef struct silt_engine_watch silt_engine_watch;
int silt_engine_watch_start(silt_engine_watch **out, silt_engine *e, uint32_t timeout_ms);
bool silt_engine_watch_stop(silt_engine_watch *w);

/* Was the last engine error on this thread DuckDB running out of memory
 * (its memory_limit)? Recorded by every engine error. */
bool silt_engine_last_error_was_oom(void);

/* SQL quoting; results are malloc'd (caller frees), NULL on ENOMEM. */
char *silt_sql_ident(const char *name); /* "name" with "" escaping */
char *silt_sql_str(const char *s);      /* 'text' with '' escaping */

#endif
