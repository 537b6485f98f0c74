/* flatbuf.c — generic FlatBuffers encoder/decoder over the ODF descriptors.
 *
 * Encoder: a back-to-front builder with the same behaviour as the Rust
 * flatbuffers crate's FlatBufferBuilder (alignment/padding rules, min_align
 * tracking, vtable layout and deduplication, finish), driven in the order the
 * ODF reference serializers use: all variable-size children of a table are
 * created depth-first in schema field order, then the table is started and
 * its fields added in schema order.
 *
 * Decoder: every read is bounds-checked; scalars and structs are read with
 * byte loads (no alignment requirement); a depth limit and a work budget
 * protect against deep or heavily shared (DAG) inputs.
 */
#include "odf/flatbuf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odf/odf_types.h"
#include "util/error.h"
#include "util/timeutil.h"

#define FB_MAX_BUFFER 0x7fffffffu
#define FB_MAX_SLOTS 64

/* ------------------------------------------------------------------------ */
/* path of the field being processed, for error messages                     */

typedef struct fb_path {
    char s[512];
    size_t len;
} fb_path;

static size_t path_push(fb_path *p, const char *fmt, const char *a, size_t idx)
{
    size_t old = p->len;
    if (p->len < sizeof(p->s)) {
        int n;
        if (a)
            n = snprintf(p->s + p->len, sizeof(p->s) - p->len, fmt, a);
        else
            n = snprintf(p->s + p->len, sizeof(p->s) - p->len, fmt, idx);
        if (n > 0)
            p->len += (size_t)n;
        if (p->len >= sizeof(p->s))
            p->len = sizeof(p->s) - 1;
    }
    return old;
}

static void path_pop(fb_path *p, size_t old)
{
    p->len = old;
    p->s[old] = '\0';
}

/* ------------------------------------------------------------------------ */
/* builder                                                                   */

typedef struct fb_loc {
    uint32_t off;
    uint16_t id;
} fb_loc;

typedef struct fbb {
    uint8_t *buf; /* data lives in buf[cap - used, cap) */
    size_t cap;
    size_t used;
    size_t min_align;
    uint32_t *vts; /* revpos of written vtables */
    size_t nvts, vtcap;
    fb_loc locs[FB_MAX_SLOTS];
    size_t nlocs;
    size_t struct_align; /* alignment of inline structs (Timestamp) */
    fb_path path;
} fbb;

static int fbb_fail(fbb *b, int code, const char *what)
{
    return silt_err(code, "%s: %s", b->path.len ? b->path.s : "flatbuffer", what);
}

static int fbb_ensure(fbb *b, size_t want)
{
    if (b->cap - b->used >= want)
        return 0;
    if (want > FB_MAX_BUFFER || b->used + want > FB_MAX_BUFFER)
        return fbb_fail(b, SILT_EINVAL, "buffer would exceed 2 GiB");
    size_t ncap = b->cap ? b->cap : 1024;
    while (ncap - b->used < want)
        ncap *= 2;
    uint8_t *nb = calloc(1, ncap);
    if (!nb)
        return silt_err(SILT_ENOMEM, "out of memory encoding flatbuffer");
    if (b->used)
        memcpy(nb + ncap - b->used, b->buf + b->cap - b->used, b->used);
    free(b->buf);
    b->buf = nb;
    b->cap = ncap;
    return 0;
}

/* Reserves n zeroed bytes at the front; returns a pointer to them or NULL. */
static uint8_t *fbb_space(fbb *b, size_t n)
{
    if (fbb_ensure(b, n) < 0)
        return NULL;
    b->used += n;
    return b->buf + b->cap - b->used;
}

static int fbb_align(fbb *b, size_t len, size_t alignment)
{
    if (alignment > b->min_align)
        b->min_align = alignment;
    size_t pad = (~(b->used + len) + 1) & (alignment - 1);
    if (pad && !fbb_space(b, pad))
        return SILT_ENOMEM;
    return 0;
}

static void put_le(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* push a scalar of size n (aligned to n) */
static int fbb_push_scalar(fbb *b, uint64_t v, size_t n)
{
    if (fbb_align(b, n, n) < 0)
        return SILT_ENOMEM;
    uint8_t *p = fbb_space(b, n);
    if (!p)
        return SILT_ENOMEM;
    put_le(p, v, n);
    return 0;
}

static int fbb_push_uoffset(fbb *b, uint32_t target)
{
    if (fbb_align(b, 4, 4) < 0)
        return SILT_ENOMEM;
    uint8_t *p = fbb_space(b, 4);
    if (!p)
        return SILT_ENOMEM;
    put_le(p, (uint32_t)(b->used - target), 4);
    return 0;
}

static int fbb_create_string(fbb *b, const char *s, size_t len, uint32_t *off)
{
    if (len > FB_MAX_BUFFER)
        return fbb_fail(b, SILT_EINVAL, "string too long");
    if (fbb_align(b, len + 1, 4) < 0 || fbb_push_scalar(b, 0, 1) < 0)
        return SILT_ENOMEM;
    uint8_t *p = fbb_space(b, len);
    if (!p)
        return SILT_ENOMEM;
    if (len)
        memcpy(p, s, len);
    if (fbb_push_scalar(b, len, 4) < 0)
        return SILT_ENOMEM;
    *off = (uint32_t)b->used;
    return 0;
}

static int fbb_create_bytes(fbb *b, const uint8_t *d, size_t len, uint32_t *off)
{
    if (len > FB_MAX_BUFFER)
        return fbb_fail(b, SILT_EINVAL, "byte vector too long");
    if (fbb_align(b, len, 4) < 0 || fbb_ensure(b, len + 4) < 0)
        return SILT_ENOMEM;
    uint8_t *p = fbb_space(b, len);
    if (!p)
        return SILT_ENOMEM;
    if (len)
        memcpy(p, d, len);
    if (fbb_push_scalar(b, len, 4) < 0)
        return SILT_ENOMEM;
    *off = (uint32_t)b->used;
    return 0;
}

static int fbb_create_offsets(fbb *b, const uint32_t *offs, size_t n, uint32_t *off)
{
    if (n > FB_MAX_BUFFER / 4)
        return fbb_fail(b, SILT_EINVAL, "vector too long");
    if (fbb_align(b, n * 4, 4) < 0 || fbb_ensure(b, n * 4 + 4) < 0)
        return SILT_ENOMEM;
    uint8_t *p = fbb_space(b, n * 4);
    if (!p)
        return SILT_ENOMEM;
    for (size_t i = 0; i < n; i++)
        put_le(p + 4 * i, (uint32_t)(b->used - 4 * i - offs[i]), 4);
    if (fbb_push_scalar(b, n, 4) < 0)
        return SILT_ENOMEM;
    *off = (uint32_t)b->used;
    return 0;
}

static uint32_t fbb_start_table(fbb *b)
{
    b->nlocs = 0;
    return (uint32_t)b->used;
}

static int fbb_track(fbb *b, uint16_t slot)
{
    if (b->nlocs >= FB_MAX_SLOTS)
        return fbb_fail(b, SILT_EINTERNAL, "too many fields in table");
    b->locs[b->nlocs].off = (uint32_t)b->used;
    b->locs[b->nlocs].id = (uint16_t)(4 + 2 * slot);
    b->nlocs++;
    return 0;
}

static int fbb_end_table(fbb *b, uint32_t tail, uint32_t *off)
{
    if (fbb_push_scalar(b, 0xF0F0F0F0u, 4) < 0)
        return SILT_ENOMEM;
    uint32_t obj = (uint32_t)b->used;
    size_t vtlen = 4;
    for (size_t i = 0; i < b->nlocs; i++)
        if ((size_t)b->locs[i].id + 2 > vtlen)
            vtlen = (size_t)b->locs[i].id + 2;
    size_t tsize = obj - tail;
    if (tsize > 0xffff)
        return fbb_fail(b, SILT_EINVAL, "table too large");
    uint8_t *vt = fbb_space(b, vtlen);
    if (!vt)
        return SILT_ENOMEM;
    put_le(vt, vtlen, 2);
    put_le(vt + 2, tsize, 2);
    for (size_t i = 0; i < b->nlocs; i++)
        put_le(vt + b->locs[i].id, obj - b->locs[i].off, 2);
    uint32_t final = 0;
    bool found = false;
    for (size_t i = 0; i < b->nvts; i++) {
        const uint8_t *old = b->buf + b->cap - b->vts[i];
        if (get_le(old, 2) == vtlen && memcmp(old, vt, vtlen) == 0) {
            final = b->vts[i];
            found = true;
            break;
        }
    }
    if (found) {
        memset(vt, 0, vtlen);
        b->used -= vtlen;
    } else {
        if (b->nvts == b->vtcap) {
            size_t nc = b->vtcap ? b->vtcap * 2 : 16;
            uint32_t *nv = realloc(b->vts, nc * sizeof(*nv));
            if (!nv)
                return silt_err(SILT_ENOMEM, "out of memory encoding flatbuffer");
            b->vts = nv;
            b->vtcap = nc;
        }
        final = (uint32_t)b->used;
        b->vts[b->nvts++] = final;
    }
    put_le(b->buf + b->cap - obj, (uint32_t)(int32_t)((int64_t)final - (int64_t)obj), 4);
    b->nlocs = 0;
    *off = obj;
    return 0;
}

static int fbb_finish(fbb *b, uint32_t root)
{
    size_t ma = b->min_align ? b->min_align : 1;
    if (fbb_align(b, 4, ma) < 0)
        return SILT_ENOMEM;
    return fbb_push_uoffset(b, root);
}

/* ------------------------------------------------------------------------ */
/* encoder                                                                   */

static int enc_table(fbb *b, const odf_table_desc *d, const void *obj, int depth, uint32_t *off);

#define FIELD_PTR(obj, f) ((const uint8_t *)(obj) + (f)->offset)

static bool has_flag(const void *obj, const odf_field_desc *f)
{
    bool v;
    memcpy(&v, (const uint8_t *)obj + f->has_offset, sizeof(v));
    return v;
}

static uint64_t scalar_get(const void *obj, const odf_field_desc *f, size_t *width, int *err)
{
    const uint8_t *p = FIELD_PTR(obj, f);
    *err = 0;
    switch (f->kind) {
    case ODF_K_BOOL: { bool v; memcpy(&v, p, sizeof(v)); *width = 1; return v ? 1 : 0; }
    case ODF_K_I8: { int8_t v; memcpy(&v, p, 1); *width = 1; return (uint8_t)v; }
    case ODF_K_U8: { uint8_t v; memcpy(&v, p, 1); *width = 1; return v; }
    case ODF_K_I16: { int16_t v; memcpy(&v, p, 2); *width = 2; return (uint16_t)v; }
    case ODF_K_U16: { uint16_t v; memcpy(&v, p, 2); *width = 2; return v; }
    case ODF_K_I32: { int32_t v; memcpy(&v, p, 4); *width = 4; return (uint32_t)v; }
    case ODF_K_U32: { uint32_t v; memcpy(&v, p, 4); *width = 4; return v; }
    case ODF_K_I64: { int64_t v; memcpy(&v, p, 8); *width = 8; return (uint64_t)v; }
    case ODF_K_U64: { uint64_t v; memcpy(&v, p, 8); *width = 8; return v; }
    case ODF_K_ENUM: {
        int32_t v;
        memcpy(&v, p, 4);
        *width = f->enm ? f->enm->width : 4;
        if (!f->enm || v < 0 || (size_t)v >= f->enm->nvalues)
            *err = 1;
        return (uint64_t)(uint32_t)v & (*width == 8 ? ~0ull : ((1ull << (8 * *width)) - 1));
    }
    default: *width = 0; *err = 1; return 0;
    }
}

static bool is_scalar_kind(int k)
{
    return (k >= ODF_K_BOOL && k <= ODF_K_ENUM);
}

/* Serializes one union value (variant table); returns its offset. */
static int enc_union_value(fbb *b, const odf_union_desc *u, const odf_union *v, int depth,
                           uint32_t *off)
{
    if (v->type == 0 || v->type > u->nvariants) {
        char msg[96];
        snprintf(msg, sizeof(msg), "invalid %s union type %u", u->name, (unsigned)v->type);
        return fbb_fail(b, SILT_EINVAL, msg);
    }
    const odf_table_desc *vd = u->variants[v->type - 1];
    size_t old = path_push(&b->path, "(%s)", vd->name, 0);
    int rc;
    if (v->value) {
        rc = enc_table(b, vd, v->value, depth + 1, off);
    } else {
        void *tmp = calloc(1, vd->size ? vd->size : 1);
        if (!tmp)
            return silt_err(SILT_ENOMEM, "out of memory encoding flatbuffer");
        rc = enc_table(b, vd, tmp, depth + 1, off);
        free(tmp);
    }
    path_pop(&b->path, old);
    return rc;
}

static int enc_children(fbb *b, const odf_field_desc *f, const void *obj, int depth,
                        uint32_t *off, bool *present)
{
    const uint8_t *p = FIELD_PTR(obj, f);
    *present = false;
    int rc = 0;
    switch (f->kind) {
    case ODF_K_STRING:
    case ODF_K_JSON: {
        const char *s;
        memcpy(&s, p, sizeof(s));
        if (!s)
            break;
        rc = fbb_create_string(b, s, strlen(s), off);
        *present = true;
        break;
    }
    case ODF_K_BYTES: {
        const odf_bytes *v = (const odf_bytes *)(const void *)p;
        if (!v->data)
            break;
        rc = fbb_create_bytes(b, v->data, v->len, off);
        *present = true;
        break;
    }
    case ODF_K_TABLE: {
        const void *child;
        memcpy(&child, p, sizeof(child));
        if (!child)
            break;
        rc = enc_table(b, f->table, child, depth + 1, off);
        *present = true;
        break;
    }
    case ODF_K_UNION: {
        const odf_union *v = (const odf_union *)(const void *)p;
        if (v->type == 0)
            break;
        rc = enc_union_value(b, f->uni, v, depth, off);
        *present = true;
        break;
    }
    case ODF_K_VEC_STRING:
    case ODF_K_VEC_TABLE:
    case ODF_K_VEC_UNION: {
        size_t n;
        bool vpresent;
        if (f->kind == ODF_K_VEC_STRING) {
            const odf_strvec *v = (const odf_strvec *)(const void *)p;
            n = v->n;
            vpresent = v->present || v->n;
            if (n && !v->items)
                return fbb_fail(b, SILT_EINVAL, "vector items missing");
        } else if (f->kind == ODF_K_VEC_TABLE) {
            const odf_vec *v = (const odf_vec *)(const void *)p;
            n = v->n;
            vpresent = v->present || v->n;
            if (n && !v->items)
                return fbb_fail(b, SILT_EINVAL, "vector items missing");
        } else {
            const odf_uvec *v = (const odf_uvec *)(const void *)p;
            n = v->n;
            vpresent = v->present || v->n;
            if (n && !v->items)
                return fbb_fail(b, SILT_EINVAL, "vector items missing");
        }
        if (!vpresent)
            break;
        if (n > FB_MAX_BUFFER / 4)
            return fbb_fail(b, SILT_EINVAL, "vector too long");
        uint32_t *offs = malloc((n ? n : 1) * sizeof(uint32_t));
        if (!offs)
            return silt_err(SILT_ENOMEM, "out of memory encoding flatbuffer");
        for (size_t i = 0; i < n && rc == 0; i++) {
            size_t old = path_push(&b->path, "[%zu]", NULL, i);
            if (f->kind == ODF_K_VEC_STRING) {
                const char *s = ((const odf_strvec *)(const void *)p)->items[i];
                if (!s)
                    rc = fbb_fail(b, SILT_EINVAL, "null string in vector");
                else
                    rc = fbb_create_string(b, s, strlen(s), &offs[i]);
            } else if (f->kind == ODF_K_VEC_TABLE) {
                const void *item = ((const odf_vec *)(const void *)p)->items[i];
                if (!item)
                    rc = fbb_fail(b, SILT_EINVAL, "null element in vector");
                else
                    rc = enc_table(b, f->table, item, depth + 1, &offs[i]);
            } else {
                const odf_union *item = &((const odf_uvec *)(const void *)p)->items[i];
                const odf_table_desc *w = f->uni->wrapper;
                uint32_t voff = 0;
                if (!w || w->nfields != 1 || w->fields[0].kind != ODF_K_UNION)
                    rc = fbb_fail(b, SILT_EINTERNAL, "union vector without wrapper table");
                if (rc == 0)
                    rc = enc_union_value(b, f->uni, item, depth, &voff);
                if (rc == 0) {
                    uint32_t tail = fbb_start_table(b);
                    uint16_t slot = w->fields[0].slot;
                    rc = fbb_push_scalar(b, item->type, 1);
                    if (rc == 0)
                        rc = fbb_track(b, slot);
                    if (rc == 0)
                        rc = fbb_push_uoffset(b, voff);
                    if (rc == 0)
                        rc = fbb_track(b, (uint16_t)(slot + 1));
                    if (rc == 0)
                        rc = fbb_end_table(b, tail, &offs[i]);
                }
            }
            path_pop(&b->path, old);
        }
        if (rc == 0)
            rc = fbb_create_offsets(b, offs, n, off);
        free(offs);
        *present = true;
        break;
    }
    default:
        break;
    }
    return rc;
}

static void time_parts(odf_time t, uint8_t out[16])
{
    int32_t year;
    uint16_t ordinal;
    uint32_t secs, nanos;
    silt_time st = {t.sec, t.nsec};
    silt_time_to_parts(st, &year, &ordinal, &secs, &nanos);
    memset(out, 0, 16);
    put_le(out, (uint32_t)year, 4);
    put_le(out + 4, ordinal, 2);
    put_le(out + 8, secs, 4);
    put_le(out + 12, nanos, 4);
}

static int enc_table(fbb *b, const odf_table_desc *d, const void *obj, int depth, uint32_t *off)
{
    if (depth > ODF_FB_MAX_DEPTH)
        return fbb_fail(b, SILT_EINVAL, "nesting too deep");
    size_t nf = d->nfields;
    uint32_t offs_local[32];
    bool pres_local[32];
    uint32_t *offs = offs_local;
    bool *pres = pres_local;
    if (nf > 32) {
        offs = calloc(nf, sizeof(*offs));
        pres = calloc(nf, sizeof(*pres));
        if (!offs || !pres) {
            free(offs == offs_local ? NULL : offs);
            free(pres == pres_local ? NULL : pres);
            return silt_err(SILT_ENOMEM, "out of memory encoding flatbuffer");
        }
    }
    int rc = 0;
    /* 1. children, depth-first, in schema order */
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const odf_field_desc *f = &d->fields[i];
        pres[i] = false;
        offs[i] = 0;
        if (is_scalar_kind(f->kind) || f->kind == ODF_K_TIMESTAMP || f->kind == ODF_K_DURATION)
            continue;
        size_t old = path_push(&b->path, ".%s", f->name, 0);
        rc = enc_children(b, f, obj, depth, &offs[i], &pres[i]);
        if (rc == 0 && !pres[i] && (f->flags & ODF_F_REQUIRED))
            rc = fbb_fail(b, SILT_EINVAL, "missing required field");
        path_pop(&b->path, old);
    }
    /* 2. the table itself */
    uint32_t tail = fbb_start_table(b);
    for (size_t i = 0; i < nf && rc == 0; i++) {
        const odf_field_desc *f = &d->fields[i];
        size_t old = path_push(&b->path, ".%s", f->name, 0);
        if (is_scalar_kind(f->kind)) {
            size_t w;
            int err;
            uint64_t v = scalar_get(obj, f, &w, &err);
            bool write;
            if (f->flags & ODF_F_OPTIONAL)
                write = has_flag(obj, f);
            else
                write = v != 0;
            if (write && err)
                rc = fbb_fail(b, SILT_EINVAL, "invalid enum value");
            else if (write) {
                rc = fbb_push_scalar(b, v, w);
                if (rc == 0)
                    rc = fbb_track(b, f->slot);
            }
        } else if (f->kind == ODF_K_TIMESTAMP) {
            if (has_flag(obj, f)) {
                odf_time t;
                memcpy(&t, FIELD_PTR(obj, f), sizeof(t));
                if (t.nsec > 999999999u) {
                    rc = fbb_fail(b, SILT_EINVAL, "invalid timestamp nanoseconds");
                } else {
                    uint8_t parts[16];
                    time_parts(t, parts);
                    rc = fbb_align(b, 16, b->struct_align);
                    uint8_t *p = rc == 0 ? fbb_space(b, 16) : NULL;
                    if (!p)
                        rc = SILT_ENOMEM;
                    else {
                        memcpy(p, parts, 16);
                        rc = fbb_track(b, f->slot);
                    }
                }
            } else if (f->flags & ODF_F_REQUIRED) {
                rc = fbb_fail(b, SILT_EINVAL, "missing required field");
            }
        } else if (f->kind == ODF_K_DURATION) {
            if (has_flag(obj, f)) {
                uint64_t v;
                memcpy(&v, FIELD_PTR(obj, f), sizeof(v));
                rc = fbb_push_scalar(b, v, 8);
                if (rc == 0)
                    rc = fbb_track(b, f->slot);
            } else if (f->flags & ODF_F_REQUIRED) {
                rc = fbb_fail(b, SILT_EINVAL, "missing required field");
            }
        } else if (pres[i]) {
            if (f->kind == ODF_K_UNION) {
                const odf_union *u = (const odf_union *)(const void *)FIELD_PTR(obj, f);
                rc = fbb_push_scalar(b, u->type, 1);
                if (rc == 0)
                    rc = fbb_track(b, f->slot);
                if (rc == 0)
                    rc = fbb_push_uoffset(b, offs[i]);
                if (rc == 0)
                    rc = fbb_track(b, (uint16_t)(f->slot + 1));
            } else {
                rc = fbb_push_uoffset(b, offs[i]);
                if (rc == 0)
                    rc = fbb_track(b, f->slot);
            }
        }
        path_pop(&b->path, old);
    }
    if (rc == 0)
        rc = fbb_end_table(b, tail, off);
    if (offs != offs_local)
        free(offs);
    if (pres != pres_local)
        free(pres);
    return rc;
}

int odf_fb_encode(silt_buf *out, const odf_table_desc *d, const void *obj)
{
    return odf_fb_encode_aligned(out, d, obj, 4);
}

int odf_fb_encode_aligned(silt_buf *out, const odf_table_desc *d, const void *obj, size_t struct_align)
{
    if (!out || !d || !obj)
        return silt_err(SILT_EINVAL, "odf_fb_encode: null argument");
    if (struct_align != 1 && struct_align != 4)
        return silt_err(SILT_EINVAL, "odf_fb_encode: struct alignment must be 1 or 4");
    fbb b;
    memset(&b, 0, sizeof(b));
    b.struct_align = struct_align;
    path_push(&b.path, "%s", d->name, 0);
    uint32_t root = 0;
    int rc = enc_table(&b, d, obj, 0, &root);
    if (rc == 0)
        rc = fbb_finish(&b, root);
    if (rc == 0) {
        size_t old = out->len;
        rc = silt_buf_append(out, b.buf + b.cap - b.used, b.used);
        if (rc < 0)
            out->len = old;
    }
    free(b.buf);
    free(b.vts);
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------ */
/* decoder                                                                   */

typedef struct fbd {
    const uint8_t *buf;
    size_t len;
    silt_arena *a;
    uint64_t budget; /* remaining work units (bytes), against shared-offset DAGs */
    fb_path path;
} fbd;

static int fbd_fail(fbd *c, const char *what)
{
    return silt_err(SILT_EINVAL, "%s: %s", c->path.s, what);
}

static int fbd_spend(fbd *c, uint64_t n)
{
    if (n > c->budget)
        return fbd_fail(c, "too many shared references (decoding budget exceeded)");
    c->budget -= n;
    return 0;
}

static bool in_bounds(const fbd *c, uint64_t pos, uint64_t n)
{
    return pos <= c->len && n <= c->len - pos;
}

/* Follows the uoffset at `pos`; *target = absolute position. */
static int fbd_deref(fbd *c, uint64_t pos, uint64_t *target)
{
    if (!in_bounds(c, pos, 4))
        return fbd_fail(c, "offset out of bounds");
    uint64_t t = pos + get_le(c->buf + pos, 4);
    if (t >= c->len)
        return fbd_fail(c, "offset out of bounds");
    *target = t;
    return 0;
}

static bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint8_t ch = s[i];
        if (ch < 0x80) {
            if (ch == 0)
                return false;
            i++;
            continue;
        }
        size_t k;
        uint32_t cp;
        if ((ch & 0xe0) == 0xc0) { k = 1; cp = ch & 0x1f; }
        else if ((ch & 0xf0) == 0xe0) { k = 2; cp = ch & 0x0f; }
        else if ((ch & 0xf8) == 0xf0) { k = 3; cp = ch & 0x07; }
        else return false;
        if (n - i <= k)
            return false;
        for (size_t j = 1; j <= k; j++) {
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
            cp = (cp << 6) | (s[i + j] & 0x3f);
        }
        if ((k == 1 && cp < 0x80) || (k == 2 && cp < 0x800) || (k == 3 && cp < 0x10000) ||
            cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return false;
        i += k + 1;
    }
    return true;
}

static int dec_string(fbd *c, uint64_t pos, char **out)
{
    if (!in_bounds(c, pos, 4))
        return fbd_fail(c, "string out of bounds");
    uint64_t n = get_le(c->buf + pos, 4);
    if (!in_bounds(c, pos + 4, n + 1))
        return fbd_fail(c, "string out of bounds");
    if (c->buf[pos + 4 + n] != 0)
        return fbd_fail(c, "string not NUL-terminated");
    if (!utf8_valid(c->buf + pos + 4, (size_t)n))
        return fbd_fail(c, "string is not valid UTF-8 (or contains NUL)");
    int rc = fbd_spend(c, n + 8);
    if (rc < 0)
        return rc;
    char *s = silt_arena_strndup(c->a, (const char *)c->buf + pos + 4, (size_t)n);
    if (!s)
        return SILT_ENOMEM;
    *out = s;
    return 0;
}

static int dec_vec_header(fbd *c, uint64_t pos, uint64_t elem, uint64_t *n)
{
    if (!in_bounds(c, pos, 4))
        return fbd_fail(c, "vector out of bounds");
    *n = get_le(c->buf + pos, 4);
    if (*n > c->len || !in_bounds(c, pos + 4, *n * elem))
        return fbd_fail(c, "vector out of bounds");
    return fbd_spend(c, 4 + *n * elem);
}

static int dec_table(fbd *c, const odf_table_desc *d, uint64_t pos, int depth, void **out);

static int dec_union(fbd *c, const odf_union_desc *u, unsigned type, uint64_t vpos, int depth,
                     odf_union *out)
{
    if (type > u->nvariants) {
        char msg[96];
        snprintf(msg, sizeof(msg), "unknown %s union type %u", u->name, type);
        return fbd_fail(c, msg);
    }
    const odf_table_desc *vd = u->variants[type - 1];
    size_t old = path_push(&c->path, "(%s)", vd->name, 0);
    void *v = NULL;
    int rc = dec_table(c, vd, vpos, depth + 1, &v);
    path_pop(&c->path, old);
    if (rc < 0)
        return rc;
    out->type = (uint8_t)type;
    out->value = v;
    return 0;
}

static int dec_table(fbd *c, const odf_table_desc *d, uint64_t pos, int depth, void **out)
{
    if (depth > ODF_FB_MAX_DEPTH)
        return fbd_fail(c, "nesting too deep");
    if (!in_bounds(c, pos, 4))
        return fbd_fail(c, "table out of bounds");
    int32_t soff = (int32_t)(uint32_t)get_le(c->buf + pos, 4);
    int64_t vt = (int64_t)pos - (int64_t)soff;
    if (vt < 0 || !in_bounds(c, (uint64_t)vt, 4))
        return fbd_fail(c, "vtable out of bounds");
    uint64_t vtlen = get_le(c->buf + vt, 2);
    uint64_t tsize = get_le(c->buf + vt + 2, 2);
    if (vtlen < 4 || (vtlen & 1) || !in_bounds(c, (uint64_t)vt, vtlen))
        return fbd_fail(c, "invalid vtable");
    if (tsize < 4 || !in_bounds(c, pos, tsize))
        return fbd_fail(c, "table out of bounds");
    int rc = fbd_spend(c, tsize + 4);
    if (rc < 0)
        return rc;
    uint8_t *obj = silt_arena_alloc(c->a, d->size ? d->size : 1);
    if (!obj)
        return SILT_ENOMEM;

    for (size_t i = 0; i < d->nfields; i++) {
        const odf_field_desc *f = &d->fields[i];
        size_t old = path_push(&c->path, ".%s", f->name, 0);
        uint64_t vslot = 4 + 2 * (uint64_t)f->slot;
        uint64_t voff = vslot + 2 <= vtlen ? get_le(c->buf + vt + vslot, 2) : 0;
        uint64_t voff2 = 0;
        if (f->kind == ODF_K_UNION)
            voff2 = vslot + 4 <= vtlen ? get_le(c->buf + vt + vslot + 2, 2) : 0;
        uint8_t *dst = obj + f->offset;
        size_t need;
        switch (f->kind) {
        case ODF_K_BOOL: case ODF_K_I8: case ODF_K_U8: need = 1; break;
        case ODF_K_I16: case ODF_K_U16: need = 2; break;
        case ODF_K_I32: case ODF_K_U32: need = 4; break;
        case ODF_K_I64: case ODF_K_U64: case ODF_K_DURATION: need = 8; break;
        case ODF_K_ENUM: need = f->enm ? f->enm->width : 4; break;
        case ODF_K_TIMESTAMP: need = 16; break;
        case ODF_K_UNION: need = 1; break;
        default: need = 4; break;
        }
        if (voff && (voff < 4 || voff + need > tsize)) {
            rc = fbd_fail(c, "field out of bounds");
            goto done;
        }
        if (f->kind == ODF_K_UNION && voff2 && (voff2 < 4 || voff2 + 4 > tsize)) {
            rc = fbd_fail(c, "field out of bounds");
            goto done;
        }
        bool present = voff != 0;
        if (f->kind == ODF_K_UNION)
            present = voff && c->buf[pos + voff] != 0;
        if (!present) {
            if (f->flags & ODF_F_REQUIRED) {
                rc = fbd_fail(c, "missing required field");
                goto done;
            }
            goto done;
        }
        const uint8_t *fp = c->buf + pos + voff;
        switch (f->kind) {
        case ODF_K_BOOL: { bool v = fp[0] != 0; memcpy(dst, &v, sizeof(v)); break; }
        case ODF_K_I8: case ODF_K_U8: dst[0] = fp[0]; break;
        case ODF_K_I16: case ODF_K_U16: { uint16_t v = (uint16_t)get_le(fp, 2); memcpy(dst, &v, 2); break; }
        case ODF_K_I32: case ODF_K_U32: { uint32_t v = (uint32_t)get_le(fp, 4); memcpy(dst, &v, 4); break; }
        case ODF_K_I64: case ODF_K_U64: case ODF_K_DURATION: { uint64_t v = get_le(fp, 8); memcpy(dst, &v, 8); break; }
        case ODF_K_ENUM: {
            int64_t v;
            uint64_t raw = get_le(fp, need);
            if (need == 2)
                v = (int16_t)(uint16_t)raw;
            else if (need == 4)
                v = (int32_t)(uint32_t)raw;
            else
                v = (int64_t)raw; /* ubyte enums */
            if (!f->enm || v < 0 || (uint64_t)v >= f->enm->nvalues) {
                rc = fbd_fail(c, "invalid enum value");
                goto done;
            }
            int32_t e = (int32_t)v;
            memcpy(dst, &e, sizeof(e));
            break;
        }
        case ODF_K_TIMESTAMP: {
            silt_time st;
            if (silt_time_from_parts((int32_t)(uint32_t)get_le(fp, 4), (uint16_t)get_le(fp + 4, 2),
                                     (uint32_t)get_le(fp + 8, 4), (uint32_t)get_le(fp + 12, 4),
                                     &st) < 0) {
                rc = fbd_fail(c, "invalid timestamp");
                goto done;
            }
            odf_time t = {st.sec, st.nsec};
            memcpy(dst, &t, sizeof(t));
            break;
        }
        case ODF_K_STRING:
        case ODF_K_JSON: {
            uint64_t t;
            char *s = NULL;
            rc = fbd_deref(c, pos + voff, &t);
            if (rc == 0)
                rc = dec_string(c, t, &s);
            if (rc < 0)
                goto done;
            memcpy(dst, &s, sizeof(s));
            break;
        }
        case ODF_K_BYTES: {
            uint64_t t, n;
            rc = fbd_deref(c, pos + voff, &t);
            if (rc == 0)
                rc = dec_vec_header(c, t, 1, &n);
            if (rc < 0)
                goto done;
            odf_bytes bv;
            bv.data = silt_arena_memdup(c->a, c->buf + t + 4, (size_t)n);
            bv.len = (size_t)n;
            if (!bv.data) {
                rc = SILT_ENOMEM;
                goto done;
            }
            memcpy(dst, &bv, sizeof(bv));
            break;
        }
        case ODF_K_TABLE: {
            uint64_t t;
            void *child = NULL;
            rc = fbd_deref(c, pos + voff, &t);
            if (rc == 0)
                rc = dec_table(c, f->table, t, depth + 1, &child);
            if (rc < 0)
                goto done;
            memcpy(dst, &child, sizeof(child));
            break;
        }
        case ODF_K_UNION: {
            unsigned type = fp[0];
            uint64_t t;
            if (!voff2) {
                rc = fbd_fail(c, "union value missing");
                goto done;
            }
            odf_union u;
            rc = fbd_deref(c, pos + voff2, &t);
            if (rc == 0)
                rc = dec_union(c, f->uni, type, t, depth, &u);
            if (rc < 0)
                goto done;
            memcpy(dst, &u, sizeof(u));
            break;
        }
        case ODF_K_VEC_STRING:
        case ODF_K_VEC_TABLE:
        case ODF_K_VEC_UNION: {
            uint64_t t, n;
            rc = fbd_deref(c, pos + voff, &t);
            if (rc == 0)
                rc = dec_vec_header(c, t, 4, &n);
            if (rc < 0)
                goto done;
            size_t esz = f->kind == ODF_K_VEC_STRING ? sizeof(char *)
                         : f->kind == ODF_K_VEC_TABLE ? sizeof(void *)
                                                      : sizeof(odf_union);
            void *items = silt_arena_alloc(c->a, (size_t)(n ? n : 1) * esz);
            if (!items) {
                rc = SILT_ENOMEM;
                goto done;
            }
            for (uint64_t k = 0; k < n && rc == 0; k++) {
                size_t o2 = path_push(&c->path, "[%zu]", NULL, (size_t)k);
                uint64_t e;
                rc = fbd_deref(c, t + 4 + 4 * k, &e);
                if (rc == 0 && f->kind == ODF_K_VEC_STRING) {
                    rc = dec_string(c, e, &((char **)items)[k]);
                } else if (rc == 0 && f->kind == ODF_K_VEC_TABLE) {
                    rc = dec_table(c, f->table, e, depth + 1, &((void **)items)[k]);
                } else if (rc == 0) {
                    const odf_table_desc *w = f->uni->wrapper;
                    void *wobj = NULL;
                    if (!w || w->nfields != 1 || w->fields[0].kind != ODF_K_UNION)
                        rc = fbd_fail(c, "union vector without wrapper table");
                    if (rc == 0)
                        rc = dec_table(c, w, e, depth + 1, &wobj);
                    if (rc == 0)
                        memcpy(&((odf_union *)items)[k], (uint8_t *)wobj + w->fields[0].offset,
                               sizeof(odf_union));
                }
                path_pop(&c->path, o2);
            }
            if (rc < 0)
                goto done;
            if (f->kind == ODF_K_VEC_STRING) {
                odf_strvec v = {(char **)items, (size_t)n, true};
                memcpy(dst, &v, sizeof(v));
            } else if (f->kind == ODF_K_VEC_TABLE) {
                odf_vec v = {(void **)items, (size_t)n, true};
                memcpy(dst, &v, sizeof(v));
            } else {
                odf_uvec v = {(odf_union *)items, (size_t)n, true};
                memcpy(dst, &v, sizeof(v));
            }
            break;
        }
        default:
            rc = fbd_fail(c, "unsupported field kind");
            goto done;
        }
        if ((is_scalar_kind(f->kind) && (f->flags & ODF_F_OPTIONAL)) ||
            f->kind == ODF_K_TIMESTAMP || f->kind == ODF_K_DURATION) {
            bool t = true;
            memcpy(obj + f->has_offset, &t, sizeof(t));
        }
    done:
        path_pop(&c->path, old);
        if (rc < 0)
            return rc;
    }
    *out = obj;
    return 0;
}

int odf_fb_decode(silt_arena *a, const odf_table_desc *d, const uint8_t *buf, size_t len,
                  void **out)
{
    if (!a || !d || !out || (!buf && len))
        return silt_err(SILT_EINVAL, "odf_fb_decode: null argument");
    fbd c;
    memset(&c, 0, sizeof(c));
    c.buf = buf;
    c.len = len;
    c.a = a;
    c.budget = 2 * (uint64_t)len + 4096;
    path_push(&c.path, "%s", d->name, 0);
    if (len < 8 || len > FB_MAX_BUFFER)
        return fbd_fail(&c, len < 8 ? "buffer too short" : "buffer too large");
    uint64_t root;
    int rc = fbd_deref(&c, 0, &root);
    if (rc < 0)
        return rc;
    return dec_table(&c, d, root, 0, out);
}
