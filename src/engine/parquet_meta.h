/* parquet_meta.h — reading and patching the Parquet footer (FileMetaData),
 * in pure C: no DuckDB involved.
 *
 * A Parquet file is "PAR1" <column chunks> <FileMetaData> <u32 LE length>
 * "PAR1". The FileMetaData is a Thrift struct in the compact protocol. This
 * module decodes the parts silt needs (row count, writer, leaf column types
 * and the encodings their chunks use) and performs one in-place edit: setting
 * TimestampType.isAdjustedToUTC to true. In the compact protocol a bool struct
 * field lives in the type nibble of its field header (1 = true, 2 = false),
 * so the edit changes one byte per column and never the footer length.
 *
 * Why: DESIGN.md §6 wants slices with TIMESTAMP(MILLIS, isAdjustedToUTC=true);
 * DuckDB writes TIMESTAMP_MS as TIMESTAMP(MILLIS, isAdjustedToUTC=false), so
 * the slice writer writes TIMESTAMP_MS columns, then calls
 * silt_parquet_set_timestamps_utc().
 *
 * Errors: SILT_EINVAL (not a Parquet file, bad column selection), SILT_ECORRUPT
 * (malformed footer), SILT_EUNSUPPORTED (encrypted footer "PARE"),
 * SILT_ENOTFOUND (missing file or column), SILT_EIO, SILT_ENOMEM. Messages of
 * the file functions start with the caller's path, e.g.
 * "x.parquet: not a Parquet file (bad magic)",
 * "x.parquet: corrupt footer: truncated varint at byte 17".
 */
#ifndef SILT_ENGINE_PARQUET_META_H
#define SILT_ENGINE_PARQUET_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Physical types (parquet.thrift `Type`). */
enum {
    SILT_PQ_BOOLEAN = 0,
    SILT_PQ_INT32 = 1,
    SILT_PQ_INT64 = 2,
    SILT_PQ_INT96 = 3,
    SILT_PQ_FLOAT = 4,
    SILT_PQ_DOUBLE = 5,
    SILT_PQ_BYTE_ARRAY = 6,
    SILT_PQ_FIXED_LEN_BYTE_ARRAY = 7,
};

/* A few converted types (parquet.thrift `ConvertedType`; the field holds the
 * raw enum value, these are the ones silt looks at). */
enum {
    SILT_PQ_CT_UTF8 = 0,
    SILT_PQ_CT_MAP = 1,
    SILT_PQ_CT_LIST = 3,
    SILT_PQ_CT_DECIMAL = 5,
    SILT_PQ_CT_DATE = 6,
    SILT_PQ_CT_TIMESTAMP_MILLIS = 9,
    SILT_PQ_CT_TIMESTAMP_MICROS = 10,
    SILT_PQ_CT_UINT_8 = 11,
    SILT_PQ_CT_UINT_16 = 12,
    SILT_PQ_CT_UINT_32 = 13,
    SILT_PQ_CT_UINT_64 = 14,
    SILT_PQ_CT_INT_8 = 15,
    SILT_PQ_CT_INT_16 = 16,
    SILT_PQ_CT_INT_32 = 17,
    SILT_PQ_CT_INT_64 = 18,
};

/* Logical type kinds: the member id of the `LogicalType` union; 0 = none.
 * Unknown future members are reported with their raw id. */
enum {
    SILT_PQ_LT_NONE = 0,
    SILT_PQ_LT_STRING = 1,
    SILT_PQ_LT_MAP = 2,
    SILT_PQ_LT_LIST = 3,
    SILT_PQ_LT_ENUM = 4,
    SILT_PQ_LT_DECIMAL = 5,
    SILT_PQ_LT_DATE = 6,
    SILT_PQ_LT_TIME = 7,
    SILT_PQ_LT_TIMESTAMP = 8,
    SILT_PQ_LT_INTEGER = 10,
    SILT_PQ_LT_UNKNOWN = 11, /* "always null" */
    SILT_PQ_LT_JSON = 12,
    SILT_PQ_LT_BSON = 13,
    SILT_PQ_LT_UUID = 14,
    SILT_PQ_LT_FLOAT16 = 15,
    SILT_PQ_LT_VARIANT = 16,
    SILT_PQ_LT_GEOMETRY = 17,
    SILT_PQ_LT_GEOGRAPHY = 18,
};

/* Time units of TIME / TIMESTAMP (the `TimeUnit` union member id). */
enum { SILT_PQ_UNIT_NONE = 0, SILT_PQ_MILLIS = 1, SILT_PQ_MICROS = 2, SILT_PQ_NANOS = 3 };

/* Repetition (parquet.thrift `FieldRepetitionType`). */
enum { SILT_PQ_REQUIRED = 0, SILT_PQ_OPTIONAL = 1, SILT_PQ_REPEATED = 2 };

/* Encodings (parquet.thrift `Encoding`); bit i of `encodings` = value i. */
enum {
    SILT_PQ_ENC_PLAIN = 0,
    SILT_PQ_ENC_PLAIN_DICTIONARY = 2,
    SILT_PQ_ENC_RLE = 3,
    SILT_PQ_ENC_BIT_PACKED = 4,
    SILT_PQ_ENC_DELTA_BINARY_PACKED = 5,
    SILT_PQ_ENC_DELTA_LENGTH_BYTE_ARRAY = 6,
    SILT_PQ_ENC_DELTA_BYTE_ARRAY = 7,
    SILT_PQ_ENC_RLE_DICTIONARY = 8,
    SILT_PQ_ENC_BYTE_STREAM_SPLIT = 9,
};
#define SILT_PQ_ENC_BIT(e) (UINT32_C(1) << (e))

/* One leaf (primitive) column of the schema. Optional Thrift fields that are
 * absent are reported as -1 (ints) / 0 (kinds). */
typedef struct silt_parquet_column {
    const char *path;     /* dotted path from the root, e.g. "st.a", "l.list.element" */
    const char *name;     /* the leaf's own name */
    const char *top_name; /* name of the top-level field that contains it */
    bool top_level;       /* the leaf is itself a top-level field */
    int physical_type;    /* SILT_PQ_INT64, … */
    int type_length;      /* FIXED_LEN_BYTE_ARRAY length, or -1 */
    int repetition;       /* SILT_PQ_REQUIRED, …, or -1 */
    int top_repetition;   /* repetition of the top-level field containing it
                             (= repetition when top_level) */
    int converted_type;   /* raw ConvertedType, or -1 */
    int scale, precision; /* SchemaElement scale / precision, or -1 */
    int logical_type;     /* SILT_PQ_LT_*, 0 when absent */
    int time_unit;        /* TIME / TIMESTAMP: SILT_PQ_MILLIS, …; else 0 */
    bool utc;             /* TIME / TIMESTAMP: isAdjustedToUTC */
    int int_bit_width;    /* INTEGER: 8, 16, 32, 64; else 0 */
    bool int_signed;      /* INTEGER: isSigned */
    uint32_t encodings;   /* union over all row groups, SILT_PQ_ENC_BIT(e) */
    /* Offset in the footer of the TimestampType.isAdjustedToUTC field header
     * byte, or SIZE_MAX when there is none (internal to the patcher). */
    size_t utc_flag_pos;
} silt_parquet_column;

typedef struct silt_parquet_meta {
    int32_t version;        /* FileMetaData.version, -1 when absent */
    int64_t num_rows;
    const char *created_by; /* NULL when absent */
    size_t num_row_groups;
    size_t num_columns; /* leaves, in schema (= column chunk) order */
    silt_parquet_column *columns;
    size_t footer_len;    /* bytes of Thrift FileMetaData */
    uint64_t footer_pos;  /* file offset of the FileMetaData (0 in memory) */
    struct silt_arena *arena; /* owns everything above */
} silt_parquet_meta;

/* Decodes a Thrift compact FileMetaData (the footer bytes only: no magic, no
 * length). Never reads outside buf[0..len). On success the caller owns *out
 * (silt_parquet_meta_free); all strings in it are owned by *out. On error
 * *out is NULL and the message starts with "corrupt footer: ". */
int silt_parquet_parse_footer(const uint8_t *buf, size_t len, silt_parquet_meta **out);

/* Reads the footer of the Parquet file at `path` (magic at both ends, 4-byte
 * LE footer length) and decodes it. Caller owns *out. */
int silt_parquet_read_meta(const char *path, silt_parquet_meta **out);

/* Accepts NULL. */
void silt_parquet_meta_free(silt_parquet_meta *m);

/* Leaf column with exactly this dotted path, or NULL. Borrowed from m. */
const silt_parquet_column *silt_parquet_meta_column(const silt_parquet_meta *m, const char *path);

/* Sets isAdjustedToUTC = true on TIMESTAMP columns of the file at `path`, in
 * place: one pwrite of the changed footer bytes, then fsync.
 *   columns != NULL: the n named top-level columns. Each must be a top-level
 *     leaf with LogicalType TIMESTAMP (or a legacy TIMESTAMP_MILLIS/MICROS
 *     converted type without LogicalType, which is UTC by definition and left
 *     alone); a missing name is SILT_ENOTFOUND "<path>: no column 'x'", any
 *     other column SILT_EINVAL "<path>: column 'x' is not a timestamp column".
 *   columns == NULL: every leaf with LogicalType TIMESTAMP, nested ones too
 *     (n is ignored).
 * Flags already true are left alone. All checks happen before anything is
 * written, so a failed call leaves the file unchanged. Returns the number of
 * flags changed (>= 0) or a negative error code.
 * Notes (DuckDB 1.4.4): the unit is not changed, so write TIMESTAMP_MS first;
 * DuckDB reads a UTC NANOS column as TIMESTAMPTZ (microseconds). DuckDB's
 * external file cache validates by mtime at one-second resolution: an engine
 * that read the file in the same second may still see the old footer (use
 * SET enable_external_file_cache = false, or patch before the first read). */
int silt_parquet_set_timestamps_utc(const char *path, const char *const *columns, size_t n);

/* Static names for display and tests: "INT64", "RLE_DICTIONARY",
 * "TIMESTAMP", "MILLIS", "UINT_64", "OPTIONAL"; "?" for unknown values. */
const char *silt_parquet_type_name(int physical_type);
const char *silt_parquet_converted_name(int converted_type);
const char *silt_parquet_logical_name(int logical_type);
const char *silt_parquet_unit_name(int unit);
const char *silt_parquet_encoding_name(int encoding);
const char *silt_parquet_repetition_name(int repetition);

#endif
