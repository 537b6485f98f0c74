/* parquet_required.h — turning OPTIONAL top-level columns of a Parquet file
 * into REQUIRED ones, pages included.
 *
 * Why: ODF slices declare their system columns (and the data columns the
 * schema declares non-nullable) as required, and the Parquet footer should
 * say so. DuckDB 1.4 writes every top-level column OPTIONAL, whatever the
 * table's NOT NULL constraints. Flipping repetition_type in the footer alone
 * would be invalid: the pages of an OPTIONAL column carry definition levels
 * and a reader of a REQUIRED column expects none. So the file is rewritten:
 * in every data page of the affected leaves, the definition levels are
 * decoded, lowered by one (the column itself no longer counts as optional),
 * re-encoded (or dropped entirely when the leaf becomes non-nullable: a
 * primitive column), and the page is recompressed; the footer gets the new
 * repetition, sizes and offsets. Values, encodings, dictionaries, statistics
 * and bloom filters stay byte for byte, so every reader sees the same
 * records and the logical hash does not change.
 *
 * Supported input (what silt's writer produces through DuckDB): data pages
 * v1 and v2, codecs UNCOMPRESSED and SNAPPY, RLE definition levels, no page
 * indexes, no encryption, no external column chunks. Anything else is
 * SILT_EUNSUPPORTED naming the feature.
 */
#ifndef SILT_ENGINE_PARQUET_REQUIRED_H
#define SILT_ENGINE_PARQUET_REQUIRED_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Makes the `n` named top-level columns of the Parquet file at `path`
 * REQUIRED. The file is rewritten to a temporary file next to it, fsynced
 * and renamed over `path`; on any error `path` is left as it was and the
 * temporary file is removed.
 *   - a name that is not a top-level column: SILT_ENOTFOUND
 *     "<path>: no column 'x'";
 *   - a column already REQUIRED is left alone; a REPEATED top-level column
 *     is SILT_EINVAL;
 *   - a null in a selected column (a top-level definition level of 0, or a
 *     non-zero null count): SILT_EINVAL "<path>: column 'x' holds a null
 *     (row group G): it cannot be REQUIRED".
 * Returns the number of columns changed (>= 0) or a negative error code. */
int silt_parquet_set_required(const char *path, const char *const *columns, size_t n);

/* CRC-32 (IEEE, as Parquet's PageHeader.crc and zlib use), for tests too. */
uint32_t silt_parquet_crc32(const uint8_t *p, size_t n);

/* ---- building blocks, exposed for tests and fuzzing ------------------- */

/* Re-encodes `n` RLE/bit-packed hybrid levels of bit width `bw` from
 * src[0..len) (no length prefix) as levels of bit width `new_bw`, each
 * lowered by one; a level of 0 is SILT_EINVAL "null"; a level above
 * `max_level` or a truncated stream is SILT_ECORRUPT. The output (RLE runs,
 * no length prefix) is appended to `out`; *used = input bytes consumed. */
int silt_parquet_lower_levels(const uint8_t *src, size_t len, size_t n, int bw, int max_level, int new_bw,
                              silt_buf *out, size_t *used);

/* Bit width of levels 0..max_level (0 for 0, 1 for 1, 2 for 2..3, ...). */
int silt_parquet_level_width(int max_level);

#endif
