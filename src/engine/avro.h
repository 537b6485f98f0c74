/* avro.h — Avro object container files (Apache Avro C does the blocks,
 * codecs and binary decoding; silt reads the header and the writer schema
 * itself, because libavro 1.11 drops logical types).
 *
 * Three parts:
 *  - the header: magic "Obj\x01", the metadata map (avro.schema, avro.codec)
 *    and the sync marker, read with bounds (silt_avro_header_parse);
 *  - the writer schema (JSON) as a tree of silt_avro_node, named types
 *    resolved (recursive types are nodes that point back up the tree);
 *  - resolution against the dataset's ODF schema (the Avro schema
 *    resolution rules, the reader being the dataset schema) into a read
 *    plan, and the reverse mapping used by `silt schema infer`.
 *
 * SQL: the engine registers the table function
 *     silt_read_avro(path VARCHAR, schema VARCHAR)
 * (`schema` is the ODF DataSchema as JSON) whose columns are the schema's
 * fields with the DuckDB types of engine/schema.h. It reads the file block
 * by block (memory bounded by one block plus one DuckDB vector). On a
 * confined engine it reads only the files the engine was allowed to read
 * (silt_engine_may_read); DuckDB's own file-access control does not apply
 * to a C table function, so this is its own rule (docs/decisions.md).
 *
 * Memory: every node and plan is allocated from the caller's silt_arena.
 * Errors: negative SILT_E* with a one-line message naming the field as
 * "field 'a.b'" (SILT_EINVAL for a writer schema that does not resolve,
 * SILT_EUNSUPPORTED for an unsupported union or type, SILT_ECORRUPT for a
 * malformed header or schema).
 */
#ifndef SILT_ENGINE_AVRO_H
#define SILT_ENGINE_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "odf/odf_types.h"
#include "util/arena.h"

/* Writer-schema node kinds and logical types. */
enum {
    SILT_AVRO_NULL = 1, SILT_AVRO_BOOLEAN, SILT_AVRO_INT, SILT_AVRO_LONG, SILT_AVRO_FLOAT, SILT_AVRO_DOUBLE,
    SILT_AVRO_BYTES, SILT_AVRO_STRING, SILT_AVRO_RECORD, SILT_AVRO_ENUM, SILT_AVRO_ARRAY, SILT_AVRO_MAP,
    SILT_AVRO_UNION, SILT_AVRO_FIXED
};
enum {
    SILT_AVRO_L_NONE = 0, SILT_AVRO_L_DECIMAL, SILT_AVRO_L_DATE, SILT_AVRO_L_TIME_MS, SILT_AVRO_L_TIME_US,
    SILT_AVRO_L_TS_MS, SILT_AVRO_L_TS_US, SILT_AVRO_L_UUID
};

typedef struct silt_avro_node silt_avro_node;
struct silt_avro_node {
    int kind, logical;
    int precision, scale;  /* decimal */
    int64_t fixed_size;    /* fixed */
    const char *name;      /* full name of a record, enum or fixed */
    size_t n;              /* record fields, union branches, enum symbols; 1 for array/map */
    const char **names;    /* record field names / enum symbols */
    silt_avro_node **kids; /* record field types / union branches / array items / map values */
};

/* The header of an object container file: the writer schema text and the
 * codec (NULL-terminated, arena copies; codec "null" when absent), and the
 * header's length in bytes. SILT_ECORRUPT "not an Avro object container
 * file (…)" for anything else; SILT_ENOMEM. */
typedef struct silt_avro_header {
    const char *schema, *codec;
    size_t schema_len, header_len;
} silt_avro_header;
int silt_avro_header_parse(silt_arena *a, const uint8_t *buf, size_t len, silt_avro_header *out);
/* The same from the start of a file (reads at most the 16 MiB header limit). */
int silt_avro_header_read(silt_arena *a, const char *path, silt_avro_header *out);

/* Does the linked libavro decode this codec (null, deflate, snappy, lzma)? */
bool silt_avro_codec_supported(const char *codec);

/* The writer schema tree of schema JSON text. The top level must be a
 * record (SILT_EUNSUPPORTED otherwise: a files dataset has columns). */
int silt_avro_schema_parse(silt_arena *a, const char *json, size_t len, silt_avro_node **out);

/* The ODF schema `silt schema infer` proposes for a writer schema: int
 * Int32, long Int64, float Float32, double Float64, boolean Bool, string
 * String, bytes and fixed Binary (fixed: fixedLength), enum String, array
 * List, map Map<String, V>, record Struct, null Null, union of null and T
 * Option<T>; logical types decimal Decimal(p,s), date Date, time-millis
 * Time(Millisecond), time-micros Time(Microsecond), timestamp-millis
 * Timestamp(Millisecond, UTC), timestamp-micros Timestamp(Microsecond, UTC),
 * uuid String. Other unions and recursive records are SILT_EUNSUPPORTED
 * naming the field ("field 'u': unsupported union [int, string] …"). */
int silt_avro_to_odf(silt_arena *a, const silt_avro_node *w, odf_DataSchema **out);

/* Resolution of a writer type to a dataset type (exposed for unit tests):
 * 0 when values of `w` can be read as `r`, else the error naming `path`.
 * Rules (the reader is the dataset schema):
 *   Option<T> accepts null (all values null), a union of null and W (W
 *   resolved to T) or W itself; a non-Option type refuses a nullable writer;
 *   int -> Int32, Int64, Float32, Float64; long -> Int64, Float32, Float64;
 *   float -> Float32, Float64; double -> Float64; boolean -> Bool;
 *   string, bytes, enum, uuid -> String; bytes, fixed, string -> Binary
 *   (a fixedLength must equal the fixed size); decimal(p,s) -> Decimal(P,s)
 *   with P >= p; date -> Date; time-millis/micros -> Time (not Nanosecond);
 *   timestamp-millis/micros -> Timestamp (any unit and zone); null -> Null;
 *   array -> List; map -> Map<String, V>; record -> Struct by field name
 *   (writer fields the reader lacks are skipped; a reader field the writer
 *   lacks must be Option and reads as null). Any other union is
 *   SILT_EUNSUPPORTED "unsupported union". */
typedef struct silt_avro_plan silt_avro_plan;
enum {
    SILT_AVRO_R_NULL = 1, SILT_AVRO_R_BOOL, SILT_AVRO_R_I32, SILT_AVRO_R_I64, SILT_AVRO_R_F32, SILT_AVRO_R_F64,
    SILT_AVRO_R_STR, SILT_AVRO_R_BLOB, SILT_AVRO_R_DEC, SILT_AVRO_R_DATE, SILT_AVRO_R_TIME, SILT_AVRO_R_TS,
    SILT_AVRO_R_LIST, SILT_AVRO_R_MAP, SILT_AVRO_R_STRUCT
};
struct silt_avro_plan {
    int op;                   /* SILT_AVRO_R_*: how a value is stored */
    const silt_avro_node *w;  /* the writer type read (the non-null branch of a union) */
    int null_branch;          /* writer union: index of its null branch, else -1 */
    bool all_null;            /* writer type null (or reader field absent): every value is null */
    int64_t mul, div;         /* time/timestamp: out = floor(in * mul / div) */
    int dec_width;            /* decimal: DuckDB storage bytes 2, 4, 8 or 16 */
    int dec_precision;        /* decimal: the dataset's precision */
    size_t n;                 /* struct: reader fields; list and map: 1 */
    silt_avro_plan **kids;    /* struct fields / list items / map values */
    int *windex;              /* struct: writer field index of each reader field, -1 absent */
    const odf_union *type;    /* the dataset type (Option stripped) */
    const char *path;         /* "a.b" for messages */
};
int silt_avro_resolve(silt_arena *a, const silt_avro_node *w, const odf_DataSchema *r, silt_avro_plan **out);

/* The message of silt_read_avro's refusal on a confined engine (engine.c
 * reports it as a refused file, like DuckDB's own). */
#define SILT_AVRO_REFUSAL "silt_read_avro may only read the files of the datasets of the query"

/* The largest single allocation libavro may make (a block, a string or
 * bytes value): 256 MiB. Larger ones fail ("Cannot allocate …"). */
#define SILT_AVRO_MAX_ALLOC ((size_t)256 << 20)

/* Registers silt_read_avro on the engine's connection (engine open). */
int silt_avro_register(silt_engine *e);

#endif
