/* parquet_meta.c — Parquet footer reader and the isAdjustedToUTC patcher.
 *
 * Role: a small, bounds-checked Thrift compact protocol reader that walks the
 * Parquet FileMetaData (field ids from apache/parquet-format parquet.thrift)
 * and builds a silt_parquet_meta; plus the in-place footer edit that marks
 * TIMESTAMP columns as UTC-adjusted. No DuckDB here.
 *
 * Invariants:
 *  - every read goes through `rd` and checks pos + n <= len first; counts
 *    read from the input (list sizes, string lengths) are checked against the
 *    remaining bytes before anything is allocated, so a small input can never
 *    cause a large allocation;
 *  - nesting of Thrift containers/structs is limited to TH_MAX_DEPTH and the
 *    schema tree to SCHEMA_MAX_DEPTH, so recursion is bounded;
 *  - unknown fields of any compact type are skipped generically;
 *  - the patcher validates every requested column and re-parses the patched
 *    footer in memory before it writes a byte: a failed call leaves the file
 *    as it was. The footer length never changes (one nibble per column).
 */
#include "engine/parquet_meta.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/arena.h"
#include "util/error.h"

#define TH_MAX_DEPTH 64
#define SCHEMA_MAX_DEPTH 64
#define FOOTER_MAX (256u * 1024u * 1024u)

/* Compact protocol type ids. */
enum {
    CT_STOP = 0,
    CT_TRUE = 1,
    CT_FALSE = 2,
    CT_BYTE = 3,
    CT_I16 = 4,
    CT_I32 = 5,
    CT_I64 = 6,
    CT_DOUBLE = 7,
    CT_BINARY = 8,
    CT_LIST = 9,
    CT_SET = 10,
    CT_MAP = 11,
    CT_STRUCT = 12,
};

/* ------------------------------------------------------------ the reader */

typedef struct rd {
    const uint8_t *p;
    size_t len;
    size_t pos;
    int depth;
} rd;

static int corrupt(const rd *r, const char *what)
{
    return silt_err(SILT_ECORRUPT, "corrupt footer: %s at byte %zu", what, r->pos);
}

static int rd_byte(rd *r, uint8_t *b)
{
    if (r->pos >= r->len)
        return corrupt(r, "unexpected end");
    *b = r->p[r->pos++];
    return 0;
}

static int rd_varint(rd *r, uint64_t *out)
{
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->len)
            return corrupt(r, "truncated varint");
        uint8_t b = r->p[r->pos++];
        if (i == 9 && b > 1)
            return corrupt(r, "varint overflow");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return corrupt(r, "varint too long");
}

static int64_t unzigzag(uint64_t u) { return (int64_t)(u >> 1) ^ -(int64_t)(u & 1); }

static int rd_i64(rd *r, int64_t *out)
{
    uint64_t u;
    int rc = rd_varint(r, &u);
    if (rc)
        return rc;
    *out = unzigzag(u);
    return 0;
}

static int rd_i32(rd *r, int32_t *out)
{
    uint64_t u;
    int rc = rd_varint(r, &u);
    if (rc)
        return rc;
    if (u > UINT32_MAX)
        return corrupt(r, "i32 out of range");
    *out = (int32_t)unzigzag(u);
    return 0;
}

/* Length-prefixed bytes; *s points into the input. */
static int rd_binary(rd *r, const uint8_t **s, size_t *n)
{
    uint64_t u;
    int rc = rd_varint(r, &u);
    if (rc)
        return rc;
    if (u > r->len - r->pos)
        return corrupt(r, "string longer than the footer");
    *s = r->p + r->pos;
    *n = (size_t)u;
    r->pos += (size_t)u;
    return 0;
}

/* Field header. *type == CT_STOP ends the struct. *hdr = position of the
 * header byte (its low nibble is the type, i.e. a bool field's value). */
static int rd_field(rd *r, int16_t *last, int *type, int16_t *id, size_t *hdr)
{
    *hdr = r->pos;
    uint8_t b = 0;
    int rc = rd_byte(r, &b);
    if (rc)
        return rc;
    *type = b & 0x0f;
    if (*type == CT_STOP)
        return 0;
    if (*type > CT_STRUCT)
        return corrupt(r, "unknown field type");
    int delta = b >> 4;
    int64_t fid;
    if (delta) {
        fid = (int64_t)*last + delta;
    } else {
        rc = rd_i64(r, &fid);
        if (rc)
            return rc;
    }
    if (fid < INT16_MIN || fid > INT16_MAX)
        return corrupt(r, "field id out of range");
    *id = *last = (int16_t)fid;
    return 0;
}

/* List/set header. Every element takes at least one byte, so a count larger
 * than the remaining input is corrupt (this also bounds allocations). */
static int rd_list(rd *r, int *etype, size_t *count)
{
    uint8_t b = 0;
    int rc = rd_byte(r, &b);
    if (rc)
        return rc;
    *etype = b & 0x0f;
    uint64_t n = b >> 4;
    if (n == 15) {
        rc = rd_varint(r, &n);
        if (rc)
            return rc;
    }
    if (*etype == CT_STOP || *etype > CT_STRUCT)
        return corrupt(r, "bad list element type");
    if (n > r->len - r->pos)
        return corrupt(r, "list longer than the footer");
    *count = (size_t)n;
    return 0;
}

static int skip(rd *r, int type, bool in_container);

static int skip_struct(rd *r)
{
    if (++r->depth > TH_MAX_DEPTH)
        return corrupt(r, "nesting too deep");
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        int rc = rd_field(r, &last, &type, &id, &hdr);
        if (rc)
            return rc;
        if (type == CT_STOP)
            break;
        rc = skip(r, type, false);
        if (rc)
            return rc;
    }
    r->depth--;
    return 0;
}

/* Skips one value of compact type `type`. A bool struct field has no value
 * bytes (it is in the header); a bool container element is one byte. */
static int skip(rd *r, int type, bool in_container)
{
    uint8_t b = 0;
    uint64_t u;
    const uint8_t *s;
    size_t n;
    int rc = 0;
    switch (type) {
    case CT_TRUE:
    case CT_FALSE:
        return in_container ? rd_byte(r, &b) : 0;
    case CT_BYTE:
        return rd_byte(r, &b);
    case CT_I16:
    case CT_I32:
    case CT_I64:
        return rd_varint(r, &u);
    case CT_DOUBLE:
        if (r->len - r->pos < 8)
            return corrupt(r, "truncated double");
        r->pos += 8;
        return 0;
    case CT_BINARY:
        return rd_binary(r, &s, &n);
    case CT_LIST:
    case CT_SET: {
        int et;
        if ((rc = rd_list(r, &et, &n)))
            return rc;
        if (++r->depth > TH_MAX_DEPTH)
            return corrupt(r, "nesting too deep");
        for (size_t i = 0; i < n && !rc; i++)
            rc = skip(r, et, true);
        r->depth--;
        return rc;
    }
    case CT_MAP: {
        if ((rc = rd_varint(r, &u)))
            return rc;
        if (u == 0)
            return 0;
        if (u > r->len - r->pos)
            return corrupt(r, "map larger than the footer");
        if ((rc = rd_byte(r, &b)))
            return rc;
        int kt = b >> 4, vt = b & 0x0f;
        if (kt == CT_STOP || kt > CT_STRUCT || vt == CT_STOP || vt > CT_STRUCT)
            return corrupt(r, "bad map types");
        if (++r->depth > TH_MAX_DEPTH)
            return corrupt(r, "nesting too deep");
        for (uint64_t i = 0; i < u && !rc; i++) {
            rc = skip(r, kt, true);
            if (!rc)
                rc = skip(r, vt, true);
        }
        r->depth--;
        return rc;
    }
    case CT_STRUCT:
        return skip_struct(r);
    default:
        return corrupt(r, "unknown value type");
    }
}

/* Checks a known field's wire type. */
static int want(const rd *r, int got, int expect, const char *field)
{
    if (got == expect)
        return 0;
    return silt_err(SILT_ECORRUPT, "corrupt footer: field %s has wrong type %d at byte %zu", field, got,
                    r->pos);
}

static int want_bool(const rd *r, int got, const char *field)
{
    if (got == CT_TRUE || got == CT_FALSE)
        return 0;
    return want(r, got, CT_TRUE, field);
}

static int enter(rd *r)
{
    if (++r->depth > TH_MAX_DEPTH)
        return corrupt(r, "nesting too deep");
    return 0;
}

/* ------------------------------------------------------------ schema */

typedef struct elem {
    const uint8_t *name;
    size_t name_len;
    bool has_name;
    int type, type_length, repetition, converted, scale, precision;
    int num_children; /* -1 when absent */
    int logical, unit, bit_width;
    bool utc, is_signed;
    size_t utc_pos;
} elem;

/* TimestampType / TimeType {1: isAdjustedToUTC bool, 2: unit TimeUnit} */
static int parse_time_type(rd *r, elem *e, bool record_pos)
{
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        if (id == 1) {
            if ((rc = want_bool(r, type, "TimestampType.isAdjustedToUTC")))
                return rc;
            e->utc = type == CT_TRUE;
            if (record_pos)
                e->utc_pos = hdr;
        } else if (id == 2) {
            if ((rc = want(r, type, CT_STRUCT, "TimestampType.unit")) || (rc = enter(r)))
                return rc;
            int16_t ulast = 0;
            for (;;) {
                int ut;
                int16_t uid;
                size_t uh;
                if ((rc = rd_field(r, &ulast, &ut, &uid, &uh)))
                    return rc;
                if (ut == CT_STOP)
                    break;
                if ((rc = skip(r, ut, false)))
                    return rc;
                e->unit = uid;
            }
            r->depth--;
        } else if ((rc = skip(r, type, false))) {
            return rc;
        }
    }
    r->depth--;
    return 0;
}

/* IntType {1: bitWidth i8, 2: isSigned bool} */
static int parse_int_type(rd *r, elem *e)
{
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        if (id == 1) {
            uint8_t b = 0;
            if ((rc = want(r, type, CT_BYTE, "IntType.bitWidth")) || (rc = rd_byte(r, &b)))
                return rc;
            e->bit_width = (int8_t)b;
        } else if (id == 2) {
            if ((rc = want_bool(r, type, "IntType.isSigned")))
                return rc;
            e->is_signed = type == CT_TRUE;
        } else if ((rc = skip(r, type, false))) {
            return rc;
        }
    }
    r->depth--;
    return 0;
}

/* LogicalType union: the member id is the kind. */
static int parse_logical(rd *r, elem *e)
{
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        if (e->logical)
            return corrupt(r, "LogicalType union has more than one member");
        if (id <= 0)
            return corrupt(r, "bad LogicalType member id");
        e->logical = id;
        if ((rc = want(r, type, CT_STRUCT, "LogicalType member")))
            return rc;
        if (id == SILT_PQ_LT_TIMESTAMP || id == SILT_PQ_LT_TIME)
            rc = parse_time_type(r, e, id == SILT_PQ_LT_TIMESTAMP);
        else if (id == SILT_PQ_LT_INTEGER)
            rc = parse_int_type(r, e);
        else
            rc = skip(r, type, false);
        if (rc)
            return rc;
    }
    r->depth--;
    return 0;
}

static int parse_i32_field(rd *r, int type, const char *name, int *out)
{
    int32_t v;
    int rc = want(r, type, CT_I32, name);
    if (!rc)
        rc = rd_i32(r, &v);
    if (!rc)
        *out = v;
    return rc;
}

static int parse_schema_element(rd *r, elem *e)
{
    memset(e, 0, sizeof *e);
    e->type = e->type_length = e->repetition = e->converted = -1;
    e->scale = e->precision = e->num_children = -1;
    e->utc_pos = SIZE_MAX;
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        switch (id) {
        case 1: rc = parse_i32_field(r, type, "SchemaElement.type", &e->type); break;
        case 2: rc = parse_i32_field(r, type, "SchemaElement.type_length", &e->type_length); break;
        case 3: rc = parse_i32_field(r, type, "SchemaElement.repetition_type", &e->repetition); break;
        case 4:
            rc = want(r, type, CT_BINARY, "SchemaElement.name");
            if (!rc)
                rc = rd_binary(r, &e->name, &e->name_len);
            e->has_name = true;
            break;
        case 5: rc = parse_i32_field(r, type, "SchemaElement.num_children", &e->num_children); break;
        case 6: rc = parse_i32_field(r, type, "SchemaElement.converted_type", &e->converted); break;
        case 7: rc = parse_i32_field(r, type, "SchemaElement.scale", &e->scale); break;
        case 8: rc = parse_i32_field(r, type, "SchemaElement.precision", &e->precision); break;
        case 10:
            rc = want(r, type, CT_STRUCT, "SchemaElement.logicalType");
            if (!rc)
                rc = parse_logical(r, e);
            break;
        default: rc = skip(r, type, false); break;
        }
        if (rc)
            return rc;
    }
    r->depth--;
    if (!e->has_name)
        return corrupt(r, "schema element without a name");
    if (e->num_children < -1)
        return corrupt(r, "negative num_children");
    return 0;
}

typedef struct builder {
    silt_arena *a;
    const elem *el;
    size_t nel;
    size_t next;            /* next schema element to consume */
    silt_parquet_column *cols;
    size_t ncols;
} builder;

static bool is_leaf(const elem *e) { return e->num_children <= 0; }

/* Consumes `nchildren` elements (and their subtrees) below `prefix`. */
static int build_tree(builder *b, int nchildren, const char *prefix, const char *top, int top_rep, int depth)
{
    if (depth > SCHEMA_MAX_DEPTH)
        return silt_err(SILT_ECORRUPT, "corrupt footer: schema nested deeper than %d", SCHEMA_MAX_DEPTH);
    for (int i = 0; i < nchildren; i++) {
        if (b->next >= b->nel)
            return silt_err(SILT_ECORRUPT,
                            "corrupt footer: schema tree needs more than its %zu elements", b->nel);
        const elem *e = &b->el[b->next++];
        char *name = silt_arena_strndup(b->a, (const char *)e->name, e->name_len);
        char *path = prefix ? silt_arena_printf(b->a, "%s.%s", prefix, name ? name : "") : name;
        if (!name || !path)
            return SILT_ENOMEM;
        const char *tname = top ? top : name;
        int trep = top ? top_rep : e->repetition;
        if (!is_leaf(e)) {
            int rc = build_tree(b, e->num_children, path, tname, trep, depth + 1);
            if (rc)
                return rc;
            continue;
        }
        if (e->type < 0)
            return silt_err(SILT_ECORRUPT, "corrupt footer: leaf column '%s' has no physical type", path);
        silt_parquet_column *c = &b->cols[b->ncols++];
        c->path = path;
        c->name = name;
        c->top_name = tname;
        c->top_level = top == NULL;
        c->physical_type = e->type;
        c->type_length = e->type_length;
        c->repetition = e->repetition;
        c->top_repetition = trep;
        c->converted_type = e->converted;
        c->scale = e->scale;
        c->precision = e->precision;
        c->logical_type = e->logical;
        c->time_unit = e->unit;
        c->utc = e->utc;
        c->int_bit_width = e->bit_width;
        c->int_signed = e->is_signed;
        c->utc_flag_pos = e->utc_pos;
    }
    return 0;
}

/* ------------------------------------------------------------ row groups */

/* ColumnMetaData {2: encodings list<i32>, 3: path_in_schema list<string>} */
static int parse_column_meta(rd *r, silt_parquet_column *col, size_t ci)
{
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        if (id == 2 || id == 3) {
            int et;
            size_t n;
            if ((rc = want(r, type, CT_LIST, id == 2 ? "ColumnMetaData.encodings" : "ColumnMetaData.path_in_schema")) ||
                (rc = rd_list(r, &et, &n)))
                return rc;
            if (et != (id == 2 ? CT_I32 : CT_BINARY))
                return corrupt(r, "bad ColumnMetaData list element type");
            /* path_in_schema joined with '.' must equal the leaf's path */
            const char *want_path = col->path;
            size_t off = 0, plen = strlen(want_path);
            for (size_t i = 0; i < n; i++) {
                if (id == 2) {
                    int32_t enc;
                    if ((rc = rd_i32(r, &enc)))
                        return rc;
                    if (enc >= 0 && enc < 32)
                        col->encodings |= SILT_PQ_ENC_BIT(enc);
                } else {
                    const uint8_t *s;
                    size_t sl;
                    if ((rc = rd_binary(r, &s, &sl)))
                        return rc;
                    if (i > 0) {
                        if (off >= plen || want_path[off] != '.')
                            goto mismatch;
                        off++;
                    }
                    if (sl > plen - off || memcmp(want_path + off, s, sl) != 0)
                        goto mismatch;
                    off += sl;
                }
            }
            if (id == 3 && off != plen)
                goto mismatch;
        } else if ((rc = skip(r, type, false))) {
            return rc;
        }
    }
    r->depth--;
    return 0;
mismatch:
    return silt_err(SILT_ECORRUPT, "corrupt footer: column chunk %zu does not belong to column '%s'", ci,
                    col->path);
}

/* ColumnChunk {3: meta_data ColumnMetaData} */
static int parse_column_chunk(rd *r, silt_parquet_column *col, size_t ci)
{
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        if (id == 3) {
            rc = want(r, type, CT_STRUCT, "ColumnChunk.meta_data");
            if (!rc)
                rc = parse_column_meta(r, col, ci);
        } else {
            rc = skip(r, type, false);
        }
        if (rc)
            return rc;
    }
    r->depth--;
    return 0;
}

/* RowGroup {1: columns list<ColumnChunk>} — chunks are in leaf order. */
static int parse_row_group(rd *r, silt_parquet_meta *m, size_t g)
{
    int rc = enter(r);
    if (rc)
        return rc;
    int16_t last = 0;
    bool have_columns = false;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(r, &last, &type, &id, &hdr)))
            return rc;
        if (type == CT_STOP)
            break;
        if (id == 1) {
            int et;
            size_t n;
            if ((rc = want(r, type, CT_LIST, "RowGroup.columns")) || (rc = rd_list(r, &et, &n)))
                return rc;
            if (et != CT_STRUCT)
                return corrupt(r, "bad RowGroup.columns element type");
            if (n != m->num_columns)
                return silt_err(SILT_ECORRUPT,
                                "corrupt footer: row group %zu has %zu column chunks, schema has %zu leaves", g,
                                n, m->num_columns);
            for (size_t i = 0; i < n; i++)
                if ((rc = parse_column_chunk(r, &m->columns[i], i)))
                    return rc;
            have_columns = true;
        } else if ((rc = skip(r, type, false))) {
            return rc;
        }
    }
    r->depth--;
    if (!have_columns)
        return silt_err(SILT_ECORRUPT, "corrupt footer: row group %zu has no column list", g);
    return 0;
}

/* ------------------------------------------------------------ FileMetaData */

static int parse_file_meta(const uint8_t *buf, size_t len, silt_parquet_meta *m)
{
    rd r = {buf, len, 0, 0};
    elem *els = NULL;
    size_t nel = 0;
    size_t rg_pos = SIZE_MAX, rg_count = 0;
    bool have_rows = false;
    int16_t last = 0;
    int rc = 0;
    m->version = -1;
    for (;;) {
        int type;
        int16_t id;
        size_t hdr;
        if ((rc = rd_field(&r, &last, &type, &id, &hdr)))
            goto out;
        if (type == CT_STOP)
            break;
        if (id == 1) {
            if ((rc = want(&r, type, CT_I32, "FileMetaData.version")) || (rc = rd_i32(&r, &m->version)))
                goto out;
        } else if (id == 2) {
            int et;
            if (els) {
                rc = corrupt(&r, "duplicate schema");
                goto out;
            }
            if ((rc = want(&r, type, CT_LIST, "FileMetaData.schema")) || (rc = rd_list(&r, &et, &nel)))
                goto out;
            if (et != CT_STRUCT) {
                rc = corrupt(&r, "bad schema element type");
                goto out;
            }
            els = calloc(nel ? nel : 1, sizeof *els);
            if (!els) {
                rc = silt_err(SILT_ENOMEM, "out of memory");
                goto out;
            }
            for (size_t i = 0; i < nel; i++)
                if ((rc = parse_schema_element(&r, &els[i])))
                    goto out;
        } else if (id == 3) {
            if ((rc = want(&r, type, CT_I64, "FileMetaData.num_rows")) || (rc = rd_i64(&r, &m->num_rows)))
                goto out;
            have_rows = true;
        } else if (id == 4) {
            /* walked after the schema is known (field order is not guaranteed) */
            int et;
            if (rg_pos != SIZE_MAX) {
                rc = corrupt(&r, "duplicate row_groups");
                goto out;
            }
            if ((rc = want(&r, type, CT_LIST, "FileMetaData.row_groups")) || (rc = rd_list(&r, &et, &rg_count)))
                goto out;
            if (et != CT_STRUCT) {
                rc = corrupt(&r, "bad row_groups element type");
                goto out;
            }
            rg_pos = r.pos;
            for (size_t i = 0; i < rg_count; i++)
                if ((rc = skip(&r, CT_STRUCT, true)))
                    goto out;
        } else if (id == 6) {
            const uint8_t *s;
            size_t n;
            if ((rc = want(&r, type, CT_BINARY, "FileMetaData.created_by")) || (rc = rd_binary(&r, &s, &n)))
                goto out;
            m->created_by = silt_arena_strndup(m->arena, (const char *)s, n);
            if (!m->created_by) {
                rc = SILT_ENOMEM;
                goto out;
            }
        } else if ((rc = skip(&r, type, false))) {
            goto out;
        }
    }
    if (!els || nel == 0) {
        rc = silt_err(SILT_ECORRUPT, "corrupt footer: no schema");
        goto out;
    }
    if (!have_rows) {
        rc = silt_err(SILT_ECORRUPT, "corrupt footer: no num_rows");
        goto out;
    }
    if (rg_pos == SIZE_MAX) {
        rc = silt_err(SILT_ECORRUPT, "corrupt footer: no row_groups");
        goto out;
    }
    if (is_leaf(&els[0]) && els[0].num_children != 0) {
        rc = silt_err(SILT_ECORRUPT, "corrupt footer: schema root is not a group");
        goto out;
    }
    size_t nleaves = 0;
    for (size_t i = 1; i < nel; i++)
        nleaves += is_leaf(&els[i]);
    m->columns = silt_arena_alloc(m->arena, (nleaves ? nleaves : 1) * sizeof *m->columns);
    if (!m->columns) {
        rc = SILT_ENOMEM;
        goto out;
    }
    builder b = {m->arena, els, nel, 1, m->columns, 0};
    if ((rc = build_tree(&b, els[0].num_children < 0 ? 0 : els[0].num_children, NULL, NULL, -1, 1)))
        goto out;
    if (b.next != nel) {
        rc = silt_err(SILT_ECORRUPT, "corrupt footer: schema has %zu elements, the tree uses %zu", nel, b.next);
        goto out;
    }
    m->num_columns = b.ncols;
    m->num_row_groups = rg_count;
    rd g = {buf, len, rg_pos, 1};
    for (size_t i = 0; i < rg_count; i++)
        if ((rc = parse_row_group(&g, m, i)))
            goto out;
out:
    free(els);
    return rc;
}

int silt_parquet_parse_footer(const uint8_t *buf, size_t len, silt_parquet_meta **out)
{
    *out = NULL;
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    silt_parquet_meta *m = silt_arena_alloc(a, sizeof *m);
    if (!m) {
        silt_arena_free(a);
        return SILT_ENOMEM;
    }
    m->arena = a;
    m->footer_len = len;
    int rc = parse_file_meta(buf ? buf : (const uint8_t *)"", buf ? len : 0, m);
    if (rc) {
        silt_arena_free(a);
        return rc;
    }
    *out = m;
    return 0;
}

void silt_parquet_meta_free(silt_parquet_meta *m)
{
    if (m)
        silt_arena_free(m->arena);
}

const silt_parquet_column *silt_parquet_meta_column(const silt_parquet_meta *m, const char *path)
{
    for (size_t i = 0; m && i < m->num_columns; i++)
        if (strcmp(m->columns[i].path, path) == 0)
            return &m->columns[i];
    return NULL;
}

/* ------------------------------------------------------------ files */

static int pread_all(int fd, void *buf, size_t n, uint64_t off, const char *path)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t k = pread(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return silt_err(SILT_EIO, "%s: read failed: %s", path, strerror(errno));
        if (k == 0)
            return silt_err(SILT_EIO, "%s: unexpected end of file", path);
        p += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Reads and checks the file's framing; *footer is malloc'd (caller frees). */
static int read_footer(int fd, const char *path, uint8_t **footer, size_t *flen, uint64_t *fpos)
{
    *footer = NULL;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return silt_err(SILT_EIO, "%s: cannot stat: %s", path, strerror(errno));
    uint64_t size = (uint64_t)st.st_size;
    if (size < 12)
        return silt_err(SILT_EINVAL, "%s: not a Parquet file (%" PRIu64 " bytes, too short)", path, size);
    uint8_t head[4], tail[8];
    int rc = pread_all(fd, head, 4, 0, path);
    if (!rc)
        rc = pread_all(fd, tail, 8, size - 8, path);
    if (rc)
        return rc;
    if (memcmp(head, "PAR1", 4) != 0)
        return silt_err(SILT_EINVAL, "%s: not a Parquet file (bad magic)", path);
    if (memcmp(tail + 4, "PARE", 4) == 0)
        return silt_err(SILT_EUNSUPPORTED, "%s: encrypted Parquet footers are not supported", path);
    if (memcmp(tail + 4, "PAR1", 4) != 0)
        return silt_err(SILT_ECORRUPT, "%s: truncated Parquet file (no footer magic at the end)", path);
    uint32_t n = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
    if (n == 0 || (uint64_t)n > size - 12)
        return silt_err(SILT_ECORRUPT, "%s: corrupt footer: length %" PRIu32 " does not fit in a file of %" PRIu64
                        " bytes", path, n, size);
    if (n > FOOTER_MAX)
        return silt_err(SILT_EUNSUPPORTED, "%s: footer of %" PRIu32 " bytes is too large", path, n);
    uint8_t *f = malloc(n);
    if (!f)
        return silt_err(SILT_ENOMEM, "out of memory");
    *fpos = size - 8 - n;
    if ((rc = pread_all(fd, f, n, *fpos, path))) {
        free(f);
        return rc;
    }
    *footer = f;
    *flen = n;
    return 0;
}

static int open_file(const char *path, int flags)
{
    int fd;
    do
        fd = open(path, flags | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return silt_err(errno == ENOENT || errno == ENOTDIR ? SILT_ENOTFOUND : SILT_EIO, "%s: cannot open: %s",
                        path, strerror(errno));
    return fd;
}

/* Footer + parse; on error the message is prefixed with the path. */
static int load(int fd, const char *path, uint8_t **footer, silt_parquet_meta **m)
{
    size_t flen = 0;
    uint64_t fpos = 0;
    int rc = read_footer(fd, path, footer, &flen, &fpos);
    if (rc)
        return rc;
    rc = silt_parquet_parse_footer(*footer, flen, m);
    if (rc) {
        free(*footer);
        *footer = NULL;
        return silt_err_context(rc, "%s", path);
    }
    (*m)->footer_pos = fpos;
    return 0;
}

int silt_parquet_read_meta(const char *path, silt_parquet_meta **out)
{
    *out = NULL;
    int fd = open_file(path, O_RDONLY);
    if (fd < 0)
        return fd;
    uint8_t *footer = NULL;
    int rc = load(fd, path, &footer, out);
    free(footer);
    close(fd);
    return rc;
}

static bool is_legacy_ts(const silt_parquet_column *c)
{
    return c->logical_type == SILT_PQ_LT_NONE &&
           (c->converted_type == SILT_PQ_CT_TIMESTAMP_MILLIS || c->converted_type == SILT_PQ_CT_TIMESTAMP_MICROS);
}

/* Marks column c for patching; 1 if its flag must change. */
static int select_column(const char *path, const silt_parquet_column *c)
{
    if (c->utc || is_legacy_ts(c))
        return 0;
    if (c->utc_flag_pos == SIZE_MAX)
        return silt_err(SILT_ECORRUPT, "%s: corrupt footer: TIMESTAMP column '%s' has no isAdjustedToUTC", path,
                        c->path);
    return 1;
}

int silt_parquet_set_timestamps_utc(const char *path, const char *const *columns, size_t n)
{
    int fd = open_file(path, O_RDWR);
    if (fd < 0)
        return fd;
    uint8_t *footer = NULL;
    silt_parquet_meta *m = NULL, *check = NULL;
    bool *sel = NULL;
    int rc = load(fd, path, &footer, &m);
    if (rc)
        goto out;
    sel = calloc(m->num_columns ? m->num_columns : 1, sizeof *sel);
    if (!sel) {
        rc = silt_err(SILT_ENOMEM, "out of memory");
        goto out;
    }
    if (!columns) {
        for (size_t i = 0; i < m->num_columns; i++) {
            const silt_parquet_column *c = &m->columns[i];
            if (c->logical_type != SILT_PQ_LT_TIMESTAMP)
                continue;
            if ((rc = select_column(path, c)) < 0)
                goto out;
            sel[i] = rc == 1;
        }
    } else {
        for (size_t k = 0; k < n; k++) {
            const char *name = columns[k];
            if (!name) {
                rc = silt_err(SILT_EINVAL, "%s: column name %zu is NULL", path, k);
                goto out;
            }
            size_t hit = SIZE_MAX;
            bool group = false;
            for (size_t i = 0; i < m->num_columns; i++) {
                if (strcmp(m->columns[i].top_name, name) != 0)
                    continue;
                if (m->columns[i].top_level)
                    hit = i;
                else
                    group = true;
            }
            if (hit == SIZE_MAX) {
                rc = group ? silt_err(SILT_EINVAL, "%s: column '%s' is not a timestamp column", path, name)
                           : silt_err(SILT_ENOTFOUND, "%s: no column '%s'", path, name);
                goto out;
            }
            const silt_parquet_column *c = &m->columns[hit];
            if (c->logical_type != SILT_PQ_LT_TIMESTAMP && !is_legacy_ts(c)) {
                rc = silt_err(SILT_EINVAL, "%s: column '%s' is not a timestamp column", path, name);
                goto out;
            }
            if ((rc = select_column(path, c)) < 0)
                goto out;
            sel[hit] = sel[hit] || rc == 1;
        }
    }
    /* patch in memory: type nibble FALSE (2) -> TRUE (1) */
    size_t lo = SIZE_MAX, hi = 0, changed = 0;
    for (size_t i = 0; i < m->num_columns; i++) {
        if (!sel[i])
            continue;
        size_t p = m->columns[i].utc_flag_pos;
        if (p >= m->footer_len || (footer[p] & 0x0f) != CT_FALSE) {
            rc = silt_err(SILT_EINTERNAL, "%s: isAdjustedToUTC of '%s' not found where expected", path,
                          m->columns[i].path);
            goto out;
        }
        footer[p] = (uint8_t)((footer[p] & 0xf0) | CT_TRUE);
        lo = p < lo ? p : lo;
        hi = p > hi ? p : hi;
        changed++;
    }
    if (changed == 0) {
        rc = 0;
        goto out;
    }
    /* the patched footer must still parse, with the same columns, all UTC */
    if ((rc = silt_parquet_parse_footer(footer, m->footer_len, &check))) {
        rc = silt_err(SILT_EINTERNAL, "%s: patched footer does not parse: %s", path, silt_error_last());
        goto out;
    }
    for (size_t i = 0; i < m->num_columns; i++) {
        if (check->num_columns != m->num_columns || (sel[i] && !check->columns[i].utc)) {
            rc = silt_err(SILT_EINTERNAL, "%s: patched footer check failed for '%s'", path, m->columns[i].path);
            goto out;
        }
    }
    size_t span = hi - lo + 1;
    const uint8_t *src = footer + lo;
    uint64_t off = m->footer_pos + lo;
    while (span) {
        ssize_t k = pwrite(fd, src, span, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = silt_err(SILT_EIO, "%s: write failed: %s", path, k < 0 ? strerror(errno) : "short write");
            goto out;
        }
        src += k;
        span -= (size_t)k;
        off += (uint64_t)k;
    }
    if (fsync(fd) != 0) {
        rc = silt_err(SILT_EIO, "%s: fsync failed: %s", path, strerror(errno));
        goto out;
    }
    rc = (int)changed;
out:
    free(sel);
    free(footer);
    silt_parquet_meta_free(m);
    silt_parquet_meta_free(check);
    if (close(fd) != 0 && rc >= 0)
        rc = silt_err(SILT_EIO, "%s: close failed: %s", path, strerror(errno));
    return rc;
}

/* ------------------------------------------------------------ names */

const char *silt_parquet_type_name(int t)
{
    static const char *const n[] = {"BOOLEAN", "INT32", "INT64", "INT96",
                                     "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
    return t >= 0 && t < (int)(sizeof n / sizeof *n) ? n[t] : "?";
}

const char *silt_parquet_converted_name(int t)
{
    static const char *const n[] = {"UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE",
                                     "TIME_MILLIS", "TIME_MICROS", "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS",
                                     "UINT_8", "UINT_16", "UINT_32", "UINT_64", "INT_8", "INT_16", "INT_32",
                                     "INT_64", "JSON", "BSON", "INTERVAL"};
    if (t == -1)
        return "NONE";
    return t >= 0 && t < (int)(sizeof n / sizeof *n) ? n[t] : "?";
}

const char *silt_parquet_logical_name(int t)
{
    static const char *const n[] = {"NONE", "STRING", "MAP", "LIST", "ENUM", "DECIMAL", "DATE",
                                     "TIME", "TIMESTAMP", "?", "INTEGER", "UNKNOWN", "JSON", "BSON",
                                     "UUID", "FLOAT16", "VARIANT", "GEOMETRY", "GEOGRAPHY"};
    return t >= 0 && t < (int)(sizeof n / sizeof *n) ? n[t] : "?";
}

const char *silt_parquet_unit_name(int u)
{
    static const char *const n[] = {"NONE", "MILLIS", "MICROS", "NANOS"};
    return u >= 0 && u < 4 ? n[u] : "?";
}

const char *silt_parquet_encoding_name(int e)
{
    static const char *const n[] = {"PLAIN", "?", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                     "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
    return e >= 0 && e < (int)(sizeof n / sizeof *n) ? n[e] : "?";
}

const char *silt_parquet_repetition_name(int r)
{
    static const char *const n[] = {"REQUIRED", "OPTIONAL", "REPEATED"};
    if (r == -1)
        return "NONE";
    return r >= 0 && r < 3 ? n[r] : "?";
}
