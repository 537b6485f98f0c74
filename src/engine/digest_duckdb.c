/* digest_duckdb.c — logical hash of a Parquet file, read through DuckDB.
 *
 * kamu computes the hash over the record batches of the arrow-rs Parquet
 * reader; we read the same file with DuckDB and present each column to the
 * core hasher (digest.h) as the array arrow-rs would have produced:
 *  - the Arrow schema is derived from the Parquet schema (parquet_schema()),
 *    following arrow-rs parquet/src/arrow/schema/{primitive,complex}.rs
 *    (version 58.4, no embedded ARROW:schema): logical type first, then the
 *    converted type; see arrow_from_parquet() below;
 *  - values are converted from DuckDB's in-memory form to Arrow's (e.g.
 *    TIMESTAMP µs -> i64 ms for a MILLIS column, TIME µs -> i32 ms, DECIMAL
 *    of any DuckDB width -> 16-byte little-endian i128, UUID -> 16 big-endian
 *    bytes);
 *  - validity of a nested value is ANDed with every enclosing struct's
 *    validity (arrow-rs derives child nulls from definition levels); null
 *    slots carry zero values / empty strings / empty lists.
 * Invariants: every buffer handed to the core lives until that chunk's
 * update returns (tmp list), DuckDB objects are destroyed on every path.
 */
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/digest.h"
#include "engine/engine_internal.h"
#include "util/error.h"

/* ------------------------------------------------------------ Parquet schema */

typedef struct pq_node {
    char *name;
    char *phys;      /* "INT64", NULL for groups */
    int type_length; /* -1 when absent */
    char *rep;       /* "REQUIRED"/"OPTIONAL"/"REPEATED" */
    int num_children;
    char *conv;    /* converted type name or NULL */
    int scale, precision;
    char *logical; /* DuckDB's rendering of the LogicalType or NULL */
} pq_node;

typedef struct pq_schema {
    pq_node *nodes;
    size_t n, cap;
    int rc;
} pq_schema;

static char *dup_or_null(const char *s, int *rc)
{
    if (!s)
        return NULL;
    char *d = strdup(s);
    if (!d)
        *rc = silt_err(SILT_ENOMEM, "logical hash: out of memory");
    return d;
}

static int atoi_or(const char *s, int dflt)
{
    return s ? atoi(s) : dflt;
}

static int schema_row(void *ctx, size_t ncols, const char *const *names, const char *const *v)
{
    pq_schema *s = ctx;
    if (ncols < 9)
        return s->rc = silt_err(SILT_EINTERNAL, "logical hash: parquet_schema() returned %zu columns",
                                ncols);
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        pq_node *nn = realloc(s->nodes, cap * sizeof *nn);
        if (!nn)
            return s->rc = silt_err(SILT_ENOMEM, "logical hash: out of memory");
        s->nodes = nn;
        s->cap = cap;
    }
    pq_node *p = &s->nodes[s->n++];
    memset(p, 0, sizeof *p);
    int rc = 0;
    p->name = dup_or_null(v[0] ? v[0] : "", &rc);
    p->phys = dup_or_null(v[1], &rc);
    p->type_length = atoi_or(v[2], -1);
    p->rep = dup_or_null(v[3], &rc);
    p->num_children = atoi_or(v[4], 0);
    p->conv = dup_or_null(v[5], &rc);
    p->scale = atoi_or(v[6], 0);
    p->precision = atoi_or(v[7], -1);
    p->logical = dup_or_null(v[8], &rc);
    return s->rc = rc;
}

static void schema_free(pq_schema *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->nodes[i].name);
        free(s->nodes[i].phys);
        free(s->nodes[i].rep);
        free(s->nodes[i].conv);
        free(s->nodes[i].logical);
    }
    free(s->nodes);
}

static bool streq(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

static bool lt_is(const pq_node *p, const char *prefix)
{
    return p->logical && strncmp(p->logical, prefix, strlen(prefix)) == 0;
}

static int lt_int_param(const pq_node *p, const char *key, int dflt)
{
    const char *s = p->logical ? strstr(p->logical, key) : NULL;
    if (!s)
        return dflt;
    s += strlen(key);
    if (strncmp(s, "true", 4) == 0)
        return 1;
    if (strncmp(s, "false", 5) == 0)
        return 0;
    return atoi(s);
}

static int lt_unit(const pq_node *p)
{
    if (!p->logical)
        return -1;
    if (strstr(p->logical, "MILLIS=MilliSeconds"))
        return SILT_ARROW_MILLI;
    if (strstr(p->logical, "MICROS=MicroSeconds"))
        return SILT_ARROW_MICRO;
    if (strstr(p->logical, "NANOS=NanoSeconds"))
        return SILT_ARROW_NANO;
    return -1;
}

/* ------------------------------------------------------------ Arrow schema */

/* Owned Arrow field tree (children malloc'd arrays). */
static void afields_free(silt_arrow_field *f, size_t n)
{
    if (!f)
        return;
    for (size_t i = 0; i < n; i++)
        afields_free((silt_arrow_field *)f[i].type.children, f[i].type.num_children);
    free(f);
}

static int unsupported(const char *col, const char *what)
{
    return silt_err(SILT_EUNSUPPORTED, "logical hash: column '%s': %s is not supported", col, what);
}

static void set_decimal(silt_arrow_type *t, int p, int s)
{
    t->id = SILT_ARROW_DECIMAL;
    t->bit_width = 128;
    t->precision = p;
    t->scale = s;
}

/* arrow-rs primitive.rs from_parquet for one leaf. */
static int arrow_primitive(const pq_node *p, silt_arrow_type *t, const char *col)
{
    memset(t, 0, sizeof *t);
    const char *ph = p->phys, *cv = p->conv;
    bool has_lt = p->logical != NULL;
    if (lt_is(p, "NullType") || lt_is(p, "UnknownType"))
        return unsupported(col, "the UNKNOWN (always null) logical type");
    if (streq(ph, "BOOLEAN")) {
        t->id = SILT_ARROW_BOOL;
        return 0;
    }
    if (streq(ph, "FLOAT") || streq(ph, "DOUBLE")) {
        t->id = SILT_ARROW_FLOAT;
        t->bit_width = streq(ph, "FLOAT") ? 32 : 64;
        return 0;
    }
    if (streq(ph, "INT32") || streq(ph, "INT64")) {
        bool i64 = streq(ph, "INT64");
        if (has_lt) {
            if (lt_is(p, "IntType")) {
                int bw = lt_int_param(p, "bitWidth=", 0);
                if ((i64 && bw != 64) || (!i64 && bw != 8 && bw != 16 && bw != 32))
                    return unsupported(col, "this INTEGER bit width");
                t->id = SILT_ARROW_INT;
                t->bit_width = bw;
                t->is_signed = lt_int_param(p, "isSigned=", 1) != 0;
                return 0;
            }
            if (lt_is(p, "DecimalType")) {
                set_decimal(t, lt_int_param(p, "precision=", -1), lt_int_param(p, "scale=", 0));
                return 0;
            }
            if (!i64 && lt_is(p, "DateType")) {
                t->id = SILT_ARROW_DATE;
                t->bit_width = 32;
                return 0;
            }
            if (lt_is(p, "TimeType")) {
                int u = lt_unit(p);
                if ((!i64 && u != SILT_ARROW_MILLI) || (i64 && u != SILT_ARROW_MICRO && u != SILT_ARROW_NANO))
                    return unsupported(col, "this TIME unit");
                t->id = SILT_ARROW_TIME;
                t->bit_width = i64 ? 64 : 32;
                t->unit = (silt_arrow_unit)u;
                return 0;
            }
            if (i64 && lt_is(p, "TimestampType")) {
                int u = lt_unit(p);
                if (u < 0)
                    return unsupported(col, "this TIMESTAMP unit");
                t->id = SILT_ARROW_TIMESTAMP;
                t->unit = (silt_arrow_unit)u;
                t->timezone = lt_int_param(p, "isAdjustedToUTC=", 0) ? "UTC" : NULL;
                return 0;
            }
            return unsupported(col, p->logical);
        }
        if (!cv || streq(cv, "INT_32") || streq(cv, "INT_64")) {
            if (cv && streq(cv, i64 ? "INT_32" : "INT_64"))
                return unsupported(col, cv);
            t->id = SILT_ARROW_INT;
            t->bit_width = i64 ? 64 : 32;
            t->is_signed = true;
            return 0;
        }
        static const struct { const char *name; int bw; bool sgn; bool i64; } ints[] = {
            {"UINT_8", 8, false, false},  {"UINT_16", 16, false, false}, {"UINT_32", 32, false, false},
            {"INT_8", 8, true, false},    {"INT_16", 16, true, false},   {"UINT_64", 64, false, true},
        };
        for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
            if (streq(cv, ints[i].name) && ints[i].i64 == i64) {
                t->id = SILT_ARROW_INT;
                t->bit_width = ints[i].bw;
                t->is_signed = ints[i].sgn;
                return 0;
            }
        if (streq(cv, "DECIMAL")) {
            set_decimal(t, p->precision, p->scale);
            return 0;
        }
        if (!i64 && streq(cv, "DATE")) {
            t->id = SILT_ARROW_DATE;
            t->bit_width = 32;
            return 0;
        }
        if ((!i64 && streq(cv, "TIME_MILLIS")) || (i64 && streq(cv, "TIME_MICROS"))) {
            t->id = SILT_ARROW_TIME;
            t->bit_width = i64 ? 64 : 32;
            t->unit = i64 ? SILT_ARROW_MICRO : SILT_ARROW_MILLI;
            return 0;
        }
        if (i64 && (streq(cv, "TIMESTAMP_MILLIS") || streq(cv, "TIMESTAMP_MICROS"))) {
            t->id = SILT_ARROW_TIMESTAMP;
            t->unit = streq(cv, "TIMESTAMP_MILLIS") ? SILT_ARROW_MILLI : SILT_ARROW_MICRO;
            t->timezone = "UTC";
            return 0;
        }
        return unsupported(col, cv);
    }
    if (streq(ph, "BYTE_ARRAY")) {
        if (has_lt) {
            if (lt_is(p, "StringType") || lt_is(p, "JsonType"))
                t->id = SILT_ARROW_UTF8;
            else if (lt_is(p, "DecimalType")) {
                int prec = lt_int_param(p, "precision=", -1);
                if (prec > 38)
                    return unsupported(col, "DECIMAL with precision > 38 (Decimal256)");
                set_decimal(t, prec, lt_int_param(p, "scale=", 0));
            } else
                t->id = SILT_ARROW_BINARY; /* BSON, ENUM, GEOMETRY, … */
            return 0;
        }
        if (streq(cv, "UTF8") || streq(cv, "JSON"))
            t->id = SILT_ARROW_UTF8;
        else if (streq(cv, "DECIMAL")) {
            if (p->precision > 38)
                return unsupported(col, "DECIMAL with precision > 38 (Decimal256)");
            set_decimal(t, p->precision, p->scale);
        } else if (!cv || streq(cv, "BSON") || streq(cv, "ENUM"))
            t->id = SILT_ARROW_BINARY;
        else
            return unsupported(col, cv);
        return 0;
    }
    if (streq(ph, "FIXED_LEN_BYTE_ARRAY")) {
        if (lt_is(p, "DecimalType") || (!has_lt && streq(cv, "DECIMAL"))) {
            if (p->type_length > 16)
                return unsupported(col, "DECIMAL in more than 16 bytes (Decimal256)");
            if (has_lt)
                set_decimal(t, lt_int_param(p, "precision=", -1), lt_int_param(p, "scale=", 0));
            else
                set_decimal(t, p->precision, p->scale);
            return 0;
        }
        if (!has_lt && streq(cv, "INTERVAL"))
            return unsupported(col, "INTERVAL");
        if (lt_is(p, "Float16Type"))
            return unsupported(col, "FLOAT16");
        if (p->type_length <= 0)
            return unsupported(col, "FIXED_LEN_BYTE_ARRAY without length");
        t->id = SILT_ARROW_FIXED_BINARY;
        t->byte_width = p->type_length;
        return 0;
    }
    return unsupported(col, ph ? ph : "this Parquet type"); /* INT96 */
}

/* Converts the subtree at nodes[*pos] into an Arrow field (complex.rs
 * dispatch: LIST groups -> List, MAP -> unsupported, other groups ->
 * Struct). Advances *pos past the subtree. */
static int arrow_field(const pq_schema *s, size_t *pos, silt_arrow_field *out, const char *col)
{
    if (*pos >= s->n)
        return silt_err(SILT_ECORRUPT, "logical hash: truncated Parquet schema");
    const pq_node *p = &s->nodes[(*pos)++];
    memset(out, 0, sizeof *out);
    out->name = p->name;
    out->nullable = !streq(p->rep, "REQUIRED");
    if (!col)
        col = p->name;
    if (streq(p->rep, "REPEATED"))
        return unsupported(col, "a repeated field outside a LIST");
    if (p->phys && p->num_children == 0)
        return arrow_primitive(p, &out->type, col);
    if (streq(p->conv, "MAP") || streq(p->conv, "MAP_KEY_VALUE") || lt_is(p, "MapType"))
        return unsupported(col, "MAP");
    if (streq(p->conv, "LIST")) {
        if (p->num_children != 1 || *pos >= s->n || !streq(s->nodes[*pos].rep, "REPEATED"))
            return unsupported(col, "this LIST layout");
        const pq_node *r = &s->nodes[*pos];
        silt_arrow_field *item = calloc(1, sizeof *item);
        if (!item)
            return silt_err(SILT_ENOMEM, "logical hash: out of memory");
        out->type.id = SILT_ARROW_LIST;
        out->type.children = item;
        out->type.num_children = 1;
        if (r->phys) { /* 2-level list: repeated primitive is the (required) item */
            (*pos)++;
            item->name = r->name;
            return arrow_primitive(r, &item->type, col);
        }
        if (r->num_children != 1 || streq(r->name, "array"))
            return unsupported(col, "lists of structs");
        char tuple[512];
        snprintf(tuple, sizeof tuple, "%s_tuple", p->name);
        if (streq(r->name, tuple))
            return unsupported(col, "lists of structs");
        (*pos)++;
        int rc = arrow_field(s, pos, item, col);
        if (!rc && item->type.id == SILT_ARROW_STRUCT)
            rc = unsupported(col, "lists of structs");
        return rc;
    }
    if (p->num_children <= 0)
        return unsupported(col, "an empty group");
    silt_arrow_field *kids = calloc((size_t)p->num_children, sizeof *kids);
    if (!kids)
        return silt_err(SILT_ENOMEM, "logical hash: out of memory");
    out->type.id = SILT_ARROW_STRUCT;
    out->type.children = kids;
    out->type.num_children = (size_t)p->num_children;
    for (int i = 0; i < p->num_children; i++) {
        int rc = arrow_field(s, pos, &kids[i], col);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------ vectors */

typedef struct tmp_list {
    void **p;
    size_t n, cap;
} tmp_list;

static void *tmp_alloc(tmp_list *t, size_t size)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 32;
        void **np = realloc(t->p, cap * sizeof *np);
        if (!np)
            return NULL;
        t->p = np;
        t->cap = cap;
    }
    void *m = calloc(size ? size : 1, 1);
    if (m)
        t->p[t->n++] = m;
    return m;
}

static void tmp_clear(tmp_list *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->p[i]);
    t->n = 0;
}

static int oom(void)
{
    return silt_err(SILT_ENOMEM, "logical hash: out of memory");
}

/* Unit of a DuckDB temporal type: 0 s, 1 ms, 2 µs, 3 ns; -1 otherwise. */
static int duck_ts_unit(duckdb_type dt)
{
    switch (dt) {
    case DUCKDB_TYPE_TIMESTAMP_S:
        return SILT_ARROW_SECOND;
    case DUCKDB_TYPE_TIMESTAMP_MS:
        return SILT_ARROW_MILLI;
    case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
    case DUCKDB_TYPE_TIME:
        return SILT_ARROW_MICRO;
    case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_TIME_NS:
        return SILT_ARROW_NANO;
    default:
        return -1;
    }
}

static int64_t rescale(int64_t v, int from, int to)
{
    for (; from < to; from++)
        v *= 1000;
    for (; from > to; from--)
        v = v / 1000 - ((v % 1000) < 0); /* floor */
    return v;
}

/* Reads element i of a DuckDB integer vector as a 128-bit value. */
static bool duck_int(duckdb_type dt, const void *data, size_t i, int64_t *hi, uint64_t *lo)
{
    int64_t s = 0;
    uint64_t u = 0;
    bool sgn = true;
    switch (dt) {
    case DUCKDB_TYPE_TINYINT: s = ((const int8_t *)data)[i]; break;
    case DUCKDB_TYPE_SMALLINT: s = ((const int16_t *)data)[i]; break;
    case DUCKDB_TYPE_INTEGER: s = ((const int32_t *)data)[i]; break;
    case DUCKDB_TYPE_BIGINT: s = ((const int64_t *)data)[i]; break;
    case DUCKDB_TYPE_UTINYINT: u = ((const uint8_t *)data)[i]; sgn = false; break;
    case DUCKDB_TYPE_USMALLINT: u = ((const uint16_t *)data)[i]; sgn = false; break;
    case DUCKDB_TYPE_UINTEGER: u = ((const uint32_t *)data)[i]; sgn = false; break;
    case DUCKDB_TYPE_UBIGINT: u = ((const uint64_t *)data)[i]; sgn = false; break;
    case DUCKDB_TYPE_HUGEINT: {
        const duckdb_hugeint *h = &((const duckdb_hugeint *)data)[i];
        *hi = h->upper;
        *lo = h->lower;
        return true;
    }
    default:
        return false;
    }
    if (sgn) {
        *lo = (uint64_t)s;
        *hi = s < 0 ? -1 : 0;
    } else {
        *lo = u;
        *hi = 0;
    }
    return true;
}

static void put_le(uint8_t *dst, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n && i < 8; i++)
        dst[i] = (uint8_t)(v >> (8 * i));
}

typedef struct conv_ctx {
    tmp_list tmp;
} conv_ctx;

/* Fills `out` from vector `vec` (count rows) for Arrow field `f`.
 * `anc` is the AND of the enclosing structs' validity (byte per row, 1 =
 * valid) or NULL. */
static int convert(conv_ctx *cx, duckdb_vector vec, size_t count, const silt_arrow_field *f,
                   const uint8_t *anc, silt_arrow_array *out, const char *col)
{
    memset(out, 0, sizeof *out);
    out->length = count;
    duckdb_logical_type lt = duckdb_vector_get_column_type(vec);
    if (!lt)
        return oom();
    duckdb_type dt = duckdb_get_type_id(lt);
    int rc = 0;
    uint8_t dec_width = 0, dec_scale = 0;
    duckdb_type dec_internal = DUCKDB_TYPE_INVALID;
    if (dt == DUCKDB_TYPE_DECIMAL) {
        dec_width = duckdb_decimal_width(lt);
        dec_scale = duckdb_decimal_scale(lt);
        dec_internal = duckdb_decimal_internal_type(lt);
    }
    idx_t nkids = dt == DUCKDB_TYPE_STRUCT ? duckdb_struct_type_child_count(lt) : 0;
    duckdb_destroy_logical_type(&lt);
    (void)dec_width;

    /* validity = own AND ancestors, as a byte per row; then an Arrow bitmap */
    const uint64_t *dv = duckdb_vector_get_validity(vec);
    uint8_t *valid = tmp_alloc(&cx->tmp, count);
    if (!valid)
        return oom();
    size_t nulls = 0;
    for (size_t i = 0; i < count; i++) {
        bool ok = (!dv || ((dv[i / 64] >> (i % 64)) & 1)) && (!anc || anc[i]);
        valid[i] = ok;
        nulls += !ok;
    }
    if (nulls) {
        uint8_t *bm = tmp_alloc(&cx->tmp, count / 8 + 1);
        if (!bm)
            return oom();
        for (size_t i = 0; i < count; i++)
            if (valid[i])
                bm[i / 8] |= (uint8_t)(1u << (i % 8));
        out->validity = bm;
    }
    const void *data = duckdb_vector_get_data(vec);
    const silt_arrow_type *t = &f->type;

#define MISMATCH()                                                                                 \
    silt_err(SILT_EUNSUPPORTED,                                                                    \
             "logical hash: column '%s': DuckDB type %d does not match the Parquet type", col,      \
             (int)dt)

    switch (t->id) {
    case SILT_ARROW_BOOL: {
        if (dt != DUCKDB_TYPE_BOOLEAN)
            return MISMATCH();
        uint8_t *v = tmp_alloc(&cx->tmp, count);
        if (!v)
            return oom();
        for (size_t i = 0; i < count; i++)
            v[i] = valid[i] && ((const uint8_t *)data)[i];
        out->values = v;
        return 0;
    }
    case SILT_ARROW_INT:
    case SILT_ARROW_DECIMAL: {
        size_t w = (size_t)t->bit_width / 8;
        duckdb_type src = dt;
        if (t->id == SILT_ARROW_DECIMAL) {
            if (dt != DUCKDB_TYPE_DECIMAL || dec_scale != t->scale)
                return MISMATCH();
            src = dec_internal;
        } else if (dt == DUCKDB_TYPE_DECIMAL || dt == DUCKDB_TYPE_HUGEINT) {
            return MISMATCH();
        }
        uint8_t *v = tmp_alloc(&cx->tmp, count * w);
        if (!v)
            return oom();
        for (size_t i = 0; i < count; i++) {
            int64_t hi = 0;
            uint64_t lo = 0;
            if (!duck_int(src, data, i, &hi, &lo))
                return MISMATCH();
            if (!valid[i])
                continue;
            put_le(v + i * w, lo, w);
            if (w == 16)
                put_le(v + i * w + 8, (uint64_t)hi, 8);
        }
        out->values = v;
        return 0;
    }
    case SILT_ARROW_FLOAT: {
        if ((t->bit_width == 32 && dt != DUCKDB_TYPE_FLOAT) ||
            (t->bit_width == 64 && dt != DUCKDB_TYPE_DOUBLE) || t->bit_width == 16)
            return MISMATCH();
        size_t w = (size_t)t->bit_width / 8;
        uint8_t *v = tmp_alloc(&cx->tmp, count * w);
        if (!v)
            return oom();
        for (size_t i = 0; i < count; i++)
            if (valid[i])
                memcpy(v + i * w, (const uint8_t *)data + i * w, w);
        out->values = v;
        return 0;
    }
    case SILT_ARROW_DATE: {
        if (dt != DUCKDB_TYPE_DATE || t->bit_width != 32)
            return MISMATCH();
        uint8_t *v = tmp_alloc(&cx->tmp, count * 4);
        if (!v)
            return oom();
        for (size_t i = 0; i < count; i++)
            if (valid[i])
                memcpy(v + i * 4, (const uint8_t *)data + i * 4, 4);
        out->values = v;
        return 0;
    }
    case SILT_ARROW_TIME:
    case SILT_ARROW_TIMESTAMP: {
        int du = duck_ts_unit(dt);
        bool is_time = dt == DUCKDB_TYPE_TIME || dt == DUCKDB_TYPE_TIME_NS;
        if (du < 0 || is_time != (t->id == SILT_ARROW_TIME))
            return MISMATCH();
        if ((int)t->unit > du)
            return silt_err(SILT_EUNSUPPORTED,
                            "logical hash: column '%s': DuckDB reads this column with less "
                            "precision than the Parquet unit", col);
        size_t w = t->id == SILT_ARROW_TIME ? (size_t)t->bit_width / 8 : 8;
        uint8_t *v = tmp_alloc(&cx->tmp, count * w);
        if (!v)
            return oom();
        for (size_t i = 0; i < count; i++)
            if (valid[i])
                put_le(v + i * w, (uint64_t)rescale(((const int64_t *)data)[i], du, (int)t->unit), w);
        out->values = v;
        return 0;
    }
    case SILT_ARROW_BINARY:
    case SILT_ARROW_UTF8: {
        if (dt != DUCKDB_TYPE_VARCHAR && dt != DUCKDB_TYPE_BLOB)
            return MISMATCH();
        silt_arrow_bytes *b = tmp_alloc(&cx->tmp, count * sizeof *b);
        if (!b)
            return oom();
        duckdb_string_t *s = (duckdb_string_t *)data;
        for (size_t i = 0; i < count; i++)
            if (valid[i]) {
                b[i].len = duckdb_string_t_length(s[i]);
                b[i].ptr = (const uint8_t *)duckdb_string_t_data(&s[i]);
            }
        out->bytes = b;
        return 0;
    }
    case SILT_ARROW_FIXED_BINARY: {
        size_t w = (size_t)t->byte_width;
        uint8_t *v = tmp_alloc(&cx->tmp, count * w);
        if (!v)
            return oom();
        if (dt == DUCKDB_TYPE_UUID && w == 16) {
            const duckdb_hugeint *h = data;
            for (size_t i = 0; i < count; i++) {
                if (!valid[i])
                    continue;
                uint64_t hi = (uint64_t)h[i].upper ^ (UINT64_C(1) << 63), lo = h[i].lower;
                for (int k = 0; k < 8; k++) {
                    v[i * 16 + k] = (uint8_t)(hi >> (56 - 8 * k));
                    v[i * 16 + 8 + k] = (uint8_t)(lo >> (56 - 8 * k));
                }
            }
        } else if (dt == DUCKDB_TYPE_BLOB || dt == DUCKDB_TYPE_VARCHAR) {
            duckdb_string_t *s = (duckdb_string_t *)data;
            for (size_t i = 0; i < count; i++) {
                if (!valid[i])
                    continue;
                if (duckdb_string_t_length(s[i]) != w)
                    return silt_err(SILT_ECORRUPT,
                                    "logical hash: column '%s': row %zu has %u bytes, expected %zu",
                                    col, i, duckdb_string_t_length(s[i]), w);
                memcpy(v + i * w, duckdb_string_t_data(&s[i]), w);
            }
        } else {
            return MISMATCH();
        }
        out->values = v;
        return 0;
    }
    case SILT_ARROW_LIST: {
        if (dt != DUCKDB_TYPE_LIST)
            return MISMATCH();
        silt_arrow_list_entry *e = tmp_alloc(&cx->tmp, count * sizeof *e);
        silt_arrow_array *items = tmp_alloc(&cx->tmp, sizeof *items);
        if (!e || !items)
            return oom();
        const duckdb_list_entry *de = data;
        for (size_t i = 0; i < count; i++)
            if (valid[i]) {
                e[i].offset = de[i].offset;
                e[i].length = de[i].length;
            }
        duckdb_vector child = duckdb_list_vector_get_child(vec);
        size_t nitems = (size_t)duckdb_list_vector_get_size(vec);
        rc = convert(cx, child, nitems, &t->children[0], NULL, items, col);
        if (rc)
            return rc;
        out->lists = e;
        out->children = items;
        return 0;
    }
    case SILT_ARROW_STRUCT: {
        if (dt != DUCKDB_TYPE_STRUCT || nkids != t->num_children)
            return MISMATCH();
        silt_arrow_array *kids = tmp_alloc(&cx->tmp, t->num_children * sizeof *kids);
        if (!kids)
            return oom();
        for (size_t k = 0; k < t->num_children; k++) {
            rc = convert(cx, duckdb_struct_vector_get_child(vec, k), count, &t->children[k],
                         nulls ? valid : NULL, &kids[k], col);
            if (rc)
                return rc;
        }
        out->children = kids;
        return 0;
    }
    }
#undef MISMATCH
    return silt_err(SILT_EINTERNAL, "logical hash: column '%s': unhandled type", col);
}

/* ------------------------------------------------------------ hashing jobs */

#define HASH_BATCH_CHUNKS 32

/* Converts and hashes fields [begin, end) of every chunk of a batch, in
 * chunk order, with its own conversion scratch (one job per thread). */
typedef struct hash_job {
    silt_record_digest *dg;
    duckdb_data_chunk *chunks;
    size_t nchunks;
    const silt_arrow_field *fields;
    size_t begin, end;
    int rc;
    char err[512];
} hash_job;

static void *hash_job_run(void *arg)
{
    hash_job *j = arg;
    conv_ctx cx = {{0}};
    silt_arrow_array *cols = calloc(j->end ? j->end : 1, sizeof *cols);
    if (!cols)
        j->rc = oom();
    for (size_t k = 0; !j->rc && k < j->nchunks; k++) {
        size_t n = (size_t)duckdb_data_chunk_get_size(j->chunks[k]);
        for (size_t c = j->begin; c < j->end && !j->rc; c++)
            j->rc = convert(&cx, duckdb_data_chunk_get_vector(j->chunks[k], c), n, &j->fields[c], NULL,
                            &cols[c], j->fields[c].name);
        if (!j->rc)
            j->rc = silt_record_digest_update_fields(j->dg, cols, n, j->begin, j->end);
        tmp_clear(&cx.tmp);
    }
    if (j->rc)
        snprintf(j->err, sizeof j->err, "%s", silt_error_last());
    tmp_clear(&cx.tmp);
    free(cx.tmp.p);
    free(cols);
    return NULL;
}

/* ------------------------------------------------------------ entry point */

int silt_parquet_logical_hash(struct silt_engine *e, const char *path,
                              uint8_t out[SILT_ARROW_MH_LEN], uint64_t *num_rows)
{
    pq_schema sch = {0};
    silt_arrow_field *fields = NULL;
    size_t nfields = 0;
    silt_record_digest *dg = NULL;
    char *qpath = NULL, *sql = NULL;
    duckdb_prepared_statement stmt = NULL;
    duckdb_result res;
    bool have_res = false;
    conv_ctx cx = {{0}};
    silt_arrow_array *cols = NULL;
    uint64_t rows = 0;
    int rc = 0;

    qpath = silt_sql_str(path);
    if (!qpath) {
        rc = oom();
        goto done;
    }
    size_t sql_len = strlen(qpath) + 200;
    sql = malloc(sql_len);
    if (!sql) {
        rc = oom();
        goto done;
    }
    snprintf(sql, sql_len,
             "SELECT name, type, type_length, repetition_type, num_children, converted_type, "
             "scale, precision, logical_type FROM parquet_schema(%s)", qpath);
    rc = silt_engine_query_rows(e, sql, schema_row, &sch);
    if (rc == 0)
        rc = sch.rc;
    if (rc) {
        silt_err_context(rc, "%s", path);
        goto done;
    }
    if (sch.n == 0 || sch.nodes[0].num_children <= 0) {
        rc = silt_err(SILT_EINVAL, "%s: Parquet file without columns", path);
        goto done;
    }
    nfields = (size_t)sch.nodes[0].num_children;
    fields = calloc(nfields, sizeof *fields);
    cols = calloc(nfields, sizeof *cols);
    if (!fields || !cols) {
        rc = oom();
        goto done;
    }
    size_t pos = 1;
    for (size_t i = 0; i < nfields && !rc; i++)
        rc = arrow_field(&sch, &pos, &fields[i], NULL);
    if (!rc && pos != sch.n)
        rc = silt_err(SILT_ECORRUPT, "logical hash: inconsistent Parquet schema");
    if (!rc)
        rc = silt_record_digest_new(&dg, fields, nfields);
    if (rc) {
        silt_err_context(rc, "%s", path);
        goto done;
    }

    snprintf(sql, sql_len, "SELECT * FROM read_parquet(%s)", qpath);
    duckdb_connection conn = silt_engine_conn(e);
    if (duckdb_prepare(conn, sql, &stmt) == DuckDBError) {
        rc = silt_err(SILT_EINVAL, "%s: %s", path, duckdb_prepare_error(stmt));
        goto done;
    }
    if (duckdb_execute_prepared_streaming(stmt, &res) == DuckDBError) {
        have_res = true;
        rc = silt_engine_result_error(&res, path);
        goto done;
    }
    have_res = true;
    if (duckdb_column_count(&res) != nfields) {
        rc = silt_err(SILT_EINTERNAL, "%s: DuckDB reads %llu columns, the Parquet schema has %zu",
                      path, (unsigned long long)duckdb_column_count(&res), nfields);
        goto done;
    }
    /* Chunks are fetched in batches; the columns of a batch are converted
     * and hashed by two threads (fields [0, split) here, [split, n) by the
     * worker): every column has its own hasher, and SHA3 over the values is
     * the dominant cost of a large slice. */
    size_t split = nfields > 1 ? (nfields + 1) / 2 : nfields;
    duckdb_data_chunk batch[HASH_BATCH_CHUNKS];
    for (bool eof = false; !eof && !rc;) {
        size_t nb = 0;
        while (nb < HASH_BATCH_CHUNKS) {
            duckdb_data_chunk chunk = duckdb_fetch_chunk(res);
            if (!chunk) {
                if (duckdb_result_error(&res))
                    rc = silt_engine_result_error(&res, path);
                eof = true;
                break;
            }
            if (duckdb_data_chunk_get_size(chunk) == 0) {
                duckdb_destroy_data_chunk(&chunk);
                eof = true;
                break;
            }
            batch[nb++] = chunk;
        }
        if (!rc && nb) {
            hash_job job = {dg, batch, nb, fields, split, nfields, 0, ""};
            pthread_t th;
            bool threaded = split < nfields && pthread_create(&th, NULL, hash_job_run, &job) == 0;
            if (!threaded) {
                job.begin = 0; /* one thread does every field */
                hash_job_run(&job);
            } else {
                hash_job mine = {dg, batch, nb, fields, 0, split, 0, ""};
                hash_job_run(&mine);
                pthread_join(th, NULL);
                if (mine.rc && !job.rc) {
                    job.rc = mine.rc;
                    memcpy(job.err, mine.err, sizeof job.err);
                }
            }
            if (job.rc) {
                silt_record_digest_fail(dg);
                rc = silt_err(job.rc, "%s: %s", path, job.err);
            }
            for (size_t i = 0; i < nb; i++)
                rows += (uint64_t)duckdb_data_chunk_get_size(batch[i]);
        }
        for (size_t i = 0; i < nb; i++)
            duckdb_destroy_data_chunk(&batch[i]);
    }
    if (!rc) {
        uint8_t digest[SILT_ARROW_DIGEST_LEN];
        rc = silt_record_digest_finalize(dg, digest);
        if (!rc) {
            silt_arrow_multihash(digest, out);
            if (num_rows)
                *num_rows = rows;
        }
    }

done:
    if (have_res)
        duckdb_destroy_result(&res);
    if (stmt)
        duckdb_destroy_prepare(&stmt);
    tmp_clear(&cx.tmp);
    free(cx.tmp.p);
    silt_record_digest_free(dg);
    for (size_t i = 0; fields && i < nfields; i++)
        afields_free((silt_arrow_field *)fields[i].type.children, fields[i].type.num_children);
    free(fields);
    free(cols);
    schema_free(&sch);
    free(sql);
    free(qpath);
    return rc;
}
