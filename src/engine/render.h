/* render.h — text of DuckDB values, read straight from result vectors: the
 * one value renderer of every text output format (query.c: table, CSV, JSON,
 * NDJSON).
 *
 * A renderer is built once per result column from its logical type (a tree
 * mirroring nested types) and then renders any row of a vector of that type.
 * Two styles:
 *  - SILT_RENDER_JSON: a JSON value. Integers, HUGEINT and DECIMAL are JSON
 *    numbers written exactly (DECIMAL with all its scale digits, e.g.
 *    12.300); FLOAT/DOUBLE the shortest text that reads back to the same
 *    value ("1.0", "0.1", "1e+20"), NaN and infinities null; BOOLEAN
 *    true/false; LIST and ARRAY arrays; STRUCT objects (field order kept);
 *    MAP an object when its keys are VARCHAR, else an array of
 *    {"key":…,"value":…}; UNION {"<member>": value}; a VARCHAR with the
 *    alias JSON is embedded as it is; everything else is a JSON string:
 *    VARCHAR, ENUM (its label), UUID (8-4-4-4-12 lower-case hex), BLOB
 *    (standard base64 with padding), BIT ("0101"), DATE (YYYY-MM-DD),
 *    TIME (HH:MM:SS with the shortest exact fraction of 0, 3, 6 or 9
 *    digits), TIME WITH TIME ZONE (that plus "+HH:MM"), TIMESTAMP of every
 *    precision and TIMESTAMPTZ (RFC 3339 UTC with 'Z', silt_time_format;
 *    "infinity"/"-infinity"), INTERVAL (ISO 8601 duration "P1Y2M3DT4H5M6.5S",
 *    "PT0S" for zero, a negative part with its own sign as in "P-1M2D");
 *    BIGNUM (VARINT) is a JSON number; SQL NULL at any depth is null;
 *  - SILT_RENDER_TEXT: a top-level value of a table or CSV cell: a scalar is
 *    its JSON text without the quotes (strings as they are, NaN as "nan",
 *    infinities as "inf"/"-inf"); a nested value (LIST, ARRAY, STRUCT, MAP,
 *    UNION) is its compact JSON text, as in SILT_RENDER_JSON.
 *
 * Invariants: a renderer owns copies of everything it needs from the type
 * (names, enum labels); it never keeps the vector. Vectors must be flat, as
 * those of result chunks are.
 */
#ifndef SILT_ENGINE_RENDER_H
#define SILT_ENGINE_RENDER_H

#include <stdbool.h>

#include <duckdb.h>

#include "util/buf.h"

typedef enum silt_render_style { SILT_RENDER_TEXT = 0, SILT_RENDER_JSON } silt_render_style;

typedef struct silt_render silt_render;

/* Builds the renderer of type `t` (borrowed). SILT_ENOMEM, or SILT_EUNSUPPORTED
 * "sql: cannot print values of type N (cast the column)" for a type it does
 * not know. Free with silt_render_free. */
int silt_render_new(silt_render **out, duckdb_logical_type t);
void silt_render_free(silt_render *r);

/* True for numeric types (right-aligned in a table). */
bool silt_render_is_number(const silt_render *r);

/* True when row `row` of `v` is SQL NULL. */
bool silt_render_is_null(duckdb_vector v, idx_t row);

/* Appends row `row` of vector `v` (of the renderer's type) to `b` in
 * `style`; a NULL appends "null" (callers print top-level NULLs
 * themselves). 0 or SILT_ENOMEM. */
int silt_render_put(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row,
                    silt_render_style style);

/* Appends `n` bytes at `s` as a JSON string: '"', '\\', \b \f \n \r \t escaped,
 * other control characters (NUL too) as \u00XX, all other bytes as they
 * are. 0 or SILT_ENOMEM. */
int silt_render_json_string(silt_buf *b, const char *s, size_t n);

#endif
