/* snappy.h — the Snappy raw format (not the framing format), as Parquet's
 * SNAPPY codec uses it: a varint of the uncompressed length, then literal
 * and copy elements. Needed to rewrite Parquet data pages
 * (src/engine/parquet_required.c); DuckDB's own codec is not part of its C
 * API.
 *
 * The compressor is a plain greedy LZ77 over 4-byte hashes; its output is
 * valid Snappy that every decoder reads, not byte-identical to Google's.
 * The decompressor checks every length and offset against its buffers.
 * Errors: SILT_ECORRUPT "snappy: <what>", SILT_ENOMEM.
 */
#ifndef SILT_ENGINE_SNAPPY_H
#define SILT_ENGINE_SNAPPY_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* The uncompressed length stored in the preamble of `src`. */
int silt_snappy_uncompressed_length(const uint8_t *src, size_t n, size_t *out);

/* Decompresses `src` into dst[0..dst_len); the stream must decode to exactly
 * dst_len bytes (its preamble and its elements). */
int silt_snappy_uncompress(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len);

/* Appends the compressed form of src[0..n) to `out`. */
int silt_snappy_compress(silt_buf *out, const uint8_t *src, size_t n);

#endif
