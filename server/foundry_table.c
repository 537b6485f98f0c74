/* foundry_table.c — GET /api/v2/datasets/{datasetRid}/readTable: the table
 * of a dataset branch as an Arrow IPC stream (format=ARROW) or CSV bytes
 * (format=CSV), streamed chunk by chunk from silt_table_stream (the same
 * stream as `silt read-table`). Every error a client can cause is found
 * when the stream opens, before the 200 and the first byte.
 */
#include "foundry_table.h"

#include <stdlib.h>
#include <string.h>

static json_t *rid_param(const char *rid)
{
    return json_pack("{s:s}", "datasetRid", rid);
}

static long pull(void *ctx, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    return silt_table_stream_read(ctx, buf, max);
}

static void release(void *ctx)
{
    silt_table_stream_free(ctx);
}

/* Parses rowLimit: digits only; false otherwise. */
static bool parse_limit(const char *s, int64_t *out)
{
    if (!s || !*s || strlen(s) > 18)
        return false;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    *out = strtoll(s, NULL, 10);
    return true;
}

/* Opens the dataset of the route (a RID, name or did:odf: id) on the
 * requested branch, with the not-found rule for hidden datasets. */
static int open_branch(srv_req *r, srv_resp *out, silt_workspace *ws, const char *branch, silt_dataset **ds)
{
    const char *ref = r->params[0];
    silt_dataset_info info;
    if (strchr(ref, '@') || silt_dataset_open(ds, ws, ref) < 0 || silt_dataset_info_get(&info, *ds) < 0 ||
        !srv_token_sees(r, info.name)) {
        silt_dataset_free(*ds);
        *ds = NULL;
        return srv_foundry_error(out, 0, "NOT_FOUND", "DatasetNotFound", rid_param(ref), "dataset '%s' not found",
                                 ref),
               -1;
    }
    if (!branch || strcmp(branch, "master") == 0)
        return 0;
    size_t n = strlen(info.name) + strlen(branch) + 2;
    char *bref = malloc(n);
    if (!bref)
        return srv_odf_error(out, 500, "out of memory"), -1;
    snprintf(bref, n, "%s@%s", info.name, branch);
    silt_dataset_free(*ds);
    *ds = NULL;
    int rc = silt_dataset_open(ds, ws, bref);
    free(bref);
    if (rc < 0) {
        json_t *p = json_pack("{s:s,s:s}", "datasetRid", ref, "branchName", branch);
        srv_foundry_error(out, 0, "NOT_FOUND", "BranchNotFound", p, "%s", silt_error_last());
        return -1;
    }
    return 0;
}

/* Maps a failure of silt_table_stream_open to the Foundry error. */
static void open_error(srv_resp *out, int rc, const char *rid, const silt_table_opts *o)
{
    const char *msg = silt_error_last();
    if (rc == SILT_ENOTFOUND && strstr(msg, "no tabular schema")) {
        srv_foundry_error(out, 0, "NOT_FOUND", "SchemaNotFound", rid_param(rid), "%s", msg);
    } else if (rc == SILT_ENOTFOUND && strstr(msg, "has no data")) {
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", "DatasetReadNotSupported", rid_param(rid), "%s", msg);
    } else if (rc == SILT_ENOTFOUND && strstr(msg, "transaction")) {
        json_t *p = json_pack("{s:s,s:s}", "datasetRid", rid, "transactionRid",
                              o->end_rid ? o->end_rid : o->start_rid ? o->start_rid : "");
        srv_foundry_error(out, 0, "NOT_FOUND", "TransactionNotFound", p, "%s", msg);
    } else if (rc == SILT_EINVAL && strstr(msg, "column '")) {
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", "ColumnNotFound", rid_param(rid), "%s", msg);
    } else if (rc == SILT_EINVAL || rc == SILT_EUNSUPPORTED) {
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", rc == SILT_EUNSUPPORTED ? "ColumnTypesNotSupported"
                                                                              : "InvalidParameterCombination",
                          rid_param(rid), "%s", msg);
    } else {
        json_t *p = json_pack("{s:s,s:s}", "datasetRid", rid, "message", msg);
        srv_foundry_error(out, 0, "INTERNAL", "ReadTableError", p, "%s", msg);
    }
}

int srv_foundry_read_table(srv_req *r, srv_resp *out)
{
    const char *rid = r->params[0];
    const char *format = srv_arg_get(r, "format");
    silt_table_opts o = {.row_limit = -1};
    if (!format || (strcmp(format, "ARROW") != 0 && strcmp(format, "CSV") != 0)) {
        json_t *p = json_pack("{s:[[s]],s:[s]}", "validCombinations", "format", "providedParameters",
                              format ? "format" : "-");
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidParameterCombination", p,
                                 "readTable needs format=ARROW or format=CSV%s%s%s", format ? " (got '" : "",
                                 format ? format : "", format ? "')" : "");
    }
    o.format = strcmp(format, "CSV") == 0 ? SILT_TABLE_CSV : SILT_TABLE_ARROW;
    const char *limit = srv_arg_get(r, "rowLimit");
    if (limit && !parse_limit(limit, &o.row_limit))
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidParameterCombination", rid_param(rid),
                                 "rowLimit '%s' is not a non-negative whole number", limit);
    o.start_rid = srv_arg_get(r, "startTransactionRid");
    o.end_rid = srv_arg_get(r, "endTransactionRid");
    size_t ncols = 0;
    const char **cols = srv_arg_all(r, "columns", &ncols);
    o.columns = cols;
    o.ncolumns = ncols;

    silt_workspace *ws = NULL;
    silt_dataset *ds = NULL;
    silt_table_stream *ts = NULL;
    if (srv_open_ws(r, out, &ws) < 0) {
        free(cols);
        return -1;
    }
    int rc = open_branch(r, out, ws, srv_arg_get(r, "branchName"), &ds);
    if (rc == 0) {
        rc = silt_table_stream_open(&ts, ds, &o);
        if (rc < 0)
            open_error(out, rc, rid, &o);
    }
    free(cols);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    if (rc < 0)
        return rc;
    return srv_stream(out, 200, "application/octet-stream", pull, ts, release);
}
