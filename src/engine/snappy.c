/* snappy.c — Snappy raw format codec (see snappy.h).
 *
 * Element tags (low two bits): 00 literal (length-1 in the upper six bits,
 * or 60..63 = 1..4 little-endian length bytes follow), 01 copy with a 1-byte
 * offset (length 4..11, offset < 2048), 10 copy with a 2-byte offset (length
 * 1..64), 11 copy with a 4-byte offset. A copy may overlap its output.
 * Invariants of the decoder: out_pos <= dst_len at every step, a copy's
 * offset is 1..out_pos, reads never pass src[n).
 */
#include "engine/snappy.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static int bad(const char *what) { return silt_err(SILT_ECORRUPT, "snappy: %s", what); }

static int read_preamble(const uint8_t *src, size_t n, size_t *pos, uint64_t *len)
{
    uint64_t v = 0;
    for (int i = 0; i < 5; i++) {
        if (*pos >= n)
            return bad("truncated length preamble");
        uint8_t b = src[(*pos)++];
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (v > UINT32_MAX)
                return bad("length preamble out of range");
            *len = v;
            return 0;
        }
    }
    return bad("length preamble too long");
}

int silt_snappy_uncompressed_length(const uint8_t *src, size_t n, size_t *out)
{
    size_t pos = 0;
    uint64_t len = 0;
    int rc = read_preamble(src, n, &pos, &len);
    if (!rc)
        *out = (size_t)len;
    return rc;
}

static uint32_t le(const uint8_t *p, int k)
{
    uint32_t v = 0;
    for (int i = 0; i < k; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

int silt_snappy_uncompress(const uint8_t *src, size_t n, uint8_t *dst, size_t dst_len)
{
    size_t pos = 0, out = 0;
    uint64_t len = 0;
    int rc = read_preamble(src, n, &pos, &len);
    if (rc)
        return rc;
    if (len != dst_len)
        return bad("uncompressed length differs from the expected one");
    while (pos < n) {
        uint8_t tag = src[pos++];
        size_t l, off;
        if ((tag & 3) == 0) {
            l = (size_t)(tag >> 2) + 1;
            if (l > 60) {
                int k = (int)l - 60;
                if (n - pos < (size_t)k)
                    return bad("truncated literal length");
                l = (size_t)le(src + pos, k) + 1;
                pos += (size_t)k;
            }
            if (l > n - pos || l > dst_len - out)
                return bad("literal overruns its buffer");
            memcpy(dst + out, src + pos, l);
            pos += l;
            out += l;
            continue;
        }
        if ((tag & 3) == 1) {
            if (pos >= n)
                return bad("truncated copy");
            l = (size_t)((tag >> 2) & 7) + 4;
            off = (size_t)(tag >> 5) << 8 | src[pos++];
        } else {
            int k = (tag & 3) == 2 ? 2 : 4;
            if (n - pos < (size_t)k)
                return bad("truncated copy");
            l = (size_t)(tag >> 2) + 1;
            off = le(src + pos, k);
            pos += (size_t)k;
        }
        if (off == 0 || off > out)
            return bad("copy offset outside the output");
        if (l > dst_len - out)
            return bad("copy overruns the output");
        for (size_t i = 0; i < l; i++, out++)
            dst[out] = dst[out - off];
    }
    if (out != dst_len)
        return bad("stream ends before the uncompressed length");
    return 0;
}

/* ------------------------------------------------------------ compression */

#define HASH_BITS 14

static int emit_literal(silt_buf *b, const uint8_t *p, size_t n)
{
    while (n) {
        size_t l = n > 65536 ? 65536 : n;
        uint8_t h[5];
        size_t hn;
        if (l <= 60) {
            h[0] = (uint8_t)((l - 1) << 2);
            hn = 1;
        } else if (l <= 256) {
            h[0] = 60 << 2;
            h[1] = (uint8_t)(l - 1);
            hn = 2;
        } else {
            h[0] = 61 << 2;
            h[1] = (uint8_t)((l - 1) & 0xff);
            h[2] = (uint8_t)((l - 1) >> 8);
            hn = 3;
        }
        int rc = silt_buf_append(b, h, hn);
        if (!rc)
            rc = silt_buf_append(b, p, l);
        if (rc)
            return rc;
        p += l;
        n -= l;
    }
    return 0;
}

/* One copy element of length 1..64 (4..11 with a short offset). */
static int emit_copy1(silt_buf *b, size_t off, size_t l)
{
    uint8_t h[5];
    size_t hn;
    if (l >= 4 && l <= 11 && off < 2048) {
        h[0] = (uint8_t)(1 | (l - 4) << 2 | (off >> 8) << 5);
        h[1] = (uint8_t)(off & 0xff);
        hn = 2;
    } else if (off < 65536) {
        h[0] = (uint8_t)(2 | (l - 1) << 2);
        h[1] = (uint8_t)(off & 0xff);
        h[2] = (uint8_t)(off >> 8);
        hn = 3;
    } else {
        h[0] = (uint8_t)(3 | (l - 1) << 2);
        for (int i = 0; i < 4; i++)
            h[1 + i] = (uint8_t)(off >> (8 * i));
        hn = 5;
    }
    return silt_buf_append(b, h, hn);
}

/* A match of length l >= 4: elements of at most 64, none shorter than 4. */
static int emit_copy(silt_buf *b, size_t off, size_t l)
{
    int rc = 0;
    while (!rc && l >= 68) {
        rc = emit_copy1(b, off, 64);
        l -= 64;
    }
    if (!rc && l > 64) {
        rc = emit_copy1(b, off, 60);
        l -= 60;
    }
    return rc ? rc : emit_copy1(b, off, l);
}

static uint32_t load32(const uint8_t *p) { return le(p, 4); }
static uint32_t hash32(uint32_t v) { return (v * 0x1e35a7bdu) >> (32 - HASH_BITS); }

int silt_snappy_compress(silt_buf *out, const uint8_t *src, size_t n)
{
    if (n > UINT32_MAX)
        return silt_err(SILT_EINVAL, "snappy: input of %zu bytes is too large", n);
    uint8_t pre[5];
    size_t pn = 0;
    uint64_t v = n;
    do {
        uint8_t x = v & 0x7f;
        v >>= 7;
        pre[pn++] = (uint8_t)(x | (v ? 0x80 : 0));
    } while (v);
    int rc = silt_buf_append(out, pre, pn);
    if (rc || n == 0)
        return rc;
    uint32_t *table = calloc((size_t)1 << HASH_BITS, sizeof *table); /* position + 1, 0 = empty */
    if (!table)
        return silt_err(SILT_ENOMEM, "out of memory");
    size_t lit = 0, i = 0;
    while (!rc && n >= 4 && i + 4 <= n) {
        uint32_t cur = load32(src + i);
        uint32_t h = hash32(cur);
        size_t cand = table[h];
        table[h] = (uint32_t)(i + 1);
        if (cand == 0 || load32(src + cand - 1) != cur) {
            i++;
            continue;
        }
        size_t c = cand - 1, l = 4;
        while (i + l < n && src[c + l] == src[i + l])
            l++;
        rc = emit_literal(out, src + lit, i - lit);
        if (!rc)
            rc = emit_copy(out, i - c, l);
        i += l;
        lit = i;
    }
    if (!rc)
        rc = emit_literal(out, src + lit, n - lit);
    free(table);
    return rc;
}
