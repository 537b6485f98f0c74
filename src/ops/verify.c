/* verify.c — `silt verify`: the public entry points, composing what each
 * layer checks of a dataset:
 *  - per branch, the chain and its data slices (src/dataset/verify.c) and,
 *    for files datasets, the linked file objects and the latest view
 *    (src/files/files_verify.c); blocks and objects shared by branches are
 *    checked once;
 *  - per branch of a derivative whose chain and slices are sound: the
 *    replay of every ExecuteTransform (src/ops/transform_replay.c), unless
 *    the caller turned it off;
 *  - once per dataset (all branches): the transaction records of txn/ and
 *    the purge record of retention — every purge the files layer found
 *    plausible must be one that retention could have made: the transaction
 *    was recorded as purged, and the policies recorded with it (or, for
 *    older records, those in force now) retain none of its views at the
 *    time of the purge (evaluated by the gc scan, src/ops/gc.c).
 * Invariant: every problem is reported through the callback with its
 * branch and counted; the result is SILT_ECORRUPT (damaged or missing
 * objects) or SILT_EVALIDATION (rule violations) when there was any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "files/purged.h"
#include "ops/retention.h"
#include "ops/transform.h"
#include "util/error.h"
#include "util/timeutil.h"

typedef struct vrun {
    silt_dataset *ds;
    silt_verify_report_fn report;
    void *ctx;
    silt_verify_branch *br;
    size_t n;
    const char *current; /* branch being verified */
    silt_verify_tally tally;
    bool no_replay;      /* skip the replay of a derivative's ExecuteTransforms */
} vrun;

static silt_verify_branch *entry_of(vrun *r, const char *branch)
{
    for (size_t i = 0; branch && i < r->n; i++)
        if (strcmp(r->br[i].branch, branch) == 0)
            return &r->br[i];
    return r->n ? &r->br[0] : NULL; /* dataset-level problems count for the first branch */
}

static void on_problem(void *ctx, const char *branch, const char *line)
{
    vrun *r = ctx;
    silt_verify_branch *e = entry_of(r, branch);
    if (e)
        e->problems++;
    if (r->report)
        r->report(r->ctx, branch, line);
}

/* Adapter for the chain check, which reports without a branch. */
static void on_chain_problem(void *ctx, const char *line)
{
    vrun *r = ctx;
    on_problem(r, r->current, line);
}

static int list_branches(vrun *r, bool all)
{
    char **names = NULL;
    int n = all ? silt_ds_branch_names(&names, r->ds) : 1;
    if (n < 0)
        return n;
    r->br = calloc((size_t)n, sizeof *r->br);
    if (!r->br) {
        silt_strv_free(names);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    r->n = (size_t)n;
    for (size_t i = 0; i < r->n; i++)
        snprintf(r->br[i].branch, sizeof r->br[i].branch, "%s", all ? names[i] : r->ds->branch);
    silt_strv_free(names);
    return 0;
}

/* One branch: its chain and slices, then its file objects. */
static int verify_branch(vrun *r, silt_verify_shared *sh, silt_files_vstate *fs, silt_verify_branch *e)
{
    silt_dataset *b = NULL;
    int rc = silt_ds_open_unsynced(&b, r->ds->ws, r->ds->dir, e->branch);
    r->current = e->branch;
    if (rc)
        return rc;
    bool synced = silt_ds_sync(b) == 0; /* a chain that cannot be read is reported below, in detail */
    if (synced)
        e->num_blocks = b->st.empty ? 0 : b->st.seq + 1;
    silt_err_clear();
    silt_dataset_set_progress(b, r->ds->progress, r->ds->progress_ctx); /* one set of counters */
    b->prog = r->ds->prog;
    if (b->prog)
        b->prog->total += e->num_blocks;
    size_t before = e->problems;
    rc = silt_ds_verify_ref(b, sh, on_chain_problem, r, &r->tally);
    if (!rc) {
        rc = silt_files_verify_branch(fs, b, on_problem, r, &r->tally);
        if (rc == SILT_ECORRUPT && e->problems > before) {
            silt_err_clear(); /* the damaged chain is reported already */
            rc = 0;
        }
    }
    /* a derivative whose chain and slices are sound: replay its transforms */
    if (!rc && synced && !r->no_replay && e->problems == before &&
        b->st.dataset_kind == ODF_DatasetKind_Derivative) {
        size_t np = 0;
        rc = silt_transform_verify_replay(b, on_chain_problem, r, &np);
        r->tally.invalid += (int)np;
    }
    silt_dataset_free(b);
    return rc;
}

/* ---- the purge record against the policies ---------------------------------- */

/* The scan of the dataset as retention saw it at `when_ms` with `policies`
 * (scans are cached by time and policies: one gc run purges many). */
static int scan_at(json_t *cache, silt_dataset *ds, int64_t when_ms, const json_t *policies, silt_gc_scan **out)
{
    char *pk = policies ? json_dumps(policies, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    char key[64];
    snprintf(key, sizeof key, "%lld", (long long)when_ms);
    silt_buf k = SILT_BUF_INIT;
    int rc = silt_buf_printf(&k, "%s|%s", key, pk ? pk : "current");
    free(pk);
    json_t *hit = rc ? NULL : json_object_get(cache, k.data);
    if (hit) {
        *out = (silt_gc_scan *)(uintptr_t)json_integer_value(hit);
    } else if (!rc) {
        rc = silt_gc_scan_new(out, ds, when_ms, policies);
        if (!rc && json_object_set_new(cache, k.data, json_integer((json_int_t)(uintptr_t)*out))) {
            silt_gc_scan_free(*out);
            rc = silt_err(SILT_ENOMEM, "out of memory");
        }
    }
    silt_buf_free(&k);
    return rc == SILT_ENOMEM && !silt_error_last()[0] ? silt_err(SILT_ENOMEM, "out of memory") : rc;
}

static void free_scans(json_t *cache)
{
    const char *k;
    json_t *v;
    json_object_foreach(cache, k, v) { silt_gc_scan_free((silt_gc_scan *)(uintptr_t)json_integer_value(v)); }
    json_decref(cache);
}

/* One purged transaction: recorded, and not retained by the policies at
 * the time of its purge. */
static int check_purge(vrun *r, json_t *cache, const json_t *ptx, const char *rid, const json_t *p)
{
    const char *branch = json_string_value(json_object_get(p, "branch"));
    const char *first = json_string_value(json_array_get(json_object_get(p, "objects"), 0));
    const json_t *t = json_object_get(ptx, rid);
    silt_time when;
    const char *when_text = json_string_value(json_object_get(t, "purged"));
    if (!t || !when_text || silt_time_parse(when_text, &when) < 0) {
        char line[512];
        snprintf(line, sizeof line, "purge record: transaction %s has no valid purge time", rid);
        r->tally.corrupt++;
        on_problem(r, branch, line);
        silt_err_clear();
        return 0;
    }
    const json_t *policies = json_object_get(t, "policies");
    silt_gc_scan *s = NULL;
    int rc = scan_at(cache, r->ds, silt_time_to_ms(when), policies, &s);
    if (rc)
        return rc;
    if (!silt_gc_scan_knows(s, rid)) {
        char line[1024];
        snprintf(line, sizeof line,
                 "purge record: transaction %s (object %s) is not a committed transaction that wrote files", rid,
                 first ? first : "?");
        r->tally.corrupt++;
        on_problem(r, branch, line);
    } else if (silt_gc_scan_retained(s, rid)) {
        char line[1024];
        snprintf(line, sizeof line,
                 "purge record: transaction %s is recorded as purged at %s, but the retention policies %s "
                 "retain its files then (object %s is missing)",
                 rid, when_text, policies ? "recorded with the purge" : "in force", first ? first : "?");
        r->tally.corrupt++;
        on_problem(r, branch, line);
    }
    return 0;
}

static int check_purges(vrun *r, silt_files_vstate *fs)
{
    const json_t *purges = silt_files_vstate_purges(fs);
    if (json_object_size(purges) == 0)
        return 0;
    json_t *record = NULL, *cache = json_object();
    int rc = cache ? silt_purge_record_load(r->ds, &record) : silt_err(SILT_ENOMEM, "out of memory");
    const json_t *ptx = json_object_get(record, "transactions");
    const char *rid;
    json_t *p;
    json_object_foreach((json_t *)purges, rid, p)
    {
        if (rc)
            break;
        if (!json_object_get(ptx, rid)) {
            char line[1024];
            snprintf(line, sizeof line,
                     "purge record: object %s names transaction %s, which is not recorded as purged",
                     json_string_value(json_array_get(json_object_get(p, "objects"), 0)), rid);
            r->tally.corrupt++;
            on_problem(r, json_string_value(json_object_get(p, "branch")), line);
            continue;
        }
        rc = check_purge(r, cache, ptx, rid, p);
    }
    free_scans(cache);
    json_decref(record);
    return rc;
}

/* ---- entry points ------------------------------------------------------------------- */

static int verify(vrun *r, bool all)
{
    int rc = list_branches(r, all);
    silt_verify_shared *sh = NULL;
    silt_files_vstate *fs = NULL;
    if (!rc)
        rc = silt_verify_shared_new(&sh);
    if (!rc)
        rc = silt_files_vstate_new(&fs, r->ds);
    for (size_t i = 0; !rc && i < r->n; i++)
        rc = verify_branch(r, sh, fs, &r->br[i]);
    if (!rc && all) {
        r->current = NULL;
        rc = silt_files_verify_txns(fs, r->ds, on_problem, r, &r->tally);
    }
    if (!rc)
        rc = check_purges(r, fs);
    silt_files_vstate_free(fs);
    silt_verify_shared_free(sh);
    return rc;
}

static int verdict(const vrun *r)
{
    size_t problems = 0;
    for (size_t i = 0; i < r->n; i++)
        problems += r->br[i].problems;
    if (problems == 0) {
        silt_err_clear();
        return 0;
    }
    return silt_err(r->tally.corrupt ? SILT_ECORRUPT : SILT_EVALIDATION, "dataset '%s': verification failed (%zu problem%s)",
                    r->ds->name, problems, problems == 1 ? "" : "s");
}

int silt_dataset_verify_with(silt_verify_branch **out, size_t *n, silt_dataset *ds, const silt_verify_opts *opts,
                             silt_verify_report_fn report, void *ctx)
{
    *out = NULL;
    *n = 0;
    vrun r = {.ds = ds, .report = report, .ctx = ctx, .no_replay = opts && opts->no_replay};
    silt_progress prog = {.phase = "verify", .unit = "blocks"};
    ds->prog = ds->progress ? &prog : NULL;
    int rc = verify(&r, opts && opts->all_branches);
    ds->prog = NULL;
    if (rc < 0) {
        free(r.br);
        return rc;
    }
    *out = r.br;
    *n = r.n;
    return verdict(&r);
}

int silt_dataset_verify_branches(silt_verify_branch **out, size_t *n, silt_dataset *ds, bool all_branches,
                                 silt_verify_report_fn report, void *ctx)
{
    silt_verify_opts o = {.all_branches = all_branches};
    return silt_dataset_verify_with(out, n, ds, &o, report, ctx);
}

typedef struct plain_ctx {
    silt_report_fn report;
    void *ctx;
} plain_ctx;

static void plain_report(void *ctx, const char *branch, const char *line)
{
    (void)branch;
    plain_ctx *p = ctx;
    if (p->report)
        p->report(p->ctx, line);
}

int silt_dataset_verify(silt_dataset *ds, silt_report_fn report, void *ctx)
{
    plain_ctx p = {report, ctx};
    silt_verify_branch *br = NULL;
    size_t n = 0;
    int rc = silt_dataset_verify_branches(&br, &n, ds, false, plain_report, &p);
    free(br);
    return rc;
}
