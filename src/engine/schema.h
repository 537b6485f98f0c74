/* schema.h — conversions between the ODF DataSchema model and DuckDB SQL
 * types, plus the legacy schema notations silt accepts (Spark DDL strings of
 * ReadStep.ddlSchema, Foundry field lists).
 *
 * Nullability: ODF expresses a nullable value by wrapping its type in
 * DataType Option. Towards DuckDB, Option is transparent (DuckDB columns are
 * always nullable). From DuckDB/DDL/Foundry, nested values follow the Arrow /
 * Parquet convention kamu produces when it reads a slice: list items and
 * struct fields are Option<T>, map keys are plain, map values Option<T>.
 *
 * Defaults of the ODF model (as in the ODF schema): a Timestamp without unit
 * is Millisecond, without timezone is "UTC"; Time and Duration without unit
 * are Millisecond.
 *
 * Memory: every ODF struct produced here is allocated from the caller's
 * silt_arena and lives as long as that arena; silt_buf outputs are appended
 * to the caller's buffer (nothing is cleared first).
 * Errors: negative SILT_E* code after silt_err() with a one-line message.
 */
#ifndef SILT_ENGINE_SCHEMA_H
#define SILT_ENGINE_SCHEMA_H

#include <stdbool.h>

#include <jansson.h>

#include "engine/engine.h"
#include "odf/odf_types.h"
#include "util/arena.h"
#include "util/buf.h"

/* DuckDB SQL type text for an ODF DataType, appended to `out`. Option is
 * transparent (at every level).
 *   Bool BOOLEAN | Int8..Int64 TINYINT SMALLINT INTEGER BIGINT |
 *   UInt8..UInt64 UTINYINT USMALLINT UINTEGER UBIGINT | Float16, Float32 FLOAT |
 *   Float64 DOUBLE | Decimal(p,s) DECIMAL(p,s) (1<=p<=38, 0<=s<=p, else
 *   SILT_EUNSUPPORTED) | String VARCHAR | Binary BLOB (fixedLength dropped) |
 *   Date DATE | Time TIME (Nanosecond: TIME_NS) | Duration INTERVAL |
 *   Timestamp: tz absent, "UTC", "Etc/UTC", "Z" or "+00:00": unit Second
 *   TIMESTAMP_S, Millisecond or absent TIMESTAMP_MS, Microsecond TIMESTAMP,
 *   Nanosecond TIMESTAMP_NS; any other timezone TIMESTAMPTZ |
 *   List T[] (fixedLength n: T[n]) | Struct STRUCT("a" T, ...) (no fields:
 *   SILT_EUNSUPPORTED) | Map MAP(K, V) | Null INTEGER (DuckDB has a "NULL"
 *   type, but table, view and result columns of it always become INTEGER,
 *   and read_csv reads it as VARCHAR; an all-NULL INTEGER column is the
 *   closest stable equivalent).
 * An absent or unknown variant is SILT_EINVAL. */
int silt_schema_type_to_duckdb(silt_buf *out, const odf_union *data_type);

/* Column list "\"a\" BIGINT, \"b\" VARCHAR" for a whole schema (identifiers
 * double-quoted with "" escaping), appended to `out`. Errors name the field. */
int silt_schema_to_duckdb_columns(silt_buf *out, const odf_DataSchema *schema);

/* Legacy ddlSchema entries (Spark DDL), one column per entry:
 * "name TYPE", "name: TYPE" or "`quoted name` TYPE" (`` escapes a backtick),
 * optionally followed by NOT NULL (then the field is not wrapped in Option,
 * as kamu does). Types, case-insensitive:
 *   STRING, VARCHAR[(n)], CHAR[(n)], TEXT -> String; INT, INTEGER -> Int32;
 *   BIGINT, LONG -> Int64; SMALLINT, SHORT -> Int16; TINYINT, BYTE -> Int8;
 *   BOOLEAN, BOOL -> Bool; FLOAT, REAL -> Float32; DOUBLE -> Float64;
 *   DECIMAL/NUMERIC/DEC[(p[,s])] -> Decimal (bare = (10,0), (p) = (p,0));
 *   DATE -> Date; TIMESTAMP -> Timestamp{Millisecond, "UTC"} (silt/kamu store
 *   timestamps as ms UTC); BINARY -> Binary; ARRAY<T> -> List<Option<T>>;
 *   MAP<K,V> -> Map<K, Option<V>>; STRUCT<a: T, b T, ...> -> Struct of
 *   Option fields.
 * Top-level fields are Option unless NOT NULL. Errors (SILT_EINVAL) name the
 * entry: "ddlSchema[2] 'foo BLARG': unknown type 'BLARG'". Classes: missing
 * column name, unterminated quoted name, missing type, unknown type, bad
 * DECIMAL/length arguments, expected '<' / '>' / ',' / ')', empty STRUCT,
 * nesting deeper than 32, unexpected trailing text, duplicate column name.
 * *out is arena-owned. */
int silt_schema_from_ddl(silt_arena *a, const odf_strvec *ddl, odf_DataSchema **out);

/* Foundry-style field list (jansson array of objects):
 *   {"name": "a", "type": "LONG", "nullable": true, "precision": 10,
 *    "scale": 2, "arraySubtype": {...}, "mapKeyType": {...},
 *    "mapValueType": {...}, "subSchemas": [{...}, ...]}
 * Types (case-insensitive): BOOLEAN Bool, BYTE Int8, SHORT Int16, INTEGER
 * Int32, LONG Int64, FLOAT Float32, DOUBLE Float64, DECIMAL Decimal(precision,
 * scale) (both required), STRING String, BINARY Binary, DATE Date, TIMESTAMP
 * Timestamp{Millisecond, "UTC"}, ARRAY List(arraySubtype), MAP
 * Map(mapKeyType, mapValueType), STRUCT Struct(subSchemas, each with a name).
 * "nullable" defaults to true and applies at every level (Option wrapping),
 * except that map keys are never Option. Unknown keys are ignored.
 * Errors (SILT_EINVAL) name the path: "fields[1] 'price': DECIMAL needs
 * 'precision' and 'scale'", "fields[0] 'tags'.arraySubtype: unknown type 'X'".
 * *out is arena-owned. */
int silt_schema_from_foundry_json(silt_arena *a, const json_t *fields, odf_DataSchema **out);

/* ODF DataSchema of the columns of a DuckDB table or view `table` (an
 * unqualified name; it is quoted as an identifier), described as the Parquet
 * slice written from it will be read back:
 *   BOOLEAN Bool | TINYINT..BIGINT Int8..Int64 | UTINYINT..UBIGINT UInt8..UInt64 |
 *   FLOAT Float32 | DOUBLE Float64 | DECIMAL(p,s) Decimal(p,s) |
 *   HUGEINT, UHUGEINT Decimal(38,0) | VARCHAR (and JSON) String | ENUM String |
 *   BLOB Binary | UUID Binary{fixedLength 16} | DATE Date |
 *   TIME Time{Microsecond} | TIME_NS Time{Nanosecond} |
 *   TIMESTAMP_S/_MS/TIMESTAMP/_NS/TIMESTAMPTZ Timestamp{Second/Millisecond/
 *   Microsecond/Nanosecond/Microsecond, "UTC"} | INTERVAL Duration{Microsecond} |
 *   SQLNULL Null (rarely seen: DuckDB turns NULL columns into INTEGER) |
 *   T[] and T[n] List<Option<T>> (Parquet has no fixed-size lists) | STRUCT Struct of Option fields | MAP(K, V) Map<K, Option<V>>
 *   with keysSorted absent.
 * Top-level columns named in `required` (NULL-terminated, may be NULL) are
 * plain types, all others Option. A `required` name that is not a column is
 * SILT_EINVAL. UNION, BIT, TIMETZ, BIGNUM and other types are
 * SILT_EUNSUPPORTED naming the column: "table 't' column 'u': unsupported
 * DuckDB type UNION". TIME_NS has no type id in the DuckDB 1.4 C API: it is
 * recognised (via DESCRIBE) as a top-level column only; nested inside a
 * LIST/STRUCT/MAP it is SILT_EUNSUPPORTED with the column's type text.
 * *out is arena-owned. */
int silt_schema_from_table(silt_engine *e, silt_arena *a, const char *table,
                           const char *const *required, odf_DataSchema **out);

/* Same as silt_schema_from_table for the result columns of a query (the
 * query is prepared, not run). Errors name the query as "query". */
int silt_schema_from_query(silt_engine *e, silt_arena *a, const char *sql,
                           const char *const *required, odf_DataSchema **out);

/* One-line human description appended to `out`:
 * "a: Int64, b: Option<String>, t: Timestamp(Millisecond, UTC),
 *  d: Decimal(10, 2), l: List<Option<Int32>>, m: Map<String, Option<Int64>>,
 *  s: Struct<x: Option<Int32>>, f: Binary(16), n: Null". */
int silt_schema_describe(silt_buf *out, const odf_DataSchema *schema);
/* The same rendering for a single DataType. */
int silt_schema_type_describe(silt_buf *out, const odf_union *data_type);

/* Structural equality of two schemas: same field count, names and DataTypes
 * (odf_data_type_equal); extra attributes of the schema and of its top-level
 * fields are ignored. NULL equals only NULL. */
bool silt_schema_equal(const odf_DataSchema *a, const odf_DataSchema *b);

/* Small builders (arena-owned results; 0 or SILT_ENOMEM):
 * a DataType union of a field-less variant (Bool, Int64, String, ...), and an
 * Option wrapper around `inner` (copied by value). */
int silt_schema_type_simple(silt_arena *a, odf_union *out, uint8_t variant);
int silt_schema_type_option(silt_arena *a, odf_union *out, const odf_union *inner);

#endif
