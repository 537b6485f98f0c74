/* json.c — ODF structs -> JSON, and the canonical compact JSON writer
 * (see json.h). */
#include "odf/json.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odf/odf_types.h"
#include "util/error.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

#ifndef ODF_FMT_UUID
#define ODF_FMT_UUID 4
#endif
#ifndef ODF_F_MAP
#define ODF_F_MAP 0x04
#endif

#define CFIELD_PTR(obj, off) ((const void *)((const char *)(obj) + (off)))
#define JSON_MAX_DEPTH 128

/* ---------------------------------------------------------------------
 * Shortest round-trip double formatting, laid out like ryu / serde_json.
 * --------------------------------------------------------------------- */

void odf_json_format_double(double v, char *out)
{
    if (!isfinite(v)) {
        strcpy(out, "null");
        return;
    }
    if (v == 0) {
        strcpy(out, signbit(v) ? "-0.0" : "0.0");
        return;
    }
    char tmp[40];
    int prec;
    for (prec = 0; prec < 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*e", prec, v);
        if (strtod(tmp, NULL) == v)
            break;
    }
    if (prec == 17)
        snprintf(tmp, sizeof tmp, "%.*e", 16, v);
    /* tmp: [-]d[.ddd]e[+-]XX */
    char digits[24];
    int nd = 0;
    const char *p = tmp;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
    }
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[nd++] = *p;
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    /* value = 0.d1d2…dn × 10^kk */
    int kk = exp10 + 1;
    int k = kk - nd; /* exponent of the last digit */
    char *o = out;
    if (neg)
        *o++ = '-';
    if (k >= 0 && kk <= 16) {
        memcpy(o, digits, (size_t)nd);
        o += nd;
        for (int i = 0; i < k; i++)
            *o++ = '0';
        *o++ = '.';
        *o++ = '0';
    } else if (kk > 0 && kk <= 16) {
        memcpy(o, digits, (size_t)kk);
        o += kk;
        *o++ = '.';
        memcpy(o, digits + kk, (size_t)(nd - kk));
        o += nd - kk;
    } else if (kk > -5 && kk <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -kk; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)nd);
        o += nd;
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(nd - 1));
            o += nd - 1;
        }
        o += sprintf(o, "e%d", kk - 1);
    }
    *o = '\0';
}

/* ---------------------------------------------------------------------
 * Canonical compact JSON
 * --------------------------------------------------------------------- */

static int put_json_string(silt_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    if (silt_buf_putc(b, '"') < 0)
        return SILT_ENOMEM;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        const char *esc = NULL;
        char u[7];
        switch (ch) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        default:
            if (ch < 0x20) {
                u[0] = '\\';
                u[1] = 'u';
                u[2] = '0';
                u[3] = '0';
                u[4] = hex[ch >> 4];
                u[5] = hex[ch & 15];
                u[6] = '\0';
                esc = u;
            }
        }
        if (esc) {
            if (silt_buf_append(b, s + i - run, run) < 0 || silt_buf_puts(b, esc) < 0)
                return SILT_ENOMEM;
            run = 0;
        } else {
            run++;
        }
    }
    if (silt_buf_append(b, s + n - run, run) < 0 || silt_buf_putc(b, '"') < 0)
        return SILT_ENOMEM;
    return 0;
}

static int keycmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int canon(silt_buf *b, const json_t *v, int depth)
{
    char num[64];
    if (depth > JSON_MAX_DEPTH)
        return silt_err(SILT_EINVAL, "JSON value nested too deeply");
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v);
        const char **keys = malloc((n ? n : 1) * sizeof *keys);
        if (!keys)
            return silt_err(SILT_ENOMEM, "out of memory");
        size_t i = 0;
        const char *k;
        json_t *val;
        json_object_foreach((json_t *)v, k, val) keys[i++] = k;
        qsort(keys, i, sizeof *keys, keycmp);
        int rc = silt_buf_putc(b, '{');
        for (size_t j = 0; rc == 0 && j < i; j++) {
            if (j)
                rc = silt_buf_putc(b, ',');
            if (rc == 0)
                rc = put_json_string(b, keys[j], strlen(keys[j]));
            if (rc == 0)
                rc = silt_buf_putc(b, ':');
            if (rc == 0)
                rc = canon(b, json_object_get(v, keys[j]), depth + 1);
        }
        free(keys);
        return rc ? rc : silt_buf_putc(b, '}');
    }
    case JSON_ARRAY: {
        int rc = silt_buf_putc(b, '[');
        for (size_t i = 0; rc == 0 && i < json_array_size(v); i++) {
            if (i)
                rc = silt_buf_putc(b, ',');
            if (rc == 0)
                rc = canon(b, json_array_get(v, i), depth + 1);
        }
        return rc ? rc : silt_buf_putc(b, ']');
    }
    case JSON_STRING:
        return put_json_string(b, json_string_value(v), json_string_length(v));
    case JSON_INTEGER:
        snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return silt_buf_puts(b, num);
    case JSON_REAL:
        odf_json_format_double(json_real_value(v), num);
        return silt_buf_puts(b, num);
    case JSON_TRUE:
        return silt_buf_puts(b, "true");
    case JSON_FALSE:
        return silt_buf_puts(b, "false");
    default:
        return silt_buf_puts(b, "null");
    }
}

int odf_json_canonical(silt_buf *out, const json_t *v)
{
    if (!out || !v)
        return silt_err(SILT_EINVAL, "odf_json_canonical: bad argument");
    return canon(out, v, 0);
}

/* ---------------------------------------------------------------------
 * Structs -> json_t
 * --------------------------------------------------------------------- */

static json_t *table_json(const odf_table_desc *d, const void *obj, const char *kind, int depth);
static json_t *union_json(const odf_union_desc *u, const odf_union *v, int depth);

static json_t *nomem(void)
{
    silt_err(SILT_ENOMEM, "out of memory");
    return NULL;
}

static bool table_is_transparent(const odf_table_desc *d)
{
    return d->nfields == 1 &&
           (d->fields[0].kind == ODF_K_JSON ||
            (d->fields[0].kind == ODF_K_VEC_TABLE && (d->fields[0].flags & ODF_F_MAP)));
}

static bool field_present(const odf_field_desc *f, const void *obj)
{
    const void *p = CFIELD_PTR(obj, f->offset);
    switch (f->kind) {
    case ODF_K_STRING:
    case ODF_K_JSON:
        return *(char *const *)p != NULL;
    case ODF_K_BYTES:
        return ((const odf_bytes *)p)->data != NULL;
    case ODF_K_TIMESTAMP:
    case ODF_K_DURATION:
        return *(const bool *)CFIELD_PTR(obj, f->has_offset);
    case ODF_K_TABLE:
        return *(void *const *)p != NULL;
    case ODF_K_UNION:
        return ((const odf_union *)p)->type != 0;
    case ODF_K_VEC_STRING:
        return ((const odf_strvec *)p)->present;
    case ODF_K_VEC_TABLE:
        return ((const odf_vec *)p)->present;
    case ODF_K_VEC_UNION:
        return ((const odf_uvec *)p)->present;
    default:
        if (f->flags & ODF_F_OPTIONAL)
            return *(const bool *)CFIELD_PTR(obj, f->has_offset);
        return true;
    }
}

static json_t *json_from_text(const char *text)
{
    json_error_t jerr;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &jerr);
    if (!v)
        silt_err(SILT_EINVAL, "invalid JSON value: %s", jerr.text);
    return v;
}

static json_t *bytes_json(const odf_field_desc *f, const odf_bytes *b)
{
    switch (f->fmt) {
    case ODF_FMT_MULTIHASH: {
        char *txt = malloc(2 * b->len + 2);
        if (!txt)
            return nomem();
        silt_multihash_to_text(b->data, b->len, txt);
        json_t *v = json_string(txt);
        free(txt);
        return v ? v : nomem();
    }
    case ODF_FMT_DID: {
        if (b->len != SILT_DID_LEN) {
            silt_err(SILT_EINVAL, "%s: DID must be %d bytes, got %zu", f->name, SILT_DID_LEN, b->len);
            return NULL;
        }
        char txt[SILT_DID_TEXT_LEN + 1];
        silt_did_to_text(b->data, txt);
        json_t *v = json_string(txt);
        return v ? v : nomem();
    }
    case ODF_FMT_UUID: {
        if (b->len != 16) {
            silt_err(SILT_EINVAL, "%s: UUID must be 16 bytes, got %zu", f->name, b->len);
            return NULL;
        }
        const uint8_t *u = b->data;
        char txt[40];
        snprintf(txt, sizeof txt,
                 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
                 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
        json_t *v = json_string(txt);
        return v ? v : nomem();
    }
    case ODF_FMT_BASE64: {
        silt_buf out = SILT_BUF_INIT;
        if (silt_base64_encode(b->data, b->len, &out) < 0) {
            silt_buf_free(&out);
            return NULL;
        }
        json_t *v = json_stringn(out.data ? out.data : "", out.len);
        silt_buf_free(&out);
        return v ? v : nomem();
    }
    default: {
        json_t *v = json_stringn((const char *)b->data, b->len);
        if (!v)
            silt_err(SILT_EINVAL, "%s: not valid UTF-8", f->name);
        return v;
    }
    }
}

static json_t *uint_json(uint64_t v)
{
    if (v > (uint64_t)INT64_MAX) {
        silt_err(SILT_EINVAL, "integer %" PRIu64 " too large for JSON", v);
        return NULL;
    }
    json_t *j = json_integer((json_int_t)v);
    return j ? j : nomem();
}

static json_t *map_vec_json(const odf_field_desc *f, const odf_vec *v, int depth)
{
    const odf_table_desc *ed = f->table;
    if (!ed || ed->nfields < 2) {
        silt_err(SILT_EINTERNAL, "bad map entry descriptor");
        return NULL;
    }
    const odf_field_desc *vf = &ed->fields[1];
    json_t *obj = json_object();
    if (!obj)
        return nomem();
    for (size_t i = 0; i < v->n; i++) {
        const void *it = v->items[i];
        const char *key = it ? *(char *const *)CFIELD_PTR(it, ed->fields[0].offset) : NULL;
        if (!key) {
            json_decref(obj);
            silt_err(SILT_EINVAL, "%s: map entry without a key", f->name);
            return NULL;
        }
        const void *vp = CFIELD_PTR(it, vf->offset);
        json_t *jv;
        if (vf->kind == ODF_K_JSON)
            jv = *(char *const *)vp ? json_from_text(*(char *const *)vp) : json_null();
        else if (vf->kind == ODF_K_TABLE)
            jv = *(void *const *)vp ? table_json(vf->table, *(void *const *)vp, NULL, depth + 1) : json_null();
        else if (vf->kind == ODF_K_STRING)
            jv = *(char *const *)vp ? json_string(*(char *const *)vp) : json_null();
        else {
            silt_err(SILT_EINTERNAL, "unsupported map value kind");
            jv = NULL;
        }
        if (!jv || json_object_set_new(obj, key, jv)) {
            json_decref(obj);
            if (!silt_error_last()[0])
                silt_err(SILT_EINVAL, "%s: bad map entry", f->name);
            return NULL;
        }
    }
    return obj;
}

static json_t *field_json(const odf_field_desc *f, const void *obj, int depth)
{
    const void *p = CFIELD_PTR(obj, f->offset);
    json_t *j = NULL;
    switch (f->kind) {
    case ODF_K_BOOL:
        return json_boolean(*(const bool *)p);
    case ODF_K_I8:
        return json_integer(*(const int8_t *)p);
    case ODF_K_U8:
        return json_integer(*(const uint8_t *)p);
    case ODF_K_I16:
        return json_integer(*(const int16_t *)p);
    case ODF_K_U16:
        return json_integer(*(const uint16_t *)p);
    case ODF_K_I32:
        return json_integer(*(const int32_t *)p);
    case ODF_K_U32:
        return json_integer(*(const uint32_t *)p);
    case ODF_K_I64:
        return json_integer(*(const int64_t *)p);
    case ODF_K_U64:
    case ODF_K_DURATION:
        return uint_json(*(const uint64_t *)p);
    case ODF_K_ENUM: {
        int32_t v = *(const int32_t *)p;
        if (!f->enm || v < 0 || (size_t)v >= f->enm->nvalues || !f->enm->names[v]) {
            silt_err(SILT_EINVAL, "%s: invalid enum value %" PRId32, f->name, v);
            return NULL;
        }
        return json_string(f->enm->names[v]);
    }
    case ODF_K_STRING:
        j = json_string(*(char *const *)p);
        if (!j)
            silt_err(SILT_EINVAL, "%s: not valid UTF-8", f->name);
        return j;
    case ODF_K_BYTES:
        return bytes_json(f, (const odf_bytes *)p);
    case ODF_K_TIMESTAMP: {
        const odf_time *t = p;
        silt_time st = {t->sec, t->nsec};
        char txt[64];
        silt_time_format(st, txt);
        return json_string(txt);
    }
    case ODF_K_TABLE:
        return table_json(f->table, *(void *const *)p, NULL, depth + 1);
    case ODF_K_UNION:
        return union_json(f->uni, (const odf_union *)p, depth + 1);
    case ODF_K_VEC_STRING: {
        const odf_strvec *v = p;
        json_t *arr = json_array();
        if (!arr)
            return nomem();
        for (size_t i = 0; i < v->n; i++) {
            json_t *s = v->items[i] ? json_string(v->items[i]) : NULL;
            if (!s || json_array_append_new(arr, s)) {
                json_decref(arr);
                silt_err(SILT_EINVAL, "%s: bad string item", f->name);
                return NULL;
            }
        }
        return arr;
    }
    case ODF_K_VEC_TABLE: {
        const odf_vec *v = p;
        if (f->flags & ODF_F_MAP)
            return map_vec_json(f, v, depth);
        json_t *arr = json_array();
        if (!arr)
            return nomem();
        for (size_t i = 0; i < v->n; i++) {
            json_t *t = table_json(f->table, v->items[i], NULL, depth + 1);
            if (!t || json_array_append_new(arr, t)) {
                json_decref(arr);
                return NULL;
            }
        }
        return arr;
    }
    case ODF_K_VEC_UNION: {
        const odf_uvec *v = p;
        json_t *arr = json_array();
        if (!arr)
            return nomem();
        for (size_t i = 0; i < v->n; i++) {
            json_t *t = union_json(f->uni, &v->items[i], depth + 1);
            if (!t || json_array_append_new(arr, t)) {
                json_decref(arr);
                return NULL;
            }
        }
        return arr;
    }
    case ODF_K_JSON:
        return json_from_text(*(char *const *)p);
    default:
        silt_err(SILT_EINTERNAL, "unsupported field kind %d", f->kind);
        return NULL;
    }
}

static json_t *table_json(const odf_table_desc *d, const void *obj, const char *kind, int depth)
{
    if (!d || !obj) {
        silt_err(SILT_EINVAL, "cannot convert a NULL table to JSON");
        return NULL;
    }
    if (depth > JSON_MAX_DEPTH) {
        silt_err(SILT_EINVAL, "%s nested too deeply", d->name);
        return NULL;
    }
    if (!kind && table_is_transparent(d)) {
        if (!field_present(&d->fields[0], obj))
            return json_object();
        return field_json(&d->fields[0], obj, depth);
    }
    json_t *o = json_object();
    if (!o)
        return nomem();
    if (kind && json_object_set_new(o, "kind", json_string(kind))) {
        json_decref(o);
        return nomem();
    }
    for (size_t i = 0; i < d->nfields; i++) {
        const odf_field_desc *f = &d->fields[i];
        if (!field_present(f, obj))
            continue;
        silt_err_clear();
        json_t *v = field_json(f, obj, depth);
        if (!v) {
            json_decref(o);
            if (!silt_error_last()[0])
                silt_err(SILT_ENOMEM, "out of memory");
            return NULL;
        }
        if (json_object_set_new(o, f->name, v)) {
            json_decref(o);
            return nomem();
        }
    }
    return o;
}

static json_t *union_json(const odf_union_desc *u, const odf_union *v, int depth)
{
    if (!u || !v || v->type == 0 || v->type > u->nvariants || !v->value) {
        silt_err(SILT_EINVAL, "invalid %s union value", u ? u->name : "?");
        return NULL;
    }
    return table_json(u->variants[v->type - 1], v->value, u->kinds[v->type - 1], depth);
}

json_t *odf_to_json(const odf_table_desc *d, const void *obj)
{
    return table_json(d, obj, NULL, 0);
}

json_t *odf_union_to_json(const odf_union_desc *u, const odf_union *v)
{
    return union_json(u, v, 0);
}
