/* read_count.c — record counts of read inputs, independent of DuckDB.
 *
 * silt_read_files cross-checks the rows its readers produced against the
 * records of the input counted here by a parser of our own, so that a reader
 * that drops (or invents) rows is an error instead of silent data loss:
 *   - CSV: one streaming pass over the bytes, honouring the quote and escape
 *     characters (line breaks inside quotes are data), LF / CRLF / CR line
 *     breaks, a final record without a line break and a leading UTF-8 BOM.
 *     The pass also measures the longest record, which sizes DuckDB's line
 *     buffer (read.c), and the empty lines before the first record (the
 *     header, when there is one, is the first non-empty record).
 *   - NDJSON: lines holding a byte other than JSON whitespace.
 * The record grammar is the one of csv_next() in read.c (the slow path's
 * scanner); the test suite checks both against DuckDB's reader.
 *
 * Invariants: linear time, constant memory (the file is mapped, or read in
 * 1 MiB pieces); the hot loop skips 16 (SSE2) or 8 bytes a step while none
 * of them is a special character of the current state.
 */
#include "engine/read.h"

#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define CHUNK (1u << 20)

typedef struct csv_counter {
    int quote, esc;              /* -1 = none; esc is -1 when it equals quote */
    bool in_q, pend_q, pend_esc; /* inside quotes; a quote / escape awaits the next byte */
    bool pend_cr;                /* a CR ended a record: a following LF belongs to it */
    bool started;                /* bytes were fed (the first record starts after a BOM) */
    uint64_t rec_start, line;
    /* line where the current record starts: rec_line + popcount(rec_bits)
     * (counted only when the record turns out the longest) */
    uint64_t rec_line, rec_bits;
    silt_csv_stats st;
} csv_counter;

/* First index >= i in p[0..n) holding a, b or c (n when none): 16 bytes a
 * step with SSE2, else 8 with the "has a zero byte" bit trick. */
static size_t skip_to(const unsigned char *p, size_t i, size_t n, unsigned char a, unsigned char b, unsigned char c)
{
#if defined(__SSE2__)
    const __m128i va = _mm_set1_epi8((char)a), vb = _mm_set1_epi8((char)b), vc = _mm_set1_epi8((char)c);
    while (i + 16 <= n) {
        __m128i w = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(w, va), _mm_cmpeq_epi8(w, vb)), _mm_cmpeq_epi8(w, vc));
        unsigned m = (unsigned)_mm_movemask_epi8(hit);
        if (m)
            return i + (size_t)__builtin_ctz(m);
        i += 16;
    }
#endif
    const uint64_t ones = UINT64_C(0x0101010101010101), highs = UINT64_C(0x8080808080808080);
    const uint64_t ma = ones * a, mb = ones * b, mc = ones * c;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t xa = w ^ ma, xb = w ^ mb, xc = w ^ mc;
        if ((((xa - ones) & ~xa) | ((xb - ones) & ~xb) | ((xc - ones) & ~xc)) & highs)
            break; /* the byte loop below finds which one */
        i += 8;
    }
    while (i < n && p[i] != a && p[i] != b && p[i] != c)
        i++;
    return i;
}

/* Bits set in x (portable: no popcnt instruction assumed). */
static uint64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & UINT64_C(0x5555555555555555));
    x = (x & UINT64_C(0x3333333333333333)) + ((x >> 2) & UINT64_C(0x3333333333333333));
    x = (x + (x >> 4)) & UINT64_C(0x0f0f0f0f0f0f0f0f);
    return (x * UINT64_C(0x0101010101010101)) >> 56;
}

static void end_record(csv_counter *k, uint64_t end)
{
    uint64_t len = end - k->rec_start;
    if (len == 0) {
        if (k->st.records == 0)
            k->st.leading_empty++;
        else
            k->st.empty++;
        return;
    }
    k->st.records++;
    if (len > k->st.max_len) {
        k->st.max_len = len;
        k->st.max_line = k->rec_line + popcount64(k->rec_bits);
    }
}

static void counter_init(csv_counter *k, const odf_ReadStepCsv *csv)
{
    memset(k, 0, sizeof *k);
    const char *quote = csv->quote ? csv->quote : "\"";
    const char *esc = csv->escape ? csv->escape : "\\";
    k->quote = *quote ? (unsigned char)quote[0] : -1;
    k->esc = *quote && *esc && esc[0] != quote[0] ? (unsigned char)esc[0] : -1;
    k->line = k->rec_line = 1;
}

/* The reference state machine, one special byte at a time: consumes
 * p[0..n), the bytes at file offset `base`. */
static void scalar_feed(csv_counter *k, const unsigned char *p, size_t n, uint64_t base)
{
    /* the special bytes of each state; a missing quote / escape repeats '\n' */
    const unsigned char q = k->quote >= 0 ? (unsigned char)k->quote : '\n';
    const unsigned char e = k->esc >= 0 ? (unsigned char)k->esc : q;
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (k->pend_cr) {
            k->pend_cr = false;
            if (c == '\n') {
                k->rec_start = base + ++i;
                continue;
            }
        }
        if (k->pend_q) {
            k->pend_q = false;
            if (c == q) { /* doubled quote: a literal one, still quoted */
                i++;
                continue;
            }
            k->in_q = false;
        }
        if (k->pend_esc) {
            k->pend_esc = false;
            if (c == q || c == e) {
                i++;
                continue;
            }
        }
        if (k->in_q) {
            i = skip_to(p, i, n, q, e, '\n');
            if (i == n)
                break;
            c = p[i++];
            if (c == '\n')
                k->line++;
            else if (k->esc >= 0 && c == e)
                k->pend_esc = true;
            else
                k->pend_q = true;
            continue;
        }
        i = skip_to(p, i, n, q, '\r', '\n');
        if (i == n)
            break;
        c = p[i];
        if (k->quote >= 0 && c == q) {
            k->in_q = true;
            i++;
            continue;
        }
        end_record(k, base + i);
        k->line++;
        k->pend_cr = c == '\r';
        k->rec_start = base + ++i;
        k->rec_line = k->line;
        k->rec_bits = 0;
    }
}

/* Bit i of each mask: byte i of p[0..64) is the quote / LF / CR / escape. */
static void block_masks(const csv_counter *k, const unsigned char *p, uint64_t *mq, uint64_t *mn, uint64_t *mr,
                        uint64_t *me)
{
#if defined(__SSE2__)
    const __m128i vq = _mm_set1_epi8((char)k->quote), ve = _mm_set1_epi8((char)k->esc);
    const __m128i vn = _mm_set1_epi8('\n'), vr = _mm_set1_epi8('\r');
    const __m128i w0 = _mm_loadu_si128((const __m128i *)(const void *)p);
    const __m128i w1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
    const __m128i w2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
    const __m128i w3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
#define MASK64(v)                                                                                                      \
    ((uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w0, v)) |                                                    \
     (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w1, v)) << 16 |                                              \
     (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w2, v)) << 32 |                                              \
     (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(w3, v)) << 48)
    *mn = MASK64(vn);
    *mr = MASK64(vr);
    *mq = k->quote >= 0 ? MASK64(vq) : 0;
    *me = k->esc >= 0 ? MASK64(ve) : 0;
#undef MASK64
#else
    *mq = *mn = *mr = *me = 0;
    for (unsigned j = 0; j < 64; j++) {
        uint64_t bit = (uint64_t)1 << j;
        *mn |= p[j] == '\n' ? bit : 0;
        *mr |= p[j] == '\r' ? bit : 0;
        *mq |= k->quote >= 0 && p[j] == k->quote ? bit : 0;
        *me |= k->esc >= 0 && p[j] == k->esc ? bit : 0;
    }
#endif
}

/* One 64-byte block without escape characters, no quote pending: the same
 * records as scalar_feed, from bit masks. Quoted bytes are those after an
 * odd number of quotes (a doubled quote toggles twice); an unquoted CR ends
 * a record and swallows a following LF; every unquoted line break and every
 * quoted LF starts a new line. */
static void fast_block(csv_counter *k, uint64_t base, uint64_t mq, uint64_t mn, uint64_t mr)
{
    uint64_t inq = mq; /* prefix XOR: bit i = odd number of quotes in [0, i] */
    inq ^= inq << 1;
    inq ^= inq << 2;
    inq ^= inq << 4;
    inq ^= inq << 8;
    inq ^= inq << 16;
    inq ^= inq << 32;
    if (k->in_q)
        inq = ~inq;
    uint64_t cr = mr & ~inq, lf = mn & ~inq;
    uint64_t lf_of_cr = lf & ((cr << 1) | (k->pend_cr ? 1 : 0));
    uint64_t term = cr | (lf & ~lf_of_cr);
    uint64_t lines = term | (mn & inq);
    uint64_t line0 = k->line;
    if (lf_of_cr & 1) /* the LF of a CR that ended the previous block */
        k->rec_start = base + 1;
    for (uint64_t t = term; t; t &= t - 1) {
        unsigned pos = (unsigned)__builtin_ctzll(t);
        end_record(k, base + pos);
        uint64_t upto = pos == 63 ? ~(uint64_t)0 : ((uint64_t)2 << pos) - 1;
        k->rec_line = line0;
        k->rec_bits = lines & upto;
        k->rec_start = base + pos + 1 + (pos < 63 ? (lf_of_cr >> (pos + 1)) & 1 : 0);
    }
    k->line = line0 + popcount64(lines);
    k->in_q = inq >> 63;
    k->pend_cr = (cr >> 63) & 1;
}

/* Consumes p[0..n), the bytes at file offset `base`: 64-byte blocks from
 * bit masks, blocks holding an escape character (rare) and the tail through
 * the state machine. */
static void counter_feed(csv_counter *k, const unsigned char *p, size_t n, uint64_t base)
{
    if (!k->started) {
        k->started = true;
        k->rec_start = base;
    }
    size_t i = 0;
    while (i < n) {
        if (k->pend_q || k->pend_esc || n - i < 64) {
            size_t m = n - i < 64 ? n - i : 1;
            scalar_feed(k, p + i, m, base + i);
            i += m;
            continue;
        }
        uint64_t mq, mn, mr, me;
        block_masks(k, p + i, &mq, &mn, &mr, &me);
        if (me)
            scalar_feed(k, p + i, 64, base + i);
        else
            fast_block(k, base + i, mq, mn, mr);
        i += 64;
    }
}

static void counter_finish(csv_counter *k, uint64_t end, silt_csv_stats *out)
{
    if (end > k->rec_start)
        end_record(k, end);
    *out = k->st;
}

static size_t bom_len(const unsigned char *p, size_t n)
{
    return n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF ? 3 : 0;
}

int silt_read_csv_scan_mem(const void *data, size_t len, const odf_ReadStepCsv *csv, silt_csv_stats *out)
{
    csv_counter k;
    counter_init(&k, csv);
    const unsigned char *p = data;
    size_t b = bom_len(p, len);
    counter_feed(&k, p + b, len - b, b);
    counter_finish(&k, len, out);
    return 0;
}

int silt_read_csv_scan_mem_scalar(const void *data, size_t len, const odf_ReadStepCsv *csv, silt_csv_stats *out)
{
    csv_counter k;
    counter_init(&k, csv);
    const unsigned char *p = data;
    size_t b = bom_len(p, len);
    k.started = true;
    k.rec_start = b;
    scalar_feed(&k, p + b, len - b, b);
    counter_finish(&k, len, out);
    return 0;
}

/* Streams `path` through feed(ctx, bytes, n, file offset of bytes): the
 * whole file mapped at once (no copy out of the page cache), or read in
 * CHUNK pieces where it cannot be mapped (a pipe); a leading UTF-8 BOM is
 * left out. *total = the file's size. */
static int stream_file(const char *path, const char *display, void (*feed)(void *, const unsigned char *, size_t, uint64_t),
                       void *ctx, uint64_t *total)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "%s: %s", display, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
        size_t len = (size_t)st.st_size;
        void *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            madvise(m, len, MADV_SEQUENTIAL);
            const unsigned char *p = m;
            size_t b = bom_len(p, len);
            feed(ctx, p + b, len - b, b);
            munmap(m, len);
            close(fd);
            *total = len;
            return 0;
        }
    }
    unsigned char *buf = malloc(CHUNK);
    if (!buf) {
        close(fd);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    uint64_t off = 0;
    size_t have = 0; /* bytes in buf: the first piece waits for 3 (a BOM) */
    int rc = 0;
    for (;;) {
        ssize_t got = read(fd, buf + have, CHUNK - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = silt_err(SILT_EIO, "%s: read error: %s", display, strerror(errno));
            break;
        }
        have += (size_t)got;
        if (got > 0 && off == 0 && have < 3)
            continue;
        if (have == 0)
            break;
        size_t b = off == 0 ? bom_len(buf, have) : 0;
        feed(ctx, buf + b, have - b, off + b);
        off += have;
        have = 0;
        if (got == 0)
            break;
    }
    free(buf);
    close(fd);
    *total = off;
    return rc;
}

static void csv_feed_cb(void *ctx, const unsigned char *p, size_t n, uint64_t base)
{
    counter_feed(ctx, p, n, base);
}

int silt_read_csv_scan(const char *path, const odf_ReadStepCsv *csv, const char *display, silt_csv_stats *out)
{
    csv_counter k;
    counter_init(&k, csv);
    uint64_t total = 0;
    int rc = stream_file(path, display ? display : path, csv_feed_cb, &k, &total);
    if (rc)
        return rc;
    counter_finish(&k, total, out);
    return 0;
}

uint64_t silt_read_csv_rows(const silt_csv_stats *s, bool header, size_t ncols)
{
    uint64_t rows = s->records;
    if (header && rows)
        rows--;
    if (ncols == 1) /* a one-column record may be empty: a NULL row */
        rows += s->empty + (header ? 0 : s->leading_empty);
    return rows;
}

/* ---- NDJSON ------------------------------------------------------------- */

typedef struct nd_counter {
    bool nonblank; /* the current line has a non-whitespace byte */
    uint64_t n;
} nd_counter;

static bool json_ws(unsigned char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static void nd_feed(void *ctx, const unsigned char *p, size_t n, uint64_t base)
{
    (void)base;
    nd_counter *k = ctx;
    size_t i = 0;
    while (i < n) {
        if (!k->nonblank) {
            while (i < n && json_ws(p[i]) && p[i] != '\n')
                i++;
            if (i == n)
                break;
            if (p[i] == '\n') {
                i++;
                continue;
            }
            k->nonblank = true;
        }
        const unsigned char *nl = memchr(p + i, '\n', n - i);
        if (!nl)
            break;
        k->n++;
        k->nonblank = false;
        i = (size_t)(nl - p) + 1;
    }
}

int silt_read_ndjson_count_mem(const void *data, size_t len, uint64_t *out)
{
    nd_counter k = {0};
    const unsigned char *p = data;
    size_t b = bom_len(p, len);
    nd_feed(&k, p + b, len - b, b);
    *out = k.n + (k.nonblank ? 1 : 0);
    return 0;
}

int silt_read_ndjson_count(const char *path, const char *display, uint64_t *out)
{
    nd_counter k = {0};
    uint64_t total = 0;
    int rc = stream_file(path, display ? display : path, nd_feed, &k, &total);
    if (rc)
        return rc;
    *out = k.n + (k.nonblank ? 1 : 0);
    return 0;
}
