/* compat.h — running the SQL of kamu's other engines on DuckDB.
 *
 * A manifest names the engine of its preprocess / transform queries
 * (`engine: datafusion`, `spark`, `flink`, `risingwave`, `duckdb`); silt runs
 * every one of them on DuckDB. For the others the query text goes through a
 * token-level rewrite (compat_rewrite.c) that quotes identifiers the way
 * DuckDB needs them and routes the dialect's functions whose DuckDB namesake
 * differs to silt's own macros (`silt_df_*`, `silt_java_*`, registered by
 * silt_compat_register), whose pattern arguments are translated at bind time
 * by the C scalar functions silt_chrono_fmt / silt_java_fmt (compat_fmt.c).
 * String literals and comments are never changed, except where a dialect
 * spells a literal differently (Spark's "…" and backslash escapes: same value,
 * DuckDB's spelling) and the type literal of arrow_cast, which becomes the
 * DuckDB type it names. The stored manifest keeps the text as written.
 * Details and limits: docs/transforms.md "SQL of other engines".
 */
#ifndef SILT_ENGINE_COMPAT_H
#define SILT_ENGINE_COMPAT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/engine.h"
#include "odf/odf_types.h"
#include "util/arena.h"

typedef enum silt_dialect {
    SILT_DIALECT_DUCKDB = 0, /* also an absent or unknown engine name: no rewrite */
    SILT_DIALECT_DATAFUSION,
    SILT_DIALECT_SPARK,
    SILT_DIALECT_FLINK,
    SILT_DIALECT_RISINGWAVE,
} silt_dialect;

/* The dialect of an `engine:` name (case-insensitive; NULL = DuckDB). */
silt_dialect silt_dialect_of(const char *engine);

/* Is `engine` one whose SQL runs through the compatibility layer? */
bool silt_compat_is_foreign(const char *engine);

/* Pattern translators: *out is a malloc'd strftime/strptime pattern of
 * DuckDB (caller frees). SILT_EINVAL naming the specifier for one DuckDB
 * cannot express ("unsupported chrono specifier '%s' in '%s'",
 * "unsupported pattern letter 'G' (era) in 'G yyyy'"). */
int silt_compat_chrono_to_strftime(const char *fmt, char **out);
int silt_compat_java_to_strftime(const char *fmt, char **out);

/* What a rewrite did (for tests and the fuzz target). */
typedef struct silt_compat_stats {
    size_t renamed;      /* function calls routed to silt_df_* / silt_java_* */
    size_t quoted;       /* reserved words and backtick identifiers quoted */
    size_t arrow_casts;  /* arrow_cast calls turned into CAST (their type literal consumed) */
    size_t respelled;    /* literals re-spelled for DuckDB (Spark "…" and \ escapes) */
} silt_compat_stats;

/* Rewrites `sql` of dialect d into DuckDB SQL: *out malloc'd (caller
 * frees); `stats` may be NULL. SILT_EINVAL for an unterminated literal,
 * quoted identifier or block comment, an arrow_cast whose type is not a
 * literal DuckDB has a type for, or a pattern literal with a specifier
 * DuckDB cannot express ("to_date: unsupported pattern letter 'G' (era) in
 * 'G yyyy'"). For SILT_DIALECT_DUCKDB a copy. */
int silt_compat_rewrite(silt_dialect d, const char *sql, char **out, silt_compat_stats *stats);

/* Token kinds of the rewrite's tokenizer (exposed for the fuzz target). */
typedef enum silt_sqltok_kind {
    SILT_TOK_SPACE, SILT_TOK_COMMENT, SILT_TOK_STRING, SILT_TOK_QIDENT, SILT_TOK_BACKTICK,
    SILT_TOK_WORD, SILT_TOK_NUMBER, SILT_TOK_PUNCT,
} silt_sqltok_kind;

typedef struct silt_sqltok {
    silt_sqltok_kind kind;
    size_t off, len;
} silt_sqltok;

/* Splits sql into tokens of dialect d (*toks malloc'd, caller frees).
 * SILT_EINVAL for an unterminated literal / identifier / comment. */
int silt_compat_tokenize(silt_dialect d, const char *sql, silt_sqltok **toks, size_t *n);

/* The value of a string token of dialect d (malloc'd; caller frees). */
char *silt_compat_string_value(silt_dialect d, const char *tok, size_t len);

/* Registers silt_chrono_fmt, silt_java_fmt and the silt_df_* / silt_java_*
 * macros in engine e (idempotent). */
int silt_compat_register(silt_engine *e);

/* Runs the rewrite over the query and step queries of `in` (when its
 * engine is not DuckDB) and drops the result: the errors silt_compat_prepare
 * would give for the text itself, without an engine, named the same way
 * ("<context> '<alias>': …"). For `silt add` / `silt append`. */
int silt_compat_check(const odf_TransformSql *in, const char *context);

/* The hook of the preprocess step and of the transform: when the engine of
 * `in` is not DuckDB, registers the compatibility functions in e and sets
 * *out to a copy (in arena a) whose query and step queries are rewritten;
 * otherwise *out = in. `in` itself is never changed. Errors name the step
 * ("<context> '<alias>': …"). */
int silt_compat_prepare(silt_engine *e, silt_arena *a, const odf_TransformSql *in,
                        const odf_TransformSql **out, const char *context);

#endif
