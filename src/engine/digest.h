/* digest.h — the ODF logical hash of a data slice: arrow-digest's
 * RecordDigestV0 over SHA3-256, wrapped as an `arrow0-sha3-256` multihash
 * (multicodec 0x300016, bytes 96 80 c0 01 20 <32-byte digest>).
 *
 * The core (digest.c) does not depend on DuckDB. Callers describe the Arrow
 * schema with silt_arrow_field / silt_arrow_type and feed record batches as
 * silt_arrow_array trees (Arrow-like: validity bitmaps, fixed-width values in
 * Arrow's little-endian in-memory widths, (ptr,len) byte strings, list
 * entries, struct children). The digest depends only on the schema and the
 * values, not on how rows are split into batches — except for one quirk of
 * the reference that we reproduce on purpose: the validity of a struct child
 * is the bitwise OR of the struct's and the child's validity when both have
 * nulls in the batch (arrow-digest utils::maybe_combine_null_buffers), so a
 * child that is null inside a valid struct is hashed as a value when the
 * struct has other nulls in the same batch: the bytes the caller's array
 * holds in that null slot. To match kamu, struct columns must therefore be
 * fed in the batches of arrow-rs's Parquet reader, with the slot contents
 * that reader leaves (digest_duckdb.c does this).
 *
 * silt_parquet_logical_hash (digest_duckdb.c) reads a Parquet file with DuckDB
 * and feeds the core with the Arrow types that the arrow-rs Parquet reader
 * derives from the file (no embedded ARROW:schema), like kamu's
 * get_parquet_logical_hash.
 */
#ifndef SILT_ENGINE_DIGEST_H
#define SILT_ENGINE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SILT_MC_ARROW0_SHA3_256 0x300016u
#define SILT_ARROW_DIGEST_LEN 32
#define SILT_ARROW_MH_LEN 37      /* varint(0x300016) (4 bytes) + 0x20 + 32 */
#define SILT_ARROW_MH_TEXT_LEN 75 /* "f" + 74 hex chars */

/* Arrow type ids used by the hasher (not arrow-digest's hash TypeIDs). */
typedef enum silt_arrow_type_id {
    SILT_ARROW_BOOL = 1,
    SILT_ARROW_INT,          /* bit_width 8/16/32/64, is_signed */
    SILT_ARROW_FLOAT,        /* bit_width 16/32/64 */
    SILT_ARROW_DECIMAL,      /* bit_width 32/64/128/256, precision, scale */
    SILT_ARROW_DATE,         /* bit_width 32 (Date32, days) or 64 (Date64, ms) */
    SILT_ARROW_TIME,         /* bit_width 32 (Time32) or 64 (Time64), unit */
    SILT_ARROW_TIMESTAMP,    /* unit, timezone (NULL = none); values i64 */
    SILT_ARROW_BINARY,       /* Binary / LargeBinary / BinaryView */
    SILT_ARROW_FIXED_BINARY, /* FixedSizeBinary(byte_width) */
    SILT_ARROW_UTF8,         /* Utf8 / LargeUtf8 / Utf8View */
    SILT_ARROW_LIST,         /* List / LargeList: children[0] is the item */
    SILT_ARROW_STRUCT,       /* children = fields */
} silt_arrow_type_id;

typedef enum silt_arrow_unit {
    SILT_ARROW_SECOND = 0,
    SILT_ARROW_MILLI = 1,
    SILT_ARROW_MICRO = 2,
    SILT_ARROW_NANO = 3,
} silt_arrow_unit;

struct silt_arrow_field;

typedef struct silt_arrow_type {
    silt_arrow_type_id id;
    int bit_width;        /* INT, FLOAT, DECIMAL, DATE, TIME */
    bool is_signed;       /* INT */
    int precision, scale; /* DECIMAL (scale may be negative) */
    silt_arrow_unit unit; /* TIME, TIMESTAMP */
    const char *timezone; /* TIMESTAMP: e.g. "UTC"; NULL = naive */
    int byte_width;       /* FIXED_BINARY */
    const struct silt_arrow_field *children; /* LIST: 1 item field; STRUCT: fields */
    size_t num_children;
} silt_arrow_type;

typedef struct silt_arrow_field {
    const char *name;
    bool nullable; /* informational: nullability is not part of the digest */
    silt_arrow_type type;
} silt_arrow_field;

typedef struct silt_arrow_bytes {
    const uint8_t *ptr;
    size_t len;
} silt_arrow_bytes;

typedef struct silt_arrow_list_entry {
    uint64_t offset; /* first item in the child array */
    uint64_t length; /* number of items */
} silt_arrow_list_entry;

/* One array of a batch. Row i of this array is element `offset + i` of the
 * buffers below (validity bit and values alike). All pointers are borrowed
 * from the caller for the duration of the update call. */
typedef struct silt_arrow_array {
    size_t length;
    size_t offset;
    /* Arrow validity bitmap, LSB first (bit j of byte j/8 = element j;
     * 1 = valid). NULL = no bitmap (all valid). A bitmap without nulls in
     * the rows of this array is treated as absent, as arrow-rs does. */
    const uint8_t *validity;
    /* Fixed-width types: values in Arrow's representation (little endian,
     * bit_width/8 bytes; TIMESTAMP 8; FIXED_BINARY byte_width). BOOL: one
     * byte per value, 0 = false, anything else = true. */
    const void *values;
    const silt_arrow_bytes *bytes;       /* BINARY, UTF8 */
    const silt_arrow_list_entry *lists;  /* LIST */
    const struct silt_arrow_array *children; /* LIST: 1 (items); STRUCT: one per field */
} silt_arrow_array;

/* Streaming RecordDigestV0<Sha3_256>. */
typedef struct silt_record_digest silt_record_digest;

/* Creates a hasher for a schema of n top-level fields. The schema is copied
 * (caller keeps ownership of `fields`). Types arrow-digest cannot hash
 * (lists of structs, empty structs, bad widths) fail with SILT_EUNSUPPORTED
 * naming the field. Caller owns *out (silt_record_digest_free). */
int silt_record_digest_new(silt_record_digest **out, const silt_arrow_field *fields, size_t n);
void silt_record_digest_free(silt_record_digest *d);

/* Feeds one record batch: `columns` has one array per top-level field, each
 * with `num_rows` rows. SILT_EINVAL when the arrays do not fit the schema
 * (missing buffers, child lengths, list ranges out of bounds). */
int silt_record_digest_update(silt_record_digest *d, const silt_arrow_array *columns,
                              size_t num_rows);

/* Writes the 32-byte digest. The hasher cannot be updated afterwards. */
int silt_record_digest_finalize(silt_record_digest *d, uint8_t out[SILT_ARROW_DIGEST_LEN]);

/* Updates only the top-level fields [begin, end) (`columns` is the whole
 * batch, indexed like the fields). Disjoint field ranges touch disjoint
 * column hashers, so they may be updated from different threads at the same
 * time; a batch is complete once every field was updated with it, and every
 * field must see the batches in the same order. After an error call
 * silt_record_digest_fail (from one thread) and do not finalize. */
int silt_record_digest_update_fields(silt_record_digest *d, const silt_arrow_array *columns,
                                     size_t num_rows, size_t begin, size_t end);
void silt_record_digest_fail(silt_record_digest *d);

/* Wraps a digest as the `arrow0-sha3-256` multihash (37 bytes; note: 4 + 1 + 32,
 * not 36). */
void silt_arrow_multihash(const uint8_t digest[SILT_ARROW_DIGEST_LEN],
                          uint8_t out[SILT_ARROW_MH_LEN]);
/* Multibase base16 text "f9680c00120…" of the multihash; out needs
 * SILT_ARROW_MH_TEXT_LEN + 1 bytes. */
void silt_arrow_multihash_text(const uint8_t mh[SILT_ARROW_MH_LEN],
                               char out[SILT_ARROW_MH_TEXT_LEN + 1]);

/* The logical hash of a Parquet file (DuckDB reader, arrow-rs type mapping):
 * writes the 37 multihash bytes and, if num_rows != NULL, the row count.
 * SILT_EUNSUPPORTED naming the column for types the digest cannot hash
 * (MAP, UNION, INT96, lists of structs, …); SILT_ENOTFOUND/SILT_EIO/
 * SILT_EINVAL for unreadable files. Declared here as an opaque engine
 * pointer so this header needs no engine include. */
struct silt_engine;
int silt_parquet_logical_hash(struct silt_engine *e, const char *path,
                              uint8_t out[SILT_ARROW_MH_LEN], uint64_t *num_rows);

#endif
