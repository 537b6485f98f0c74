/* foundry.c — the Foundry Platform API v2 datasets surface under /api/v2/
 * (research/foundry-api.md §1.3–1.6, docs/server.md): its route table and
 * the helpers the resource files share (foundry_common.h): opening a
 * dataset / branch of a request, timestamps, JSON of transactions and
 * files, page tokens, request bodies, and the Foundry names of errors.
 *
 * Routes are matched in order: the `files/ *path/upload` and `…/content`
 * patterns come before `files/ *path`, so a raw-slash path ending in
 * /content reads content; the official client %2F-encodes paths, so its
 * whole path is one segment and never ambiguous.
 */
#include "foundry_common.h"
#include "foundry_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- datasets and branches of a request ----------------------------------- */

static int not_found(srv_resp *out, const char *ref)
{
    return srv_foundry_error(out, 0, "NOT_FOUND", "DatasetNotFound", json_pack("{s:s}", "datasetRid", ref),
                             "dataset %s not found", ref);
}

int fy_open(srv_req *r, srv_resp *out, const char *ref, fy_ds *d)
{
    memset(d, 0, sizeof *d);
    if (strchr(ref, '@'))
        return not_found(out, ref), SILT_ENOTFOUND;
    int rc = srv_open_ws(r, out, &d->ws);
    if (rc)
        return rc;
    rc = silt_dataset_open(&d->ds, d->ws, ref); /* reads the head: info_as_read does not again */
    silt_dataset_info info;
    if (!rc)
        silt_dataset_info_as_read(&info, d->ds);
    if (rc == SILT_ENOTFOUND || rc == SILT_EINVAL || (!rc && !srv_token_sees(r, info.name))) {
        fy_close(d);
        return not_found(out, ref), SILT_ENOTFOUND;
    }
    if (rc) {
        srv_lib_error(r, out, rc, NULL, NULL);
        fy_close(d);
        return rc;
    }
    snprintf(d->name, sizeof d->name, "%s", info.name);
    snprintf(d->rid, sizeof d->rid, "%s", info.rid);
    if (r->method == SRV_GET || r->method == SRV_HEAD)
        silt_dataset_pin(d->ds); /* read-only: the head read at open serves the whole request */
    return 0;
}

void fy_close(fy_ds *d)
{
    silt_dataset_free(d->ds);
    silt_workspace_free(d->ws);
    d->ds = NULL;
    d->ws = NULL;
}

int fy_open_branch(srv_req *r, srv_resp *out, fy_ds *d, const char *branch, silt_dataset **bds)
{
    *bds = NULL;
    if (!branch)
        branch = "master";
    char *stored = NULL;
    int rc = silt_branch_name_encode(&stored, branch);
    if (rc)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidBranchName",
                                 json_pack("{s:s}", "branchName", branch), "%s", silt_error_last()),
               rc;
    char ref[300];
    snprintf(ref, sizeof ref, "%s@%s", d->name, stored);
    free(stored);
    rc = silt_dataset_open(bds, d->ws, ref);
    if (rc == SILT_ENOTFOUND || rc == SILT_EINVAL)
        return srv_foundry_error(out, 0, "NOT_FOUND", "BranchNotFound",
                                 json_pack("{s:s,s:s}", "datasetRid", d->rid, "branchName", branch),
                                 "dataset %s has no branch '%s'", d->rid, branch),
               SILT_ENOTFOUND;
    if (rc)
        srv_lib_error(r, out, rc, NULL, NULL);
    return rc;
}

char *fy_branch_display(const char *stored)
{
    char *s = NULL;
    if (silt_branch_name_decode(&s, stored) < 0)
        return NULL;
    json_t *probe = json_string(s); /* NULL for invalid UTF-8 */
    if (!probe) {
        free(s);
        return strdup(stored);
    }
    json_decref(probe);
    return s;
}

/* ---- JSON ------------------------------------------------------------------- */

void fy_time(const char *t, char out[32])
{
    /* YYYY-MM-DDTHH:MM:SS[.f+](Z|±hh:mm): silt writes UTC with Z */
    size_t n = strlen(t);
    if (n < 19) {
        snprintf(out, 32, "%s", t);
        return;
    }
    char ms[4] = "000";
    size_t i = 19;
    if (t[i] == '.') {
        i++;
        for (size_t k = 0; k < 3 && t[i] >= '0' && t[i] <= '9'; k++, i++)
            ms[k] = t[i];
        while (t[i] >= '0' && t[i] <= '9')
            i++;
    }
    snprintf(out, 32, "%.19s.%sZ", t, ms);
}

void fy_now(char out[32])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char day[24];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 32, "%.19s.%03dZ", day, (int)(ts.tv_nsec / 1000000) % 1000);
}

json_t *fy_txn_json(const silt_txn_info *t)
{
    char created[32];
    fy_time(t->created, created);
    json_t *j = json_pack("{s:s,s:s,s:s,s:s}", "rid", t->rid, "transactionType", silt_txn_type_name(t->type),
                          "status", silt_txn_status_name(t->status), "createdTime", created);
    if (j && t->status != SILT_TXN_OPEN && t->closed[0]) {
        char closed[32];
        fy_time(t->closed, closed);
        json_object_set_new(j, "closedTime", json_string(closed));
    }
    return j;
}

json_t *fy_file_json(const silt_file_entry *e)
{
    char size[24], t[32];
    snprintf(size, sizeof size, "%llu", (unsigned long long)e->size);
    fy_time(e->time, t);
    return json_pack("{s:s,s:s,s:s,s:s}", "path", e->path, "transactionRid", e->rid, "sizeBytes", size,
                     "updatedTime", t);
}

/* ---- page tokens -------------------------------------------------------------- */

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64url(const unsigned char *s, size_t n)
{
    char *o = malloc(4 * ((n + 2) / 3) + 1);
    if (!o)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        o[k++] = B64[v >> 18 & 63];
        o[k++] = B64[v >> 12 & 63];
        if (i + 1 < n)
            o[k++] = B64[v >> 6 & 63];
        if (i + 2 < n)
            o[k++] = B64[v & 63];
    }
    o[k] = '\0';
    return o;
}

/* Decodes unpadded base64url; NULL when malformed (or empty). */
static char *b64url_decode(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n % 4 == 1)
        return NULL;
    char *o = malloc(n * 3 / 4 + 2);
    if (!o)
        return NULL;
    size_t k = 0;
    unsigned acc = 0, bits = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = strchr(B64, s[i]);
        if (!p || !s[i]) {
            free(o);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)(p - B64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            o[k++] = (char)(acc >> bits & 0xff);
        }
    }
    o[k] = '\0';
    if (strlen(o) != k) { /* a NUL byte inside */
        free(o);
        return NULL;
    }
    return o;
}

int fy_page_token(json_t *resp, const char *last)
{
    char *b = b64url((const unsigned char *)last, strlen(last));
    if (!b)
        return SILT_ENOMEM;
    size_t n = strlen(b) + 4;
    char *t = malloc(n);
    if (t)
        snprintf(t, n, "v1.%s", b);
    free(b);
    int rc = t && json_object_set_new(resp, "nextPageToken", json_string(t)) == 0 ? 0 : SILT_ENOMEM;
    free(t);
    return rc;
}

int fy_paged_list(srv_req *r, srv_resp *out, size_t def, size_t max, fy_list_fn list)
{
    size_t size;
    char *after = NULL;
    if (fy_page_args(r, out, def, max, &size, &after))
        return 0;
    fy_ds d;
    if (!fy_open(r, out, r->params[0], &d)) {
        list(r, out, &d, size, after);
        fy_close(&d);
    }
    free(after);
    return 0;
}

int fy_page_args(srv_req *r, srv_resp *out, size_t def, size_t max, size_t *size, char **after)
{
    *after = NULL;
    *size = def;
    const char *ps = srv_arg_get(r, "pageSize"), *pt = srv_arg_get(r, "pageToken");
    if (ps) {
        char *end;
        long long v = strtoll(ps, &end, 10);
        if (!*ps || *end || v <= 0 || (unsigned long long)v > max)
            return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidPageSize", json_pack("{s:s}", "pageSize", ps),
                                     "pageSize must be an integer from 1 to %zu, got '%s'", max, ps),
                   SILT_EINVAL;
        *size = (size_t)v;
    }
    if (pt && *pt) {
        char *key = strncmp(pt, "v1.", 3) == 0 ? b64url_decode(pt + 3) : NULL;
        json_t *probe = key ? json_string(key) : NULL; /* valid UTF-8 */
        if (!probe) {
            free(key);
            return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidPageToken",
                                     json_pack("{s:s}", "pageToken", pt),
                                     "pageToken '%s' is not a token this server gave out", pt),
                   SILT_EINVAL;
        }
        json_decref(probe);
        *after = key;
    }
    return 0;
}

int fy_txn_answer(srv_req *r, srv_resp *out, int rc, silt_txn_info *v, size_t n, size_t size, const char *after)
{
    if (rc)
        return srv_lib_error(r, out, rc, NULL, NULL);
    for (size_t i = 0; i < n / 2; i++) { /* oldest first -> newest first */
        silt_txn_info t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    return fy_txn_page(out, v, n, size, after);
}

int fy_txn_page(srv_resp *out, const silt_txn_info *v, size_t n, size_t size, const char *after)
{
    size_t start = 0;
    if (after) {
        while (start < n && strcmp(v[start].rid, after) != 0)
            start++;
        if (start == n) {
            char *t = b64url((const unsigned char *)after, strlen(after));
            srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidPageToken",
                              json_pack("{s:s+}", "pageToken", "v1.", t ? t : ""),
                              "pageToken names no transaction of this list");
            free(t);
            return SILT_EINVAL;
        }
        start++;
    }
    json_t *data = json_array(), *resp = json_object();
    for (size_t i = start; data && i < n && i < start + size; i++)
        json_array_append_new(data, fy_txn_json(&v[i]));
    if (resp && data && start + size < n)
        fy_page_token(resp, v[start + size - 1].rid);
    if (resp)
        json_object_set_new(resp, "data", data ? data : json_array());
    else
        json_decref(data);
    return srv_json(out, 200, resp);
}

/* ---- bodies and common errors ------------------------------------------------- */

int fy_body(srv_req *r, srv_resp *out, json_t **j, bool want_array)
{
    *j = NULL;
    if (!r->body || r->body_len == 0)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "MissingPostBody", NULL,
                                 "this request needs a JSON body"),
               SILT_EINVAL;
    json_error_t e;
    *j = json_loadb(r->body, r->body_len, JSON_REJECT_DUPLICATES, &e);
    if (!*j)
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "Conjure:InvalidArgument", NULL,
                                 "invalid JSON body: %s (line %d, column %d)", e.text, e.line, e.column),
               SILT_EINVAL;
    if (want_array ? !json_is_array(*j) : !json_is_object(*j)) {
        json_decref(*j);
        *j = NULL;
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "Conjure:InvalidArgument", NULL,
                                 "the JSON body must be an %s", want_array ? "array" : "object"),
               SILT_EINVAL;
    }
    return 0;
}

int fy_bad_combination(srv_resp *out, const char *valid, const char *provided, const char *why)
{
    json_t *p = json_pack("{s:s,s:s}", "validCombinations", valid, "providedParameters", provided);
    return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidParameterCombination", p, "%s", why), SILT_EINVAL;
}

int fy_txn_get(srv_req *r, srv_resp *out, fy_ds *d, const char *rid, silt_txn_info *t)
{
    int rc = silt_txn_get(t, d->ds, rid);
    if (rc == SILT_ENOTFOUND || rc == SILT_EINVAL)
        return srv_foundry_error(out, 0, "NOT_FOUND", "TransactionNotFound",
                                 json_pack("{s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid),
                                 "transaction %s not found in dataset %s", rid, d->rid),
               SILT_ENOTFOUND;
    if (rc)
        srv_lib_error(r, out, rc, NULL, NULL);
    return rc;
}

int fy_not_open(srv_resp *out, fy_ds *d, const silt_txn_info *t)
{
    const char *st = silt_txn_status_name(t->status);
    return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "TransactionNotOpen",
                             json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", t->rid,
                                       "transactionStatus", st),
                             "transaction %s is %s", t->rid, st),
           SILT_EINVAL;
}

/* The quoted path of "… would overwrite 'p' …" (into buf), or "". */
static const char *quoted(const char *msg, char *buf, size_t cap)
{
    const char *a = strchr(msg, '\'');
    const char *b = a ? strchr(a + 1, '\'') : NULL;
    snprintf(buf, cap, "%.*s", a && b ? (int)(b - a - 1) : 0, a ? a + 1 : "");
    return buf;
}

int fy_txn_error(srv_req *r, srv_resp *out, fy_ds *d, const char *rid, const char *branch, int rc)
{
    const char *msg = silt_error_last();
    char path[1100];
    if (rc == SILT_ECONFLICT && strstr(msg, "already has an open transaction"))
        return srv_foundry_error(out, 0, "CONFLICT", "OpenTransactionAlreadyExists",
                                 json_pack("{s:s,s:s}", "datasetRid", d->rid, "branchName", branch ? branch : "master"),
                                 "%s", msg),
               rc;
    if (rc == SILT_ECONFLICT && strstr(msg, "TransactionNotOpen") && rid) {
        silt_txn_info t;
        if (silt_txn_get(&t, d->ds, rid) == 0)
            return fy_not_open(out, d, &t), rc;
    }
    if (rc == SILT_EEXISTS && strstr(msg, "would overwrite"))
        return srv_foundry_error(out, 0, "NOT_FOUND", "FileAlreadyExists",
                                 json_pack("{s:s,s:s,s:s}", "datasetRid", d->rid, "transactionRid", rid ? rid : "",
                                           "path", quoted(strstr(msg, "would overwrite"), path, sizeof path)),
                                 "%s", msg),
               rc;
    if (rc == SILT_EINVAL && strstr(msg, "invalid logical path"))
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidFilePath",
                                 json_pack("{s:s}", "filePath", quoted(msg, path, sizeof path)), "%s", msg),
               rc;
    return srv_lib_error(r, out, rc, NULL, NULL), rc;
}

/* ---- routes ----------------------------------------------------------------------- */

#define DS "api/v2/datasets/:rid"

static const srv_route ROUTES[] = {
    {SRV_POST, "api/v2/datasets", fy_dataset_create, SRV_NEED_WRITE, "CreateDatasetPermissionDenied", SRV_BODY_JSON},
    {SRV_POST, "api/v2/datasets/getSchemaBatch", fy_schema_batch, SRV_NEED_READ, NULL, SRV_BODY_JSON},
    {SRV_GET, DS, fy_dataset_get, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, DS "/readTable", srv_foundry_read_table, SRV_NEED_READ, "ReadTableDatasetPermissionDenied",
     SRV_BODY_NONE},
    {SRV_GET, DS "/getSchema", fy_schema_get, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_PUT, DS "/putSchema", fy_schema_put, SRV_NEED_WRITE, "PutDatasetSchemaPermissionDenied", SRV_BODY_JSON},
    {SRV_GET, DS "/transactions", fy_dataset_transactions, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_POST, DS "/transactions", fy_txn_create, SRV_NEED_WRITE, "CreateTransactionPermissionDenied", SRV_BODY_JSON},
    {SRV_GET, DS "/transactions/:txn", fy_txn_get_route, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_POST, DS "/transactions/:txn/commit", fy_txn_commit, SRV_NEED_WRITE, "CommitTransactionPermissionDenied",
     SRV_BODY_NONE},
    {SRV_POST, DS "/transactions/:txn/abort", fy_txn_abort, SRV_NEED_WRITE, "AbortTransactionPermissionDenied",
     SRV_BODY_NONE},
    {SRV_GET, DS "/branches", fy_branch_list, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_POST, DS "/branches", fy_branch_create, SRV_NEED_WRITE, "CreateBranchPermissionDenied", SRV_BODY_JSON},
    {SRV_GET, DS "/branches/:branch", fy_branch_get, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_DELETE, DS "/branches/:branch", fy_branch_delete, SRV_NEED_WRITE, "DeleteBranchPermissionDenied",
     SRV_BODY_NONE},
    {SRV_GET, DS "/branches/:branch/transactions", fy_branch_transactions, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, DS "/files", fy_file_list, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_POST, DS "/files/*path/upload", fy_file_upload, SRV_NEED_WRITE, "UploadFilePermissionDenied",
     SRV_BODY_FILE},
    {SRV_GET, DS "/files/*path/content", fy_file_content, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, DS "/files/*path", fy_file_get, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_DELETE, DS "/files/*path", fy_file_delete, SRV_NEED_WRITE, "DeleteFilePermissionDenied", SRV_BODY_NONE},
};

const srv_route_table SRV_FOUNDRY_ROUTES = {SRV_FAMILY_FOUNDRY, "api", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
