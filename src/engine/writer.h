/* writer.h — writes one ODF data slice (Parquet) from a merged changelog.
 *
 * Input: a TEMP TABLE whose rowid order is the final order of the records,
 * with the op, event time and data columns (as produced by
 * src/engine/merge.h), or without op for an Append of the input as is. Output: a Parquet file with exactly the layout of
 * DESIGN.md §6 — columns `offset` UINT64 (DELTA_BINARY_PACKED), `op` UINT8
 * (RLE_DICTIONARY), `system_time` INT64 TIMESTAMP(MILLIS, UTC) (dictionary),
 * `event_time` TIMESTAMP(MILLIS, UTC) or DATE, then the data columns, every
 * other timestamp normalised to MILLIS UTC — plus its physical hash (SHA3-256
 * multihash of the file), logical hash (arrow0-sha3-256 record digest),
 * size, row count and max event time. Offsets are dense, starting at
 * `first_offset`, in rowid order: rows are never reordered. The system
 * columns offset, op and system_time, and the columns the spec names as
 * required, are REQUIRED in the Parquet schema (their pages carry no
 * definition levels); a null in one of them is an error (SILT_EINVAL), so
 * callers check their data first to report it with its row.
 */
#ifndef SILT_ENGINE_WRITER_H
#define SILT_ENGINE_WRITER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

#define SILT_LOGICAL_HASH_LEN 37 /* varint(0x300016) (4 bytes) + 0x20 + 32 */

typedef struct silt_slice_spec {
    const char *table;           /* TEMP TABLE with the op (unless op_append),
                                    event time and data columns, any order */
    const char *offset_column;   /* vocab names of the system columns */
    const char *op_column;
    const char *system_time_column;
    const char *event_time_column;
    uint64_t first_offset;
    silt_time system_time;
    const char *path;            /* file to create (should not exist) */
    bool op_append;              /* the table has no op column: every record is +A */
    const char *const *data_columns; /* output order of the data columns, or NULL:
                                        every other column in table order */
    size_t ndata_columns;
    const char *const *required_columns; /* NULL-terminated names of the event
                                            time and data columns to write
                                            REQUIRED (no nulls), or NULL; the
                                            offset, op and system time columns
                                            always are */
} silt_slice_spec;

typedef struct silt_slice_info {
    uint64_t num_rows;
    uint64_t size;
    uint8_t physical_hash[SILT_MH_LEN];
    uint8_t logical_hash[SILT_LOGICAL_HASH_LEN];
    bool has_max_event_time;
    silt_time max_event_time;
} silt_slice_info;

/* Name of the TEMP VIEW silt_write_slice leaves behind: the slice's rows
 * and column types exactly as written (timestamps TIMESTAMP_MS, offset
 * UBIGINT, …), from which the slice's DataSchema is derived. */
#define SILT_SLICE_VIEW "__silt_slice"

/* Writes the slice. On failure the file is removed. */
int silt_write_slice(silt_engine *e, const silt_slice_spec *spec, silt_slice_info *out);

/* Hashes of an existing slice file (used by verify). */
int silt_slice_hashes(silt_engine *e, const char *path, uint8_t physical[SILT_MH_LEN],
                      uint8_t logical[SILT_LOGICAL_HASH_LEN], uint64_t *num_rows, uint64_t *size);

#endif
