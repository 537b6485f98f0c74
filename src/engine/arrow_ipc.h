/* arrow_ipc.h — writer of the Arrow IPC streaming format (Schema message,
 * RecordBatch messages, end-of-stream marker) from Arrow C Data Interface
 * structs (arrow_c.h). No DuckDB here: the writer takes any producer's
 * schema and arrays, so the unit suite checks it byte for byte.
 *
 * Format written (https://arrow.apache.org/docs/format/Columnar.html,
 * "IPC Streaming Format"): every message is the continuation marker
 * 0xFFFFFFFF, an int32 metadata length (the FlatBuffer `Message` padded so
 * that the body starts 8-byte aligned), the Message (metadata version V5,
 * little endian), then the body: every buffer 8-byte aligned and padded
 * with zero bytes. Bodies are uncompressed; no dictionaries, no
 * string/list views, no large (64-bit offset) types, no unions.
 *
 * Supported C Data Interface formats: n b c C s S i I l L e f g z u d:P,S
 * (128-bit) w:N tdD tdm tts ttm ttu ttn tss: tsm: tsu: tsn: (any time
 * zone) tDs tDm tDu tDn tiM tiD tin +l +w:N +s +m. Arrays must not be
 * sliced (offset 0 everywhere; DuckDB's never are). Anything else is
 * SILT_EUNSUPPORTED naming the column and the format.
 *
 * FlatBuffers: a small front-to-back builder (arrow_ipc.c): a table is
 * written with placeholders for its offset fields, and every child is
 * written after its parent and patched in, so all uoffsets point forward
 * as the format requires. Every scalar field is written, defaults too.
 */
#ifndef SILT_ENGINE_ARROW_IPC_H
#define SILT_ENGINE_ARROW_IPC_H

#include <stddef.h>

#include "engine/arrow_c.h"
#include "util/buf.h"

/* Flags of silt_arrow_ipc_schema. */
enum {
    /* A Timestamp without a time zone is written as Timestamp(unit, "UTC"):
     * silt's DuckDB TIMESTAMP columns are UTC instants (engine/schema.c
     * maps ODF Timestamp(unit, UTC) to them). */
    SILT_ARROW_NAIVE_UTC = 1,
};

/* Appends the Schema message of struct schema `s` (format "+s"; its
 * children are the columns) to `out`. `kv` (may be NULL) holds n_kv
 * key/value string pairs for the schema's custom_metadata. On failure out
 * keeps its previous length. */
int silt_arrow_ipc_schema(silt_buf *out, const struct ArrowSchema *s, int flags, const char *const *kv,
                          size_t n_kv);

/* Appends one RecordBatch message: `a` is a struct array of schema `s`
 * (one child per column), a->length the number of rows. On failure out
 * keeps its previous length. */
int silt_arrow_ipc_batch(silt_buf *out, const struct ArrowSchema *s, const struct ArrowArray *a);

/* Appends the end-of-stream marker ff ff ff ff 00 00 00 00. */
int silt_arrow_ipc_eos(silt_buf *out);

#endif
