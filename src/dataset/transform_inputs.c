/* transform_inputs.c — a SetTransform as it is stored: inputs resolved to
 * dataset ids, the SQL checked for shape (issue 16).
 *
 * Invariants:
 *  - the stored block names every input by its DID (datasetRef) and carries
 *    an alias (the name written when the manifest gave none), as ODF
 *    requires once a block is accepted;
 *  - an input that does not exist, the dataset itself, or an input whose own
 *    inputs lead back to the dataset (a cycle) is refused before anything is
 *    written, with one line naming the input;
 *  - `query` and `queries` are exclusive; every step but the last has an
 *    alias; the stored form is always `queries` (ODF: `query` is a
 *    convenience that is never stored);
 *  - when every input has a schema, the query is bound (prepared, never
 *    run) against empty views of those schemas under the aliases, on a
 *    confined engine: a wrong column or table is refused at add time with
 *    DuckDB's message; an input without a schema yet skips the binding
 *    (the first pull reports such errors).
 *  - the queries of a SetTransform or preprocess whose engine is not DuckDB
 *    pass the compatibility rewrite (engine/compat.h), so its errors (an
 *    unknown arrow_cast type, an unsupported pattern letter) are refused here:
 *    a transform's as part of binding, a preprocess's by silt_compat_check.
 * The resolved copy lives in the caller's arena; the input is not changed.
 */
#include "dataset/dataset_internal.h"

#include "dataset/data_views.h"
#include "engine/compat.h"
#include "engine/engine.h"
#include "engine/query.h"
#include "engine/schema.h"
#include "util/buf.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

/* Loads the SetTransform in force in ds (NULL when none). */
int silt_ds_load_transform(silt_dataset *ds, silt_arena *a, const odf_SetTransform **out)
{
    *out = NULL;
    if (!ds->st.transform.present)
        return 0;
    odf_MetadataBlock *b = NULL;
    int rc = silt_ds_load_block(ds, ds->st.transform.hash, a, &b);
    if (rc)
        return rc;
    if (b->event.type != ODF_MetadataEvent_SetTransform)
        return silt_err(SILT_ECORRUPT, "summary of '%s' points at a block that is not a SetTransform", ds->name);
    *out = b->event.value;
    return 0;
}

/* Does dataset `id` (text DID) reach `self_id` through the inputs of its
 * SetTransform? depth bounds the walk (a chain deeper than that is refused). */
static int reaches(silt_workspace *ws, const char *id, const char *self_id, int depth)
{
    if (depth > 64)
        return silt_err(SILT_EINVAL, "the inputs are nested more than 64 levels deep");
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, ws, id);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0; /* a dangling input further up is not this dataset's cycle */
    }
    if (rc < 0)
        return rc;
    silt_arena *a = silt_arena_new();
    const odf_SetTransform *t = NULL;
    rc = a ? silt_ds_load_transform(ds, a, &t) : SILT_ENOMEM;
    for (size_t i = 0; rc == 0 && t && i < t->inputs.n; i++) {
        const odf_TransformInput *in = t->inputs.items[i];
        const char *ref = in && in->dataset_ref ? in->dataset_ref : "";
        if (strcmp(ref, self_id) == 0)
            rc = 1;
        else if (strncmp(ref, "did:odf:", 8) == 0)
            rc = reaches(ws, ref, self_id, depth + 1);
    }
    silt_arena_free(a);
    silt_dataset_free(ds);
    return rc;
}

static int check_sql(const odf_SetTransform *t, silt_arena *a, odf_SetTransform *out)
{
    if (t->transform.type != ODF_Transform_Sql || !t->transform.value)
        return silt_err(SILT_EINVAL, "transform must be of kind Sql");
    const odf_TransformSql *sql = t->transform.value;
    bool has_query = sql->query != NULL, has_queries = sql->queries.present && sql->queries.n > 0;
    if (has_query && has_queries)
        return silt_err(SILT_EINVAL, "give either 'query' or 'queries', not both");
    if (!has_query && !has_queries)
        return silt_err(SILT_EINVAL, "the transform needs 'query' or 'queries'");
    for (size_t i = 0; has_queries && i + 1 < sql->queries.n; i++) {
        const odf_SqlQueryStep *s = sql->queries.items[i];
        if (!s || !s->alias || !*s->alias)
            return silt_err(SILT_EINVAL,
                            "queries[%zu] needs an alias (only the last step may have none)", i);
    }
    odf_TransformSql *ns = silt_arena_alloc(a, sizeof *ns);
    if (!ns)
        return SILT_ENOMEM;
    *ns = *sql;
    if (has_query) {
        odf_SqlQueryStep *step = silt_arena_alloc(a, sizeof *step);
        void **items = silt_arena_alloc(a, sizeof *items);
        if (!step || !items)
            return SILT_ENOMEM;
        step->alias = NULL;
        step->query = sql->query;
        items[0] = step;
        ns->query = NULL;
        ns->queries = (odf_vec){items, 1, true};
    }
    out->transform = (odf_union){ODF_Transform_Sql, ns};
    return 0;
}

/* Resolves one input: its DID text into *id (arena) and its alias. */
static int resolve_input(silt_workspace *ws, const char *self_name, const char *self_id,
                         const odf_TransformInput *in, silt_arena *a, odf_TransformInput *out)
{
    const char *ref = in && in->dataset_ref ? in->dataset_ref : "";
    if (!*ref)
        return silt_err(SILT_EINVAL, "an input has no datasetRef");
    if (strchr(ref, '/'))
        return silt_err(SILT_EINVAL, "input '%s': account/name references are not supported "
                                     "(this workspace is single-tenant)", ref);
    if (strcmp(ref, self_name) == 0 || (self_id && strcmp(ref, self_id) == 0))
        return silt_err(SILT_EINVAL, "input '%s' is the dataset itself", ref);
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, ws, ref);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "input '%s': no such dataset", ref);
    if (rc < 0)
        return silt_err_context(rc, "input '%s'", ref);
    if (strcmp(ds->branch, "master") != 0)
        rc = silt_err(SILT_EINVAL, "input '%s': give a dataset, not a branch", ref);
    if (rc == 0 && self_id && strcmp(ds->id, self_id) == 0)
        rc = silt_err(SILT_EINVAL, "input '%s' is the dataset itself", ref);
    if (rc == 0 && self_id) {
        rc = reaches(ws, ds->id, self_id, 0);
        if (rc > 0)
            rc = silt_err(SILT_EINVAL, "input '%s' reads '%s' (a cycle)", ref, self_name);
    }
    if (rc == 0) {
        out->dataset_ref = silt_arena_strdup(a, ds->id);
        const char *alias = in->alias && *in->alias ? in->alias : strncmp(ref, "did:odf:", 8) == 0 ? ds->name : ref;
        out->alias = silt_arena_strdup(a, alias);
        if (!out->dataset_ref || !out->alias)
            rc = SILT_ENOMEM;
    }
    silt_dataset_free(ds);
    return rc;
}

/* An empty view `alias` with input `ref`'s current schema; *none when the
 * input has no schema (yet). */
static int schema_view(silt_engine *e, silt_workspace *ws, const char *ref, const char *alias, bool *none)
{
    silt_dataset *ds = NULL;
    silt_arena *a = silt_arena_new();
    int rc = a ? silt_dataset_open(&ds, ws, ref) : SILT_ENOMEM;
    odf_DataSchema *schema = NULL;
    if (!rc)
        rc = silt_ds_schema(ds, a, &schema);
    *none = !rc && (!schema || schema->fields.n == 0);
    silt_buf cols = SILT_BUF_INIT;
    if (!rc && !*none)
        rc = silt_schema_to_duckdb_columns(&cols, schema);
    if (!rc && !*none)
        rc = silt_query_create_empty_view(e, alias, cols.data);
    silt_buf_free(&cols);
    silt_dataset_free(ds);
    silt_arena_free(a);
    return rc;
}

/* Binds the resolved transform r against its inputs' schemas (see above). */
static int bind_query(silt_workspace *ws, const odf_SetTransform *r)
{
    const odf_TransformSql *sql = r->transform.value;
    silt_engine *e = NULL;
    char *scratch = NULL;
    silt_arena *a = silt_arena_new();
    int rc = a ? silt_ws_engine_open(ws, &e, &scratch) : SILT_ENOMEM;
    /* another engine's SQL is bound as it will run: rewritten, with the
     * compatibility functions registered (engine/compat.h) */
    if (!rc)
        rc = silt_compat_prepare(e, a, r->transform.value, &sql, "transform query");
    bool none = false;
    for (size_t i = 0; !rc && !none && i < r->inputs.n; i++) {
        const odf_TransformInput *in = r->inputs.items[i];
        rc = schema_view(e, ws, in->dataset_ref, in->alias, &none);
    }
    if (!rc && !none) {
        const char *dirs[] = {scratch};
        silt_confine_opts c = {.dirs = dirs, .n_dirs = 1,
                               .hint_write = "a transform query is one SELECT over its inputs",
                               .hint_other = "a transform query is one SELECT over its inputs",
                               .hint_files = "a transform query reads only its inputs"};
        rc = silt_engine_confine(e, &c);
    }
    for (size_t k = 0; !rc && !none && k < sql->queries.n; k++) {
        const odf_SqlQueryStep *st = sql->queries.items[k];
        char ctx[300];
        if (k + 1 < sql->queries.n) {
            snprintf(ctx, sizeof ctx, "transform step '%s'", st->alias);
            rc = silt_engine_create_from_query(e, st->alias, false, st->query, ctx);
        } else {
            rc = silt_engine_check_query(e, st->query, "transform query");
        }
    }
    if (e)
        rc = silt_ws_engine_close(e, scratch, rc);
    silt_arena_free(a);
    return rc;
}

int silt_ds_resolve_transform(silt_workspace *ws, const char *self_name, const char *self_id,
                              const odf_SetTransform *t, silt_arena *a, odf_SetTransform **out)
{
    *out = NULL;
    odf_SetTransform *r = silt_arena_alloc(a, sizeof *r);
    void **items = silt_arena_alloc(a, (t->inputs.n + 1) * sizeof *items);
    if (!r || !items)
        return SILT_ENOMEM;
    *r = *t;
    int rc = check_sql(t, a, r);
    for (size_t i = 0; rc == 0 && i < t->inputs.n; i++) {
        odf_TransformInput *ni = silt_arena_alloc(a, sizeof *ni);
        if (!ni)
            return SILT_ENOMEM;
        rc = resolve_input(ws, self_name, self_id, t->inputs.items[i], a, ni);
        for (size_t j = 0; rc == 0 && j < i; j++) {
            const odf_TransformInput *o = items[j];
            if (strcmp(o->alias, ni->alias) == 0)
                rc = silt_err(SILT_EINVAL, "two inputs have the alias '%s'", ni->alias);
            else if (strcmp(o->dataset_ref, ni->dataset_ref) == 0)
                rc = silt_err(SILT_EINVAL, "input '%s' is given twice", ni->alias);
        }
        items[i] = ni;
    }
    if (rc)
        return rc;
    r->inputs = (odf_vec){items, t->inputs.n, true};
    rc = bind_query(ws, r);
    if (rc)
        return rc;
    *out = r;
    return 0;
}

/* The SQL of a source's preprocess, or NULL. */
static const odf_TransformSql *preprocess_sql(const odf_union *e)
{
    const odf_union *u = NULL;
    if (e->type == ODF_MetadataEvent_SetPollingSource)
        u = &((const odf_SetPollingSource *)e->value)->preprocess;
    else if (e->type == ODF_MetadataEvent_AddPushSource)
        u = &((const odf_AddPushSource *)e->value)->preprocess;
    return u && u->type == ODF_Transform_Sql ? u->value : NULL;
}

int silt_ds_resolve_events(silt_workspace *ws, const char *self_name, const char *self_id, odf_union *events,
                           size_t n, silt_arena *a)
{
    for (size_t i = 0; i < n; i++) {
        if (!events[i].value)
            continue;
        /* SQL of another engine: the rewrite's errors now, not at the first pull */
        const odf_TransformSql *pre = preprocess_sql(&events[i]);
        int rc = pre ? silt_compat_check(pre, "preprocess query") : 0; /* engine/compat.h */
        if (rc)
            return rc;
        if (events[i].type != ODF_MetadataEvent_SetTransform)
            continue;
        odf_SetTransform *r = NULL;
        rc = silt_ds_resolve_transform(ws, self_name, self_id, events[i].value, a, &r); /* binds the rewritten SQL */
        if (rc)
            return rc;
        events[i].value = r;
    }
    return 0;
}
