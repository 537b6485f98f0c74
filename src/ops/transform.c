/* transform.c — running the SQL transform of a derivative dataset: one
 * ExecuteTransform per run (issue 16, docs/transforms.md).
 *
 * Invariants:
 *  - the inputs are read at their heads as found when the run starts; the
 *    ExecuteTransform records, per input, the half-open intervals
 *    (prevBlockHash, newBlockHash] and (prevOffset, newOffset] it consumed
 *    (ODF RFC-014), continuing the last ExecuteTransform of the chain;
 *  - a query whose plan has only scans, projections, filters and UNION ALL
 *    is stateless: it reads only the input records added since the last run
 *    and its result is appended (its `op` column passes through when it
 *    selects one); every other query sees each input's current state, runs
 *    in full, and the difference to the derivative's own current state is
 *    committed as -R (retracted rows) then +A (new rows), so
 *    `NAME:current` equals the query's result;
 *  - the slice goes through the same writer and hashing as ingestion
 *    (engine/writer.h), so `silt verify` checks it like any root slice;
 *  - the user's SQL runs on a confined engine: the views over the slice files
 *    are made first, then the engine is confined to its scratch directory;
 *  - nothing is visible until the one append of SetDataSchema (when the
 *    schema is new) + ExecuteTransform; a failed run leaves the dataset as
 *    it was (a written slice is removed or left unreferenced for `silt gc`).
 */
#include "silt.h"

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "engine/compat.h"
#include "engine/engine.h"
#include "engine/query.h"
#include "engine/schema.h"
#include "engine/writer.h"
#include "ops/transform.h"
#include "odf/schema_rules.h"
#include "util/error.h"
#include "util/multiformats.h"

#include <jansson.h>

/* The schema extra attribute that declares a derivative's primary key. */
#define SILT_PRIMARY_KEY_ATTR "silt.dev/primaryKey"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct txin {
    silt_dataset *ds;
    const char *alias;
    silt_vocab_names v;
    uint8_t did[SILT_DID_LEN];
    bool has_prev_block;
    uint8_t prev_block[SILT_MH_LEN];
    bool has_prev_off;
    uint64_t prev_off;
    bool moved;          /* the head is not prev_block */
    bool has_new_off;    /* new records: (prev_off, new_off] */
    uint64_t new_off;
    uint8_t head[SILT_MH_LEN];
} txin;

typedef struct tx {
    silt_dataset *ds;
    silt_arena *a;
    silt_engine *e;
    char *scratch;
    const odf_TransformSql *sql;
    silt_vocab_names v;
    txin *in;
    size_t n;
    bool stateless;
    bool result_has_op, result_has_et;
    char *fallback_et; /* SQL expression of the fallback event time */
    char *slice_tmp;
    uint64_t rows_read;
    /* the derivative before this run: its block (NULL: the head), whether
     * it has records, and the offset of the run's first new record */
    const uint8_t *self_upto;
    bool self_has_prev;
    uint64_t first;
    /* the primary key the derivative declares (silt.dev/primaryKey of its
     * schema's extra attributes), NULL-terminated; NULL when none */
    char **key;
    size_t nkey;
} tx;

/* ---- positions ------------------------------------------------------------ */

/* The newest ExecuteTransform of ds's chain, or NULL. */
static int last_execute(tx *t, const odf_ExecuteTransform **out)
{
    *out = NULL;
    if (t->ds->st.empty)
        return 0;
    uint8_t h[SILT_MH_LEN];
    memcpy(h, t->ds->st.head, SILT_MH_LEN);
    for (;;) {
        odf_MetadataBlock *b = NULL;
        int rc = silt_ds_load_block(t->ds, h, t->a, &b);
        if (rc)
            return rc;
        if (b->event.type == ODF_MetadataEvent_ExecuteTransform) {
            *out = b->event.value;
            return 0;
        }
        if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
            return 0;
        memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
}

/* Opens input i (its dataset, DID and vocabulary). */
static int open_input_ds(tx *t, size_t i, const odf_TransformInput *ti)
{
    txin *in = &t->in[i];
    in->alias = ti->alias;
    int rc = silt_did_from_text(ti->dataset_ref, in->did);
    if (rc < 0)
        return silt_err(SILT_ECORRUPT, "input '%s': datasetRef '%s' is not a dataset id (re-add the dataset)",
                        ti->alias, ti->dataset_ref);
    rc = silt_dataset_open(&in->ds, t->ds->ws, ti->dataset_ref);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "input '%s' (%s) no longer exists", ti->alias, ti->dataset_ref);
    if (rc < 0)
        return silt_err_context(rc, "input '%s'", ti->alias);
    return silt_ds_vocab(in->ds, t->a, &in->v);
}

/* Is the block the last run consumed of input `in` still on its chain? (A
 * walk back from the head over the blocks added since.) SILT_ECONFLICT when
 * the input's history was reset or rewritten. */
static int still_on_chain(tx *t, txin *in)
{
    const odf_chain_state *st = &in->ds->st;
    odf_MetadataBlock *pb = NULL;
    int rc = silt_ds_load_block(in->ds, in->prev_block, t->a, &pb);
    bool found = false;
    if (rc == 0 && !st->empty && pb->sequence_number <= st->seq) {
        uint8_t h[SILT_MH_LEN];
        memcpy(h, st->head, SILT_MH_LEN);
        for (uint64_t s = st->seq; rc == 0 && !found; s--) {
            found = memcmp(h, in->prev_block, SILT_MH_LEN) == 0;
            odf_MetadataBlock *b = NULL;
            if (found || s == pb->sequence_number || (rc = silt_ds_load_block(in->ds, h, t->a, &b)) != 0)
                break;
            if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
                break;
            memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
        }
    }
    if (rc == SILT_ENOMEM)
        return rc;
    silt_err_clear();
    if (found)
        return 0;
    char hash[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(in->prev_block, SILT_MH_LEN, hash);
    return silt_err(SILT_ECONFLICT, "input '%s': block %s, consumed by the last run, is no longer in its chain "
                                    "(its history was reset); reset this dataset to before that run",
                    in->alias, hash);
}

/* Opens input i and sets its positions from the last ExecuteTransform. */
static int open_input(tx *t, size_t i, const odf_TransformInput *ti, const odf_ExecuteTransform *last)
{
    txin *in = &t->in[i];
    int rc = open_input_ds(t, i, ti);
    if (rc)
        return rc;
    for (size_t k = 0; last && k < last->query_inputs.n; k++) {
        const odf_ExecuteTransformInput *q = last->query_inputs.items[k];
        if (!q || q->dataset_id.len != SILT_DID_LEN || memcmp(q->dataset_id.data, in->did, SILT_DID_LEN) != 0)
            continue;
        const odf_bytes *blk = q->new_block_hash.data ? &q->new_block_hash : &q->prev_block_hash;
        if (blk->data && blk->len == SILT_MH_LEN) {
            in->has_prev_block = true;
            memcpy(in->prev_block, blk->data, SILT_MH_LEN);
        }
        in->has_prev_off = q->has_new_offset || q->has_prev_offset;
        in->prev_off = q->has_new_offset ? q->new_offset : q->prev_offset;
    }
    const odf_chain_state *st = &in->ds->st;
    if (in->has_prev_block && (rc = still_on_chain(t, in)) != 0)
        return rc;
    memcpy(in->head, st->head, SILT_MH_LEN);
    in->moved = !st->empty && (!in->has_prev_block || memcmp(in->head, in->prev_block, SILT_MH_LEN) != 0);
    in->has_new_off = st->has_last_offset && (!in->has_prev_off || st->last_offset > in->prev_off);
    in->new_off = st->last_offset;
    return 0;
}

/* ---- views ------------------------------------------------------------------ */

static char *qid(tx *t, const char *name)
{
    char *q = silt_sql_ident(name);
    char *r = q ? silt_arena_strdup(t->a, q) : NULL;
    free(q);
    return r;
}

/* __silt_new_<i>: the input's records (prev_off, new_off] (empty when none);
 * __silt_all_<i>:current: its current state at its head. */
static int input_views(tx *t, size_t i)
{
    txin *in = &t->in[i];
    char nv[32], av[32];
    snprintf(nv, sizeof nv, "__silt_new_%zu", i);
    snprintf(av, sizeof av, "__silt_all_%zu", i);
    uint64_t nnew = in->has_new_off ? (in->has_prev_off ? in->new_off - in->prev_off : in->new_off + 1) : 1;
    silt_slice_list sl;
    memset(&sl, 0, sizeof sl);
    int rc = silt_ds_slices(in->ds, in->head, nnew, &sl);
    if (!rc && sl.n == 0)
        rc = silt_err(SILT_EINTERNAL, "input '%s' has no slices", in->alias);
    if (!rc) {
        uint64_t min = in->has_new_off ? (in->has_prev_off ? in->prev_off + 1 : 0) : in->new_off + 1;
        rc = silt_query_create_slice_view(t->e, nv, (const char *const *)sl.files, sl.n, &in->v, min);
    }
    silt_slice_list_free(&sl);
    if (!rc)
        rc = silt_ds_create_view(t->e, in->ds, av, in->head, true);
    return rc;
}

/* Points every input alias at its new records (stateless) or its current
 * state, then defines the steps of the query but the last. */
static int define(tx *t, bool stateless)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < t->n; i++) {
        char *al = qid(t, t->in[i].alias);
        if (!al)
            return SILT_ENOMEM;
        rc = stateless ? silt_engine_execf(t->e, "CREATE OR REPLACE TEMP VIEW %s AS SELECT * FROM __silt_new_%zu", al, i)
                       : silt_engine_execf(t->e, "CREATE OR REPLACE TEMP VIEW %s AS SELECT * FROM \"__silt_all_%zu:current\"",
                                           al, i);
    }
    const odf_vec *qs = &t->sql->queries;
    for (size_t k = 0; !rc && k + 1 < qs->n; k++) {
        const odf_SqlQueryStep *s = qs->items[k];
        char ctx[300];
        snprintf(ctx, sizeof ctx, "transform step '%s'", s->alias);
        rc = silt_engine_create_from_query(t->e, s->alias, false, s->query, ctx);
    }
    return rc;
}

static const char *final_query(const tx *t)
{
    const odf_SqlQueryStep *s = t->sql->queries.items[t->sql->queries.n - 1];
    return s->query;
}

/* ---- statelessness from the plan ------------------------------------------- */

/* Operators of a stateless plan: scans, per-record projection and filter,
 * UNION ALL (names as DuckDB prints them, trailing blanks ignored). */
static bool op_ok(const char *name)
{
    static const char *const ok[] = {"PROJECTION", "FILTER", "READ_PARQUET", "PARQUET_SCAN", "TABLE_SCAN",
                                     "SEQ_SCAN", "UNION", "DUMMY_SCAN", "COLUMN_DATA_SCAN", "EMPTY_RESULT", NULL};
    size_t len = strlen(name);
    while (len > 0 && name[len - 1] == ' ')
        len--;
    for (size_t i = 0; ok[i]; i++)
        if (strlen(ok[i]) == len && strncmp(name, ok[i], len) == 0)
            return true;
    return false;
}

static bool plan_stateless(json_t *node)
{
    if (json_is_array(node)) {
        size_t i;
        json_t *v;
        json_array_foreach(node, i, v) if (!plan_stateless(v)) return false;
        return true;
    }
    if (!json_is_object(node))
        return true;
    const char *name = json_string_value(json_object_get(node, "name"));
    if (name && !op_ok(name))
        return false;
    return plan_stateless(json_object_get(node, "children"));
}

typedef struct explain_ctx {
    bool any, stateless;
} explain_ctx;

static int explain_row(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    (void)names;
    explain_ctx *x = ctx;
    if (ncols < 2 || !vals[1])
        return 0;
    json_t *j = json_loads(vals[1], 0, NULL);
    if (!j)
        return silt_err(SILT_EINTERNAL, "transform: cannot read the query plan");
    x->any = true;
    x->stateless = x->stateless && plan_stateless(j);
    json_decref(j);
    return 0;
}

/* Is the final query (over the new-records views) stateless? From DuckDB's
 * physical plan: every operator a scan, projection, filter or UNION ALL (a
 * UNION without ALL plans as an aggregate over the union). */
static int detect_stateless(tx *t, bool *out)
{
    const char *q = final_query(t);
    int rc = silt_engine_check_query(t->e, q, "transform query");
    if (rc)
        return rc;
    char *sql = silt_arena_printf(t->a, "EXPLAIN (FORMAT json) %s", q);
    if (!sql)
        return SILT_ENOMEM;
    explain_ctx x = {false, true};
    rc = silt_engine_query_rows(t->e, sql, explain_row, &x);
    if (rc)
        return rc;
    *out = x.any && x.stateless;
    return 0;
}

/* ---- the output changelog ------------------------------------------------- */

typedef struct cols {
    char **names;
    size_t n, cap;
    silt_arena *a;
} cols;

static int col_row(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    (void)names;
    cols *c = ctx;
    if (ncols < 1 || !vals[0])
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        char **nn = silt_arena_alloc(c->a, cap * sizeof *nn);
        if (!nn)
            return SILT_ENOMEM;
        if (c->n)
            memcpy(nn, c->names, c->n * sizeof *nn);
        c->names = nn;
        c->cap = cap;
    }
    if (!(c->names[c->n++] = silt_arena_strdup(c->a, vals[0])))
        return SILT_ENOMEM;
    return 0;
}

/* The result's columns that are data (not offset/op/system_time; event
 * time separately), quoted and joined with `sep` and `prefix.`. */
static char *join_cols(tx *t, const cols *c, const char *prefix, bool with_et)
{
    char *s = silt_arena_strdup(t->a, "");
    for (size_t i = 0; s && i < c->n; i++) {
        const char *n = c->names[i];
        if (strcmp(n, t->v.offset) == 0 || strcmp(n, t->v.op) == 0 || strcmp(n, t->v.system_time) == 0)
            continue;
        if (!with_et && strcmp(n, t->v.event_time) == 0)
            continue;
        char *q = qid(t, n);
        s = q ? silt_arena_printf(t->a, "%s%s%s%s%s", s, *s ? ", " : "", prefix ? prefix : "", prefix ? "." : "", q)
              : NULL;
    }
    return s;
}

/* NULL-safe equality of every key column of r and c, plus rn. */
static char *same_row(tx *t, const cols *c);
static char *join_cond(tx *t, const cols *c)
{
    char *same = same_row(t, c);
    return same ? silt_arena_printf(t->a, "r.__rn = c.__rn AND %s", same) : NULL;
}

static int result_columns(tx *t, cols *c, const char *table)
{
    memset(c, 0, sizeof *c);
    c->a = t->a;
    char *sql = silt_arena_printf(t->a, "SELECT column_name FROM (DESCRIBE %s)", table);
    int rc = sql ? silt_engine_query_rows(t->e, sql, col_row, c) : SILT_ENOMEM;
    for (size_t i = 0; !rc && i < c->n; i++) {
        t->result_has_op = t->result_has_op || strcmp(c->names[i], t->v.op) == 0;
        t->result_has_et = t->result_has_et || strcmp(c->names[i], t->v.event_time) == 0;
    }
    return rc;
}

/* Quoted SQL fragments of the output columns. */
typedef struct frags {
    char *op, *et, *off;  /* the derivative's system column names */
    char *data, *keys;    /* data columns; keys = data (+ event time when the result has it) */
    char *rdata, *cdata;  /* data columns as r.x / c.x */
    char *cond;           /* r and c hold the same row (key columns and multiplicity) */
    char *et_r;           /* the event time of a result row */
} frags;

static int make_frags(tx *t, const cols *c, frags *f)
{
    f->op = qid(t, t->v.op);
    f->et = qid(t, t->v.event_time);
    f->off = qid(t, t->v.offset);
    f->data = join_cols(t, c, NULL, false);
    f->keys = join_cols(t, c, NULL, t->result_has_et);
    f->rdata = join_cols(t, c, "r", false);
    f->cdata = join_cols(t, c, "c", false);
    f->cond = join_cond(t, c);
    f->et_r = f->et && t->result_has_et ? silt_arena_printf(t->a, "r.%s", f->et) : t->fallback_et;
    if (!f->op || !f->et || !f->off || !f->data || !f->keys || !f->rdata || !f->cdata || !f->cond || !f->et_r)
        return SILT_ENOMEM;
    if (!*f->data)
        return silt_err(SILT_EINVAL, "transform query: the result has no data columns");
    return 0;
}

/* Stateless: the result appended as it is (its op passed through, if any). */
static int output_append(tx *t, const frags *f)
{
    char *opx = t->result_has_op ? silt_arena_printf(t->a, "CAST(r.%s AS UTINYINT)", f->op)
                                 : silt_arena_strdup(t->a, "CAST(0 AS UTINYINT)");
    return opx ? silt_engine_execf(t->e, "CREATE OR REPLACE TEMP TABLE __silt_out AS SELECT %s AS %s, %s AS %s, %s "
                                         "FROM __silt_result r",
                                   opx, f->op, f->et_r, f->et, f->rdata)
               : SILT_ENOMEM;
}

/* Full recompute without a declared key: -R for every previous row (a
 * multiset of its columns) not in the result, in offset order, then +A for
 * every result row not in the previous state, ordered by its columns. */
static int output_changelog(tx *t, const frags *f, bool has_prev)
{
    int rc = silt_engine_execf(t->e,
                               "CREATE OR REPLACE TEMP TABLE __silt_r AS SELECT *, row_number() OVER (PARTITION BY %s) "
                               "AS __rn FROM (SELECT %s FROM __silt_result)",
                               f->keys, f->keys);
    if (!rc)
        rc = silt_engine_execf(t->e,
                               "CREATE OR REPLACE TEMP TABLE __silt_out AS SELECT CAST(0 AS UTINYINT) AS %s, %s AS %s, %s "
                               "FROM __silt_r r LIMIT 0",
                               f->op, f->et_r, f->et, f->rdata);
    if (!rc && has_prev) {
        rc = silt_engine_execf(t->e,
                               "CREATE OR REPLACE TEMP TABLE __silt_c AS SELECT *, row_number() OVER (PARTITION BY %s "
                               "ORDER BY %s) AS __rn FROM \"__silt_self:current\"",
                               f->keys, f->off);
        if (!rc)
            rc = silt_engine_execf(t->e,
                                   "INSERT INTO __silt_out BY NAME SELECT CAST(1 AS UTINYINT) AS %s, c.%s AS %s, %s "
                                   "FROM __silt_c c WHERE NOT EXISTS (SELECT 1 FROM __silt_r r WHERE %s) ORDER BY c.%s",
                                   f->op, f->et, f->et, f->cdata, f->cond, f->off);
    }
    const char *where = has_prev ? silt_arena_printf(t->a, " WHERE NOT EXISTS (SELECT 1 FROM __silt_c c WHERE %s)", f->cond)
                           : "";
    if (!rc && !where)
        rc = SILT_ENOMEM;
    if (!rc)
        rc = silt_engine_execf(t->e,
                               "INSERT INTO __silt_out BY NAME SELECT CAST(0 AS UTINYINT) AS %s, %s AS %s, %s "
                               "FROM __silt_r r%s ORDER BY %s",
                               f->op, f->et_r, f->et, f->rdata, where, f->keys);
    return rc;
}

/* ---- the changelog by a declared key -------------------------------------------- */

/* The key columns, quoted, each after `prefix`, joined with ", ". */
static char *key_list(tx *t, const char *prefix)
{
    char *s = silt_arena_strdup(t->a, "");
    for (size_t k = 0; s && k < t->nkey; k++) {
        char *q = qid(t, t->key[k]);
        s = q ? silt_arena_printf(t->a, "%s%s%s%s", s, k ? ", " : "", prefix, q) : NULL;
    }
    return s;
}

/* "r.k IS NOT DISTINCT FROM c.k AND …" over the key columns. */
static char *key_cond(tx *t)
{
    char *s = silt_arena_strdup(t->a, "");
    for (size_t i = 0; s && i < t->nkey; i++) {
        char *q = qid(t, t->key[i]);
        s = q ? silt_arena_printf(t->a, "%s%sr.%s IS NOT DISTINCT FROM c.%s", s, i ? " AND " : "", q, q) : NULL;
    }
    return s;
}

/* "r.x IS NOT DISTINCT FROM c.x AND …" over every data column (and the event
 * time when the result has one): the row did not change. */
static char *same_row(tx *t, const cols *c)
{
    char *s = silt_arena_strdup(t->a, "true");
    for (size_t i = 0; s && i < c->n; i++) {
        const char *n = c->names[i];
        if (strcmp(n, t->v.offset) == 0 || strcmp(n, t->v.op) == 0 || strcmp(n, t->v.system_time) == 0)
            continue;
        if (strcmp(n, t->v.event_time) == 0 && !t->result_has_et)
            continue;
        char *q = qid(t, n);
        s = q ? silt_arena_printf(t->a, "%s AND r.%s IS NOT DISTINCT FROM c.%s", s, q, q) : NULL;
    }
    return s;
}

/* The key columns are data columns of the result, and no key value holds
 * two rows of it. */
static int check_key(tx *t, const cols *c)
{
    for (size_t k = 0; k < t->nkey; k++) {
        bool found = false;
        for (size_t i = 0; !found && i < c->n; i++)
            found = strcmp(c->names[i], t->key[k]) == 0 && strcmp(t->key[k], t->v.event_time) != 0 &&
                    strcmp(t->key[k], t->v.offset) != 0 && strcmp(t->key[k], t->v.op) != 0 &&
                    strcmp(t->key[k], t->v.system_time) != 0;
        if (!found)
            return silt_err(SILT_EVALIDATION, "primary key column '%s' is not a data column of the result", t->key[k]);
    }
    char *kl = key_list(t, "");
    char *sql = kl ? silt_arena_printf(t->a, "SELECT count(*) FROM (SELECT 1 FROM __silt_result GROUP BY %s "
                                             "HAVING count(*) > 1)", kl)
                   : NULL;
    uint64_t dups = 0;
    int rc = sql ? silt_engine_query_u64(t->e, &dups, sql) : SILT_ENOMEM;
    char *names = silt_arena_strdup(t->a, "");
    for (size_t k = 0; names && k < t->nkey; k++)
        names = silt_arena_printf(t->a, "%s%s%s", names, k ? ", " : "", t->key[k]);
    if (!rc && dups)
        rc = silt_err(SILT_EVALIDATION, "the result has %llu primary key value%s with more than one row (key: %s)",
                      (unsigned long long)dups, dups == 1 ? "" : "s", names ? names : "?");
    return rc;
}

/* Full recompute with a declared key: -R for every previous row whose key
 * is gone (offset order), a -C/+C pair for every key whose row changed
 * (the old row's offset order), +A for every new key (key order). */
static int output_by_key(tx *t, const cols *c, const frags *f, bool has_prev)
{
    int rc = check_key(t, c);
    char *kc = key_cond(t), *same = same_row(t, c), *order = key_list(t, "r.");
    if (!rc && (!kc || !same || !order))
        rc = SILT_ENOMEM;
    if (!rc)
        rc = silt_engine_execf(t->e,
                               "CREATE OR REPLACE TEMP TABLE __silt_out AS SELECT CAST(0 AS UTINYINT) AS %s, %s AS %s, %s "
                               "FROM __silt_result r LIMIT 0",
                               f->op, f->et_r, f->et, f->rdata);
    if (!rc && has_prev)
        rc = silt_engine_execf(t->e,
                               "INSERT INTO __silt_out BY NAME SELECT CAST(1 AS UTINYINT) AS %s, c.%s AS %s, %s "
                               "FROM \"__silt_self:current\" c WHERE NOT EXISTS (SELECT 1 FROM __silt_result r WHERE %s) "
                               "ORDER BY c.%s",
                               f->op, f->et, f->et, f->cdata, kc, f->off);
    if (!rc && has_prev)
        rc = silt_engine_execf(t->e,
                               "INSERT INTO __silt_out BY NAME SELECT * EXCLUDE (__o) FROM ("
                               "SELECT c.%s AS __o, CAST(2 AS UTINYINT) AS %s, c.%s AS %s, %s "
                               "FROM \"__silt_self:current\" c JOIN __silt_result r ON %s WHERE NOT (%s) "
                               "UNION ALL SELECT c.%s AS __o, CAST(3 AS UTINYINT) AS %s, %s AS %s, %s "
                               "FROM \"__silt_self:current\" c JOIN __silt_result r ON %s WHERE NOT (%s)) "
                               "ORDER BY __o, %s",
                               f->off, f->op, f->et, f->et, f->cdata, kc, same, f->off, f->op, f->et_r, f->et, f->rdata,
                               kc, same, f->op);
    const char *where = has_prev ? silt_arena_printf(t->a, " WHERE NOT EXISTS (SELECT 1 FROM \"__silt_self:current\" c "
                                                           "WHERE %s)", kc)
                                 : "";
    if (!rc && !where)
        rc = SILT_ENOMEM;
    if (!rc)
        rc = silt_engine_execf(t->e,
                               "INSERT INTO __silt_out BY NAME SELECT CAST(0 AS UTINYINT) AS %s, %s AS %s, %s "
                               "FROM __silt_result r%s ORDER BY %s",
                               f->op, f->et_r, f->et, f->rdata, where, order);
    return rc;
}

/* __silt_out (op, event time, data columns) from __silt_result. */
static int build_output(tx *t, bool has_prev)
{
    cols c;
    frags f;
    int rc = result_columns(t, &c, "__silt_result");
    if (!rc)
        rc = make_frags(t, &c, &f);
    if (rc)
        return rc;
    if (t->stateless)
        return output_append(t, &f);
    return t->nkey ? output_by_key(t, &c, &f, has_prev) : output_changelog(t, &f, has_prev);
}

/* ---- event time and watermark --------------------------------------------- */

/* The max event time of the inputs' new records as a SQL expression (the
 * system time `now` when there are none). */
static int fallback_event_time(tx *t, silt_time now)
{
    char *sel = silt_arena_strdup(t->a, "");
    for (size_t i = 0; sel && i < t->n; i++) {
        char *et = qid(t, t->in[i].v.event_time);
        sel = et ? silt_arena_printf(t->a, "%s%sSELECT max(CAST(%s AS TIMESTAMP)) AS m FROM __silt_new_%zu", sel,
                                     *sel ? " UNION ALL " : "", et, i)
                 : NULL;
    }
    char *q = sel ? silt_arena_printf(t->a, "SELECT CAST(max(m) AS VARCHAR) FROM (%s)", sel) : NULL;
    if (!q)
        return SILT_ENOMEM;
    char *v = NULL;
    int rc = silt_engine_query_text(t->e, &v, q);
    if (rc)
        return rc;
    if (v) {
        char *s = silt_sql_str(v);
        t->fallback_et = s ? silt_arena_printf(t->a, "CAST(%s AS TIMESTAMP)", s) : NULL;
        free(s);
    } else {
        char txt[48];
        silt_time_format((silt_time){now.sec, now.nsec / 1000000 * 1000000}, txt);
        t->fallback_et = silt_arena_printf(t->a, "CAST(TIMESTAMPTZ '%s' AS TIMESTAMP)", txt);
    }
    free(v);
    return t->fallback_et ? 0 : SILT_ENOMEM;
}

/* One system time for records and block: now, not before the last block,
 * rounded up to milliseconds (as an ingest does). */
static silt_time run_time(const silt_dataset *ds)
{
    silt_time now = silt_time_now();
    silt_time last = {ds->st.last_system_time.sec, ds->st.last_system_time.nsec};
    if (!ds->st.empty && silt_time_cmp(now, last) < 0)
        now = last;
    if (now.nsec % 1000000) {
        now.nsec = (now.nsec / 1000000 + 1) * 1000000;
        if (now.nsec >= 1000000000) {
            now.sec++;
            now.nsec = 0;
        }
    }
    return now;
}

/* newWatermark: the minimum of the inputs' watermarks when all have one
 * (never below the previous one), else the previous one. */
static void watermark(const tx *t, odf_ExecuteTransform *et)
{
    const odf_chain_state *st = &t->ds->st;
    bool all = t->n > 0;
    odf_time m = {0, 0};
    for (size_t i = 0; i < t->n; i++) {
        const odf_chain_state *s = &t->in[i].ds->st;
        if (!s->has_watermark) {
            all = false;
            break;
        }
        if (i == 0 || s->watermark.sec < m.sec || (s->watermark.sec == m.sec && s->watermark.nsec < m.nsec))
            m = s->watermark;
    }
    if (st->has_watermark && (!all || m.sec < st->watermark.sec ||
                              (m.sec == st->watermark.sec && m.nsec < st->watermark.nsec))) {
        m = st->watermark;
        all = true;
    }
    et->has_new_watermark = all;
    et->new_watermark = m;
}

/* ---- the block ---------------------------------------------------------------- */

static int query_inputs(tx *t, odf_ExecuteTransform *et)
{
    void **items = silt_arena_alloc(t->a, (t->n + 1) * sizeof *items);
    if (!items)
        return SILT_ENOMEM;
    for (size_t i = 0; i < t->n; i++) {
        txin *in = &t->in[i];
        odf_ExecuteTransformInput *q = silt_arena_alloc(t->a, sizeof *q);
        uint8_t *did = silt_arena_memdup(t->a, in->did, SILT_DID_LEN);
        uint8_t *pb = silt_arena_memdup(t->a, in->prev_block, SILT_MH_LEN);
        uint8_t *nb = silt_arena_memdup(t->a, in->head, SILT_MH_LEN);
        if (!q || !did || !pb || !nb)
            return SILT_ENOMEM;
        memset(q, 0, sizeof *q);
        q->dataset_id = (odf_bytes){did, SILT_DID_LEN};
        if (in->has_prev_block)
            q->prev_block_hash = (odf_bytes){pb, SILT_MH_LEN};
        if (in->moved)
            q->new_block_hash = (odf_bytes){nb, SILT_MH_LEN};
        q->has_prev_offset = in->has_prev_off;
        q->prev_offset = in->prev_off;
        q->has_new_offset = in->has_new_off;
        q->new_offset = in->new_off;
        items[i] = q;
    }
    et->query_inputs = (odf_vec){items, t->n, true};
    return 0;
}

/* Writes the slice of __silt_out (nrows > 0) into the scratch directory. */
static int write_out(tx *t, silt_time now, uint64_t nrows, silt_slice_info *si)
{
    t->slice_tmp = silt_arena_printf(t->a, "%s/data-1.parquet", t->scratch);
    if (!t->slice_tmp)
        return SILT_ENOMEM;
    silt_slice_spec ss = {"__silt_out", t->v.offset, t->v.op, t->v.system_time, t->v.event_time, t->first, now,
                          t->slice_tmp, false, NULL, 0, NULL};
    int rc = silt_write_slice(t->e, &ss, si);
    if (rc)
        return rc;
    if (si->num_rows != nrows)
        return silt_err(SILT_EINTERNAL, "slice has %llu rows, expected %llu", (unsigned long long)si->num_rows,
                        (unsigned long long)nrows);
    return 0;
}

/* Writes the slice of __silt_out (nrows > 0) and fills newData and, when the
 * schema is new, *sds. */
static int write_slice(tx *t, silt_time now, uint64_t nrows, odf_ExecuteTransform *et, odf_SetDataSchema **sds)
{
    silt_dataset *ds = t->ds;
    silt_slice_info si;
    int rc = write_out(t, now, nrows, &si);
    if (rc)
        return rc;
    const char *required[] = {t->v.offset, t->v.op, t->v.system_time, NULL};
    odf_DataSchema *schema = NULL, *cur = NULL;
    rc = silt_schema_from_table(t->e, t->a, SILT_SLICE_VIEW, required, &schema);
    if (!rc)
        rc = silt_ds_schema(ds, t->a, &cur);
    if (rc)
        return rc;
    char msg[700];
    bool decl = cur && !cur->fields.n; /* a schema without fields only declares attributes (a key) */
    if (cur && !decl && odf_schema_check_evolution(cur, schema, msg, sizeof msg))
        return silt_err(SILT_EVALIDATION, "the result does not fit the dataset's schema: %s", msg);
    if (cur)
        schema->extra = cur->extra; /* the derivative's schema attributes carry over */
    if (!cur || decl || !odf_table_equal(&odf_desc_DataSchema, cur, schema)) {
        *sds = silt_arena_alloc(t->a, sizeof **sds);
        if (!*sds)
            return SILT_ENOMEM;
        (*sds)->schema = schema;
    }
    return silt_ds_adopt_slice(ds, t->a, t->slice_tmp, &si, t->first, &et->new_data);
}

static int confine(tx *t)
{
    const char *dirs[] = {t->scratch};
    silt_confine_opts c = {
        .dirs = dirs,
        .n_dirs = 1,
        .hint_write = "a transform query is one SELECT over its inputs",
        .hint_other = "a transform query is one SELECT over its inputs",
        .hint_files = "a transform query reads only its inputs",
    };
    return silt_engine_confine(t->e, &c);
}

static int count_rows(tx *t, const char *view, const char *where, uint64_t *out)
{
    char *q = qid(t, view);
    char *sql = q ? silt_arena_printf(t->a, "SELECT count(*) FROM %s%s", q, where ? where : "") : NULL;
    return sql ? silt_engine_query_u64(t->e, out, sql) : SILT_ENOMEM;
}

/* The newest SetDataSchema at or before t->self_upto (the head when NULL),
 * or NULL. */
static int schema_at(tx *t, const odf_DataSchema **out)
{
    *out = NULL;
    if (t->ds->st.empty)
        return 0;
    uint8_t h[SILT_MH_LEN];
    memcpy(h, t->self_upto ? t->self_upto : t->ds->st.head, SILT_MH_LEN);
    for (;;) {
        odf_MetadataBlock *b = NULL;
        int rc = silt_ds_load_block(t->ds, h, t->a, &b);
        if (rc)
            return rc;
        if (b->event.type == ODF_MetadataEvent_SetDataSchema) {
            const odf_SetDataSchema *sd = b->event.value;
            *out = sd->schema;
            return 0;
        }
        if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
            return 0;
        memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
}

/* t->key: the "silt.dev/primaryKey" list of the schema's extra attributes
 * (docs/transforms.md, "Changelog by key"). */
static int declared_key(tx *t)
{
    const odf_DataSchema *sc = NULL;
    int rc = schema_at(t, &sc);
    if (rc || !sc || !sc->extra || !sc->extra->entries)
        return rc;
    json_t *j = json_loads(sc->extra->entries, 0, NULL);
    json_t *k = json_object_get(j, SILT_PRIMARY_KEY_ATTR);
    size_t n = json_array_size(k);
    if (k && (!json_is_array(k) || n == 0))
        rc = silt_err(SILT_EVALIDATION, "%s must be a non-empty list of column names", SILT_PRIMARY_KEY_ATTR);
    t->key = rc || !n ? NULL : silt_arena_alloc(t->a, (n + 1) * sizeof *t->key);
    if (!rc && n && !t->key)
        rc = SILT_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const char *name = json_string_value(json_array_get(k, i));
        if (!name || !*name)
            rc = silt_err(SILT_EVALIDATION, "%s must be a non-empty list of column names", SILT_PRIMARY_KEY_ATTR);
        else if (!(t->key[i] = silt_arena_strdup(t->a, name)))
            rc = SILT_ENOMEM;
    }
    if (!rc)
        t->nkey = n;
    json_decref(j);
    return rc;
}

/* Views, mode, query, output changelog: leaves __silt_out with *nrows. */
static int compute(tx *t, silt_time now, uint64_t *nrows)
{
    int rc = 0;
    bool retractions = false;
    for (size_t i = 0; !rc && i < t->n; i++) {
        rc = input_views(t, i);
        char nv[32];
        snprintf(nv, sizeof nv, "__silt_new_%zu", i);
        char *where = rc ? NULL : silt_arena_printf(t->a, " WHERE %s <> 0", qid(t, t->in[i].v.op));
        uint64_t k = 0;
        if (!rc)
            rc = where ? count_rows(t, nv, where, &k) : SILT_ENOMEM;
        retractions = retractions || k > 0;
    }
    bool has_prev = t->self_has_prev;
    if (!rc && has_prev)
        rc = silt_ds_create_view(t->e, t->ds, "__silt_self", t->self_upto, true);
    if (!rc)
        rc = fallback_event_time(t, now);
    if (!rc)
        rc = confine(t);
    if (!rc)
        rc = define(t, true);
    bool stateless = false;
    if (!rc)
        rc = declared_key(t);
    if (!rc)
        rc = detect_stateless(t, &stateless);
    stateless = stateless && !t->nkey; /* a keyed state is recomputed, never appended to */
    if (!rc && stateless && retractions) {
        /* a changelog input: the op column must pass through, else recompute */
        rc = silt_engine_create_from_query(t->e, "__silt_probe", false, final_query(t), "transform query");
        cols c;
        if (!rc)
            rc = result_columns(t, &c, "__silt_probe");
        stateless = t->result_has_op;
        t->result_has_op = t->result_has_et = false;
    }
    if (!rc && !stateless)
        rc = define(t, false);
    t->stateless = stateless;
    if (!rc)
        rc = silt_engine_create_from_query(t->e, "__silt_result", true, final_query(t), "transform query");
    for (size_t i = 0; !rc && i < t->n; i++) {
        uint64_t k = 0;
        char *al = silt_arena_strdup(t->a, t->in[i].alias);
        rc = al ? count_rows(t, al, NULL, &k) : SILT_ENOMEM;
        t->rows_read += k;
    }
    if (!rc)
        rc = build_output(t, has_prev);
    if (!rc)
        rc = silt_engine_query_u64(t->e, nrows, "SELECT count(*) FROM __silt_out");
    return rc;
}

/* The run's engine, with another engine's SQL rewritten for DuckDB and the
 * compatibility functions registered (engine/compat.h): the same for a pull
 * and for a replay, so a replay runs exactly what the pull ran. */
static int open_engine(tx *t)
{
    int rc = silt_ws_engine_open(t->ds->ws, &t->e, &t->scratch);
    if (!rc)
        rc = silt_compat_prepare(t->e, t->a, t->sql, &t->sql, "transform query");
    return rc;
}

static int run(tx *t, silt_pull_result *out)
{
    silt_dataset *ds = t->ds;
    const odf_SetTransform *st = NULL;
    int rc = silt_ds_load_transform(ds, t->a, &st);
    if (rc)
        return rc;
    if (!st)
        return silt_err(SILT_EINVAL, "the derivative has no SetTransform");
    if (st->transform.type != ODF_Transform_Sql || !st->transform.value)
        return silt_err(SILT_EUNSUPPORTED, "only Sql transforms can run");
    t->sql = st->transform.value;
    if (!t->sql->queries.n)
        return silt_err(SILT_ECORRUPT, "the SetTransform has no queries (re-add the dataset)");
    const odf_ExecuteTransform *last = NULL;
    rc = last_execute(t, &last);
    if (rc)
        return rc;
    t->n = st->inputs.n;
    t->in = silt_arena_alloc(t->a, (t->n + 1) * sizeof *t->in);
    if (!t->in)
        return SILT_ENOMEM;
    memset(t->in, 0, (t->n + 1) * sizeof *t->in);
    bool moved = false, all_data = true;
    for (size_t i = 0; !rc && i < t->n; i++) {
        rc = open_input(t, i, st->inputs.items[i], last);
        moved = moved || (!rc && t->in[i].moved);
        all_data = all_data && (!rc && t->in[i].ds->st.has_last_offset);
    }
    if (rc)
        return rc;
    if (!moved || !all_data) {
        out->up_to_date = true; /* nothing new, or an input has no data yet */
        return 0;
    }
    rc = silt_ds_vocab(ds, t->a, &t->v);
    if (!rc)
        rc = open_engine(t);
    if (rc)
        return rc;
    silt_time now = run_time(ds);
    t->self_has_prev = ds->st.has_last_offset;
    t->first = ds->st.has_last_offset ? ds->st.last_offset + 1 : 0;
    uint64_t nrows = 0;
    rc = compute(t, now, &nrows);
    if (rc)
        return rc;
    odf_ExecuteTransform *et = silt_arena_alloc(t->a, sizeof *et);
    if (!et)
        return SILT_ENOMEM;
    memset(et, 0, sizeof *et);
    et->has_prev_offset = ds->st.has_last_offset;
    et->prev_offset = ds->st.last_offset;
    rc = query_inputs(t, et);
    odf_SetDataSchema *sds = NULL;
    if (!rc && nrows > 0)
        rc = write_slice(t, now, nrows, et, &sds);
    if (rc)
        return rc;
    watermark(t, et);
    odf_union events[2];
    size_t nev = 0;
    if (sds)
        events[nev++] = (odf_union){ODF_MetadataEvent_SetDataSchema, sds};
    events[nev++] = (odf_union){ODF_MetadataEvent_ExecuteTransform, et};
    rc = silt_ds_append_events_at(ds, events, nev, NULL, &now);
    if (rc)
        return rc;
    out->num_ingests = 1;
    out->num_records = nrows;
    if (et->new_data) {
        out->has_offsets = true;
        out->first_offset = et->new_data->offset_interval->start;
        out->last_offset = et->new_data->offset_interval->end;
    }
    out->rows_read = t->rows_read;
    out->incremental = t->stateless;
    return 0;
}

/* Frees what a run holds (the slice left in scratch, the engine, the
 * inputs, the arena); returns rc. */
static int tx_end(tx *t, int rc)
{
    if (t->slice_tmp)
        unlink(t->slice_tmp);
    if (t->e)
        rc = silt_ws_engine_close(t->e, t->scratch, rc);
    for (size_t i = 0; t->in && i < t->n; i++)
        silt_dataset_free(t->in[i].ds);
    silt_arena_free(t->a);
    return rc;
}

int silt_dataset_derive(silt_pull_result *out, silt_dataset *ds)
{
    memset(out, 0, sizeof *out);
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    if (ds->st.dataset_kind != ODF_DatasetKind_Derivative)
        return silt_err(SILT_EINVAL, "pull '%s': not a derivative dataset", ds->name);
    tx t;
    memset(&t, 0, sizeof t);
    t.ds = ds;
    t.a = silt_arena_new();
    if (!t.a)
        return silt_err(SILT_ENOMEM, "pull '%s': out of memory", ds->name);
    rc = tx_end(&t, run(&t, out));
    if (rc < 0)
        return silt_err_context(rc, "pull '%s'", ds->name);
    snprintf(out->head, sizeof out->head, "%s", ds->head);
    if (ds->st.has_watermark) {
        out->has_watermark = true;
        silt_time_format((silt_time){ds->st.watermark.sec, ds->st.watermark.nsec}, out->watermark);
    }
    return 0;
}

int silt_dataset_inputs(char ***names_out, silt_dataset *ds)
{
    *names_out = NULL;
    int rc = silt_ds_sync(ds);
    silt_arena *a = rc ? NULL : silt_arena_new();
    if (!rc && !a)
        rc = SILT_ENOMEM;
    const odf_SetTransform *t = NULL;
    if (!rc)
        rc = silt_ds_load_transform(ds, a, &t);
    size_t n = t ? t->inputs.n : 0;
    char **names = rc ? NULL : calloc(n + 1, sizeof *names);
    if (!rc && !names)
        rc = SILT_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        const odf_TransformInput *in = t->inputs.items[i];
        silt_dataset *d = NULL;
        rc = silt_dataset_open(&d, ds->ws, in->dataset_ref);
        if (rc == SILT_ENOTFOUND)
            rc = silt_err(SILT_ENOTFOUND, "dataset '%s': input '%s' (%s) no longer exists", ds->name, in->alias,
                          in->dataset_ref);
        if (!rc && !(names[i] = strdup(d->name)))
            rc = SILT_ENOMEM;
        silt_dataset_free(d);
    }
    silt_arena_free(a);
    if (rc < 0) {
        silt_strv_free(names);
        return rc == SILT_ENOMEM ? silt_err(rc, "out of memory") : rc;
    }
    *names_out = names;
    return 0;
}

/* ---- replay (silt verify) ------------------------------------------------------ */

/* Input i's positions as the ExecuteTransform recorded them (its entry of
 * queryInputs, found by DID). */
static int positions_from_record(tx *t, size_t i, const odf_ExecuteTransform *et)
{
    txin *in = &t->in[i];
    const odf_ExecuteTransformInput *q = NULL;
    for (size_t k = 0; !q && k < et->query_inputs.n; k++) {
        const odf_ExecuteTransformInput *c = et->query_inputs.items[k];
        if (c && c->dataset_id.len == SILT_DID_LEN && memcmp(c->dataset_id.data, in->did, SILT_DID_LEN) == 0)
            q = c;
    }
    if (!q)
        return silt_err(SILT_EVALIDATION, "queryInputs has no entry for input '%s'", in->alias);
    const odf_bytes *nb = &q->new_block_hash, *pb = &q->prev_block_hash;
    const odf_bytes *h = nb->data ? nb : pb;
    if (!h->data || h->len != SILT_MH_LEN || (pb->data && pb->len != SILT_MH_LEN))
        return silt_err(SILT_EVALIDATION, "queryInputs of input '%s' name no block", in->alias);
    in->has_prev_block = pb->data != NULL;
    if (pb->data)
        memcpy(in->prev_block, pb->data, SILT_MH_LEN);
    memcpy(in->head, h->data, SILT_MH_LEN);
    in->moved = nb->data != NULL;
    in->has_prev_off = q->has_prev_offset;
    in->prev_off = q->prev_offset;
    in->has_new_off = q->has_new_offset;
    in->new_off = q->has_new_offset ? q->new_offset : q->prev_offset;
    if (!in->has_prev_off && !in->has_new_off)
        return silt_err(SILT_EVALIDATION, "queryInputs of input '%s' name no records", in->alias);
    return 0;
}

static int replay(tx *t, const odf_SetTransform *st, const odf_MetadataBlock *b, silt_replay_result *out)
{
    const odf_ExecuteTransform *et = b->event.value;
    if (st->transform.type != ODF_Transform_Sql || !st->transform.value)
        return silt_err(SILT_EUNSUPPORTED, "only Sql transforms can be replayed");
    t->sql = st->transform.value;
    if (!t->sql->queries.n)
        return silt_err(SILT_EVALIDATION, "the SetTransform has no queries");
    t->n = st->inputs.n;
    t->in = silt_arena_alloc(t->a, (t->n + 1) * sizeof *t->in);
    if (!t->in)
        return SILT_ENOMEM;
    memset(t->in, 0, (t->n + 1) * sizeof *t->in);
    int rc = 0;
    for (size_t i = 0; !rc && i < t->n; i++) {
        rc = open_input_ds(t, i, st->inputs.items[i]);
        if (rc == SILT_ENOTFOUND) { /* not in this workspace (an imported dataset): cannot replay */
            silt_err_clear();
            out->skipped = true;
            return 0;
        }
        if (!rc)
            rc = positions_from_record(t, i, et);
    }
    if (!rc)
        rc = silt_ds_vocab(t->ds, t->a, &t->v);
    if (!rc)
        rc = open_engine(t);
    if (rc)
        return rc;
    silt_time now = {b->system_time.sec, b->system_time.nsec};
    t->self_has_prev = et->has_prev_offset;
    t->first = et->has_prev_offset ? et->prev_offset + 1 : 0;
    rc = compute(t, now, &out->num_records);
    silt_slice_info si;
    if (!rc && out->num_records > 0)
        rc = write_out(t, now, out->num_records, &si);
    if (!rc && out->num_records > 0)
        memcpy(out->logical_hash, si.logical_hash, SILT_LOGICAL_HASH_LEN);
    out->incremental = t->stateless;
    return rc;
}

int silt_transform_replay(silt_dataset *ds, const odf_SetTransform *st, const odf_MetadataBlock *b,
                          const uint8_t prev_hash[SILT_MH_LEN], silt_replay_result *out)
{
    memset(out, 0, sizeof *out);
    if (b->event.type != ODF_MetadataEvent_ExecuteTransform || !b->event.value)
        return silt_err(SILT_EINVAL, "not an ExecuteTransform");
    tx t;
    memset(&t, 0, sizeof t);
    t.ds = ds;
    t.self_upto = prev_hash;
    t.a = silt_arena_new();
    if (!t.a)
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = tx_end(&t, replay(&t, st, b, out));
    return rc == SILT_ENOMEM && !silt_error_last()[0] ? silt_err(rc, "out of memory") : rc;
}
