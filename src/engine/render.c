/* render.c — the value renderer over DuckDB vectors (styles and type rules
 * in render.h).
 *
 * Invariants:
 *  - one tree node per type in the logical type (children for LIST/ARRAY
 *    (1), MAP (key, value), STRUCT (fields), UNION (members)); names and
 *    enum labels are copied when the tree is built, so rendering calls no
 *    allocating DuckDB function;
 *  - nested values are always rendered as JSON; only the top level of a
 *    SILT_RENDER_TEXT value drops the quotes of a string-like scalar;
 *  - every number is written exactly from its storage (no double
 *    conversion for integers, HUGEINT, DECIMAL, BIGNUM).
 */
#include "engine/render.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

struct silt_render {
    duckdb_type id;
    duckdb_type store; /* DECIMAL / ENUM: the internal integer type */
    uint8_t scale;     /* DECIMAL */
    bool json_alias;   /* VARCHAR aliased JSON: embedded as it is */
    idx_t array_size;  /* ARRAY */
    size_t nchild;
    struct silt_render *child; /* nchild nodes */
    char **names;              /* STRUCT / UNION: nchild names */
    char **labels;             /* ENUM: nlabels labels */
    size_t nlabels;
};

/* ---- building ---------------------------------------------------------------- */

static void node_clear(silt_render *r)
{
    for (size_t i = 0; r->child && i < r->nchild; i++)
        node_clear(&r->child[i]);
    for (size_t i = 0; r->names && i < r->nchild; i++)
        free(r->names[i]);
    for (size_t i = 0; r->labels && i < r->nlabels; i++)
        free(r->labels[i]);
    free(r->child);
    free(r->names);
    free(r->labels);
}

/* Copies a DuckDB-allocated string (freed here) into a malloc'd one. */
static char *take_name(char *dname)
{
    char *s = strdup(dname ? dname : "");
    duckdb_free(dname);
    return s;
}

static int node_init(silt_render *r, duckdb_logical_type t);

/* Scalar types put_node knows (besides DECIMAL, ENUM, VARCHAR). */
static bool known_scalar(duckdb_type id)
{
    switch (id) {
    case DUCKDB_TYPE_BOOLEAN: case DUCKDB_TYPE_TINYINT: case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER: case DUCKDB_TYPE_BIGINT: case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT: case DUCKDB_TYPE_UINTEGER: case DUCKDB_TYPE_UBIGINT:
    case DUCKDB_TYPE_HUGEINT: case DUCKDB_TYPE_UHUGEINT: case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE: case DUCKDB_TYPE_BLOB: case DUCKDB_TYPE_BIT: case DUCKDB_TYPE_BIGNUM:
    case DUCKDB_TYPE_DATE: case DUCKDB_TYPE_TIME: case DUCKDB_TYPE_TIME_NS: case DUCKDB_TYPE_TIME_TZ:
    case DUCKDB_TYPE_INTERVAL: case DUCKDB_TYPE_UUID: case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S: case DUCKDB_TYPE_TIMESTAMP_MS: case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_TIMESTAMP_TZ: case DUCKDB_TYPE_SQLNULL:
        return true;
    default:
        return false;
    }
}

static int node_children(silt_render *r, size_t n, bool named)
{
    r->nchild = n;
    r->child = calloc(n ? n : 1, sizeof *r->child);
    r->names = named ? calloc(n ? n : 1, sizeof *r->names) : NULL;
    return r->child && (!named || r->names) ? 0 : SILT_ENOMEM;
}

/* One child of type `ct` (destroyed here). */
static int node_child(silt_render *r, size_t i, duckdb_logical_type ct)
{
    if (!ct)
        return SILT_ENOMEM;
    int rc = node_init(&r->child[i], ct);
    duckdb_destroy_logical_type(&ct);
    return rc;
}

static int node_nested(silt_render *r, duckdb_logical_type t)
{
    int rc = 0;
    switch (r->id) {
    case DUCKDB_TYPE_LIST:
        rc = node_children(r, 1, false);
        return rc ? rc : node_child(r, 0, duckdb_list_type_child_type(t));
    case DUCKDB_TYPE_ARRAY:
        r->array_size = duckdb_array_type_array_size(t);
        rc = node_children(r, 1, false);
        return rc ? rc : node_child(r, 0, duckdb_array_type_child_type(t));
    case DUCKDB_TYPE_MAP:
        rc = node_children(r, 2, false);
        if (rc == 0)
            rc = node_child(r, 0, duckdb_map_type_key_type(t));
        return rc ? rc : node_child(r, 1, duckdb_map_type_value_type(t));
    case DUCKDB_TYPE_STRUCT:
    case DUCKDB_TYPE_UNION: {
        bool un = r->id == DUCKDB_TYPE_UNION;
        size_t n = un ? duckdb_union_type_member_count(t) : duckdb_struct_type_child_count(t);
        rc = node_children(r, n, true);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            r->names[i] = take_name(un ? duckdb_union_type_member_name(t, i) : duckdb_struct_type_child_name(t, i));
            rc = r->names[i] ? node_child(r, i, un ? duckdb_union_type_member_type(t, i)
                                                    : duckdb_struct_type_child_type(t, i))
                             : SILT_ENOMEM;
        }
        return rc;
    }
    default:
        return 0;
    }
}

static int node_init(silt_render *r, duckdb_logical_type t)
{
    memset(r, 0, sizeof *r);
    r->id = duckdb_get_type_id(t);
    switch (r->id) {
    case DUCKDB_TYPE_DECIMAL:
        r->store = duckdb_decimal_internal_type(t);
        r->scale = duckdb_decimal_scale(t);
        return 0;
    case DUCKDB_TYPE_ENUM:
        r->store = duckdb_enum_internal_type(t);
        r->nlabels = duckdb_enum_dictionary_size(t);
        r->labels = calloc(r->nlabels ? r->nlabels : 1, sizeof *r->labels);
        if (!r->labels)
            return SILT_ENOMEM;
        for (size_t i = 0; i < r->nlabels; i++)
            if (!(r->labels[i] = take_name(duckdb_enum_dictionary_value(t, i))))
                return SILT_ENOMEM;
        return 0;
    case DUCKDB_TYPE_VARCHAR: {
        char *alias = duckdb_logical_type_get_alias(t);
        r->json_alias = alias && strcmp(alias, "JSON") == 0;
        duckdb_free(alias);
        return 0;
    }
    case DUCKDB_TYPE_LIST: case DUCKDB_TYPE_ARRAY: case DUCKDB_TYPE_MAP:
    case DUCKDB_TYPE_STRUCT: case DUCKDB_TYPE_UNION:
        return node_nested(r, t);
    default:
        if (!known_scalar(r->id))
            return silt_err(SILT_EUNSUPPORTED, "sql: cannot print values of type %d (cast the column)",
                            (int)r->id);
        return 0;
    }
}

int silt_render_new(silt_render **out, duckdb_logical_type t)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return silt_err(SILT_ENOMEM, "sql: out of memory");
    int rc = node_init(*out, t);
    if (rc < 0) {
        silt_render_free(*out);
        *out = NULL;
        return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "sql: out of memory") : rc;
    }
    return 0;
}

void silt_render_free(silt_render *r)
{
    if (!r)
        return;
    node_clear(r);
    free(r);
}

bool silt_render_is_number(const silt_render *r)
{
    switch (r->id) {
    case DUCKDB_TYPE_TINYINT: case DUCKDB_TYPE_SMALLINT: case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT: case DUCKDB_TYPE_UTINYINT: case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER: case DUCKDB_TYPE_UBIGINT: case DUCKDB_TYPE_HUGEINT:
    case DUCKDB_TYPE_UHUGEINT: case DUCKDB_TYPE_DECIMAL: case DUCKDB_TYPE_FLOAT:
    case DUCKDB_TYPE_DOUBLE: case DUCKDB_TYPE_BIGNUM:
        return true;
    default:
        return false;
    }
}

bool silt_render_is_null(duckdb_vector v, idx_t row)
{
    uint64_t *valid = duckdb_vector_get_validity(v);
    return valid && !duckdb_validity_row_is_valid(valid, row);
}

/* ---- scalars ------------------------------------------------------------------- */

typedef unsigned __int128 u128;

/* Decimal digits of x into the end of buf[64]; returns the first digit.
 * 64-bit division once the value fits (128-bit division is a library call). */
static char *u128_digits(u128 x, char *buf)
{
    char *p = buf + 63;
    *p = '\0';
    while (x > UINT64_MAX) {
        *--p = (char)('0' + (int)(x % 10));
        x /= 10;
    }
    uint64_t y = (uint64_t)x;
    do {
        *--p = (char)('0' + (int)(y % 10));
        y /= 10;
    } while (y);
    return p;
}

/* Signed 128-bit integer `v` with `scale` decimal places. */
static int put_scaled(silt_buf *b, bool neg, u128 mag, uint8_t scale)
{
    char buf[64];
    char *d = u128_digits(mag, buf);
    size_t n = strlen(d);
    int rc = neg ? silt_buf_putc(b, '-') : 0;
    if (scale == 0)
        return rc ? rc : silt_buf_append(b, d, n);
    if (rc == 0 && n <= scale) {
        rc = silt_buf_puts(b, "0.");
        for (size_t i = n; rc == 0 && i < scale; i++)
            rc = silt_buf_putc(b, '0');
        return rc ? rc : silt_buf_append(b, d, n);
    }
    if (rc == 0)
        rc = silt_buf_append(b, d, n - scale);
    if (rc == 0)
        rc = silt_buf_putc(b, '.');
    return rc ? rc : silt_buf_append(b, d + n - scale, scale);
}

static int put_signed(silt_buf *b, __int128 v, uint8_t scale)
{
    bool neg = v < 0;
    u128 mag = neg ? (u128)0 - (u128)v : (u128)v;
    return put_scaled(b, neg, mag, scale);
}

static __int128 hugeint_of(duckdb_hugeint h) { return (__int128)(((u128)(uint64_t)h.upper << 64) | h.lower); }

/* The integer stored at `row` of `data` with storage type `t` (DECIMAL/ENUM). */
static __int128 stored_int(duckdb_type t, const void *data, idx_t row)
{
    switch (t) {
    case DUCKDB_TYPE_TINYINT: return ((const int8_t *)data)[row];
    case DUCKDB_TYPE_SMALLINT: return ((const int16_t *)data)[row];
    case DUCKDB_TYPE_INTEGER: return ((const int32_t *)data)[row];
    case DUCKDB_TYPE_BIGINT: return ((const int64_t *)data)[row];
    case DUCKDB_TYPE_UTINYINT: return ((const uint8_t *)data)[row];
    case DUCKDB_TYPE_USMALLINT: return ((const uint16_t *)data)[row];
    case DUCKDB_TYPE_UINTEGER: return ((const uint32_t *)data)[row];
    case DUCKDB_TYPE_UBIGINT: return ((const uint64_t *)data)[row];
    case DUCKDB_TYPE_HUGEINT: return hugeint_of(((const duckdb_hugeint *)data)[row]);
    default: return 0;
    }
}

/* Shortest "%.*g" text that reads back as `d` (or as the float `d` when
 * `single`), with ".0" added when it would read as an integer. */
static int put_float(silt_buf *b, double d, bool single, bool json)
{
    if (isnan(d))
        return silt_buf_puts(b, json ? "null" : "nan");
    if (isinf(d))
        return silt_buf_puts(b, json ? "null" : d < 0 ? "-inf" : "inf");
    char s[40];
    /* The shortest precision that reads back. Any decimal of at most DBL_DIG
     * (FLT_DIG) digits that reads back as d is what "%.15g" ("%.6g") prints
     * with its trailing zeros dropped, so start there instead of at 1 —
     * except for subnormals, which carry fewer digits. */
    bool sub = d != 0 && fabs(d) < (single ? FLT_MIN : DBL_MIN);
    for (int p = sub ? 1 : single ? 6 : 15; p <= 17; p++) {
        snprintf(s, sizeof s, "%.*g", p, d);
        double back = strtod(s, NULL);
        if (single ? (float)back == (float)d : back == d)
            break;
    }
    char *e = strchr(s, 'e');
    int x = e ? atoi(e + 1) : 0, p = 0;
    if (e && x >= 0 && x < 17) { /* %g chose an exponent for fewer digits than places */
        for (const char *q = s; q < e; q++)
            p += *q >= '0' && *q <= '9';
        snprintf(s, sizeof s, "%.*f", p - 1 > x ? p - 1 - x : 0, d);
    }
    if (!strpbrk(s, ".e"))
        strcat(s, ".0");
    return silt_buf_puts(b, s);
}

/* BIGNUM (VARINT) storage: a 3-byte header whose top bit is set for a
 * non-negative value, then the big-endian magnitude; a negative value has
 * header and magnitude bytes inverted. */
static int put_bignum(silt_buf *b, const unsigned char *p, size_t n)
{
    if (n < 4)
        return silt_buf_putc(b, '0');
    bool neg = !(p[0] & 0x80);
    size_t m = n - 3;
    unsigned char *mag = malloc(m);
    char *digits = malloc(m * 3 + 2); /* 256^m < 10^(3m) */
    if (!mag || !digits) {
        free(mag);
        free(digits);
        return SILT_ENOMEM;
    }
    for (size_t i = 0; i < m; i++)
        mag[i] = neg ? (unsigned char)~p[3 + i] : p[3 + i];
    size_t nd = 0, start = 0;
    while (start < m) { /* long division by 10, most significant byte first */
        unsigned rem = 0;
        for (size_t i = start; i < m; i++) {
            unsigned cur = rem << 8 | mag[i];
            mag[i] = (unsigned char)(cur / 10);
            rem = cur % 10;
        }
        digits[nd++] = (char)('0' + rem);
        while (start < m && mag[start] == 0)
            start++;
    }
    if (nd == 0)
        digits[nd++] = '0';
    int rc = neg ? silt_buf_putc(b, '-') : 0;
    for (size_t i = nd; rc == 0 && i > 0; i--)
        rc = silt_buf_putc(b, digits[i - 1]);
    free(mag);
    free(digits);
    return rc;
}

/* ---- string-like scalars ----------------------------------------------------- */

int silt_render_json_string(silt_buf *b, const char *s, size_t n)
{
    int rc = silt_buf_putc(b, '"');
    size_t run = 0; /* bytes copied as they are, pending */
    for (size_t i = 0; rc == 0 && i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r"
                        : c == '\t' ? "\\t" : c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;
        if (!esc && c >= 0x20) {
            run++;
            continue;
        }
        rc = silt_buf_append(b, s + i - run, run);
        run = 0;
        if (rc == 0)
            rc = esc ? silt_buf_puts(b, esc) : silt_buf_printf(b, "\\u%04x", c); /* NUL is \u0000 */
    }
    if (rc == 0)
        rc = silt_buf_append(b, s + n - run, run);
    return rc ? rc : silt_buf_putc(b, '"');
}

static int put_str(silt_buf *b, const char *s, size_t n, bool json)
{
    return json ? silt_render_json_string(b, s, n) : silt_buf_append(b, s, n);
}

/* ".f" with the shortest exact fraction of 3, 6 or 9 digits (`nanos` of a
 * second, < 10^9), nothing when zero. */
static void frac_text(char *out, size_t cap, uint32_t nanos)
{
    if (nanos == 0)
        out[0] = '\0';
    else if (nanos % 1000000 == 0)
        snprintf(out, cap, ".%03u", nanos / 1000000);
    else if (nanos % 1000 == 0)
        snprintf(out, cap, ".%06u", nanos / 1000);
    else
        snprintf(out, cap, ".%09u", nanos);
}

/* Time of day from nanoseconds since midnight (0 .. 24h inclusive). */
static void time_text(char *out, size_t cap, int64_t ns)
{
    char frac[16];
    frac_text(frac, sizeof frac, (uint32_t)(ns % 1000000000));
    int64_t s = ns / 1000000000;
    snprintf(out, cap, "%02d:%02d:%02d%s", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60), frac);
}

/* RFC 3339 UTC of `v` units of `per_sec` per second since the epoch. */
static void timestamp_text(char *out, int64_t v, int64_t per_sec)
{
    int64_t sec = v / per_sec, rem = v % per_sec;
    if (rem < 0) {
        sec--;
        rem += per_sec;
    }
    silt_time t = {sec, (uint32_t)(rem * (1000000000 / per_sec))};
    silt_time_format(t, out);
}

static void date_text(char *out, duckdb_date d)
{
    if (!duckdb_is_finite_date(d)) {
        strcpy(out, d.days > 0 ? "infinity" : "-infinity");
        return;
    }
    silt_time_format((silt_time){(int64_t)d.days * 86400, 0}, out);
    *strchr(out, 'T') = '\0';
}

static void time_tz_text(char *out, size_t cap, duckdb_time_tz v)
{
    duckdb_time_tz_struct t = duckdb_from_time_tz(v);
    char tm[40];
    time_text(tm, sizeof tm,
              ((int64_t)t.time.hour * 3600 + t.time.min * 60 + t.time.sec) * 1000000000 +
                  (int64_t)t.time.micros * 1000);
    int off = t.offset < 0 ? -t.offset : t.offset;
    if (off % 60)
        snprintf(out, cap, "%s%c%02d:%02d:%02d", tm, t.offset < 0 ? '-' : '+', off / 3600, off / 60 % 60,
                 off % 60);
    else
        snprintf(out, cap, "%s%c%02d:%02d", tm, t.offset < 0 ? '-' : '+', off / 3600, off / 60 % 60);
}

/* ISO 8601 duration; each non-zero part carries its own sign. */
static void interval_text(char *out, size_t cap, duckdb_interval iv)
{
    if (iv.months == 0 && iv.days == 0 && iv.micros == 0) {
        snprintf(out, cap, "PT0S");
        return;
    }
    size_t n = 0;
    n += (size_t)snprintf(out + n, cap - n, "P");
    if (iv.months / 12)
        n += (size_t)snprintf(out + n, cap - n, "%dY", iv.months / 12);
    if (iv.months % 12)
        n += (size_t)snprintf(out + n, cap - n, "%dM", iv.months % 12);
    if (iv.days)
        n += (size_t)snprintf(out + n, cap - n, "%dD", iv.days);
    if (iv.micros == 0)
        return;
    int64_t h = iv.micros / 3600000000LL, rem = iv.micros % 3600000000LL;
    int64_t mi = rem / 60000000, us = rem % 60000000;
    n += (size_t)snprintf(out + n, cap - n, "T");
    if (h)
        n += (size_t)snprintf(out + n, cap - n, "%lldH", (long long)h);
    if (mi)
        n += (size_t)snprintf(out + n, cap - n, "%lldM", (long long)mi);
    if (us) {
        int64_t a = us < 0 ? -us : us;
        char frac[16] = "";
        if (a % 1000000) {
            snprintf(frac, sizeof frac, ".%06lld", (long long)(a % 1000000));
            for (char *e = frac + strlen(frac) - 1; *e == '0'; e--)
                *e = '\0';
        }
        snprintf(out + n, cap - n, "%s%lld%sS", us < 0 ? "-" : "", (long long)(a / 1000000), frac);
    }
}

static void uuid_text(char *out, duckdb_hugeint h)
{
    uint64_t hi = (uint64_t)h.upper ^ (UINT64_C(1) << 63), lo = h.lower;
    snprintf(out, 40, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(hi >> 32), (unsigned)(hi >> 16 & 0xffff),
             (unsigned)(hi & 0xffff), (unsigned)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffULL));
}

/* BIT storage: a byte with the number of padding bits, then the bits, most
 * significant first, the padding at the start of the first byte. */
static int put_bits(silt_buf *b, const unsigned char *p, size_t n, bool json)
{
    int rc = json ? silt_buf_putc(b, '"') : 0;
    for (size_t i = 1; rc == 0 && i < n; i++)
        for (int bit = 7 - (i == 1 ? p[0] : 0); rc == 0 && bit >= 0; bit--)
            rc = silt_buf_putc(b, (p[i] >> bit & 1) ? '1' : '0');
    return rc ? rc : json ? silt_buf_putc(b, '"') : 0;
}

static int put_blob(silt_buf *b, const unsigned char *p, size_t n, bool json)
{
    int rc = json ? silt_buf_putc(b, '"') : 0;
    if (rc == 0)
        rc = silt_base64_encode(p, n, b);
    return rc ? rc : json ? silt_buf_putc(b, '"') : 0;
}

/* ---- values -------------------------------------------------------------------- */

static int put_node(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row, bool json);

/* A child value: null or the value as JSON. */
static int put_child(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row)
{
    if (silt_render_is_null(v, row))
        return silt_buf_puts(b, "null");
    return put_node(b, r, v, row, true);
}

static int put_elements(silt_buf *b, const silt_render *el, duckdb_vector child, idx_t first, idx_t n)
{
    int rc = silt_buf_putc(b, '[');
    for (idx_t i = 0; rc == 0 && i < n; i++) {
        if (i)
            rc = silt_buf_putc(b, ',');
        if (rc == 0)
            rc = put_child(b, el, child, first + i);
    }
    return rc ? rc : silt_buf_putc(b, ']');
}

static int put_map(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row)
{
    duckdb_list_entry e = ((const duckdb_list_entry *)duckdb_vector_get_data(v))[row];
    duckdb_vector kv = duckdb_list_vector_get_child(v);
    duckdb_vector keys = duckdb_struct_vector_get_child(kv, 0), vals = duckdb_struct_vector_get_child(kv, 1);
    bool obj = r->child[0].id == DUCKDB_TYPE_VARCHAR;
    int rc = silt_buf_putc(b, obj ? '{' : '[');
    for (idx_t i = 0; rc == 0 && i < e.length; i++) {
        idx_t k = e.offset + i;
        if (i)
            rc = silt_buf_putc(b, ',');
        if (rc == 0 && !obj)
            rc = silt_buf_puts(b, "{\"key\":");
        if (rc == 0)
            rc = obj ? put_node(b, &r->child[0], keys, k, true) : put_child(b, &r->child[0], keys, k);
        if (rc == 0)
            rc = silt_buf_puts(b, obj ? ":" : ",\"value\":");
        if (rc == 0)
            rc = put_child(b, &r->child[1], vals, k);
        if (rc == 0 && !obj)
            rc = silt_buf_putc(b, '}');
    }
    return rc ? rc : silt_buf_putc(b, obj ? '}' : ']');
}

static int put_struct(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row)
{
    int rc = silt_buf_putc(b, '{');
    for (size_t i = 0; rc == 0 && i < r->nchild; i++) {
        if (i)
            rc = silt_buf_putc(b, ',');
        if (rc == 0)
            rc = silt_render_json_string(b, r->names[i], strlen(r->names[i]));
        if (rc == 0)
            rc = silt_buf_putc(b, ':');
        if (rc == 0)
            rc = put_child(b, &r->child[i], duckdb_struct_vector_get_child(v, i), row);
    }
    return rc ? rc : silt_buf_putc(b, '}');
}

/* A UNION vector is a STRUCT of (tag, member…): {"member": value}. */
static int put_union(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row)
{
    uint8_t tag = ((const uint8_t *)duckdb_vector_get_data(duckdb_struct_vector_get_child(v, 0)))[row];
    if (tag >= r->nchild)
        return silt_buf_puts(b, "null");
    int rc = silt_buf_putc(b, '{');
    if (rc == 0)
        rc = silt_render_json_string(b, r->names[tag], strlen(r->names[tag]));
    if (rc == 0)
        rc = silt_buf_putc(b, ':');
    if (rc == 0)
        rc = put_child(b, &r->child[tag], duckdb_struct_vector_get_child(v, (idx_t)tag + 1), row);
    return rc ? rc : silt_buf_putc(b, '}');
}

static int put_nested(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row)
{
    switch (r->id) {
    case DUCKDB_TYPE_LIST: {
        duckdb_list_entry e = ((const duckdb_list_entry *)duckdb_vector_get_data(v))[row];
        return put_elements(b, &r->child[0], duckdb_list_vector_get_child(v), e.offset, e.length);
    }
    case DUCKDB_TYPE_ARRAY:
        return put_elements(b, &r->child[0], duckdb_array_vector_get_child(v), row * r->array_size,
                            r->array_size);
    case DUCKDB_TYPE_MAP:
        return put_map(b, r, v, row);
    case DUCKDB_TYPE_STRUCT:
        return put_struct(b, r, v, row);
    default:
        return put_union(b, r, v, row);
    }
}

/* Scalars held as duckdb_string_t. */
static int put_stringish(silt_buf *b, const silt_render *r, const void *data, idx_t row, bool json)
{
    duckdb_string_t s = ((const duckdb_string_t *)data)[row];
    const char *p = duckdb_string_t_data(&s);
    size_t n = duckdb_string_t_length(s);
    switch (r->id) {
    case DUCKDB_TYPE_BLOB: return put_blob(b, (const unsigned char *)p, n, json);
    case DUCKDB_TYPE_BIT: return put_bits(b, (const unsigned char *)p, n, json);
    case DUCKDB_TYPE_BIGNUM: return put_bignum(b, (const unsigned char *)p, n);
    default: return r->json_alias && json ? silt_buf_append(b, p, n) : put_str(b, p, n, json);
    }
}

/* Scalars whose text is computed into a small buffer. */
static int put_formatted(silt_buf *b, const silt_render *r, const void *data, idx_t row, bool json)
{
    char s[80];
    switch (r->id) {
    case DUCKDB_TYPE_DATE: date_text(s, ((const duckdb_date *)data)[row]); break;
    case DUCKDB_TYPE_TIME: time_text(s, sizeof s, ((const int64_t *)data)[row] * 1000); break;
    case DUCKDB_TYPE_TIME_NS: time_text(s, sizeof s, ((const int64_t *)data)[row]); break;
    case DUCKDB_TYPE_TIME_TZ: time_tz_text(s, sizeof s, ((const duckdb_time_tz *)data)[row]); break;
    case DUCKDB_TYPE_INTERVAL: interval_text(s, sizeof s, ((const duckdb_interval *)data)[row]); break;
    case DUCKDB_TYPE_UUID: uuid_text(s, ((const duckdb_hugeint *)data)[row]); break;
    default: { /* timestamps: int64 in units of the type */
        int64_t x = ((const int64_t *)data)[row];
        int64_t per = r->id == DUCKDB_TYPE_TIMESTAMP_S ? 1 : r->id == DUCKDB_TYPE_TIMESTAMP_MS ? 1000
                    : r->id == DUCKDB_TYPE_TIMESTAMP_NS ? 1000000000 : 1000000;
        if (x == INT64_MAX || x == -INT64_MAX) /* DuckDB's infinities, in every precision */
            strcpy(s, x > 0 ? "infinity" : "-infinity");
        else
            timestamp_text(s, x, per);
    }
    }
    return put_str(b, s, strlen(s), json);
}

static int put_node(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row, bool json)
{
    const void *data = duckdb_vector_get_data(v);
    switch (r->id) {
    case DUCKDB_TYPE_LIST: case DUCKDB_TYPE_ARRAY: case DUCKDB_TYPE_MAP:
    case DUCKDB_TYPE_STRUCT: case DUCKDB_TYPE_UNION:
        return put_nested(b, r, v, row);
    case DUCKDB_TYPE_BOOLEAN:
        return silt_buf_puts(b, ((const bool *)data)[row] ? "true" : "false");
    case DUCKDB_TYPE_TINYINT: case DUCKDB_TYPE_SMALLINT: case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT: case DUCKDB_TYPE_UTINYINT: case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER: case DUCKDB_TYPE_UBIGINT: case DUCKDB_TYPE_HUGEINT:
        return put_signed(b, stored_int(r->id, data, row), 0);
    case DUCKDB_TYPE_UHUGEINT: {
        duckdb_uhugeint u = ((const duckdb_uhugeint *)data)[row];
        return put_scaled(b, false, (u128)u.upper << 64 | u.lower, 0);
    }
    case DUCKDB_TYPE_DECIMAL:
        return put_signed(b, stored_int(r->store, data, row), r->scale);
    case DUCKDB_TYPE_FLOAT:
        return put_float(b, ((const float *)data)[row], true, json);
    case DUCKDB_TYPE_DOUBLE:
        return put_float(b, ((const double *)data)[row], false, json);
    case DUCKDB_TYPE_ENUM: {
        __int128 i = stored_int(r->store, data, row);
        const char *l = i >= 0 && (size_t)i < r->nlabels ? r->labels[i] : "";
        return put_str(b, l, strlen(l), json);
    }
    case DUCKDB_TYPE_VARCHAR: case DUCKDB_TYPE_BLOB: case DUCKDB_TYPE_BIT: case DUCKDB_TYPE_BIGNUM:
        return put_stringish(b, r, data, row, json);
    case DUCKDB_TYPE_DATE: case DUCKDB_TYPE_TIME: case DUCKDB_TYPE_TIME_NS: case DUCKDB_TYPE_TIME_TZ:
    case DUCKDB_TYPE_INTERVAL: case DUCKDB_TYPE_UUID: case DUCKDB_TYPE_TIMESTAMP:
    case DUCKDB_TYPE_TIMESTAMP_S: case DUCKDB_TYPE_TIMESTAMP_MS: case DUCKDB_TYPE_TIMESTAMP_NS:
    case DUCKDB_TYPE_TIMESTAMP_TZ:
        return put_formatted(b, r, data, row, json);
    default: /* SQLNULL and anything without values */
        return silt_buf_puts(b, "null");
    }
}

int silt_render_put(silt_buf *b, const silt_render *r, duckdb_vector v, idx_t row, silt_render_style style)
{
    if (silt_render_is_null(v, row))
        return silt_buf_puts(b, "null");
    return put_node(b, r, v, row, style == SILT_RENDER_JSON);
}
