/* thrift.c — Thrift compact protocol value tree (see thrift.h).
 *
 * Invariants: every read checks the remaining length first; a container
 * count is checked against the remaining bytes (every element takes at least
 * one byte, except bools inside structs, which are never counted) before
 * anything is allocated; recursion is bounded by SILT_THRIFT_MAX_DEPTH.
 */
#include "engine/thrift.h"

#include <string.h>

#include "util/error.h"

typedef struct rd {
    silt_arena *a;
    const uint8_t *p;
    size_t len, pos;
    int depth;
} rd;

static int bad(const rd *r, const char *what)
{
    return silt_err(SILT_ECORRUPT, "thrift: %s at byte %zu", what, r->pos);
}

static int rd_varint(rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->len)
            return bad(r, "truncated varint");
        uint8_t b = r->p[r->pos++];
        if (i == 9 && b > 1)
            return bad(r, "varint overflow");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return bad(r, "varint too long");
}

static int64_t unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }
static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

static silt_thrift_value *new_value(rd *r, uint8_t type)
{
    silt_thrift_value *v = silt_arena_alloc(r->a, sizeof *v);
    if (v)
        v->type = type;
    return v;
}

static int parse_value(rd *r, uint8_t type, bool in_container, silt_thrift_value **out);

static int parse_struct(rd *r, silt_thrift_value **out)
{
    if (++r->depth > SILT_THRIFT_MAX_DEPTH)
        return bad(r, "nesting too deep");
    silt_thrift_value *v = new_value(r, SILT_TH_STRUCT);
    if (!v)
        return SILT_ENOMEM;
    int16_t last = 0;
    for (;;) {
        if (r->pos >= r->len)
            return bad(r, "truncated struct");
        uint8_t h = r->p[r->pos++];
        uint8_t type = h & 0x0f;
        if (type == SILT_TH_STOP)
            break;
        if (type > SILT_TH_STRUCT)
            return bad(r, "unknown field type");
        int64_t id;
        if (h >> 4) {
            id = (int64_t)last + (h >> 4);
        } else {
            uint64_t u;
            int rc = rd_varint(r, &u);
            if (rc)
                return rc;
            id = unzigzag(u);
        }
        if (id < INT16_MIN || id > INT16_MAX)
            return bad(r, "field id out of range");
        last = (int16_t)id;
        silt_thrift_value *fv;
        int rc = parse_value(r, type, false, &fv);
        if (!rc)
            rc = silt_thrift_set(r->a, v, last, fv);
        if (rc)
            return rc;
    }
    r->depth--;
    *out = v;
    return 0;
}

static int parse_list(rd *r, silt_thrift_value *v)
{
    if (r->pos >= r->len)
        return bad(r, "truncated list");
    uint8_t h = r->p[r->pos++];
    uint64_t n = h >> 4;
    if (n == 15) {
        int rc = rd_varint(r, &n);
        if (rc)
            return rc;
    }
    v->u.list.etype = h & 0x0f;
    if (v->u.list.etype == SILT_TH_STOP || v->u.list.etype > SILT_TH_STRUCT)
        return bad(r, "bad list element type");
    if (n > r->len - r->pos)
        return bad(r, "list longer than the input");
    v->u.list.n = (size_t)n;
    v->u.list.items = silt_arena_alloc(r->a, (n ? n : 1) * sizeof *v->u.list.items);
    if (!v->u.list.items)
        return SILT_ENOMEM;
    if (++r->depth > SILT_THRIFT_MAX_DEPTH)
        return bad(r, "nesting too deep");
    for (size_t i = 0; i < n; i++) {
        int rc = parse_value(r, v->u.list.etype, true, &v->u.list.items[i]);
        if (rc)
            return rc;
    }
    r->depth--;
    return 0;
}

static int parse_map(rd *r, silt_thrift_value *v)
{
    uint64_t n;
    int rc = rd_varint(r, &n);
    if (rc)
        return rc;
    if (n == 0)
        return 0;
    if (n > (r->len - r->pos) / 2)
        return bad(r, "map larger than the input");
    if (r->pos >= r->len)
        return bad(r, "truncated map");
    uint8_t h = r->p[r->pos++];
    v->u.map.ktype = h >> 4;
    v->u.map.vtype = h & 0x0f;
    if (v->u.map.ktype == SILT_TH_STOP || v->u.map.ktype > SILT_TH_STRUCT || v->u.map.vtype == SILT_TH_STOP ||
        v->u.map.vtype > SILT_TH_STRUCT)
        return bad(r, "bad map types");
    v->u.map.n = (size_t)n;
    v->u.map.keys = silt_arena_alloc(r->a, n * sizeof *v->u.map.keys);
    v->u.map.vals = silt_arena_alloc(r->a, n * sizeof *v->u.map.vals);
    if (!v->u.map.keys || !v->u.map.vals)
        return SILT_ENOMEM;
    if (++r->depth > SILT_THRIFT_MAX_DEPTH)
        return bad(r, "nesting too deep");
    for (size_t i = 0; i < n && !rc; i++) {
        rc = parse_value(r, v->u.map.ktype, true, &v->u.map.keys[i]);
        if (!rc)
            rc = parse_value(r, v->u.map.vtype, true, &v->u.map.vals[i]);
    }
    r->depth--;
    return rc;
}

/* One value of compact type `type`. A bool struct field has its value in the
 * field header (type TRUE/FALSE); a bool container element is one byte. */
static int parse_value(rd *r, uint8_t type, bool in_container, silt_thrift_value **out)
{
    if (type == SILT_TH_STRUCT)
        return parse_struct(r, out);
    silt_thrift_value *v = new_value(r, type == SILT_TH_FALSE ? SILT_TH_TRUE : type);
    if (!v)
        return SILT_ENOMEM;
    *out = v;
    uint64_t u;
    int rc = 0;
    switch (type) {
    case SILT_TH_TRUE:
    case SILT_TH_FALSE:
        if (!in_container) {
            v->u.b = type == SILT_TH_TRUE;
            return 0;
        }
        if (r->pos >= r->len)
            return bad(r, "truncated bool");
        v->u.b = r->p[r->pos++] == SILT_TH_TRUE;
        return 0;
    case SILT_TH_BYTE:
        if (r->pos >= r->len)
            return bad(r, "truncated byte");
        v->u.i = (int8_t)r->p[r->pos++];
        return 0;
    case SILT_TH_I16:
    case SILT_TH_I32:
    case SILT_TH_I64:
        if ((rc = rd_varint(r, &u)))
            return rc;
        v->u.i = unzigzag(u);
        if ((type == SILT_TH_I16 && (v->u.i < INT16_MIN || v->u.i > INT16_MAX)) ||
            (type == SILT_TH_I32 && (v->u.i < INT32_MIN || v->u.i > INT32_MAX)))
            return bad(r, "integer out of range");
        return 0;
    case SILT_TH_DOUBLE:
        if (r->len - r->pos < 8)
            return bad(r, "truncated double");
        memcpy(v->u.dbl, r->p + r->pos, 8);
        r->pos += 8;
        return 0;
    case SILT_TH_BINARY:
        if ((rc = rd_varint(r, &u)))
            return rc;
        if (u > r->len - r->pos)
            return bad(r, "binary longer than the input");
        v->u.bin.p = silt_arena_memdup(r->a, r->p + r->pos, (size_t)u);
        if (!v->u.bin.p)
            return SILT_ENOMEM;
        v->u.bin.n = (size_t)u;
        r->pos += (size_t)u;
        return 0;
    case SILT_TH_LIST:
    case SILT_TH_SET:
        return parse_list(r, v);
    case SILT_TH_MAP:
        return parse_map(r, v);
    default:
        return bad(r, "unknown value type");
    }
}

int silt_thrift_parse(silt_arena *a, const uint8_t *buf, size_t len, size_t *used, silt_thrift_value **out)
{
    *out = NULL;
    rd r = {a, buf ? buf : (const uint8_t *)"", buf ? len : 0, 0, 0};
    silt_thrift_value *v = NULL;
    int rc = parse_struct(&r, &v);
    if (rc)
        return rc;
    if (used)
        *used = r.pos;
    *out = v;
    return 0;
}

/* ------------------------------------------------------------ writing */

static int put_varint(silt_buf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        uint8_t x = v & 0x7f;
        v >>= 7;
        tmp[n++] = (uint8_t)(x | (v ? 0x80 : 0));
    } while (v);
    return silt_buf_append(b, tmp, n);
}

static int put_byte(silt_buf *b, uint8_t x) { return silt_buf_append(b, &x, 1); }

static int write_value(silt_buf *b, const silt_thrift_value *v, bool in_container, int depth);

static int write_struct(silt_buf *b, const silt_thrift_value *v, int depth)
{
    if (depth > SILT_THRIFT_MAX_DEPTH)
        return silt_err(SILT_EINVAL, "thrift: nesting too deep to write");
    int16_t last = 0;
    int rc = 0;
    for (size_t i = 0; i < v->u.st.n && !rc; i++) {
        const silt_thrift_value *f = v->u.st.vals[i];
        int16_t id = v->u.st.ids[i];
        uint8_t type = f->type == SILT_TH_TRUE && !f->u.b ? SILT_TH_FALSE : f->type;
        int delta = (int)id - (int)last;
        if (delta > 0 && delta <= 15) {
            rc = put_byte(b, (uint8_t)(delta << 4 | type));
        } else {
            rc = put_byte(b, type);
            if (!rc)
                rc = put_varint(b, zigzag(id));
        }
        last = id;
        if (!rc)
            rc = write_value(b, f, false, depth + 1);
    }
    return rc ? rc : put_byte(b, SILT_TH_STOP);
}

static int write_value(silt_buf *b, const silt_thrift_value *v, bool in_container, int depth)
{
    int rc = 0;
    switch (v->type) {
    case SILT_TH_TRUE:
        return in_container ? put_byte(b, v->u.b ? SILT_TH_TRUE : SILT_TH_FALSE) : 0;
    case SILT_TH_BYTE:
        return put_byte(b, (uint8_t)v->u.i);
    case SILT_TH_I16:
    case SILT_TH_I32:
    case SILT_TH_I64:
        return put_varint(b, zigzag(v->u.i));
    case SILT_TH_DOUBLE:
        return silt_buf_append(b, v->u.dbl, 8);
    case SILT_TH_BINARY:
        rc = put_varint(b, v->u.bin.n);
        return rc ? rc : silt_buf_append(b, v->u.bin.p, v->u.bin.n);
    case SILT_TH_LIST:
    case SILT_TH_SET: {
        size_t n = v->u.list.n;
        rc = n < 15 ? put_byte(b, (uint8_t)(n << 4 | v->u.list.etype)) : put_byte(b, (uint8_t)(0xf0 | v->u.list.etype));
        if (!rc && n >= 15)
            rc = put_varint(b, n);
        for (size_t i = 0; i < n && !rc; i++)
            rc = write_value(b, v->u.list.items[i], true, depth + 1);
        return rc;
    }
    case SILT_TH_MAP:
        rc = put_varint(b, v->u.map.n);
        if (!rc && v->u.map.n)
            rc = put_byte(b, (uint8_t)(v->u.map.ktype << 4 | v->u.map.vtype));
        for (size_t i = 0; i < v->u.map.n && !rc; i++) {
            rc = write_value(b, v->u.map.keys[i], true, depth + 1);
            if (!rc)
                rc = write_value(b, v->u.map.vals[i], true, depth + 1);
        }
        return rc;
    case SILT_TH_STRUCT:
        return write_struct(b, v, depth);
    default:
        return silt_err(SILT_EINVAL, "thrift: cannot write value of type %u", (unsigned)v->type);
    }
}

int silt_thrift_write(silt_buf *out, const silt_thrift_value *v)
{
    if (!v || v->type != SILT_TH_STRUCT)
        return silt_err(SILT_EINVAL, "thrift: only a struct can be written");
    return write_struct(out, v, 1);
}

/* ------------------------------------------------------------ editing */

silt_thrift_value *silt_thrift_get(const silt_thrift_value *st, int16_t id)
{
    if (!st || st->type != SILT_TH_STRUCT)
        return NULL;
    for (size_t i = 0; i < st->u.st.n; i++)
        if (st->u.st.ids[i] == id)
            return st->u.st.vals[i];
    return NULL;
}

int64_t silt_thrift_get_int(const silt_thrift_value *st, int16_t id, int64_t dflt)
{
    const silt_thrift_value *v = silt_thrift_get(st, id);
    if (!v || v->type < SILT_TH_BYTE || v->type > SILT_TH_I64)
        return dflt;
    return v->u.i;
}

int silt_thrift_set(silt_arena *a, silt_thrift_value *st, int16_t id, silt_thrift_value *v)
{
    for (size_t i = 0; i < st->u.st.n; i++)
        if (st->u.st.ids[i] == id) {
            st->u.st.vals[i] = v;
            return 0;
        }
    if (st->u.st.n == st->u.st.cap) {
        size_t cap = st->u.st.cap ? st->u.st.cap * 2 : 8;
        int16_t *ids = silt_arena_alloc(a, cap * sizeof *ids);
        silt_thrift_value **vals = silt_arena_alloc(a, cap * sizeof *vals);
        if (!ids || !vals)
            return SILT_ENOMEM;
        if (st->u.st.n) {
            memcpy(ids, st->u.st.ids, st->u.st.n * sizeof *ids);
            memcpy(vals, st->u.st.vals, st->u.st.n * sizeof *vals);
        }
        st->u.st.ids = ids;
        st->u.st.vals = vals;
        st->u.st.cap = cap;
    }
    /* after the last field with a smaller id (wire order is kept otherwise) */
    size_t at = st->u.st.n;
    while (at > 0 && st->u.st.ids[at - 1] > id)
        at--;
    memmove(st->u.st.ids + at + 1, st->u.st.ids + at, (st->u.st.n - at) * sizeof *st->u.st.ids);
    memmove(st->u.st.vals + at + 1, st->u.st.vals + at, (st->u.st.n - at) * sizeof *st->u.st.vals);
    st->u.st.ids[at] = id;
    st->u.st.vals[at] = v;
    st->u.st.n++;
    return 0;
}

int silt_thrift_set_int(silt_arena *a, silt_thrift_value *st, int16_t id, uint8_t type, int64_t v)
{
    silt_thrift_value *cur = silt_thrift_get(st, id);
    if (cur && cur->type >= SILT_TH_BYTE && cur->type <= SILT_TH_I64) {
        cur->type = type;
        cur->u.i = v;
        return 0;
    }
    silt_thrift_value *n = silt_arena_alloc(a, sizeof *n);
    if (!n)
        return SILT_ENOMEM;
    n->type = type;
    n->u.i = v;
    return silt_thrift_set(a, st, id, n);
}

void silt_thrift_remove(silt_thrift_value *st, int16_t id)
{
    if (!st || st->type != SILT_TH_STRUCT)
        return;
    for (size_t i = 0; i < st->u.st.n; i++)
        if (st->u.st.ids[i] == id) {
            memmove(st->u.st.ids + i, st->u.st.ids + i + 1, (st->u.st.n - i - 1) * sizeof *st->u.st.ids);
            memmove(st->u.st.vals + i, st->u.st.vals + i + 1, (st->u.st.n - i - 1) * sizeof *st->u.st.vals);
            st->u.st.n--;
            return;
        }
}
