/* block.h — metadata block <-> canonical binary manifest.
 *
 * A block is stored as a FlatBuffers `Manifest { kind = 0x400000 (ODF
 * metadata block multicodec), version = 3, content = [ubyte] }` whose content
 * is a separately finished `MetadataBlock` FlatBuffer — exactly as the ODF
 * reference implementation writes it. The block hash is the SHA3-256
 * multihash of the whole manifest bytes.
 *
 * Versions: 3 is written; 2 is read, and encoded on request byte for byte
 * as the reference implementation wrote it (Timestamp structs unaligned).
 */
#ifndef SILT_ODF_BLOCK_H
#define SILT_ODF_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "odf/odf_types.h"
#include "util/arena.h"
#include "util/buf.h"

#define ODF_MULTICODEC_METADATA_BLOCK 0x400000
#define ODF_BLOCK_VERSION_CURRENT 3
#define ODF_BLOCK_VERSION_MIN 2
#define ODF_BLOCK_HASH_LEN 34 /* SHA3-256 multihash */

/* Appends the canonical manifest bytes of `b` to `out`. SILT_EINVAL / ENOMEM. */
int odf_block_encode(silt_buf *out, const odf_MetadataBlock *b);

/* Same, as manifest version `version` (ODF_BLOCK_VERSION_MIN..CURRENT);
 * SILT_EINVAL "cannot encode block: unsupported metadata block version N
 * (supported: 2..3)" for others. */
int odf_block_encode_version(silt_buf *out, const odf_MetadataBlock *b, int version);

/* Decodes manifest bytes (versions 2 and 3). *out is allocated in `a`;
 * *version (may be NULL) receives the manifest version. SILT_EINVAL with
 * "invalid block: ..." on malformed input or an unsupported kind/version. */
int odf_block_decode(silt_arena *a, const uint8_t *data, size_t len, odf_MetadataBlock **out,
                     int *version);

/* SHA3-256 multihash (34 bytes: 0x16 0x20 + digest) of manifest bytes. */
int odf_block_hash(const uint8_t *data, size_t len, uint8_t mh[ODF_BLOCK_HASH_LEN]);

/* Encodes `b` (appending to `out`, may be NULL to discard) and computes its
 * hash. */
int odf_block_encode_hash(silt_buf *out, const odf_MetadataBlock *b,
                          uint8_t mh[ODF_BLOCK_HASH_LEN]);
int odf_block_encode_hash_version(silt_buf *out, const odf_MetadataBlock *b, int version,
                                  uint8_t mh[ODF_BLOCK_HASH_LEN]);

#endif
