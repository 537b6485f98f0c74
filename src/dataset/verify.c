/* verify.c — `silt verify`: full check of one ref of a dataset.
 *
 * 1. Walks from the ref head back to the seed, reading every block file
 *    once: the SHA3-256 multihash of its bytes must equal its file name, it
 *    must decode, and its prevBlockHash must lead to an existing block.
 * 2. From the seed forward, every block is checked against the chain rules
 *    (odf_chain_check) and applied. Referenced objects are checked here, not
 *    by the rules, so that a missing or damaged file is reported by name and
 *    the walk goes on: checkpoints (existence, size, physical hash) at once,
 *    data slices after the walk.
 * 3. Every data slice (AddData / ExecuteTransform newData), in chain order:
 *    existence, size, physical hash (SHA3-256 of the file), logical hash
 *    (arrow0-sha3-256 record digest), the system columns of the vocabulary
 *    in effect at that block, row count = offsetInterval length, offsets
 *    = the interval, dense and in file order, op values 0..3, every +C
 *    directly after a -C and every -C directly before a +C (pairs never span
 *    slices).
 * 4. Once per dataset, over all slices with set-based SQL: every -R / -C
 *    retracts a record that is present at that point of the history (same
 *    values of all columns except offset, op and system_time; multiset
 *    semantics: a tuple added k times may be retracted k times).
 *
 * Invariants: every problem is reported as one line through the callback and
 * verification goes on (only out-of-memory and I/O errors of the workspace
 * itself abort); the summary is never trusted; the engine (one per call,
 * opened only when the chain has data, spill directory in a fresh
 * `.silt/tmp/<random>/` removed before returning) streams the slices, so
 * memory stays bounded whatever the dataset size: per-slice checks are
 * aggregates and anti-joins, the changelog check is a window over only the
 * rows whose tuple is ever retracted.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "engine/digest.h"
#include "engine/engine.h"
#include "odf/block.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

/* At most this many rows of the changelog check are reported one by one. */
#define MAX_CHANGELOG_LINES 10

typedef struct vctx {
    silt_report_fn report;
    void *rctx;
    int corrupt;   /* hash / decode / missing problems */
    int invalid;   /* rule violations */
} vctx;

static void report(vctx *v, int *counter, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(vctx *v, int *counter, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    (*counter)++;
    if (v->report)
        v->report(v->rctx, line);
}

typedef struct vblock {
    uint8_t hash[SILT_MH_LEN];
    odf_MetadataBlock *blk;
} vblock;

/* System column names (borrowed from a SetVocab event in the block arena, or
 * the ODF defaults). */
typedef struct vnames {
    const char *offset, *op, *system_time, *event_time;
} vnames;

static const char *or_default(const char *s, const char *d) { return s && *s ? s : d; }

static vnames vocab_names(const odf_SetVocab *sv)
{
    vnames n;
    n.offset = or_default(sv ? sv->offset_column : NULL, "offset");
    n.op = or_default(sv ? sv->operation_type_column : NULL, "op");
    n.system_time = or_default(sv ? sv->system_time_column : NULL, "system_time");
    n.event_time = or_default(sv ? sv->event_time_column : NULL, "event_time");
    return n;
}

static bool vnames_equal(const vnames *a, const vnames *b)
{
    return strcmp(a->offset, b->offset) == 0 && strcmp(a->op, b->op) == 0 &&
           strcmp(a->system_time, b->system_time) == 0 && strcmp(a->event_time, b->event_time) == 0;
}

/* One data slice referenced by the chain. */
typedef struct vslice {
    uint64_t seq;              /* block sequence number */
    uint8_t block[SILT_MH_LEN]; /* the block holding it */
    bool cached;               /* checked already for another branch (shared) */
    int problems;              /* problems found in this slice and its block's checkpoint */
    const odf_DataSlice *sl;   /* borrowed from the block arena */
    vnames names;              /* vocabulary in effect at the block */
    char hash[SILT_MH_TEXT_LEN + 1];
    char *path;                /* local file (owned), NULL for remote stores */
    bool usable;               /* readable, system columns present: part of step 4 */
    bool remote;               /* no local file (remote store): data not checked */
    uint64_t retractions;      /* rows with op -R / -C */
    bool position_fallback;    /* file has a column named file_row_number */
} vslice;

typedef struct vstate {
    silt_dataset *ds;
    vctx *v;
    silt_verify_shared *sh;    /* results shared between branches (may be NULL) */
    silt_engine *e;            /* opened lazily (owned) */
    char *tmpdir;              /* spill directory of e (owned) */
    vslice *slices;
    size_t nslices, cap;
} vstate;

/* ---- results shared between the branches of one dataset ------------------ */

/* Blocks are shared by branches, and a block hash fixes the whole chain
 * before it (vocabulary included), so the objects of a block need checking
 * once per dataset: `blocks` maps a block hash to what its objects gave
 * ({usable, remote, retractions, fallback, problems, branch}); `histories`
 * holds the data-block sequences whose retractions were checked (a branch
 * whose sequence is a prefix of one of them needs no check of its own). */
struct silt_verify_shared {
    json_t *blocks;
    json_t *histories;
};

int silt_verify_shared_new(silt_verify_shared **out)
{
    *out = calloc(1, sizeof **out);
    if (*out) {
        (*out)->blocks = json_object();
        (*out)->histories = json_array();
    }
    if (!*out || !(*out)->blocks || !(*out)->histories) {
        silt_verify_shared_free(*out);
        *out = NULL;
        return silt_err(SILT_ENOMEM, "verify: out of memory");
    }
    return 0;
}

void silt_verify_shared_free(silt_verify_shared *sh)
{
    if (!sh)
        return;
    json_decref(sh->blocks);
    json_decref(sh->histories);
    free(sh);
}

static json_t *shared_block(const vstate *s, const uint8_t block[SILT_MH_LEN])
{
    if (!s->sh)
        return NULL;
    char t[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(block, SILT_MH_LEN, t);
    return json_object_get(s->sh->blocks, t);
}

/* Records what the objects of slice `sl`'s block gave, for other branches. */
static int shared_put(vstate *s, const vslice *sl)
{
    if (!s->sh || sl->cached)
        return 0;
    char t[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(sl->block, SILT_MH_LEN, t);
    json_t *o = json_pack("{s:b,s:b,s:I,s:b,s:i,s:s}", "usable", sl->usable, "remote", sl->remote, "retractions",
                          (json_int_t)sl->retractions, "fallback", sl->position_fallback, "problems", sl->problems,
                          "branch", s->ds->branch);
    if (!o || json_object_set_new(s->sh->blocks, t, o))
        return silt_err(SILT_ENOMEM, "verify: out of memory");
    return 0;
}

/* The data-block sequence of this branch as a JSON array (new reference). */
static json_t *history_of(const vstate *s)
{
    json_t *h = json_array();
    for (size_t i = 0; h && i < s->nslices; i++) {
        char t[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(s->slices[i].block, SILT_MH_LEN, t);
        if (json_array_append_new(h, json_string(t))) {
            json_decref(h);
            return NULL;
        }
    }
    return h;
}

/* Were the retractions of this exact history (or a longer one) checked? */
static bool history_checked(const vstate *s, const json_t *h)
{
    size_t i;
    json_t *o;
    json_array_foreach(s->sh ? s->sh->histories : NULL, i, o)
    {
        if (json_array_size(o) < json_array_size(h))
            continue;
        bool prefix = true;
        for (size_t k = 0; prefix && k < json_array_size(h); k++)
            prefix = json_equal(json_array_get(o, k), json_array_get(h, k));
        if (prefix)
            return true;
    }
    return false;
}

/* ---- chain env: objects are checked by this module, not by the rules ---- */

typedef struct venv {
    silt_dataset *ds;
    odf_chain_env inner;
} venv;

static int venv_load_block(void *ctx, const uint8_t hash[SILT_MH_LEN], silt_arena *a,
                           odf_MetadataBlock **out)
{
    venv *ve = ctx;
    return ve->inner.load_block(ve->inner.ctx, hash, a, out);
}

static int venv_object_exists(void *ctx, const char *kind, const uint8_t hash[SILT_MH_LEN],
                              uint64_t size)
{
    venv *ve = ctx;
    char *path = ve->ds->store->ops->object_path(ve->ds->store, kind, hash);
    if (path) {
        free(path);
        return 1; /* local object: checked (and reported by name) below */
    }
    return ve->inner.object_exists(ve->inner.ctx, kind, hash, size);
}

/* ---- objects: existence, size, physical hash ------------------------------ */

/* Checks existence, size and SHA3-256 of a local object. *readable is set
 * when the file exists and could be hashed. Returns < 0 only on ENOMEM. */
static int check_file(silt_dataset *ds, vctx *v, const char *what, const char *kind,
                      const odf_bytes *mh, uint64_t expected_size, uint64_t seq, char **path_out,
                      bool *readable)
{
    *readable = false;
    if (path_out)
        *path_out = NULL;
    char text[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(mh->data, SILT_MH_LEN, text);
    char *path = ds->store->ops->object_path(ds->store, kind, mh->data);
    if (!path)
        return 0; /* remote backend: existence and size are checked by the rules */
    uint64_t size = 0;
    int rc = silt_store_stat(ds->store, kind, mh->data, &size);
    if (rc == 0) {
        report(v, &v->corrupt, "%s %s (block %llu): missing", what, text, (unsigned long long)seq);
        free(path);
        return 0;
    }
    if (rc < 0) {
        report(v, &v->corrupt, "%s %s (block %llu): cannot read: %s", what, text,
               (unsigned long long)seq, silt_error_last());
        free(path);
        return rc == SILT_ENOMEM ? rc : 0;
    }
    if (size != expected_size)
        report(v, &v->corrupt, "%s %s (block %llu): size %llu but the block says %llu", what, text,
               (unsigned long long)seq, (unsigned long long)size, (unsigned long long)expected_size);
    uint8_t digest[SILT_SHA3_256_LEN];
    rc = silt_sha3_file(path, digest, NULL);
    silt_ds_progress_add(ds, 0, size);
    if (rc < 0) {
        report(v, &v->corrupt, "%s %s (block %llu): cannot read: %s", what, text,
               (unsigned long long)seq, silt_error_last());
        free(path);
        return rc == SILT_ENOMEM ? rc : 0;
    }
    if (memcmp(digest, mh->data + 2, SILT_SHA3_256_LEN) != 0) {
        uint8_t got[SILT_MH_LEN];
        char got_text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_wrap_sha3(digest, got);
        silt_multihash_to_text(got, SILT_MH_LEN, got_text);
        report(v, &v->corrupt, "%s %s (block %llu): physical hash mismatch: expected %s, got %s", what,
               text, (unsigned long long)seq, text, got_text);
    }
    *readable = true;
    if (path_out)
        *path_out = path;
    else
        free(path);
    return 0;
}

static bool valid_mh(const odf_bytes *mh)
{
    return mh->data && mh->len == SILT_MH_LEN && silt_multihash_check(mh->data, mh->len) == 0;
}

static const odf_DataSlice *block_data(const odf_MetadataBlock *blk, const odf_Checkpoint **cp)
{
    *cp = NULL;
    if (blk->event.type == ODF_MetadataEvent_AddData && blk->event.value) {
        const odf_AddData *e = blk->event.value;
        *cp = e->new_checkpoint;
        return e->new_data;
    }
    if (blk->event.type == ODF_MetadataEvent_ExecuteTransform && blk->event.value) {
        const odf_ExecuteTransform *e = blk->event.value;
        *cp = e->new_checkpoint;
        return e->new_data;
    }
    return NULL;
}

static int problems_of(const vctx *v) { return v->corrupt + v->invalid; }

/* A block checked for another branch: its problems count here too, with
 * one line pointing to where they were reported. */
static void report_cached(vstate *s, const odf_MetadataBlock *blk, const json_t *c)
{
    int n = (int)json_integer_value(json_object_get(c, "problems"));
    if (n > 0)
        report(s->v, &s->v->corrupt, "block %llu: %d problem%s with its objects (reported for branch %s)",
               (unsigned long long)blk->sequence_number, n, n == 1 ? "" : "s",
               json_string_value(json_object_get(c, "branch")));
}

/* Queues the data slice of a block (for step 3, or from the shared
 * results); returns the new entry or NULL on ENOMEM. */
static vslice *queue_slice(vstate *s, const odf_MetadataBlock *blk, const uint8_t hash[SILT_MH_LEN],
                           const odf_DataSlice *data, const vnames *names)
{
    if (s->nslices == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        vslice *ns = realloc(s->slices, cap * sizeof *ns);
        if (!ns) {
            silt_err(SILT_ENOMEM, "verify: out of memory");
            return NULL;
        }
        s->slices = ns;
        s->cap = cap;
    }
    vslice *sl = &s->slices[s->nslices++];
    memset(sl, 0, sizeof *sl);
    sl->seq = blk->sequence_number;
    memcpy(sl->block, hash, SILT_MH_LEN);
    sl->sl = data;
    sl->names = *names;
    silt_multihash_to_text(data->physical_hash.data, SILT_MH_LEN, sl->hash);
    return sl;
}

/* Checks the checkpoint of a block at once and queues its data slice;
 * a block checked for another branch is not checked again. */
static int check_block_objects(vstate *s, const odf_MetadataBlock *blk, const uint8_t hash[SILT_MH_LEN],
                               const vnames *names)
{
    const odf_Checkpoint *cp = NULL;
    const odf_DataSlice *data = block_data(blk, &cp);
    bool has_data = data && valid_mh(&data->physical_hash); /* malformed hashes: the rules' business */
    const json_t *c = shared_block(s, hash);
    if (c) {
        report_cached(s, blk, c);
        vslice *sl = has_data ? queue_slice(s, blk, hash, data, names) : NULL;
        if (has_data && !sl)
            return SILT_ENOMEM;
        if (sl) {
            sl->cached = true;
            sl->usable = json_is_true(json_object_get(c, "usable"));
            sl->remote = json_is_true(json_object_get(c, "remote"));
            sl->retractions = (uint64_t)json_integer_value(json_object_get(c, "retractions"));
            sl->position_fallback = json_is_true(json_object_get(c, "fallback"));
            sl->path = s->ds->store->ops->object_path(s->ds->store, "data", data->physical_hash.data);
        }
        return 0;
    }
    int before = problems_of(s->v);
    if (cp && valid_mh(&cp->physical_hash)) {
        bool readable;
        int rc = check_file(s->ds, s->v, "checkpoint file", "checkpoints", &cp->physical_hash, cp->size,
                            blk->sequence_number, NULL, &readable);
        if (rc < 0)
            return rc;
    }
    if (!has_data) {
        vslice none;
        memset(&none, 0, sizeof none);
        memcpy(none.block, hash, SILT_MH_LEN);
        none.usable = true;
        none.problems = problems_of(s->v) - before;
        return shared_put(s, &none);
    }
    vslice *sl = queue_slice(s, blk, hash, data, names);
    if (!sl)
        return SILT_ENOMEM;
    sl->problems = problems_of(s->v) - before;
    return 0;
}

/* ---- engine helpers --------------------------------------------------------- */

static int open_engine(vstate *s)
{
    if (s->e)
        return 0;
    int rc = silt_ws_mktemp(s->ds->ws, "tmp", &s->tmpdir);
    if (rc < 0)
        return rc;
    silt_engine_opts o = {.spill_dir = s->tmpdir, .memory_limit = NULL, .threads = 0};
    return silt_engine_open(&s->e, &o);
}

/* First row of a query as malloc'd strings (NULL for SQL NULL). */
#define MAX_VALS 16
typedef struct row1 {
    size_t n;
    char *vals[MAX_VALS];
    bool got;
    int rc;
} row1;

static int row1_cb(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    (void)names;
    row1 *r = ctx;
    if (r->got)
        return 0;
    r->got = true;
    r->n = ncols < MAX_VALS ? ncols : MAX_VALS;
    for (size_t i = 0; i < r->n; i++) {
        if (values[i] && !(r->vals[i] = strdup(values[i])))
            return r->rc = silt_err(SILT_ENOMEM, "verify: out of memory");
    }
    return 0;
}

static void row1_free(row1 *r)
{
    for (size_t i = 0; i < MAX_VALS; i++)
        free(r->vals[i]);
    memset(r, 0, sizeof *r);
}

static int query_row(silt_engine *e, const char *sql, row1 *r)
{
    memset(r, 0, sizeof *r);
    int rc = silt_engine_query_rows(e, sql, row1_cb, r);
    if (rc == 0 && !r->got)
        rc = silt_err(SILT_EINTERNAL, "verify: query returned no rows");
    return rc;
}

static uint64_t u64_of(const char *s) { return s ? strtoull(s, NULL, 10) : 0; }

/* Column names of a query (malloc'd array of malloc'd strings). */
typedef struct names_list {
    char **v;
    size_t n, cap;
    int rc;
} names_list;

static int names_cb(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    (void)names;
    names_list *l = ctx;
    if (ncols < 1 || !values[0])
        return 0;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **nv = realloc(l->v, cap * sizeof *nv);
        if (!nv)
            return l->rc = silt_err(SILT_ENOMEM, "verify: out of memory");
        l->v = nv;
        l->cap = cap;
    }
    if (!(l->v[l->n] = strdup(values[0])))
        return l->rc = silt_err(SILT_ENOMEM, "verify: out of memory");
    l->n++;
    return 0;
}

static void names_free(names_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

static bool names_has(const names_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], name) == 0)
            return true;
    return false;
}

/* Column names of `select` (DESCRIBE). */
static int describe(silt_engine *e, const char *select, names_list *out)
{
    memset(out, 0, sizeof *out);
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_printf(&b, "DESCRIBE %s", select);
    if (rc == 0)
        rc = silt_engine_query_rows(e, b.data, names_cb, out);
    if (rc == 0)
        rc = out->rc;
    silt_buf_free(&b);
    if (rc < 0)
        names_free(out);
    return rc;
}

/* " (and N more rows)" or "" */
static const char *more_rows(char *buf, size_t size, uint64_t total)
{
    if (total <= 1)
        buf[0] = '\0';
    else
        snprintf(buf, size, " (and %llu more row%s)", (unsigned long long)(total - 1),
                 total == 2 ? "" : "s");
    return buf;
}

/* ---- step 3: one slice ---------------------------------------------------- */

/* Quoted identifiers of the system columns of a slice. */
typedef struct qnames {
    char *offset, *op, *system_time, *event_time;
} qnames;

static void qnames_free(qnames *q)
{
    free(q->offset);
    free(q->op);
    free(q->system_time);
    free(q->event_time);
    memset(q, 0, sizeof *q);
}

static int qnames_make(qnames *q, const vnames *n)
{
    q->offset = silt_sql_ident(n->offset);
    q->op = silt_sql_ident(n->op);
    q->system_time = silt_sql_ident(n->system_time);
    q->event_time = silt_sql_ident(n->event_time);
    if (!q->offset || !q->op || !q->system_time || !q->event_time) {
        qnames_free(q);
        return silt_err(SILT_ENOMEM, "verify: out of memory");
    }
    return 0;
}

/* Row count, offsets, op values, correction pairs of one readable slice. */
static int check_slice_content(vstate *s, vslice *sl, const char *qpath, const qnames *q)
{
    vctx *v = s->v;
    const odf_OffsetInterval *iv = sl->sl->offset_interval;
    unsigned long long seq = (unsigned long long)sl->seq;
    /* row position in the file: DuckDB's virtual column, unless the file has
     * a data column of that name (then the scan order of a single file) */
    const char *pos = sl->position_fallback ? "(row_number() OVER () - 1)" : "file_row_number";
    unsigned long long start = iv ? (unsigned long long)iv->start : 0;
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_buf_printf(
        &b,
        "SELECT count(*), "
        "count(*) FILTER (WHERE bo), min(r) FILTER (WHERE bo), "
        "arg_min(coalesce(CAST(o AS VARCHAR), 'NULL'), r) FILTER (WHERE bo), "
        "count(*) FILTER (WHERE bp), min(r) FILTER (WHERE bp), "
        "arg_min(coalesce(CAST(p AS VARCHAR), 'NULL'), r) FILTER (WHERE bp), "
        "arg_min(coalesce(CAST(o AS VARCHAR), 'NULL'), r) FILTER (WHERE bp), "
        "count(*) FILTER (WHERE p IN (1, 2)), count(*) FILTER (WHERE p IN (2, 3)) "
        "FROM (SELECT r, o, p, (o IS NULL OR o <> CAST(%llu AS HUGEINT) + r) AS bo, "
        "(p IS NULL OR p NOT IN (0, 1, 2, 3)) AS bp FROM "
        "(SELECT %s AS r, %s AS o, %s AS p FROM read_parquet(%s)))",
        start, pos, q->offset, q->op, qpath);
    row1 r = {0};
    if (rc == 0)
        rc = query_row(s->e, b.data, &r);
    if (rc == SILT_ENOMEM)
        goto done;
    if (rc < 0) {
        report(v, &v->invalid, "data file %s (block %llu): cannot check the records: %s", sl->hash, seq,
               silt_error_last());
        sl->usable = false;
        rc = 0;
        goto done;
    }
    char more[64];
    uint64_t nrows = u64_of(r.vals[0]);
    if (iv && iv->end >= iv->start && nrows != iv->end - iv->start + 1)
        report(v, &v->invalid, "data file %s (block %llu): %llu rows but offsetInterval %llu..%llu has %llu",
               sl->hash, seq, (unsigned long long)nrows, (unsigned long long)iv->start,
               (unsigned long long)iv->end, (unsigned long long)(iv->end - iv->start + 1));
    uint64_t bad = u64_of(r.vals[1]);
    if (bad && iv) {
        uint64_t row = u64_of(r.vals[2]);
        report(v, &v->invalid,
               "data file %s (block %llu): row %llu has offset %s, expected %llu (offsets must be "
               "%llu..%llu, dense and in order)%s",
               sl->hash, seq, (unsigned long long)row + 1, r.vals[3] ? r.vals[3] : "NULL",
               (unsigned long long)(iv->start + row), (unsigned long long)iv->start,
               (unsigned long long)iv->end, more_rows(more, sizeof more, bad));
    }
    bad = u64_of(r.vals[4]);
    if (bad)
        report(v, &v->invalid,
               "data file %s (block %llu): row %llu (offset %s): invalid op %s (must be 0 +A, 1 -R, "
               "2 -C or 3 +C)%s",
               sl->hash, seq, (unsigned long long)u64_of(r.vals[5]) + 1, r.vals[7] ? r.vals[7] : "NULL",
               r.vals[6] ? r.vals[6] : "NULL", more_rows(more, sizeof more, bad));
    sl->retractions = u64_of(r.vals[8]);
    uint64_t corrections = u64_of(r.vals[9]);
    row1_free(&r);
    if (corrections == 0)
        goto done;

    /* correction pairs: anti-joins on the row position over the -C/+C rows */
    silt_buf_clear(&b);
    rc = silt_buf_printf(
        &b,
        "WITH t AS MATERIALIZED (SELECT * FROM (SELECT %s AS r, %s AS o, %s AS p FROM "
        "read_parquet(%s)) WHERE p IN (2, 3)), "
        "a AS (SELECT c.r, c.o FROM t c ANTI JOIN (SELECT r FROM t WHERE p = 2) x ON x.r = c.r - 1 "
        "WHERE c.p = 3), "
        "z AS (SELECT c.r, c.o FROM t c ANTI JOIN (SELECT r FROM t WHERE p = 3) x ON x.r = c.r + 1 "
        "WHERE c.p = 2) "
        "SELECT (SELECT count(*) FROM a), (SELECT min(r) FROM a), "
        "(SELECT arg_min(coalesce(CAST(o AS VARCHAR), 'NULL'), r) FROM a), "
        "(SELECT count(*) FROM z), (SELECT min(r) FROM z), "
        "(SELECT arg_min(coalesce(CAST(o AS VARCHAR), 'NULL'), r) FROM z)",
        pos, q->offset, q->op, qpath);
    if (rc == 0)
        rc = query_row(s->e, b.data, &r);
    if (rc == SILT_ENOMEM)
        goto done;
    if (rc < 0) {
        report(v, &v->invalid, "data file %s (block %llu): cannot check the correction pairs: %s",
               sl->hash, seq, silt_error_last());
        rc = 0;
        goto done;
    }
    bad = u64_of(r.vals[0]);
    if (bad)
        report(v, &v->invalid,
               "data file %s (block %llu): row %llu (offset %s): +C does not directly follow a -C%s",
               sl->hash, seq, (unsigned long long)u64_of(r.vals[1]) + 1, r.vals[2] ? r.vals[2] : "NULL",
               more_rows(more, sizeof more, bad));
    bad = u64_of(r.vals[3]);
    if (bad)
        report(v, &v->invalid,
               "data file %s (block %llu): row %llu (offset %s): -C is not directly followed by a +C%s",
               sl->hash, seq, (unsigned long long)u64_of(r.vals[4]) + 1, r.vals[5] ? r.vals[5] : "NULL",
               more_rows(more, sizeof more, bad));
done:
    row1_free(&r);
    silt_buf_free(&b);
    return rc;
}

static int check_slice(vstate *s, vslice *sl)
{
    vctx *v = s->v;
    unsigned long long seq = (unsigned long long)sl->seq;
    bool readable = false;
    int rc = check_file(s->ds, v, "data file", "data", &sl->sl->physical_hash, sl->sl->size, sl->seq,
                        &sl->path, &readable);
    if (rc < 0 || !readable) {
        if (rc == 0 && !sl->path) {
            char *p = s->ds->store->ops->object_path(s->ds->store, "data", sl->sl->physical_hash.data);
            sl->remote = !p;
            free(p);
        }
        return rc;
    }
    rc = open_engine(s);
    if (rc < 0)
        return rc;
    char *qpath = silt_sql_str(sl->path);
    if (!qpath)
        return silt_err(SILT_ENOMEM, "verify: out of memory");
    silt_buf b = SILT_BUF_INIT;
    names_list cols = {0};
    qnames q = {0};
    rc = silt_buf_printf(&b, "SELECT * FROM read_parquet(%s)", qpath);
    if (rc == 0) {
        rc = describe(s->e, b.data, &cols);
        if (rc < 0 && rc != SILT_ENOMEM) {
            report(v, &v->corrupt, "data file %s (block %llu): cannot read as Parquet: %s", sl->hash, seq,
                   silt_error_last());
            rc = 0;
            goto done;
        }
    }
    if (rc < 0)
        goto done;

    /* logical hash */
    uint8_t lh[SILT_ARROW_MH_LEN];
    int r = silt_parquet_logical_hash(s->e, sl->path, lh, NULL);
    if (r == SILT_ENOMEM) {
        rc = r;
        goto done;
    }
    const odf_bytes *want = &sl->sl->logical_hash;
    char got_text[SILT_ARROW_MH_TEXT_LEN + 1];
    char want_text[2 * 64 + 2] = "(none)";
    if (want->data && want->len > 0 && want->len <= 64)
        silt_multihash_to_text(want->data, want->len, want_text);
    if (r < 0) {
        report(v, &v->corrupt, "data file %s (block %llu): cannot compute the logical hash: %s", sl->hash,
               seq, silt_error_last());
    } else if (!want->data || want->len != SILT_ARROW_MH_LEN || memcmp(want->data, lh, SILT_ARROW_MH_LEN)) {
        silt_arrow_multihash_text(lh, got_text);
        report(v, &v->corrupt, "data file %s (block %llu): logical hash mismatch: expected %s, got %s",
               sl->hash, seq, want_text, got_text);
    }

    /* system columns of the vocabulary in effect */
    const struct {
        const char *name, *field;
    } sys[] = {{sl->names.offset, "offsetColumn"},
               {sl->names.op, "operationTypeColumn"},
               {sl->names.system_time, "systemTimeColumn"},
               {sl->names.event_time, "eventTimeColumn"}};
    bool all = true;
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (!names_has(&cols, sys[i].name)) {
            report(v, &v->invalid, "data file %s (block %llu): no column '%s' (vocab %s)", sl->hash, seq,
                   sys[i].name, sys[i].field);
            all = false;
        }
    if (!all)
        goto done;
    sl->position_fallback = names_has(&cols, "file_row_number");
    sl->usable = true;
    rc = qnames_make(&q, &sl->names);
    if (rc == 0)
        rc = check_slice_content(s, sl, qpath, &q);
done:
    qnames_free(&q);
    names_free(&cols);
    silt_buf_free(&b);
    free(qpath);
    return rc;
}

/* ---- step 4: retractions over the whole history ---------------------------- */

#define C_OFFSET "__silt_offset"
#define C_OP "__silt_op"
#define C_EVENT_TIME "__silt_event_time"

/* SELECT over all slices with the system columns renamed to C_OFFSET, C_OP,
 * C_EVENT_TIME and system_time dropped; one read_parquet per run of slices
 * with the same vocabulary. */
static int history_select(vstate *s, silt_buf *b)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nslices;) {
        size_t j = i + 1;
        while (j < s->nslices && vnames_equal(&s->slices[i].names, &s->slices[j].names))
            j++;
        qnames q = {0};
        rc = qnames_make(&q, &s->slices[i].names);
        if (rc == 0)
            rc = silt_buf_printf(b,
                                 "%sSELECT * EXCLUDE (%s, %s, %s, %s), %s AS " C_OFFSET ", %s AS " C_OP
                                 ", %s AS " C_EVENT_TIME " FROM read_parquet([",
                                 i ? " UNION ALL BY NAME " : "", q.offset, q.op, q.system_time,
                                 q.event_time, q.offset, q.op, q.event_time);
        qnames_free(&q);
        for (size_t k = i; rc == 0 && k < j; k++) {
            char *qp = silt_sql_str(s->slices[k].path);
            rc = qp ? silt_buf_printf(b, "%s%s", k > i ? ", " : "", qp) : SILT_ENOMEM;
            free(qp);
        }
        if (rc == 0)
            rc = silt_buf_puts(b, "], union_by_name = true)");
        i = j;
    }
    return rc == SILT_ENOMEM ? silt_err(SILT_ENOMEM, "verify: out of memory") : rc;
}

/* Slice holding offset o (slices are in offset order), or NULL. */
static const vslice *slice_of(const vstate *s, uint64_t o)
{
    size_t lo = 0, hi = s->nslices;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const odf_OffsetInterval *iv = s->slices[mid].sl->offset_interval;
        if (!iv || iv->end < o)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->nslices) {
        const odf_OffsetInterval *iv = s->slices[lo].sl->offset_interval;
        if (iv && iv->start <= o && o <= iv->end)
            return &s->slices[lo];
    }
    return NULL;
}

typedef struct bad_ctx {
    vstate *s;
    uint64_t total;
} bad_ctx;

static int bad_row_cb(void *ctx, size_t ncols, const char *const *names, const char *const *values)
{
    (void)names;
    bad_ctx *bc = ctx;
    vctx *v = bc->s->v;
    if (ncols < 2)
        return 0;
    uint64_t o = u64_of(values[0]);
    bool correction = values[1] && strcmp(values[1], "2") == 0;
    const vslice *sl = slice_of(bc->s, o);
    if (sl)
        report(v, &v->invalid, "data file %s (block %llu): row %llu (offset %llu): %s of a record that is "
                               "not present",
               sl->hash, (unsigned long long)sl->seq,
               (unsigned long long)(o - sl->sl->offset_interval->start + 1), (unsigned long long)o,
               correction ? "-C" : "-R");
    else
        report(v, &v->invalid, "offset %llu: %s of a record that is not present", (unsigned long long)o,
               correction ? "-C" : "-R");
    return 0;
}

static int check_retractions(vstate *s)
{
    vctx *v = s->v;
    uint64_t retractions = 0;
    size_t unusable = 0;
    for (size_t i = 0; i < s->nslices; i++) {
        if (s->slices[i].remote)
            return 0; /* remote stores: data is not read by verify yet */
        if (!s->slices[i].usable)
            unusable++;
        retractions += s->slices[i].retractions;
    }
    if (s->nslices == 0 || (unusable == 0 && retractions == 0))
        return 0;
    if (unusable) {
        report(v, &v->invalid,
               "retractions and corrections were not checked against the history: %zu data file%s "
               "could not be read",
               unusable, unusable == 1 ? "" : "s");
        return 0;
    }
    silt_buf hist = SILT_BUF_INIT, sql = SILT_BUF_INIT, keys = SILT_BUF_INIT, join = SILT_BUF_INIT;
    names_list cols = {0};
    int rc = history_select(s, &hist);
    if (rc == 0) {
        rc = describe(s->e, hist.data, &cols);
        if (rc < 0 && rc != SILT_ENOMEM) {
            report(v, &v->invalid, "cannot check retractions and corrections: %s", silt_error_last());
            rc = 0;
            goto done;
        }
    }
    /* the tuple: every column but offset and op (system_time is excluded) */
    size_t nkeys = 0;
    for (size_t i = 0; rc == 0 && i < cols.n; i++) {
        if (strcmp(cols.v[i], C_OFFSET) == 0 || strcmp(cols.v[i], C_OP) == 0)
            continue;
        char *qk = silt_sql_ident(cols.v[i]);
        if (!qk) {
            rc = silt_err(SILT_ENOMEM, "verify: out of memory");
            break;
        }
        rc = silt_buf_printf(&keys, "%sh.%s", nkeys ? ", " : "", qk);
        if (rc == 0)
            rc = silt_buf_printf(&join, "%sh.%s IS NOT DISTINCT FROM r.%s", nkeys ? " AND " : "", qk, qk);
        free(qk);
        nkeys++;
    }
    if (rc < 0)
        goto done;
    /* Only tuples that are ever retracted matter: a semi-join keeps their
     * rows, a running sum per tuple in offset order must never go negative
     * at a -R/-C. */
    if (nkeys)
        rc = silt_buf_printf(
            &sql,
            "CREATE OR REPLACE TEMP TABLE __silt_verify_bad AS "
            "WITH h AS NOT MATERIALIZED (%s), "
            "r AS (SELECT DISTINCT %s FROM h WHERE h." C_OP " IN (1, 2)), "
            "c AS (SELECT h." C_OFFSET " AS o, h." C_OP " AS p, sum(CASE WHEN h." C_OP
            " IN (0, 3) THEN 1 WHEN h." C_OP " IN (1, 2) THEN -1 ELSE 0 END) OVER (PARTITION BY %s "
            "ORDER BY h." C_OFFSET " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS net "
            "FROM h SEMI JOIN r ON %s) "
            "SELECT o, p FROM c WHERE p IN (1, 2) AND net < 0",
            hist.data, keys.data, keys.data, join.data);
    else
        rc = silt_buf_printf(
            &sql,
            "CREATE OR REPLACE TEMP TABLE __silt_verify_bad AS "
            "WITH c AS (SELECT h." C_OFFSET " AS o, h." C_OP " AS p, sum(CASE WHEN h." C_OP
            " IN (0, 3) THEN 1 WHEN h." C_OP " IN (1, 2) THEN -1 ELSE 0 END) OVER (ORDER BY h." C_OFFSET
            " ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS net FROM (%s) h) "
            "SELECT o, p FROM c WHERE p IN (1, 2) AND net < 0",
            hist.data);
    if (rc < 0)
        goto done;
    rc = silt_engine_exec(s->e, sql.data);
    if (rc < 0 && rc != SILT_ENOMEM) {
        report(v, &v->invalid, "cannot check retractions and corrections: %s", silt_error_last());
        rc = 0;
        goto done;
    }
    if (rc < 0)
        goto done;
    uint64_t total = 0;
    rc = silt_engine_query_u64(s->e, &total, "SELECT count(*) FROM __silt_verify_bad");
    bad_ctx bc = {s, total};
    if (rc == 0 && total) {
        silt_buf_clear(&sql);
        rc = silt_buf_printf(&sql, "SELECT CAST(o AS VARCHAR), CAST(p AS VARCHAR) FROM __silt_verify_bad "
                                   "ORDER BY o LIMIT %d",
                             MAX_CHANGELOG_LINES);
        if (rc == 0)
            rc = silt_engine_query_rows(s->e, sql.data, bad_row_cb, &bc);
        if (rc == 0 && total > MAX_CHANGELOG_LINES)
            report(v, &v->invalid, "%llu more -R/-C rows of records that are not present",
                   (unsigned long long)(total - MAX_CHANGELOG_LINES));
    }
    if (rc < 0 && rc != SILT_ENOMEM) {
        report(v, &v->invalid, "cannot check retractions and corrections: %s", silt_error_last());
        rc = 0;
    }
    silt_engine_exec(s->e, "DROP TABLE IF EXISTS __silt_verify_bad");
done:
    names_free(&cols);
    silt_buf_free(&hist);
    silt_buf_free(&sql);
    silt_buf_free(&keys);
    silt_buf_free(&join);
    return rc;
}

static int check_data(vstate *s)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nslices; i++) {
        vslice *sl = &s->slices[i];
        if (sl->cached)
            continue;
        int before = problems_of(s->v);
        rc = check_slice(s, sl);
        sl->problems += problems_of(s->v) - before;
        if (rc == 0)
            rc = shared_put(s, sl);
    }
    json_t *h = rc == 0 && s->sh ? history_of(s) : NULL;
    if (rc == 0 && s->sh && !h)
        rc = silt_err(SILT_ENOMEM, "verify: out of memory");
    if (rc == 0 && !history_checked(s, h)) {
        rc = check_retractions(s);
        if (rc == 0 && h && json_array_append(s->sh->histories, h))
            rc = silt_err(SILT_ENOMEM, "verify: out of memory");
    }
    json_decref(h);
    return rc;
}

static void vstate_free(vstate *s)
{
    for (size_t i = 0; i < s->nslices; i++)
        free(s->slices[i].path);
    free(s->slices);
    silt_engine_free(s->e);
    if (s->tmpdir) {
        char saved[1024];
        snprintf(saved, sizeof saved, "%s", silt_error_last());
        silt_fs_remove_tree(s->tmpdir);
        silt_err(SILT_EINTERNAL, "%s", saved); /* keep the message of a failure */
        free(s->tmpdir);
    }
    memset(s, 0, sizeof *s);
}

/* ---- entry point -------------------------------------------------------------- */

static int verify_ref(silt_dataset *ds, silt_verify_shared *sh, vctx *vp)
{
    vctx v = *vp;
    uint8_t cur[SILT_MH_LEN];
    int rc = silt_store_ref_read_hash(ds->store, ds->ref, cur);
    if (rc == SILT_ENOTFOUND || rc == SILT_ECORRUPT) {
        report(&v, &v.corrupt, "ref %s/refs/%s: %s", ds->dir, ds->ref, silt_error_last());
        *vp = v;
        return 0;
    }
    if (rc < 0)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    vblock *list = NULL;
    size_t n = 0, cap = 0;
    bool complete = false;
    char referrer[96];
    snprintf(referrer, sizeof referrer, "ref %s", ds->ref);
    /* 1. walk back: hashes, decoding, links */
    for (;;) {
        char *path = ds->store->ops->object_path(ds->store, "blocks", cur);
        if (!path) {
            rc = SILT_ENOMEM;
            break;
        }
        silt_buf bytes = SILT_BUF_INIT;
        int r = silt_store_get(ds->store, "blocks", cur, &bytes);
        if (r == SILT_ENOTFOUND) {
            report(&v, &v.corrupt, "block %s: missing (referenced by %s)", path, referrer);
        } else if (r < 0) {
            report(&v, &v.corrupt, "block %s: cannot read: %s", path, silt_error_last());
        }
        odf_MetadataBlock *blk = NULL;
        if (r == 0) {
            uint8_t mh[SILT_MH_LEN];
            if (odf_block_hash((const uint8_t *)bytes.data, bytes.len, mh) == 0 &&
                memcmp(mh, cur, SILT_MH_LEN) != 0)
                report(&v, &v.corrupt, "block %s: hash mismatch (tampered or corrupted)", path);
            if (odf_block_decode(a, (const uint8_t *)bytes.data, bytes.len, &blk, NULL) < 0) {
                report(&v, &v.corrupt, "block %s: cannot decode (truncated or corrupted): %s", path,
                       silt_error_last());
                blk = NULL;
            }
        }
        silt_buf_free(&bytes);
        free(path);
        if (!blk)
            break;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            vblock *nl = realloc(list, cap * sizeof *nl);
            if (!nl) {
                rc = silt_err(SILT_ENOMEM, "verify: out of memory");
                break;
            }
            list = nl;
        }
        memcpy(list[n].hash, cur, SILT_MH_LEN);
        list[n].blk = blk;
        n++;
        silt_ds_progress_add(ds, 1, 0);
        if (!blk->prev_block_hash.data) {
            complete = true;
            break;
        }
        if (blk->prev_block_hash.len != SILT_MH_LEN || n > list[0].blk->sequence_number + 1) {
            report(&v, &v.invalid, "block %llu: prevBlockHash does not lead to the seed (sequence numbers "
                                   "do not decrease)",
                   (unsigned long long)blk->sequence_number);
            break;
        }
        snprintf(referrer, sizeof referrer, "prevBlockHash of block %llu",
                 (unsigned long long)blk->sequence_number);
        memcpy(cur, blk->prev_block_hash.data, SILT_MH_LEN);
    }
    /* 2. forward: chain rules, checkpoints; data slices are queued */
    vstate s = {.ds = ds, .v = &v, .sh = sh};
    odf_chain_state st;
    if (rc == 0 && complete)
        rc = odf_chain_state_init(&st);
    else
        complete = false;
    if (rc == 0 && complete) {
        venv ve = {.ds = ds};
        silt_ds_chain_env(ds, &ve.inner);
        odf_chain_env env = {.ctx = &ve, .load_block = venv_load_block,
                             .object_exists = venv_object_exists};
        vnames names = vocab_names(NULL);
        for (size_t i = n; i-- > 0;) {
            char text[SILT_MH_TEXT_LEN + 1];
            silt_multihash_to_text(list[i].hash, SILT_MH_LEN, text);
            int r = odf_chain_check(&st, list[i].blk, list[i].hash, &env);
            if (r == SILT_ENOMEM || r == SILT_EIO) {
                rc = r;
                break;
            }
            if (r < 0) {
                report(&v, &v.invalid, "block blocks/%s: %s", text, silt_error_last());
                if (i > 0)
                    report(&v, &v.invalid, "blocks after sequence number %llu were not checked against "
                                           "the chain rules",
                           (unsigned long long)list[i].blk->sequence_number);
                break;
            }
            if (list[i].blk->event.type == ODF_MetadataEvent_SetVocab && list[i].blk->event.value)
                names = vocab_names(list[i].blk->event.value);
            rc = check_block_objects(&s, list[i].blk, list[i].hash, &names);
            if (rc == 0)
                rc = odf_chain_apply(&st, list[i].blk, list[i].hash);
            if (rc < 0)
                break;
        }
        odf_chain_state_free(&st);
    }
    /* 3./4. data slices and the changelog */
    if (rc == 0)
        rc = check_data(&s);
    vstate_free(&s);
    free(list);
    silt_arena_free(a);
    *vp = v;
    return rc;
}

int silt_ds_verify_ref(silt_dataset *ds, silt_verify_shared *sh, silt_report_fn report_fn, void *rctx,
                       silt_verify_tally *tally)
{
    vctx v = {report_fn, rctx, 0, 0};
    int rc = verify_ref(ds, sh, &v);
    tally->corrupt += v.corrupt;
    tally->invalid += v.invalid;
    return rc;
}
