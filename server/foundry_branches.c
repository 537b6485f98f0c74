/* foundry_branches.c — Branch routes of the Foundry datasets API v2:
 * create, get, list, delete, and the transactions of a branch.
 *
 * Foundry branch names are stored as silt branch names through
 * silt_branch_name_encode ("dev/feature x" is the silt branch
 * dev_2Ffeature_20x); the API shows the decoded name. Branch.transactionRid
 * is the newest OPEN or COMMITTED transaction of the branch (its own or
 * inherited from the parent before the fork), omitted when there is none.
 * A branch created without transactionRid holds no transaction
 * (silt_branch_create_empty); with one, it starts at that committed
 * transaction. Lists are ordered master first, then by name.
 */
#include "foundry_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BRANCH_PAGE_DEFAULT 1000
#define BRANCH_PAGE_MAX 10000
#define TXN_PAGE_DEFAULT 20
#define TXN_PAGE_MAX 50

/* {name, transactionRid?} of an open branch handle. */
static json_t *branch_json(silt_dataset *bds, const char *display, int *rc)
{
    silt_txn_info *v = NULL;
    size_t n = 0;
    *rc = silt_txn_list(&v, &n, bds);
    if (*rc)
        return NULL;
    json_t *j = json_pack("{s:s}", "name", display);
    for (size_t i = n; j && i-- > 0;)
        if (v[i].status != SILT_TXN_ABORTED) {
            json_object_set_new(j, "transactionRid", json_string(v[i].rid));
            break;
        }
    free(v);
    if (!j)
        *rc = SILT_ENOMEM;
    return j;
}

static int branch_reply(srv_req *r, srv_resp *out, fy_ds *d, const char *display, int status)
{
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, d, display, &bds);
    json_t *j = rc ? NULL : branch_json(bds, display, &rc);
    if (j)
        srv_json(out, status, j);
    else if (!rc || rc != SILT_ENOTFOUND)
        srv_lib_error(r, out, rc ? rc : SILT_ENOMEM, NULL, NULL);
    silt_dataset_free(bds);
    return rc;
}

static int create(srv_req *r, srv_resp *out, fy_ds *d, json_t *b)
{
    const char *name = json_string_value(json_object_get(b, "name"));
    json_t *jt = json_object_get(b, "transactionRid");
    const char *txn = json_string_value(jt);
    if (!name || (jt && !json_is_null(jt) && !txn))
        return fy_bad_combination(out, "name[, transactionRid]", name ? "name, transactionRid" : "",
                                  "a branch is created with a 'name' and optionally a 'transactionRid' (strings)");
    char *stored = NULL;
    int rc = silt_branch_name_encode(&stored, name);
    if (rc)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidBranchName",
                                 json_pack("{s:s}", "branchName", name), "%s", silt_error_last()),
               rc;
    silt_txn_info t;
    if (txn && (rc = fy_txn_get(r, out, d, txn, &t)) != 0) {
        free(stored);
        return rc;
    }
    if (txn && t.status != SILT_TXN_COMMITTED) {
        free(stored);
        const char *st = silt_txn_status_name(t.status);
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "TransactionNotCommitted",
                                 json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", txn,
                                           "transactionStatus", st),
                                 "transaction %s is %s: a branch starts at a committed transaction", txn, st),
               SILT_EINVAL;
    }
    silt_dataset *src = NULL;
    if (txn) { /* from the transaction's own branch, where it is committed */
        char *disp = fy_branch_display(t.branch);
        rc = fy_open_branch(r, out, d, disp ? disp : "master", &src);
        free(disp);
        if (rc) {
            free(stored);
            return rc;
        }
    }
    rc = txn ? silt_branch_create(src, stored, NULL, txn) : silt_branch_create_empty(d->ds, stored);
    free(stored);
    silt_dataset_free(src);
    if (rc == SILT_EEXISTS)
        return srv_foundry_error(out, 0, "CONFLICT", "BranchAlreadyExists",
                                 json_pack("{s:s,s:s}", "datasetRid", d->rid, "branchName", name),
                                 "dataset %s already has a branch '%s'", d->rid, name),
               rc;
    if (rc == SILT_EINVAL && strstr(silt_error_last(), "branch name"))
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidBranchName",
                                 json_pack("{s:s}", "branchName", name), "%s", silt_error_last()),
               rc;
    if (rc)
        return srv_lib_error(r, out, rc, NULL, NULL), rc;
    return branch_reply(r, out, d, name, 200);
}

int fy_branch_create(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    json_t *b = NULL;
    if (!fy_body(r, out, &b, false))
        create(r, out, &d, b);
    json_decref(b);
    fy_close(&d);
    return 0;
}

int fy_branch_get(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    branch_reply(r, out, &d, r->params[1], 200);
    fy_close(&d);
    return 0;
}

/* master first, then by (Foundry) name */
static int cmp_name(const char *a, const char *b)
{
    bool ma = strcmp(a, "master") == 0, mb = strcmp(b, "master") == 0;
    if (ma || mb)
        return ma && mb ? 0 : ma ? -1 : 1;
    return strcmp(a, b);
}

static int cmp_disp(const void *x, const void *y) { return cmp_name(*(char *const *)x, *(char *const *)y); }

static int list(srv_req *r, srv_resp *out, fy_ds *d, size_t size, const char *after)
{
    silt_branch_info *bi = NULL;
    size_t n = 0;
    int rc = silt_branch_list(&bi, &n, d->ds);
    char **names = rc ? NULL : calloc(n + 1, sizeof *names);
    if (!rc && !names)
        rc = SILT_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        if (!(names[i] = fy_branch_display(bi[i].name)))
            rc = SILT_ENOMEM;
    free(bi);
    if (!rc)
        qsort(names, n, sizeof *names, cmp_disp);
    json_t *data = rc ? NULL : json_array(), *resp = rc ? NULL : json_object();
    size_t k = 0;
    const char *last = NULL;
    for (size_t i = 0; !rc && i < n; i++) {
        if (after && cmp_name(names[i], after) <= 0)
            continue;
        if (k == size) {
            fy_page_token(resp, last);
            break;
        }
        silt_dataset *bds = NULL;
        if (fy_open_branch(r, out, d, names[i], &bds) == SILT_ENOTFOUND) {
            srv_resp_clear(out); /* deleted meanwhile */
            srv_resp_init(out);
            continue;
        }
        json_t *j = bds ? branch_json(bds, names[i], &rc) : NULL;
        silt_dataset_free(bds);
        if (!j) {
            rc = rc ? rc : SILT_EINTERNAL;
            break;
        }
        json_array_append_new(data, j);
        last = names[i];
        k++;
    }
    if (rc) {
        srv_lib_error(r, out, rc, NULL, NULL);
        json_decref(data);
        json_decref(resp);
    } else {
        json_object_set_new(resp, "data", data);
        srv_json(out, 200, resp);
    }
    for (size_t i = 0; names && i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int fy_branch_list(srv_req *r, srv_resp *out)
{
    return fy_paged_list(r, out, BRANCH_PAGE_DEFAULT, BRANCH_PAGE_MAX, list);
}

int fy_branch_delete(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    const char *name = r->params[1];
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, &d, name, &bds); /* BranchNotFound, InvalidBranchName */
    silt_dataset_free(bds);
    char *stored = NULL;
    if (rc) {
        fy_close(&d);
        return 0;
    }
    if ((rc = silt_branch_name_encode(&stored, name)) == 0)
        rc = silt_branch_delete(d.ds, stored);
    if (!rc)
        srv_empty(out, 204);
    else if (rc == SILT_EINVAL && strcmp(name, "master") == 0)
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidBranchName", json_pack("{s:s}", "branchName", name),
                          "%s", silt_error_last());
    else
        srv_lib_error(r, out, rc, NULL, NULL);
    free(stored);
    fy_close(&d);
    return 0;
}

int fy_branch_transactions(srv_req *r, srv_resp *out)
{
    size_t size;
    char *after = NULL;
    if (fy_page_args(r, out, TXN_PAGE_DEFAULT, TXN_PAGE_MAX, &size, &after))
        return 0;
    fy_ds d;
    silt_dataset *bds = NULL;
    if (!fy_open(r, out, r->params[0], &d) && !fy_open_branch(r, out, &d, r->params[1], &bds)) {
        silt_txn_info *v = NULL;
        size_t n = 0;
        int rc = silt_txn_list(&v, &n, bds);
        fy_txn_answer(r, out, rc, v, n, size, after);
        free(v);
    }
    silt_dataset_free(bds);
    fy_close(&d);
    free(after);
    return 0;
}
