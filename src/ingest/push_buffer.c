/* push_buffer.c — encoding and parsing of push buffer files (see
 * push_buffer.h). Pure functions over bytes: the file handling is in
 * push_rest.c. A frame is trusted only when every check holds; the parser
 * never reads past `len`. */
#include "ingest/push_buffer.h"

#include "util/error.h"

#include <stdlib.h>
#include <string.h>

#define FRAME_MAGIC 0x31465053u
enum { T_DATA = 1, T_MARK = 2, T_MSG = 3, T_REL = 4 };
#define MSG_HDR 12 /* u16 id, u8 qos, u8 0, u64 hash */

static uint32_t crc_table[256];
static int crc_ready;

static void crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[i] = c;
    }
    __atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc32_of(const uint8_t *p, size_t n)
{
    if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
        crc_init(); /* idempotent: concurrent first calls write the same table */
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++)
        c = crc_table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

/* Appends a frame of `type` whose payload is `plen` bytes at out->data+at
 * (already appended after room for the header). */
static int finish_frame(silt_buf *out, size_t at, int type, uint64_t seq)
{
    uint8_t *h = (uint8_t *)out->data + at;
    size_t plen = out->len - at - SILT_PBUF_FRAME_HDR;
    if (plen > SILT_PBUF_MAX_FRAME)
        return silt_err(SILT_EINVAL, "push buffer: a request of %zu bytes is larger than a frame may be", plen);
    put32(h, FRAME_MAGIC);
    h[4] = (uint8_t)type;
    h[5] = h[6] = h[7] = 0;
    put32(h + 8, (uint32_t)plen);
    put64(h + 12, seq);
    uint32_t crc = crc32_of(h + 4, 16);
    /* the CRC covers type..seq and then the payload: chain the two ranges */
    uint8_t tmp[4];
    put32(tmp, crc);
    silt_buf both = SILT_BUF_INIT;
    if (silt_buf_append(&both, tmp, 4) || silt_buf_append(&both, h + SILT_PBUF_FRAME_HDR, plen)) {
        silt_buf_free(&both);
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    }
    put32(h + 20, crc32_of((const uint8_t *)both.data, both.len));
    silt_buf_free(&both);
    return 0;
}

static int reserve_hdr(silt_buf *out, size_t *at)
{
    *at = out->len;
    static const uint8_t zero[SILT_PBUF_FRAME_HDR];
    return silt_buf_append(out, zero, sizeof zero) ? silt_err(SILT_ENOMEM, "push buffer: out of memory") : 0;
}

/* Appends u32 n, then n × (u32 length, bytes). */
static int put_records(silt_buf *out, const char *const *recs, const size_t *lens, size_t n)
{
    uint8_t w[4];
    put32(w, (uint32_t)n);
    if (n > UINT32_MAX || silt_buf_append(out, w, 4))
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    for (size_t i = 0; i < n; i++) {
        if (lens[i] > SILT_PBUF_MAX_FRAME)
            return silt_err(SILT_EINVAL, "push buffer: a record of %zu bytes is too large", lens[i]);
        put32(w, (uint32_t)lens[i]);
        if (silt_buf_append(out, w, 4) || silt_buf_append(out, recs[i], lens[i]))
            return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    }
    return 0;
}

int silt_pbuf_encode_data(silt_buf *out, uint64_t first_seq, const char *const *recs, const size_t *lens,
                          size_t n)
{
    size_t at;
    int rc = reserve_hdr(out, &at);
    if (!rc)
        rc = put_records(out, recs, lens, n);
    return rc ? rc : finish_frame(out, at, T_DATA, first_seq);
}

int silt_pbuf_encode_msg(silt_buf *out, uint64_t first_seq, const silt_pbuf_msg *m, const char *const *recs,
                         const size_t *lens, size_t n)
{
    size_t at;
    int rc = reserve_hdr(out, &at);
    uint8_t h[MSG_HDR] = {(uint8_t)m->id, (uint8_t)(m->id >> 8), m->qos, 0};
    put64(h + 4, m->hash);
    if (!rc && silt_buf_append(out, h, sizeof h))
        rc = silt_err(SILT_ENOMEM, "push buffer: out of memory");
    if (!rc)
        rc = put_records(out, recs, lens, n);
    return rc ? rc : finish_frame(out, at, T_MSG, first_seq);
}

int silt_pbuf_encode_rel(silt_buf *out, uint64_t next_seq, uint16_t id)
{
    size_t at;
    int rc = reserve_hdr(out, &at);
    uint8_t w[4] = {(uint8_t)id, (uint8_t)(id >> 8), 0, 0};
    if (!rc && silt_buf_append(out, w, 4))
        rc = silt_err(SILT_ENOMEM, "push buffer: out of memory");
    return rc ? rc : finish_frame(out, at, T_REL, next_seq);
}

int silt_pbuf_encode_mark(silt_buf *out, uint64_t drop_before, uint64_t dropped_total, uint64_t next_seq)
{
    size_t at;
    int rc = reserve_hdr(out, &at);
    if (rc)
        return rc;
    uint8_t w[16];
    put64(w, dropped_total);
    put64(w + 8, next_seq);
    if (silt_buf_append(out, w, 16))
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    return finish_frame(out, at, T_MARK, drop_before);
}

/* The records of a DATA payload: false when its structure is inconsistent. */
static bool data_ok(const uint8_t *p, size_t n, uint32_t *count, bool allow_empty)
{
    if (n < 4)
        return false;
    *count = get32(p);
    size_t off = 4;
    for (uint32_t i = 0; i < *count; i++) {
        if (n - off < 4)
            return false;
        uint32_t l = get32(p + off);
        off += 4;
        if (n - off < l)
            return false;
        off += l;
    }
    return off == n && (*count > 0 || allow_empty);
}

static int emit_records(const uint8_t *p, uint64_t seq, uint32_t count, silt_pbuf_record_fn fn, void *ctx)
{
    size_t off = 4;
    for (uint32_t i = 0; fn && i < count; i++) {
        uint32_t l = get32(p + off);
        int rc = fn(ctx, seq + i, (const char *)p + off + 4, l);
        if (rc)
            return rc;
        off += 4 + (size_t)l;
    }
    return 0;
}

/* Checks one frame at `p` (`avail` bytes) against the scan so far and
 * applies it; 1 = applied (*flen = its size), 0 = not a valid frame. */
static int apply_frame(const uint8_t *p, size_t avail, silt_pbuf_scan *s, size_t *flen, uint32_t *count)
{
    if (avail < SILT_PBUF_FRAME_HDR || get32(p) != FRAME_MAGIC || p[4] < T_DATA || p[4] > T_REL || p[5] ||
        p[6] || p[7])
        return 0;
    uint32_t plen = get32(p + 8);
    if (plen > SILT_PBUF_MAX_FRAME || avail - SILT_PBUF_FRAME_HDR < plen)
        return 0;
    uint8_t tmp[4];
    put32(tmp, crc32_of(p + 4, 16));
    /* CRC over (crc of header fields) || payload, as finish_frame computes it */
    uint32_t c = 0xFFFFFFFFu;
    if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
        crc_init();
    for (int i = 0; i < 4; i++)
        c = crc_table[(c ^ tmp[i]) & 0xFF] ^ (c >> 8);
    const uint8_t *pl = p + SILT_PBUF_FRAME_HDR;
    for (uint32_t i = 0; i < plen; i++)
        c = crc_table[(c ^ pl[i]) & 0xFF] ^ (c >> 8);
    if ((c ^ 0xFFFFFFFFu) != get32(p + 20))
        return 0;
    uint64_t seq = get64(p + 12);
    bool first = s->frames == 0;
    if (p[4] == T_DATA || p[4] == T_MSG) {
        size_t skip = p[4] == T_MSG ? MSG_HDR : 0;
        if (plen < skip || (skip && (pl[2] > 2 || pl[3])) || !data_ok(pl + skip, plen - skip, count, skip > 0) ||
            (!first && seq != s->next_seq) || seq > UINT64_MAX - *count)
            return 0;
        if (first)
            s->base_seq = s->drop_before = seq;
        s->next_seq = seq + *count;
    } else if (p[4] == T_REL) {
        if (plen != 4 || pl[2] || pl[3] || (!first && seq != s->next_seq))
            return 0;
        if (first)
            s->base_seq = s->drop_before = s->next_seq = seq;
        *count = 0;
    } else {
        if (plen != 16)
            return 0;
        uint64_t total = get64(pl), next = get64(pl + 8);
        if (seq > next || (!first && (next != s->next_seq || total < s->dropped_total)))
            return 0;
        if (first)
            s->base_seq = s->next_seq = next;
        if (first || seq > s->drop_before) /* a MARK never brings dropped records back */
            s->drop_before = seq;
        s->dropped_total = total;
        *count = 0;
    }
    *flen = SILT_PBUF_FRAME_HDR + plen;
    return 1;
}

/* Reports a valid MSG / REL frame at `f` to mfn. */
static int report_msg(const uint8_t *f, const silt_pbuf_scan *s, uint32_t count, silt_pbuf_msg_fn mfn, void *mctx)
{
    const uint8_t *pl = f + SILT_PBUF_FRAME_HDR;
    silt_pbuf_msg m = {.rel = f[4] == T_REL, .id = (uint16_t)(pl[0] | pl[1] << 8)};
    if (!m.rel) {
        m.qos = pl[2];
        m.hash = get64(pl + 4);
        m.count = count;
        m.first_seq = s->next_seq - count;
    }
    return mfn(mctx, &m);
}

int silt_pbuf_parse(const uint8_t *data, size_t len, silt_pbuf_scan *out, silt_pbuf_record_fn fn, void *ctx)
{
    return silt_pbuf_parse_ex(data, len, out, fn, ctx, NULL, NULL);
}

int silt_pbuf_parse_ex(const uint8_t *data, size_t len, silt_pbuf_scan *out, silt_pbuf_record_fn fn, void *ctx,
                       silt_pbuf_msg_fn mfn, void *mctx)
{
    memset(out, 0, sizeof *out);
    if (len == 0)
        return 0;
    if (len < SILT_PBUF_HEADER_LEN || memcmp(data, SILT_PBUF_HEADER, SILT_PBUF_HEADER_LEN) != 0) {
        if (len < SILT_PBUF_HEADER_LEN && memcmp(data, SILT_PBUF_HEADER, len) == 0) {
            out->torn = true; /* a header write torn by a crash: an empty buffer */
            return 0;
        }
        return silt_err(SILT_ECORRUPT, "push buffer: not a silt push buffer file (bad header)");
    }
    size_t off = SILT_PBUF_HEADER_LEN;
    out->valid_end = off;
    while (off < len) {
        size_t flen = 0;
        uint32_t count = 0;
        if (!apply_frame(data + off, len - off, out, &flen, &count))
            break;
        out->frames++;
        if (mfn && (data[off + 4] == T_MSG || data[off + 4] == T_REL)) {
            int rc = report_msg(data + off, out, count, mfn, mctx);
            if (rc)
                return rc;
        }
        if (count) {
            const uint8_t *recs = data + off + SILT_PBUF_FRAME_HDR + (data[off + 4] == T_MSG ? MSG_HDR : 0);
            int rc = emit_records(recs, out->next_seq - count, count, fn, ctx);
            if (rc)
                return rc;
        }
        off += flen;
        out->valid_end = off;
    }
    out->torn = off < len;
    return 0;
}

/* ---- carrying MQTT packet-id state over a compaction ------------------------ */

typedef struct carry_ent {
    bool live;
    uint8_t qos;
    uint64_t hash;
} carry_ent;

static int carry_note(void *ctx, const silt_pbuf_msg *m)
{
    carry_ent *t = ctx;
    if (m->id == 0)
        return 0;
    if (m->rel)
        t[m->id].live = false;
    else
        t[m->id] = (carry_ent){true, m->qos, m->hash};
    return 0;
}

int silt_pbuf_encode_carry(silt_buf *out, const uint8_t *data, size_t end, uint64_t next_seq)
{
    carry_ent *t = calloc(65536, sizeof *t);
    if (!t)
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    silt_pbuf_scan sc;
    int rc = silt_pbuf_parse_ex(data, end, &sc, NULL, NULL, carry_note, t);
    for (uint32_t id = 1; !rc && id < 65536; id++) {
        if (!t[id].live)
            continue;
        silt_pbuf_msg m = {.id = (uint16_t)id, .qos = t[id].qos, .hash = t[id].hash};
        rc = silt_pbuf_encode_msg(out, next_seq, &m, NULL, NULL, 0);
    }
    free(t);
    return rc;
}

void silt_pbuf_lines_free(silt_pbuf_lines *r)
{
    silt_buf_free(&r->text);
    free(r->v);
    free(r->len);
    memset(r, 0, sizeof *r);
}

int silt_pbuf_lines_split(silt_pbuf_lines *r)
{
    size_t cap = 1;
    for (size_t i = 0; i < r->text.len; i++)
        cap += r->text.data[i] == '\n';
    r->v = malloc(cap * sizeof *r->v);
    r->len = malloc(cap * sizeof *r->len);
    if (!r->v || !r->len)
        return silt_err(SILT_ENOMEM, "push buffer: out of memory");
    const char *p = r->text.data, *end = p + r->text.len;
    while (p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        if (e > p) {
            r->v[r->n] = p;
            r->len[r->n++] = (size_t)(e - p);
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}
