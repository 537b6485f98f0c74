/* writer.c — Parquet slice writer (see writer.h).
 *
 * DuckDB writes the file with `COPY … (FORMAT parquet, parquet_version v2)`,
 * which gives DELTA_BINARY_PACKED for integers and dictionary encodings for
 * low-cardinality columns. DuckDB writes TIMESTAMP_MS as MILLIS with
 * isAdjustedToUTC=false; silt's timestamps are UTC instants, so the flag is
 * set afterwards in the Thrift footer (src/engine/parquet_meta.h). DuckDB
 * also writes every column OPTIONAL; the required ones are then rewritten
 * as REQUIRED, pages included (src/engine/parquet_required.h). Offsets
 * come from the rowid of the merged table (its insertion order) rather than
 * row_number() OVER (), which would serialise the pipeline.
 */
#include "engine/writer.h"
#include "engine/digest.h"
#include "engine/parquet_meta.h"
#include "engine/parquet_required.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct col_list {
    char **names;
    char **types;
    size_t n, cap;
} col_list;

static int collect_col(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    col_list *l = ctx;
    if (ncols < 2 || !vals[0] || !vals[1])
        return silt_err(SILT_EINTERNAL, "unexpected DESCRIBE output");
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **nn = realloc(l->names, cap * sizeof *nn);
        if (!nn)
            return silt_err(SILT_ENOMEM, "out of memory");
        l->names = nn;
        char **nt = realloc(l->types, cap * sizeof *nt);
        if (!nt)
            return silt_err(SILT_ENOMEM, "out of memory");
        l->types = nt;
        l->cap = cap;
    }
    l->names[l->n] = strdup(vals[0]);
    l->types[l->n] = strdup(vals[1]);
    if (!l->names[l->n] || !l->types[l->n]) {
        free(l->names[l->n]);
        free(l->types[l->n]);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    l->n++;
    return 0;
}

static void col_list_free(col_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->names[i]);
        free(l->types[i]);
    }
    free(l->names);
    free(l->types);
}

static bool is_timestamp(const char *t)
{
    return strcmp(t, "TIMESTAMP") == 0 || strcmp(t, "TIMESTAMP_S") == 0 ||
           strcmp(t, "TIMESTAMP_MS") == 0 || strcmp(t, "TIMESTAMP_NS") == 0 ||
           strcmp(t, "TIMESTAMP WITH TIME ZONE") == 0;
}

/* Appends `expr AS "name"` to the select list. */
static int add_col(silt_buf *sql, const char *expr, const char *name)
{
    char *q = silt_sql_ident(name);
    if (!q)
        return SILT_ENOMEM;
    int rc = silt_buf_printf(sql, "%s%s AS %s", sql->len ? ", " : "", expr, q);
    free(q);
    return rc;
}

/* Normalised expression of a column: timestamps become TIMESTAMP_MS (UTC). */
static int col_expr(silt_buf *out, const char *name, const char *type)
{
    char *q = silt_sql_ident(name);
    if (!q)
        return SILT_ENOMEM;
    int rc;
    /* via TIMESTAMP (UTC session zone for TIMESTAMPTZ; TIMESTAMP_NS cannot be
     * cast to TIMESTAMP_MS directly), truncated to the millisecond */
    if (strcmp(type, "TIMESTAMP_MS") == 0)
        rc = silt_buf_puts(out, q);
    else if (is_timestamp(type))
        rc = silt_buf_printf(out, "CAST(date_trunc('millisecond', CAST(%s AS TIMESTAMP)) AS TIMESTAMP_MS)", q);
    else
        rc = silt_buf_puts(out, q);
    free(q);
    return rc;
}

/* Rewrites the system columns and the spec's required columns as REQUIRED. */
static int make_required(const silt_slice_spec *spec)
{
    size_t n = 0;
    for (const char *const *r = spec->required_columns; r && *r; r++)
        n++;
    const char **names = malloc((n + 3) * sizeof *names);
    if (!names)
        return silt_err(SILT_ENOMEM, "out of memory");
    size_t k = 0;
    names[k++] = spec->offset_column;
    names[k++] = spec->op_column;
    names[k++] = spec->system_time_column;
    for (size_t i = 0; i < n; i++)
        names[k++] = spec->required_columns[i];
    int rc = silt_parquet_set_required(spec->path, names, k);
    free(names);
    return rc < 0 ? rc : 0;
}

int silt_write_slice(silt_engine *e, const silt_slice_spec *spec, silt_slice_info *out)
{
    memset(out, 0, sizeof *out);
    col_list cols = {0};
    silt_buf sql = SILT_BUF_INIT, sel = SILT_BUF_INIT, expr = SILT_BUF_INIT;
    char *qt = silt_sql_ident(spec->table);
    char *qpath = silt_sql_str(spec->path);
    char *max_et = NULL;
    int rc = (!qt || !qpath) ? SILT_ENOMEM : 0;
    if (!rc)
        rc = silt_buf_printf(&sql, "DESCRIBE %s", qt);
    if (!rc)
        rc = silt_engine_query_rows(e, sql.data, collect_col, &cols);
    int op_i = -1, et_i = -1;
    for (size_t i = 0; i < cols.n; i++) {
        if (strcmp(cols.names[i], spec->op_column) == 0 && !spec->op_append)
            op_i = (int)i;
        if (strcmp(cols.names[i], spec->event_time_column) == 0)
            et_i = (int)i;
    }
    if (!rc && (et_i < 0 || (op_i < 0 && !spec->op_append)))
        rc = silt_err(SILT_EINTERNAL, "slice table has no %s column",
                      et_i < 0 ? spec->event_time_column : spec->op_column);
    const char *et_type = et_i >= 0 ? cols.types[et_i] : "";
    bool et_date = strcmp(et_type, "DATE") == 0;
    if (!rc && !et_date && !is_timestamp(et_type))
        rc = silt_err(SILT_EINVAL, "event time column '%s' has type %s; expected a timestamp or a date",
                      spec->event_time_column, et_type);

    /* system columns */
    char num[64];
    if (!rc) {
        snprintf(num, sizeof num, "CAST(rowid + %llu AS UBIGINT)", (unsigned long long)spec->first_offset);
        rc = add_col(&sel, num, spec->offset_column);
    }
    if (!rc && spec->op_append) {
        rc = add_col(&sel, "CAST(0 AS UTINYINT)", spec->op_column);
    } else if (!rc) {
        char *qop = silt_sql_ident(spec->op_column);
        silt_buf_clear(&expr);
        rc = qop ? silt_buf_printf(&expr, "CAST(%s AS UTINYINT)", qop) : SILT_ENOMEM;
        free(qop);
        if (!rc)
            rc = add_col(&sel, expr.data, spec->op_column);
    }
    if (!rc) {
        char ts[48];
        silt_time_format((silt_time){spec->system_time.sec, spec->system_time.nsec / 1000000 * 1000000}, ts);
        char e2[160];
        snprintf(e2, sizeof e2, "CAST(CAST(TIMESTAMPTZ '%s' AS TIMESTAMP) AS TIMESTAMP_MS)", ts);
        rc = add_col(&sel, e2, spec->system_time_column);
    }
    /* event time, then the data columns in the requested order */
    if (!rc) {
        silt_buf_clear(&expr);
        rc = col_expr(&expr, cols.names[et_i], cols.types[et_i]);
        if (!rc)
            rc = add_col(&sel, expr.data, cols.names[et_i]);
    }
    size_t nd = spec->data_columns ? spec->ndata_columns : cols.n;
    for (size_t k = 0; !rc && k < nd; k++) {
        size_t i = k;
        if (spec->data_columns) {
            for (i = 0; i < cols.n && strcmp(cols.names[i], spec->data_columns[k]) != 0; i++)
                ;
            if (i == cols.n) {
                rc = silt_err(SILT_EINTERNAL, "slice table has no column '%s'", spec->data_columns[k]);
                break;
            }
        }
        if ((int)i == op_i || (int)i == et_i)
            continue;
        silt_buf_clear(&expr);
        rc = col_expr(&expr, cols.names[i], cols.types[i]);
        if (!rc)
            rc = add_col(&sel, expr.data, cols.names[i]);
    }
    /* the slice as a view: its column types are the slice's schema */
    if (!rc) {
        silt_buf_clear(&sql);
        rc = silt_buf_printf(&sql, "CREATE OR REPLACE TEMP VIEW %s AS SELECT %s FROM %s", SILT_SLICE_VIEW,
                             sel.data, qt);
    }
    if (!rc)
        rc = silt_engine_exec(e, sql.data);
    if (!rc) {
        silt_buf_clear(&sql);
        rc = silt_buf_printf(&sql, "COPY %s TO %s (FORMAT parquet, parquet_version v2, compression snappy)",
                             SILT_SLICE_VIEW, qpath);
    }
    silt_time t0;
    silt_trace(NULL, &t0);
    if (!rc)
        rc = silt_engine_exec(e, sql.data);
    silt_trace("copy", &t0);
    if (!rc) {
        rc = silt_parquet_set_timestamps_utc(spec->path, NULL, 0); /* >= 0: flags changed */
        if (rc > 0)
            rc = 0;
    }
    if (!rc)
        rc = make_required(spec);
    silt_trace("required", &t0);
    if (!rc) {
        rc = silt_slice_hashes(e, spec->path, out->physical_hash, out->logical_hash, &out->num_rows,
                               &out->size);
    }
    silt_trace("hashes", &t0);
    if (!rc) {
        silt_buf_clear(&sql);
        char *qe = silt_sql_ident(spec->event_time_column);
        rc = qe ? silt_buf_printf(&sql, "SELECT strftime(max(%s), '%%Y-%%m-%%dT%%H:%%M:%%S.%%gZ') FROM %s", qe, qt)
                : SILT_ENOMEM;
        free(qe);
        if (!rc)
            rc = silt_engine_query_text(e, &max_et, sql.data);
        if (!rc && max_et) {
            rc = silt_time_parse(max_et, &out->max_event_time);
            out->has_max_event_time = rc == 0;
        }
    }
    silt_trace("max event", &t0);
    if (rc)
        unlink(spec->path);
    free(max_et);
    free(qt);
    free(qpath);
    silt_buf_free(&sql);
    silt_buf_free(&sel);
    silt_buf_free(&expr);
    col_list_free(&cols);
    return rc;
}

int silt_slice_hashes(silt_engine *e, const char *path, uint8_t physical[SILT_MH_LEN],
                      uint8_t logical[SILT_LOGICAL_HASH_LEN], uint64_t *num_rows, uint64_t *size)
{
    uint8_t digest[SILT_SHA3_256_LEN];
    uint64_t sz = 0;
    int rc = silt_sha3_file(path, digest, &sz);
    if (rc)
        return rc;
    silt_multihash_wrap_sha3(digest, physical);
    if (size)
        *size = sz;
    uint64_t rows = 0;
    silt_time t0;
    silt_trace(NULL, &t0);
    rc = silt_parquet_logical_hash(e, path, logical, &rows);
    silt_trace("logical hash", &t0);
    if (rc)
        return rc;
    if (num_rows)
        *num_rows = rows;
    return 0;
}
