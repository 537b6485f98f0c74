/* digest.c — RecordDigestV0 (arrow-digest) with SHA3-256, DuckDB-free.
 *
 * Byte stream, as the reference computes it (all integers little endian):
 *  - record hasher: for every field in depth-first order (struct fields are
 *    visited, then their children one level deeper): u64 name length, name
 *    bytes, u64 nesting level. Then, at the end, the 32-byte digest of every
 *    leaf (non-struct) column in the same order.
 *  - column hasher: starts with the data type (u16 type id + parameters, see
 *    hash_type), then per row: null -> one 0 byte; bool -> 1 (false) or 2
 *    (true); fixed width -> the value bytes; binary/utf8 -> u64 length +
 *    bytes; fixed binary -> u64 width + bytes; list -> u64 item count + the
 *    items hashed into the same column hasher (their own nulls apply).
 *  - a struct's validity is pushed down to its leaves with
 *    maybe_combine_null_buffers (see digest.h: OR of the bitmaps when both
 *    have nulls, one of them when only it is present and has nulls, none
 *    otherwise — the reference's exact case analysis), per update call. A
 *    null slot that the combination makes valid is hashed from the array's
 *    buffers like any valid slot.
 * Invariants: a hasher holds deep copies of the schema strings it needs;
 * after finalize (or any hashing error) it refuses further updates.
 */
#include "engine/digest.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hash.h"

/* arrow-digest schema_digest.rs TypeID values (hashed as u16). */
enum {
    TID_INT = 1,
    TID_FLOAT = 2,
    TID_BINARY = 3,
    TID_UTF8 = 4,
    TID_BOOL = 5,
    TID_DECIMAL = 6,
    TID_DATE = 7,
    TID_TIME = 8,
    TID_TIMESTAMP = 9,
    TID_LIST = 11,
};

typedef struct leaf {
    silt_sha3_ctx *ctx;
    const silt_arrow_field *field; /* points into the caller's schema copy */
} leaf;

struct silt_record_digest {
    silt_sha3_ctx *ctx;
    leaf *leaves;
    size_t num_leaves, cap_leaves;
    silt_arrow_field *fields; /* deep copy of the top-level schema */
    size_t num_fields;
    bool done; /* finalized or failed */
};

/* ------------------------------------------------------------ small helpers */

static int upd(silt_sha3_ctx *c, const void *p, size_t n)
{
    return n ? silt_sha3_update(c, p, n) : 0;
}

static int upd_u64(silt_sha3_ctx *c, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return upd(c, b, 8);
}

static int upd_u16(silt_sha3_ctx *c, unsigned v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    return upd(c, b, 2);
}

static int upd_u8(silt_sha3_ctx *c, unsigned v)
{
    uint8_t b = (uint8_t)v;
    return upd(c, &b, 1);
}

static bool bit(const uint8_t *bits, size_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static size_t null_count(const uint8_t *bits, size_t off, size_t len)
{
    if (!bits)
        return 0;
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += !bit(bits, off + i);
    return n;
}

/* A validity view: bits == NULL means "no null buffer". */
typedef struct vview {
    const uint8_t *bits;
    size_t off;
} vview;

static bool vvalid(vview v, size_t i)
{
    return !v.bits || bit(v.bits, v.off + i);
}

/* maybe_combine_null_buffers(parent, child) over `len` rows. When both have
 * nulls the OR is written to *owned (caller frees). */
static int combine(vview parent, vview child, size_t len, vview *out, uint8_t **owned)
{
    *owned = NULL;
    size_t pn = null_count(parent.bits, parent.off, len);
    size_t cn = null_count(child.bits, child.off, len);
    out->bits = NULL;
    out->off = 0;
    if (!parent.bits && child.bits && cn)
        *out = child;
    else if (parent.bits && !child.bits && pn)
        *out = parent;
    else if (parent.bits && child.bits && pn && cn) {
        uint8_t *b = calloc(len / 8 + 1, 1);
        if (!b)
            return silt_err(SILT_ENOMEM, "logical hash: out of memory combining null bitmaps");
        for (size_t i = 0; i < len; i++)
            if (bit(parent.bits, parent.off + i) || bit(child.bits, child.off + i))
                b[i >> 3] |= (uint8_t)(1u << (i & 7));
        out->bits = b;
        *owned = b;
    }
    return 0;
}

/* ------------------------------------------------------------ schema */

static int fixed_width(const silt_arrow_type *t)
{
    switch (t->id) {
    case SILT_ARROW_INT:
    case SILT_ARROW_FLOAT:
    case SILT_ARROW_DECIMAL:
    case SILT_ARROW_DATE:
    case SILT_ARROW_TIME:
        return t->bit_width / 8;
    case SILT_ARROW_TIMESTAMP:
        return 8;
    case SILT_ARROW_FIXED_BINARY:
        return t->byte_width;
    default:
        return 0;
    }
}

/* Checks that the reference can hash a (non-struct) leaf type. */
static int check_leaf_type(const silt_arrow_type *t, const char *name)
{
    int w = t->bit_width;
    switch (t->id) {
    case SILT_ARROW_BOOL:
    case SILT_ARROW_BINARY:
    case SILT_ARROW_UTF8:
        return 0;
    case SILT_ARROW_INT:
        if (w == 8 || w == 16 || w == 32 || w == 64)
            return 0;
        break;
    case SILT_ARROW_FLOAT:
        if (w == 16 || w == 32 || w == 64)
            return 0;
        break;
    case SILT_ARROW_DECIMAL:
        if (w == 32 || w == 64 || w == 128 || w == 256)
            return 0;
        break;
    case SILT_ARROW_DATE:
    case SILT_ARROW_TIME:
        if ((w == 32 || w == 64) && (t->id == SILT_ARROW_DATE || t->unit <= SILT_ARROW_NANO))
            return 0;
        break;
    case SILT_ARROW_TIMESTAMP:
        if (t->unit <= SILT_ARROW_NANO)
            return 0;
        break;
    case SILT_ARROW_FIXED_BINARY:
        if (t->byte_width > 0)
            return 0;
        break;
    case SILT_ARROW_LIST:
        if (t->num_children != 1 || !t->children)
            break;
        if (t->children[0].type.id == SILT_ARROW_STRUCT)
            return silt_err(SILT_EUNSUPPORTED,
                            "logical hash: column '%s': lists of structs are not supported by "
                            "arrow0-sha3-256", name);
        return check_leaf_type(&t->children[0].type, name);
    case SILT_ARROW_STRUCT:
        return silt_err(SILT_EUNSUPPORTED, "logical hash: column '%s': unexpected struct", name);
    }
    return silt_err(SILT_EUNSUPPORTED, "logical hash: column '%s': unsupported Arrow type (id %d, "
                    "width %d)", name, (int)t->id, w);
}

static int hash_type(silt_sha3_ctx *c, const silt_arrow_type *t)
{
    int rc = 0;
    switch (t->id) {
    case SILT_ARROW_BOOL:
        return upd_u16(c, TID_BOOL);
    case SILT_ARROW_INT:
        if ((rc = upd_u16(c, TID_INT)) || (rc = upd_u8(c, t->is_signed ? 1 : 0)))
            return rc;
        return upd_u64(c, (uint64_t)t->bit_width);
    case SILT_ARROW_FLOAT:
        if ((rc = upd_u16(c, TID_FLOAT)))
            return rc;
        return upd_u64(c, (uint64_t)t->bit_width);
    case SILT_ARROW_DECIMAL:
        if ((rc = upd_u16(c, TID_DECIMAL)) || (rc = upd_u64(c, (uint64_t)t->bit_width)) ||
            (rc = upd_u64(c, (uint64_t)(int64_t)t->precision)))
            return rc;
        return upd_u64(c, (uint64_t)(int64_t)t->scale); /* i8 sign-extended, as `as u64` */
    case SILT_ARROW_DATE:
        if ((rc = upd_u16(c, TID_DATE)) || (rc = upd_u64(c, (uint64_t)t->bit_width)))
            return rc;
        return upd_u16(c, t->bit_width == 32 ? 0 : 1); /* DAY / MILLISECOND */
    case SILT_ARROW_TIME:
        if ((rc = upd_u16(c, TID_TIME)) || (rc = upd_u64(c, (uint64_t)t->bit_width)))
            return rc;
        return upd_u16(c, (unsigned)t->unit);
    case SILT_ARROW_TIMESTAMP:
        if ((rc = upd_u16(c, TID_TIMESTAMP)) || (rc = upd_u16(c, (unsigned)t->unit)))
            return rc;
        if (!t->timezone)
            return upd_u8(c, 0);
        if ((rc = upd_u64(c, strlen(t->timezone))))
            return rc;
        return upd(c, t->timezone, strlen(t->timezone));
    case SILT_ARROW_BINARY:
    case SILT_ARROW_FIXED_BINARY:
        return upd_u16(c, TID_BINARY);
    case SILT_ARROW_UTF8:
        return upd_u16(c, TID_UTF8);
    case SILT_ARROW_LIST:
        if ((rc = upd_u16(c, TID_LIST)))
            return rc;
        return hash_type(c, &t->children[0].type);
    case SILT_ARROW_STRUCT:
        break;
    }
    return silt_err(SILT_EINTERNAL, "logical hash: cannot hash type id %d", (int)t->id);
}

static void free_fields(silt_arrow_field *f, size_t n)
{
    if (!f)
        return;
    for (size_t i = 0; i < n; i++) {
        free((char *)f[i].name);
        free((char *)f[i].type.timezone);
        free_fields((silt_arrow_field *)f[i].type.children, f[i].type.num_children);
    }
    free(f);
}

static int copy_fields(silt_arrow_field **out, const silt_arrow_field *src, size_t n)
{
    *out = NULL;
    if (n == 0)
        return 0;
    silt_arrow_field *f = calloc(n, sizeof *f);
    if (!f)
        return silt_err(SILT_ENOMEM, "logical hash: out of memory copying the schema");
    for (size_t i = 0; i < n; i++) {
        f[i] = src[i];
        f[i].name = NULL;
        f[i].type.timezone = NULL;
        f[i].type.children = NULL;
        f[i].type.num_children = 0;
        f[i].name = strdup(src[i].name ? src[i].name : "");
        if (src[i].type.timezone)
            f[i].type.timezone = strdup(src[i].type.timezone);
        silt_arrow_field *kids = NULL;
        int rc = copy_fields(&kids, src[i].type.children, src[i].type.num_children);
        f[i].type.children = kids;
        f[i].type.num_children = kids ? src[i].type.num_children : 0;
        if (rc || !f[i].name || (src[i].type.timezone && !f[i].type.timezone)) {
            free_fields(f, n);
            return rc ? rc : silt_err(SILT_ENOMEM, "logical hash: out of memory copying the schema");
        }
    }
    *out = f;
    return 0;
}

static int walk_fields(silt_record_digest *d, const silt_arrow_field *fields, size_t n,
                       uint64_t level)
{
    for (size_t i = 0; i < n; i++) {
        const silt_arrow_field *f = &fields[i];
        size_t nl = strlen(f->name);
        int rc;
        if ((rc = upd_u64(d->ctx, nl)) || (rc = upd(d->ctx, f->name, nl)) ||
            (rc = upd_u64(d->ctx, level)))
            return rc;
        if (f->type.id == SILT_ARROW_STRUCT) {
            if (f->type.num_children == 0)
                return silt_err(SILT_EUNSUPPORTED,
                                "logical hash: column '%s': structs without fields are not supported",
                                f->name);
            if ((rc = walk_fields(d, f->type.children, f->type.num_children, level + 1)))
                return rc;
            continue;
        }
        if ((rc = check_leaf_type(&f->type, f->name)))
            return rc;
        if (d->num_leaves == d->cap_leaves) {
            size_t cap = d->cap_leaves ? 2 * d->cap_leaves : 8;
            leaf *nlv = realloc(d->leaves, cap * sizeof *nlv);
            if (!nlv)
                return silt_err(SILT_ENOMEM, "logical hash: out of memory");
            d->leaves = nlv;
            d->cap_leaves = cap;
        }
        leaf *lf = &d->leaves[d->num_leaves];
        lf->field = f;
        lf->ctx = silt_sha3_new();
        if (!lf->ctx)
            return silt_err(SILT_ENOMEM, "logical hash: out of memory");
        d->num_leaves++;
        if ((rc = hash_type(lf->ctx, &f->type)))
            return rc;
    }
    return 0;
}

int silt_record_digest_new(silt_record_digest **out, const silt_arrow_field *fields, size_t n)
{
    *out = NULL;
    silt_record_digest *d = calloc(1, sizeof *d);
    if (!d)
        return silt_err(SILT_ENOMEM, "logical hash: out of memory");
    int rc = copy_fields(&d->fields, fields, n);
    d->num_fields = n;
    if (!rc) {
        d->ctx = silt_sha3_new();
        if (!d->ctx)
            rc = silt_err(SILT_ENOMEM, "logical hash: out of memory");
    }
    if (!rc)
        rc = walk_fields(d, d->fields, n, 0);
    if (rc) {
        silt_record_digest_free(d);
        return rc;
    }
    *out = d;
    return 0;
}

void silt_record_digest_free(silt_record_digest *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->num_leaves; i++)
        silt_sha3_free(d->leaves[i].ctx);
    free(d->leaves);
    silt_sha3_free(d->ctx);
    free_fields(d->fields, d->num_fields);
    free(d);
}

/* ------------------------------------------------------------ arrays */

static const uint8_t NULL_MARKER = 0;

/* ArrayDigestV0::update for rows [start, start+len) of `a` (relative to
 * a->offset), with the combined parent validity `parent` (indexed from 0 for
 * row `start`). */
static int hash_array(silt_sha3_ctx *c, const silt_arrow_type *t, const silt_arrow_array *a,
                      size_t start, size_t len, vview parent, const char *name)
{
    vview own = {a->validity, a->offset + start};
    vview v;
    uint8_t *owned = NULL;
    int rc = combine(parent, own, len, &v, &owned);
    if (rc)
        return rc;
    size_t w = (size_t)fixed_width(t);
    switch (t->id) {
    case SILT_ARROW_BOOL: {
        const uint8_t *vals = a->values;
        if (!vals && len) {
            rc = silt_err(SILT_EINVAL, "logical hash: column '%s': missing values", name);
            break;
        }
        for (size_t i = 0; i < len && !rc; i++) {
            uint8_t b = vvalid(v, i) ? (uint8_t)(vals[a->offset + start + i] ? 2 : 1) : NULL_MARKER;
            rc = upd(c, &b, 1);
        }
        break;
    }
    case SILT_ARROW_INT:
    case SILT_ARROW_FLOAT:
    case SILT_ARROW_DECIMAL:
    case SILT_ARROW_DATE:
    case SILT_ARROW_TIME:
    case SILT_ARROW_TIMESTAMP: {
        const uint8_t *vals = a->values;
        if (!vals && len) {
            rc = silt_err(SILT_EINVAL, "logical hash: column '%s': missing values", name);
            break;
        }
        const uint8_t *base = len ? vals + (a->offset + start) * w : NULL;
        if (!v.bits) {
            rc = upd(c, base, len * w);
            break;
        }
        for (size_t i = 0; i < len && !rc; i++)
            rc = vvalid(v, i) ? upd(c, base + i * w, w) : upd(c, &NULL_MARKER, 1);
        break;
    }
    case SILT_ARROW_FIXED_BINARY: {
        const uint8_t *vals = a->values;
        if (!vals && len) {
            rc = silt_err(SILT_EINVAL, "logical hash: column '%s': missing values", name);
            break;
        }
        for (size_t i = 0; i < len && !rc; i++) {
            if (!vvalid(v, i)) {
                rc = upd(c, &NULL_MARKER, 1);
                continue;
            }
            if (!(rc = upd_u64(c, w)))
                rc = upd(c, vals + (a->offset + start + i) * w, w);
        }
        break;
    }
    case SILT_ARROW_BINARY:
    case SILT_ARROW_UTF8:
        if (!a->bytes && len) {
            rc = silt_err(SILT_EINVAL, "logical hash: column '%s': missing values", name);
            break;
        }
        for (size_t i = 0; i < len && !rc; i++) {
            if (!vvalid(v, i)) {
                rc = upd(c, &NULL_MARKER, 1);
                continue;
            }
            const silt_arrow_bytes *s = &a->bytes[a->offset + start + i];
            if (!(rc = upd_u64(c, s->len)))
                rc = upd(c, s->ptr, s->len);
        }
        break;
    case SILT_ARROW_LIST: {
        if ((!a->lists || !a->children) && len) {
            rc = silt_err(SILT_EINVAL, "logical hash: column '%s': missing list entries", name);
            break;
        }
        const silt_arrow_array *items = a->children;
        for (size_t i = 0; i < len && !rc; i++) {
            if (!vvalid(v, i)) {
                rc = upd(c, &NULL_MARKER, 1);
                continue;
            }
            const silt_arrow_list_entry *e = &a->lists[a->offset + start + i];
            if (e->offset > items->length || e->length > items->length - e->offset) {
                rc = silt_err(SILT_EINVAL,
                              "logical hash: column '%s': list at row %zu points past its %zu "
                              "items", name, start + i, items->length);
                break;
            }
            if (!(rc = upd_u64(c, e->length)))
                rc = hash_array(c, &t->children[0].type, items, (size_t)e->offset,
                                (size_t)e->length, (vview){NULL, 0}, name);
        }
        break;
    }
    case SILT_ARROW_STRUCT:
        rc = silt_err(SILT_EINTERNAL, "logical hash: column '%s': struct as leaf", name);
        break;
    }
    free(owned);
    return rc;
}

/* walk_nested_columns: structs push their combined validity down. */
static int walk_columns(silt_record_digest *d, size_t *leaf_ix, const silt_arrow_field *fields,
                        size_t n, const silt_arrow_array *arrays, size_t num_rows, vview parent)
{
    for (size_t i = 0; i < n; i++) {
        const silt_arrow_field *f = &fields[i];
        const silt_arrow_array *a = &arrays[i];
        if (a->length != num_rows)
            return silt_err(SILT_EINVAL, "logical hash: column '%s' has %zu rows, expected %zu",
                            f->name, a->length, num_rows);
        if (f->type.id == SILT_ARROW_STRUCT) {
            if (!a->children)
                return silt_err(SILT_EINVAL, "logical hash: struct column '%s' without children",
                                f->name);
            vview own = {a->validity, a->offset};
            vview v;
            uint8_t *owned = NULL;
            int rc = combine(parent, own, num_rows, &v, &owned);
            if (!rc)
                rc = walk_columns(d, leaf_ix, f->type.children, f->type.num_children, a->children,
                                  num_rows, v);
            free(owned);
            if (rc)
                return rc;
            continue;
        }
        leaf *lf = &d->leaves[(*leaf_ix)++];
        int rc = hash_array(lf->ctx, &f->type, a, 0, num_rows, parent, f->name);
        if (rc)
            return rc;
    }
    return 0;
}

static size_t count_leaves(const silt_arrow_field *fields, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += fields[i].type.id == SILT_ARROW_STRUCT
                 ? count_leaves(fields[i].type.children, fields[i].type.num_children)
                 : 1;
    return k;
}

int silt_record_digest_update_fields(silt_record_digest *d, const silt_arrow_array *columns,
                                     size_t num_rows, size_t begin, size_t end)
{
    if (d->done)
        return silt_err(SILT_EINVAL, "logical hash: update after finalize or error");
    if (begin > end || end > d->num_fields || (end > begin && !columns))
        return silt_err(SILT_EINVAL, "logical hash: bad field range");
    size_t leaf_ix = count_leaves(d->fields, begin);
    return walk_columns(d, &leaf_ix, d->fields + begin, end - begin, columns + begin, num_rows,
                        (vview){NULL, 0});
}

void silt_record_digest_fail(silt_record_digest *d) { d->done = true; }

int silt_record_digest_update(silt_record_digest *d, const silt_arrow_array *columns,
                              size_t num_rows)
{
    if (d->done)
        return silt_err(SILT_EINVAL, "logical hash: update after finalize or error");
    if (d->num_fields && !columns)
        return silt_err(SILT_EINVAL, "logical hash: batch without columns");
    size_t leaf_ix = 0;
    int rc = walk_columns(d, &leaf_ix, d->fields, d->num_fields, columns, num_rows,
                          (vview){NULL, 0});
    if (rc)
        d->done = true; /* column hashers are in an unknown state now */
    return rc;
}

int silt_record_digest_finalize(silt_record_digest *d, uint8_t out[SILT_ARROW_DIGEST_LEN])
{
    if (d->done)
        return silt_err(SILT_EINVAL, "logical hash: finalize after finalize or error");
    d->done = true;
    for (size_t i = 0; i < d->num_leaves; i++) {
        uint8_t col[SILT_SHA3_256_LEN];
        int rc = silt_sha3_final(d->leaves[i].ctx, col);
        if (!rc)
            rc = upd(d->ctx, col, sizeof col);
        if (rc)
            return rc;
    }
    return silt_sha3_final(d->ctx, out);
}

/* ------------------------------------------------------------ multihash */

void silt_arrow_multihash(const uint8_t digest[SILT_ARROW_DIGEST_LEN],
                          uint8_t out[SILT_ARROW_MH_LEN])
{
    uint32_t code = SILT_MC_ARROW0_SHA3_256;
    size_t n = 0;
    while (code >= 0x80) {
        out[n++] = (uint8_t)(code | 0x80);
        code >>= 7;
    }
    out[n++] = (uint8_t)code; /* n == 4 */
    out[n++] = SILT_ARROW_DIGEST_LEN;
    memcpy(out + n, digest, SILT_ARROW_DIGEST_LEN);
}

void silt_arrow_multihash_text(const uint8_t mh[SILT_ARROW_MH_LEN],
                               char out[SILT_ARROW_MH_TEXT_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    out[0] = 'f';
    for (size_t i = 0; i < SILT_ARROW_MH_LEN; i++) {
        out[1 + 2 * i] = hex[mh[i] >> 4];
        out[2 + 2 * i] = hex[mh[i] & 15];
    }
    out[SILT_ARROW_MH_TEXT_LEN] = '\0';
}
