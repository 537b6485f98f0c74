/* avro_read.c — the table function silt_read_avro(path, schema) (avro.h):
 * one Avro object container file read with Apache Avro C, values resolved
 * to the dataset schema and written into DuckDB vectors.
 *
 * Invariants:
 *  - bind decides everything that can be decided from the header (the
 *    confinement rule, the codec, the writer schema resolution), so a file
 *    that does not fit fails before any row is produced;
 *  - memory is one Avro block (libavro's reader buffer), one decoded record
 *    and one output chunk of duckdb_vector_size() rows;
 *  - one scan runs on one thread (max_threads 1): libavro's reader is not
 *    shared;
 *  - every message names the field ("field 'a.b'") and, after bind, the
 *    record number in the file;
 *  - libavro allocates through capped_alloc: one allocation (a block, a
 *    string or bytes value) is at most SILT_AVRO_MAX_ALLOC, so a corrupt
 *    length fails as an error instead of exhausting memory; what libavro 1.11
 *    loses (the reader of a failed open, a block whose realloc failed) is
 *    freed when the scan ends (the allocations of a scan are tracked). */
#include <avro.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/avro.h"
#include "engine/engine_internal.h"
#include "odf/desc.h"
#include "odf/yaml.h"
#include "util/error.h"

typedef __int128 i128;
typedef unsigned __int128 u128;

typedef struct bind_data {
    silt_arena *a;
    char *path;
    silt_avro_plan *plan;
} bind_data;

/* Every libavro allocation carries this header. While a scan calls libavro
 * (TRACK .. UNTRACK), the allocations made are linked into the scan's list;
 * what is still in it after the reader is closed is what libavro 1.11 lost
 * (the reader of a failed open, a block buffer whose realloc failed), and
 * scan_free frees it. */
typedef struct alloc_hdr {
    struct alloc_hdr *prev, *next;
    bool tracked;
    size_t size;
} __attribute__((aligned(16))) alloc_hdr;

static __thread alloc_hdr *g_tracking; /* the scan's list while it calls libavro, else NULL */
#define TRACK(s) (g_tracking = &(s)->allocs)
#define UNTRACK() (g_tracking = NULL)

static void unlink_hdr(alloc_hdr *h)
{
    if (!h->tracked)
        return;
    h->prev->next = h->next;
    h->next->prev = h->prev;
    h->tracked = false;
}

static void link_hdr(alloc_hdr *h)
{
    h->tracked = g_tracking != NULL;
    if (!h->tracked)
        return;
    h->next = g_tracking->next;
    h->prev = g_tracking;
    g_tracking->next->prev = h;
    g_tracking->next = h;
}

typedef struct scan {
    alloc_hdr allocs; /* sentinel of the list of this scan's libavro allocations */
    avro_file_reader_t reader;
    avro_value_iface_t *iface;
    avro_value_t value;
    bool have_value, done;
    uint64_t record; /* 1-based number of the record being written */
    char err[768];
} scan;

/* ---- DuckDB types of dataset types --------------------------------------------- */

static duckdb_logical_type logical_of(const odf_union *t)
{
    if (t->type == ODF_DataType_Option)
        t = &((const odf_DataTypeOption *)t->value)->inner;
    switch (t->type) {
    case ODF_DataType_Null: return duckdb_create_logical_type(DUCKDB_TYPE_INTEGER);
    case ODF_DataType_Bool: return duckdb_create_logical_type(DUCKDB_TYPE_BOOLEAN);
    case ODF_DataType_Int8: return duckdb_create_logical_type(DUCKDB_TYPE_TINYINT);
    case ODF_DataType_Int16: return duckdb_create_logical_type(DUCKDB_TYPE_SMALLINT);
    case ODF_DataType_UInt8: return duckdb_create_logical_type(DUCKDB_TYPE_UTINYINT);
    case ODF_DataType_UInt16: return duckdb_create_logical_type(DUCKDB_TYPE_USMALLINT);
    case ODF_DataType_UInt32: return duckdb_create_logical_type(DUCKDB_TYPE_UINTEGER);
    case ODF_DataType_UInt64: return duckdb_create_logical_type(DUCKDB_TYPE_UBIGINT);
    case ODF_DataType_Float16: return duckdb_create_logical_type(DUCKDB_TYPE_FLOAT);
    case ODF_DataType_Duration: return duckdb_create_logical_type(DUCKDB_TYPE_INTERVAL);
    case ODF_DataType_Int32: return duckdb_create_logical_type(DUCKDB_TYPE_INTEGER);
    case ODF_DataType_Int64: return duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    case ODF_DataType_Float32: return duckdb_create_logical_type(DUCKDB_TYPE_FLOAT);
    case ODF_DataType_Float64: return duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    case ODF_DataType_String: return duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    case ODF_DataType_Binary: return duckdb_create_logical_type(DUCKDB_TYPE_BLOB);
    case ODF_DataType_Date: return duckdb_create_logical_type(DUCKDB_TYPE_DATE);
    case ODF_DataType_Time: return duckdb_create_logical_type(DUCKDB_TYPE_TIME);
    case ODF_DataType_Decimal: {
        const odf_DataTypeDecimal *d = t->value;
        return duckdb_create_decimal_type((uint8_t)d->precision, (uint8_t)d->scale);
    }
    case ODF_DataType_Timestamp: {
        const odf_DataTypeTimestamp *ts = t->value;
        const char *tz = ts->timezone;
        int unit = ts->has_unit ? ts->unit : ODF_TimeUnit_Millisecond;
        if (tz && strcmp(tz, "UTC") && strcmp(tz, "Etc/UTC") && strcmp(tz, "Z") && strcmp(tz, "+00:00"))
            return duckdb_create_logical_type(DUCKDB_TYPE_TIMESTAMP_TZ);
        static const duckdb_type U[] = {DUCKDB_TYPE_TIMESTAMP_S, DUCKDB_TYPE_TIMESTAMP_MS, DUCKDB_TYPE_TIMESTAMP,
                                        DUCKDB_TYPE_TIMESTAMP_NS};
        return duckdb_create_logical_type(U[unit & 3]);
    }
    case ODF_DataType_List: {
        duckdb_logical_type c = logical_of(&((const odf_DataTypeList *)t->value)->item_type);
        duckdb_logical_type l = duckdb_create_list_type(c);
        duckdb_destroy_logical_type(&c);
        return l;
    }
    case ODF_DataType_Map: {
        const odf_DataTypeMap *m = t->value;
        duckdb_logical_type k = logical_of(&m->key_type), v = logical_of(&m->value_type);
        duckdb_logical_type r = duckdb_create_map_type(k, v);
        duckdb_destroy_logical_type(&k);
        duckdb_destroy_logical_type(&v);
        return r;
    }
    case ODF_DataType_Struct: {
        const odf_DataTypeStruct *s = t->value;
        size_t n = s->fields.n;
        duckdb_logical_type *ts = calloc(n ? n : 1, sizeof *ts);
        const char **names = calloc(n ? n : 1, sizeof *names);
        duckdb_logical_type r = NULL;
        if (ts && names) {
            for (size_t i = 0; i < n; i++) {
                const odf_DataField *f = s->fields.items[i];
                ts[i] = logical_of(&f->type);
                names[i] = f->name;
            }
            r = duckdb_create_struct_type(ts, names, n);
            for (size_t i = 0; i < n; i++)
                duckdb_destroy_logical_type(&ts[i]);
        }
        free(ts);
        free(names);
        return r;
    }
    default: return duckdb_create_logical_type(DUCKDB_TYPE_INVALID); /* resolution refused it already */
    }
}

/* ---- writing values ------------------------------------------------------------ */

static int fail(scan *s, const silt_avro_plan *p, const char *what)
{
    snprintf(s->err, sizeof s->err, "record %llu: field '%s': %s", (unsigned long long)s->record,
             p->path && *p->path ? p->path : "?", what);
    return -1;
}

static int avro_fail(scan *s, const silt_avro_plan *p)
{
    char m[400];
    snprintf(m, sizeof m, "cannot decode: %s", avro_strerror());
    return fail(s, p, m);
}

static void set_null(const silt_avro_plan *p, duckdb_vector vec, idx_t row)
{
    duckdb_vector_ensure_validity_writable(vec);
    duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vec), row);
    if (p->op == SILT_AVRO_R_STRUCT)
        for (size_t i = 0; i < p->n; i++)
            set_null(p->kids[i], duckdb_struct_vector_get_child(vec, i), row);
    else if (p->op == SILT_AVRO_R_LIST || p->op == SILT_AVRO_R_MAP)
        ((duckdb_list_entry *)duckdb_vector_get_data(vec))[row] = (duckdb_list_entry){duckdb_list_vector_get_size(vec), 0};
}

static bool utf8_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        size_t k = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (!k || i + k > n || (k == 2 && c < 0xc2))
            return false;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return false;
        if (k == 3 && ((c == 0xe0 && s[i + 1] < 0xa0) || (c == 0xed && s[i + 1] >= 0xa0)))
            return false;
        if (k == 4 && ((c == 0xf0 && s[i + 1] < 0x90) || c > 0xf4 || (c == 0xf4 && s[i + 1] >= 0x90)))
            return false;
        i += k;
    }
    return true;
}

/* The bytes of a string, bytes, fixed or enum value. */
static int value_bytes(scan *s, const silt_avro_plan *p, avro_value_t *v, const void **buf, size_t *len)
{
    int k = p->w->kind, rc;
    if (k == SILT_AVRO_STRING) {
        const char *c = NULL;
        *len = 0;
        rc = avro_value_get_string(v, &c, len);
        *buf = c;
        if (!rc && *len)
            (*len)--; /* libavro counts the terminating NUL */
    } else if (k == SILT_AVRO_BYTES) {
        rc = avro_value_get_bytes(v, buf, len);
    } else if (k == SILT_AVRO_FIXED) {
        rc = avro_value_get_fixed(v, buf, len);
    } else {
        int idx = -1;
        rc = avro_value_get_enum(v, &idx);
        if (!rc && (idx < 0 || (size_t)idx >= p->w->n))
            return fail(s, p, "enum index out of range");
        if (!rc) {
            *buf = p->w->names[idx];
            *len = strlen(p->w->names[idx]);
        }
    }
    return rc ? avro_fail(s, p) : 0;
}

static int64_t floor_div(int64_t x, int64_t d)
{
    int64_t q = x / d;
    return (x % d != 0 && (x < 0) != (d < 0)) ? q - 1 : q;
}

static int put_decimal(scan *s, const silt_avro_plan *p, avro_value_t *v, void *data, idx_t row)
{
    const void *b;
    size_t n;
    if (value_bytes(s, p, v, &b, &n))
        return -1;
    const unsigned char *u = b;
    u128 acc = n && (u[0] & 0x80) ? ~(u128)0 : 0;
    for (size_t i = 0; i < n; i++) {
        if (n - i > 16 && u[i] != (unsigned char)(acc & 0xff))
            return fail(s, p, "decimal value does not fit in 128 bits");
        acc = (acc << 8) | u[i];
    }
    i128 x = (i128)acc;
    u128 mag = x < 0 ? -(u128)x : (u128)x, lim = 1;
    for (int i = 0; i < p->dec_precision; i++)
        lim *= 10;
    if (mag >= lim)
        return fail(s, p, "decimal value has more digits than the schema's precision");
    switch (p->dec_width) {
    case 2: ((int16_t *)data)[row] = (int16_t)x; break;
    case 4: ((int32_t *)data)[row] = (int32_t)x; break;
    case 8: ((int64_t *)data)[row] = (int64_t)x; break;
    default: ((duckdb_hugeint *)data)[row] = (duckdb_hugeint){(uint64_t)(u128)x, (int64_t)(x >> 64)};
    }
    return 0;
}

static int put(scan *s, const silt_avro_plan *p, avro_value_t *v, duckdb_vector vec, idx_t row);

static int put_nested(scan *s, const silt_avro_plan *p, avro_value_t *v, duckdb_vector vec, idx_t row)
{
    size_t n = 0;
    if (p->op == SILT_AVRO_R_STRUCT) {
        for (size_t i = 0; i < p->n; i++) {
            duckdb_vector c = duckdb_struct_vector_get_child(vec, i);
            avro_value_t f;
            if (p->windex[i] < 0) {
                set_null(p->kids[i], c, row);
                continue;
            }
            if (avro_value_get_by_index(v, (size_t)p->windex[i], &f, NULL))
                return avro_fail(s, p->kids[i]);
            if (put(s, p->kids[i], &f, c, row))
                return -1;
        }
        return 0;
    }
    if (avro_value_get_size(v, &n))
        return avro_fail(s, p);
    idx_t cur = duckdb_list_vector_get_size(vec);
    if (duckdb_list_vector_reserve(vec, cur + n) == DuckDBError || duckdb_list_vector_set_size(vec, cur + n) == DuckDBError)
        return fail(s, p, "out of memory");
    ((duckdb_list_entry *)duckdb_vector_get_data(vec))[row] = (duckdb_list_entry){cur, n};
    duckdb_vector child = duckdb_list_vector_get_child(vec);
    duckdb_vector keys = p->op == SILT_AVRO_R_MAP ? duckdb_struct_vector_get_child(child, 0) : NULL;
    duckdb_vector vals = p->op == SILT_AVRO_R_MAP ? duckdb_struct_vector_get_child(child, 1) : child;
    for (size_t i = 0; i < n; i++) {
        avro_value_t e;
        const char *key = NULL;
        if (avro_value_get_by_index(v, i, &e, &key))
            return avro_fail(s, p);
        if (keys) {
            if (!key || !utf8_ok((const unsigned char *)key, strlen(key)))
                return fail(s, p, "map key is not valid UTF-8");
            duckdb_vector_assign_string_element_len(keys, cur + i, key, strlen(key));
        }
        if (put(s, p->kids[0], &e, vals, cur + i))
            return -1;
    }
    return 0;
}

static int put(scan *s, const silt_avro_plan *p, avro_value_t *v, duckdb_vector vec, idx_t row)
{
    avro_value_t branch;
    if (p->all_null || p->op == SILT_AVRO_R_NULL) {
        set_null(p, vec, row);
        return 0;
    }
    if (p->null_branch >= 0) {
        int d = -1;
        if (avro_value_get_discriminant(v, &d))
            return avro_fail(s, p);
        if (d == p->null_branch) {
            set_null(p, vec, row);
            return 0;
        }
        if (avro_value_get_current_branch(v, &branch))
            return avro_fail(s, p);
        v = &branch;
    }
    if (p->op >= SILT_AVRO_R_LIST)
        return put_nested(s, p, v, vec, row);
    void *data = duckdb_vector_get_data(vec);
    int k = p->w->kind, rc = 0, b = 0;
    int32_t i32 = 0;
    int64_t i64 = 0;
    float f32 = 0;
    double f64 = 0;
    if (k == SILT_AVRO_INT)
        rc = avro_value_get_int(v, &i32), i64 = i32, f32 = (float)i32, f64 = i32;
    else if (k == SILT_AVRO_LONG)
        rc = avro_value_get_long(v, &i64), f32 = (float)i64, f64 = (double)i64;
    else if (k == SILT_AVRO_FLOAT)
        rc = avro_value_get_float(v, &f32), f64 = f32;
    else if (k == SILT_AVRO_DOUBLE)
        rc = avro_value_get_double(v, &f64);
    else if (k == SILT_AVRO_BOOLEAN)
        rc = avro_value_get_boolean(v, &b);
    if (rc)
        return avro_fail(s, p);
    switch (p->op) {
    case SILT_AVRO_R_BOOL: ((bool *)data)[row] = b != 0; return 0;
    case SILT_AVRO_R_I32: ((int32_t *)data)[row] = i32; return 0;
    case SILT_AVRO_R_DATE: ((int32_t *)data)[row] = i32; return 0;
    case SILT_AVRO_R_I64: ((int64_t *)data)[row] = i64; return 0;
    case SILT_AVRO_R_F32: ((float *)data)[row] = f32; return 0;
    case SILT_AVRO_R_F64: ((double *)data)[row] = f64; return 0;
    case SILT_AVRO_R_TIME:
    case SILT_AVRO_R_TS: {
        int64_t m;
        if (__builtin_mul_overflow(i64, p->mul, &m))
            return fail(s, p, "time value out of range of the schema's unit");
        ((int64_t *)data)[row] = floor_div(m, p->div);
        return 0;
    }
    case SILT_AVRO_R_DEC: return put_decimal(s, p, v, data, row);
    case SILT_AVRO_R_STR:
    case SILT_AVRO_R_BLOB: {
        const void *buf;
        size_t n;
        if (value_bytes(s, p, v, &buf, &n))
            return -1;
        if (p->op == SILT_AVRO_R_STR && !utf8_ok(buf, n))
            return fail(s, p, "string is not valid UTF-8");
        duckdb_vector_assign_string_element_len(vec, row, buf, n);
        return 0;
    }
    }
    return fail(s, p, "internal error: unknown read plan");
}

/* ---- the table function --------------------------------------------------------- */

static void bind_free(void *d)
{
    bind_data *b = d;
    if (!b)
        return;
    free(b->path);
    silt_arena_free(b->a);
    free(b);
}

static void scan_free(void *d)
{
    scan *s = d;
    if (!s)
        return;
    TRACK(s);
    if (s->have_value)
        avro_value_decref(&s->value);
    if (s->iface)
        avro_value_iface_decref(s->iface);
    if (s->reader)
        avro_file_reader_close(s->reader);
    UNTRACK();
    while (s->allocs.next != &s->allocs) { /* what libavro lost */
        alloc_hdr *h = s->allocs.next;
        unlink_hdr(h);
        free(h);
    }
    free(s);
}

static char *param(duckdb_bind_info info, idx_t i)
{
    duckdb_value v = duckdb_bind_get_parameter(info, i);
    char *s = v ? duckdb_get_varchar(v) : NULL;
    duckdb_destroy_value(&v);
    return s;
}

/* Everything bind decides; the message is the silt error on failure. */
static int bind_plan(silt_engine *e, bind_data *b, const char *schema_json)
{
    if (!silt_engine_may_read(e, b->path))
        return silt_err(SILT_EINVAL, "%s", SILT_AVRO_REFUSAL);
    silt_avro_header h;
    int rc = silt_avro_header_read(b->a, b->path, &h);
    if (!rc && !silt_avro_codec_supported(h.codec))
        rc = silt_err(SILT_EUNSUPPORTED, "codec '%s' is not supported (Apache Avro C reads null, deflate, snappy "
                                         "and lzma)",
                      h.codec);
    silt_avro_node *w = NULL;
    if (!rc)
        rc = silt_avro_schema_parse(b->a, h.schema, h.schema_len, &w);
    void *r = NULL;
    if (!rc)
        rc = odf_yaml_parse(b->a, schema_json, strlen(schema_json), "schema", &odf_desc_DataSchema, &r);
    if (!rc)
        rc = silt_avro_resolve(b->a, w, r, &b->plan);
    return rc;
}

static void avro_bind(duckdb_bind_info info)
{
    silt_engine *e = duckdb_bind_get_extra_info(info);
    char *path = param(info, 0), *schema_json = param(info, 1);
    bind_data *b = calloc(1, sizeof *b);
    int rc = 0;
    if (!b || !path || !schema_json || !(b->a = silt_arena_new()) || !(b->path = strdup(path)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = bind_plan(e, b, schema_json);
    duckdb_free(path);
    duckdb_free(schema_json);
    if (rc) {
        duckdb_bind_set_error(info, silt_error_last());
        bind_free(b);
        return;
    }
    for (size_t i = 0; i < b->plan->n; i++) {
        duckdb_logical_type t = logical_of(b->plan->kids[i]->type);
        const char *name = b->plan->kids[i]->path;
        duckdb_bind_add_result_column(info, name, t);
        duckdb_destroy_logical_type(&t);
    }
    duckdb_bind_set_bind_data(info, b, bind_free);
}

static void avro_init(duckdb_init_info info)
{
    bind_data *b = duckdb_init_get_bind_data(info);
    scan *s = calloc(1, sizeof *s);
    if (!s) {
        duckdb_init_set_error(info, "out of memory");
        return;
    }
    duckdb_init_set_max_threads(info, 1);
    s->allocs.prev = s->allocs.next = &s->allocs;
    TRACK(s);
    int rc = avro_file_reader(b->path, &s->reader);
    UNTRACK();
    if (rc) {
        s->reader = NULL;
        char m[512];
        snprintf(m, sizeof m, "cannot open the Avro file: %s", avro_strerror());
        duckdb_init_set_error(info, m);
        scan_free(s);
        return;
    }
    TRACK(s);
    avro_schema_t ws = avro_file_reader_get_writer_schema(s->reader); /* a new reference */
    s->iface = ws ? avro_generic_class_from_schema(ws) : NULL;
    if (ws)
        avro_schema_decref(ws);
    rc = !s->iface || avro_generic_value_new(s->iface, &s->value);
    UNTRACK();
    if (rc) {
        char m[512];
        snprintf(m, sizeof m, "cannot read the Avro writer schema: %s", avro_strerror());
        duckdb_init_set_error(info, m);
        scan_free(s);
        return;
    }
    s->have_value = true;
    duckdb_init_set_init_data(info, s, scan_free);
}

static void avro_scan(duckdb_function_info info, duckdb_data_chunk out)
{
    bind_data *b = duckdb_function_get_bind_data(info);
    scan *s = duckdb_function_get_init_data(info);
    idx_t cap = duckdb_vector_size(), row = 0;
    size_t ncol = b->plan->n;
    TRACK(s);
    while (!s->done && row < cap) {
        int rv = avro_file_reader_read_value(s->reader, &s->value);
        if (rv == EOF) {
            s->done = true;
            break;
        }
        s->record++;
        if (rv) {
            snprintf(s->err, sizeof s->err, "record %llu: cannot read the block: %s", (unsigned long long)s->record,
                     avro_strerror());
            UNTRACK();
            duckdb_function_set_error(info, s->err);
            return;
        }
        for (size_t i = 0; i < ncol; i++) {
            const silt_avro_plan *p = b->plan->kids[i];
            duckdb_vector vec = duckdb_data_chunk_get_vector(out, i);
            avro_value_t f;
            int rc = 0;
            if (b->plan->windex[i] < 0)
                set_null(p, vec, row);
            else if (avro_value_get_by_index(&s->value, (size_t)b->plan->windex[i], &f, NULL))
                rc = avro_fail(s, p);
            else
                rc = put(s, p, &f, vec, row);
            if (rc) {
                UNTRACK();
                duckdb_function_set_error(info, s->err);
                return;
            }
        }
        row++;
    }
    UNTRACK();
    duckdb_data_chunk_set_size(out, row);
}

static void *capped_alloc(void *user, void *ptr, size_t osize, size_t nsize)
{
    (void)user;
    (void)osize;
    alloc_hdr *h = ptr ? (alloc_hdr *)ptr - 1 : NULL;
    if (nsize == 0 || nsize > SILT_AVRO_MAX_ALLOC) {
        if (nsize == 0 && h) {
            unlink_hdr(h);
            free(h);
        }
        return NULL; /* too large: the old block stays valid, as realloc */
    }
    bool was = h && h->tracked;
    if (was)
        unlink_hdr(h);
    alloc_hdr *n = realloc(h, sizeof *n + nsize);
    if (!n) {
        if (was)
            link_hdr(h);
        return NULL;
    }
    n->size = nsize;
    link_hdr(n);
    return n + 1;
}

static void install_allocator(void) { avro_set_allocator(capped_alloc, NULL); }

int silt_avro_register(silt_engine *e)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install_allocator);
    duckdb_table_function f = duckdb_create_table_function();
    if (!f)
        return silt_err(SILT_ENOMEM, "out of memory");
    duckdb_table_function_set_name(f, "silt_read_avro");
    duckdb_logical_type v = duckdb_create_logical_type(DUCKDB_TYPE_VARCHAR);
    duckdb_table_function_add_parameter(f, v);
    duckdb_table_function_add_parameter(f, v);
    duckdb_destroy_logical_type(&v);
    duckdb_table_function_set_extra_info(f, e, NULL);
    duckdb_table_function_set_bind(f, avro_bind);
    duckdb_table_function_set_init(f, avro_init);
    duckdb_table_function_set_function(f, avro_scan);
    int rc = duckdb_register_table_function(silt_engine_conn(e), f) == DuckDBError
                 ? silt_err(SILT_EINTERNAL, "engine: cannot register silt_read_avro")
                 : 0;
    duckdb_destroy_table_function(&f);
    return rc;
}
