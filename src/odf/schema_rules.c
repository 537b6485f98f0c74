/* schema_rules.c — see schema_rules.h. */
#include "odf/schema_rules.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define AT(p, off) ((const char *)(p) + (off))

static bool str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static bool has_flag(const void *v, const odf_field_desc *f)
{
    return *(const bool *)AT(v, f->has_offset);
}

static bool scalar_eq(const odf_field_desc *f, const void *a, const void *b)
{
    size_t n;
    switch (f->kind) {
    case ODF_K_BOOL: n = sizeof(bool); break;
    case ODF_K_I8: case ODF_K_U8: n = 1; break;
    case ODF_K_I16: case ODF_K_U16: n = 2; break;
    case ODF_K_I32: case ODF_K_U32: case ODF_K_ENUM: n = 4; break;
    default: n = 8; break;
    }
    if (f->kind == ODF_K_BOOL)
        return *(const bool *)AT(a, f->offset) == *(const bool *)AT(b, f->offset);
    return memcmp(AT(a, f->offset), AT(b, f->offset), n) == 0;
}

static bool field_eq(const odf_field_desc *f, const void *a, const void *b)
{
    switch (f->kind) {
    case ODF_K_BOOL: case ODF_K_I8: case ODF_K_U8: case ODF_K_I16: case ODF_K_U16:
    case ODF_K_I32: case ODF_K_U32: case ODF_K_I64: case ODF_K_U64: case ODF_K_ENUM:
        if (f->flags & ODF_F_OPTIONAL) {
            bool ha = has_flag(a, f), hb = has_flag(b, f);
            if (ha != hb)
                return false;
            if (!ha)
                return true;
        }
        return scalar_eq(f, a, b);
    case ODF_K_DURATION: {
        bool ha = has_flag(a, f), hb = has_flag(b, f);
        if (ha != hb)
            return false;
        return !ha || *(const uint64_t *)AT(a, f->offset) == *(const uint64_t *)AT(b, f->offset);
    }
    case ODF_K_TIMESTAMP: {
        bool ha = has_flag(a, f), hb = has_flag(b, f);
        if (ha != hb)
            return false;
        if (!ha)
            return true;
        const odf_time *ta = (const odf_time *)AT(a, f->offset);
        const odf_time *tb = (const odf_time *)AT(b, f->offset);
        return ta->sec == tb->sec && ta->nsec == tb->nsec;
    }
    case ODF_K_STRING: case ODF_K_JSON:
        return str_eq(*(char *const *)AT(a, f->offset), *(char *const *)AT(b, f->offset));
    case ODF_K_BYTES: {
        const odf_bytes *ba = (const odf_bytes *)AT(a, f->offset);
        const odf_bytes *bb = (const odf_bytes *)AT(b, f->offset);
        if (!ba->data || !bb->data)
            return ba->data == bb->data;
        return ba->len == bb->len && (ba->len == 0 || memcmp(ba->data, bb->data, ba->len) == 0);
    }
    case ODF_K_TABLE:
        return odf_table_equal(f->table, *(void *const *)AT(a, f->offset),
                               *(void *const *)AT(b, f->offset));
    case ODF_K_UNION:
        return odf_union_equal(f->uni, (const odf_union *)AT(a, f->offset),
                               (const odf_union *)AT(b, f->offset));
    case ODF_K_VEC_STRING: {
        const odf_strvec *va = (const odf_strvec *)AT(a, f->offset);
        const odf_strvec *vb = (const odf_strvec *)AT(b, f->offset);
        if (va->present != vb->present || va->n != vb->n)
            return false;
        for (size_t i = 0; i < va->n; i++)
            if (!str_eq(va->items[i], vb->items[i]))
                return false;
        return true;
    }
    case ODF_K_VEC_TABLE: {
        const odf_vec *va = (const odf_vec *)AT(a, f->offset);
        const odf_vec *vb = (const odf_vec *)AT(b, f->offset);
        if (va->present != vb->present || va->n != vb->n)
            return false;
        for (size_t i = 0; i < va->n; i++)
            if (!odf_table_equal(f->table, va->items[i], vb->items[i]))
                return false;
        return true;
    }
    case ODF_K_VEC_UNION: {
        const odf_uvec *va = (const odf_uvec *)AT(a, f->offset);
        const odf_uvec *vb = (const odf_uvec *)AT(b, f->offset);
        if (va->present != vb->present || va->n != vb->n)
            return false;
        for (size_t i = 0; i < va->n; i++)
            if (!odf_union_equal(f->uni, &va->items[i], &vb->items[i]))
                return false;
        return true;
    }
    default:
        return false;
    }
}

bool odf_table_equal(const odf_table_desc *d, const void *a, const void *b)
{
    if (!a || !b)
        return a == b;
    if (a == b)
        return true;
    if (!d)
        return false;
    for (size_t i = 0; i < d->nfields; i++)
        if (!field_eq(&d->fields[i], a, b))
            return false;
    return true;
}

bool odf_union_equal(const odf_union_desc *u, const odf_union *a, const odf_union *b)
{
    if (!a || !b)
        return a == b;
    if (a->type != b->type)
        return false;
    if (a->type == 0)
        return true;
    if (!u || a->type > u->nvariants)
        return false;
    return odf_table_equal(u->variants[a->type - 1], a->value, b->value);
}

bool odf_event_equal(const odf_union *a, const odf_union *b)
{
    return odf_union_equal(&odf_udesc_MetadataEvent, a, b);
}

bool odf_data_type_equal(const odf_union *a, const odf_union *b)
{
    return odf_union_equal(&odf_udesc_DataType, a, b);
}

static const char *type_name(const odf_union *t)
{
    const odf_union_desc *u = &odf_udesc_DataType;
    if (!t || !u || t->type == 0 || t->type > u->nvariants)
        return "(none)";
    return u->variants[t->type - 1]->name;
}

bool odf_data_type_is_nullable(const odf_union *t)
{
    return t && t->value && t->type == ODF_DataType_Option;
}

/* Readable type text: "Int64", "Option<String>", "List<Option<Int32>>",
 * "Timestamp(Millisecond, UTC)". Written into a per-call buffer. */
static void describe_type(const odf_union *t, char *out, size_t len, int depth)
{
    const char *n = type_name(t);
    if (strncmp(n, "DataType", 8) == 0 && n[8])
        n += 8;
    const odf_union *inner = NULL;
    if (depth < 8 && t->value && t->type == ODF_DataType_Option)
        inner = &((const odf_DataTypeOption *)t->value)->inner;
    else if (depth < 8 && t->value && t->type == ODF_DataType_List)
        inner = &((const odf_DataTypeList *)t->value)->item_type;
    if (inner) {
        char sub[160];
        describe_type(inner, sub, sizeof sub, depth + 1);
        snprintf(out, len, "%s<%s>", n, sub);
    } else if (t->value && t->type == ODF_DataType_Timestamp) {
        static const char *const UNITS[] = {"Second", "Millisecond", "Microsecond", "Nanosecond"};
        const odf_DataTypeTimestamp *ts = t->value;
        const char *unit = ts->has_unit && ts->unit >= 0 && ts->unit <= 3 ? UNITS[ts->unit] : "Millisecond";
        snprintf(out, len, "%s(%s, %s)", n, unit, ts->timezone ? ts->timezone : "UTC");
    } else if (t->value && t->type == ODF_DataType_Decimal) {
        const odf_DataTypeDecimal *d = t->value;
        snprintf(out, len, "%s(%u, %d)", n, (unsigned)d->precision, (int)d->scale);
    } else {
        snprintf(out, len, "%s", n);
    }
}

static const char *short_type(const odf_union *t)
{
    static _Thread_local char buf[2][192];
    static _Thread_local int k;
    k ^= 1;
    describe_type(t, buf[k], sizeof buf[k], 0);
    return buf[k];
}

int odf_schema_check_evolution(const odf_DataSchema *prev, const odf_DataSchema *next, char *msg,
                               size_t msglen)
{
    size_t np = prev ? prev->fields.n : 0, nn = next ? next->fields.n : 0;
    for (size_t i = 0; i < np; i++) {
        const odf_DataField *pf = prev->fields.items[i];
        const char *pname = pf && pf->name ? pf->name : "";
        if (i >= nn) {
            snprintf(msg, msglen, "schema.fields: existing field '%s' (position %zu) was removed",
                     pname, i);
            return 1;
        }
        const odf_DataField *nf = next->fields.items[i];
        const char *nname = nf && nf->name ? nf->name : "";
        if (strcmp(pname, nname) != 0) {
            snprintf(msg, msglen,
                     "schema.fields[%zu]: name is '%s' but the existing field at this position "
                     "is '%s' (fields may not be renamed, removed or reordered)",
                     i, nname, pname);
            return 1;
        }
        if (!pf || !nf || !odf_data_type_equal(&pf->type, &nf->type)) {
            snprintf(msg, msglen,
                     "schema.fields[%zu] ('%s'): type changed from %s to %s "
                     "(existing field types may not change)",
                     i, pname, pf ? short_type(&pf->type) : "(none)",
                     nf ? short_type(&nf->type) : "(none)");
            return 1;
        }
    }
    for (size_t i = np; i < nn; i++) {
        const odf_DataField *nf = next->fields.items[i];
        /* after a schema without fields (it can hold no data; a derivative
         * declaring attributes such as its key, docs/transforms.md) any
         * field may come */
        if (!nf || (np > 0 && !odf_data_type_is_nullable(&nf->type))) {
            snprintf(msg, msglen,
                     "schema.fields[%zu] ('%s'): new field has type %s but added fields must be "
                     "nullable (Option)",
                     i, nf && nf->name ? nf->name : "", nf ? short_type(&nf->type) : "(none)");
            return 1;
        }
        for (size_t j = 0; j < i; j++) {
            const odf_DataField *of = next->fields.items[j];
            if (of && of->name && nf->name && strcmp(of->name, nf->name) == 0) {
                snprintf(msg, msglen,
                         "schema.fields[%zu]: new field '%s' duplicates the field at position %zu",
                         i, nf->name, j);
                return 1;
            }
        }
    }
    return 0;
}
