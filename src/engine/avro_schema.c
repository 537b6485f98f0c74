/* avro_schema.c — Avro container headers, writer schemas, their resolution
 * against a dataset schema, and the schema `silt schema infer` proposes
 * (avro.h).
 *
 * Invariants: the header parser never reads past `len` and caps every
 * length (metadata 16 MiB, 1024 entries); the schema parser caps nesting at
 * SCHEMA_DEPTH and resolves named types by full name (a reference to a type
 * being defined makes a cycle, which resolution and inference stop at,
 * bounded by the dataset type's depth or by refusing it). Nothing here
 * allocates outside the caller's arena except jansson's temporary tree. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/avro.h"
#include "engine/schema.h"
#include "util/error.h"

#define HEADER_MAX (16u << 20)
#define SCHEMA_DEPTH 64

/* ---- header -------------------------------------------------------------------- */

/* Zig-zag varint at *p (< end); -1 when truncated or longer than 10 bytes. */
static int read_long(const uint8_t **p, const uint8_t *end, int64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (*p >= end)
            return -1;
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
            return 0;
        }
    }
    return -1;
}

static int bad_header(const char *why)
{
    return silt_err(SILT_ECORRUPT, "not an Avro object container file (%s)", why);
}

int silt_avro_header_parse(silt_arena *a, const uint8_t *buf, size_t len, silt_avro_header *out)
{
    memset(out, 0, sizeof *out);
    if (len < 4 || memcmp(buf, "Obj\x01", 4) != 0)
        return bad_header("no 'Obj\\x01' magic");
    const uint8_t *p = buf + 4, *end = buf + len;
    size_t entries = 0;
    for (;;) {
        int64_t count, skip;
        if (read_long(&p, end, &count))
            return bad_header("truncated metadata");
        if (count == 0)
            break;
        if (count < 0) {
            if (count == INT64_MIN || read_long(&p, end, &skip))
                return bad_header("bad metadata block");
            count = -count;
        }
        for (int64_t i = 0; i < count; i++) {
            if (++entries > 1024)
                return bad_header("more than 1024 metadata entries");
            int64_t kl, vl;
            if (read_long(&p, end, &kl) || kl < 0 || kl > end - p)
                return bad_header("truncated metadata key");
            const uint8_t *k = p;
            p += kl;
            if (read_long(&p, end, &vl) || vl < 0 || vl > end - p)
                return bad_header("truncated metadata value");
            const uint8_t *v = p;
            p += vl;
            const char **dst = NULL;
            if (kl == 11 && memcmp(k, "avro.schema", 11) == 0)
                dst = &out->schema;
            else if (kl == 10 && memcmp(k, "avro.codec", 10) == 0)
                dst = &out->codec;
            if (!dst)
                continue;
            char *c = silt_arena_alloc(a, (size_t)vl + 1);
            if (!c)
                return silt_err(SILT_ENOMEM, "out of memory");
            memcpy(c, v, (size_t)vl);
            c[vl] = '\0';
            *dst = c;
            if (dst == &out->schema)
                out->schema_len = (size_t)vl;
        }
    }
    if (end - p < 16)
        return bad_header("truncated sync marker");
    if (!out->schema)
        return bad_header("no avro.schema in the header");
    if (!out->codec)
        out->codec = "null";
    out->header_len = (size_t)(p + 16 - buf);
    return 0;
}

int silt_avro_header_read(silt_arena *a, const char *path, silt_avro_header *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "cannot open: %s", strerror(errno));
    size_t cap = 64 << 10, len = 0;
    uint8_t *buf = NULL;
    int rc = SILT_ECORRUPT;
    while (rc == SILT_ECORRUPT) {
        uint8_t *nb = realloc(buf, cap);
        if (!nb) {
            rc = silt_err(SILT_ENOMEM, "out of memory");
            break;
        }
        buf = nb;
        len += fread(buf + len, 1, cap - len, f);
        rc = silt_avro_header_parse(a, buf, len, out);
        /* a truncated header in a buffer that was full: read more */
        if (rc == SILT_ECORRUPT && len == cap && cap < HEADER_MAX && len >= 4 && memcmp(buf, "Obj\x01", 4) == 0) {
            silt_err_clear();
            cap *= 4;
            continue;
        }
        break;
    }
    if (ferror(f))
        rc = silt_err(SILT_EIO, "cannot read: %s", strerror(errno));
    fclose(f);
    free(buf);
    return rc;
}

bool silt_avro_codec_supported(const char *codec)
{
    static const char *const ok[] = {"null", "deflate", "snappy", "lzma"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        if (strcmp(codec, ok[i]) == 0)
            return true;
    return false;
}

/* ---- writer schema -------------------------------------------------------------- */

typedef struct named {
    const char *full;
    silt_avro_node *node;
    struct named *next;
} named;

typedef struct parser {
    silt_arena *a;
    named *types;
} parser;

static int bad_schema(const char *fmt, const char *arg)
{
    return silt_err(SILT_ECORRUPT, fmt, arg);
}

static const char *full_name(parser *ps, const char *name, const char *ns)
{
    if (strchr(name, '.') || !ns || !*ns)
        return silt_arena_strdup(ps->a, name);
    size_t n = strlen(ns) + strlen(name) + 2;
    char *f = silt_arena_alloc(ps->a, n);
    if (f)
        snprintf(f, n, "%s.%s", ns, name);
    return f;
}

static silt_avro_node *lookup(parser *ps, const char *name, const char *ns)
{
    const char *f = full_name(ps, name, ns);
    for (named *t = ps->types; f && t; t = t->next)
        if (strcmp(t->full, f) == 0)
            return t->node;
    for (named *t = ps->types; t; t = t->next)
        if (strcmp(t->full, name) == 0)
            return t->node;
    return NULL;
}

static silt_avro_node *new_node(parser *ps, int kind, size_t n)
{
    silt_avro_node *x = silt_arena_alloc(ps->a, sizeof *x);
    if (!x)
        return NULL;
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->n = n;
    if (n) {
        x->kids = silt_arena_alloc(ps->a, n * sizeof *x->kids);
        x->names = silt_arena_alloc(ps->a, n * sizeof *x->names);
        if (!x->kids || !x->names)
            return NULL;
        memset(x->kids, 0, n * sizeof *x->kids);
        memset(x->names, 0, n * sizeof *x->names);
    }
    return x;
}

static const struct {
    const char *name;
    int kind;
} PRIMS[] = {{"null", SILT_AVRO_NULL},   {"boolean", SILT_AVRO_BOOLEAN}, {"int", SILT_AVRO_INT},
             {"long", SILT_AVRO_LONG},   {"float", SILT_AVRO_FLOAT},     {"double", SILT_AVRO_DOUBLE},
             {"bytes", SILT_AVRO_BYTES}, {"string", SILT_AVRO_STRING}};

static int prim_kind(const char *s)
{
    for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++)
        if (strcmp(s, PRIMS[i].name) == 0)
            return PRIMS[i].kind;
    return 0;
}

static int parse(parser *ps, const json_t *j, const char *ns, int depth, silt_avro_node **out);

/* Logical type of an object schema onto its node; invalid ones are ignored
 * (the Avro specification: the underlying type is read). */
static void set_logical(silt_avro_node *x, const json_t *j)
{
    const char *lt = json_string_value(json_object_get(j, "logicalType"));
    if (!lt)
        return;
    int k = x->kind;
    if (strcmp(lt, "decimal") == 0 && (k == SILT_AVRO_BYTES || k == SILT_AVRO_FIXED)) {
        json_t *p = json_object_get(j, "precision"), *s = json_object_get(j, "scale");
        json_int_t pv = json_integer_value(p), sv = s ? json_integer_value(s) : 0;
        if (json_is_integer(p) && (!s || json_is_integer(s)) && pv >= 1 && pv <= 1000 && sv >= 0 && sv <= pv) {
            x->logical = SILT_AVRO_L_DECIMAL;
            x->precision = (int)pv;
            x->scale = (int)sv;
        }
    } else if (strcmp(lt, "date") == 0 && k == SILT_AVRO_INT) {
        x->logical = SILT_AVRO_L_DATE;
    } else if (strcmp(lt, "time-millis") == 0 && k == SILT_AVRO_INT) {
        x->logical = SILT_AVRO_L_TIME_MS;
    } else if (strcmp(lt, "time-micros") == 0 && k == SILT_AVRO_LONG) {
        x->logical = SILT_AVRO_L_TIME_US;
    } else if (strcmp(lt, "timestamp-millis") == 0 && k == SILT_AVRO_LONG) {
        x->logical = SILT_AVRO_L_TS_MS;
    } else if (strcmp(lt, "timestamp-micros") == 0 && k == SILT_AVRO_LONG) {
        x->logical = SILT_AVRO_L_TS_US;
    } else if (strcmp(lt, "uuid") == 0 && k == SILT_AVRO_STRING) {
        x->logical = SILT_AVRO_L_UUID;
    }
}

/* A named type: registers it before its body (recursion). */
static int parse_named(parser *ps, const json_t *j, const char *type, const char **ns, int depth,
                       silt_avro_node **out)
{
    const char *name = json_string_value(json_object_get(j, "name"));
    if (!name || !*name)
        return bad_schema("Avro schema: a %s has no name", type);
    const char *own_ns = json_string_value(json_object_get(j, "namespace"));
    const char *full = full_name(ps, name, own_ns ? own_ns : *ns);
    if (!full)
        return silt_err(SILT_ENOMEM, "out of memory");
    const char *dot = strrchr(full, '.');
    if (dot) {
        char *n2 = silt_arena_strdup(ps->a, full);
        if (!n2)
            return silt_err(SILT_ENOMEM, "out of memory");
        n2[dot - full] = '\0';
        *ns = n2;
    } else {
        *ns = NULL;
    }
    silt_avro_node *x = NULL;
    if (strcmp(type, "record") == 0 || strcmp(type, "error") == 0) {
        const json_t *fs = json_object_get(j, "fields");
        if (!json_is_array(fs))
            return bad_schema("Avro schema: record '%s' has no 'fields' list", full);
        x = new_node(ps, SILT_AVRO_RECORD, json_array_size(fs));
    } else if (strcmp(type, "enum") == 0) {
        const json_t *ss = json_object_get(j, "symbols");
        if (!json_is_array(ss))
            return bad_schema("Avro schema: enum '%s' has no 'symbols' list", full);
        x = new_node(ps, SILT_AVRO_ENUM, json_array_size(ss));
        for (size_t i = 0; x && i < x->n; i++)
            if (!(x->names[i] = json_string_value(json_array_get(ss, i))) ||
                !(x->names[i] = silt_arena_strdup(ps->a, x->names[i])))
                return json_is_string(json_array_get(ss, i)) ? silt_err(SILT_ENOMEM, "out of memory")
                                                              : bad_schema("Avro schema: enum '%s': a symbol is not a string", full);
    } else {
        const json_t *sz = json_object_get(j, "size");
        if (!json_is_integer(sz) || json_integer_value(sz) < 0)
            return bad_schema("Avro schema: fixed '%s' has no size", full);
        x = new_node(ps, SILT_AVRO_FIXED, 0);
        if (x)
            x->fixed_size = json_integer_value(sz);
    }
    named *t = silt_arena_alloc(ps->a, sizeof *t);
    if (!x || !t)
        return silt_err(SILT_ENOMEM, "out of memory");
    x->name = full;
    *t = (named){full, x, ps->types};
    ps->types = t;
    *out = x;
    if (x->kind != SILT_AVRO_RECORD)
        return 0;
    const json_t *fs = json_object_get(j, "fields");
    for (size_t i = 0; i < x->n; i++) {
        const json_t *f = json_array_get(fs, i);
        const char *fn = json_string_value(json_object_get(f, "name"));
        if (!fn)
            return bad_schema("Avro schema: record '%s': a field has no name", full);
        for (size_t k = 0; k < i; k++)
            if (strcmp(x->names[k], fn) == 0)
                return silt_err(SILT_ECORRUPT, "Avro schema: record '%s' has two fields '%s'", full, fn);
        if (!(x->names[i] = silt_arena_strdup(ps->a, fn)))
            return silt_err(SILT_ENOMEM, "out of memory");
        int rc = parse(ps, json_object_get(f, "type"), *ns, depth + 1, &x->kids[i]);
        if (rc)
            return rc;
    }
    return 0;
}

static int parse(parser *ps, const json_t *j, const char *ns, int depth, silt_avro_node **out)
{
    if (depth > SCHEMA_DEPTH)
        return bad_schema("Avro schema: nested deeper than %s levels", "64");
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        int k = prim_kind(s);
        if (k)
            return (*out = new_node(ps, k, 0)) ? 0 : silt_err(SILT_ENOMEM, "out of memory");
        if ((*out = lookup(ps, s, ns)) != NULL)
            return 0;
        return bad_schema("Avro schema: unknown type '%s'", s);
    }
    if (json_is_array(j)) {
        silt_avro_node *u = new_node(ps, SILT_AVRO_UNION, json_array_size(j));
        if (!u)
            return silt_err(SILT_ENOMEM, "out of memory");
        for (size_t i = 0; i < u->n; i++) {
            int rc = parse(ps, json_array_get(j, i), ns, depth + 1, &u->kids[i]);
            if (rc)
                return rc;
        }
        *out = u;
        return 0;
    }
    const json_t *t = json_object_get(j, "type");
    if (!json_is_object(j) || !t)
        return bad_schema("Avro schema: %s", "a type is neither a name, a list nor an object with 'type'");
    if (!json_is_string(t))
        return parse(ps, t, ns, depth + 1, out);
    const char *type = json_string_value(t);
    int rc = 0;
    if (!strcmp(type, "record") || !strcmp(type, "error") || !strcmp(type, "enum") || !strcmp(type, "fixed")) {
        rc = parse_named(ps, j, type, &ns, depth, out);
    } else if (!strcmp(type, "array") || !strcmp(type, "map")) {
        bool arr = type[0] == 'a';
        silt_avro_node *x = new_node(ps, arr ? SILT_AVRO_ARRAY : SILT_AVRO_MAP, 1);
        if (!x)
            return silt_err(SILT_ENOMEM, "out of memory");
        const json_t *c = json_object_get(j, arr ? "items" : "values");
        if (!c)
            return bad_schema("Avro schema: %s without its item type", type);
        rc = parse(ps, c, ns, depth + 1, &x->kids[0]);
        *out = x;
    } else if (prim_kind(type)) {
        rc = (*out = new_node(ps, prim_kind(type), 0)) ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    } else if ((*out = lookup(ps, type, ns)) == NULL) {
        rc = bad_schema("Avro schema: unknown type '%s'", type);
    }
    if (!rc && (*out)->logical == SILT_AVRO_L_NONE && (*out)->kind != SILT_AVRO_RECORD)
        set_logical(*out, j);
    return rc;
}

int silt_avro_schema_parse(silt_arena *a, const char *text, size_t len, silt_avro_node **out)
{
    *out = NULL;
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!j)
        return silt_err(SILT_ECORRUPT, "Avro schema: not valid JSON (line %d: %s)", je.line, je.text);
    parser ps = {a, NULL};
    int rc = parse(&ps, j, NULL, 0, out);
    json_decref(j);
    if (!rc && (*out)->kind != SILT_AVRO_RECORD)
        rc = silt_err(SILT_EUNSUPPORTED, "Avro schema: the top-level type is not a record");
    return rc;
}

/* ---- names of writer types in messages ------------------------------------------- */

static void describe(char *buf, size_t cap, const silt_avro_node *w, int depth)
{
    static const char *const LOG[] = {"", "decimal", "date", "time-millis", "time-micros",
                                      "timestamp-millis", "timestamp-micros", "uuid"};
    static const char *const KIND[] = {"?",      "null",   "boolean", "int",   "long",  "float", "double", "bytes",
                                       "string", "record", "enum",    "array", "map",   "union", "fixed"};
    size_t used = strlen(buf);
    if (used + 1 >= cap)
        return;
    if (w->logical) {
        snprintf(buf + used, cap - used, "%s", LOG[w->logical]);
    } else if (w->kind == SILT_AVRO_UNION && depth < 4) {
        snprintf(buf + used, cap - used, "[");
        for (size_t i = 0; i < w->n; i++) {
            if (i)
                snprintf(buf + strlen(buf), cap - strlen(buf), ", ");
            describe(buf, cap, w->kids[i], depth + 1);
        }
        snprintf(buf + strlen(buf), cap - strlen(buf), "]");
    } else if (w->kind == SILT_AVRO_RECORD || w->kind == SILT_AVRO_ENUM || w->kind == SILT_AVRO_FIXED) {
        snprintf(buf + used, cap - used, "%s %s", KIND[w->kind], w->name);
    } else {
        snprintf(buf + used, cap - used, "%s", KIND[w->kind]);
    }
}

static const char *child_path(silt_arena *a, const char *path, const char *name)
{
    size_t n = strlen(path) + strlen(name) + 2;
    char *p = silt_arena_alloc(a, n);
    if (p)
        snprintf(p, n, "%s%s%s", path, *path ? "." : "", name);
    return p;
}

static int unsupported_union(const char *path, const silt_avro_node *u)
{
    char d[256] = "";
    describe(d, sizeof d, u, 0);
    return silt_err(SILT_EUNSUPPORTED,
                    "field '%s': unsupported union %s (only a union of null and one other type maps to a "
                    "dataset type)",
                    path, d);
}

/* The one non-null branch of a union with null (index in *branch), or NULL. */
static const silt_avro_node *nullable_branch(const silt_avro_node *u, int *null_branch)
{
    const silt_avro_node *v = NULL;
    *null_branch = -1;
    if (u->n != 2)
        return NULL;
    for (size_t i = 0; i < 2; i++) {
        if (u->kids[i]->kind == SILT_AVRO_NULL)
            *null_branch = (int)i;
        else
            v = u->kids[i];
    }
    return *null_branch >= 0 && v && v->kind != SILT_AVRO_UNION ? v : NULL;
}

/* ---- resolution -------------------------------------------------------------------- */

static int resolve(silt_arena *a, const silt_avro_node *w, const odf_union *r, const char *path, int depth,
                   silt_avro_plan **out);

static int mismatch(const char *path, const silt_avro_node *w, const odf_union *r, const char *why)
{
    char d[256] = "";
    describe(d, sizeof d, w, 0);
    silt_buf t = SILT_BUF_INIT;
    silt_schema_type_describe(&t, r);
    int rc = silt_err(SILT_EINVAL, "field '%s': the file's type %s does not resolve to the schema's %s%s%s", path,
                      d, t.data ? t.data : "?", why ? ": " : "", why ? why : "");
    silt_buf_free(&t);
    return rc;
}

static int64_t pow10i(int n)
{
    int64_t v = 1;
    while (n-- > 0)
        v *= 10;
    return v;
}

/* time/timestamp scaling from writer unit exponent (3 ms, 6 us) to reader's */
static void scale(silt_avro_plan *p, int from, int to)
{
    p->mul = to > from ? pow10i(to - from) : 1;
    p->div = from > to ? pow10i(from - to) : 1;
}

/* The primitive (non-nested) cases; 1 when `w` and `r` do not match. */
static int resolve_scalar(silt_avro_plan *p, const silt_avro_node *w, const odf_union *r)
{
    int k = w->kind, L = w->logical;
    bool num_i = k == SILT_AVRO_INT, num_l = num_i || k == SILT_AVRO_LONG, num_f = num_l || k == SILT_AVRO_FLOAT;
    switch (r->type) {
    case ODF_DataType_Null: p->op = SILT_AVRO_R_NULL; return k != SILT_AVRO_NULL;
    case ODF_DataType_Bool: p->op = SILT_AVRO_R_BOOL; return k != SILT_AVRO_BOOLEAN;
    case ODF_DataType_Int32: p->op = SILT_AVRO_R_I32; return !num_i;
    case ODF_DataType_Int64: p->op = SILT_AVRO_R_I64; return !num_l;
    case ODF_DataType_Float32: p->op = SILT_AVRO_R_F32; return !num_f;
    case ODF_DataType_Float64: p->op = SILT_AVRO_R_F64; return !(num_f || k == SILT_AVRO_DOUBLE);
    case ODF_DataType_String:
        p->op = SILT_AVRO_R_STR;
        return !(k == SILT_AVRO_STRING || k == SILT_AVRO_BYTES || k == SILT_AVRO_ENUM);
    case ODF_DataType_Binary: {
        const odf_DataTypeBinary *b = r->value;
        p->op = SILT_AVRO_R_BLOB;
        if (k == SILT_AVRO_FIXED)
            return b && b->has_fixed_length && (int64_t)b->fixed_length != w->fixed_size;
        return !((k == SILT_AVRO_BYTES || k == SILT_AVRO_STRING) && !(b && b->has_fixed_length));
    }
    case ODF_DataType_Decimal: {
        const odf_DataTypeDecimal *d = r->value;
        p->op = SILT_AVRO_R_DEC;
        p->dec_precision = (int)d->precision;
        p->dec_width = d->precision <= 4 ? 2 : d->precision <= 9 ? 4 : d->precision <= 18 ? 8 : 16;
        return L != SILT_AVRO_L_DECIMAL || w->scale != d->scale || w->precision > (int)d->precision;
    }
    case ODF_DataType_Date: p->op = SILT_AVRO_R_DATE; return L != SILT_AVRO_L_DATE;
    case ODF_DataType_Time: {
        const odf_DataTypeTime *t = r->value;
        p->op = SILT_AVRO_R_TIME;
        scale(p, L == SILT_AVRO_L_TIME_MS ? 3 : 6, 6); /* DuckDB TIME: microseconds */
        return (L != SILT_AVRO_L_TIME_MS && L != SILT_AVRO_L_TIME_US) ||
               (t && t->has_unit && t->unit == ODF_TimeUnit_Nanosecond);
    }
    case ODF_DataType_Timestamp: {
        const odf_DataTypeTimestamp *t = r->value;
        int unit = t && t->has_unit ? t->unit : ODF_TimeUnit_Millisecond;
        const char *tz = t ? t->timezone : NULL;
        bool utc = !tz || !strcmp(tz, "UTC") || !strcmp(tz, "Etc/UTC") || !strcmp(tz, "Z") || !strcmp(tz, "+00:00");
        p->op = SILT_AVRO_R_TS;
        scale(p, L == SILT_AVRO_L_TS_MS ? 3 : 6, utc ? 3 * unit : 6); /* TIMESTAMPTZ: microseconds */
        return L != SILT_AVRO_L_TS_MS && L != SILT_AVRO_L_TS_US;
    }
    default: return 1;
    }
}

static silt_avro_plan *new_plan(silt_arena *a, const silt_avro_node *w, const odf_union *r, const char *path)
{
    silt_avro_plan *p = silt_arena_alloc(a, sizeof *p);
    if (p) {
        memset(p, 0, sizeof *p);
        p->w = w;
        p->type = r;
        p->path = path;
        p->null_branch = -1;
    }
    return p;
}

/* Struct fields of `r` against writer record `w` (NULL: all absent). */
static int resolve_fields(silt_arena *a, silt_avro_plan *p, const silt_avro_node *w, const odf_vec *fields,
                          const char *path, int depth)
{
    p->op = SILT_AVRO_R_STRUCT;
    p->n = fields->n;
    p->kids = silt_arena_alloc(a, (p->n ? p->n : 1) * sizeof *p->kids);
    p->windex = silt_arena_alloc(a, (p->n ? p->n : 1) * sizeof *p->windex);
    if (!p->kids || !p->windex)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < p->n; i++) {
        const odf_DataField *f = fields->items[i];
        const char *fp = child_path(a, path, f->name);
        if (!fp)
            return silt_err(SILT_ENOMEM, "out of memory");
        p->windex[i] = -1;
        for (size_t k = 0; w && k < w->n && p->windex[i] < 0; k++)
            if (strcmp(w->names[k], f->name) == 0)
                p->windex[i] = (int)k;
        if (w && p->windex[i] < 0 && f->type.type != ODF_DataType_Option)
            return silt_err(SILT_EINVAL,
                            "field '%s': missing in the file's writer schema (only an Option field may be absent)",
                            fp);
        const silt_avro_node *wf = p->windex[i] < 0 ? NULL : w->kids[p->windex[i]];
        int rc = resolve(a, wf, &f->type, fp, depth + 1, &p->kids[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* w NULL: a reader field the writer lacks (every value null); the plan is
 * still built from the reader type so nested vectors get their nulls. */
static int resolve(silt_arena *a, const silt_avro_node *w, const odf_union *r, const char *path, int depth,
                   silt_avro_plan **out)
{
    if (depth > SCHEMA_DEPTH)
        return silt_err(SILT_EUNSUPPORTED, "field '%s': nested deeper than %d levels", path, SCHEMA_DEPTH);
    bool opt = r->type == ODF_DataType_Option;
    if (opt)
        r = &((const odf_DataTypeOption *)r->value)->inner;
    int null_branch = -1;
    bool all_null = w == NULL;
    if (w && w->kind == SILT_AVRO_UNION) {
        const silt_avro_node *v = nullable_branch(w, &null_branch);
        if (!v)
            return unsupported_union(path, w);
        if (!opt)
            return mismatch(path, w, r, "the file's type is nullable, the schema's is not Option");
        w = v;
    } else if (w && w->kind == SILT_AVRO_NULL && opt && r->type != ODF_DataType_Null) {
        all_null = true;
        w = NULL;
    }
    silt_avro_plan *p = new_plan(a, w, r, path);
    if (!p)
        return silt_err(SILT_ENOMEM, "out of memory");
    p->null_branch = null_branch;
    p->all_null = all_null;
    *out = p;
    switch (r->type) {
    case ODF_DataType_Struct: {
        const odf_DataTypeStruct *s = r->value;
        if (w && w->kind != SILT_AVRO_RECORD)
            return mismatch(path, w, r, NULL);
        return resolve_fields(a, p, w, &s->fields, path, depth);
    }
    case ODF_DataType_List:
    case ODF_DataType_Map: {
        bool list = r->type == ODF_DataType_List;
        if (w && w->kind != (list ? SILT_AVRO_ARRAY : SILT_AVRO_MAP))
            return mismatch(path, w, r, NULL);
        const odf_union *item = list ? &((const odf_DataTypeList *)r->value)->item_type
                                     : &((const odf_DataTypeMap *)r->value)->value_type;
        if (list && ((const odf_DataTypeList *)r->value)->has_fixed_length)
            return mismatch(path, w, r, "fixed-length lists are not read from Avro");
        if (!list) {
            const odf_union *key = &((const odf_DataTypeMap *)r->value)->key_type;
            if (key->type == ODF_DataType_Option)
                key = &((const odf_DataTypeOption *)key->value)->inner;
            if (key->type != ODF_DataType_String)
                return mismatch(path, w, r, "Avro map keys are strings");
        }
        p->op = list ? SILT_AVRO_R_LIST : SILT_AVRO_R_MAP;
        p->n = 1;
        p->kids = silt_arena_alloc(a, sizeof *p->kids);
        if (!p->kids)
            return silt_err(SILT_ENOMEM, "out of memory");
        return resolve(a, w ? w->kids[0] : NULL, item, path, depth + 1, &p->kids[0]);
    }
    default:
        if (!w) { /* every value null: any type DuckDB's C API can name */
            silt_avro_node none = {.kind = SILT_AVRO_NULL};
            const odf_DataTypeTime *t = r->type == ODF_DataType_Time ? r->value : NULL;
            p->op = SILT_AVRO_R_NULL;
            return t && t->has_unit && t->unit == ODF_TimeUnit_Nanosecond ? mismatch(path, &none, r, NULL) : 0;
        }
        if (resolve_scalar(p, w, r) || !p->op)
            return mismatch(path, w, r, NULL);
        return 0;
    }
}

int silt_avro_resolve(silt_arena *a, const silt_avro_node *w, const odf_DataSchema *r, silt_avro_plan **out)
{
    *out = new_plan(a, w, NULL, "");
    if (!*out)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (!w || w->kind != SILT_AVRO_RECORD)
        return silt_err(SILT_EUNSUPPORTED, "Avro schema: the top-level type is not a record");
    return resolve_fields(a, *out, w, &r->fields, "", 0);
}

/* ---- inference ------------------------------------------------------------------------ */

static int infer(silt_arena *a, const silt_avro_node *w, odf_union *out, const char *path, int depth);

static int infer_fields(silt_arena *a, const silt_avro_node *w, odf_vec *fields, const char *path, int depth)
{
    fields->n = w->n;
    fields->present = true;
    fields->items = silt_arena_alloc(a, (w->n ? w->n : 1) * sizeof *fields->items);
    if (!fields->items)
        return silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; i < w->n; i++) {
        odf_DataField *f = silt_arena_alloc(a, sizeof *f);
        const char *fp = child_path(a, path, w->names[i]);
        if (!f || !fp)
            return silt_err(SILT_ENOMEM, "out of memory");
        memset(f, 0, sizeof *f);
        f->name = (char *)w->names[i];
        fields->items[i] = f;
        int rc = infer(a, w->kids[i], &f->type, fp, depth + 1);
        if (rc)
            return rc;
    }
    return 0;
}

static void *type_new(silt_arena *a, odf_union *out, uint8_t variant, size_t size)
{
    void *v = silt_arena_alloc(a, size);
    if (v)
        memset(v, 0, size);
    out->type = variant;
    out->value = v;
    return v;
}

static int infer(silt_arena *a, const silt_avro_node *w, odf_union *out, const char *path, int depth)
{
    if (depth > 32)
        return silt_err(SILT_EUNSUPPORTED, "field '%s': nested deeper than 32 levels (a recursive record?)", path);
    if (w->kind == SILT_AVRO_UNION) {
        int nb;
        const silt_avro_node *v = nullable_branch(w, &nb);
        if (!v)
            return unsupported_union(path, w);
        odf_union inner;
        int rc = infer(a, v, &inner, path, depth + 1);
        if (rc)
            return rc;
        return silt_schema_type_option(a, out, &inner) ? silt_err(SILT_ENOMEM, "out of memory") : 0;
    }
    void *v = NULL;
    switch (w->logical) {
    case SILT_AVRO_L_DECIMAL: {
        odf_DataTypeDecimal *d = type_new(a, out, ODF_DataType_Decimal, sizeof *d);
        if (d) {
            d->precision = (uint32_t)w->precision;
            d->scale = w->scale;
        }
        if (d && w->precision > 38)
            return silt_err(SILT_EUNSUPPORTED, "field '%s': decimal precision %d is above 38", path, w->precision);
        return d ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    }
    case SILT_AVRO_L_DATE: v = type_new(a, out, ODF_DataType_Date, sizeof(odf_DataTypeDate)); break;
    case SILT_AVRO_L_TIME_MS:
    case SILT_AVRO_L_TIME_US: {
        odf_DataTypeTime *t = type_new(a, out, ODF_DataType_Time, sizeof *t);
        if (t)
            *t = (odf_DataTypeTime){true, w->logical == SILT_AVRO_L_TIME_MS ? ODF_TimeUnit_Millisecond
                                                                             : ODF_TimeUnit_Microsecond};
        v = t;
        break;
    }
    case SILT_AVRO_L_TS_MS:
    case SILT_AVRO_L_TS_US: {
        odf_DataTypeTimestamp *t = type_new(a, out, ODF_DataType_Timestamp, sizeof *t);
        if (t) {
            t->has_unit = true;
            t->unit = w->logical == SILT_AVRO_L_TS_MS ? ODF_TimeUnit_Millisecond : ODF_TimeUnit_Microsecond;
            t->timezone = silt_arena_strdup(a, "UTC");
        }
        v = t && t->timezone ? t : NULL;
        break;
    }
    case SILT_AVRO_L_UUID: v = type_new(a, out, ODF_DataType_String, sizeof(odf_DataTypeString)); break;
    default: break;
    }
    if (w->logical)
        return v ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    static const uint8_t SIMPLE[] = {
        [SILT_AVRO_NULL] = ODF_DataType_Null,     [SILT_AVRO_BOOLEAN] = ODF_DataType_Bool,
        [SILT_AVRO_INT] = ODF_DataType_Int32,     [SILT_AVRO_LONG] = ODF_DataType_Int64,
        [SILT_AVRO_FLOAT] = ODF_DataType_Float32, [SILT_AVRO_DOUBLE] = ODF_DataType_Float64,
        [SILT_AVRO_BYTES] = ODF_DataType_Binary,  [SILT_AVRO_STRING] = ODF_DataType_String,
        [SILT_AVRO_ENUM] = ODF_DataType_String,
    };
    if (w->kind < (int)sizeof SIMPLE && SIMPLE[w->kind])
        return silt_schema_type_simple(a, out, SIMPLE[w->kind]) ? silt_err(SILT_ENOMEM, "out of memory") : 0;
    if (w->kind == SILT_AVRO_FIXED) {
        odf_DataTypeBinary *b = type_new(a, out, ODF_DataType_Binary, sizeof *b);
        if (b)
            *b = (odf_DataTypeBinary){true, (uint64_t)w->fixed_size};
        return b ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    }
    if (w->kind == SILT_AVRO_RECORD) {
        odf_DataTypeStruct *s = type_new(a, out, ODF_DataType_Struct, sizeof *s);
        if (!s)
            return silt_err(SILT_ENOMEM, "out of memory");
        if (w->n == 0)
            return silt_err(SILT_EUNSUPPORTED, "field '%s': a record without fields has no dataset type", path);
        return infer_fields(a, w, &s->fields, path, depth);
    }
    /* array, map */
    odf_union item;
    int rc = infer(a, w->kids[0], &item, path, depth + 1);
    if (rc)
        return rc;
    if (w->kind == SILT_AVRO_ARRAY) {
        odf_DataTypeList *l = type_new(a, out, ODF_DataType_List, sizeof *l);
        if (l)
            l->item_type = item;
        return l ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    }
    odf_DataTypeMap *m = type_new(a, out, ODF_DataType_Map, sizeof *m);
    if (!m || silt_schema_type_simple(a, &m->key_type, ODF_DataType_String))
        return silt_err(SILT_ENOMEM, "out of memory");
    m->value_type = item;
    return 0;
}

int silt_avro_to_odf(silt_arena *a, const silt_avro_node *w, odf_DataSchema **out)
{
    odf_DataSchema *s = silt_arena_alloc(a, sizeof *s);
    if (!s)
        return silt_err(SILT_ENOMEM, "out of memory");
    memset(s, 0, sizeof *s);
    *out = s;
    if (w->n == 0)
        return silt_err(SILT_EUNSUPPORTED, "Avro schema: the record has no fields");
    return infer_fields(a, w, &s->fields, "", 0);
}
