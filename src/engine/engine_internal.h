/* engine_internal.h — for src/engine/ modules only: the DuckDB handles. */
#ifndef SILT_ENGINE_INTERNAL_H
#define SILT_ENGINE_INTERNAL_H

#include <duckdb.h>

#include "engine/engine.h"

duckdb_connection silt_engine_conn(silt_engine *e);

/* Records DuckDB's error of `res` (first line) as the silt error; returns the code. */
int silt_engine_result_error(duckdb_result *res, const char *context);

#endif
