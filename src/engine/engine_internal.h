/* engine_internal.h — for src/engine/ modules only: the DuckDB handles. */
#ifndef SILT_ENGINE_INTERNAL_H
#define SILT_ENGINE_INTERNAL_H

#include <duckdb.h>

#include "engine/engine.h"
#include "util/buf.h"

duckdb_connection silt_engine_conn(silt_engine *e);

/* Records DuckDB's error of `res` (first line) as the silt error; returns the code. */
int silt_engine_result_error(duckdb_result *res, const char *context);

/* The same for a result of engine `e`: on a confined engine a file DuckDB
 * refused reads "reading files is not allowed: … (<hint_files>)". */
int silt_engine_error(silt_engine *e, duckdb_result *res, const char *context);

/* Records the DuckDB error type of the last engine error (limits.c). */
void silt_engine_note_error_type(int duckdb_error_type);

/* May a C table function of silt (silt_read_avro) read `path`? Always on an
 * engine that is not confined; on a confined one only the exact paths it
 * allowed (silt_engine_allow_file and the confine options' files). */
bool silt_engine_may_read(silt_engine *e, const char *path);

/* Flags of silt_engine_prepare. */
enum {
    SILT_PREP_USER = 1,    /* a user's statement: on a confined engine only a read-only query */
    SILT_PREP_EXPLAIN = 2, /* with SILT_PREP_USER: EXPLAIN [ANALYZE] <query> is accepted too */
};

/* Prepares the single statement of `sql` into *prep (caller destroys it
 * with duckdb_destroy_prepare; NULL on error). Errors are prefixed with
 * `context`. With `expect` other than DUCKDB_STATEMENT_TYPE_INVALID the
 * statement must be of that type (silt's own wrapper around a checked user
 * query: SILT_EINTERNAL otherwise). */
int silt_engine_prepare(silt_engine *e, const char *sql, const char *context, int flags,
                        duckdb_statement_type expect, duckdb_prepared_statement *prep);


#endif
