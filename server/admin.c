/* admin.c — silt's own administrative routes under /admin/v1/ (not part of
 * Foundry's API): delete a dataset, retention policies and marks, and gc,
 * over the library calls `silt delete`, `silt retention …` and `silt gc`
 * use (docs/server.md "Admin routes", docs/decisions.md).
 *
 * Scopes: the GETs (policies, marks) need read, like every GET; the rest
 * needs admin. Errors are the Foundry envelope (errorCode, errorName, …).
 * Datasets are opened with fy_open, so a dataset the token may not see is
 * a 404 exactly like an absent one. JSON bodies and answers use the keys of
 * the CLI's --json output (camelCase); branch names on the wire are Foundry
 * names (silt_branch_name_encode / fy_branch_display), as under /api/.
 *
 * Invariants: every request is validated completely (body, dataset,
 * branch, transaction) before the library is asked to change anything, so
 * a refused request leaves every dataset as it was. A dataset with an OPEN
 * transaction that is not abandoned (a client's transaction or a running
 * upload) is not deleted: 409 DatasetHasOpenTransaction, as the library
 * refuses to delete a branch with an OPEN transaction. A gc without names
 * by a dataset-restricted token covers only the datasets the token sees,
 * never the workspace-wide leftovers of .silt/tmp/.
 */
#include "foundry_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEEP_DAYS_MAX 1000000 /* the library's limit (silt_retention_set) */

/* ---- request parsing ------------------------------------------------------- */

static int oom(srv_req *r, srv_resp *out)
{
    srv_lib_error(r, out, SILT_ENOMEM, NULL, NULL);
    return SILT_ENOMEM;
}

static int bad_value(srv_resp *out, const char *param, const char *why)
{
    return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidParameterValue",
                             json_pack("{s:s}", "parameter", param), "%s", why),
           SILT_EINVAL;
}

/* Refuses a key of body object b that is not among the NULL-terminated keys. */
static int only_keys(srv_resp *out, json_t *b, const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach(b, k, v)
    {
        size_t i = 0;
        while (keys[i] && strcmp(keys[i], k) != 0)
            i++;
        if (!keys[i])
            return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "UnknownParameter",
                                     json_pack("{s:s}", "parameter", k), "unknown key '%s' in the JSON body", k),
                   SILT_EINVAL;
    }
    return 0;
}

/* The boolean query argument `key` (absent = false; "true" / "false"). */
static int bool_arg(srv_req *r, srv_resp *out, const char *key, bool *v)
{
    const char *s = srv_arg_get(r, key);
    *v = s && strcmp(s, "true") == 0;
    if (s && !*v && strcmp(s, "false") != 0) {
        char why[160];
        snprintf(why, sizeof why, "%s must be true or false, got '%.64s'", key, s);
        return bad_value(out, key, why);
    }
    return 0;
}

/* ---- DELETE /admin/v1/datasets/{dataset} ----------------------------------- */

/* 409 when d has an OPEN transaction whose owner is alive (or a user's). */
static int refuse_open_txn(srv_req *r, srv_resp *out, fy_ds *d)
{
    silt_txn_info *v = NULL;
    size_t n = 0;
    int rc = silt_txn_list_all(&v, &n, d->ds);
    if (rc < 0) {
        srv_lib_error(r, out, rc, NULL, NULL);
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i].status != SILT_TXN_OPEN || v[i].abandoned)
            continue;
        char *b = fy_branch_display(v[i].branch);
        srv_foundry_error(out, 0, "CONFLICT", "DatasetHasOpenTransaction",
                          json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", v[i].rid, "branchName",
                                    b ? b : v[i].branch),
                          "dataset %s has an open transaction %s on branch '%s': commit or abort it first",
                          d->name, v[i].rid, b ? b : v[i].branch);
        free(b);
        free(v);
        return SILT_ECONFLICT;
    }
    free(v);
    return 0;
}

static int admin_delete(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    if (!refuse_open_txn(r, out, &d)) {
        silt_dataset_free(d.ds);
        d.ds = NULL;
        int rc = silt_dataset_delete(d.ws, d.rid);
        if (rc < 0)
            srv_lib_error(r, out, rc, NULL, NULL);
        else
            srv_empty(out, 204);
    }
    fy_close(&d);
    return 0;
}

/* ---- retention policies ----------------------------------------------------- */

static json_t *branch_or_null(const char *stored)
{
    if (!stored || !*stored)
        return json_null();
    char *b = fy_branch_display(stored);
    json_t *j = b ? json_string(b) : NULL;
    free(b);
    return j;
}

static int policies_answer(srv_req *r, srv_resp *out, fy_ds *d)
{
    silt_retention_policy *p = NULL;
    size_t n = 0;
    int rc = silt_retention_get(&p, &n, d->ds);
    if (rc < 0)
        return srv_lib_error(r, out, rc, NULL, NULL);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, json_pack("{s:o,s:I}", "branch", branch_or_null(p[i].branch), "keepDays",
                                                 (json_int_t)p[i].keep_days))) {
            json_decref(arr);
            arr = NULL;
        }
    free(p);
    json_t *j = arr ? json_pack("{s:s,s:o}", "name", d->name, "policies", arr) : NULL;
    if (!j)
        return srv_lib_error(r, out, SILT_ENOMEM, NULL, NULL);
    return srv_json(out, 200, j);
}

static int admin_retention_get(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    policies_answer(r, out, &d);
    fy_close(&d);
    return 0;
}

/* Validates {"keepDays": N, "branch": "B"?}: days and the stored branch
 * name (*stored malloc'd, NULL = the default), the branch must exist. */
static int policy_body(srv_req *r, srv_resp *out, fy_ds *d, json_t *b, int64_t *days, char **stored)
{
    static const char *const KEYS[] = {"keepDays", "branch", NULL};
    *stored = NULL;
    if (only_keys(out, b, KEYS))
        return SILT_EINVAL;
    json_t *jd = json_object_get(b, "keepDays"), *jb = json_object_get(b, "branch");
    if (!jd)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "MissingParameter",
                                 json_pack("{s:s}", "parameter", "keepDays"),
                                 "the JSON body needs keepDays (a number of days)"),
               SILT_EINVAL;
    if (!json_is_integer(jd) || json_integer_value(jd) < 0 || json_integer_value(jd) > KEEP_DAYS_MAX)
        return bad_value(out, "keepDays", "keepDays must be an integer from 0 to 1000000");
    *days = json_integer_value(jd);
    if (!jb || json_is_null(jb))
        return 0;
    if (!json_is_string(jb))
        return bad_value(out, "branch", "branch must be a string (a branch name) or null");
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, d, json_string_value(jb), &bds); /* InvalidBranchName / BranchNotFound */
    silt_dataset_free(bds);
    if (!rc && silt_branch_name_encode(stored, json_string_value(jb)) < 0)
        rc = oom(r, out);
    return rc;
}

static int admin_retention_put(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    json_t *b = NULL;
    int64_t days = 0;
    char *stored = NULL;
    if (!fy_body(r, out, &b, false) && !policy_body(r, out, &d, b, &days, &stored)) {
        int rc = silt_retention_set(d.ds, stored, days);
        rc = rc < 0 ? rc : 0;
        json_t *j = rc ? NULL
                       : json_pack("{s:s,s:o,s:I}", "name", d.name, "branch", branch_or_null(stored), "keepDays",
                                   (json_int_t)days);
        if (j)
            srv_json(out, 200, j);
        else
            srv_lib_error(r, out, rc ? rc : SILT_ENOMEM, NULL, NULL);
    }
    free(stored);
    json_decref(b);
    fy_close(&d);
    return 0;
}

/* ---- retention marks ---------------------------------------------------------- */

static json_t *mark_json(const silt_retention_mark *m)
{
    return json_pack("{s:s,s:o,s:s,s:s,s:I,s:I}", "rid", m->rid, "branch", branch_or_null(m->branch), "committed",
                     m->committed, "marked", m->marked, "files", (json_int_t)m->num_files, "bytes",
                     (json_int_t)m->bytes);
}

/* {"name", "marks": [...]} of the marks, or the library error rc. */
static int marks_answer(srv_req *r, srv_resp *out, fy_ds *d, int rc, const silt_retention_mark *m, size_t n)
{
    if (rc)
        return srv_lib_error(r, out, rc, NULL, NULL);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, mark_json(&m[i]))) {
            json_decref(arr);
            arr = NULL;
        }
    json_t *j = arr ? json_pack("{s:s,s:o}", "name", d->name, "marks", arr) : NULL;
    if (!j)
        return srv_lib_error(r, out, SILT_ENOMEM, NULL, NULL);
    return srv_json(out, 200, j);
}

static int admin_marks_get(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    silt_retention_mark *m = NULL;
    size_t n = 0;
    int rc = silt_retention_marks(&m, &n, d.ds);
    rc = rc < 0 ? rc : 0;
    marks_answer(r, out, &d, rc, m, n);
    free(m);
    fy_close(&d);
    return 0;
}

static int admin_mark(srv_req *r, srv_resp *out)
{
    bool dry;
    if (bool_arg(r, out, "dryRun", &dry))
        return 0;
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    silt_retention_mark *m = NULL;
    size_t n = 0;
    int rc = silt_retention_apply(&m, &n, d.ds, dry);
    rc = rc < 0 ? rc : 0;
    marks_answer(r, out, &d, rc, m, n);
    free(m);
    fy_close(&d);
    return 0;
}

static int unmark_answer(srv_req *r, srv_resp *out, fy_ds *d, const char *rid)
{
    int n = silt_retention_unmark(d->ds, rid);
    if (n == SILT_ENOTFOUND && rid)
        return srv_foundry_error(out, 0, "NOT_FOUND", "TransactionNotMarked",
                                 json_pack("{s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid), "%s",
                                 silt_error_last());
    if (n < 0)
        return srv_lib_error(r, out, n, NULL, NULL);
    return srv_json(out, 200, json_pack("{s:s,s:i}", "name", d->name, "unmarked", n));
}

static int admin_unmark(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    silt_txn_info t;
    if (!fy_txn_get(r, out, &d, r->params[1], &t)) /* TransactionNotFound */
        unmark_answer(r, out, &d, t.rid);
    fy_close(&d);
    return 0;
}

static int admin_unmark_all(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    unmark_answer(r, out, &d, NULL);
    fy_close(&d);
    return 0;
}

/* ---- POST /admin/v1/gc ------------------------------------------------------------ */

typedef struct gc_req {
    bool dry;
    char **names;     /* NULL-terminated, canonical names (malloc'd) */
    bool leftovers;   /* also the workspace leftovers (no names, unrestricted token) */
} gc_req;

static void gc_req_free(gc_req *g) { silt_strv_free(g->names); }

/* Appends the canonical name of dataset `ref` (404 as everywhere); a name
 * given twice is kept once. */
static int gc_add(srv_req *r, srv_resp *out, gc_req *g, size_t *n, const char *ref)
{
    fy_ds d;
    int rc = fy_open(r, out, ref, &d);
    if (rc)
        return rc;
    for (size_t i = 0; i < *n; i++)
        if (strcmp(g->names[i], d.name) == 0) {
            fy_close(&d);
            return 0;
        }
    if (!(g->names[*n] = strdup(d.name)))
        rc = oom(r, out);
    else
        ++*n;
    fy_close(&d);
    return rc;
}

/* Every dataset the token sees (no names given). */
static int gc_all(srv_req *r, srv_resp *out, gc_req *g)
{
    silt_workspace *ws = NULL;
    int rc = srv_open_ws(r, out, &ws);
    if (!rc && (rc = silt_dataset_list(&g->names, ws)) > 0)
        rc = 0; /* the number of names */
    if (rc < 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    silt_workspace_free(ws);
    size_t k = 0;
    for (size_t i = 0; !rc && g->names[i]; i++) {
        if (srv_token_sees(r, g->names[i]))
            g->names[k++] = g->names[i];
        else
            free(g->names[i]);
    }
    if (!rc)
        g->names[k] = NULL;
    g->leftovers = !r->token.stored || r->token.info.ndatasets == 0;
    return rc;
}

static int gc_parse(srv_req *r, srv_resp *out, gc_req *g)
{
    static const char *const KEYS[] = {"datasets", "dryRun", NULL};
    memset(g, 0, sizeof *g);
    if (!r->body || r->body_len == 0)
        return gc_all(r, out, g);
    json_t *b = NULL;
    int rc = fy_body(r, out, &b, false);
    if (!rc)
        rc = only_keys(out, b, KEYS);
    json_t *dry = rc ? NULL : json_object_get(b, "dryRun"), *ds = rc ? NULL : json_object_get(b, "datasets");
    if (!rc && dry && !json_is_boolean(dry))
        rc = bad_value(out, "dryRun", "dryRun must be true or false");
    if (!rc && ds && !json_is_array(ds))
        rc = bad_value(out, "datasets", "datasets must be an array of dataset names, ids or RIDs");
    for (size_t i = 0; !rc && ds && i < json_array_size(ds); i++)
        if (!json_is_string(json_array_get(ds, i)))
            rc = bad_value(out, "datasets", "datasets must be an array of dataset names, ids or RIDs");
    g->dry = dry && json_is_true(dry);
    if (!rc && (!ds || json_array_size(ds) == 0))
        rc = gc_all(r, out, g);
    else if (!rc && !(g->names = calloc(json_array_size(ds) + 1, sizeof *g->names)))
        rc = oom(r, out);
    for (size_t i = 0, n = 0; !rc && g->names && ds && i < json_array_size(ds); i++)
        rc = gc_add(r, out, g, &n, json_string_value(json_array_get(ds, i)));
    json_decref(b);
    return rc;
}

static void gc_line(void *ctx, const char *line)
{
    json_array_append_new(ctx, json_string(line));
}

/* The report of one dataset (as `silt --json gc`), or NULL with *rc set. */
static json_t *gc_one(silt_workspace *ws, const char *name, bool dry, int *rc)
{
    silt_dataset *ds = NULL;
    json_t *lines = json_array();
    silt_gc_opts o = {.dry_run = dry, .grace_seconds = -1, .report = gc_line, .report_ctx = lines};
    silt_gc_result res;
    memset(&res, 0, sizeof res);
    *rc = !lines ? SILT_ENOMEM : silt_dataset_open(&ds, ws, name);
    if (!*rc && (*rc = silt_gc(&res, ds, &o)) > 0)
        *rc = 0;
    silt_dataset_free(ds);
    json_t *j = *rc ? NULL
                    : json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:O}", "name", name, "dryRun", dry, "transactionsPurged",
                                (json_int_t)res.transactions_purged, "objectsDeleted",
                                (json_int_t)res.objects_deleted, "bytesDeleted", (json_int_t)res.bytes_deleted,
                                "leftoversDeleted", (json_int_t)res.leftovers_deleted, "actions", lines);
    json_decref(lines);
    if (!*rc && !j)
        *rc = SILT_ENOMEM;
    return j;
}

static json_t *gc_workspace(silt_workspace *ws, bool dry, int *rc)
{
    json_t *lines = json_array();
    silt_gc_opts o = {.dry_run = dry, .grace_seconds = -1, .report = gc_line, .report_ctx = lines};
    silt_gc_result res;
    memset(&res, 0, sizeof res);
    *rc = lines ? silt_gc_workspace(&res, ws, &o) : SILT_ENOMEM;
    *rc = *rc < 0 ? *rc : 0;
    json_t *j = *rc ? NULL
                    : json_pack("{s:n,s:b,s:I,s:O}", "name", "dryRun", dry, "leftoversDeleted",
                                (json_int_t)res.leftovers_deleted, "actions", lines);
    json_decref(lines);
    if (!*rc && !j)
        *rc = SILT_ENOMEM;
    return j;
}

static int admin_gc(srv_req *r, srv_resp *out)
{
    gc_req g;
    if (gc_parse(r, out, &g)) {
        gc_req_free(&g);
        return 0;
    }
    silt_workspace *ws = NULL;
    int rc = srv_open_ws(r, out, &ws);
    json_t *data = rc ? NULL : json_array();
    if (!rc && !data)
        rc = oom(r, out);
    for (size_t i = 0; !rc && g.names[i]; i++) {
        json_t *one = gc_one(ws, g.names[i], g.dry, &rc);
        if (!rc && json_array_append_new(data, one))
            rc = SILT_ENOMEM;
        if (rc)
            srv_lib_error(r, out, rc, NULL, NULL);
    }
    if (!rc && g.leftovers) {
        json_t *one = gc_workspace(ws, g.dry, &rc);
        if (!rc && json_array_append_new(data, one))
            rc = SILT_ENOMEM;
        if (rc)
            srv_lib_error(r, out, rc, NULL, NULL);
    }
    if (!rc)
        srv_json(out, 200, json_pack("{s:o}", "data", data));
    else
        json_decref(data);
    silt_workspace_free(ws);
    gc_req_free(&g);
    return 0;
}

/* ---- routes ---------------------------------------------------------------------- */

#define ADS "admin/v1/datasets/:dataset"

static const srv_route ROUTES[] = {
    {SRV_DELETE, ADS, admin_delete, SRV_NEED_ADMIN, "DeleteDatasetPermissionDenied", SRV_BODY_NONE},
    {SRV_GET, ADS "/retention", admin_retention_get, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_PUT, ADS "/retention", admin_retention_put, SRV_NEED_ADMIN, "PutRetentionPolicyPermissionDenied",
     SRV_BODY_JSON},
    {SRV_POST, ADS "/retention/mark", admin_mark, SRV_NEED_ADMIN, "ApplyRetentionPermissionDenied", SRV_BODY_NONE},
    {SRV_GET, ADS "/retention/marks", admin_marks_get, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_DELETE, ADS "/retention/marks", admin_unmark_all, SRV_NEED_ADMIN, "UnmarkTransactionPermissionDenied",
     SRV_BODY_NONE},
    {SRV_DELETE, ADS "/retention/marks/:txn", admin_unmark, SRV_NEED_ADMIN, "UnmarkTransactionPermissionDenied",
     SRV_BODY_NONE},
    {SRV_POST, "admin/v1/gc", admin_gc, SRV_NEED_ADMIN, "GarbageCollectPermissionDenied", SRV_BODY_JSON},
};

const srv_route_table SRV_ADMIN_ROUTES = {SRV_FAMILY_FOUNDRY, "admin", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
