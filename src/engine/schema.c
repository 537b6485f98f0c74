/* schema.c — ODF DataSchema <-> DuckDB types, Spark DDL and Foundry field
 * lists (see schema.h for the mapping tables).
 *
 * Invariants:
 *  - every ODF object built here comes from the caller's arena; nothing is
 *    heap-allocated except DuckDB handles, which are released before return;
 *  - recursion over nested types is bounded (SCHEMA_MAX_DEPTH), so hostile
 *    input cannot exhaust the stack;
 *  - Option is transparent towards DuckDB; from DuckDB/DDL/Foundry, nested
 *    values are wrapped the way an Arrow reader of the Parquet slice sees them
 *    (list items, struct fields and map values nullable, map keys not).
 */
#include "engine/schema.h"

#include "engine/engine_internal.h"
#include "odf/schema_rules.h"
#include "util/error.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SCHEMA_MAX_DEPTH 32

/* ------------------------------------------------------------------ */
/* builders                                                            */

static size_t variant_size(uint8_t v)
{
    switch (v) {
    case ODF_DataType_Binary: return sizeof(odf_DataTypeBinary);
    case ODF_DataType_Decimal: return sizeof(odf_DataTypeDecimal);
    case ODF_DataType_Duration: return sizeof(odf_DataTypeDuration);
    case ODF_DataType_List: return sizeof(odf_DataTypeList);
    case ODF_DataType_Map: return sizeof(odf_DataTypeMap);
    case ODF_DataType_Option: return sizeof(odf_DataTypeOption);
    case ODF_DataType_Struct: return sizeof(odf_DataTypeStruct);
    case ODF_DataType_Time: return sizeof(odf_DataTypeTime);
    case ODF_DataType_Timestamp: return sizeof(odf_DataTypeTimestamp);
    default: return 8; /* field-less variants: struct { char _unused; } */
    }
}

/* Allocates the variant struct of `out` (zeroed); NULL on ENOMEM (recorded). */
static void *type_new(silt_arena *a, odf_union *out, uint8_t variant)
{
    void *v = silt_arena_alloc(a, variant_size(variant));
    if (!v)
        return NULL;
    out->type = variant;
    out->value = v;
    return v;
}

int silt_schema_type_simple(silt_arena *a, odf_union *out, uint8_t variant)
{
    return type_new(a, out, variant) ? 0 : SILT_ENOMEM;
}

int silt_schema_type_option(silt_arena *a, odf_union *out, const odf_union *inner)
{
    odf_union in = *inner; /* inner may alias out */
    odf_DataTypeOption *o = type_new(a, out, ODF_DataType_Option);
    if (!o)
        return SILT_ENOMEM;
    o->inner = in;
    return 0;
}

static int wrap_option(silt_arena *a, odf_union *t, bool nullable)
{
    return nullable ? silt_schema_type_option(a, t, t) : 0;
}

static int mk_timestamp(silt_arena *a, odf_union *out, int32_t unit)
{
    odf_DataTypeTimestamp *ts = type_new(a, out, ODF_DataType_Timestamp);
    if (!ts)
        return SILT_ENOMEM;
    ts->has_unit = true;
    ts->unit = unit;
    ts->timezone = silt_arena_strdup(a, "UTC");
    return ts->timezone ? 0 : SILT_ENOMEM;
}

static int mk_decimal(silt_arena *a, odf_union *out, uint32_t p, int32_t s)
{
    odf_DataTypeDecimal *d = type_new(a, out, ODF_DataType_Decimal);
    if (!d)
        return SILT_ENOMEM;
    d->precision = p;
    d->scale = s;
    return 0;
}

/* Growable array of DataField pointers in the arena. */
typedef struct field_list {
    odf_DataField **items;
    size_t n, cap;
} field_list;

static odf_DataField *field_push(silt_arena *a, field_list *l, const char *name, size_t name_len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        odf_DataField **items = silt_arena_alloc(a, cap * sizeof *items);
        if (!items)
            return NULL;
        if (l->n)
            memcpy(items, l->items, l->n * sizeof *items);
        l->items = items;
        l->cap = cap;
    }
    odf_DataField *f = silt_arena_alloc(a, sizeof *f);
    if (!f)
        return NULL;
    f->name = silt_arena_strndup(a, name, name_len);
    if (!f->name)
        return NULL;
    l->items[l->n++] = f;
    return f;
}

static bool field_list_has(const field_list *l, const char *name, size_t len)
{
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->items[i]->name) == len && memcmp(l->items[i]->name, name, len) == 0)
            return true;
    return false;
}

static void field_list_to_vec(const field_list *l, odf_vec *v)
{
    v->items = (void **)l->items;
    v->n = l->n;
    v->present = true;
}

static int schema_from_list(silt_arena *a, const field_list *l, odf_DataSchema **out)
{
    odf_DataSchema *s = silt_arena_alloc(a, sizeof *s);
    if (!s)
        return SILT_ENOMEM;
    field_list_to_vec(l, &s->fields);
    *out = s;
    return 0;
}

/* ------------------------------------------------------------------ */
/* ODF -> DuckDB type text                                             */

static const char *const VARIANT_NAMES[] = {
    NULL,      "Binary", "Bool",  "Date",   "Decimal", "Duration", "Float16", "Float32",
    "Float64", "Int8",   "Int16", "Int32",  "Int64",   "UInt8",    "UInt16",  "UInt32",
    "UInt64",  "List",   "Map",   "Null",   "Option",  "Struct",   "Time",    "Timestamp",
    "String"};
#define VARIANT_COUNT (sizeof VARIANT_NAMES / sizeof VARIANT_NAMES[0])

static const char *const UNIT_NAMES[] = {"Second", "Millisecond", "Microsecond", "Nanosecond"};

static bool valid_variant(const odf_union *t)
{
    return t && t->type > 0 && t->type < VARIANT_COUNT && t->value;
}

static bool valid_unit(int32_t u) { return u >= ODF_TimeUnit_Second && u <= ODF_TimeUnit_Nanosecond; }

static bool tz_is_utc(const char *tz)
{
    return !tz || strcasecmp(tz, "UTC") == 0 || strcmp(tz, "Etc/UTC") == 0 || strcmp(tz, "Z") == 0 ||
           strcmp(tz, "+00:00") == 0;
}

static int put_ident(silt_buf *out, const char *name)
{
    int rc = silt_buf_putc(out, '"');
    for (const char *p = name; !rc && *p; p++)
        rc = *p == '"' ? silt_buf_puts(out, "\"\"") : silt_buf_putc(out, *p);
    return rc ? rc : silt_buf_putc(out, '"');
}

/* `where` names the field for error messages. */
static int to_duckdb(silt_buf *out, const odf_union *t, const char *where, int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return silt_err(SILT_EUNSUPPORTED, "%s: type nested deeper than %d levels", where, SCHEMA_MAX_DEPTH);
    if (!valid_variant(t))
        return silt_err(SILT_EINVAL, "%s: missing or unknown data type (variant %d)", where, t ? t->type : 0);
    switch (t->type) {
    case ODF_DataType_Option:
        return to_duckdb(out, &((const odf_DataTypeOption *)t->value)->inner, where, depth + 1);
    case ODF_DataType_Bool: return silt_buf_puts(out, "BOOLEAN");
    case ODF_DataType_Int8: return silt_buf_puts(out, "TINYINT");
    case ODF_DataType_Int16: return silt_buf_puts(out, "SMALLINT");
    case ODF_DataType_Int32: return silt_buf_puts(out, "INTEGER");
    case ODF_DataType_Int64: return silt_buf_puts(out, "BIGINT");
    case ODF_DataType_UInt8: return silt_buf_puts(out, "UTINYINT");
    case ODF_DataType_UInt16: return silt_buf_puts(out, "USMALLINT");
    case ODF_DataType_UInt32: return silt_buf_puts(out, "UINTEGER");
    case ODF_DataType_UInt64: return silt_buf_puts(out, "UBIGINT");
    case ODF_DataType_Float16: /* DuckDB has no half float */
    case ODF_DataType_Float32: return silt_buf_puts(out, "FLOAT");
    case ODF_DataType_Float64: return silt_buf_puts(out, "DOUBLE");
    case ODF_DataType_String: return silt_buf_puts(out, "VARCHAR");
    case ODF_DataType_Binary: return silt_buf_puts(out, "BLOB");
    case ODF_DataType_Date: return silt_buf_puts(out, "DATE");
    case ODF_DataType_Null: /* DuckDB's "NULL" type exists, but every table, view and
                             * result column of that type becomes INTEGER (and
                             * read_csv treats it as VARCHAR): use INTEGER directly */
        return silt_buf_puts(out, "INTEGER");
    case ODF_DataType_Duration: return silt_buf_puts(out, "INTERVAL");
    case ODF_DataType_Decimal: {
        const odf_DataTypeDecimal *d = t->value;
        if (d->precision < 1 || d->precision > 38)
            return silt_err(SILT_EUNSUPPORTED, "%s: Decimal precision %u is outside 1..38", where,
                            (unsigned)d->precision);
        if (d->scale < 0 || (uint32_t)d->scale > d->precision)
            return silt_err(SILT_EUNSUPPORTED, "%s: Decimal scale %d is outside 0..%u", where, (int)d->scale,
                            (unsigned)d->precision);
        return silt_buf_printf(out, "DECIMAL(%u,%d)", (unsigned)d->precision, (int)d->scale);
    }
    case ODF_DataType_Time: {
        const odf_DataTypeTime *tm = t->value;
        if (tm->has_unit && !valid_unit(tm->unit))
            return silt_err(SILT_EINVAL, "%s: invalid Time unit %d", where, (int)tm->unit);
        return silt_buf_puts(out, tm->has_unit && tm->unit == ODF_TimeUnit_Nanosecond ? "TIME_NS" : "TIME");
    }
    case ODF_DataType_Timestamp: {
        const odf_DataTypeTimestamp *ts = t->value;
        int32_t unit = ts->has_unit ? ts->unit : ODF_TimeUnit_Millisecond;
        if (!valid_unit(unit))
            return silt_err(SILT_EINVAL, "%s: invalid Timestamp unit %d", where, (int)unit);
        if (!tz_is_utc(ts->timezone))
            return silt_buf_puts(out, "TIMESTAMPTZ");
        static const char *const names[] = {"TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP", "TIMESTAMP_NS"};
        return silt_buf_puts(out, names[unit]);
    }
    case ODF_DataType_List: {
        const odf_DataTypeList *l = t->value;
        int rc = to_duckdb(out, &l->item_type, where, depth + 1);
        if (rc)
            return rc;
        if (l->has_fixed_length)
            return silt_buf_printf(out, "[%llu]", (unsigned long long)l->fixed_length);
        return silt_buf_puts(out, "[]");
    }
    case ODF_DataType_Map: {
        const odf_DataTypeMap *m = t->value;
        int rc = silt_buf_puts(out, "MAP(");
        if (!rc)
            rc = to_duckdb(out, &m->key_type, where, depth + 1);
        if (!rc)
            rc = silt_buf_puts(out, ", ");
        if (!rc)
            rc = to_duckdb(out, &m->value_type, where, depth + 1);
        return rc ? rc : silt_buf_putc(out, ')');
    }
    case ODF_DataType_Struct: {
        const odf_DataTypeStruct *s = t->value;
        if (s->fields.n == 0)
            return silt_err(SILT_EUNSUPPORTED, "%s: DuckDB has no STRUCT without fields", where);
        int rc = silt_buf_puts(out, "STRUCT(");
        for (size_t i = 0; !rc && i < s->fields.n; i++) {
            const odf_DataField *f = s->fields.items[i];
            if (!f || !f->name)
                return silt_err(SILT_EINVAL, "%s: struct field %zu has no name", where, i);
            if (i)
                rc = silt_buf_puts(out, ", ");
            if (!rc)
                rc = put_ident(out, f->name);
            if (!rc)
                rc = silt_buf_putc(out, ' ');
            if (!rc)
                rc = to_duckdb(out, &f->type, where, depth + 1);
        }
        return rc ? rc : silt_buf_putc(out, ')');
    }
    }
    return silt_err(SILT_EINVAL, "%s: unknown data type variant %d", where, t->type);
}

int silt_schema_type_to_duckdb(silt_buf *out, const odf_union *data_type)
{
    return to_duckdb(out, data_type, "data type", 0);
}

int silt_schema_to_duckdb_columns(silt_buf *out, const odf_DataSchema *schema)
{
    if (!schema)
        return silt_err(SILT_EINVAL, "schema: missing");
    if (schema->fields.n == 0)
        return silt_err(SILT_EINVAL, "schema: no fields");
    for (size_t i = 0; i < schema->fields.n; i++) {
        const odf_DataField *f = schema->fields.items[i];
        if (!f || !f->name || !*f->name)
            return silt_err(SILT_EINVAL, "schema field %zu: missing name", i);
        char where[160];
        snprintf(where, sizeof where, "schema field '%.120s'", f->name);
        int rc = i ? silt_buf_puts(out, ", ") : 0;
        if (!rc)
            rc = put_ident(out, f->name);
        if (!rc)
            rc = silt_buf_putc(out, ' ');
        if (!rc)
            rc = to_duckdb(out, &f->type, where, 0);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* description and equality                                            */

static int describe(silt_buf *out, const odf_union *t, int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return silt_buf_puts(out, "...");
    if (!valid_variant(t))
        return silt_buf_puts(out, "?");
    int rc = 0;
    switch (t->type) {
    case ODF_DataType_Option:
        rc = silt_buf_puts(out, "Option<");
        if (!rc)
            rc = describe(out, &((const odf_DataTypeOption *)t->value)->inner, depth + 1);
        return rc ? rc : silt_buf_putc(out, '>');
    case ODF_DataType_Decimal: {
        const odf_DataTypeDecimal *d = t->value;
        return silt_buf_printf(out, "Decimal(%u, %d)", (unsigned)d->precision, (int)d->scale);
    }
    case ODF_DataType_Binary: {
        const odf_DataTypeBinary *b = t->value;
        if (b->has_fixed_length)
            return silt_buf_printf(out, "Binary(%llu)", (unsigned long long)b->fixed_length);
        return silt_buf_puts(out, "Binary");
    }
    case ODF_DataType_Time:
    case ODF_DataType_Duration: {
        /* Time and Duration share the layout {has_unit, unit} */
        const odf_DataTypeTime *tm = t->value;
        int32_t u = tm->has_unit ? tm->unit : ODF_TimeUnit_Millisecond;
        return silt_buf_printf(out, "%s(%s)", VARIANT_NAMES[t->type], valid_unit(u) ? UNIT_NAMES[u] : "?");
    }
    case ODF_DataType_Timestamp: {
        const odf_DataTypeTimestamp *ts = t->value;
        int32_t u = ts->has_unit ? ts->unit : ODF_TimeUnit_Millisecond;
        return silt_buf_printf(out, "Timestamp(%s, %s)", valid_unit(u) ? UNIT_NAMES[u] : "?",
                               ts->timezone ? ts->timezone : "UTC");
    }
    case ODF_DataType_List: {
        const odf_DataTypeList *l = t->value;
        rc = silt_buf_puts(out, "List<");
        if (!rc)
            rc = describe(out, &l->item_type, depth + 1);
        if (!rc && l->has_fixed_length)
            rc = silt_buf_printf(out, "; %llu", (unsigned long long)l->fixed_length);
        return rc ? rc : silt_buf_putc(out, '>');
    }
    case ODF_DataType_Map: {
        const odf_DataTypeMap *m = t->value;
        rc = silt_buf_puts(out, "Map<");
        if (!rc)
            rc = describe(out, &m->key_type, depth + 1);
        if (!rc)
            rc = silt_buf_puts(out, ", ");
        if (!rc)
            rc = describe(out, &m->value_type, depth + 1);
        return rc ? rc : silt_buf_putc(out, '>');
    }
    case ODF_DataType_Struct: {
        const odf_DataTypeStruct *s = t->value;
        rc = silt_buf_puts(out, "Struct<");
        for (size_t i = 0; !rc && i < s->fields.n; i++) {
            const odf_DataField *f = s->fields.items[i];
            rc = silt_buf_printf(out, "%s%s: ", i ? ", " : "", f && f->name ? f->name : "?");
            if (!rc)
                rc = describe(out, f ? &f->type : NULL, depth + 1);
        }
        return rc ? rc : silt_buf_putc(out, '>');
    }
    default:
        return silt_buf_puts(out, VARIANT_NAMES[t->type]);
    }
}

int silt_schema_type_describe(silt_buf *out, const odf_union *data_type)
{
    return describe(out, data_type, 0);
}

int silt_schema_describe(silt_buf *out, const odf_DataSchema *schema)
{
    if (!schema)
        return silt_buf_puts(out, "");
    int rc = 0;
    for (size_t i = 0; !rc && i < schema->fields.n; i++) {
        const odf_DataField *f = schema->fields.items[i];
        rc = silt_buf_printf(out, "%s%s: ", i ? ", " : "", f && f->name ? f->name : "?");
        if (!rc)
            rc = describe(out, f ? &f->type : NULL, 0);
    }
    return rc;
}

bool silt_schema_equal(const odf_DataSchema *a, const odf_DataSchema *b)
{
    if (!a || !b)
        return a == b;
    if (a->fields.n != b->fields.n)
        return false;
    for (size_t i = 0; i < a->fields.n; i++) {
        const odf_DataField *fa = a->fields.items[i], *fb = b->fields.items[i];
        if (!fa || !fb) {
            if (fa != fb)
                return false;
            continue;
        }
        if (!fa->name || !fb->name ? fa->name != fb->name : strcmp(fa->name, fb->name) != 0)
            return false;
        if (!odf_data_type_equal(&fa->type, &fb->type))
            return false;
    }
    return true;
}

/* ------------------------------------------------------------------ */
/* Spark DDL                                                           */

typedef struct ddl_p {
    const char *s;
    size_t i;
    silt_arena *a;
    int depth;
    char msg[200]; /* detail of the last SILT_EINVAL */
} ddl_p;

static int ddl_fail(ddl_p *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int ddl_fail(ddl_p *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, sizeof p->msg, fmt, ap);
    va_end(ap);
    return SILT_EINVAL;
}

static void ddl_ws(ddl_p *p)
{
    while (p->s[p->i] && isspace((unsigned char)p->s[p->i]))
        p->i++;
}

static bool is_word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Next word [A-Za-z0-9_]+ after whitespace; *n = 0 when there is none. */
static const char *ddl_word(ddl_p *p, size_t *n)
{
    ddl_ws(p);
    const char *w = p->s + p->i;
    size_t k = 0;
    while (is_word_char(w[k]))
        k++;
    p->i += k;
    *n = k;
    return w;
}

static bool kw(const char *w, size_t n, const char *k)
{
    return strlen(k) == n && strncasecmp(w, k, n) == 0;
}

/* Description of what is at the cursor, for "expected X at ..." messages. */
static const char *ddl_here(ddl_p *p)
{
    return p->s[p->i] ? p->s + p->i : "end of entry";
}

static int ddl_expect(ddl_p *p, char c, const char *after)
{
    ddl_ws(p);
    if (p->s[p->i] != c)
        return ddl_fail(p, "expected '%c' after %s, found '%.40s'", c, after, ddl_here(p));
    p->i++;
    return 0;
}

static int ddl_number(ddl_p *p, const char *what, long *out)
{
    ddl_ws(p);
    size_t k = 0;
    long v = 0;
    while (isdigit((unsigned char)p->s[p->i + k])) {
        if (k >= 9)
            return ddl_fail(p, "%s is too large", what);
        v = v * 10 + (p->s[p->i + k] - '0');
        k++;
    }
    if (!k)
        return ddl_fail(p, "expected a number for %s, found '%.40s'", what, ddl_here(p));
    p->i += k;
    *out = v;
    return 0;
}

/* Name: `quoted` (`` escapes a backtick) or a bare run of characters up to
 * whitespace or ':' (and '<' '>' ',' inside STRUCT<>). Arena copy. */
static int ddl_name(ddl_p *p, bool in_struct, char **name, size_t *len)
{
    ddl_ws(p);
    const char *s = p->s;
    if (s[p->i] == '`') {
        size_t j = p->i + 1, n = 0;
        for (;; j++) {
            if (!s[j])
                return ddl_fail(p, "unterminated quoted name");
            if (s[j] == '`') {
                if (s[j + 1] != '`')
                    break;
                j++;
            }
            n++;
        }
        char *buf = silt_arena_alloc(p->a, n + 1);
        if (!buf)
            return SILT_ENOMEM;
        size_t k = 0;
        for (size_t q = p->i + 1; q < j; q++) {
            buf[k++] = s[q];
            if (s[q] == '`')
                q++;
        }
        p->i = j + 1;
        if (n == 0)
            return ddl_fail(p, "empty quoted name");
        *name = buf;
        *len = n;
        return 0;
    }
    size_t j = p->i;
    while (s[j] && !isspace((unsigned char)s[j]) && s[j] != ':' &&
           !(in_struct && (s[j] == '<' || s[j] == '>' || s[j] == ',')))
        j++;
    if (j == p->i)
        return ddl_fail(p, in_struct ? "missing STRUCT field name at '%.40s'" : "missing column name%.0s",
                        ddl_here(p));
    *name = silt_arena_strndup(p->a, s + p->i, j - p->i);
    if (!*name)
        return SILT_ENOMEM;
    *len = j - p->i;
    p->i = j;
    return 0;
}

static int ddl_type(ddl_p *p, odf_union *out);

/* Optional "NOT NULL"; sets *not_null. */
static int ddl_not_null(ddl_p *p, bool *not_null)
{
    size_t save = p->i, n;
    const char *w = ddl_word(p, &n);
    *not_null = false;
    if (!kw(w, n, "NOT")) {
        p->i = save;
        return 0;
    }
    w = ddl_word(p, &n);
    if (!kw(w, n, "NULL"))
        return ddl_fail(p, "expected NULL after NOT");
    *not_null = true;
    return 0;
}

/* Element type of ARRAY<>/MAP<> values/STRUCT fields: Option-wrapped. */
static int ddl_nullable_type(ddl_p *p, odf_union *out)
{
    int rc = ddl_type(p, out);
    return rc ? rc : wrap_option(p->a, out, true);
}

static int ddl_struct(ddl_p *p, odf_union *out)
{
    int rc = ddl_expect(p, '<', "STRUCT");
    if (rc)
        return rc;
    field_list fl = {0};
    ddl_ws(p);
    if (p->s[p->i] == '>')
        return ddl_fail(p, "STRUCT needs at least one field");
    for (;;) {
        char *name;
        size_t len;
        if ((rc = ddl_name(p, true, &name, &len)))
            return rc;
        if (field_list_has(&fl, name, len))
            return ddl_fail(p, "duplicate STRUCT field '%s'", name);
        ddl_ws(p);
        if (p->s[p->i] == ':')
            p->i++;
        odf_DataField *f = field_push(p->a, &fl, name, len);
        if (!f)
            return SILT_ENOMEM;
        if ((rc = ddl_type(p, &f->type)))
            return rc;
        bool not_null;
        if ((rc = ddl_not_null(p, &not_null)) || (rc = wrap_option(p->a, &f->type, !not_null)))
            return rc;
        ddl_ws(p);
        if (p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->s[p->i] == '>') {
            p->i++;
            break;
        }
        return ddl_fail(p, "expected ',' or '>' in STRUCT, found '%.40s'", ddl_here(p));
    }
    odf_DataTypeStruct *st = type_new(p->a, out, ODF_DataType_Struct);
    if (!st)
        return SILT_ENOMEM;
    field_list_to_vec(&fl, &st->fields);
    return 0;
}

static int ddl_type(ddl_p *p, odf_union *out)
{
    if (++p->depth > SCHEMA_MAX_DEPTH)
        return ddl_fail(p, "type nested deeper than %d levels", SCHEMA_MAX_DEPTH);
    size_t n;
    const char *w = ddl_word(p, &n);
    int rc = 0;
    if (n == 0) {
        if (!p->s[p->i])
            rc = ddl_fail(p, "missing type");
        else
            rc = ddl_fail(p, "expected a type, found '%.40s'", p->s + p->i);
        goto done;
    }
    static const struct {
        const char *name;
        uint8_t variant;
        bool length; /* accepts an optional (n) */
    } simple[] = {
        {"STRING", ODF_DataType_String, false},   {"VARCHAR", ODF_DataType_String, true},
        {"CHAR", ODF_DataType_String, true},      {"TEXT", ODF_DataType_String, false},
        {"INT", ODF_DataType_Int32, false},       {"INTEGER", ODF_DataType_Int32, false},
        {"BIGINT", ODF_DataType_Int64, false},    {"LONG", ODF_DataType_Int64, false},
        {"SMALLINT", ODF_DataType_Int16, false},  {"SHORT", ODF_DataType_Int16, false},
        {"TINYINT", ODF_DataType_Int8, false},    {"BYTE", ODF_DataType_Int8, false},
        {"BOOLEAN", ODF_DataType_Bool, false},    {"BOOL", ODF_DataType_Bool, false},
        {"FLOAT", ODF_DataType_Float32, false},   {"REAL", ODF_DataType_Float32, false},
        {"DOUBLE", ODF_DataType_Float64, false},  {"DATE", ODF_DataType_Date, false},
        {"BINARY", ODF_DataType_Binary, false},
    };
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++) {
        if (!kw(w, n, simple[k].name))
            continue;
        if (!type_new(p->a, out, simple[k].variant)) {
            rc = SILT_ENOMEM;
            goto done;
        }
        ddl_ws(p);
        if (simple[k].length && p->s[p->i] == '(') {
            long len;
            p->i++;
            if ((rc = ddl_number(p, "the length", &len)) || (rc = ddl_expect(p, ')', "the length")))
                goto done;
            if (len < 1)
                rc = ddl_fail(p, "length must be positive");
        }
        goto done;
    }
    if (kw(w, n, "DECIMAL") || kw(w, n, "NUMERIC") || kw(w, n, "DEC")) {
        long prec = 10, scale = 0;
        ddl_ws(p);
        if (p->s[p->i] == '(') {
            p->i++;
            if ((rc = ddl_number(p, "DECIMAL precision", &prec)))
                goto done;
            ddl_ws(p);
            if (p->s[p->i] == ',') {
                p->i++;
                if ((rc = ddl_number(p, "DECIMAL scale", &scale)))
                    goto done;
            }
            if ((rc = ddl_expect(p, ')', "DECIMAL arguments")))
                goto done;
        }
        if (prec < 1 || prec > 38)
            rc = ddl_fail(p, "DECIMAL precision %ld is outside 1..38", prec);
        else if (scale > prec)
            rc = ddl_fail(p, "DECIMAL scale %ld is greater than precision %ld", scale, prec);
        else
            rc = mk_decimal(p->a, out, (uint32_t)prec, (int32_t)scale);
        goto done;
    }
    if (kw(w, n, "TIMESTAMP")) {
        rc = mk_timestamp(p->a, out, ODF_TimeUnit_Millisecond);
        goto done;
    }
    if (kw(w, n, "ARRAY")) {
        odf_DataTypeList *l = type_new(p->a, out, ODF_DataType_List);
        if (!l)
            rc = SILT_ENOMEM;
        if (!rc)
            rc = ddl_expect(p, '<', "ARRAY");
        if (!rc)
            rc = ddl_nullable_type(p, &l->item_type);
        if (!rc)
            rc = ddl_expect(p, '>', "ARRAY element type");
        goto done;
    }
    if (kw(w, n, "MAP")) {
        odf_DataTypeMap *m = type_new(p->a, out, ODF_DataType_Map);
        if (!m)
            rc = SILT_ENOMEM;
        if (!rc)
            rc = ddl_expect(p, '<', "MAP");
        if (!rc)
            rc = ddl_type(p, &m->key_type);
        if (!rc)
            rc = ddl_expect(p, ',', "MAP key type");
        if (!rc)
            rc = ddl_nullable_type(p, &m->value_type);
        if (!rc)
            rc = ddl_expect(p, '>', "MAP value type");
        goto done;
    }
    if (kw(w, n, "STRUCT")) {
        rc = ddl_struct(p, out);
        goto done;
    }
    rc = ddl_fail(p, "unknown type '%.*s'", (int)(n > 60 ? 60 : n), w);
done:
    p->depth--;
    return rc;
}

int silt_schema_from_ddl(silt_arena *a, const odf_strvec *ddl, odf_DataSchema **out)
{
    *out = NULL;
    if (!ddl || ddl->n == 0)
        return silt_err(SILT_EINVAL, "ddlSchema: no columns");
    field_list fl = {0};
    for (size_t idx = 0; idx < ddl->n; idx++) {
        const char *entry = ddl->items[idx] ? ddl->items[idx] : "";
        ddl_p p = {.s = entry, .a = a};
        char *name = NULL;
        size_t len = 0;
        odf_union t = {0};
        bool not_null = false;
        int rc = ddl_name(&p, false, &name, &len);
        if (!rc && field_list_has(&fl, name, len))
            rc = ddl_fail(&p, "duplicate column '%s'", name);
        if (!rc) {
            ddl_ws(&p);
            if (entry[p.i] == ':')
                p.i++;
            rc = ddl_type(&p, &t);
        }
        if (!rc)
            rc = ddl_not_null(&p, &not_null);
        if (!rc) {
            ddl_ws(&p);
            if (entry[p.i])
                rc = ddl_fail(&p, "unexpected '%.40s'", entry + p.i);
        }
        if (!rc)
            rc = wrap_option(a, &t, !not_null);
        odf_DataField *f = NULL;
        if (!rc && !(f = field_push(a, &fl, name, len)))
            rc = SILT_ENOMEM;
        if (rc == SILT_ENOMEM)
            return rc;
        if (rc)
            return silt_err(rc, "ddlSchema[%zu] '%.200s': %s", idx, entry, p.msg);
        f->type = t;
    }
    return schema_from_list(a, &fl, out);
}

/* ------------------------------------------------------------------ */
/* Foundry field lists                                                 */

static int fd_type(silt_arena *a, const json_t *obj, const char *path, bool allow_option, odf_union *out,
                   int depth);

static int fd_fields(silt_arena *a, const json_t *arr, const char *path, int depth, field_list *fl)
{
    /* path is "fields" at the top level, "<parent>.subSchemas" below */
    if (!json_is_array(arr))
        return silt_err(SILT_EINVAL, "%s: expected an array of fields", path);
    size_t i;
    const json_t *f;
    json_array_foreach(arr, i, f) {
        char fpath[512];
        if (!json_is_object(f))
            return silt_err(SILT_EINVAL, "%s[%zu]: expected an object", path, i);
        const json_t *jn = json_object_get(f, "name");
        if (!json_is_string(jn) || json_string_length(jn) == 0)
            return silt_err(SILT_EINVAL, "%s[%zu]: missing 'name'", path, i);
        const char *name = json_string_value(jn);
        snprintf(fpath, sizeof fpath, "%s[%zu] '%.100s'", path, i, name);
        if (field_list_has(fl, name, json_string_length(jn)))
            return silt_err(SILT_EINVAL, "%s: duplicate field name", fpath);
        odf_DataField *df = field_push(a, fl, name, json_string_length(jn));
        if (!df)
            return SILT_ENOMEM;
        int rc = fd_type(a, f, fpath, true, &df->type, depth);
        if (rc)
            return rc;
    }
    return 0;
}

static int fd_child(silt_arena *a, const json_t *obj, const char *key, const char *path, bool allow_option,
                    odf_union *out, int depth)
{
    char cpath[512];
    snprintf(cpath, sizeof cpath, "%s.%s", path, key);
    const json_t *c = json_object_get(obj, key);
    if (!c)
        return silt_err(SILT_EINVAL, "%s: missing '%s'", path, key);
    return fd_type(a, c, cpath, allow_option, out, depth + 1);
}

static int fd_type(silt_arena *a, const json_t *obj, const char *path, bool allow_option, odf_union *out,
                   int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return silt_err(SILT_EINVAL, "%s: type nested deeper than %d levels", path, SCHEMA_MAX_DEPTH);
    if (!json_is_object(obj))
        return silt_err(SILT_EINVAL, "%s: expected an object", path);
    const json_t *jt = json_object_get(obj, "type");
    if (!json_is_string(jt))
        return silt_err(SILT_EINVAL, "%s: missing 'type'", path);
    const char *ty = json_string_value(jt);
    const json_t *jnull = json_object_get(obj, "nullable");
    bool nullable = true;
    if (jnull) {
        if (!json_is_boolean(jnull))
            return silt_err(SILT_EINVAL, "%s: 'nullable' must be true or false", path);
        nullable = json_is_true(jnull);
    }
    static const struct {
        const char *name;
        uint8_t variant;
    } simple[] = {
        {"BOOLEAN", ODF_DataType_Bool},   {"BYTE", ODF_DataType_Int8},      {"SHORT", ODF_DataType_Int16},
        {"INTEGER", ODF_DataType_Int32},  {"LONG", ODF_DataType_Int64},     {"FLOAT", ODF_DataType_Float32},
        {"DOUBLE", ODF_DataType_Float64}, {"STRING", ODF_DataType_String},  {"BINARY", ODF_DataType_Binary},
        {"DATE", ODF_DataType_Date},
    };
    int rc = 0;
    bool done = false;
    for (size_t k = 0; !done && k < sizeof simple / sizeof simple[0]; k++) {
        if (strcasecmp(ty, simple[k].name) == 0) {
            rc = silt_schema_type_simple(a, out, simple[k].variant);
            done = true;
        }
    }
    if (done) {
        /* nothing more */
    } else if (strcasecmp(ty, "TIMESTAMP") == 0) {
        rc = mk_timestamp(a, out, ODF_TimeUnit_Millisecond);
    } else if (strcasecmp(ty, "DECIMAL") == 0) {
        const json_t *jp = json_object_get(obj, "precision"), *js = json_object_get(obj, "scale");
        if (!json_is_integer(jp) || !json_is_integer(js))
            return silt_err(SILT_EINVAL, "%s: DECIMAL needs integer 'precision' and 'scale'", path);
        json_int_t pr = json_integer_value(jp), sc = json_integer_value(js);
        if (pr < 1 || pr > 38)
            return silt_err(SILT_EINVAL, "%s: DECIMAL precision %lld is outside 1..38", path, (long long)pr);
        if (sc < 0 || sc > pr)
            return silt_err(SILT_EINVAL, "%s: DECIMAL scale %lld is outside 0..%lld", path, (long long)sc,
                            (long long)pr);
        rc = mk_decimal(a, out, (uint32_t)pr, (int32_t)sc);
    } else if (strcasecmp(ty, "ARRAY") == 0) {
        odf_DataTypeList *l = type_new(a, out, ODF_DataType_List);
        if (!l)
            return SILT_ENOMEM;
        rc = fd_child(a, obj, "arraySubtype", path, true, &l->item_type, depth);
    } else if (strcasecmp(ty, "MAP") == 0) {
        odf_DataTypeMap *m = type_new(a, out, ODF_DataType_Map);
        if (!m)
            return SILT_ENOMEM;
        rc = fd_child(a, obj, "mapKeyType", path, false, &m->key_type, depth);
        if (!rc)
            rc = fd_child(a, obj, "mapValueType", path, true, &m->value_type, depth);
    } else if (strcasecmp(ty, "STRUCT") == 0) {
        const json_t *subs = json_object_get(obj, "subSchemas");
        char spath[512];
        snprintf(spath, sizeof spath, "%s.subSchemas", path);
        if (!subs)
            return silt_err(SILT_EINVAL, "%s: STRUCT needs 'subSchemas'", path);
        if (json_is_array(subs) && json_array_size(subs) == 0)
            return silt_err(SILT_EINVAL, "%s: STRUCT needs at least one field", path);
        field_list fl = {0};
        if ((rc = fd_fields(a, subs, spath, depth + 1, &fl)))
            return rc;
        odf_DataTypeStruct *st = type_new(a, out, ODF_DataType_Struct);
        if (!st)
            return SILT_ENOMEM;
        field_list_to_vec(&fl, &st->fields);
    } else {
        return silt_err(SILT_EINVAL, "%s: unknown type '%.60s'", path, ty);
    }
    if (rc)
        return rc;
    return wrap_option(a, out, nullable && allow_option);
}

int silt_schema_from_foundry_json(silt_arena *a, const json_t *fields, odf_DataSchema **out)
{
    *out = NULL;
    if (!json_is_array(fields))
        return silt_err(SILT_EINVAL, "fields: expected an array of fields");
    if (json_array_size(fields) == 0)
        return silt_err(SILT_EINVAL, "fields: no fields");
    field_list fl = {0};
    int rc = fd_fields(a, fields, "fields", 0, &fl);
    return rc ? rc : schema_from_list(a, &fl, out);
}

/* ------------------------------------------------------------------ */
/* DuckDB -> ODF                                                       */

static const char *duck_type_name(duckdb_type id)
{
    switch (id) {
    case DUCKDB_TYPE_UNION: return "UNION";
    case DUCKDB_TYPE_BIT: return "BIT";
    case DUCKDB_TYPE_TIME_TZ: return "TIME WITH TIME ZONE";
    case DUCKDB_TYPE_BIGNUM: return "BIGNUM";
    case DUCKDB_TYPE_ANY: return "ANY";
    case DUCKDB_TYPE_STRING_LITERAL: return "STRING_LITERAL";
    case DUCKDB_TYPE_INTEGER_LITERAL: return "INTEGER_LITERAL";
    case DUCKDB_TYPE_INVALID: return "INVALID";
    default: return "(unknown)";
    }
}

typedef struct duck_ctx {
    silt_arena *a;
    const char *what;   /* "table 't'" or "query" */
    const char *column; /* top-level column name */
    bool invalid;       /* met a type the C API reports as INVALID (e.g. TIME_NS) */
} duck_ctx;

static int from_duck(duck_ctx *c, duckdb_logical_type lt, odf_union *out, int depth);

/* Converts a child type handle (owned: destroyed here), Option-wrapped if asked. */
static int from_duck_child(duck_ctx *c, duckdb_logical_type child, bool nullable, odf_union *out, int depth)
{
    if (!child)
        return silt_err(SILT_EINTERNAL, "%s column '%s': cannot read a nested type", c->what, c->column);
    int rc = from_duck(c, child, out, depth + 1);
    duckdb_destroy_logical_type(&child);
    return rc ? rc : wrap_option(c->a, out, nullable);
}

static int from_duck(duck_ctx *c, duckdb_logical_type lt, odf_union *out, int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return silt_err(SILT_EUNSUPPORTED, "%s column '%s': type nested deeper than %d levels", c->what,
                        c->column, SCHEMA_MAX_DEPTH);
    duckdb_type id = duckdb_get_type_id(lt);
    uint8_t simple = 0;
    switch (id) {
    case DUCKDB_TYPE_BOOLEAN: simple = ODF_DataType_Bool; break;
    case DUCKDB_TYPE_TINYINT: simple = ODF_DataType_Int8; break;
    case DUCKDB_TYPE_SMALLINT: simple = ODF_DataType_Int16; break;
    case DUCKDB_TYPE_INTEGER: simple = ODF_DataType_Int32; break;
    case DUCKDB_TYPE_BIGINT: simple = ODF_DataType_Int64; break;
    case DUCKDB_TYPE_UTINYINT: simple = ODF_DataType_UInt8; break;
    case DUCKDB_TYPE_USMALLINT: simple = ODF_DataType_UInt16; break;
    case DUCKDB_TYPE_UINTEGER: simple = ODF_DataType_UInt32; break;
    case DUCKDB_TYPE_UBIGINT: simple = ODF_DataType_UInt64; break;
    case DUCKDB_TYPE_FLOAT: simple = ODF_DataType_Float32; break;
    case DUCKDB_TYPE_DOUBLE: simple = ODF_DataType_Float64; break;
    case DUCKDB_TYPE_VARCHAR: /* also JSON, an alias of VARCHAR */
    case DUCKDB_TYPE_ENUM: simple = ODF_DataType_String; break;
    case DUCKDB_TYPE_BLOB: simple = ODF_DataType_Binary; break;
    case DUCKDB_TYPE_DATE: simple = ODF_DataType_Date; break;
    case DUCKDB_TYPE_SQLNULL: simple = ODF_DataType_Null; break;
    case DUCKDB_TYPE_TIMESTAMP_S: return mk_timestamp(c->a, out, ODF_TimeUnit_Second);
    case DUCKDB_TYPE_TIMESTAMP_MS: return mk_timestamp(c->a, out, ODF_TimeUnit_Millisecond);
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_TZ: return mk_timestamp(c->a, out, ODF_TimeUnit_Microsecond);
    case DUCKDB_TYPE_TIMESTAMP_NS: return mk_timestamp(c->a, out, ODF_TimeUnit_Nanosecond);
    case DUCKDB_TYPE_TIME:
    case DUCKDB_TYPE_TIME_NS: {
        odf_DataTypeTime *t = type_new(c->a, out, ODF_DataType_Time);
        if (!t)
            return SILT_ENOMEM;
        t->has_unit = true;
        t->unit = id == DUCKDB_TYPE_TIME ? ODF_TimeUnit_Microsecond : ODF_TimeUnit_Nanosecond;
        return 0;
    }
    case DUCKDB_TYPE_INTERVAL: {
        odf_DataTypeDuration *d = type_new(c->a, out, ODF_DataType_Duration);
        if (!d)
            return SILT_ENOMEM;
        d->has_unit = true;
        d->unit = ODF_TimeUnit_Microsecond;
        return 0;
    }
    case DUCKDB_TYPE_UUID: {
        odf_DataTypeBinary *b = type_new(c->a, out, ODF_DataType_Binary);
        if (!b)
            return SILT_ENOMEM;
        b->has_fixed_length = true;
        b->fixed_length = 16;
        return 0;
    }
    case DUCKDB_TYPE_DECIMAL:
        return mk_decimal(c->a, out, duckdb_decimal_width(lt), duckdb_decimal_scale(lt));
    case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UHUGEINT: return mk_decimal(c->a, out, 38, 0);
    case DUCKDB_TYPE_LIST:
    case DUCKDB_TYPE_ARRAY: {
        odf_DataTypeList *l = type_new(c->a, out, ODF_DataType_List);
        if (!l)
            return SILT_ENOMEM;
        duckdb_logical_type child =
            id == DUCKDB_TYPE_LIST ? duckdb_list_type_child_type(lt) : duckdb_array_type_child_type(lt);
        return from_duck_child(c, child, true, &l->item_type, depth);
    }
    case DUCKDB_TYPE_MAP: {
        odf_DataTypeMap *m = type_new(c->a, out, ODF_DataType_Map);
        if (!m)
            return SILT_ENOMEM;
        int rc = from_duck_child(c, duckdb_map_type_key_type(lt), false, &m->key_type, depth);
        return rc ? rc : from_duck_child(c, duckdb_map_type_value_type(lt), true, &m->value_type, depth);
    }
    case DUCKDB_TYPE_STRUCT: {
        idx_t n = duckdb_struct_type_child_count(lt);
        field_list fl = {0};
        for (idx_t i = 0; i < n; i++) {
            char *name = duckdb_struct_type_child_name(lt, i);
            if (!name)
                return silt_err(SILT_EINTERNAL, "%s column '%s': struct field %llu has no name", c->what,
                                c->column, (unsigned long long)i);
            odf_DataField *f = field_push(c->a, &fl, name, strlen(name));
            duckdb_free(name);
            if (!f)
                return SILT_ENOMEM;
            int rc = from_duck_child(c, duckdb_struct_type_child_type(lt, i), true, &f->type, depth);
            if (rc)
                return rc;
        }
        odf_DataTypeStruct *st = type_new(c->a, out, ODF_DataType_Struct);
        if (!st)
            return SILT_ENOMEM;
        field_list_to_vec(&fl, &st->fields);
        return 0;
    }
    case DUCKDB_TYPE_INVALID:
        /* The C API has no id for some types (TIME_NS in 1.4); the caller
         * resolves the column's type text and words the error. */
        c->invalid = true;
        return SILT_EUNSUPPORTED;
    default:
        return silt_err(SILT_EUNSUPPORTED, "%s column '%s': unsupported DuckDB type %s", c->what, c->column,
                        duck_type_name(id));
    }
    return type_new(c->a, out, simple) ? 0 : SILT_ENOMEM;
}

static bool in_list(const char *const *list, const char *name)
{
    for (size_t i = 0; list && list[i]; i++)
        if (strcmp(list[i], name) == 0)
            return true;
    return false;
}

/* Type text of result column `col` of `sql` from DESCRIBE (malloc'd; NULL when
 * it cannot be found). */
static char *describe_type_text(silt_engine *e, const char *sql, idx_t col)
{
    silt_buf q = SILT_BUF_INIT;
    if (silt_buf_printf(&q, "DESCRIBE %s", sql))
        return NULL;
    duckdb_result res;
    char *text = NULL;
    if (duckdb_query(silt_engine_conn(e), q.data, &res) == DuckDBSuccess) {
        if (col < duckdb_row_count(&res) && duckdb_column_count(&res) >= 2) {
            char *v = duckdb_value_varchar(&res, 1, col);
            if (v) {
                text = strdup(v);
                duckdb_free(v);
            }
        }
    }
    duckdb_destroy_result(&res);
    silt_buf_free(&q);
    return text;
}

/* Resolves a column the C API reports as INVALID: TIME_NS maps to
 * Time{Nanosecond}; anything else is SILT_EUNSUPPORTED with the type text. */
static int resolve_invalid(silt_engine *e, duck_ctx *c, const char *sql, idx_t col, bool top_level,
                           odf_union *out)
{
    char *text = describe_type_text(e, sql, col);
    int rc;
    if (top_level && text && strcmp(text, "TIME_NS") == 0) {
        odf_DataTypeTime *t = type_new(c->a, out, ODF_DataType_Time);
        rc = t ? 0 : SILT_ENOMEM;
        if (t) {
            t->has_unit = true;
            t->unit = ODF_TimeUnit_Nanosecond;
        }
    } else {
        rc = silt_err(SILT_EUNSUPPORTED, "%s column '%s': unsupported DuckDB type %s", c->what, c->column,
                      text ? text : "(unknown)");
    }
    free(text);
    return rc;
}

static int schema_of_sql(silt_engine *e, silt_arena *a, const char *sql, const char *what,
                         const char *const *required, odf_DataSchema **out)
{
    duckdb_prepared_statement st = NULL;
    if (duckdb_prepare(silt_engine_conn(e), sql, &st) == DuckDBError) {
        const char *msg = duckdb_prepare_error(st);
        if (!msg)
            msg = "cannot prepare";
        int rc = silt_err(SILT_EINVAL, "%s: %.*s", what, (int)strcspn(msg, "\n"), msg);
        duckdb_destroy_prepare(&st);
        return rc;
    }
    idx_t n = duckdb_prepared_statement_column_count(st);
    field_list fl = {0};
    int rc = 0;
    for (idx_t i = 0; !rc && i < n; i++) {
        const char *name = duckdb_prepared_statement_column_name(st, i);
        if (!name) {
            rc = silt_err(SILT_EINTERNAL, "%s: column %llu has no name", what, (unsigned long long)i);
            break;
        }
        odf_DataField *f = field_push(a, &fl, name, strlen(name));
        duckdb_free((void *)name);
        if (!f) {
            rc = SILT_ENOMEM;
            break;
        }
        duckdb_logical_type lt = duckdb_prepared_statement_column_logical_type(st, i);
        duck_ctx c = {a, what, f->name, false};
        rc = lt ? from_duck(&c, lt, &f->type, 0)
                : silt_err(SILT_EINTERNAL, "%s column '%s': no type", what, f->name);
        bool top_invalid = lt && duckdb_get_type_id(lt) == DUCKDB_TYPE_INVALID;
        if (lt)
            duckdb_destroy_logical_type(&lt);
        if (rc == SILT_EUNSUPPORTED && c.invalid)
            rc = resolve_invalid(e, &c, sql, i, top_invalid, &f->type);
        if (!rc)
            rc = wrap_option(a, &f->type, !in_list(required, f->name));
    }
    duckdb_destroy_prepare(&st);
    if (rc)
        return rc;
    for (size_t i = 0; required && required[i]; i++)
        if (!field_list_has(&fl, required[i], strlen(required[i])))
            return silt_err(SILT_EINVAL, "%s: required column '%s' does not exist", what, required[i]);
    return schema_from_list(a, &fl, out);
}

int silt_schema_from_query(silt_engine *e, silt_arena *a, const char *sql, const char *const *required,
                           odf_DataSchema **out)
{
    *out = NULL;
    return schema_of_sql(e, a, sql, "query", required, out);
}

int silt_schema_from_table(silt_engine *e, silt_arena *a, const char *table, const char *const *required,
                           odf_DataSchema **out)
{
    *out = NULL;
    char *id = silt_sql_ident(table);
    char *what = silt_arena_printf(a, "table '%s'", table);
    silt_buf sql = SILT_BUF_INIT;
    int rc = 0;
    if (!id || !what)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = silt_buf_printf(&sql, "SELECT * FROM %s", id);
    if (!rc)
        rc = schema_of_sql(e, a, sql.data, what, required, out);
    free(id);
    silt_buf_free(&sql);
    return rc;
}
