/* foundry_common.h — what the handlers of the Foundry datasets API v2
 * (foundry_datasets.c, foundry_branches.c, foundry_transactions.c,
 * foundry_files.c) share; implemented in foundry.c, next to the route table.
 *
 * Conventions: a handler fills its srv_resp in every case; the helpers
 * here that return a negative code have filled it with the error envelope
 * already, so the handler only cleans up and returns. JSON built here uses
 * Foundry's field names (research/foundry-api.md §1.4): timestamps UTC with
 * 'Z' and milliseconds, sizes as strings, nextPageToken omitted on the
 * last page.
 */
#ifndef SILT_SERVER_FOUNDRY_COMMON_H
#define SILT_SERVER_FOUNDRY_COMMON_H

#include "http.h"

/* Root folder reported for datasets created without the API (no
 * parentFolderRid recorded). */
#define FY_ROOT_FOLDER "ri.silt.main.folder.root"

/* A dataset of a request, opened on master, with what the JSON needs. */
typedef struct fy_ds {
    silt_workspace *ws;
    silt_dataset *ds;
    char name[128];
    char rid[80];
} fy_ds;

/* Opens dataset `ref` (RID, name or did:odf:; a ref with '@' is refused):
 * absent, invalid or invisible to the token -> 404 DatasetNotFound. */
int fy_open(srv_req *r, srv_resp *out, const char *ref, fy_ds *d);
void fy_close(fy_ds *d);
/* Opens the branch `branch` (Foundry name; NULL = master) of d:
 * InvalidBranchName / BranchNotFound. Caller frees *bds. */
int fy_open_branch(srv_req *r, srv_resp *out, fy_ds *d, const char *branch, silt_dataset **bds);
/* Foundry branch name of a silt branch name (malloc'd; the stored name when
 * it does not decode to valid UTF-8); NULL on ENOMEM. */
char *fy_branch_display(const char *stored);

/* "2024-01-02T03:04:05.678Z" from an RFC 3339 UTC time (fraction padded or
 * cut to milliseconds); out holds 32 bytes. */
void fy_time(const char *rfc3339, char out[32]);
/* The current time in that form. */
void fy_now(char out[32]);

json_t *fy_txn_json(const silt_txn_info *t);
json_t *fy_file_json(const silt_file_entry *e);

/* Pagination: pageSize (default def, 1..max, else InvalidPageSize) and
 * pageToken ("v1." + base64url of the last key of the previous page, else
 * InvalidPageToken): *after (malloc'd) is that key or NULL. */
int fy_page_args(srv_req *r, srv_resp *out, size_t def, size_t max, size_t *size, char **after);
/* A paged listing of the route's dataset: parses pageSize/pageToken (def,
 * max), opens the dataset and calls list(r, out, d, size, after). */
typedef int (*fy_list_fn)(srv_req *r, srv_resp *out, struct fy_ds *d, size_t size, const char *after);
int fy_paged_list(srv_req *r, srv_resp *out, size_t def, size_t max, fy_list_fn list);
/* Adds "nextPageToken" for key `last` to a list response. */
int fy_page_token(json_t *resp, const char *last);

/* Parses the request's JSON body: MissingPostBody / Conjure:InvalidArgument
 * (malformed JSON) / an object was expected. *j new reference. */
int fy_body(srv_req *r, srv_resp *out, json_t **j, bool want_array);

/* InvalidParameterCombination {validCombinations, providedParameters}. */
int fy_bad_combination(srv_resp *out, const char *valid, const char *provided, const char *why);

/* The transaction `rid` of d (any branch): TransactionNotFound (also for a
 * malformed rid). */
int fy_txn_get(srv_req *r, srv_resp *out, fy_ds *d, const char *rid, silt_txn_info *t);
/* TransactionNotOpen {datasetRid, transactionRid, transactionStatus}. */
int fy_not_open(srv_resp *out, fy_ds *d, const silt_txn_info *t);
/* A failed library call on transaction `rid` of d, named from the code and
 * silt_error_last(): OpenTransactionAlreadyExists, TransactionNotOpen,
 * FileAlreadyExists (an APPEND that would overwrite), else srv_lib_error. */
int fy_txn_error(srv_req *r, srv_resp *out, fy_ds *d, const char *rid, const char *branch, int rc);

/* Handlers (one file per resource). */
int fy_dataset_create(srv_req *r, srv_resp *out);
int fy_dataset_get(srv_req *r, srv_resp *out);
int fy_schema_get(srv_req *r, srv_resp *out);
int fy_schema_put(srv_req *r, srv_resp *out);
int fy_schema_batch(srv_req *r, srv_resp *out);
int fy_dataset_transactions(srv_req *r, srv_resp *out);
int fy_branch_create(srv_req *r, srv_resp *out);
int fy_branch_list(srv_req *r, srv_resp *out);
int fy_branch_get(srv_req *r, srv_resp *out);
int fy_branch_delete(srv_req *r, srv_resp *out);
int fy_branch_transactions(srv_req *r, srv_resp *out);
int fy_txn_create(srv_req *r, srv_resp *out);
int fy_txn_get_route(srv_req *r, srv_resp *out);
int fy_txn_commit(srv_req *r, srv_resp *out);
int fy_txn_abort(srv_req *r, srv_resp *out);
int fy_file_upload(srv_req *r, srv_resp *out);
int fy_file_list(srv_req *r, srv_resp *out);
int fy_file_get(srv_req *r, srv_resp *out);
int fy_file_content(srv_req *r, srv_resp *out);
int fy_file_delete(srv_req *r, srv_resp *out);

/* Paging over a sorted list of transactions (newest first): the page after
 * key `after` (a rid; NULL = from the start) as a list response. */
int fy_txn_page(srv_resp *out, const silt_txn_info *v, size_t n, size_t size, const char *after);
/* The answer of a transaction listing: the library error rc, or the
 * transactions v (oldest first, as silt_txn_list gives them; reordered in
 * place) as a page newest first. */
int fy_txn_answer(srv_req *r, srv_resp *out, int rc, silt_txn_info *v, size_t n, size_t size, const char *after);

#endif
