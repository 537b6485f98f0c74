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
 *    slots carry zero values / empty strings / empty lists;
 *  - struct columns are fed in the reader's record batches (10,000 rows),
 *    with the null slots of their boolean and fixed-width children filled
 *    the way the reader leaves them (see "reader batches" below); other
 *    columns are fed per DuckDB chunk, which gives the same digest.
 * Invariants: every buffer handed to the core lives until that update
 * returns (tmp list; chunks that a struct column still needs are kept for
 * the next round), DuckDB objects are destroyed on every path.
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

/* ------------------------------------------------------------ reader batches
 *
 * kamu hashes the record batches of arrow-rs's ParquetRecordBatchReader,
 * built with a batch size of 10,000 rows (LOGICAL_HASH_BATCH_SIZE in kamu's
 * get_parquet_logical_hash). Two properties of those batches reach the
 * digest of a struct column, and only of a struct column:
 *  - the core combines a struct's validity with its children's per update
 *    (digest.h), so a struct column must be fed in exactly the reader's
 *    batches: rows [10000k, 10000(k+1)) of the file, across row groups;
 *  - a child slot that is null while the combined validity says "valid" is
 *    hashed as whatever value the reader left in it. arrow-rs decodes the
 *    non-null values of a read segment densely, then moves them up to their
 *    rows and leaves the null slots untouched (record_reader/buffer.rs,
 *    pad_nulls), so the null slot at position p of a segment still holds
 *    the p-th non-null value of the segment, or 0 when the segment has no
 *    more than p of them. A segment is the part of one batch inside one row
 *    group: the reader takes up the next column chunk there
 *    (array_reader/mod.rs, read_records). This holds for booleans and every
 *    fixed-width type; byte arrays and lists leave null slots empty, which
 *    is what convert() writes.
 * Other columns are hashed per DuckDB chunk: without structs the digest
 * does not depend on how the rows are split.
 */

#define READER_BATCH_ROWS 10000

/* Rows [off, off + len) of an array. */
typedef struct piece {
    const silt_arrow_array *a;
    size_t off, len;
} piece;

static bool bit_at(const uint8_t *bits, size_t i)
{
    return (bits[i >> 3] >> (i & 7)) & 1;
}

static bool range_has_null(const uint8_t *bits, size_t from, size_t len)
{
    if (!bits)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!bit_at(bits, from + i))
            return true;
    return false;
}

/* Whether any struct in the tree of `a` has a null in rows [off, off+len):
 * only then do the batch boundaries and null-slot values matter. */
static bool struct_nulls(const silt_arrow_type *t, const silt_arrow_array *a, size_t off, size_t len)
{
    if (t->id != SILT_ARROW_STRUCT)
        return false;
    if (range_has_null(a->validity, a->offset + off, len))
        return true;
    for (size_t k = 0; k < t->num_children; k++)
        if (struct_nulls(&t->children[k].type, &a->children[k], off, len))
            return true;
    return false;
}

/* Shallow view of rows [off, off+len) of a (struct children sliced too). */
static int slice_tree(tmp_list *tmp, const silt_arrow_type *t, const silt_arrow_array *a, size_t off,
                      size_t len, silt_arrow_array *out)
{
    *out = *a;
    out->offset = a->offset + off;
    out->length = len;
    if (t->id != SILT_ARROW_STRUCT)
        return 0;
    silt_arrow_array *kids = tmp_alloc(tmp, t->num_children * sizeof *kids);
    if (!kids)
        return oom();
    for (size_t k = 0; k < t->num_children; k++) {
        int rc = slice_tree(tmp, &t->children[k].type, &a->children[k], off, len, &kids[k]);
        if (rc)
            return rc;
    }
    out->children = kids;
    return 0;
}

/* Bytes per value of a boolean (as convert() stores it) or fixed-width
 * type; 0 for the others. */
static size_t value_width(const silt_arrow_type *t)
{
    switch (t->id) {
    case SILT_ARROW_BOOL:
        return 1;
    case SILT_ARROW_INT:
    case SILT_ARROW_FLOAT:
    case SILT_ARROW_DECIMAL:
    case SILT_ARROW_DATE:
    case SILT_ARROW_TIME:
        return (size_t)t->bit_width / 8;
    case SILT_ARROW_TIMESTAMP:
        return 8;
    case SILT_ARROW_FIXED_BINARY:
        return (size_t)t->byte_width;
    default:
        return 0;
    }
}

/* Fills the null slots of rows [s0, s1) as the reader does: the slot at
 * relative position p takes the p-th valid value of the segment, if any
 * (that value lies at p or after it, and valid slots are never written). */
static void pad_segment(uint8_t *vals, size_t w, const uint8_t *bm, size_t s0, size_t s1)
{
    size_t q = s0; /* scans for the next valid value */
    for (size_t p = s0; p < s1; p++, q++) {
        while (q < s1 && !bit_at(bm, q))
            q++;
        if (q == s1)
            return; /* no p-th valid value: this slot and later ones stay 0 */
        if (!bit_at(bm, p))
            memcpy(vals + p * w, vals + q * w, w);
    }
}

static int concat_validity(tmp_list *tmp, const piece *p, size_t np, size_t total,
                           const uint8_t **out)
{
    *out = NULL;
    bool any = false;
    for (size_t k = 0; k < np && !any; k++)
        any = range_has_null(p[k].a->validity, p[k].a->offset + p[k].off, p[k].len);
    if (!any)
        return 0;
    uint8_t *bm = tmp_alloc(tmp, total / 8 + 1);
    if (!bm)
        return oom();
    size_t at = 0;
    for (size_t k = 0; k < np; k++)
        for (size_t i = 0; i < p[k].len; i++, at++)
            if (!p[k].a->validity || bit_at(p[k].a->validity, p[k].a->offset + p[k].off + i))
                bm[at >> 3] |= (uint8_t)(1u << (at & 7));
    *out = bm;
    return 0;
}

static int concat(tmp_list *tmp, const silt_arrow_type *t, const piece *p, size_t np, size_t total,
                  const size_t *segs, size_t nseg, silt_arrow_array *out);

/* List pieces: every piece's whole item array is appended, the entries are
 * shifted to point into the result. */
static int concat_lists(tmp_list *tmp, const silt_arrow_type *t, const piece *p, size_t np,
                        size_t total, silt_arrow_array *out)
{
    silt_arrow_list_entry *e = tmp_alloc(tmp, total * sizeof *e);
    piece *ip = tmp_alloc(tmp, np * sizeof *ip);
    silt_arrow_array *items = tmp_alloc(tmp, sizeof *items);
    if (!e || !ip || !items)
        return oom();
    size_t at = 0, nitems = 0;
    for (size_t k = 0; k < np; k++) {
        const silt_arrow_array *a = p[k].a;
        for (size_t i = 0; i < p[k].len; i++, at++) {
            e[at] = a->lists[a->offset + p[k].off + i];
            e[at].offset += nitems;
        }
        ip[k] = (piece){a->children, 0, a->children->length};
        nitems += a->children->length;
    }
    int rc = concat(tmp, &t->children[0].type, ip, np, nitems, NULL, 0, items);
    out->lists = e;
    out->children = items;
    return rc;
}

/* Concatenates the rows of `np` pieces into *out, with buffers of its own.
 * segs (nseg + 1 row offsets from 0 to total) is given for arrays reached
 * from a struct column through structs only: their boolean and fixed-width
 * null slots are then filled segment by segment as the reader fills them. */
static int concat(tmp_list *tmp, const silt_arrow_type *t, const piece *p, size_t np, size_t total,
                  const size_t *segs, size_t nseg, silt_arrow_array *out)
{
    memset(out, 0, sizeof *out);
    out->length = total;
    int rc = concat_validity(tmp, p, np, total, &out->validity);
    if (rc)
        return rc;
    if (t->id == SILT_ARROW_STRUCT) {
        silt_arrow_array *kids = tmp_alloc(tmp, t->num_children * sizeof *kids);
        piece *kp = tmp_alloc(tmp, np * sizeof *kp);
        if (!kids || !kp)
            return oom();
        for (size_t c = 0; c < t->num_children && !rc; c++) {
            for (size_t k = 0; k < np; k++)
                kp[k] = (piece){&p[k].a->children[c], p[k].off, p[k].len};
            rc = concat(tmp, &t->children[c].type, kp, np, total, segs, nseg, &kids[c]);
        }
        out->children = kids;
        return rc;
    }
    if (t->id == SILT_ARROW_LIST)
        return concat_lists(tmp, t, p, np, total, out);
    if (t->id == SILT_ARROW_BINARY || t->id == SILT_ARROW_UTF8) {
        silt_arrow_bytes *b = tmp_alloc(tmp, total * sizeof *b);
        if (!b)
            return oom();
        for (size_t k = 0, at = 0; k < np; at += p[k].len, k++)
            memcpy(b + at, p[k].a->bytes + p[k].a->offset + p[k].off, p[k].len * sizeof *b);
        out->bytes = b;
        return 0;
    }
    size_t w = value_width(t);
    if (!w)
        return silt_err(SILT_EINTERNAL, "logical hash: cannot concatenate type id %d", (int)t->id);
    uint8_t *v = tmp_alloc(tmp, total * w);
    if (!v)
        return oom();
    for (size_t k = 0, at = 0; k < np; at += p[k].len, k++)
        memcpy(v + at * w, (const uint8_t *)p[k].a->values + (p[k].a->offset + p[k].off) * w,
               p[k].len * w);
    if (segs && out->validity)
        for (size_t s = 0; s < nseg; s++)
            pad_segment(v, w, out->validity, segs[s], segs[s + 1]);
    out->values = v;
    return 0;
}

/* ------------------------------------------------------------ hashing rounds */

#define HASH_BATCH_CHUNKS 32

/* The chunks fetched for one round of hashing. Plain (non-struct) fields
 * hash chunks [plain_from, n) whole; struct fields hash the file rows
 * [bat_begin, bat_end), which start and end at reader batch boundaries (or
 * the end of the file). chunks[0] may be a chunk carried over from the last
 * round, which plain fields have hashed already and struct fields have not
 * finished. */
typedef struct hash_round {
    duckdb_data_chunk *chunks;
    size_t n;
    size_t *rows;        /* rows of each chunk */
    uint64_t first_row;  /* file row of chunks[0] row 0 */
    size_t plain_from;
    uint64_t bat_begin, bat_end;
    const uint64_t *rg_start; /* file row where each row group starts */
    size_t num_rg;
} hash_round;

/* Converts and hashes fields [begin, end) of a round, with its own
 * conversion scratch (one job per thread). */
typedef struct hash_job {
    silt_record_digest *dg;
    const hash_round *r;
    const silt_arrow_field *fields;
    size_t begin, end;
    int rc;
    char err[512];
} hash_job;

static bool is_batched(const silt_arrow_field *f)
{
    return f->type.id == SILT_ARROW_STRUCT;
}

/* Segment offsets of rows [x, y) (file rows): split at row group starts. */
static size_t batch_segments(const hash_round *r, uint64_t x, uint64_t y, size_t *segs)
{
    size_t n = 0;
    segs[n++] = 0;
    for (size_t g = 0; g < r->num_rg; g++)
        if (r->rg_start[g] > x && r->rg_start[g] < y)
            segs[n++] = (size_t)(r->rg_start[g] - x);
    segs[n] = (size_t)(y - x);
    return n;
}

/* One reader batch [x, y) of struct field c, from the converted chunks. */
static int hash_reader_batch(hash_job *j, conv_ctx *cx, size_t c, const silt_arrow_array *conv,
                             uint64_t x, uint64_t y, silt_arrow_array *cols)
{
    const hash_round *r = j->r;
    const silt_arrow_type *t = &j->fields[c].type;
    piece *p = tmp_alloc(&cx->tmp, r->n * sizeof *p);
    size_t *segs = tmp_alloc(&cx->tmp, (r->num_rg + 2) * sizeof *segs);
    if (!p || !segs)
        return oom();
    size_t np = 0;
    bool nulls = false;
    uint64_t at = r->first_row;
    for (size_t k = 0; k < r->n; at += r->rows[k], k++) {
        uint64_t lo = at > x ? at : x, hi = at + r->rows[k] < y ? at + r->rows[k] : y;
        if (lo >= hi)
            continue;
        p[np] = (piece){&conv[k], (size_t)(lo - at), (size_t)(hi - lo)};
        nulls = nulls || struct_nulls(t, &conv[k], p[np].off, p[np].len);
        np++;
    }
    int rc = 0;
    if (!nulls) { /* no struct nulls: the split and null slots do not matter */
        for (size_t k = 0; k < np && !rc; k++) {
            rc = slice_tree(&cx->tmp, t, p[k].a, p[k].off, p[k].len, &cols[c]);
            if (!rc)
                rc = silt_record_digest_update_fields(j->dg, cols, p[k].len, c, c + 1);
        }
        return rc;
    }
    size_t nseg = batch_segments(r, x, y, segs);
    rc = concat(&cx->tmp, t, p, np, (size_t)(y - x), segs, nseg, &cols[c]);
    if (!rc)
        rc = silt_record_digest_update_fields(j->dg, cols, (size_t)(y - x), c, c + 1);
    return rc;
}

/* Struct field c over the round's rows [bat_begin, bat_end), batch by batch. */
static int hash_struct_field(hash_job *j, conv_ctx *cx, size_t c, silt_arrow_array *cols)
{
    const hash_round *r = j->r;
    silt_arrow_array *conv = tmp_alloc(&cx->tmp, r->n * sizeof *conv);
    if (!conv)
        return oom();
    int rc = 0;
    uint64_t at = r->first_row;
    for (size_t k = 0; k < r->n && !rc; at += r->rows[k], k++)
        if (at + r->rows[k] > r->bat_begin && at < r->bat_end)
            rc = convert(cx, duckdb_data_chunk_get_vector(r->chunks[k], c), r->rows[k],
                         &j->fields[c], NULL, &conv[k], j->fields[c].name);
    for (uint64_t x = r->bat_begin; x < r->bat_end && !rc;) {
        uint64_t y = (x / READER_BATCH_ROWS + 1) * READER_BATCH_ROWS;
        if (y > r->bat_end)
            y = r->bat_end;
        rc = hash_reader_batch(j, cx, c, conv, x, y, cols);
        x = y;
    }
    tmp_clear(&cx->tmp);
    return rc;
}

static void *hash_job_run(void *arg)
{
    hash_job *j = arg;
    const hash_round *r = j->r;
    conv_ctx cx = {{0}};
    silt_arrow_array *cols = calloc(j->end ? j->end : 1, sizeof *cols);
    if (!cols)
        j->rc = oom();
    for (size_t k = r->plain_from; !j->rc && k < r->n; k++) {
        /* each run [c, c1) of plain fields in one update */
        for (size_t c = j->begin, c1; c < j->end && !j->rc; c = c1 + 1) {
            for (c1 = c; c1 < j->end && !is_batched(&j->fields[c1]) && !j->rc; c1++)
                j->rc = convert(&cx, duckdb_data_chunk_get_vector(r->chunks[k], c1), r->rows[k],
                                &j->fields[c1], NULL, &cols[c1], j->fields[c1].name);
            if (!j->rc && c1 > c)
                j->rc = silt_record_digest_update_fields(j->dg, cols, r->rows[k], c, c1);
        }
        tmp_clear(&cx.tmp);
    }
    for (size_t c = j->begin; c < j->end && !j->rc; c++)
        if (is_batched(&j->fields[c]))
            j->rc = hash_struct_field(j, &cx, c, cols);
    if (j->rc)
        snprintf(j->err, sizeof j->err, "%s", silt_error_last());
    tmp_clear(&cx.tmp);
    free(cx.tmp.p);
    free(cols);
    return NULL;
}

/* Hashes one round: fields [0, split) here, [split, n) by a second thread.
 * Every column has its own hasher, and SHA3 over the values is the dominant
 * cost of a large slice. */
static int hash_round_run(silt_record_digest *dg, const hash_round *r,
                          const silt_arrow_field *fields, size_t nfields, const char *path)
{
    size_t split = nfields > 1 ? (nfields + 1) / 2 : nfields;
    hash_job job = {dg, r, fields, split, nfields, 0, ""};
    pthread_t th;
    bool threaded = split < nfields && pthread_create(&th, NULL, hash_job_run, &job) == 0;
    if (!threaded) {
        job.begin = 0; /* one thread does every field */
        hash_job_run(&job);
    } else {
        hash_job mine = {dg, r, fields, 0, split, 0, ""};
        hash_job_run(&mine);
        pthread_join(th, NULL);
        if (mine.rc && !job.rc) {
            job.rc = mine.rc;
            memcpy(job.err, mine.err, sizeof job.err);
        }
    }
    if (!job.rc)
        return 0;
    silt_record_digest_fail(dg);
    return silt_err(job.rc, "%s: %s", path, job.err);
}

/* ------------------------------------------------------------ the stream */

typedef struct rg_list {
    uint64_t *start; /* file row where each row group starts */
    size_t n, cap;
    uint64_t total;
    int rc;
} rg_list;

static int rg_row(void *ctx, size_t ncols, const char *const *names, const char *const *v)
{
    (void)names;
    rg_list *g = ctx;
    if (ncols < 1 || !v[0])
        return g->rc = silt_err(SILT_ECORRUPT, "logical hash: row group without a row count");
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        uint64_t *ns = realloc(g->start, cap * sizeof *ns);
        if (!ns)
            return g->rc = oom();
        g->start = ns;
        g->cap = cap;
    }
    g->start[g->n++] = g->total;
    g->total += strtoull(v[0], NULL, 10);
    return 0;
}

/* Where the row groups start (only needed when there are struct columns). */
static int load_row_groups(silt_engine *e, const char *qpath, rg_list *g)
{
    size_t len = strlen(qpath) + 160;
    char *sql = malloc(len);
    if (!sql)
        return oom();
    snprintf(sql, len,
             "SELECT any_value(row_group_num_rows) FROM parquet_metadata(%s) "
             "GROUP BY row_group_id ORDER BY row_group_id", qpath);
    int rc = silt_engine_query_rows(e, sql, rg_row, g);
    free(sql);
    return rc ? rc : g->rc;
}

typedef struct stream {
    duckdb_result *res;
    silt_record_digest *dg;
    const silt_arrow_field *fields;
    size_t nfields;
    bool batched; /* some field is a struct */
    const rg_list *rg;
    const char *path;
} stream;

/* Fetches the next chunk into *out (NULL at the end). */
static int next_chunk(stream *s, duckdb_data_chunk *out)
{
    *out = duckdb_fetch_chunk(*s->res);
    if (!*out)
        return duckdb_result_error(s->res) ? silt_engine_result_error(s->res, s->path) : 0;
    if (duckdb_data_chunk_get_size(*out) == 0)
        duckdb_destroy_data_chunk(out);
    return 0;
}

typedef struct chunk_buf {
    duckdb_data_chunk *c;
    size_t *rows;
    size_t n, cap;
} chunk_buf;

static int chunk_push(chunk_buf *b, duckdb_data_chunk c)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : HASH_BATCH_CHUNKS + 2;
        duckdb_data_chunk *nc = realloc(b->c, cap * sizeof *nc);
        if (nc)
            b->c = nc;
        size_t *nr = nc ? realloc(b->rows, cap * sizeof *nr) : NULL;
        if (!nr)
            return oom();
        b->rows = nr;
        b->cap = cap;
    }
    b->rows[b->n] = (size_t)duckdb_data_chunk_get_size(c);
    b->c[b->n++] = c;
    return 0;
}

/* Index of the first chunk holding a row at or after `row`. */
static size_t chunk_at(const chunk_buf *b, uint64_t first, uint64_t row)
{
    size_t k = 0;
    for (; k < b->n && first + b->rows[k] <= row; k++)
        first += b->rows[k];
    return k;
}

/* Whether a round with struct fields should fetch more: it needs one whole
 * reader batch past bat_begin, and stops once the last batch boundary lies
 * in its last chunk, so that only that chunk is carried over. */
static bool want_more(const chunk_buf *b, uint64_t bat_begin, uint64_t end)
{
    if (end < bat_begin + READER_BATCH_ROWS)
        return true;
    return end % READER_BATCH_ROWS >= b->rows[b->n - 1];
}

/* Fetches chunks for the next round: at least HASH_BATCH_CHUNKS new ones
 * and, with struct fields, what want_more() asks for. *end is the file row
 * after the last chunk held. */
static int fetch_round(stream *s, chunk_buf *b, uint64_t bat_begin, uint64_t *end, bool *eof)
{
    int rc = 0;
    for (size_t got = 0; !rc && !*eof &&
                         (got < HASH_BATCH_CHUNKS || (s->batched && want_more(b, bat_begin, *end)));) {
        duckdb_data_chunk c;
        if ((rc = next_chunk(s, &c)) != 0)
            break;
        if (!c) {
            *eof = true;
            break;
        }
        if ((rc = chunk_push(b, c)) != 0) {
            duckdb_destroy_data_chunk(&c);
            break;
        }
        *end += b->rows[b->n - 1];
        got++;
    }
    return rc;
}

/* Reads and hashes the whole result; *rows gets the row count. Chunks that
 * hold rows of a reader batch not yet complete stay for the next round
 * (`carried`: plain fields have hashed them already). */
static int stream_all(stream *s, uint64_t *rows)
{
    chunk_buf b = {0};
    uint64_t first = 0, end = 0, bat_begin = 0; /* file rows: b.c[0], after b, struct fields */
    size_t carried = 0;
    bool eof = false;
    int rc = 0;
    *rows = 0;
    while (!rc && !eof) {
        rc = fetch_round(s, &b, bat_begin, &end, &eof);
        if (rc || b.n == 0)
            break;
        hash_round r = {b.c, b.n, b.rows, first, carried, bat_begin, bat_begin,
                        s->rg->start, s->rg->n};
        if (s->batched)
            r.bat_end = eof ? end : end / READER_BATCH_ROWS * READER_BATCH_ROWS;
        rc = hash_round_run(s->dg, &r, s->fields, s->nfields, s->path);
        for (size_t k = carried; k < b.n; k++)
            *rows += b.rows[k];
        size_t keep = s->batched ? chunk_at(&b, first, r.bat_end) : b.n;
        for (size_t k = 0; k < keep; k++) {
            first += b.rows[k];
            duckdb_destroy_data_chunk(&b.c[k]);
        }
        memmove(b.c, b.c + keep, (b.n - keep) * sizeof *b.c);
        memmove(b.rows, b.rows + keep, (b.n - keep) * sizeof *b.rows);
        b.n -= keep;
        carried = b.n;
        bat_begin = r.bat_end;
    }
    for (size_t k = 0; k < b.n; k++)
        duckdb_destroy_data_chunk(&b.c[k]);
    free(b.c);
    free(b.rows);
    return rc;
}

/* ------------------------------------------------------------ entry point */

/* The Arrow schema of the file, as arrow-rs derives it. */
static int load_schema(silt_engine *e, const char *qpath, const char *path, pq_schema *sch,
                       silt_arrow_field **fields, size_t *nfields)
{
    size_t len = strlen(qpath) + 200;
    char *sql = malloc(len);
    if (!sql)
        return oom();
    snprintf(sql, len,
             "SELECT name, type, type_length, repetition_type, num_children, converted_type, "
             "scale, precision, logical_type FROM parquet_schema(%s)", qpath);
    int rc = silt_engine_query_rows(e, sql, schema_row, sch);
    free(sql);
    if (rc == 0)
        rc = sch->rc;
    if (rc)
        return silt_err_context(rc, "%s", path);
    if (sch->n == 0 || sch->nodes[0].num_children <= 0)
        return silt_err(SILT_EINVAL, "%s: Parquet file without columns", path);
    *nfields = (size_t)sch->nodes[0].num_children;
    *fields = calloc(*nfields, sizeof **fields);
    if (!*fields)
        return oom();
    size_t pos = 1;
    for (size_t i = 0; i < *nfields && !rc; i++)
        rc = arrow_field(sch, &pos, &(*fields)[i], NULL);
    if (!rc && pos != sch->n)
        rc = silt_err(SILT_ECORRUPT, "logical hash: inconsistent Parquet schema");
    return rc ? silt_err_context(rc, "%s", path) : 0;
}

/* Streams `SELECT *` of the file through the hasher. */
static int hash_rows(silt_engine *e, const char *qpath, stream *s, uint64_t *rows)
{
    size_t len = strlen(qpath) + 40;
    char *sql = malloc(len);
    if (!sql)
        return oom();
    snprintf(sql, len, "SELECT * FROM read_parquet(%s)", qpath);
    duckdb_prepared_statement stmt = NULL;
    duckdb_result res;
    int rc = 0;
    if (duckdb_prepare(silt_engine_conn(e), sql, &stmt) == DuckDBError) {
        rc = silt_err(SILT_EINVAL, "%s: %s", s->path, duckdb_prepare_error(stmt));
        goto done;
    }
    if (duckdb_execute_prepared_streaming(stmt, &res) == DuckDBError) {
        rc = silt_engine_result_error(&res, s->path);
        duckdb_destroy_result(&res);
        goto done;
    }
    if (duckdb_column_count(&res) != s->nfields)
        rc = silt_err(SILT_EINTERNAL, "%s: DuckDB reads %llu columns, the Parquet schema has %zu",
                      s->path, (unsigned long long)duckdb_column_count(&res), s->nfields);
    s->res = &res;
    if (!rc)
        rc = stream_all(s, rows);
    duckdb_destroy_result(&res);
done:
    if (stmt)
        duckdb_destroy_prepare(&stmt);
    free(sql);
    return rc;
}

int silt_parquet_logical_hash(struct silt_engine *e, const char *path,
                              uint8_t out[SILT_ARROW_MH_LEN], uint64_t *num_rows)
{
    pq_schema sch = {0};
    silt_arrow_field *fields = NULL;
    size_t nfields = 0;
    silt_record_digest *dg = NULL;
    rg_list rg = {0};
    stream s = {0};
    uint64_t rows = 0;
    int rc = 0;

    char *qpath = silt_sql_str(path);
    if (!qpath) {
        rc = oom();
        goto done;
    }
    rc = load_schema(e, qpath, path, &sch, &fields, &nfields);
    if (!rc && (rc = silt_record_digest_new(&dg, fields, nfields)) != 0)
        silt_err_context(rc, "%s", path);
    s = (stream){NULL, dg, fields, nfields, false, &rg, path};
    for (size_t i = 0; i < nfields; i++)
        s.batched = s.batched || is_batched(&fields[i]);
    if (!rc && s.batched && (rc = load_row_groups(e, qpath, &rg)) != 0)
        silt_err_context(rc, "%s", path);
    if (!rc)
        rc = hash_rows(e, qpath, &s, &rows);
    if (!rc && s.batched && rows != rg.total)
        rc = silt_err(SILT_ECORRUPT, "%s: DuckDB read %llu rows, the row groups hold %llu", path,
                      (unsigned long long)rows, (unsigned long long)rg.total);
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
    silt_record_digest_free(dg);
    for (size_t i = 0; fields && i < nfields; i++)
        afields_free((silt_arrow_field *)fields[i].type.children, fields[i].type.num_children);
    free(fields);
    free(rg.start);
    schema_free(&sch);
    free(qpath);
    return rc;
}
