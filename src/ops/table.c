/* table.c — the table of a dataset branch as a pull stream (readTable):
 * silt_table_stream_open / _read / _free of silt.h.
 *
 * Invariants:
 *  - open does all the work a client can get wrong: the view of the
 *    dataset (a ledger over its slices, src/dataset/data_views.c, or a files
 *    view through its tabular schema, src/files/files_schema.c — which
 *    reads and checks every file), the column list against the view's
 *    columns, and the start of the query; read only pulls chunks;
 *  - the engine is the stream's own (silt_ws_engine_open, spill directory
 *    removed by free) and confined once the view exists; the query is
 *    silt's: SELECT <quoted, validated columns> FROM <view> [LIMIT n];
 *  - ledger columns are cast to the types of the dataset's current
 *    SetDataSchema (so system_time is Timestamp(ms, UTC) whatever DuckDB
 *    reads from the Parquet slices); files views already carry them;
 *    naive DuckDB timestamps are written as UTC (SILT_ARROW_NAIVE_UTC);
 *  - memory: one engine chunk and its encoding (`pending`) at a time;
 *    nothing is ever written to a dataset.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "engine/arrow_ipc.h"
#include "engine/arrow_stream.h"
#include "engine/schema.h"
#include "files/files.h"
#include "files/files_schema.h"
#include "util/buf.h"
#include "util/error.h"

#define TABLE_VIEW "__silt_table"

struct silt_table_stream {
    silt_engine *e;
    char *tmpdir;
    silt_rstream *rs;
    silt_buf pending; /* bytes produced but not yet read */
    size_t pos;
    bool done;
};

void silt_table_stream_free(silt_table_stream *s)
{
    if (!s)
        return;
    silt_rstream_free(s->rs);
    if (s->e)
        silt_ws_engine_close(s->e, s->tmpdir, 0);
    silt_buf_free(&s->pending);
    free(s);
}

/* The files view of the rids of `o` (start only: start..the newest
 * committed transaction of the branch). */
static int files_view(silt_engine *e, silt_dataset *ds, const silt_table_opts *o)
{
    silt_view_spec spec = {NULL, NULL, NULL};
    silt_files_commit_info *c = NULL;
    size_t n = 0;
    int rc = 0;
    if (o->start_rid && !o->end_rid) {
        rc = silt_files_commits(ds, &c, &n);
        spec.range_start = o->start_rid;
        spec.range_end = n ? c[0].rid : o->start_rid;
    } else if (o->start_rid) {
        spec.range_start = o->start_rid;
        spec.range_end = o->end_rid;
    } else {
        spec.at = o->end_rid;
    }
    if (!rc)
        rc = silt_files_create_sql_view_spec(e, ds, TABLE_VIEW, &spec);
    free(c);
    return rc;
}

static const odf_DataField *schema_field(const odf_DataSchema *s, const char *name)
{
    for (size_t i = 0; s && i < s->fields.n; i++) {
        const odf_DataField *f = s->fields.items[i];
        if (f && f->name && strcmp(f->name, name) == 0)
            return f;
    }
    return NULL;
}

/* The schema type of a top-level column to cast to, or NULL: nested
 * types (List, Struct, Map) keep the type the slices have, as DuckDB
 * cannot cast every nested timestamp (TIMESTAMPTZ -> TIMESTAMP_MS). */
static const odf_union *cast_type(const odf_DataSchema *schema, const char *name)
{
    const odf_DataField *f = schema_field(schema, name);
    const odf_union *t = f ? &f->type : NULL;
    while (t && t->type == ODF_DataType_Option)
        t = &((const odf_DataTypeOption *)t->value)->inner;
    if (!t || t->type == ODF_DataType_List || t->type == ODF_DataType_Struct || t->type == ODF_DataType_Map)
        return NULL;
    return t;
}

/* One output column: "CAST(c AS <schema type>) AS c" or "c"; timestamps
 * go through TIMESTAMP (DuckDB has no direct TIMESTAMPTZ -> TIMESTAMP_MS). */
static int put_column(silt_buf *sql, const char *name, const odf_DataSchema *schema, bool first)
{
    char *id = silt_sql_ident(name);
    if (!id)
        return SILT_ENOMEM;
    const odf_union *t = cast_type(schema, name);
    silt_buf ty = SILT_BUF_INIT;
    int rc = t ? silt_schema_type_to_duckdb(&ty, t) : 0;
    if (!rc)
        rc = silt_buf_puts(sql, first ? "" : ", ");
    if (!rc && t && strncmp(ty.data, "TIMESTAMP_", 10) == 0)
        rc = silt_buf_printf(sql, "CAST(CAST(%s AS TIMESTAMP) AS %s) AS %s", id, ty.data, id);
    else if (!rc && t)
        rc = silt_buf_printf(sql, "CAST(%s AS %s) AS %s", id, ty.data, id);
    else if (!rc)
        rc = silt_buf_puts(sql, id);
    silt_buf_free(&ty);
    free(id);
    return rc;
}

/* Index of `name` in the n NUL-separated names, or -1. */
static long find_name(const silt_buf *names, size_t n, const char *name)
{
    const char *p = names->data;
    for (size_t i = 0; i < n; i++, p += strlen(p) + 1)
        if (strcmp(p, name) == 0)
            return (long)i;
    return -1;
}

/* SELECT of the requested columns of the view, checked against its columns. */
static int build_select(silt_buf *sql, silt_engine *e, silt_dataset *ds, const silt_table_opts *o,
                        const odf_DataSchema *schema)
{
    silt_buf names = SILT_BUF_INIT;
    int n = silt_query_view_columns(e, TABLE_VIEW, &names);
    int rc = n < 0 ? n : silt_buf_puts(sql, "SELECT ");
    for (size_t i = 0; !rc && o->ncolumns && i < o->ncolumns; i++) {
        const char *c = o->columns[i];
        if (!c || find_name(&names, (size_t)n, c) < 0)
            rc = silt_err(SILT_EINVAL, "column '%s' is not in the schema of %s", c ? c : "", silt_ds_label(ds));
        for (size_t k = 0; !rc && k < i; k++)
            if (strcmp(o->columns[k], c) == 0)
                rc = silt_err(SILT_EINVAL, "column '%s' is given twice", c);
        if (!rc)
            rc = put_column(sql, c, schema, i == 0);
    }
    const char *p = names.data;
    for (int i = 0; !rc && !o->ncolumns && i < n; i++, p += strlen(p) + 1)
        rc = put_column(sql, p, schema, i == 0);
    if (!rc)
        rc = silt_buf_puts(sql, " FROM " TABLE_VIEW);
    if (!rc && o->row_limit >= 0)
        rc = silt_buf_printf(sql, " LIMIT %lld", (long long)o->row_limit);
    silt_buf_free(&names);
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "read-table: out of memory") : rc;
}

/* Makes the view and the query of the stream. */
static int start(silt_table_stream *s, silt_dataset *ds, const silt_table_opts *o)
{
    int isf = silt_files_is_files(ds);
    if (isf < 0)
        return isf;
    if (!isf && (o->start_rid || o->end_rid))
        return silt_err(SILT_EINVAL, "transaction rids apply only to files datasets (%s is a ledger)",
                        silt_ds_label(ds));
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "read-table: out of memory");
    odf_DataSchema *schema = NULL;
    int rc = silt_ws_engine_open(ds->ws, &s->e, &s->tmpdir);
    if (!rc && isf)
        rc = files_view(s->e, ds, o);
    else if (!rc)
        rc = silt_ds_create_view(s->e, ds, TABLE_VIEW, NULL, false);
    if (!rc && !isf)
        rc = silt_ds_schema(ds, a, &schema);
    silt_confine_opts co = {0};
    if (!rc)
        rc = silt_engine_confine(s->e, &co);
    silt_buf sql = SILT_BUF_INIT;
    if (!rc)
        rc = build_select(&sql, s->e, ds, o, schema);
    if (!rc)
        rc = silt_rstream_open(&s->rs, s->e, sql.data,
                               o->format == SILT_TABLE_CSV ? SILT_RSTREAM_CSV : SILT_RSTREAM_ARROW,
                               SILT_ARROW_NAIVE_UTC, "read-table");
    silt_buf_free(&sql);
    silt_arena_free(a);
    return rc;
}

int silt_table_stream_open(silt_table_stream **out, silt_dataset *ds, const silt_table_opts *o)
{
    *out = NULL;
    silt_table_opts none = {.format = SILT_TABLE_ARROW, .row_limit = -1};
    if (!o)
        o = &none;
    if (o->format != SILT_TABLE_ARROW && o->format != SILT_TABLE_CSV)
        return silt_err(SILT_EINVAL, "read-table: unknown format %d", (int)o->format);
    if (o->ncolumns && !o->columns)
        return silt_err(SILT_EINVAL, "read-table: %zu columns but no column names", o->ncolumns);
    silt_table_stream *s = calloc(1, sizeof *s);
    if (!s)
        return silt_err(SILT_ENOMEM, "read-table: out of memory");
    int rc = start(s, ds, o);
    if (rc) {
        char saved[1024];
        snprintf(saved, sizeof saved, "%s", silt_error_last());
        silt_table_stream_free(s);
        return silt_err(rc, "%s", saved);
    }
    *out = s;
    return 0;
}

long silt_table_stream_read(silt_table_stream *s, void *buf, size_t cap)
{
    if (!s || !buf || cap == 0)
        return silt_err(SILT_EINVAL, "read-table: no buffer");
    while (s->pos == s->pending.len) {
        if (s->done)
            return 0;
        silt_buf_clear(&s->pending);
        s->pos = 0;
        int rc = silt_rstream_next(s->rs, &s->pending);
        if (rc <= 0) {
            s->done = true;
            if (rc < 0)
                return rc;
        }
    }
    size_t n = s->pending.len - s->pos;
    if (n > cap)
        n = cap;
    if (n > (size_t)LONG_MAX)
        n = (size_t)LONG_MAX;
    memcpy(buf, s->pending.data + s->pos, n);
    s->pos += n;
    return (long)n;
}

uint64_t silt_table_stream_rows(const silt_table_stream *s) { return s ? silt_rstream_rows(s->rs) : 0; }
