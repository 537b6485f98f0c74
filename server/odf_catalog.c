/* odf_catalog.c — silt's own read routes under /odf/ (docs/server.md,
 * "Catalog routes"), for clients that show a workspace — the web UI at
 * /ui/ first: who the token is (/odf/whoami), the datasets it sees with
 * their summary (/odf/datasets), a dataset's metadata chain page by page
 * (/odf/{ds}/history), one dataset's summary (/odf/{ds}/summary) and one block as YAML (/odf/{ds}/history/{hash}).
 *
 * Invariants: read scope; a dataset the token may not see is listed
 * nowhere and answers 404 exactly like an absent one (odf_ds_open); lists
 * are paged with a bound on the page size, so no answer grows with the
 * workspace; the summaries are those of `silt --json list` / `silt --json
 * log` (the same library calls).
 */
#include "odf_common.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#define DATASETS_PAGE_DEFAULT 1000
#define DATASETS_PAGE_MAX 10000
#define HISTORY_PAGE_DEFAULT 100
#define HISTORY_PAGE_MAX 1000

/* ?pageSize: default when absent; 1..max. false with a 400 in out. */
static bool page_size(srv_req *r, srv_resp *out, uint64_t def, uint64_t max, uint64_t *n)
{
    const char *v = srv_arg_get(r, "pageSize");
    *n = def;
    if (v && (!odf_parse_count(v, max, n) || *n == 0)) {
        srv_odf_error(out, 400, "invalid pageSize '%.40s': expected 1..%llu", v, (unsigned long long)max);
        return false;
    }
    return true;
}

/* ---- GET /odf/whoami ------------------------------------------------------ */

static int whoami(srv_req *r, srv_resp *out)
{
    const srv_token *t = &r->token;
    json_t *pats = json_array();
    for (size_t i = 0; pats && t->stored && i < t->info.ndatasets; i++)
        json_array_append_new(pats, json_string(t->info.datasets[i]));
    const char *scope = t->scope == SRV_NEED_ADMIN ? "admin" : t->scope == SRV_NEED_WRITE ? "write" : "read";
    json_t *j = pats ? json_pack("{s:s,s:s,s:o}", "name", t->name, "scope", scope, "datasets", pats) : NULL;
    if (j)
        json_object_set_new(j, "expires",
                            t->stored && t->info.expires[0] ? json_string(t->info.expires) : json_null());
    return srv_json(out, 200, j);
}

/* ---- GET /odf/datasets ---------------------------------------------------- */

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files and their bytes in a files dataset's latest master view; 0 with
 * *is_files false for a ledger dataset. */
static int files_summary(silt_dataset *ds, bool *is_files, uint64_t *nfiles, uint64_t *bytes)
{
    silt_view *v = NULL;
    *is_files = false;
    *nfiles = *bytes = 0;
    int rc = silt_files_view(&v, ds, NULL, NULL, NULL);
    if (rc == SILT_EINVAL && strstr(silt_error_last(), "not a files dataset"))
        return 0;
    if (rc < 0)
        return rc;
    *is_files = true;
    *nfiles = silt_view_count(v);
    for (size_t i = 0; i < *nfiles; i++)
        *bytes += silt_view_entry(v, i)->size;
    silt_view_free(v);
    return 0;
}

/* The summary of one dataset (NULL when it vanished meanwhile or on OOM). */
static json_t *dataset_summary(silt_workspace *ws, const char *name)
{
    silt_dataset *ds = NULL;
    silt_dataset_info in;
    bool files;
    uint64_t nfiles, fbytes;
    if (silt_dataset_open(&ds, ws, name) < 0 || silt_dataset_info_get(&in, ds) < 0 ||
        files_summary(ds, &files, &nfiles, &fbytes) < 0) {
        silt_dataset_free(ds);
        return NULL;
    }
    const char *kind = files ? "Files" : in.kind == SILT_ROOT ? "Root" : "Derivative";
    json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I}", "name", in.name, "id", in.id, "rid", in.rid, "kind",
                          kind, "head", in.head, "blocks", (json_int_t)in.num_blocks, "sizeBytes",
                          (json_int_t)(files ? fbytes : in.data_size));
    if (o) {
        json_object_set_new(o, "records", files ? json_null() : json_integer((json_int_t)in.num_records));
        json_object_set_new(o, "files", files ? json_integer((json_int_t)nfiles) : json_null());
        json_object_set_new(o, "watermark", in.has_watermark ? json_string(in.watermark) : json_null());
        json_object_set_new(o, "lastUpdated", json_string(in.last_system_time));
    }
    silt_dataset_free(ds);
    return o;
}

/* Fills `list` with up to n summaries of visible datasets after `after`
 * (NULL: from the start); *more when another visible one follows. */
static void datasets_page(srv_req *r, silt_workspace *ws, char **names, size_t count, const char *after, uint64_t n,
                          json_t *list, bool *more)
{
    *more = false;
    for (size_t i = 0; i < count; i++) {
        if ((after && strcmp(names[i], after) <= 0) || !srv_token_sees(r, names[i]))
            continue;
        if (json_array_size(list) == n) {
            *more = true;
            return;
        }
        json_t *o = dataset_summary(ws, names[i]);
        if (o)
            json_array_append_new(list, o);
    }
}

static int datasets(srv_req *r, srv_resp *out)
{
    uint64_t n;
    if (!page_size(r, out, DATASETS_PAGE_DEFAULT, DATASETS_PAGE_MAX, &n))
        return 0;
    silt_workspace *ws = NULL;
    if (srv_open_ws(r, out, &ws) < 0)
        return 0;
    char **names = NULL;
    int rc = silt_dataset_list(&names, ws);
    if (rc < 0) {
        srv_lib_error(r, out, rc, NULL, NULL);
        silt_workspace_free(ws);
        return 0;
    }
    size_t count = 0;
    while (names && names[count])
        count++;
    if (count)
        qsort(names, count, sizeof *names, cmp_name);
    json_t *list = json_array(), *j = NULL;
    bool more = false;
    if (list) {
        datasets_page(r, ws, names, count, srv_arg_get(r, "pageToken"), n, list, &more);
        size_t got = json_array_size(list);
        const char *last = got ? json_string_value(json_object_get(json_array_get(list, got - 1), "name")) : NULL;
        j = json_pack("{s:o}", "data", list);
        if (j && more && last)
            json_object_set_new(j, "nextPageToken", json_string(last));
    }
    silt_strv_free(names);
    silt_workspace_free(ws);
    return srv_json(out, 200, j);
}

/* GET /odf/{ds}/summary: the /odf/datasets entry of one dataset. */
static int summary(srv_req *r, srv_resp *out)
{
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    json_t *o = dataset_summary(d.ws, d.info.name);
    if (o)
        srv_json(out, 200, o);
    else
        srv_lib_error(r, out, silt_error_code() ? silt_error_code() : SILT_ENOMEM, NULL, NULL);
    odf_ds_close(&d);
    return 0;
}

/* ---- GET /odf/{ds}/history[/{hash}] --------------------------------------- */

/* ?pageToken of history: the sequence number the page starts below. */
static bool history_token(srv_req *r, srv_resp *out, uint64_t *below)
{
    const char *v = srv_arg_get(r, "pageToken");
    *below = UINT64_MAX;
    if (v && !odf_parse_count(v, UINT64_MAX - 1, below)) {
        srv_odf_error(out, 400, "invalid pageToken '%.40s': expected a token from nextPageToken", v);
        return false;
    }
    return true;
}

/* Appends up to n blocks (newest first) with sequence numbers below
 * `below` to list as `silt --json log` objects; *next the sequence number
 * to continue below, UINT64_MAX when the chain ended. */
static int history_page(silt_dataset *ds, uint64_t below, uint64_t n, json_t *list, uint64_t *next)
{
    silt_block_iter *it = NULL;
    *next = UINT64_MAX;
    int rc = silt_block_iter_new(&it, ds);
    silt_block *b = NULL;
    while (rc == 0 && (rc = silt_block_iter_next(&b, it)) == 0 && b) {
        uint64_t seq = silt_block_sequence_number(b);
        if (seq < below && json_array_size(list) == n) {
            *next = seq + 1;
            silt_block_free(b);
            break;
        }
        char *text = NULL;
        if (seq < below && (rc = silt_block_to_json(&text, b)) == 0) {
            json_t *o = json_loads(text, 0, NULL);
            rc = o && json_array_append_new(list, o) == 0 ? 0 : SILT_ENOMEM;
        }
        free(text);
        silt_block_free(b);
    }
    silt_block_iter_free(it);
    return rc;
}

static int history(srv_req *r, srv_resp *out)
{
    uint64_t n, below;
    if (!page_size(r, out, HISTORY_PAGE_DEFAULT, HISTORY_PAGE_MAX, &n) || !history_token(r, out, &below))
        return 0;
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    json_t *list = json_array();
    uint64_t next = UINT64_MAX;
    int rc = list ? history_page(d.ds, below, n, list, &next) : SILT_ENOMEM;
    if (rc < 0) {
        json_decref(list);
        srv_lib_error(r, out, rc, NULL, NULL);
    } else {
        json_t *j = json_pack("{s:o}", "data", list);
        char tok[24];
        snprintf(tok, sizeof tok, "%llu", (unsigned long long)next);
        if (j && next != UINT64_MAX)
            json_object_set_new(j, "nextPageToken", json_string(tok));
        srv_json(out, 200, j);
    }
    odf_ds_close(&d);
    return 0;
}

static int history_block(srv_req *r, srv_resp *out)
{
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    silt_block_iter *it = NULL;
    silt_block *b = NULL;
    int rc = silt_block_iter_new(&it, d.ds);
    while (rc == 0 && (rc = silt_block_iter_next(&b, it)) == 0 && b && strcmp(silt_block_hash(b), r->params[1]) != 0)
        silt_block_free(b);
    char *yaml = NULL;
    if (rc == 0 && b)
        rc = silt_block_to_yaml(&yaml, b);
    if (rc < 0)
        srv_lib_error(r, out, rc, NULL, NULL);
    else if (!b)
        srv_odf_error(out, 404, "block '%.80s' is not in the chain of dataset '%s'", r->params[1], d.info.name);
    else
        srv_bytes(out, 200, "application/yaml; charset=utf-8", yaml, strlen(yaml));
    free(yaml);
    silt_block_free(b);
    silt_block_iter_free(it);
    odf_ds_close(&d);
    return 0;
}

static const srv_route ROUTES[] = {
    {SRV_GET, "odf/whoami", whoami, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/datasets", datasets, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/summary", summary, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/history", history, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/history/:hash", history_block, SRV_NEED_READ, NULL, SRV_BODY_NONE},
};

const srv_route_table SRV_ODF_CATALOG_ROUTES = {SRV_FAMILY_ODF, "odf", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
