/* push_buffer.h — the write-ahead file of a buffered RestEndpoint source
 * (`<.silt>/buffers/<dataset id>/<source>.wal`, docs/ingestion.md).
 *
 * Layout: the 8-byte header "SILTPB1\n", then frames, each
 *   u32 magic 0x31465053 ("SPF1") | u8 type | 3 zero bytes | u32 payload
 *   length | u64 seq | u32 CRC-32 of (type … payload) | payload
 * (little-endian). A DATA frame (type 1) holds records seq, seq+1, …:
 * payload = u32 count, then count × (u32 length, bytes); a record is one
 * NDJSON line (no line break). A MARK frame (type 2) says records below
 * seq are dropped or ingested: payload = u64 dropped_total, u64 next_seq.
 * MQTT sources (mqtt_source.c) add two types: a MSG frame (type 3) is one
 * MQTT message: payload = u16 packet id, u8 qos, u8 0, u64 hash of topic
 * and payload, then a DATA payload whose count may be 0 (a message kept
 * only for its packet id); a REL frame (type 4, seq = next_seq) records a
 * QoS 2 PUBREL: payload = u16 packet id, 2 zero bytes.
 *
 * Invariants: records are numbered without gaps; a frame is acknowledged
 * only once it is fsynced, so everything from the first frame that is
 * short, has a bad magic, type, CRC or sequence number onwards is a torn
 * append (never acknowledged) and is ignored — and cut off by the next
 * writer. Memory: encoders append to the caller's silt_buf.
 */
#ifndef SILT_INGEST_PUSH_BUFFER_H
#define SILT_INGEST_PUSH_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define SILT_PBUF_HEADER "SILTPB1\n"
#define SILT_PBUF_HEADER_LEN 8
#define SILT_PBUF_FRAME_HDR 24
#define SILT_PBUF_MAX_FRAME (1u << 30) /* payload bytes */

/* What a parse of a buffer file found. */
typedef struct silt_pbuf_scan {
    uint64_t valid_end;     /* bytes of the valid prefix (header included) */
    uint64_t base_seq;      /* seq of the first record the file numbers */
    uint64_t next_seq;      /* seq the next record gets */
    uint64_t drop_before;   /* records with a lower seq are gone (dropped or ingested) */
    uint64_t dropped_total; /* records dropped by DropOldest since the buffer exists */
    uint64_t frames;        /* valid frames */
    bool torn;              /* bytes after valid_end */
} silt_pbuf_scan;

/* Called for every record of a valid DATA frame (also for the ones below
 * drop_before: the caller filters); nonzero stops the parse with it. */
typedef int (*silt_pbuf_record_fn)(void *ctx, uint64_t seq, const char *rec, size_t len);

/* Parses `len` bytes of a buffer file. An empty input is an empty buffer;
 * a wrong header is SILT_ECORRUPT (nothing is trusted); a bad frame ends
 * the valid prefix (out->torn). `fn` may be NULL. */
int silt_pbuf_parse(const uint8_t *data, size_t len, silt_pbuf_scan *out, silt_pbuf_record_fn fn, void *ctx);

/* A MSG or REL frame, as silt_pbuf_parse_ex reports it. */
typedef struct silt_pbuf_msg {
    bool rel;           /* a REL frame (only id is set) */
    uint16_t id;        /* MQTT packet id (0 for QoS 0) */
    uint8_t qos;
    uint64_t hash;
    uint64_t first_seq; /* of its records */
    uint32_t count;
} silt_pbuf_msg;
typedef int (*silt_pbuf_msg_fn)(void *ctx, const silt_pbuf_msg *m);

/* silt_pbuf_parse that also calls `mfn` (may be NULL) for every valid MSG
 * and REL frame, in file order. */
int silt_pbuf_parse_ex(const uint8_t *data, size_t len, silt_pbuf_scan *out, silt_pbuf_record_fn fn, void *ctx,
                       silt_pbuf_msg_fn mfn, void *mctx);

/* Appends one MSG frame (its records numbered from `first_seq`; n may be 0). */
int silt_pbuf_encode_msg(silt_buf *out, uint64_t first_seq, const silt_pbuf_msg *m, const char *const *recs,
                         const size_t *lens, size_t n);
/* Appends one REL frame for packet `id`; `next_seq` is the file's. */
int silt_pbuf_encode_rel(silt_buf *out, uint64_t next_seq, uint16_t id);

/* The packet-id state of the MQTT frames in data[0..end) — per id the
 * newest MSG, unless a REL released it — re-encoded as record-less MSG
 * frames numbered at `next_seq`, so a compaction that drops those frames
 * keeps the state duplicate detection needs. Nothing for a file without
 * MSG frames. */
int silt_pbuf_encode_carry(silt_buf *out, const uint8_t *data, size_t end, uint64_t next_seq);

/* Appends one DATA frame numbering records from `first_seq`. */
int silt_pbuf_encode_data(silt_buf *out, uint64_t first_seq, const char *const *recs, const size_t *lens,
                          size_t n);
/* Appends one MARK frame. */
int silt_pbuf_encode_mark(silt_buf *out, uint64_t drop_before, uint64_t dropped_total, uint64_t next_seq);

/* Records of a request or message body as NDJSON lines: `text` owns the
 * bytes, v[i] / len[i] point into it (non-empty lines only). */
typedef struct silt_pbuf_lines {
    silt_buf text;
    const char **v;
    size_t *len;
    size_t n;
} silt_pbuf_lines;
/* Splits r->text at '\n' into r->v / r->len / r->n (empty lines skipped).
 * SILT_ENOMEM on allocation failure (r stays freeable). */
int silt_pbuf_lines_split(silt_pbuf_lines *r);
/* Frees what r owns and zeroes it. */
void silt_pbuf_lines_free(silt_pbuf_lines *r);

#endif
