/* pipeline.c — the ingestion pipeline (see ingest.h).
 *
 * Invariants:
 *  - nothing is visible before the final compare-and-swap of the ref: the
 *    slice and checkpoint objects are written first (unreferenced until the
 *    AddData lands; garbage for `silt gc` if it does not), then SetDataSchema
 *    (when the schema grew) and AddData are published as one batch;
 *  - validation comes before the store: slices and the checkpoint are
 *    written as temporary files (removed on every exit), the schema of the
 *    first slice is checked against the dataset's (check_schema_fits), and
 *    only then are they moved into data/ and checkpoints/, so bad input
 *    leaves no object behind (only a lost race or an I/O error can);
 *  - offsets continue densely from the last offset; rows are never reordered
 *    after the merge produced them;
 *  - the merge state needed by Snapshot/Ledger/Changelog/Upsert comes from
 *    the last checkpoint, never from re-reading the history; the checkpoint
 *    is read back only after its size and hash matched its block's;
 *  - the preprocess queries of a manifest run on a confined engine (one
 *    SELECT each; no file but the run's private scratch directory and the
 *    checkpoint it loads): see confine_for_preprocess;
 *  - the blocks are built on the state the ingest read, and a lost race is
 *    retried as a whole from the merge on (the merge state, offsets, slices
 *    and checkpoint all depend on the head), never re-validated against a
 *    head the blocks were not made for.
 */
#include "ingest/ingest.h"

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "engine/compat.h"
#include "engine/engine.h"
#include "engine/merge.h"
#include "engine/read.h"
#include "engine/schema.h"
#include "engine/writer.h"
#include "odf/schema_rules.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

typedef struct vocab {
    const char *offset, *op, *system_time, *event_time;
} vocab;

/* Attempts of one ingest when it loses races to other writers. */
#define SILT_INGEST_ATTEMPTS 5

typedef struct pipeline {
    silt_dataset *ds;
    silt_engine *e;
    silt_arena *a;
    vocab v;
    const char *input;    /* TEMP TABLE holding the merge input (read or preprocessed) */
    const char **data_cols; /* data column output order (schema order, then new) */
    size_t ndata_cols;
    const odf_DataSchema *declared; /* the read step's schema (or ddlSchema), or NULL */
    const char **required; /* NULL-terminated: the event time and data columns
                              that are required (not Option) in the output */
    char *slice_tmp;      /* temp file of the new slice (removed unless moved) */
    char *checkpoint_tmp; /* temp file of the new checkpoint */
    char *scratch;        /* private `.silt/tmp/<random>/`: spill and temp files */
    unsigned ntmp;        /* temp files named so far */
} pipeline;

/* ---- helpers ---------------------------------------------------------- */

#define trace silt_trace

static int load_event(pipeline *p, const odf_block_ref *ref, int type, void **out)
{
    *out = NULL;
    if (!ref->present)
        return 0;
    odf_MetadataBlock *b;
    int rc = silt_ds_load_block(p->ds, ref->hash, p->a, &b);
    if (rc)
        return rc;
    if (b->event.type != type)
        return silt_err(SILT_ECORRUPT, "summary of '%s' points at a block of the wrong kind", p->ds->name);
    *out = b->event.value;
    return 0;
}

static const char *or_default(const char *s, const char *d) { return s && *s ? s : d; }

static int load_vocab(pipeline *p)
{
    odf_SetVocab *sv = NULL;
    int rc = load_event(p, &p->ds->st.vocab, ODF_MetadataEvent_SetVocab, (void **)&sv);
    if (rc)
        return rc;
    p->v.offset = or_default(sv ? sv->offset_column : NULL, "offset");
    p->v.op = or_default(sv ? sv->operation_type_column : NULL, "op");
    p->v.system_time = or_default(sv ? sv->system_time_column : NULL, "system_time");
    p->v.event_time = or_default(sv ? sv->event_time_column : NULL, "event_time");
    return 0;
}

typedef struct colinfo {
    char **names, **types;
    size_t n, cap;
    silt_arena *a;
} colinfo;

static int collect(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    (void)names;
    colinfo *c = ctx;
    if (ncols < 2 || !vals[0] || !vals[1])
        return silt_err(SILT_EINTERNAL, "unexpected DESCRIBE output");
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        char **nn = silt_arena_alloc(c->a, cap * sizeof *nn);
        char **nt = silt_arena_alloc(c->a, cap * sizeof *nt);
        if (!nn || !nt)
            return SILT_ENOMEM;
        if (c->n) {
            memcpy(nn, c->names, c->n * sizeof *nn);
            memcpy(nt, c->types, c->n * sizeof *nt);
        }
        c->names = nn;
        c->types = nt;
        c->cap = cap;
    }
    c->names[c->n] = silt_arena_strdup(c->a, vals[0]);
    c->types[c->n] = silt_arena_strdup(c->a, vals[1]);
    if (!c->names[c->n] || !c->types[c->n])
        return SILT_ENOMEM;
    c->n++;
    return 0;
}

static int describe(pipeline *p, const char *table, colinfo *out)
{
    memset(out, 0, sizeof *out);
    out->a = p->a;
    char *q = silt_sql_ident(table);
    if (!q)
        return SILT_ENOMEM;
    char *sql = silt_arena_printf(p->a, "DESCRIBE %s", q);
    free(q);
    return sql ? silt_engine_query_rows(p->e, sql, collect, out) : SILT_ENOMEM;
}

static int find_col(const colinfo *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->names[i], name) == 0)
            return (int)i;
    return -1;
}

static bool read_step_has_schema(const odf_union *read)
{
    if (!read || !read->value)
        return false;
    /* every ReadStep variant has ddl_schema and schema; find them by descriptor */
    const odf_union_desc *u = odf_find_union("ReadStep");
    if (!u || read->type < 1 || read->type > u->nvariants)
        return false;
    const odf_table_desc *d = u->variants[read->type - 1];
    for (size_t i = 0; i < d->nfields; i++) {
        const odf_field_desc *f = &d->fields[i];
        const char *base = (const char *)read->value + f->offset;
        if (strcmp(f->fb_name, "schema") == 0 && *(void *const *)base)
            return true;
        if (strcmp(f->fb_name, "ddl_schema") == 0 && ((const odf_strvec *)base)->present)
            return true;
    }
    return false;
}

static int current_schema(pipeline *p, odf_DataSchema **out);

/* ---- declared schemas: required columns and their nulls ---------------
 *
 * A field is required when its DataType is not Option (ddlSchema: NOT NULL).
 * What is required where:
 *  - the read step's schema constrains what is read: a null in a required
 *    field of the read data is an error naming the file, row and column;
 *  - the output (slice and SetDataSchema): the offset, op and system time
 *    columns always; the event time unless the dataset's schema has it as
 *    Option (silt fills every missing event time); a data column of the
 *    dataset's current schema keeps its nullability there (a change would
 *    be a type change), a new column of an existing schema is Option (the
 *    evolution rule, older slices do not have it); on the first schema a
 *    column is required when the read step declares it so and no preprocess
 *    query stands in between (DuckDB cannot tell the nullability of a query
 *    result, so a preprocessed column starts as Option);
 *  - a null in a column the dataset's schema requires is an error too.
 */

/* The read step's schema: its `schema`, or its legacy `ddlSchema` converted
 * (arena-owned), or NULL. */
static int read_step_schema(pipeline *p, const odf_union *read, const odf_DataSchema **out)
{
    *out = NULL;
    const odf_union_desc *u = odf_find_union("ReadStep");
    if (!read || !read->value || !u || read->type < 1 || read->type > u->nvariants)
        return 0;
    const odf_table_desc *d = u->variants[read->type - 1];
    const odf_strvec *ddl = NULL;
    for (size_t i = 0; i < d->nfields; i++) {
        const odf_field_desc *f = &d->fields[i];
        const char *base = (const char *)read->value + f->offset;
        if (strcmp(f->fb_name, "schema") == 0 && *(void *const *)base) {
            *out = *(const odf_DataSchema *const *)base;
            return 0;
        }
        if (strcmp(f->fb_name, "ddl_schema") == 0)
            ddl = (const odf_strvec *)base;
    }
    if (!ddl || !ddl->present || ddl->n == 0)
        return 0;
    odf_DataSchema *s = NULL;
    int rc = silt_schema_from_ddl(p->a, ddl, &s);
    *out = s;
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

static bool field_required(const odf_DataSchema *s, const char *name)
{
    const odf_DataField *f = schema_field(s, name);
    return f && !odf_data_type_is_nullable(&f->type);
}

static bool has_preprocess(const silt_ingest_request *req)
{
    return req->preprocess && req->preprocess->type != 0;
}

/* File and 1-based row of position `pos` (0-based, input order) of the read
 * data. Several files are read again one by one to count their rows: this
 * runs only to word an error. */
static int locate_input(pipeline *p, const silt_ingest_request *req, uint64_t pos, const char **file,
                        uint64_t *row)
{
    *file = req->nfiles ? (req->display ? req->display[0] : req->files[0]) : "input";
    *row = pos + 1;
    uint64_t base = 0;
    for (size_t i = 0; req->nfiles > 1 && i < req->nfiles; i++) {
        uint64_t n = 0;
        int rc = silt_read_files(p->e, req->read, &req->files[i], req->display ? &req->display[i] : NULL, 1,
                                 "__silt_locate");
        if (!rc)
            rc = silt_engine_query_u64(p->e, &n, "SELECT count(*) FROM __silt_locate");
        silt_engine_exec(p->e, "DROP TABLE IF EXISTS __silt_locate");
        if (rc)
            return rc;
        if (pos < base + n) {
            *file = req->display ? req->display[i] : req->files[i];
            *row = pos - base + 1;
            break;
        }
        base += n;
    }
    return 0;
}

/* Checks that no row of `table` has a null in one of `cols` (NULL-terminated;
 * names that are not columns of the table are skipped). The first offending
 * row (in input order), then column, is the error; `who` says what requires
 * the column. Rows of the read data are located in their file. */
static int check_nulls(pipeline *p, const silt_ingest_request *req, const char *table, const char *const *cols,
                       const char *who)
{
    colinfo c;
    int rc = describe(p, table, &c);
    silt_buf where = SILT_BUF_INIT, which = SILT_BUF_INIT;
    const char **hit = silt_arena_alloc(p->a, (c.n + 1) * sizeof *hit);
    size_t nhit = 0;
    if (!rc && !hit)
        rc = SILT_ENOMEM;
    for (const char *const *k = cols; !rc && k && *k; k++) {
        if (find_col(&c, *k) < 0)
            continue;
        char *q = silt_sql_ident(*k);
        if (!q) {
            rc = SILT_ENOMEM;
            break;
        }
        rc = silt_buf_printf(&where, "%s%s IS NULL", nhit ? " OR " : "", q);
        if (!rc)
            rc = silt_buf_printf(&which, " WHEN %s IS NULL THEN %zu", q, nhit);
        free(q);
        hit[nhit++] = *k;
    }
    char *first = NULL;
    char *qt = silt_sql_ident(table);
    if (!rc && nhit && !qt)
        rc = SILT_ENOMEM;
    if (!rc && nhit) {
        char *sql = silt_arena_printf(p->a,
                                      "SELECT CAST((SELECT count(*) FROM %s WHERE rowid < f.r) AS VARCHAR) || ' ' || "
                                      "CAST(f.k AS VARCHAR) FROM (SELECT rowid AS r, CASE%s END AS k FROM %s WHERE %s "
                                      "ORDER BY rowid LIMIT 1) f",
                                      qt, which.data, qt, where.data);
        rc = sql ? silt_engine_query_text(p->e, &first, sql) : SILT_ENOMEM;
        if (rc == SILT_ENOTFOUND)
            rc = 0; /* no null */
    }
    unsigned long long pos = 0;
    size_t k = 0;
    if (!rc && first && sscanf(first, "%llu %zu", &pos, &k) == 2 && k < nhit) {
        if (strcmp(table, "__silt_read") == 0) {
            const char *file = NULL;
            uint64_t row = 0;
            rc = locate_input(p, req, pos, &file, &row);
            if (!rc)
                rc = silt_err(SILT_EINVAL, "%s: row %llu, column '%s': null, but %s declares it required", file,
                              (unsigned long long)row, hit[k], who);
        } else {
            rc = silt_err(SILT_EINVAL, "preprocess result row %llu, column '%s': null, but %s declares it required",
                          pos + 1, hit[k], who);
        }
    }
    free(first);
    free(qt);
    silt_buf_free(&where);
    silt_buf_free(&which);
    return rc;
}

/* Required fields of the read step's schema: no nulls in the read data. */
static int check_declared(pipeline *p, const silt_ingest_request *req)
{
    int rc = read_step_schema(p, req->read, &p->declared);
    if (rc || !p->declared)
        return rc;
    const char **cols = silt_arena_alloc(p->a, (p->declared->fields.n + 1) * sizeof *cols);
    if (!cols)
        return SILT_ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < p->declared->fields.n; i++) {
        const odf_DataField *f = p->declared->fields.items[i];
        if (f && f->name && !odf_data_type_is_nullable(&f->type))
            cols[n++] = f->name;
    }
    return n ? check_nulls(p, req, "__silt_read", cols, "the read schema") : 0;
}

/* Computes p->required (see above) and checks the merge input for nulls in
 * the columns the dataset's schema requires (those the read step declared
 * were checked already when they reach the merge unchanged). */
static int output_required(pipeline *p, const silt_ingest_request *req)
{
    odf_DataSchema *cur = NULL;
    int rc = current_schema(p, &cur);
    p->required = silt_arena_alloc(p->a, (p->ndata_cols + 2) * sizeof *p->required);
    const char **check = silt_arena_alloc(p->a, (p->ndata_cols + 1) * sizeof *check);
    if (!rc && (!p->required || !check))
        rc = SILT_ENOMEM;
    if (rc)
        return rc;
    size_t n = 0, nc = 0;
    const odf_DataField *et = schema_field(cur, p->v.event_time);
    if (!et || !odf_data_type_is_nullable(&et->type))
        p->required[n++] = p->v.event_time;
    bool direct = !has_preprocess(req);
    for (size_t i = 0; i < p->ndata_cols; i++) {
        const char *c = p->data_cols[i];
        if (cur ? field_required(cur, c) : direct && field_required(p->declared, c))
            p->required[n++] = c;
        if (cur && field_required(cur, c) && !(direct && field_required(p->declared, c)))
            check[nc++] = c;
    }
    return nc ? check_nulls(p, req, p->input, check, "the dataset's schema") : 0;
}

/* Is `ss` the last recorded state of its source? */
static bool source_state_unchanged(const odf_chain_state *st, const odf_SourceState *ss)
{
    for (size_t i = 0; i < st->num_source_states; i++) {
        const odf_source_state_ref *r = &st->source_states[i];
        if (strcmp(r->source_name, ss->source_name ? ss->source_name : "") == 0)
            return strcmp(r->kind, ss->kind ? ss->kind : "") == 0 &&
                   strcmp(r->value, ss->value ? ss->value : "") == 0;
    }
    return false;
}

/* ---- stages ------------------------------------------------------------ */

/* Confines the engine before the first preprocess query (engine.h): from
 * then on it reads and writes only its scratch directory (spill files, and
 * the slice and checkpoint files written there, which do not exist yet) and
 * reads the one checkpoint the merge loads; no other file, no extension, no
 * setting. Every file silt reads before (the input) is already a table. */
static int confine_for_preprocess(pipeline *p, const silt_ingest_request *req)
{
    const char *files[1] = {NULL};
    size_t nfiles = 0;
    if (p->ds->st.has_checkpoint && req->merge->type != ODF_MergeStrategy_Append) {
        char *cp = silt_store_object_path(p->ds->store, "checkpoints", p->ds->st.checkpoint);
        files[0] = cp ? silt_arena_strdup(p->a, cp) : NULL;
        free(cp);
        if (!files[0])
            return SILT_ENOMEM;
        nfiles = 1;
    }
    const char *dirs[] = {p->scratch};
    silt_confine_opts c = {
        .files = files,
        .n_files = nfiles,
        .dirs = dirs,
        .n_dirs = 1,
        .hint_write = "a preprocess query is one SELECT over its input",
        .hint_other = "a preprocess query is one SELECT over its input",
        .hint_files = "a preprocess query reads only its input",
    };
    return silt_engine_confine(p->e, &c);
}

/* Runs the preprocess queries of the manifest (written by its author, not
 * by silt): each is one SELECT, checked by the engine, on the confined
 * engine; the steps with an alias become views, the last one the table
 * __silt_pre. */
static int preprocess(pipeline *p, const silt_ingest_request *req)
{
    const odf_union *pre = req->preprocess;
    if (!pre || pre->type == 0) {
        p->input = "__silt_read"; /* prepared in place: no copy of the data */
        return 0;
    }
    p->input = "__silt_pre";
    if (pre->type != ODF_Transform_Sql)
        return silt_err(SILT_EUNSUPPORTED, "unsupported preprocess kind");
    const odf_TransformSql *t = NULL;
    int rc = silt_compat_prepare(p->e, p->a, pre->value, &t, "preprocess query"); /* engine/compat.h */
    if (!rc)
        rc = silt_engine_exec(p->e, "CREATE OR REPLACE TEMP VIEW input AS SELECT * FROM __silt_read");
    if (!rc)
        rc = confine_for_preprocess(p, req);
    if (rc)
        return rc;
    const char *final_query = t->query;
    for (size_t i = 0; !rc && i < t->queries.n; i++) {
        const odf_SqlQueryStep *st = t->queries.items[i];
        if (!st->alias || !*st->alias) {
            if (i + 1 != t->queries.n)
                return silt_err(SILT_EINVAL, "preprocess: only the last of the queries may have no alias");
            final_query = st->query;
            break;
        }
        char *ctx = silt_arena_printf(p->a, "preprocess query '%s'", st->alias);
        if (!ctx)
            return SILT_ENOMEM;
        rc = silt_engine_create_from_query(p->e, st->alias, false, st->query ? st->query : "", ctx);
    }
    if (rc)
        return rc;
    if (!final_query)
        return silt_err(SILT_EINVAL, "preprocess: no output query (a query without an alias)");
    return silt_engine_create_from_query(p->e, "__silt_pre", true, final_query, "preprocess query");
}

static int current_schema(pipeline *p, odf_DataSchema **out);

/* Names of the input files for messages ("a.csv, b.csv"). */
static const char *input_names(pipeline *p, const silt_ingest_request *req)
{
    silt_buf b = SILT_BUF_INIT;
    for (size_t i = 0; i < req->nfiles && i < 4; i++)
        silt_buf_printf(&b, "%s%s", i ? ", " : "", req->display ? req->display[i] : req->files[i]);
    if (req->nfiles > 4)
        silt_buf_printf(&b, " (+%zu more)", req->nfiles - 4);
    char *r = silt_arena_strdup(p->a, b.data ? b.data : "input");
    silt_buf_free(&b);
    return r ? r : "input";
}

/* Runs one ALTER TABLE on the input table. */
static int alter(pipeline *p, const char *fmt, const char *a1, const char *a2, const char *a3)
{
    char *qt = silt_sql_ident(p->input);
    char *sql = qt ? silt_arena_printf(p->a, fmt, qt, a1, a2, a3) : NULL;
    free(qt);
    return sql ? silt_engine_exec(p->e, sql) : SILT_ENOMEM;
}

/* Prepares the merge input in place (ALTER TABLE: no copy of the data):
 * input columns clashing with system column names get a '_' prefix (an
 * error when the read step declared a schema); the event time column is
 * normalised to a timestamp or a date, the fallback filling it where absent
 * or NULL. Also computes the output order of the data columns: those of the
 * dataset's current schema first, matched by name and in the schema's order
 * (a missing one is an error: columns cannot be removed), then new ones in
 * input order. */
static int event_time_stage(pipeline *p, const silt_ingest_request *req, bool keep_op, char *fallback_sql)
{
    colinfo c;
    int rc = describe(p, p->input, &c);
    if (rc)
        return rc;
    bool declared = read_step_has_schema(req->read);
    char *qet = silt_sql_ident(p->v.event_time);
    if (!qet)
        return SILT_ENOMEM;
    /* system column clashes */
    const char *sys[] = {p->v.offset, p->v.op, p->v.system_time};
    for (size_t i = 0; !rc && i < c.n; i++) {
        bool clash = false;
        for (size_t k = 0; k < 3; k++)
            if (strcmp(c.names[i], sys[k]) == 0 && !(k == 1 && keep_op))
                clash = true;
        if (!clash)
            continue;
        if (declared) {
            rc = silt_err(SILT_EINVAL, "input column '%s' clashes with a system column; rename it in the schema "
                                       "or with a preprocess query",
                          c.names[i]);
            break;
        }
        char *name = silt_arena_printf(p->a, "_%s", c.names[i]);
        if (!name) {
            rc = SILT_ENOMEM;
            break;
        }
        if (find_col(&c, name) >= 0) {
            rc = silt_err(SILT_EINVAL, "input columns '%s' and '%s' clash after renaming", c.names[i], name);
            break;
        }
        char *qo = silt_sql_ident(c.names[i]), *qn = silt_sql_ident(name);
        rc = (qo && qn) ? alter(p, "ALTER TABLE %s RENAME COLUMN %s TO %s", qo, qn, NULL) : SILT_ENOMEM;
        free(qo);
        free(qn);
        c.names[i] = name;
    }
    /* event time */
    int et = find_col(&c, p->v.event_time);
    if (!rc && et < 0) {
        rc = alter(p, "ALTER TABLE %s ADD COLUMN %s TIMESTAMP DEFAULT %s", qet, fallback_sql, NULL);
    } else if (!rc) {
        const char *t = c.types[et];
        const char *using = NULL;
        if (strcmp(t, "DATE") == 0 || strcmp(t, "TIMESTAMP") == 0) {
            /* rewrite the column only when there are NULLs to fill */
            uint64_t nulls = 0;
            char *qt = silt_sql_ident(p->input);
            char *q = qt ? silt_arena_printf(p->a, "SELECT count(*) FROM %s WHERE %s IS NULL", qt, qet) : NULL;
            free(qt);
            rc = q ? silt_engine_query_u64(p->e, &nulls, q) : SILT_ENOMEM;
            if (!rc && nulls)
                using = strcmp(t, "DATE") == 0 ? "coalesce(CAST(%s AS TIMESTAMP), %s)" : "coalesce(%s, %s)";
        } else if (strncmp(t, "TIMESTAMP", 9) == 0) {
            using = "coalesce(CAST(%s AS TIMESTAMP), %s)";
        } else if (strcmp(t, "VARCHAR") == 0) {
            using = "coalesce(CAST(CAST(%s AS TIMESTAMPTZ) AS TIMESTAMP), %s)";
        } else if (strstr(t, "INT") || strcmp(t, "DOUBLE") == 0 || strcmp(t, "FLOAT") == 0 ||
                   strncmp(t, "DECIMAL", 7) == 0) {
            using = "coalesce(CAST(to_timestamp(CAST(%s AS DOUBLE)) AS TIMESTAMP), %s)";
        } else {
            rc = silt_err(SILT_EINVAL,
                          "event time column '%s' has type %s; expected a timestamp, a date, an RFC 3339 "
                          "string or UNIX seconds",
                          p->v.event_time, t);
        }
        if (!rc && using) {
            char *expr = silt_arena_printf(p->a, using, qet, fallback_sql);
            rc = expr ? alter(p, "ALTER TABLE %s ALTER COLUMN %s SET DATA TYPE TIMESTAMP USING %s", qet, expr, NULL)
                      : SILT_ENOMEM;
        }
    }
    free(qet);
    if (rc)
        return rc;
    /* output order of the data columns */
    const char **order = silt_arena_alloc(p->a, (c.n ? c.n : 1) * sizeof *order);
    bool *used = silt_arena_alloc(p->a, (c.n ? c.n : 1) * sizeof *used);
    size_t n = 0;
    if (!order || !used)
        return SILT_ENOMEM;
    odf_DataSchema *cur = NULL;
    rc = current_schema(p, &cur);
    const char *allsys[] = {p->v.offset, p->v.op, p->v.system_time, p->v.event_time};
    for (size_t f = 0; !rc && cur && f < cur->fields.n; f++) {
        const odf_DataField *df = cur->fields.items[f];
        bool is_sys = false;
        for (size_t k = 0; k < 4; k++)
            if (df->name && strcmp(df->name, allsys[k]) == 0)
                is_sys = true;
        if (is_sys || !df->name)
            continue;
        int k = find_col(&c, df->name);
        if (k < 0)
            return silt_err(SILT_EINVAL,
                            "%s: column '%s' of the dataset's schema is missing (columns cannot be removed)",
                            input_names(p, req), df->name);
        used[k] = true;
        order[n++] = c.names[k];
    }
    for (size_t k = 0; !rc && k < c.n; k++) {
        if (used[k] || strcmp(c.names[k], p->v.event_time) == 0 || (keep_op && strcmp(c.names[k], p->v.op) == 0))
            continue;
        order[n++] = c.names[k];
    }
    p->data_cols = order;
    p->ndata_cols = n;
    return rc;
}

static int strvec_to_array(pipeline *p, const odf_strvec *v, const char *const **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!v->present || v->n == 0)
        return 0;
    const char **arr = silt_arena_alloc(p->a, v->n * sizeof *arr);
    if (!arr)
        return SILT_ENOMEM;
    for (size_t i = 0; i < v->n; i++)
        arr[i] = v->items[i];
    *out = arr;
    *n = v->n;
    return 0;
}

static int merge_spec(pipeline *p, const odf_union *m, silt_merge_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    spec->event_time_column = p->v.event_time;
    spec->op_column = p->v.op;
    spec->strategy = m->type;
    switch (m->type) {
    case ODF_MergeStrategy_Append:
        return 0;
    case ODF_MergeStrategy_Ledger:
        return strvec_to_array(p, &((odf_MergeStrategyLedger *)m->value)->primary_key, &spec->primary_key,
                               &spec->npk);
    case ODF_MergeStrategy_Snapshot: {
        odf_MergeStrategySnapshot *s = m->value;
        int rc = strvec_to_array(p, &s->primary_key, &spec->primary_key, &spec->npk);
        return rc ? rc : strvec_to_array(p, &s->compare_columns, &spec->compare_columns, &spec->ncompare);
    }
    case ODF_MergeStrategy_ChangelogStream:
        return strvec_to_array(p, &((odf_MergeStrategyChangelogStream *)m->value)->primary_key,
                               &spec->primary_key, &spec->npk);
    case ODF_MergeStrategy_UpsertStream:
        return strvec_to_array(p, &((odf_MergeStrategyUpsertStream *)m->value)->primary_key, &spec->primary_key,
                               &spec->npk);
    default:
        return silt_err(SILT_EINVAL, "unknown merge strategy");
    }
}

/* A new file in this run's private scratch directory (moved into the store
 * by silt_store_adopt_file): the only place a confined engine may write. */
static char *object_tmp(pipeline *p, const char *kind)
{
    return silt_arena_printf(p->a, "%s/%s-%u.parquet", p->scratch, kind, ++p->ntmp);
}

/* Current schema of the dataset (NULL when none). */
static int current_schema(pipeline *p, odf_DataSchema **out)
{
    odf_SetDataSchema *s = NULL;
    int rc = load_event(p, &p->ds->st.schema, ODF_MetadataEvent_SetDataSchema, (void **)&s);
    *out = s ? s->schema : NULL;
    return rc;
}

/* ---- the pipeline ------------------------------------------------------------ */

/* Validation before any object is written: the schema of the first slice
 * (still a temporary file) must be an additive evolution of the dataset's
 * schema — the rule the chain applies to the SetDataSchema, checked here so
 * that a failing ingest leaves no orphan slice or checkpoint in the store. */
static int check_schema_fits(pipeline *p, const silt_ingest_request *req, const odf_DataSchema *cur,
                             const odf_DataSchema *next)
{
    char msg[700];
    if (!cur || !odf_schema_check_evolution(cur, next, msg, sizeof msg))
        return 0;
    /* worded as the chain would reject the SetDataSchema block */
    const silt_dataset *ds = p->ds;
    bool master = strcmp(ds->branch, "master") == 0;
    return silt_err(SILT_EVALIDATION,
                    "%s: the data does not fit the dataset's schema: dataset '%s%s%s': block %llu (SetDataSchema): %s",
                    input_names(p, req), ds->name, master ? "" : "@", master ? "" : ds->branch,
                    (unsigned long long)(ds->st.empty ? 0 : ds->st.seq + 1), msg);
}

/* One system time for the records and the blocks of an ingest: now, never
 * before the last block, rounded up to the milliseconds the records hold. */
static silt_time commit_time(const silt_dataset *ds)
{
    silt_time now = silt_time_now();
    if (!ds->st.empty && silt_time_cmp(now, (silt_time){ds->st.last_system_time.sec,
                                                        ds->st.last_system_time.nsec}) < 0)
        now = (silt_time){ds->st.last_system_time.sec, ds->st.last_system_time.nsec};
    if (now.nsec % 1000000) { /* records hold milliseconds: round up, never below the last block */
        now.nsec = (now.nsec / 1000000 + 1) * 1000000;
        if (now.nsec >= 1000000000) {
            now.sec++;
            now.nsec = 0;
        }
    }
    return now;
}

/* Read, preprocess and event time: leaves the merge input in p->input and
 * the system time of the ingest in *now_out. */
static int run(pipeline *p, const silt_ingest_request *req, silt_time *now_out)
{
    silt_dataset *ds = p->ds;
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    rc = silt_files_is_files(ds);
    if (rc < 0)
        return rc;
    if (rc > 0)
        return silt_err(SILT_EINVAL, "dataset '%s' is a files dataset: change it with transactions "
                                     "('silt upload', 'silt txn')",
                        ds->name);
    rc = load_vocab(p);
    if (rc)
        return rc;
    silt_time now = commit_time(ds);
    silt_time fallback = req->has_event_time ? req->event_time : now;
    char fb_text[48];
    silt_time_format((silt_time){fallback.sec, fallback.nsec / 1000000 * 1000000}, fb_text);
    char *fallback_sql = silt_arena_printf(p->a, "CAST(TIMESTAMPTZ '%s' AS TIMESTAMP)", fb_text);
    if (!fallback_sql)
        return SILT_ENOMEM;

    /* read */
    silt_time t0;
    trace(NULL, &t0);
    if (req->progress && req->prog) {
        req->prog->item = req->nfiles ? (req->display ? req->display[0] : req->files[0]) : NULL;
        (void)req->progress(req->progress_ctx, req->prog); /* stopping is checked before the commit */
    }
    rc = silt_read_files(p->e, req->read, req->files, req->display, req->nfiles, "__silt_read");
    if (rc)
        return rc;
    trace("read", &t0);
    rc = check_declared(p, req);
    if (rc)
        return rc;
    /* preprocess */
    rc = preprocess(p, req);
    if (rc)
        return rc;
    trace("preprocess", &t0);
    /* event time + system column clashes */
    bool keep_op = req->merge->type == ODF_MergeStrategy_ChangelogStream ||
                   req->merge->type == ODF_MergeStrategy_UpsertStream;
    rc = event_time_stage(p, req, keep_op, fallback_sql);
    if (!rc)
        rc = output_required(p, req);
    if (rc)
        return rc;
    trace("event time", &t0);
    *now_out = now;
    return 0;
}

/* The checkpoint in force (the merge state) has the size and hash the last
 * data event gives it, before it is read back. */
static int check_merge_state(silt_dataset *ds)
{
    int rc = silt_store_check_object(ds->store, "checkpoints", ds->st.checkpoint, ds->st.checkpoint_size);
    if (rc == 0)
        return 0;
    char msg[512], blk[SILT_MH_TEXT_LEN + 1];
    snprintf(msg, sizeof msg, "%s", silt_error_last());
    silt_multihash_to_text(ds->st.last_data_event.hash, SILT_MH_LEN, blk);
    return silt_err(rc == SILT_EIO ? rc : SILT_ECORRUPT,
                    "merge state %s (newCheckpoint of block %s); run 'silt verify %s'", msg, blk, ds->name);
}

/* Merge against the previous state, write the slices and the checkpoint,
 * commit: everything that depends on the head, re-run as a whole when an
 * ingest is retried after a lost race. */
static int merge_commit(pipeline *p, const silt_ingest_request *req, silt_ingest_result *out, silt_time now)
{
    silt_dataset *ds = p->ds;
    silt_time t0;
    trace(NULL, &t0);
    int rc = 0;
    /* previous merge state */
    const char *prev = NULL;
    if (ds->st.has_checkpoint && req->merge->type != ODF_MergeStrategy_Append) {
        rc = check_merge_state(ds);
        if (rc)
            return rc;
        trace("checkpoint check", &t0);
        char *path = silt_store_object_path(ds->store, "checkpoints", ds->st.checkpoint);
        char *qp = path ? silt_sql_str(path) : NULL;
        free(path);
        if (!qp)
            return SILT_ENOMEM;
        rc = silt_engine_execf(p->e, "CREATE OR REPLACE TEMP TABLE __silt_prev AS SELECT * FROM read_parquet(%s)", qp);
        free(qp);
        if (rc)
            return silt_err_context(rc, "cannot load the merge state (checkpoint)");
        prev = "__silt_prev";
    }
    /* merge */
    silt_merge_spec spec;
    rc = merge_spec(p, req->merge, &spec);
    if (rc)
        return rc;
    uint64_t nrows = 0;
    bool append = req->merge->type == ODF_MergeStrategy_Append;
    bool has_state = !append;
    const char *out_table = "__silt_out";
    if (append) {
        /* every input record as +A, in input order: the input table itself */
        char *qt = silt_sql_ident(p->input);
        char *q = qt ? silt_arena_printf(p->a, "SELECT count(*) FROM %s", qt) : NULL;
        free(qt);
        rc = q ? silt_engine_query_u64(p->e, &nrows, q) : SILT_ENOMEM;
        out_table = p->input;
    } else {
        rc = silt_merge(p->e, &spec, p->input, prev, "__silt_out", "__silt_state", &nrows);
    }
    if (rc)
        return rc;
    trace("merge", &t0);
    if (req->progress && req->prog) {
        req->prog->item = NULL;
        req->prog->done = req->prog->total;
        req->prog->bytes = req->prog->total_bytes;
        req->prog->records = nrows;
        if (req->progress(req->progress_ctx, req->prog) != 0)
            return silt_err(SILT_ECANCELED, "interrupted before the commit (nothing was committed)");
    }

    bool state_moved = req->source_state && !source_state_unchanged(&ds->st, req->source_state);
    if (nrows == 0 && !state_moved) {
        out->up_to_date = true;
        return 0;
    }

    /* split the changelog into slices of about target_records_per_slice
     * records; a -C/+C pair never spans two slices */
    uint64_t target = req->target_records_per_slice;
    size_t nchunks = 0, cap = 4;
    uint64_t *ends = silt_arena_alloc(p->a, cap * sizeof *ends);
    if (!ends)
        return SILT_ENOMEM;
    for (uint64_t start = 0; start < nrows || (nrows == 0 && nchunks == 0);) {
        uint64_t end = (target && nrows - start > target) ? start + target : nrows;
        if (end < nrows && !append) {
            char *qop = silt_sql_ident(p->v.op);
            char *q = qop ? silt_arena_printf(p->a, "SELECT %s FROM __silt_out WHERE rowid = %llu", qop,
                                             (unsigned long long)end)
                          : NULL;
            free(qop);
            uint64_t op = 0;
            if (!q)
                return SILT_ENOMEM;
            rc = silt_engine_query_u64(p->e, &op, q);
            if (rc)
                return rc;
            if (op == 3) /* +C: keep it with its -C */
                end++;
        }
        if (nchunks == cap) {
            uint64_t *n2 = silt_arena_alloc(p->a, cap * 2 * sizeof *n2);
            if (!n2)
                return SILT_ENOMEM;
            memcpy(n2, ends, cap * sizeof *n2);
            ends = n2;
            cap *= 2;
        }
        ends[nchunks++] = end;
        if (end == start)
            break; /* no records: one AddData for the source state */
        start = end;
    }
    odf_union *events = silt_arena_alloc(p->a, (nchunks + 1) * sizeof *events);
    if (!events)
        return SILT_ENOMEM;
    size_t nevents = 0;
    /* state carried from block to block of this batch */
    bool has_off = ds->st.has_last_offset;
    uint64_t last_off = ds->st.last_offset;
    bool has_wm = ds->st.has_watermark;
    odf_time wm = ds->st.watermark;
    odf_Checkpoint *prev_cp = NULL;
    if (ds->st.has_checkpoint) {
        prev_cp = silt_arena_alloc(p->a, sizeof *prev_cp);
        if (!prev_cp)
            return SILT_ENOMEM;
        prev_cp->physical_hash = (odf_bytes){ds->st.checkpoint, SILT_MH_LEN};
        prev_cp->size = ds->st.checkpoint_size;
    }
    odf_Checkpoint *new_cp = prev_cp;
    if (nrows > 0 && has_state) {
        /* merge state checkpoint (attached to the last block of the batch) */
        p->checkpoint_tmp = object_tmp(p, "checkpoints");
        char *qc = p->checkpoint_tmp ? silt_sql_str(p->checkpoint_tmp) : NULL;
        if (!qc)
            return SILT_ENOMEM;
        rc = silt_engine_execf(p->e, "COPY __silt_state TO %s (FORMAT parquet, compression snappy)", qc);
        free(qc);
        uint8_t digest[32];
        uint64_t csize = 0;
        if (!rc)
            rc = silt_sha3_file(p->checkpoint_tmp, digest, &csize);
        if (rc)
            return rc;
        uint8_t *ch = silt_arena_alloc(p->a, SILT_MH_LEN);
        new_cp = silt_arena_alloc(p->a, sizeof *new_cp);
        if (!ch || !new_cp)
            return SILT_ENOMEM;
        silt_multihash_wrap_sha3(digest, ch);
        /* moved into checkpoints/ only once the data is validated (below) */
        new_cp->physical_hash = (odf_bytes){ch, SILT_MH_LEN};
        new_cp->size = csize;
    }
    uint64_t start = 0;
    for (size_t k = 0; k < nchunks; k++) {
        uint64_t end = ends[k], n = end - start;
        bool last = k + 1 == nchunks;
        odf_AddData *ad = silt_arena_alloc(p->a, sizeof *ad);
        if (!ad)
            return SILT_ENOMEM;
        ad->has_prev_offset = has_off;
        ad->prev_offset = last_off;
        if (prev_cp)
            ad->prev_checkpoint = prev_cp->physical_hash;
        ad->new_checkpoint = last ? new_cp : prev_cp;
        if (last && req->source_state)
            ad->new_source_state = (odf_SourceState *)req->source_state;
        if (n > 0) {
            const char *table = out_table;
            if (nchunks > 1) {
                char *qo = silt_sql_ident(out_table);
                rc = qo ? silt_engine_execf(p->e,
                                            "CREATE OR REPLACE TEMP TABLE __silt_chunk AS SELECT * FROM %s "
                                            "WHERE rowid >= %llu AND rowid < %llu",
                                            qo, (unsigned long long)start, (unsigned long long)end)
                        : SILT_ENOMEM;
                free(qo);
                if (rc)
                    return rc;
                table = "__silt_chunk";
            }
            uint64_t first = has_off ? last_off + 1 : 0;
            p->slice_tmp = object_tmp(p, "data");
            if (!p->slice_tmp)
                return SILT_ENOMEM;
            silt_slice_spec ss = {table, p->v.offset, p->v.op, p->v.system_time, p->v.event_time, first, now,
                                  p->slice_tmp, append, p->data_cols, p->ndata_cols, p->required};
            silt_slice_info si;
            rc = silt_write_slice(p->e, &ss, &si);
            if (rc)
                return rc;
            trace("write", &t0);
            if (si.num_rows != n)
                return silt_err(SILT_EINTERNAL, "slice has %llu rows, expected %llu",
                                (unsigned long long)si.num_rows, (unsigned long long)n);
            if (k == 0) {
                /* schema: the slice as it will be read back */
                odf_DataSchema *schema = NULL, *cur = NULL;
                size_t nreq = 0;
                while (p->required[nreq])
                    nreq++;
                const char **required = silt_arena_alloc(p->a, (nreq + 4) * sizeof *required);
                if (!required)
                    return SILT_ENOMEM;
                required[0] = p->v.offset;
                required[1] = p->v.op;
                required[2] = p->v.system_time;
                memcpy(required + 3, p->required, (nreq + 1) * sizeof *required);
                rc = silt_schema_from_table(p->e, p->a, SILT_SLICE_VIEW, required, &schema);
                if (!rc)
                    rc = current_schema(p, &cur);
                if (rc)
                    return rc;
                if (!rc)
                    rc = check_schema_fits(p, req, cur, schema);
                if (rc)
                    return rc;
                if (!cur || !odf_table_equal(&odf_desc_DataSchema, cur, schema)) {
                    odf_SetDataSchema *sds = silt_arena_alloc(p->a, sizeof *sds);
                    if (!sds)
                        return SILT_ENOMEM;
                    sds->schema = schema;
                    events[nevents++] = (odf_union){ODF_MetadataEvent_SetDataSchema, sds};
                    out->schema_changed = true;
                }
            }
            /* move the slice into place */
            rc = silt_ds_adopt_slice(ds, p->a, p->slice_tmp, &si, first, &ad->new_data);
            if (rc)
                return rc;
            if (si.has_max_event_time) {
                odf_time m = {si.max_event_time.sec, si.max_event_time.nsec};
                if (!has_wm || m.sec > wm.sec || (m.sec == wm.sec && m.nsec > wm.nsec))
                    wm = m;
                has_wm = true;
            }
            if (k == 0)
                out->first_offset = first;
            out->last_offset = first + n - 1;
            out->num_records += n;
            has_off = true;
            last_off = first + n - 1;
        }
        ad->has_new_watermark = has_wm;
        ad->new_watermark = wm;
        events[nevents++] = (odf_union){ODF_MetadataEvent_AddData, ad};
        prev_cp = ad->new_checkpoint;
        start = end;
    }
    out->num_slices = nrows ? nchunks : 0;
    if (p->checkpoint_tmp) {
        rc = silt_store_adopt_file(ds->store, "checkpoints", new_cp->physical_hash.data, p->checkpoint_tmp);
        if (rc)
            return rc;
    }
    trace("checkpoint", &t0);
    rc = silt_ds_append_events_at(ds, events, nevents, NULL, &now);
    if (rc == SILT_EVALIDATION && out->schema_changed)
        return silt_err_context(rc, "%s: the data does not fit the dataset's schema", input_names(p, req));
    if (rc)
        return rc;
    trace("commit", &t0);
    snprintf(out->head, sizeof out->head, "%s", ds->head);
    if (ds->st.has_watermark) {
        out->has_watermark = true;
        silt_time_format((silt_time){ds->st.watermark.sec, ds->st.watermark.nsec}, out->watermark);
    }
    return 0;
}

/* ---- lost races ------------------------------------------------------------- */

/* What a lost race may change under an ingest, compared with the state it
 * was built on. */
typedef enum retry_kind {
    RETRY_MERGE, /* same vocab and schema: the merge input can be reused */
    RETRY_ALL,   /* vocab or schema changed: read the input again */
    RETRY_STALE, /* the source or its state changed: the request itself is stale */
} retry_kind;

static bool ref_eq(const odf_block_ref *a, const odf_block_ref *b)
{
    return a->present == b->present && (!a->present || memcmp(a->hash, b->hash, SILT_MH_LEN) == 0);
}

static const odf_source_state_ref *find_source_state(const odf_chain_state *st, const char *name)
{
    for (size_t i = 0; i < st->num_source_states; i++)
        if (strcmp(st->source_states[i].source_name, name) == 0)
            return &st->source_states[i];
    return NULL;
}

static retry_kind compare_basis(const odf_chain_state *old, const odf_chain_state *cur,
                                const silt_ingest_request *req)
{
    if (old->dataset_kind != cur->dataset_kind || !ref_eq(&old->polling_source, &cur->polling_source) ||
        old->num_push_sources != cur->num_push_sources)
        return RETRY_STALE;
    for (size_t i = 0; i < old->num_push_sources; i++)
        if (strcmp(old->push_sources[i].name, cur->push_sources[i].name) != 0 ||
            memcmp(old->push_sources[i].block, cur->push_sources[i].block, SILT_MH_LEN) != 0)
            return RETRY_STALE;
    if (req->source_state) {
        /* the input was fetched against this state: another writer that
         * moved it has ingested (some of) the same input */
        const char *name = req->source_state->source_name ? req->source_state->source_name : "";
        const odf_source_state_ref *a = find_source_state(old, name), *b = find_source_state(cur, name);
        if ((a == NULL) != (b == NULL) ||
            (a && (strcmp(a->kind, b->kind) != 0 || strcmp(a->value, b->value) != 0)))
            return RETRY_STALE;
    }
    if (!ref_eq(&old->vocab, &cur->vocab) || !ref_eq(&old->schema, &cur->schema))
        return RETRY_ALL;
    return RETRY_MERGE;
}

/* A small random pause before attempt `attempt` (1-based), growing with it. */
static void backoff(int attempt)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)getpid();
    unsigned max_ms = 4u << (attempt < 6 ? attempt : 6);
    usleep(1000u * (1 + r % max_ms));
}

/* ---- entry point ---------------------------------------------------------------- */

static void pipeline_reset_attempt(pipeline *p)
{
    if (p->slice_tmp)
        unlink(p->slice_tmp);
    if (p->checkpoint_tmp)
        unlink(p->checkpoint_tmp);
    p->slice_tmp = p->checkpoint_tmp = NULL;
}

/* A fresh engine and private scratch directory (`.silt/tmp/<owner>/`), so
 * that a confined preprocess query sees no spill or temp file of another
 * process; the previous attempt's are closed and removed. */
static int open_engine(pipeline *p)
{
    int rc = 0;
    if (p->e)
        rc = silt_ws_engine_close(p->e, p->scratch, 0);
    p->e = NULL;
    p->scratch = NULL;
    p->ntmp = 0;
    if (rc == 0)
        rc = silt_ws_engine_open(p->ds->ws, &p->e, &p->scratch);
    return rc;
}

/* Runs the pipeline; a lost race (SILT_ECONFLICT at the commit) is retried
 * up to SILT_INGEST_ATTEMPTS times in all against the new head while the
 * request is still valid there (compare_basis): the merge, the slices, the
 * checkpoint and the blocks are made again from the new state; the input is
 * read again when the vocab or schema changed, or when a preprocess query
 * confined the engine to the files of the old head. */
static int run_with_retries(pipeline *p, const silt_ingest_request *req, silt_ingest_result *out)
{
    silt_dataset *ds = p->ds;
    int rc = silt_ds_sync(ds);
    odf_chain_state basis;
    if (rc == 0)
        rc = odf_chain_state_copy(&basis, &ds->st);
    if (rc)
        return rc;
    retry_kind kind = RETRY_ALL;
    silt_time now = {0, 0};
    for (int attempt = 1;; attempt++) {
        memset(out, 0, sizeof *out);
        if (kind == RETRY_ALL) {
            rc = open_engine(p);
            if (!rc)
                rc = run(p, req, &now);
        } else {
            now = commit_time(ds);
            rc = 0;
        }
        if (!rc)
            rc = merge_commit(p, req, out, now);
        pipeline_reset_attempt(p);
        if (rc != SILT_ECONFLICT || attempt >= SILT_INGEST_ATTEMPTS)
            break;
        char msg[512];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        int rc2 = silt_ds_sync(ds);
        if (rc2) {
            rc = rc2;
            break;
        }
        kind = compare_basis(&basis, &ds->st, req);
        if (kind == RETRY_STALE) {
            rc = silt_err(SILT_ECONFLICT, "%s", msg);
            break;
        }
        if (has_preprocess(req))
            kind = RETRY_ALL; /* the confined engine may read only the old head's checkpoint */
        silt_err_clear();
        backoff(attempt);
    }
    odf_chain_state_free(&basis);
    return rc;
}

int silt_ingest_run(silt_dataset *ds, const silt_ingest_request *req, silt_ingest_result *out)
{
    memset(out, 0, sizeof *out);
    pipeline p = {.ds = ds};
    p.a = silt_arena_new();
    if (!p.a)
        return SILT_ENOMEM;
    int rc = run_with_retries(&p, req, out);
    if (p.e)
        rc = silt_ws_engine_close(p.e, p.scratch, rc);
    silt_arena_free(p.a);
    if (rc < 0)
        return silt_err_context(rc, "ingest into '%s'", ds->name);
    return 0;
}
