/* foundry_files.c — File routes of the Foundry datasets API v2: upload,
 * list, get, content, delete.
 *
 * Views are silt_files_view of the branch (branchName, default master):
 * latest (no rid), as of endTransactionRid, or the range start..end (both
 * given; start alone is InvalidParameterCombination) — the same code as
 * `silt files`. A rid that is not committed on the branch is
 * TransactionNotFound, or TransactionNotCommitted when it is OPEN or
 * ABORTED. Upload bodies arrive in a scratch file (r->body_path) and are
 * staged with silt_txn_put (transactionRid given) or silt_txn_upload (one
 * transaction opened, written and committed: UPDATE unless transactionType
 * says otherwise). Content is streamed from the object file
 * (silt_files_open). Lists are ordered by path; pathPrefix keeps the paths
 * that start with it.
 */
#include "foundry_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_PAGE_DEFAULT 1000
#define FILE_PAGE_MAX 10000

typedef struct view_q {
    const char *branch, *start, *end;
} view_q;

/* A rid of the query that the view refused: TransactionNotFound or
 * TransactionNotCommitted. */
static int bad_rid(srv_req *r, srv_resp *out, fy_ds *d, const char *rid)
{
    silt_txn_info t;
    int rc = fy_txn_get(r, out, d, rid, &t);
    if (rc)
        return rc;
    if (t.status == SILT_TXN_COMMITTED) /* committed, but on another branch */
        return srv_foundry_error(out, 0, "NOT_FOUND", "TransactionNotFound",
                                 json_pack("{s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid),
                                 "transaction %s is not on this branch of %s", rid, d->rid),
               SILT_ENOTFOUND;
    const char *st = silt_txn_status_name(t.status);
    return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "TransactionNotCommitted",
                             json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid,
                                       "transactionStatus", st),
                             "transaction %s is %s: views hold committed transactions only", rid, st),
           SILT_EINVAL;
}

static int open_view(srv_req *r, srv_resp *out, fy_ds *d, view_q *q, silt_view **v)
{
    *v = NULL;
    q->branch = srv_arg_get(r, "branchName");
    q->start = srv_arg_get(r, "startTransactionRid");
    q->end = srv_arg_get(r, "endTransactionRid");
    if (q->start && !q->end)
        return fy_bad_combination(out, "branchName; endTransactionRid; startTransactionRid + endTransactionRid",
                                  "startTransactionRid", "startTransactionRid needs endTransactionRid");
    /* d->ds is the master branch already: no second open for it */
    bool master = !q->branch || strcmp(q->branch, "master") == 0;
    silt_dataset *bds = NULL;
    int rc = master ? 0 : fy_open_branch(r, out, d, q->branch, &bds);
    if (rc)
        return rc;
    rc = silt_files_view(v, master ? d->ds : bds, q->start ? NULL : q->end, q->start, q->start ? q->end : NULL);
    if (rc == SILT_ENOTFOUND) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        const char *bad = q->start && strstr(msg, q->start) ? q->start : q->end;
        rc = bad_rid(r, out, d, bad ? bad : "");
    } else if (rc == SILT_EINVAL && strstr(silt_error_last(), "not a files dataset")) {
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", "DatasetReadNotSupported",
                          json_pack("{s:s}", "datasetRid", d->rid), "%s", silt_error_last());
    } else if (rc) {
        srv_lib_error(r, out, rc, NULL, NULL);
    }
    silt_dataset_free(bds);
    return rc;
}

static int file_missing(srv_resp *out, fy_ds *d, const view_q *q, const char *path)
{
    if (!q->end)
        return srv_foundry_error(out, 0, "NOT_FOUND", "FileNotFoundOnBranch",
                                 json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "branchName",
                                           q->branch ? q->branch : "master", "path", path),
                                 "file '%s' is not in the latest view of branch %s", path,
                                 q->branch ? q->branch : "master"),
               SILT_ENOTFOUND;
    json_t *p = json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "endTransactionRid", q->end, "path", path);
    if (p && q->start)
        json_object_set_new(p, "startTransactionRid", json_string(q->start));
    return srv_foundry_error(out, 0, "NOT_FOUND", "FileNotFoundOnTransactionRange", p,
                             "file '%s' is not in the requested view", path),
           SILT_ENOTFOUND;
}

/* The entry of the URL's path in the query's view (v kept for its life). */
static int find_entry(srv_req *r, srv_resp *out, fy_ds *d, silt_view **v, const silt_file_entry **e)
{
    view_q q;
    *e = NULL;
    int rc = open_view(r, out, d, &q, v);
    if (rc)
        return rc;
    *e = silt_view_find(*v, r->params[1]);
    return *e ? 0 : file_missing(out, d, &q, r->params[1]);
}

int fy_file_get(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    silt_view *v = NULL;
    const silt_file_entry *e = NULL;
    if (!find_entry(r, out, &d, &v, &e))
        srv_json(out, 200, fy_file_json(e));
    silt_view_free(v);
    fy_close(&d);
    return 0;
}

int fy_file_content(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    silt_view *v = NULL;
    const silt_file_entry *e = NULL;
    int fd = -1;
    uint64_t size = 0;
    int rc = find_entry(r, out, &d, &v, &e);
    if (!rc && e->size <= SILT_FILES_SMALL_MAX) { /* from memory: the process caches small objects */
        char *buf = NULL;
        size_t len = 0;
        if ((rc = silt_files_read_small(&buf, &len, d.ds, e)) != 0)
            srv_lib_error(r, out, rc, NULL, NULL);
        else
            srv_bytes_take(out, 200, "application/octet-stream", buf, len);
    } else if (!rc && (rc = silt_files_open(&fd, &size, d.ds, e)) != 0) {
        srv_lib_error(r, out, rc, NULL, NULL);
    } else if (!rc) {
        srv_file(out, 200, "application/octet-stream", fd, size);
    }
    silt_view_free(v);
    fy_close(&d);
    return 0;
}

static int list(srv_req *r, srv_resp *out, fy_ds *d, size_t size, const char *after)
{
    view_q q;
    silt_view *v = NULL;
    int rc = open_view(r, out, d, &q, &v);
    if (rc)
        return rc;
    const char *prefix = srv_arg_get(r, "pathPrefix");
    size_t plen = prefix ? strlen(prefix) : 0;
    json_t *data = json_array(), *resp = json_object();
    size_t k = 0;
    const char *last = NULL;
    for (size_t i = 0; data && resp && i < silt_view_count(v); i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        if ((after && strcmp(e->path, after) <= 0) || (prefix && strncmp(e->path, prefix, plen) != 0))
            continue;
        if (k == size) {
            fy_page_token(resp, last);
            break;
        }
        json_array_append_new(data, fy_file_json(e));
        last = e->path;
        k++;
    }
    if (resp && data)
        json_object_set_new(resp, "data", data);
    else
        json_decref(data);
    srv_json(out, 200, resp);
    silt_view_free(v);
    return 0;
}

int fy_file_list(srv_req *r, srv_resp *out)
{
    return fy_paged_list(r, out, FILE_PAGE_DEFAULT, FILE_PAGE_MAX, list);
}

/* ---- writes --------------------------------------------------------------------- */

static json_t *uploaded_json(const char *path, const char *rid, uint64_t size, const char *time)
{
    char sz[24];
    snprintf(sz, sizeof sz, "%llu", (unsigned long long)size);
    return json_pack("{s:s,s:s,s:s,s:s}", "path", path, "transactionRid", rid, "sizeBytes", sz, "updatedTime", time);
}

/* Upload into an OPEN transaction of the caller. */
static int upload_into(srv_req *r, srv_resp *out, fy_ds *d, const char *rid, const char *path)
{
    if (srv_arg_get(r, "transactionType"))
        return fy_bad_combination(out, "transactionRid; branchName [+ transactionType]", "transactionRid, transactionType",
                                  "transactionType applies to an upload without transactionRid only");
    silt_txn_info t;
    int rc = fy_txn_get(r, out, d, rid, &t);
    if (rc)
        return rc;
    const char *branch = srv_arg_get(r, "branchName");
    char *stored = NULL;
    if (branch && silt_branch_name_encode(&stored, branch) == 0 && strcmp(stored, t.branch) != 0) {
        free(stored);
        return fy_bad_combination(out, "transactionRid; branchName", "transactionRid, branchName",
                                  "the transaction is not on that branch");
    }
    free(stored);
    if (t.status != SILT_TXN_OPEN)
        return fy_not_open(out, d, &t);
    if (t.type == SILT_TXN_DELETE)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidTransactionType",
                                 json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid,
                                           "transactionType", "DELETE"),
                                 "transaction %s is a DELETE transaction: files cannot be uploaded into it", rid),
               SILT_EINVAL;
    rc = silt_txn_put(d->ds, rid, r->body_path, path);
    if (rc)
        return fy_txn_error(r, out, d, rid, branch, rc);
    char now[32];
    fy_now(now);
    return srv_json(out, 200, uploaded_json(path, rid, r->body_size, now));
}

/* Upload that opens, writes and commits its own transaction. */
static int upload_auto(srv_req *r, srv_resp *out, fy_ds *d, const char *path)
{
    const char *tn = srv_arg_get(r, "transactionType"), *branch = srv_arg_get(r, "branchName");
    silt_txn_type type = SILT_TXN_UPDATE;
    if (tn && (silt_txn_type_parse(&type, tn) != 0 || strcmp(tn, silt_txn_type_name(type)) != 0 ||
               type == SILT_TXN_DELETE))
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidTransactionType",
                                 json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", "",
                                           "transactionType", tn),
                                 "an upload's transactionType is APPEND, UPDATE or SNAPSHOT"),
               SILT_EINVAL;
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, d, branch, &bds);
    if (rc)
        return rc;
    silt_put_list *l = NULL;
    const char *in[1] = {r->body_path};
    char *rid = NULL;
    rc = silt_put_list_build(&l, in, 1, NULL, path);
    if (!rc)
        rc = silt_txn_upload(&rid, NULL, bds, type, l);
    silt_put_list_free(l);
    silt_view *v = NULL;
    if (rc)
        fy_txn_error(r, out, d, NULL, branch, rc);
    else if ((rc = silt_files_view(&v, bds, rid, NULL, NULL)) != 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    const silt_file_entry *e = rc ? NULL : silt_view_find(v, path);
    if (!rc) {
        char t[32];
        fy_time(e ? e->time : "", t);
        srv_json(out, 200, uploaded_json(e ? e->path : path, rid, r->body_size, t));
    }
    silt_view_free(v);
    free(rid);
    silt_dataset_free(bds);
    return rc;
}

int fy_file_upload(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    const char *rid = srv_arg_get(r, "transactionRid");
    if (rid)
        upload_into(r, out, &d, rid, r->params[1]);
    else
        upload_auto(r, out, &d, r->params[1]);
    fy_close(&d);
    return 0;
}

/* Removes the path in OPEN DELETE transaction rid. */
static int delete_into(srv_req *r, srv_resp *out, fy_ds *d, const char *rid, const char *path)
{
    silt_txn_info t;
    int rc = fy_txn_get(r, out, d, rid, &t);
    if (rc)
        return rc;
    if (t.status != SILT_TXN_OPEN)
        return fy_not_open(out, d, &t);
    if (t.type != SILT_TXN_DELETE)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidTransactionType",
                                 json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid,
                                           "transactionType", silt_txn_type_name(t.type)),
                                 "transaction %s is %s: files are deleted in DELETE transactions", rid,
                                 silt_txn_type_name(t.type)),
               SILT_EINVAL;
    silt_dataset *bds = NULL;
    char *disp = fy_branch_display(t.branch);
    rc = fy_open_branch(r, out, d, disp ? disp : "master", &bds);
    silt_view *v = NULL;
    if (!rc && (rc = silt_files_view(&v, bds, NULL, NULL, NULL)) != 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    if (!rc && !silt_view_find(v, path)) {
        view_q q = {disp, NULL, NULL};
        rc = file_missing(out, d, &q, path);
    }
    if (!rc && (rc = silt_txn_rm(d->ds, rid, path)) != 0)
        fy_txn_error(r, out, d, rid, disp, rc);
    if (!rc)
        srv_empty(out, 204);
    silt_view_free(v);
    silt_dataset_free(bds);
    free(disp);
    return rc;
}

/* A DELETE transaction of its own on the branch, committed. */
static int delete_auto(srv_req *r, srv_resp *out, fy_ds *d, const char *path)
{
    const char *branch = srv_arg_get(r, "branchName");
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, d, branch, &bds);
    silt_view *v = NULL;
    if (!rc && (rc = silt_files_view(&v, bds, NULL, NULL, NULL)) != 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    if (!rc && !silt_view_find(v, path)) {
        view_q q = {branch, NULL, NULL};
        rc = file_missing(out, d, &q, path);
    }
    char *rid = NULL;
    if (!rc && (rc = silt_txn_start(&rid, bds, SILT_TXN_DELETE)) != 0)
        fy_txn_error(r, out, d, NULL, branch, rc);
    if (!rc && ((rc = silt_txn_rm(bds, rid, path)) != 0 || (rc = silt_txn_commit(bds, rid, NULL)) != 0)) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        silt_txn_abort(bds, rid); /* nothing half-done stays open */
        srv_foundry_error(out, 0, rc == SILT_ECONFLICT ? "CONFLICT" : "INTERNAL",
                          rc == SILT_ECONFLICT ? "Default:Conflict" : "Default:Internal", NULL, "%s", msg);
    }
    if (!rc)
        srv_empty(out, 204);
    free(rid);
    silt_view_free(v);
    silt_dataset_free(bds);
    return rc;
}

int fy_file_delete(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    const char *rid = srv_arg_get(r, "transactionRid");
    if (rid && srv_arg_get(r, "branchName"))
        fy_bad_combination(out, "branchName; transactionRid", "branchName, transactionRid",
                           "give either branchName or transactionRid");
    else if (rid)
        delete_into(r, out, &d, rid, r->params[1]);
    else
        delete_auto(r, out, &d, r->params[1]);
    fy_close(&d);
    return 0;
}
