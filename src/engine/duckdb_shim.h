/* duckdb_shim.h — libduckdb is loaded when the first engine opens, not when
 * silt starts.
 *
 * silt does not link libduckdb: tools/gen_duckdb_shim.py generates, for each
 * DuckDB C API function the engine sources use, a hidden wrapper of the same
 * name calling through a pointer table (duckdb_shim_gen.c, in the build tree),
 * and silt_duckdb_load fills that table with dlsym. Commands that never query
 * (log, list, info, files, …) therefore never map or relocate the library.
 *
 * Invariant: no duckdb_* function is called before silt_duckdb_load returned
 * 0. silt_engine_open calls it first, and every DuckDB handle silt holds comes
 * from an engine, so this holds by construction.
 */
#ifndef SILT_ENGINE_DUCKDB_SHIM_H
#define SILT_ENGINE_DUCKDB_SHIM_H

/* The library's name as dlopen looks it up: the loader searches
 * LD_LIBRARY_PATH, then the RUNPATH of the program (the build tree's DuckDB
 * directory, or $ORIGIN/../lib once installed), then the system's paths. */
#define SILT_DUCKDB_LIBRARY "libduckdb.so"

typedef struct silt_duckdb_sym {
    const char *name; /* duckdb_… */
    void **slot;      /* its entry in the pointer table */
} silt_duckdb_sym;

/* The functions silt uses, ended by {NULL, NULL} (generated). */
extern const silt_duckdb_sym silt_duckdb_syms[];

/* Loads libduckdb and resolves every function of silt_duckdb_syms, once per
 * process (thread-safe; later calls return 0 at once). On failure nothing
 * stays loaded, a later call tries again, and the error is one line naming
 * the library: SILT_EIO when it cannot be loaded ("cannot load the DuckDB
 * library libduckdb.so: <dlerror> (…what to do…)"), SILT_EUNSUPPORTED when it
 * lacks a function silt needs (another DuckDB version). */
int silt_duckdb_load(void);

#endif
