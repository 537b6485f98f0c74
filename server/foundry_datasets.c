/* foundry_datasets.c — Dataset routes of the Foundry datasets API v2:
 * create, get, getSchema, putSchema, getSchemaBatch, transactions.
 *
 * A dataset created here is a silt files dataset; its parentFolderRid is
 * recorded (silt_dataset_folder_set) and reported back, FY_ROOT_FOLDER for
 * datasets created otherwise. Schemas are silt's tabular schemas of files
 * datasets (silt_files_schema_set_text / silt_files_schema_foundry):
 * dataframeReader CSV and PARQUET map to the formats csv and parquet; AVRO
 * and DATASOURCE are not supported (InvalidSchema). versionId is the UUID
 * formed from the first 16 bytes of the digest of the block that set the
 * schema, so it changes with every putSchema and is stable otherwise.
 */
#include "foundry_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* folder: the recorded parentFolderRid, NULL for none (borrowed) */
static json_t *dataset_json(const fy_ds *d, const char *folder)
{
    return json_pack("{s:s,s:s,s:s}", "rid", d->rid, "name", d->name, "parentFolderRid",
                     folder ? folder : FY_ROOT_FOLDER);
}

/* Appends "s" as a JSON string; false when s holds a byte jansson would
 * have to judge (control characters, quotes, non-ASCII) or out is full. */
static bool put_plain_string(char *out, size_t cap, size_t *n, const char *s)
{
    size_t l = strlen(s);
    if (*n + l + 2 >= cap)
        return false;
    for (size_t i = 0; i < l; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f || s[i] == '"' || s[i] == '\\')
            return false;
    out[(*n)++] = '"';
    memcpy(out + *n, s, l);
    *n += l;
    out[(*n)++] = '"';
    return true;
}

/* The Dataset answer (GET, on every request): written directly when every
 * value is plain ASCII (rid, name and folder RIDs always are: their
 * grammars), the same bytes jansson writes; otherwise through jansson. */
static void dataset_answer(srv_resp *out, fy_ds *d)
{
    char *folder = NULL;
    silt_dataset_folder_get(&folder, d->ds);
    char text[1024];
    size_t n = 0;
    bool ok = true;
    const char *keys[] = {"{\"rid\":", ",\"name\":", ",\"parentFolderRid\":"};
    const char *vals[] = {d->rid, d->name, folder ? folder : FY_ROOT_FOLDER};
    for (size_t i = 0; ok && i < 3; i++) {
        size_t kl = strlen(keys[i]);
        ok = n + kl < sizeof text;
        if (ok) {
            memcpy(text + n, keys[i], kl);
            n += kl;
            ok = put_plain_string(text, sizeof text, &n, vals[i]);
        }
    }
    if (ok && n + 1 < sizeof text) {
        text[n++] = '}';
        srv_bytes(out, 200, "application/json", text, n);
    } else {
        srv_json(out, 200, dataset_json(d, folder));
    }
    free(folder);
}

int fy_dataset_create(srv_req *r, srv_resp *out)
{
    json_t *b = NULL;
    if (fy_body(r, out, &b, false))
        return 0;
    const char *name = json_string_value(json_object_get(b, "name"));
    const char *folder = json_string_value(json_object_get(b, "parentFolderRid"));
    if (!name || !folder) {
        fy_bad_combination(out, "name, parentFolderRid", name ? "name" : folder ? "parentFolderRid" : "",
                           "a dataset is created with both 'name' and 'parentFolderRid' (strings)");
        json_decref(b);
        return 0;
    }
    if (!srv_token_sees(r, name)) {
        srv_foundry_error(out, 0, "PERMISSION_DENIED", "CreateDatasetPermissionDenied",
                          json_pack("{s:s,s:s}", "parentFolderRid", folder, "name", name),
                          "the token '%s' may not create dataset '%s'", r->token.name, name);
        json_decref(b);
        return 0;
    }
    fy_ds d = {0};
    int rc = srv_open_ws(r, out, &d.ws);
    if (!rc)
        rc = silt_files_create(&d.ds, d.ws, name);
    if (rc == SILT_EEXISTS) {
        srv_foundry_error(out, 0, "CONFLICT", "ResourceNameAlreadyExists",
                          json_pack("{s:s,s:s}", "parentFolderRid", folder, "resourceName", name), "%s",
                          silt_error_last());
    } else if (rc == SILT_EINVAL) {
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidDisplayName", json_pack("{s:s}", "displayName", name),
                          "%s", silt_error_last());
    } else if (rc && d.ws) {
        srv_lib_error(r, out, rc, NULL, NULL);
    }
    if (!rc && (rc = silt_dataset_folder_set(d.ds, folder)) != 0) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        silt_dataset_free(d.ds);
        d.ds = NULL;
        silt_dataset_delete(d.ws, name); /* nothing half-made stays */
        srv_foundry_error(out, 0, "NOT_FOUND", "FolderNotFound", json_pack("{s:s}", "folderRid", folder), "%s", msg);
    }
    silt_dataset_info info;
    if (!rc && (rc = silt_dataset_info_get(&info, d.ds)) != 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    if (!rc) {
        snprintf(d.name, sizeof d.name, "%s", info.name);
        snprintf(d.rid, sizeof d.rid, "%s", info.rid);
        dataset_answer(out, &d);
    }
    fy_close(&d);
    json_decref(b);
    return 0;
}

int fy_dataset_get(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    dataset_answer(out, &d);
    fy_close(&d);
    return 0;
}

/* ---- schemas ------------------------------------------------------------------ */

/* versionId from a block multihash text "f1620<64 hex>". */
static void version_id(const char *block, char out[37])
{
    const char *h = strlen(block) >= 37 ? block + 5 : "00000000000000000000000000000000";
    snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", h, h + 8, h + 12, h + 16, h + 20);
}

/* The newest COMMITTED transaction of a branch, into rid ("" when none). */
static int latest_commit(silt_dataset *bds, char rid[64])
{
    rid[0] = '\0';
    silt_txn_info *v = NULL;
    size_t n = 0;
    int rc = silt_txn_list(&v, &n, bds);
    for (size_t i = n; !rc && i-- > 0;)
        if (v[i].status == SILT_TXN_COMMITTED) {
            snprintf(rid, 64, "%s", v[i].rid);
            break;
        }
    free(v);
    return rc;
}

/* GetDatasetSchemaResponse of a branch (Foundry name `branch`) at `end`
 * (NULL: latest). Errors fill out (quiet: only the code, for the batch). */
static int schema_response(srv_req *r, srv_resp *out, fy_ds *d, const char *branch, const char *end,
                           const char *want_version, json_t **resp)
{
    *resp = NULL;
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, d, branch, &bds);
    if (rc)
        return rc;
    char *text = NULL;
    rc = silt_files_schema_foundry(&text, bds, end);
    char latest[64] = "";
    if (!rc && !end)
        rc = latest_commit(bds, latest);
    json_t *j = rc ? NULL : json_loads(text, 0, NULL);
    char vid[37] = "";
    if (j)
        version_id(json_string_value(json_object_get(j, "block")), vid);
    if (!rc && j && want_version && strcmp(want_version, vid) != 0)
        rc = SILT_ENOTFOUND;
    if (rc == SILT_ENOTFOUND || (rc == SILT_EINVAL && strstr(silt_error_last(), "not a files dataset"))) {
        json_t *p = json_pack("{s:s,s:s}", "datasetRid", d->rid, "branchName", branch ? branch : "master");
        if (end)
            json_object_set_new(p, "transactionRid", json_string(end));
        srv_foundry_error(out, 0, "NOT_FOUND", "SchemaNotFound", p, "%s",
                          want_version && !rc ? "no schema of that versionId" : silt_error_last());
    } else if (rc) {
        srv_lib_error(r, out, rc, NULL, NULL);
    } else if (!j) {
        rc = SILT_ENOMEM;
        srv_lib_error(r, out, rc, NULL, NULL);
    }
    if (!rc) {
        json_t *schema = json_pack("{s:O}", "fieldSchemaList", json_object_get(j, "fieldSchemaList"));
        *resp = json_pack("{s:s,s:o,s:s}", "branchName", branch ? branch : "master", "schema", schema, "versionId",
                          vid);
        const char *e = end ? end : latest;
        if (*resp && *e)
            json_object_set_new(*resp, "endTransactionRid", json_string(e));
        if (!*resp)
            rc = SILT_ENOMEM;
    }
    json_decref(j);
    free(text);
    silt_dataset_free(bds);
    return rc;
}

int fy_schema_get(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    json_t *resp = NULL;
    if (!schema_response(r, out, &d, srv_arg_get(r, "branchName"), srv_arg_get(r, "endTransactionRid"),
                         srv_arg_get(r, "versionId"), &resp))
        srv_json(out, 200, resp);
    fy_close(&d);
    return 0;
}

/* The silt format of a Foundry dataframeReader (PARQUET, the default, CSV
 * and AVRO), or NULL (error filled: DATASOURCE and others). */
static const char *reader_format(srv_resp *out, const char *reader)
{
    if (!reader || strcmp(reader, "PARQUET") == 0)
        return "parquet";
    if (strcmp(reader, "CSV") == 0)
        return "csv";
    if (strcmp(reader, "AVRO") == 0)
        return "avro";
    srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidSchema",
                      json_pack("{s:s,s:s}", "errorType", "UNSUPPORTED_DATAFRAME_READER", "message", reader),
                      "dataframeReader %s is not supported by silt (use AVRO, CSV or PARQUET)", reader);
    return NULL;
}

static int put_schema(srv_req *r, srv_resp *out, fy_ds *d, json_t *b)
{
    const char *branch = json_string_value(json_object_get(b, "branchName"));
    const char *end = json_string_value(json_object_get(b, "endTransactionRid"));
    json_t *schema = json_object_get(b, "schema");
    const char *fmt = reader_format(out, json_string_value(json_object_get(b, "dataframeReader")));
    if (!fmt)
        return SILT_EINVAL;
    if (!json_is_array(json_object_get(schema, "fieldSchemaList")))
        return srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidSchema",
                                 json_pack("{s:s,s:s}", "errorType", "MISSING_FIELDS", "message",
                                           "schema.fieldSchemaList must be a list"),
                                 "putSchema body: schema.fieldSchemaList must be a list"),
               SILT_EINVAL;
    silt_dataset *bds = NULL;
    int rc = fy_open_branch(r, out, d, branch, &bds);
    char latest[64] = "";
    if (!rc && end && (rc = latest_commit(bds, latest)) == 0 && strcmp(latest, end) != 0)
        rc = (srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidParameterCombination",
                               json_pack("{s:s,s:s}", "validCombinations", "endTransactionRid = latest transaction",
                                         "providedParameters", "endTransactionRid"),
                               "silt sets a schema at the latest transaction of a branch only (%s)",
                               latest[0] ? latest : "none"),
              SILT_EINVAL);
    json_t *doc = rc ? NULL : json_pack("{s:O,s:s}", "fieldSchemaList", json_object_get(schema, "fieldSchemaList"),
                                        "format", fmt);
    char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    if (!rc && !text)
        rc = (srv_lib_error(r, out, SILT_ENOMEM, NULL, NULL), SILT_ENOMEM);
    if (!rc && (rc = silt_files_schema_set_text(bds, text, strlen(text), "putSchema body")) != 0) {
        if (rc == SILT_EINVAL || rc == SILT_EUNSUPPORTED)
            srv_foundry_error(out, 0, "INVALID_ARGUMENT", "InvalidSchema",
                              json_pack("{s:s,s:s}", "errorType", "INVALID_FIELD", "message", silt_error_last()), "%s",
                              silt_error_last());
        else
            srv_lib_error(r, out, rc, NULL, NULL);
    }
    free(text);
    json_decref(doc);
    silt_dataset_free(bds);
    json_t *resp = NULL;
    if (!rc && !(rc = schema_response(r, out, d, branch, NULL, NULL, &resp)))
        srv_json(out, 200, resp);
    return rc;
}

int fy_schema_put(srv_req *r, srv_resp *out)
{
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d))
        return 0;
    json_t *b = NULL;
    if (!fy_body(r, out, &b, false))
        put_schema(r, out, &d, b);
    json_decref(b);
    fy_close(&d);
    return 0;
}

#define BATCH_MAX 1000

int fy_schema_batch(srv_req *r, srv_resp *out)
{
    json_t *b = NULL;
    if (fy_body(r, out, &b, true))
        return 0;
    if (json_array_size(b) > BATCH_MAX) {
        srv_foundry_error(out, 0, "INVALID_ARGUMENT", "Conjure:InvalidArgument", NULL,
                          "getSchemaBatch takes at most %d entries, got %zu", BATCH_MAX, json_array_size(b));
        json_decref(b);
        return 0;
    }
    json_t *data = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(b, i, e)
    {
        const char *rid = json_string_value(json_object_get(e, "datasetRid"));
        if (!rid)
            continue;
        srv_resp scratch; /* errors of omitted entries go nowhere */
        srv_resp_init(&scratch);
        fy_ds d;
        json_t *resp = NULL;
        if (!fy_open(r, &scratch, rid, &d)) {
            if (!schema_response(r, &scratch, &d, json_string_value(json_object_get(e, "branchName")),
                                 json_string_value(json_object_get(e, "endTransactionRid")),
                                 json_string_value(json_object_get(e, "versionId")), &resp))
                json_object_set_new(data, rid, resp);
            fy_close(&d);
        }
        srv_resp_clear(&scratch);
    }
    srv_json(out, 200, json_pack("{s:o}", "data", data));
    json_decref(b);
    return 0;
}

/* ---- transactions of the dataset ------------------------------------------------ */

#define TXN_PAGE_DEFAULT 20
#define TXN_PAGE_MAX 50

int fy_dataset_transactions(srv_req *r, srv_resp *out)
{
    size_t size;
    char *after = NULL;
    if (fy_page_args(r, out, TXN_PAGE_DEFAULT, TXN_PAGE_MAX, &size, &after))
        return 0;
    fy_ds d;
    if (fy_open(r, out, r->params[0], &d)) {
        free(after);
        return 0;
    }
    silt_txn_info *v = NULL;
    size_t n = 0;
    int rc = silt_txn_list_all(&v, &n, d.ds);
    fy_txn_answer(r, out, rc, v, n, size, after);
    free(v);
    free(after);
    fy_close(&d);
    return 0;
}
