/* parquet_required.c — OPTIONAL -> REQUIRED rewrite of Parquet columns (see
 * parquet_required.h).
 *
 * The file is copied to a temporary file in one pass: byte ranges outside
 * the column chunks of the selected leaves are copied verbatim; inside them
 * every page is read, data pages are rewritten (definition levels lowered by
 * one, dropped when the new maximum is 0) and the rest copied. The footer
 * (a Thrift tree, src/engine/thrift.h) then gets REQUIRED for the selected
 * top-level fields, the new chunk sizes, and every absolute offset moved by
 * the bytes removed before it.
 *
 * Invariants:
 *  - the input is never modified; the temporary file replaces it by rename
 *    only after everything was written and fsynced;
 *  - every offset and size read from the file is checked against the chunk
 *    or file it must lie in before it is used;
 *  - the shift table holds, per rewritten page in file order, the page's old
 *    end and the total bytes removed up to it, so an offset that points at a
 *    page boundary or outside the rewritten chunks maps exactly.
 * Parquet field ids are those of apache/parquet-format parquet.thrift.
 */
#include "engine/parquet_required.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/parquet_meta.h"
#include "engine/snappy.h"
#include "engine/thrift.h"
#include "util/arena.h"
#include "util/error.h"

#define FOOTER_MAX (256u * 1024u * 1024u)
#define COPY_BLOCK (1u << 20)
#define HEADER_WINDOW (64u * 1024u)

/* ------------------------------------------------------------ CRC-32 */

uint32_t silt_parquet_crc32(const uint8_t *p, size_t n)
{
    static uint32_t table[256];
    static _Thread_local bool ready;
    if (!ready) {
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++)
                c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[i] = c;
        }
        ready = true;
    }
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++)
        c = table[(c ^ p[i]) & 0xff] ^ (c >> 8);
    return c ^ 0xffffffffu;
}

/* ------------------------------------------------------------ levels */

int silt_parquet_level_width(int max_level)
{
    int w = 0;
    while (max_level >> w)
        w++;
    return w;
}

#define MAX_PAGE_LEVELS ((size_t)1 << 26)

static int put_varint(silt_buf *b, uint64_t h)
{
    uint8_t tmp[10];
    size_t k = 0;
    do {
        uint8_t x = h & 0x7f;
        h >>= 7;
        tmp[k++] = (uint8_t)(x | (h ? 0x80 : 0));
    } while (h);
    return silt_buf_append(b, tmp, k);
}

/* Length of the run of equal values at v[i], counted up to `cap`. */
static size_t run_at(const uint16_t *v, size_t n, size_t i, size_t cap)
{
    size_t r = 1;
    while (i + r < n && r < cap && v[i + r] == v[i])
        r++;
    return r;
}

/* RLE/bit-packing hybrid encoding of v[0..n) at bit width bw >= 1: runs of
 * 8 or more equal values as RLE runs, everything else bit-packed in groups
 * of 8 (at most 63 groups per run; the last group is padded with zeros,
 * which readers ignore past the value count). */
static int encode_hybrid(silt_buf *out, const uint16_t *v, size_t n, int bw)
{
    int rc = 0;
    size_t i = 0;
    while (!rc && i < n) {
        size_t r = run_at(v, n, i, SIZE_MAX);
        if (r >= 8) {
            rc = put_varint(out, (uint64_t)r << 1);
            for (int k = 0; !rc && k < (bw + 7) / 8; k++) {
                uint8_t byte = (uint8_t)(v[i] >> (8 * k));
                rc = silt_buf_append(out, &byte, 1);
            }
            i += r;
            continue;
        }
        size_t j = i, groups = 0;
        do {
            j += 8;
            groups++;
        } while (j < n && groups < 63 && run_at(v, n, j, 8) < 8);
        rc = put_varint(out, (uint64_t)groups << 1 | 1);
        size_t nbytes = groups * (size_t)bw;
        if (!rc)
            rc = silt_buf_reserve(out, nbytes);
        if (rc)
            return rc;
        uint8_t *p = (uint8_t *)out->data + out->len;
        memset(p, 0, nbytes);
        for (size_t k = 0; k < groups * 8 && i + k < n; k++) {
            uint64_t bit = (uint64_t)k * (uint64_t)bw;
            for (int b = 0; b < bw; b++, bit++)
                if (v[i + k] >> b & 1)
                    p[bit >> 3] |= (uint8_t)(1u << (bit & 7));
        }
        out->len += nbytes;
        out->data[out->len] = '\0';
        i = j;
    }
    return rc;
}

/* Decodes n hybrid levels of width bw into v, each lowered by one. */
static int decode_lowered(const uint8_t *src, size_t len, size_t n, int bw, int max_level, uint16_t *v, size_t *used)
{
    size_t pos = 0, done = 0;
    while (done < n) {
        uint64_t h = 0;
        for (int i = 0;; i++) {
            if (pos >= len || i == 10)
                return silt_err(SILT_ECORRUPT, "truncated definition levels");
            uint8_t b = src[pos++];
            h |= (uint64_t)(b & 0x7f) << (7 * i);
            if (!(b & 0x80))
                break;
        }
        uint64_t count;
        const uint8_t *p = src + pos;
        uint32_t rle = 0;
        if (h & 1) { /* bit-packed groups of 8 */
            uint64_t groups = h >> 1;
            if (groups == 0 || groups > (len - pos) / (size_t)bw)
                return silt_err(SILT_ECORRUPT, "truncated definition levels");
            count = groups * 8;
            pos += (size_t)groups * (size_t)bw;
        } else { /* RLE run */
            count = h >> 1;
            int nb = (bw + 7) / 8;
            if ((size_t)nb > len - pos)
                return silt_err(SILT_ECORRUPT, "truncated definition levels");
            for (int k = 0; k < nb; k++)
                rle |= (uint32_t)src[pos + (size_t)k] << (8 * k);
            pos += (size_t)nb;
        }
        for (uint64_t i = 0; i < count && done < n; i++, done++) {
            uint32_t x = rle;
            if (h & 1) {
                x = 0;
                uint64_t bit = i * (uint64_t)bw;
                for (int k = 0; k < bw; k++, bit++)
                    x |= (uint32_t)((p[bit >> 3] >> (bit & 7)) & 1) << k;
            }
            if (x == 0)
                return silt_err(SILT_EINVAL, "null");
            if ((int64_t)x > max_level)
                return silt_err(SILT_ECORRUPT, "definition level %u above the maximum %d", (unsigned)x, max_level);
            v[done] = (uint16_t)(x - 1);
        }
    }
    *used = pos;
    return 0;
}

int silt_parquet_lower_levels(const uint8_t *src, size_t len, size_t n, int bw, int max_level, int new_bw,
                              silt_buf *out, size_t *used)
{
    if (bw < 1 || bw > 16 || new_bw < 0 || new_bw > 16)
        return silt_err(SILT_EINVAL, "level bit widths %d -> %d are not supported", bw, new_bw);
    if (n > MAX_PAGE_LEVELS)
        return silt_err(SILT_EUNSUPPORTED, "pages of more than %zu values are not supported", MAX_PAGE_LEVELS);
    uint16_t *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return silt_err(SILT_ENOMEM, "out of memory");
    size_t u = 0;
    int rc = decode_lowered(src, len, n, bw, max_level, v, &u);
    if (!rc && new_bw)
        rc = encode_hybrid(out, v, n, new_bw);
    if (!rc && used)
        *used = u;
    free(v);
    return rc;
}

/* ------------------------------------------------------------ the rewrite */

typedef struct leaf {
    size_t top;
    int max_def, max_rep;
    bool is_top; /* the leaf is the top-level field itself (a primitive) */
} leaf;

typedef struct job {
    uint64_t start, end;
    size_t rg;
    silt_thrift_value *cmd; /* ColumnMetaData */
    const char *name;       /* top-level column */
    int codec, max_def, max_rep;
    bool is_top;  /* null counts of the leaf are nulls of the column */
    int64_t removed_c, removed_u; /* bytes removed: stored, uncompressed */
} job;

typedef struct shift {
    uint64_t end;    /* old end of a rewritten page */
    int64_t removed; /* bytes removed up to and including that page */
} shift;

typedef struct rw {
    const char *path;
    int in, out;
    silt_arena *a;
    uint64_t fpos; /* old footer position */
    silt_buf ob;   /* pending output */
    shift *sh;
    size_t nsh, capsh;
    int64_t removed;
    uint8_t *tmp; /* COPY_BLOCK scratch */
    /* schema */
    silt_thrift_value **els;
    size_t nel, ntop, nleaf;
    size_t *top_el;
    leaf *leaves;
} rw;

static int unsupported(const rw *w, const char *what)
{
    return silt_err(SILT_EUNSUPPORTED, "%s: cannot make columns REQUIRED: %s", w->path, what);
}

static int corrupt(const rw *w, const char *what)
{
    return silt_err(SILT_ECORRUPT, "%s: corrupt Parquet file: %s", w->path, what);
}

static int pread_all(rw *w, void *buf, size_t n, uint64_t off)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t k = pread(w->in, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return silt_err(SILT_EIO, "%s: read failed: %s", w->path, k < 0 ? strerror(errno) : "unexpected end");
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

static int flush_out(rw *w)
{
    const char *p = w->ob.data;
    size_t n = w->ob.len;
    while (n) {
        ssize_t k = write(w->out, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return silt_err(SILT_EIO, "%s: write failed: %s", w->path, k < 0 ? strerror(errno) : "short write");
        p += k;
        n -= (size_t)k;
    }
    w->ob.len = 0;
    return 0;
}

static int out_write(rw *w, const void *p, size_t n)
{
    int rc = silt_buf_append(&w->ob, p, n);
    if (!rc && w->ob.len >= COPY_BLOCK)
        rc = flush_out(w);
    return rc;
}

static int copy_range(rw *w, uint64_t from, uint64_t to)
{
    while (from < to) {
        size_t k = to - from > COPY_BLOCK ? COPY_BLOCK : (size_t)(to - from);
        int rc = pread_all(w, w->tmp, k, from);
        if (!rc)
            rc = out_write(w, w->tmp, k);
        if (rc)
            return rc;
        from += k;
    }
    return 0;
}

static uint64_t map_offset(const rw *w, uint64_t p)
{
    size_t lo = 0, hi = w->nsh; /* first shift with end > p */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (w->sh[mid].end <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo == 0 ? p : (uint64_t)((int64_t)p - w->sh[lo - 1].removed);
}

static int add_shift(rw *w, uint64_t end, int64_t removed)
{
    if (w->nsh == w->capsh) {
        size_t cap = w->capsh ? w->capsh * 2 : 64;
        shift *n = realloc(w->sh, cap * sizeof *n);
        if (!n)
            return silt_err(SILT_ENOMEM, "out of memory");
        w->sh = n;
        w->capsh = cap;
    }
    w->removed += removed;
    w->sh[w->nsh++] = (shift){end, w->removed};
    return 0;
}

/* ---- schema */

static int walk(rw *w, size_t *next, int64_t nchildren, int def, int rep, size_t top, int depth)
{
    if (depth > 64)
        return corrupt(w, "schema nested too deep");
    for (int64_t c = 0; c < nchildren; c++) {
        if (*next >= w->nel)
            return corrupt(w, "schema tree needs more elements than it has");
        size_t ei = (*next)++;
        const silt_thrift_value *e = w->els[ei];
        int64_t r = silt_thrift_get_int(e, 3, -1);
        if (r < 0 || r > 2)
            return corrupt(w, "schema element without a valid repetition");
        size_t t = top;
        if (depth == 1) {
            t = w->ntop;
            w->top_el[w->ntop++] = ei;
        }
        int64_t nch = silt_thrift_get_int(e, 5, 0);
        int d = def + (r != SILT_PQ_REQUIRED), rp = rep + (r == SILT_PQ_REPEATED);
        if (nch > 0) {
            int rc = walk(w, next, nch, d, rp, t, depth + 1);
            if (rc)
                return rc;
        } else {
            w->leaves[w->nleaf++] = (leaf){t, d, rp, depth == 1};
        }
    }
    return 0;
}

static int load_schema(rw *w, const silt_thrift_value *fm)
{
    const silt_thrift_value *s = silt_thrift_get(fm, 2);
    if (!s || s->type != SILT_TH_LIST || s->u.list.etype != SILT_TH_STRUCT || s->u.list.n == 0)
        return corrupt(w, "no schema");
    w->els = s->u.list.items;
    w->nel = s->u.list.n;
    w->top_el = silt_arena_alloc(w->a, w->nel * sizeof *w->top_el);
    w->leaves = silt_arena_alloc(w->a, w->nel * sizeof *w->leaves);
    if (!w->top_el || !w->leaves)
        return SILT_ENOMEM;
    size_t next = 1;
    int rc = walk(w, &next, silt_thrift_get_int(w->els[0], 5, 0), 0, 0, 0, 1);
    if (!rc && next != w->nel)
        rc = corrupt(w, "schema has elements outside its tree");
    return rc;
}

static bool name_is(const silt_thrift_value *e, const char *name)
{
    const silt_thrift_value *v = silt_thrift_get(e, 4);
    return v && v->type == SILT_TH_BINARY && v->u.bin.n == strlen(name) && memcmp(v->u.bin.p, name, v->u.bin.n) == 0;
}

/* sel[t] for every top-level field to change; returns how many (or < 0). */
static int select_tops(rw *w, const char *const *columns, size_t n, bool *sel, const char **names)
{
    int count = 0;
    for (size_t k = 0; k < n; k++) {
        size_t t = 0;
        while (t < w->ntop && !name_is(w->els[w->top_el[t]], columns[k]))
            t++;
        if (t == w->ntop)
            return silt_err(SILT_ENOTFOUND, "%s: no column '%s'", w->path, columns[k]);
        int64_t r = silt_thrift_get_int(w->els[w->top_el[t]], 3, -1);
        if (r == SILT_PQ_REPEATED)
            return silt_err(SILT_EINVAL, "%s: column '%s' is REPEATED; it cannot be REQUIRED", w->path, columns[k]);
        if (r == SILT_PQ_OPTIONAL && !sel[t]) {
            sel[t] = true;
            names[t] = columns[k];
            count++;
        }
    }
    return count;
}

static int null_error(const rw *w, const job *j)
{
    return silt_err(SILT_EINVAL, "%s: column '%s' holds a null (row group %zu): it cannot be REQUIRED", w->path,
                    j->name, j->rg);
}

/* ---- jobs: the chunks of the selected leaves, in file order */

static int job_cmp(const void *a, const void *b)
{
    const job *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int chunk_job(rw *w, silt_thrift_value *cc, size_t g, const leaf *lf, const char *name, job *j)
{
    silt_thrift_value *cmd = silt_thrift_get(cc, 3);
    if (!cmd || cmd->type != SILT_TH_STRUCT)
        return corrupt(w, "column chunk without metadata");
    *j = (job){0};
    j->rg = g;
    j->cmd = cmd;
    j->name = name;
    j->max_def = lf->max_def;
    j->max_rep = lf->max_rep;
    j->is_top = lf->is_top;
    j->codec = (int)silt_thrift_get_int(cmd, 4, 0);
    if (j->codec != 0 && j->codec != 1)
        return unsupported(w, "codec other than UNCOMPRESSED or SNAPPY");
    if (j->is_top && silt_thrift_get_int(silt_thrift_get(cmd, 12), 3, 0) > 0)
        return null_error(w, j);
    int64_t start = silt_thrift_get_int(cmd, 9, -1), size = silt_thrift_get_int(cmd, 7, -1);
    int64_t dict = silt_thrift_get_int(cmd, 11, -1), index = silt_thrift_get_int(cmd, 10, -1);
    if (dict > 0 && dict < start)
        start = dict;
    if (index > 0 && index < start)
        start = index;
    if (start < 4 || size < 0 || (uint64_t)start > w->fpos || (uint64_t)size > w->fpos - (uint64_t)start)
        return corrupt(w, "column chunk outside the file");
    j->start = (uint64_t)start;
    j->end = (uint64_t)(start + size);
    return 0;
}

static int plan(rw *w, silt_thrift_value *fm, const bool *sel, const char *const *names, job **jobs, size_t *njobs)
{
    *jobs = NULL;
    *njobs = 0;
    if (silt_thrift_get(fm, 8) || silt_thrift_get(fm, 9))
        return unsupported(w, "encrypted files");
    silt_thrift_value *rgs = silt_thrift_get(fm, 4);
    if (!rgs || rgs->type != SILT_TH_LIST || rgs->u.list.etype != SILT_TH_STRUCT)
        return corrupt(w, "no row groups");
    size_t cap = 0;
    for (size_t g = 0; g < rgs->u.list.n; g++) {
        silt_thrift_value *cols = silt_thrift_get(rgs->u.list.items[g], 1);
        if (!cols || cols->type != SILT_TH_LIST || cols->u.list.n != w->nleaf)
            return corrupt(w, "row group column count differs from the schema");
        for (size_t i = 0; i < cols->u.list.n; i++) {
            silt_thrift_value *cc = cols->u.list.items[i];
            if (silt_thrift_get(cc, 1))
                return unsupported(w, "column chunks in other files");
            if (silt_thrift_get(cc, 4) || silt_thrift_get(cc, 6))
                return unsupported(w, "page indexes");
            if (silt_thrift_get(cc, 8) || silt_thrift_get(cc, 9))
                return unsupported(w, "encrypted columns");
            const leaf *lf = &w->leaves[i];
            if (!sel[lf->top])
                continue;
            if (*njobs == cap) {
                cap = cap ? cap * 2 : 16;
                job *n = silt_arena_alloc(w->a, cap * sizeof *n);
                if (!n)
                    return SILT_ENOMEM;
                if (*njobs)
                    memcpy(n, *jobs, *njobs * sizeof *n);
                *jobs = n;
            }
            int rc = chunk_job(w, cc, g, lf, names[lf->top], &(*jobs)[(*njobs)++]);
            if (rc)
                return rc;
        }
    }
    if (*njobs > 1)
        qsort(*jobs, *njobs, sizeof **jobs, job_cmp);
    for (size_t k = 1; k < *njobs; k++)
        if ((*jobs)[k].start < (*jobs)[k - 1].end)
            return corrupt(w, "column chunks overlap");
    return 0;
}

/* ---- pages */

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int lower(rw *w, const job *j, const uint8_t *src, size_t len, int64_t nvalues, silt_buf *out)
{
    if (nvalues < 0)
        return corrupt(w, "negative value count in a data page");
    size_t used = 0;
    int rc = silt_parquet_lower_levels(src, len, (size_t)nvalues, silt_parquet_level_width(j->max_def), j->max_def,
                                       silt_parquet_level_width(j->max_def - 1), out, &used);
    if (rc == SILT_EINVAL)
        return null_error(w, j);
    if (rc)
        return silt_err_context(rc, "%s: column '%s'", w->path, j->name);
    return 0;
}

/* Data page v1: levels inside the (compressed) body, each with a 4-byte
 * length. Fills `nb` with the new body and returns its uncompressed size. */
static int page_v1(rw *w, const job *j, silt_thrift_value *h, const uint8_t *body, size_t comp, size_t unc,
                   silt_buf *nb, size_t *new_unc)
{
    silt_thrift_value *dph = silt_thrift_get(h, 5);
    if (!dph)
        return corrupt(w, "data page without its header");
    if (silt_thrift_get_int(dph, 3, 3) != 3)
        return unsupported(w, "definition levels not RLE encoded");
    if (j->is_top && silt_thrift_get_int(silt_thrift_get(dph, 5), 3, 0) > 0)
        return null_error(w, j);
    uint8_t *plain = NULL;
    const uint8_t *u = body;
    int rc = 0;
    if (j->codec == 1) {
        plain = malloc(unc ? unc : 1);
        if (!plain)
            return silt_err(SILT_ENOMEM, "out of memory");
        rc = silt_snappy_uncompress(body, comp, plain, unc);
        if (rc)
            rc = silt_err_context(rc, "%s: column '%s'", w->path, j->name);
        u = plain;
    } else if (comp != unc) {
        rc = corrupt(w, "uncompressed page with two sizes");
    }
    size_t p = 0;
    if (!rc && j->max_rep > 0) {
        if (unc < 4 || get_le32(u) > unc - 4)
            rc = corrupt(w, "repetition levels overrun their page");
        else
            p = 4 + get_le32(u);
    }
    size_t dlen = 0;
    if (!rc && (unc - p < 4 || get_le32(u + p) > unc - p - 4))
        rc = corrupt(w, "definition levels overrun their page");
    else if (!rc)
        dlen = get_le32(u + p);
    silt_buf lv = SILT_BUF_INIT, plain2 = SILT_BUF_INIT;
    if (!rc)
        rc = lower(w, j, u + p + 4, dlen, silt_thrift_get_int(dph, 1, -1), &lv);
    if (!rc)
        rc = silt_buf_append(&plain2, u, p);
    if (!rc && j->max_def > 1) {
        uint8_t len4[4] = {(uint8_t)lv.len, (uint8_t)(lv.len >> 8), (uint8_t)(lv.len >> 16), (uint8_t)(lv.len >> 24)};
        rc = silt_buf_append(&plain2, len4, 4);
        if (!rc)
            rc = silt_buf_append(&plain2, lv.data, lv.len);
    }
    if (!rc)
        rc = silt_buf_append(&plain2, u + p + 4 + dlen, unc - p - 4 - dlen);
    if (!rc) {
        *new_unc = plain2.len;
        rc = j->codec == 1 ? silt_snappy_compress(nb, (const uint8_t *)plain2.data, plain2.len)
                           : silt_buf_append(nb, plain2.data, plain2.len);
    }
    silt_buf_free(&lv);
    silt_buf_free(&plain2);
    free(plain);
    return rc;
}

/* Data page v2: repetition then definition levels, uncompressed, lengths in
 * the header; the values after them are untouched. */
static int page_v2(rw *w, const job *j, silt_thrift_value *h, const uint8_t *body, size_t comp, size_t unc,
                   silt_buf *nb, size_t *new_unc)
{
    silt_thrift_value *dph = silt_thrift_get(h, 8);
    if (!dph)
        return corrupt(w, "data page v2 without its header");
    if (j->is_top && silt_thrift_get_int(dph, 2, 0) > 0)
        return null_error(w, j);
    int64_t dl = silt_thrift_get_int(dph, 5, -1), rl = silt_thrift_get_int(dph, 6, 0);
    if (dl < 0 || rl < 0 || (uint64_t)rl > comp || (uint64_t)dl > comp - (uint64_t)rl || (uint64_t)(rl + dl) > unc)
        return corrupt(w, "levels overrun their page");
    silt_buf lv = SILT_BUF_INIT;
    int rc = lower(w, j, body + rl, (size_t)dl, silt_thrift_get_int(dph, 1, -1), &lv);
    if (!rc)
        rc = silt_buf_append(nb, body, (size_t)rl);
    if (!rc)
        rc = silt_buf_append(nb, lv.data, lv.len);
    if (!rc)
        rc = silt_buf_append(nb, body + rl + dl, comp - (size_t)(rl + dl));
    if (!rc)
        rc = silt_thrift_set_int(w->a, dph, 5, SILT_TH_I32, (int64_t)lv.len);
    *new_unc = unc - (size_t)dl + lv.len;
    silt_buf_free(&lv);
    return rc;
}

/* Reads and parses the page header at `cur` (chunk ends at `end`). */
static int read_header(rw *w, uint64_t cur, uint64_t end, silt_thrift_value **h, size_t *hlen)
{
    size_t want = end - cur > HEADER_WINDOW ? HEADER_WINDOW : (size_t)(end - cur);
    for (;;) {
        uint8_t *buf = malloc(want ? want : 1);
        if (!buf)
            return silt_err(SILT_ENOMEM, "out of memory");
        int rc = pread_all(w, buf, want, cur);
        if (!rc)
            rc = silt_thrift_parse(w->a, buf, want, hlen, h);
        free(buf);
        if (rc == SILT_ECORRUPT && want < end - cur && end - cur <= SIZE_MAX) {
            want = (size_t)(end - cur); /* a header with large statistics */
            continue;
        }
        return rc == SILT_ECORRUPT ? silt_err_context(rc, "%s: page header at byte %" PRIu64, w->path, cur) : rc;
    }
}

static int rewrite_page(rw *w, job *j, silt_thrift_value *h, size_t hlen, const uint8_t *body, size_t comp,
                        size_t unc, uint64_t page_end)
{
    int64_t type = silt_thrift_get_int(h, 1, -1);
    silt_buf nb = SILT_BUF_INIT, hb = SILT_BUF_INIT;
    size_t new_unc = 0;
    int rc = type == 0 ? page_v1(w, j, h, body, comp, unc, &nb, &new_unc)
                       : page_v2(w, j, h, body, comp, unc, &nb, &new_unc);
    if (!rc && (new_unc > INT32_MAX || nb.len > INT32_MAX))
        rc = unsupported(w, "pages larger than 2 GiB");
    if (!rc)
        rc = silt_thrift_set_int(w->a, h, 2, SILT_TH_I32, (int64_t)new_unc);
    if (!rc)
        rc = silt_thrift_set_int(w->a, h, 3, SILT_TH_I32, (int64_t)nb.len);
    if (!rc && silt_thrift_get(h, 4))
        rc = silt_thrift_set_int(w->a, h, 4, SILT_TH_I32,
                                 (int32_t)silt_parquet_crc32((const uint8_t *)nb.data, nb.len));
    if (!rc)
        rc = silt_thrift_write(&hb, h);
    if (!rc)
        rc = out_write(w, hb.data, hb.len);
    if (!rc)
        rc = out_write(w, nb.data, nb.len);
    if (!rc) {
        int64_t rm_c = (int64_t)(hlen + comp) - (int64_t)(hb.len + nb.len);
        j->removed_c += rm_c;
        j->removed_u += (int64_t)(hlen + unc) - (int64_t)(hb.len + new_unc);
        rc = add_shift(w, page_end, rm_c);
    }
    silt_buf_free(&nb);
    silt_buf_free(&hb);
    return rc;
}

static int process_chunk(rw *w, job *j)
{
    uint64_t cur = j->start;
    while (cur < j->end) {
        silt_thrift_value *h;
        size_t hlen;
        int rc = read_header(w, cur, j->end, &h, &hlen);
        if (rc)
            return rc;
        int64_t type = silt_thrift_get_int(h, 1, -1), unc = silt_thrift_get_int(h, 2, -1),
                comp = silt_thrift_get_int(h, 3, -1);
        if (unc < 0 || comp < 0 || (uint64_t)comp > j->end - cur - hlen)
            return corrupt(w, "page outside its column chunk");
        uint8_t *body = malloc(comp ? (size_t)comp : 1);
        if (!body)
            return silt_err(SILT_ENOMEM, "out of memory");
        rc = pread_all(w, body, (size_t)comp, cur + hlen);
        uint64_t page_end = cur + hlen + (uint64_t)comp;
        if (!rc && (type == 0 || type == 3))
            rc = rewrite_page(w, j, h, hlen, body, (size_t)comp, (size_t)unc, page_end);
        else if (!rc)
            rc = copy_range(w, cur, page_end);
        free(body);
        if (rc)
            return rc;
        cur = page_end;
    }
    return 0;
}

/* ---- footer */

static int map_field(rw *w, silt_thrift_value *st, int16_t id)
{
    silt_thrift_value *v = silt_thrift_get(st, id);
    if (!v || v->type < SILT_TH_BYTE || v->type > SILT_TH_I64 || v->u.i <= 0)
        return 0;
    if ((uint64_t)v->u.i > w->fpos)
        return corrupt(w, "offset beyond the data");
    v->u.i = (int64_t)map_offset(w, (uint64_t)v->u.i);
    return 0;
}

static int sub_field(rw *w, silt_thrift_value *st, int16_t id, int64_t d)
{
    silt_thrift_value *v = silt_thrift_get(st, id);
    if (!v || v->type < SILT_TH_BYTE || v->type > SILT_TH_I64)
        return 0;
    v->u.i -= d;
    return v->u.i < 0 ? corrupt(w, "negative size after the rewrite") : 0;
}

/* SizeStatistics.definition_level_histogram: one bucket fewer. */
static int fix_histogram(rw *w, const job *j)
{
    silt_thrift_value *ss = silt_thrift_get(j->cmd, 16);
    silt_thrift_value *hist = silt_thrift_get(ss, 3);
    if (!hist)
        return 0;
    if (hist->type != SILT_TH_LIST || hist->u.list.n != (size_t)j->max_def + 1)
        return corrupt(w, "definition level histogram of the wrong size");
    if (hist->u.list.items[0]->u.i != 0)
        return null_error(w, j);
    if (j->max_def == 1) {
        silt_thrift_remove(ss, 3);
        return 0;
    }
    memmove(hist->u.list.items, hist->u.list.items + 1, (size_t)j->max_def * sizeof *hist->u.list.items);
    hist->u.list.n--;
    return 0;
}

static int fix_footer(rw *w, silt_thrift_value *fm, const bool *sel, job *jobs, size_t njobs)
{
    int rc = 0;
    for (size_t t = 0; t < w->ntop && !rc; t++)
        if (sel[t])
            rc = silt_thrift_set_int(w->a, w->els[w->top_el[t]], 3, SILT_TH_I32, SILT_PQ_REQUIRED);
    silt_thrift_value *rgs = silt_thrift_get(fm, 4);
    for (size_t g = 0; g < rgs->u.list.n && !rc; g++) {
        silt_thrift_value *rg = rgs->u.list.items[g], *cols = silt_thrift_get(rg, 1);
        int64_t rm_c = 0, rm_u = 0;
        for (size_t k = 0; k < njobs; k++)
            if (jobs[k].rg == g) {
                rm_c += jobs[k].removed_c;
                rm_u += jobs[k].removed_u;
            }
        for (size_t i = 0; i < cols->u.list.n && !rc; i++) {
            silt_thrift_value *cc = cols->u.list.items[i], *cmd = silt_thrift_get(cc, 3);
            rc = map_field(w, cc, 2);
            for (int16_t id = 9; !rc && id <= 11; id++)
                rc = map_field(w, cmd, id);
            if (!rc)
                rc = map_field(w, cmd, 14);
        }
        if (!rc)
            rc = map_field(w, rg, 5);
        if (!rc)
            rc = sub_field(w, rg, 6, rm_c);
        if (!rc)
            rc = sub_field(w, rg, 2, rm_u);
    }
    for (size_t k = 0; k < njobs && !rc; k++) {
        rc = sub_field(w, jobs[k].cmd, 7, jobs[k].removed_c);
        if (!rc)
            rc = sub_field(w, jobs[k].cmd, 6, jobs[k].removed_u);
        if (!rc)
            rc = fix_histogram(w, &jobs[k]);
    }
    return rc;
}

static int write_footer(rw *w, const silt_thrift_value *fm, size_t ncols)
{
    silt_buf f = SILT_BUF_INIT;
    int rc = silt_thrift_write(&f, fm);
    silt_parquet_meta *check = NULL;
    if (!rc) { /* the new footer must parse, with the same leaves */
        rc = silt_parquet_parse_footer((const uint8_t *)f.data, f.len, &check);
        if (rc && rc != SILT_ENOMEM)
            rc = silt_err(SILT_EINTERNAL, "%s: rewritten footer does not parse: %s", w->path, silt_error_last());
        else if (!rc && check->num_columns != ncols)
            rc = silt_err(SILT_EINTERNAL, "%s: rewritten footer has %zu columns, expected %zu", w->path,
                          check->num_columns, ncols);
    }
    silt_parquet_meta_free(check);
    if (!rc && f.len > UINT32_MAX)
        rc = unsupported(w, "footers larger than 4 GiB");
    if (!rc)
        rc = out_write(w, f.data, f.len);
    if (!rc) {
        uint8_t tail[8] = {(uint8_t)f.len, (uint8_t)(f.len >> 8), (uint8_t)(f.len >> 16), (uint8_t)(f.len >> 24),
                           'P', 'A', 'R', '1'};
        rc = out_write(w, tail, 8);
    }
    silt_buf_free(&f);
    return rc;
}

/* ---- driver */

static int read_footer(rw *w, silt_thrift_value **fm)
{
    struct stat st;
    if (fstat(w->in, &st) != 0)
        return silt_err(SILT_EIO, "%s: cannot stat: %s", w->path, strerror(errno));
    uint64_t size = (uint64_t)st.st_size;
    uint8_t head[4], tail[8];
    if (size < 12)
        return silt_err(SILT_EINVAL, "%s: not a Parquet file (too short)", w->path);
    int rc = pread_all(w, head, 4, 0);
    if (!rc)
        rc = pread_all(w, tail, 8, size - 8);
    if (rc)
        return rc;
    if (memcmp(head, "PAR1", 4) != 0 || memcmp(tail + 4, "PAR1", 4) != 0)
        return silt_err(SILT_EINVAL, "%s: not a plain Parquet file (bad magic)", w->path);
    uint32_t n = get_le32(tail);
    if (n == 0 || (uint64_t)n > size - 12 || n > FOOTER_MAX)
        return corrupt(w, "bad footer length");
    w->fpos = size - 8 - n;
    uint8_t *buf = malloc(n);
    if (!buf)
        return silt_err(SILT_ENOMEM, "out of memory");
    rc = pread_all(w, buf, n, w->fpos);
    if (!rc)
        rc = silt_thrift_parse(w->a, buf, n, NULL, fm);
    free(buf);
    return rc == SILT_ECORRUPT ? silt_err_context(rc, "%s: footer", w->path) : rc;
}

/* Writes the new file to w->out; returns the number of columns changed. */
static int rewrite(rw *w, const char *const *columns, size_t n, const char *tmp_path)
{
    silt_thrift_value *fm = NULL;
    int rc = read_footer(w, &fm);
    if (!rc)
        rc = load_schema(w, fm);
    if (rc)
        return rc;
    bool *sel = silt_arena_alloc(w->a, (w->ntop ? w->ntop : 1) * sizeof *sel);
    const char **names = silt_arena_alloc(w->a, (w->ntop ? w->ntop : 1) * sizeof *names);
    if (!sel || !names)
        return SILT_ENOMEM;
    int count = select_tops(w, columns, n, sel, names);
    if (count <= 0)
        return count;
    job *jobs;
    size_t njobs;
    if ((rc = plan(w, fm, sel, names, &jobs, &njobs)))
        return rc;
    w->out = open(tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (w->out < 0)
        return silt_err(SILT_EIO, "%s: cannot create: %s", tmp_path, strerror(errno));
    uint64_t pos = 0;
    for (size_t k = 0; k < njobs && !rc; k++) {
        rc = copy_range(w, pos, jobs[k].start);
        if (!rc)
            rc = process_chunk(w, &jobs[k]);
        pos = jobs[k].end;
    }
    if (!rc)
        rc = copy_range(w, pos, w->fpos);
    if (!rc)
        rc = fix_footer(w, fm, sel, jobs, njobs);
    if (!rc)
        rc = write_footer(w, fm, w->nleaf);
    if (!rc)
        rc = flush_out(w);
    if (!rc && fsync(w->out) != 0)
        rc = silt_err(SILT_EIO, "%s: fsync failed: %s", tmp_path, strerror(errno));
    return rc ? rc : count;
}

int silt_parquet_set_required(const char *path, const char *const *columns, size_t n)
{
    rw w = {.path = path, .in = -1, .out = -1};
    w.in = open(path, O_RDONLY | O_CLOEXEC);
    if (w.in < 0)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *tmp = NULL;
    w.a = silt_arena_new();
    w.tmp = malloc(COPY_BLOCK);
    int rc = (!w.a || !w.tmp) ? silt_err(SILT_ENOMEM, "out of memory") : 0;
    if (!rc && !(tmp = silt_arena_printf(w.a, "%s.tmp-required-%ld", path, (long)getpid())))
        rc = SILT_ENOMEM;
    if (!rc)
        rc = rewrite(&w, columns, n, tmp);
    if (w.out >= 0 && close(w.out) != 0 && rc >= 0)
        rc = silt_err(SILT_EIO, "%s: close failed: %s", tmp, strerror(errno));
    if (rc > 0 && rename(tmp, path) != 0)
        rc = silt_err(SILT_EIO, "%s: cannot replace: %s", path, strerror(errno));
    if (rc < 0 && w.out >= 0)
        unlink(tmp);
    close(w.in);
    silt_buf_free(&w.ob);
    free(w.sh);
    free(w.tmp);
    silt_arena_free(w.a);
    return rc;
}
