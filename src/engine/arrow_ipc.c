/* arrow_ipc.c — Arrow IPC stream messages from C Data Interface structs
 * (arrow_ipc.h). Table ids and enum values are those of Arrow's Schema.fbs
 * and Message.fbs (format version 1.x, MetadataVersion V5).
 *
 * Invariants:
 *  - every FlatBuffer is built front to back in its own buffer (fb_*):
 *    root offset first, then each table (vtable right before it, table
 *    start 8-byte aligned), then its children, whose uoffsets are patched
 *    into the parent; the Message starts 8-byte aligned in the stream;
 *  - a RecordBatch is planned first (field nodes and the body's buffer
 *    list, walking schema and array together in pre-order), then its
 *    metadata is written, then the buffers are copied once into `out`;
 *  - on any failure `out` is truncated back to its length on entry.
 */
#include "engine/arrow_ipc.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

/* ---- Schema.fbs / Message.fbs constants ----------------------------------- */

enum { MV_V5 = 4 };
enum { MH_SCHEMA = 1, MH_RECORD_BATCH = 3 };
enum {
    T_NULL = 1, T_INT = 2, T_FLOAT = 3, T_BINARY = 4, T_UTF8 = 5, T_BOOL = 6, T_DECIMAL = 7, T_DATE = 8,
    T_TIME = 9, T_TIMESTAMP = 10, T_INTERVAL = 11, T_LIST = 12, T_STRUCT = 13, T_FIXED_BINARY = 15,
    T_FIXED_LIST = 16, T_MAP = 17, T_DURATION = 18,
};

#define ARROW_MAX_DEPTH 64

/* ---- FlatBuffers, front to back ------------------------------------------------ */

typedef struct fbw {
    silt_buf b;
    int err;
} fbw;

static void fb_put(fbw *w, const void *p, size_t n)
{
    if (!w->err && silt_buf_append(&w->b, p, n) < 0)
        w->err = SILT_ENOMEM;
}

static void fb_le(fbw *w, uint64_t v, size_t n)
{
    uint8_t x[8];
    for (size_t i = 0; i < n; i++)
        x[i] = (uint8_t)(v >> (8 * i));
    fb_put(w, x, n);
}

/* Zero bytes until len % align == mod. */
static void fb_pad(fbw *w, size_t align, size_t mod)
{
    static const uint8_t zero[8];
    while (!w->err && w->b.len % align != mod)
        fb_put(w, zero, 1);
}

static void fb_patch(fbw *w, size_t at, size_t target)
{
    if (w->err)
        return;
    uint32_t v = (uint32_t)(target - at);
    for (int i = 0; i < 4; i++)
        w->b.data[at + (size_t)i] = (char)(v >> (8 * i));
}

/* One slot of a table: size 0 = absent; ofs = a uoffset placeholder
 * (size 4) patched later. */
typedef struct fbf {
    uint8_t size;
    bool ofs;
    uint64_t v;
} fbf;

#define F_ABSENT ((fbf){0, false, 0})
#define F_U8(x) ((fbf){1, false, (uint64_t)(x)})
#define F_I16(x) ((fbf){2, false, (uint64_t)(uint16_t)(x)})
#define F_I32(x) ((fbf){4, false, (uint64_t)(uint32_t)(x)})
#define F_I64(x) ((fbf){8, false, (uint64_t)(x)})
#define F_OFS ((fbf){4, true, 0})

/* Writes the vtable and the table of slots f[0..n); ofs_at[k] receives the
 * position of the k-th offset slot (in slot order). Returns the table's
 * position. */
static size_t fb_table(fbw *w, const fbf *f, size_t n, size_t *ofs_at)
{
    uint16_t at[16] = {0};
    size_t pos = 4; /* after the soffset to the vtable */
    for (size_t sz = 8; sz >= 1; sz /= 2)
        for (size_t i = 0; i < n; i++)
            if (f[i].size == sz) {
                pos = (pos + sz - 1) / sz * sz;
                at[i] = (uint16_t)pos;
                pos += sz;
            }
    size_t tsize = (pos + 3) / 4 * 4, vtsize = 4 + 2 * n;
    fb_pad(w, 8, (8 - vtsize % 8) % 8);
    size_t vt = w->b.len;
    fb_le(w, vtsize, 2);
    fb_le(w, tsize, 2);
    for (size_t i = 0; i < n; i++)
        fb_le(w, at[i], 2);
    size_t tbl = w->b.len;
    uint8_t *zero = calloc(1, tsize);
    if (!zero) {
        w->err = SILT_ENOMEM;
        return tbl;
    }
    fb_put(w, zero, tsize);
    free(zero);
    if (w->err)
        return tbl;
    int32_t so = (int32_t)(tbl - vt);
    for (int i = 0; i < 4; i++)
        w->b.data[tbl + (size_t)i] = (char)((uint32_t)so >> (8 * i));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!f[i].size)
            continue;
        if (f[i].ofs) {
            ofs_at[k++] = tbl + at[i];
            continue;
        }
        for (size_t j = 0; j < f[i].size; j++)
            w->b.data[tbl + at[i] + j] = (char)(f[i].v >> (8 * j));
    }
    return tbl;
}

static size_t fb_string(fbw *w, const char *s)
{
    size_t n = strlen(s);
    fb_pad(w, 4, 0);
    size_t at = w->b.len;
    fb_le(w, n, 4);
    fb_put(w, s, n + 1);
    return at;
}

/* Vector of n uoffsets (placeholders); slots[i] = position of element i. */
static size_t fb_offsets(fbw *w, size_t n, size_t *slots)
{
    fb_pad(w, 4, 0);
    size_t at = w->b.len;
    fb_le(w, n, 4);
    for (size_t i = 0; i < n; i++) {
        slots[i] = w->b.len;
        fb_le(w, 0, 4);
    }
    return at;
}

/* Vector of n structs of two int64 (FieldNode, Buffer). */
static size_t fb_pairs(fbw *w, const int64_t (*v)[2], size_t n)
{
    fb_pad(w, 8, 4);
    size_t at = w->b.len;
    fb_le(w, n, 4);
    for (size_t i = 0; i < n; i++) {
        fb_le(w, (uint64_t)v[i][0], 8);
        fb_le(w, (uint64_t)v[i][1], 8);
    }
    return at;
}

/* KeyValue tables of n pairs into the vector at slot `slot`. */
static void fb_key_values(fbw *w, size_t slot, const char *const *kv, size_t n)
{
    size_t *slots = calloc(n ? n : 1, sizeof *slots);
    if (!slots) {
        w->err = SILT_ENOMEM;
        return;
    }
    fb_patch(w, slot, fb_offsets(w, n, slots));
    for (size_t i = 0; i < n && !w->err; i++) {
        size_t o[2];
        fbf f[2] = {F_OFS, F_OFS};
        fb_patch(w, slots[i], fb_table(w, f, 2, o));
        fb_patch(w, o[0], fb_string(w, kv[2 * i]));
        fb_patch(w, o[1], fb_string(w, kv[2 * i + 1]));
    }
    free(slots);
}

/* ---- C Data Interface formats ---------------------------------------------------- */

/* What a format string means for the IPC writer. */
typedef struct afmt {
    int type;          /* T_* */
    fbf f[3];          /* the type table's slots */
    size_t nf;
    const char *tz;    /* Timestamp time zone ("" = none), points into the format */
    int nbuf;          /* IPC buffers: validity (+ offsets) (+ data) */
    bool offsets;      /* has an int32 offsets buffer */
    size_t width;      /* bytes per value of the data buffer; 0 = none, SIZE_MAX = bits */
    bool var_data;     /* data buffer sized by the last offset (Utf8, Binary) */
} afmt;

static int time_unit(char c)
{
    switch (c) {
    case 's': return 0;
    case 'm': return 1;
    case 'u': return 2;
    case 'n': return 3;
    default: return -1;
    }
}

static int parse_simple(const char *fmt, afmt *a)
{
    static const struct {
        char c;
        int type, bits;
        bool sign;
    } ints[] = {{'c', T_INT, 8, true},   {'C', T_INT, 8, false},  {'s', T_INT, 16, true},
                {'S', T_INT, 16, false}, {'i', T_INT, 32, true},  {'I', T_INT, 32, false},
                {'l', T_INT, 64, true},  {'L', T_INT, 64, false}};
    a->nbuf = 2;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (fmt[0] == ints[i].c) {
            a->type = T_INT;
            a->f[0] = F_I32(ints[i].bits);
            a->f[1] = F_U8(ints[i].sign);
            a->nf = 2;
            a->width = (size_t)ints[i].bits / 8;
            return 0;
        }
    switch (fmt[0]) {
    case 'n': a->type = T_NULL; a->nbuf = 0; return 0;
    case 'b': a->type = T_BOOL; a->width = SIZE_MAX; return 0;
    case 'e': case 'f': case 'g':
        a->type = T_FLOAT;
        a->f[0] = F_I16(fmt[0] == 'e' ? 0 : fmt[0] == 'f' ? 1 : 2);
        a->nf = 1;
        a->width = fmt[0] == 'e' ? 2 : fmt[0] == 'f' ? 4 : 8;
        return 0;
    case 'z': case 'u':
        a->type = fmt[0] == 'z' ? T_BINARY : T_UTF8;
        a->nbuf = 3;
        a->offsets = a->var_data = true;
        a->width = 1;
        return 0;
    default: return -1;
    }
}

static int parse_temporal(const char *fmt, afmt *a)
{
    a->nbuf = 2;
    int u = time_unit(fmt[2]);
    if (fmt[1] == 'd' && (fmt[2] == 'D' || fmt[2] == 'm') && !fmt[3]) {
        a->type = T_DATE;
        a->f[0] = F_I16(fmt[2] == 'D' ? 0 : 1);
        a->nf = 1;
        a->width = fmt[2] == 'D' ? 4 : 8;
    } else if (fmt[1] == 't' && u >= 0 && !fmt[3]) {
        a->type = T_TIME;
        a->width = u <= 1 ? 4 : 8;
        a->f[0] = F_I16(u);
        a->f[1] = F_I32(a->width * 8);
        a->nf = 2;
    } else if (fmt[1] == 's' && u >= 0 && fmt[3] == ':') {
        a->type = T_TIMESTAMP;
        a->f[0] = F_I16(u);
        a->f[1] = F_OFS;
        a->nf = 2;
        a->tz = fmt + 4;
        a->width = 8;
    } else if (fmt[1] == 'D' && u >= 0 && !fmt[3]) {
        a->type = T_DURATION;
        a->f[0] = F_I16(u);
        a->nf = 1;
        a->width = 8;
    } else if (fmt[1] == 'i' && (fmt[2] == 'M' || fmt[2] == 'D' || fmt[2] == 'n') && !fmt[3]) {
        a->type = T_INTERVAL;
        a->f[0] = F_I16(fmt[2] == 'M' ? 0 : fmt[2] == 'D' ? 1 : 2);
        a->nf = 1;
        a->width = fmt[2] == 'M' ? 4 : fmt[2] == 'D' ? 8 : 16;
    } else {
        return -1;
    }
    return 0;
}

static int parse_format(const char *fmt, afmt *a)
{
    memset(a, 0, sizeof *a);
    if (!fmt || !fmt[0])
        return -1;
    if (fmt[1] == '\0' && parse_simple(fmt, a) == 0)
        return 0;
    if (fmt[0] == 't')
        return parse_temporal(fmt, a);
    char *end;
    if (fmt[0] == 'd' && fmt[1] == ':') {
        long p = strtol(fmt + 2, &end, 10), s = 0, bits = 128;
        if (*end != ',')
            return -1;
        s = strtol(end + 1, &end, 10);
        if (*end == ',')
            bits = strtol(end + 1, &end, 10);
        if (*end || bits != 128 || p < 1 || p > 38)
            return -1;
        a->type = T_DECIMAL;
        a->f[0] = F_I32(p);
        a->f[1] = F_I32(s);
        a->f[2] = F_I32(128);
        a->nf = 3;
        a->nbuf = 2;
        a->width = 16;
        return 0;
    }
    if (fmt[0] == 'w' && fmt[1] == ':') {
        long n = strtol(fmt + 2, &end, 10);
        if (*end || n < 1)
            return -1;
        a->type = T_FIXED_BINARY;
        a->f[0] = F_I32(n);
        a->nf = 1;
        a->nbuf = 2;
        a->width = (size_t)n;
        return 0;
    }
    if (fmt[0] != '+')
        return -1;
    a->nbuf = 1;
    if (!strcmp(fmt, "+l") || !strcmp(fmt, "+m")) {
        a->type = fmt[1] == 'l' ? T_LIST : T_MAP;
        a->nbuf = 2;
        a->offsets = true;
        if (a->type == T_MAP) {
            a->f[0] = F_U8(0); /* keysSorted, set from the flags */
            a->nf = 1;
        }
        return 0;
    }
    if (!strcmp(fmt, "+s")) {
        a->type = T_STRUCT;
        return 0;
    }
    if (fmt[1] == 'w' && fmt[2] == ':') {
        long n = strtol(fmt + 3, &end, 10);
        if (*end || n < 1)
            return -1;
        a->type = T_FIXED_LIST;
        a->f[0] = F_I32(n);
        a->nf = 1;
        return 0;
    }
    return -1;
}

static int unsupported(const struct ArrowSchema *s, const char *why)
{
    return silt_err(SILT_EUNSUPPORTED, "arrow: column '%s': %s '%s' is not supported", s->name ? s->name : "?",
                    why, s->format ? s->format : "");
}

/* ---- Schema ---------------------------------------------------------------------- */

/* The C Data Interface metadata blob: int32 n, then n × (int32 len, key,
 * int32 len, value). Copies the pairs as strings into a NULL-separated
 * array (*kv_out, malloc'd: pointers then the bytes). */
static int parse_metadata(const char *m, char ***kv_out, size_t *n_out)
{
    *kv_out = NULL;
    *n_out = 0;
    if (!m)
        return 0;
    int32_t n;
    memcpy(&n, m, 4);
    if (n <= 0)
        return 0;
    size_t total = 0;
    const char *p = m + 4;
    for (int32_t i = 0; i < 2 * n; i++) {
        int32_t len;
        memcpy(&len, p, 4);
        if (len < 0)
            return SILT_EINVAL;
        total += (size_t)len + 1;
        p += 4 + len;
    }
    char **kv = malloc(2 * (size_t)n * sizeof *kv + total);
    if (!kv)
        return SILT_ENOMEM;
    char *dst = (char *)(kv + 2 * (size_t)n);
    p = m + 4;
    for (int32_t i = 0; i < 2 * n; i++) {
        int32_t len;
        memcpy(&len, p, 4);
        kv[i] = dst;
        memcpy(dst, p + 4, (size_t)len);
        dst[len] = '\0';
        dst += len + 1;
        p += 4 + len;
    }
    *kv_out = kv;
    *n_out = (size_t)n;
    return 0;
}

static int put_field(fbw *w, size_t slot, const struct ArrowSchema *s, int flags, int depth);

/* The children vector of a field (or of the schema) into `slot`. */
static int put_children(fbw *w, size_t slot, const struct ArrowSchema *s, int flags, int depth)
{
    size_t n = (size_t)s->n_children;
    size_t *slots = calloc(n ? n : 1, sizeof *slots);
    if (!slots)
        return SILT_ENOMEM;
    fb_patch(w, slot, fb_offsets(w, n, slots));
    int rc = 0;
    for (size_t i = 0; i < n && !rc && !w->err; i++)
        rc = put_field(w, slots[i], s->children[i], flags, depth + 1);
    free(slots);
    return rc;
}

static int put_field(fbw *w, size_t slot, const struct ArrowSchema *s, int flags, int depth)
{
    afmt a;
    if (depth > ARROW_MAX_DEPTH)
        return silt_err(SILT_EUNSUPPORTED, "arrow: types nested deeper than %d levels", ARROW_MAX_DEPTH);
    if (s->dictionary)
        return unsupported(s, "dictionary-encoded type");
    if (parse_format(s->format, &a) < 0)
        return unsupported(s, "Arrow type");
    char **kv = NULL;
    size_t nkv = 0;
    int rc = parse_metadata(s->metadata, &kv, &nkv);
    if (rc < 0)
        return rc == SILT_ENOMEM ? rc : unsupported(s, "field metadata of");
    /* Field: name, nullable, type_type, type, dictionary, children, custom_metadata */
    fbf f[7] = {F_OFS, F_U8((s->flags & ARROW_FLAG_NULLABLE) != 0), F_U8(a.type), F_OFS, F_ABSENT, F_OFS,
                nkv ? F_OFS : F_ABSENT};
    size_t o[4];
    fb_patch(w, slot, fb_table(w, f, 7, o));
    fb_patch(w, o[0], fb_string(w, s->name ? s->name : ""));
    if (a.type == T_MAP)
        a.f[0] = F_U8((s->flags & ARROW_FLAG_MAP_KEYS_SORTED) != 0);
    const char *tz = NULL;
    if (a.type == T_TIMESTAMP) {
        tz = a.tz[0] ? a.tz : (flags & SILT_ARROW_NAIVE_UTC) ? "UTC" : NULL;
        if (!tz)
            a.f[1] = F_ABSENT; /* no time zone: the slot is left out */
    }
    size_t to[1] = {0};
    fb_patch(w, o[1], fb_table(w, a.f, a.nf, to));
    if (tz)
        fb_patch(w, to[0], fb_string(w, tz));
    rc = put_children(w, o[2], s, flags, depth);
    if (!rc && nkv)
        fb_key_values(w, o[3], (const char *const *)kv, nkv);
    free(kv);
    return rc;
}

/* Starts a message: placeholder root offset, the Message table; *header
 * and *meta receive the slots of its header and custom_metadata. */
static void put_message(fbw *w, int header_type, int64_t body_len, size_t *header)
{
    size_t root = w->b.len;
    fb_le(w, 0, 4);
    fbf f[5] = {F_I16(MV_V5), F_U8(header_type), F_OFS, F_I64(body_len), F_ABSENT};
    fb_patch(w, root, fb_table(w, f, 5, header));
}

/* Frames the FlatBuffer of `w` and appends it to out: continuation,
 * length (padded so the body starts 8-byte aligned), metadata, padding. */
static int frame(silt_buf *out, fbw *w)
{
    fb_pad(w, 8, 0);
    if (w->err)
        return w->err;
    uint8_t pre[8] = {0xff, 0xff, 0xff, 0xff};
    uint32_t n = (uint32_t)w->b.len;
    for (int i = 0; i < 4; i++)
        pre[4 + i] = (uint8_t)(n >> (8 * i));
    int rc = silt_buf_append(out, pre, 8);
    if (!rc)
        rc = silt_buf_append(out, w->b.data, w->b.len);
    return rc;
}

static int ipc_fail(silt_buf *out, size_t len0, int rc)
{
    out->len = len0;
    if (out->data)
        out->data[len0] = '\0';
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "arrow: out of memory") : rc;
}

int silt_arrow_ipc_schema(silt_buf *out, const struct ArrowSchema *s, int flags, const char *const *kv,
                          size_t n_kv)
{
    size_t len0 = out->len;
    if (!s || !s->format || strcmp(s->format, "+s") != 0)
        return silt_err(SILT_EINVAL, "arrow: a record batch schema must be a struct");
    fbw w = {SILT_BUF_INIT, 0};
    size_t header;
    put_message(&w, MH_SCHEMA, 0, &header);
    /* Schema: endianness, fields, custom_metadata, features */
    fbf f[4] = {F_I16(0), F_OFS, n_kv ? F_OFS : F_ABSENT, F_ABSENT};
    size_t o[2];
    fb_patch(&w, header, fb_table(&w, f, 4, o));
    int rc = put_children(&w, o[0], s, flags, 0);
    if (!rc && n_kv)
        fb_key_values(&w, o[1], kv, n_kv);
    if (!rc)
        rc = frame(out, &w);
    silt_buf_free(&w.b);
    return rc ? ipc_fail(out, len0, rc) : 0;
}

/* ---- RecordBatch ---------------------------------------------------------------- */

typedef struct abuf {
    const void *p;
    int64_t len;
} abuf;

/* Field nodes and body buffers of one batch, in IPC (pre-)order. */
typedef struct plan {
    int64_t (*nodes)[2];
    size_t nn, cn;
    abuf *bufs;
    size_t nb, cb;
} plan;

static int plan_node(plan *p, int64_t len, int64_t nulls)
{
    if (p->nn == p->cn) {
        size_t nc = p->cn ? 2 * p->cn : 16;
        void *nv = realloc(p->nodes, nc * sizeof *p->nodes);
        if (!nv)
            return SILT_ENOMEM;
        p->nodes = nv;
        p->cn = nc;
    }
    p->nodes[p->nn][0] = len;
    p->nodes[p->nn++][1] = nulls;
    return 0;
}

static int plan_buf(plan *p, const void *data, int64_t len)
{
    if (p->nb == p->cb) {
        size_t nc = p->cb ? 2 * p->cb : 32;
        abuf *nv = realloc(p->bufs, nc * sizeof *nv);
        if (!nv)
            return SILT_ENOMEM;
        p->bufs = nv;
        p->cb = nc;
    }
    p->bufs[p->nb++] = (abuf){data, len};
    return 0;
}

static int64_t count_nulls(const uint8_t *valid, int64_t n)
{
    int64_t set = 0;
    for (int64_t i = 0; i < n; i++)
        set += (valid[i / 8] >> (i % 8)) & 1;
    return n - set;
}

static const int32_t ZERO_OFFSET = 0;

static int plan_array(plan *p, const struct ArrowSchema *s, const struct ArrowArray *a, int depth)
{
    afmt f;
    if (depth > ARROW_MAX_DEPTH)
        return silt_err(SILT_EUNSUPPORTED, "arrow: types nested deeper than %d levels", ARROW_MAX_DEPTH);
    if (parse_format(s->format, &f) < 0 || s->dictionary)
        return unsupported(s, "Arrow type");
    if (a->offset != 0)
        return unsupported(s, "sliced array of type");
    if (a->n_buffers < f.nbuf || (f.type == T_LIST || f.type == T_MAP || f.type == T_STRUCT ||
                                  f.type == T_FIXED_LIST ? a->n_children != s->n_children : false))
        return silt_err(SILT_EINVAL, "arrow: column '%s': array does not match its type '%s'",
                        s->name ? s->name : "?", s->format);
    int64_t n = a->length;
    if (f.type == T_NULL)
        return plan_node(p, n, n);
    const uint8_t *valid = a->buffers[0];
    int64_t nulls = !valid ? 0 : a->null_count >= 0 ? a->null_count : count_nulls(valid, n);
    int rc = plan_node(p, n, nulls);
    if (!rc)
        rc = plan_buf(p, nulls ? valid : NULL, nulls ? (n + 7) / 8 : 0);
    const int32_t *offs = f.offsets ? a->buffers[1] : NULL;
    if (!rc && f.offsets) {
        if (!offs && n > 0)
            return silt_err(SILT_EINVAL, "arrow: column '%s': missing offsets", s->name ? s->name : "?");
        rc = plan_buf(p, offs ? (const void *)offs : &ZERO_OFFSET, offs ? (n + 1) * 4 : 4);
    }
    if (!rc && f.width) {
        const void *data = a->buffers[f.offsets ? 2 : 1];
        int64_t len = f.var_data ? (offs ? offs[n] : 0)
                      : f.width == SIZE_MAX ? (n + 7) / 8
                                            : n * (int64_t)f.width;
        if (!data && len > 0)
            return silt_err(SILT_EINVAL, "arrow: column '%s': missing data", s->name ? s->name : "?");
        rc = plan_buf(p, data, len);
    }
    for (int64_t i = 0; !rc && (f.type == T_LIST || f.type == T_MAP || f.type == T_STRUCT || f.type == T_FIXED_LIST) &&
                        i < s->n_children;
         i++)
        rc = plan_array(p, s->children[i], a->children[i], depth + 1);
    return rc;
}

static int64_t pad8(int64_t n) { return (n + 7) / 8 * 8; }

int silt_arrow_ipc_batch(silt_buf *out, const struct ArrowSchema *s, const struct ArrowArray *a)
{
    size_t len0 = out->len;
    if (!s || !a || !s->format || strcmp(s->format, "+s") != 0 || a->n_children != s->n_children)
        return silt_err(SILT_EINVAL, "arrow: a record batch must be a struct array of its schema");
    plan p = {0};
    int rc = 0;
    for (int64_t i = 0; !rc && i < s->n_children; i++)
        rc = plan_array(&p, s->children[i], a->children[i], 0);
    int64_t (*bd)[2] = rc ? NULL : malloc((p.nb ? p.nb : 1) * sizeof *bd);
    if (!rc && !bd)
        rc = SILT_ENOMEM;
    int64_t body = 0;
    for (size_t i = 0; !rc && i < p.nb; i++) {
        bd[i][0] = body;
        bd[i][1] = p.bufs[i].len;
        body += pad8(p.bufs[i].len);
    }
    fbw w = {SILT_BUF_INIT, 0};
    if (!rc) {
        size_t header;
        put_message(&w, MH_RECORD_BATCH, body, &header);
        /* RecordBatch: length, nodes, buffers, compression, variadicBufferCounts */
        fbf f[5] = {F_I64(a->length), F_OFS, F_OFS, F_ABSENT, F_ABSENT};
        size_t o[2];
        fb_patch(&w, header, fb_table(&w, f, 5, o));
        fb_patch(&w, o[0], fb_pairs(&w, (const int64_t(*)[2])p.nodes, p.nn));
        fb_patch(&w, o[1], fb_pairs(&w, (const int64_t(*)[2])bd, p.nb));
        rc = frame(out, &w);
    }
    if (!rc)
        rc = silt_buf_reserve(out, (size_t)body);
    static const uint8_t zero[8];
    for (size_t i = 0; !rc && i < p.nb; i++) {
        int64_t len = p.bufs[i].len;
        if (len)
            rc = silt_buf_append(out, p.bufs[i].p, (size_t)len);
        if (!rc && pad8(len) > len)
            rc = silt_buf_append(out, zero, (size_t)(pad8(len) - len));
    }
    silt_buf_free(&w.b);
    free(p.nodes);
    free(p.bufs);
    free(bd);
    return rc ? ipc_fail(out, len0, rc) : 0;
}

int silt_arrow_ipc_eos(silt_buf *out)
{
    static const uint8_t eos[8] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
    return silt_buf_append(out, eos, 8) < 0 ? silt_err(SILT_ENOMEM, "arrow: out of memory") : 0;
}
