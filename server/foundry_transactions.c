/* foundry_transactions.c — Transaction routes of the Foundry datasets API
 * v2: create (?branchName=, default master), get, commit, abort; the
 * silt transactions of silt_txn_start / _get / _commit / _abort, so the CLI
 * (`silt txn list`) sees exactly what the API did. A transaction RID is
 * looked up in the dataset of the URL only (another dataset's RID is
 * TransactionNotFound).
 */
#include "foundry_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reply(srv_req *r, srv_resp *out, fy_ds *d, const char *rid)
{
    silt_txn_info t;
    int rc = fy_txn_get(r, out, d, rid, &t);
    if (!rc)
        srv_json(out, 200, fy_txn_json(&t));
    return rc;
}

static int create(srv_req *r, srv_resp *out, fy_ds *d)
{
    json_t *b = NULL;
    if (fy_body(r, out, &b, false))
        return SILT_EINVAL;
    const char *type_name = json_string_value(json_object_get(b, "transactionType"));
    silt_txn_type type;
    int rc = 0;
    if (!type_name || silt_txn_type_parse(&type, type_name) != 0 || strcmp(type_name, silt_txn_type_name(type)) != 0)
        rc = (srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidTransactionType",
                                json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", "",
                                          "transactionType", type_name ? type_name : ""),
                                "transactionType must be APPEND, UPDATE, SNAPSHOT or DELETE"),
              SILT_EINVAL);
    const char *branch = srv_arg_get(r, "branchName");
    silt_dataset *bds = NULL;
    if (!rc)
        rc = fy_open_branch(r, out, d, branch, &bds);
    char *rid = NULL;
    if (!rc && (rc = silt_txn_start(&rid, bds, type)) != 0)
        fy_txn_error(r, out, d, NULL, branch, rc);
    if (!rc)
        rc = reply(r, out, d, rid);
    free(rid);
    silt_dataset_free(bds);
    json_decref(b);
    return rc;
}

int fy_txn_create(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    create(r, out, &d);
    fy_close(&d);
    return 0;
}

int fy_txn_get_route(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    reply(r, out, &d, r->params[1]);
    fy_close(&d);
    return 0;
}

/* commit (true) or abort (false) of the URL's transaction */
static int close_txn(srv_req *r, srv_resp *out, bool commit)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    const char *rid = r->params[1];
    silt_txn_info t;
    int rc = fy_txn_get(r, out, &d, rid, &t);
    if (!rc && t.status != SILT_TXN_OPEN)
        rc = fy_not_open(out, &d, &t);
    if (!rc && (rc = commit ? silt_txn_commit(d.ds, rid, NULL) : silt_txn_abort(d.ds, rid)) != 0) {
        char *disp = fy_branch_display(t.branch);
        fy_txn_error(r, out, &d, rid, disp, rc);
        free(disp);
    }
    if (!rc)
        reply(r, out, &d, rid);
    fy_close(&d);
    return 0;
}

int fy_txn_commit(srv_req *r, srv_resp *out) { return close_txn(r, out, true); }

int fy_txn_abort(srv_req *r, srv_resp *out) { return close_txn(r, out, false); }
