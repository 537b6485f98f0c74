/* flatbuf.h — generic FlatBuffers codec over the ODF descriptors (desc.h).
 *
 * The encoder reproduces, byte for byte, what the ODF reference
 * implementation (kamu-cli, Rust flatbuffers builder) writes for the same
 * object: children are serialized depth-first in schema order, fields are
 * added in schema order, default-valued non-optional scalars are omitted,
 * vtables are deduplicated, no string sharing. This canonical form is what
 * block hashes are computed over.
 *
 * The decoder is fully bounds-checked and never crashes on arbitrary input;
 * errors carry the field path, e.g.
 *   "AddData.newData.offsetInterval: offset out of bounds".
 */
#ifndef SILT_ODF_FLATBUF_H
#define SILT_ODF_FLATBUF_H

#include <stddef.h>
#include <stdint.h>

#include "odf/desc.h"
#include "util/arena.h"
#include "util/buf.h"

/* maximum nesting of tables accepted by encoder and decoder */
#define ODF_FB_MAX_DEPTH 64

/* Encodes `obj` (a C struct described by `d`) as a finished FlatBuffer whose
 * root is a `d` table and APPENDS it to `out`. SILT_EINVAL (missing required
 * field, bad union type, ...) with the field path in the message, or
 * SILT_ENOMEM. On failure `out` keeps its previous length. */
int odf_fb_encode(silt_buf *out, const odf_table_desc *d, const void *obj);

/* Same, with inline structs (Timestamp) aligned to `struct_align` bytes: 4 is
 * what the schema asks for (odf_fb_encode, block version 3); 1 reproduces the
 * reference implementation's version 2 blocks, which wrote them unaligned. */
int odf_fb_encode_aligned(silt_buf *out, const odf_table_desc *d, const void *obj, size_t struct_align);

/* Decodes a finished FlatBuffer with root table `d`. On success *out points
 * to a struct of type `d` allocated (with everything it references) in `a`.
 * SILT_EINVAL with "<Table>.<field>...: reason" on malformed input. */
int odf_fb_decode(silt_arena *a, const odf_table_desc *d, const uint8_t *buf, size_t len,
                  void **out);

#endif
