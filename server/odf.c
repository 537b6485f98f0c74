/* odf.c — ODF node routes under /odf/ (research/foundry-api.md §3.2–3.3):
 * the route table, the helpers of odf_common.h, the read side of the
 * Simple Transfer Protocol (refs/head, blocks, data, checkpoints) and
 * /odf/info. Ingest, tail and metadata are in odf_data.c, /odf/query in
 * odf_query.c.
 *
 * Invariants: a dataset the token may not see answers exactly like an
 * absent one (404, same message); objects are served as stored, from an fd
 * the library opened after checking the hash text (no path is ever built
 * here); errors are kamu's {"message": …}.
 */
#include "odf_common.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- shared helpers (odf_common.h) ---------------------------------------- */

static int not_found(srv_resp *out, const char *name)
{
    return srv_odf_error(out, 404, "dataset '%s' not found", name);
}

int odf_ds_open(srv_req *r, srv_resp *out, odf_ds *d)
{
    memset(d, 0, sizeof *d);
    const char *name = r->params[0];
    if (strchr(name, '@'))
        return not_found(out, name), SILT_ENOTFOUND;
    int rc = srv_open_ws(r, out, &d->ws);
    if (rc < 0)
        return rc;
    rc = silt_dataset_open(&d->ds, d->ws, name);
    if (rc == 0)
        rc = silt_dataset_info_get(&d->info, d->ds);
    if (rc == SILT_ENOTFOUND || rc == SILT_EINVAL || (rc == 0 && !srv_token_sees(r, d->info.name))) {
        odf_ds_close(d);
        not_found(out, name);
        return SILT_ENOTFOUND;
    }
    if (rc < 0) {
        srv_lib_error(r, out, rc, NULL, NULL);
        odf_ds_close(d);
    }
    return rc;
}

void odf_ds_close(odf_ds *d)
{
    silt_dataset_free(d->ds);
    silt_workspace_free(d->ws);
    memset(d, 0, sizeof *d);
}

int odf_spool_open(srv_req *r, srv_resp *out, silt_workspace *ws, FILE **f)
{
    *f = NULL;
    char *dir = NULL;
    int rc = silt_workspace_mktemp(ws, &dir);
    if (rc < 0)
        return srv_lib_error(r, out, rc, NULL, NULL), rc;
    size_t n = strlen(dir) + 8;
    char *path = malloc(n);
    if (path) {
        snprintf(path, n, "%s/out", dir);
        *f = fopen(path, "w+e");
        unlink(path);
    }
    int err = errno;
    rmdir(dir);
    free(dir);
    free(path);
    if (!*f) {
        srv_odf_error(out, 500, "cannot create a scratch file: %s", strerror(err));
        return SILT_EIO;
    }
    return 0;
}

int odf_spool_send(srv_resp *out, int status, const char *content_type, FILE *f)
{
    struct stat st;
    int fd = -1;
    bool ok = fflush(f) == 0 && !ferror(f) && fstat(fileno(f), &st) == 0 && (fd = dup(fileno(f))) >= 0;
    fclose(f);
    if (!ok) {
        if (fd >= 0)
            close(fd);
        return srv_odf_error(out, 500, "writing the response failed: %s", strerror(errno));
    }
    return srv_file(out, status, content_type, fd, (uint64_t)st.st_size);
}

bool odf_data_format(const char *name, const char **silt_fmt, const char **kamu_name)
{
    static const struct {
        const char *kamu, *alias, *silt;
    } F[] = {{"JsonAoS", "json-aos", "json-aos"}, {"JsonSoA", "json-soa", "json-soa"}, {"JsonAoA", "json-aoa", "json-aoa"}};
    for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
        if (!name || strcasecmp(name, F[i].kamu) == 0 || strcasecmp(name, F[i].alias) == 0) {
            *silt_fmt = F[i].silt;
            *kamu_name = F[i].kamu;
            return true;
        }
    }
    return false;
}

bool odf_parse_count(const char *text, uint64_t max, uint64_t *out)
{
    if (!text || !*text || strlen(text) > 12)
        return false;
    uint64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (!isdigit((unsigned char)*p))
            return false;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (v > max)
        return false;
    *out = v;
    return true;
}

/* ---- Simple Transfer Protocol --------------------------------------------- */

static int refs_head(srv_req *r, srv_resp *out)
{
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    srv_bytes(out, 200, "text/plain", d.info.head, strlen(d.info.head));
    odf_ds_close(&d);
    return 0;
}

static int staged_head(srv_req *r, srv_resp *out, const char *kind);

/* GET/HEAD /odf/{ds}/<kind>/{hash}: the object's bytes from the file. */
static int object(srv_req *r, srv_resp *out, const char *kind)
{
    if (r->token.present && r->token.scope >= SRV_NEED_WRITE && r->method_name &&
        strcmp(r->method_name, "HEAD") == 0)
        return staged_head(r, out, kind);
    odf_ds d;
    if (odf_ds_open(r, out, &d) < 0)
        return 0;
    int fd;
    uint64_t size;
    int rc = silt_dataset_object_open(&fd, &size, d.ds, kind, r->params[1]);
    if (rc == 0)
        srv_file(out, 200, "application/octet-stream", fd, size);
    else if (rc == SILT_ENOTFOUND)
        srv_odf_error(out, 404, "%s/%s not found in dataset '%s'", kind, r->params[1], r->params[0]);
    else
        srv_lib_error(r, out, rc, NULL, NULL);
    odf_ds_close(&d);
    return 0;
}

static int blocks(srv_req *r, srv_resp *out) { return object(r, out, "blocks"); }
static int data(srv_req *r, srv_resp *out) { return object(r, out, "data"); }
static int checkpoints(srv_req *r, srv_resp *out) { return object(r, out, "checkpoints"); }

/* ---- push (the write side) ------------------------------------------------ */

/* Opens the workspace for a push to dataset `name` (a plain name the token
 * may see; a hidden one answers 404 like an absent one). */
static int push_ws(srv_req *r, srv_resp *out, silt_workspace **ws)
{
    const char *name = r->params[0];
    if (strchr(name, '@') || strncmp(name, "did:", 4) == 0 || !srv_token_sees(r, name)) {
        not_found(out, name);
        return SILT_ENOTFOUND;
    }
    return srv_open_ws(r, out, ws);
}

/* PUT /odf/{ds}/<kind>/{hash}: the body must hash to {hash} (400 if not). */
static int put_object(srv_req *r, srv_resp *out, const char *kind)
{
    silt_workspace *ws = NULL;
    if (push_ws(r, out, &ws) < 0)
        return 0;
    int rc = silt_node_object_put(ws, r->params[0], kind, r->params[1], r->body_path);
    if (rc == 0)
        srv_bytes(out, 201, "text/plain", "", 0);
    else if (rc == SILT_ECORRUPT || rc == SILT_EINVAL)
        srv_odf_error(out, 400, "%s", silt_error_last());
    else
        srv_lib_error(r, out, rc, NULL, NULL);
    silt_workspace_free(ws);
    return 0;
}

/* HEAD by a token that may push: also answers from the objects a first
 * push staged before the dataset exists (silt_node_object_open), so that
 * an interrupted first push resumes. */
static int staged_head(srv_req *r, srv_resp *out, const char *kind)
{
    silt_workspace *ws = NULL;
    if (push_ws(r, out, &ws) < 0)
        return 0;
    int fd = -1;
    uint64_t size = 0;
    int rc = silt_node_object_open(&fd, &size, ws, r->params[0], kind, r->params[1]);
    if (rc == 0)
        srv_file(out, 200, "application/octet-stream", fd, size);
    else if (rc == SILT_ENOTFOUND)
        srv_odf_error(out, 404, "%s/%s not found in dataset '%s'", kind, r->params[1], r->params[0]);
    else if (rc == SILT_EINVAL)
        srv_odf_error(out, 400, "%s", silt_error_last());
    else
        srv_lib_error(r, out, rc, NULL, NULL);
    silt_workspace_free(ws);
    return 0;
}

static int put_block(srv_req *r, srv_resp *out) { return put_object(r, out, "blocks"); }
static int put_data(srv_req *r, srv_resp *out) { return put_object(r, out, "data"); }
static int put_checkpoint(srv_req *r, srv_resp *out) { return put_object(r, out, "checkpoints"); }

/* PUT /odf/{ds}/refs/head, body the new head: If-Match: <old head> moves it
 * by compare-and-swap, If-None-Match: * creates the dataset (412 when the
 * head is not the one given, 400 when blocks or objects are missing). */
static int put_head(srv_req *r, srv_resp *out)
{
    const char *match = srv_header(r, "If-Match"), *none = srv_header(r, "If-None-Match");
    if (!match && !(none && strcmp(none, "*") == 0))
        return srv_odf_error(out, 428, "PUT refs/head needs If-Match: <old head> or If-None-Match: *");
    char value[128];
    size_t n = r->body_len < sizeof value - 1 ? r->body_len : sizeof value - 1;
    memcpy(value, r->body ? r->body : "", n);
    value[n] = '\0';
    while (n && (value[n - 1] == '\n' || value[n - 1] == '\r' || value[n - 1] == ' '))
        value[--n] = '\0';
    char old[128];
    if (match) {
        snprintf(old, sizeof old, "%s", match);
        size_t k = strlen(old);
        if (k >= 2 && old[0] == '"' && old[k - 1] == '"') { /* an entity tag in quotes */
            memmove(old, old + 1, k - 2);
            old[k - 2] = '\0';
        }
    }
    silt_workspace *ws = NULL;
    if (push_ws(r, out, &ws) < 0)
        return 0;
    int rc = silt_node_ref_set(ws, r->params[0], match ? old : NULL, value);
    if (rc == 0)
        srv_bytes(out, 200, "text/plain", value, strlen(value));
    else if (rc == SILT_ECONFLICT)
        srv_odf_error(out, 412, "%s", silt_error_last());
    else if (rc == SILT_EVALIDATION || rc == SILT_EINVAL || rc == SILT_ECORRUPT)
        srv_odf_error(out, 400, "%s", silt_error_last());
    else
        srv_lib_error(r, out, rc, NULL, NULL);
    silt_workspace_free(ws);
    return 0;
}

/* ---- /odf/info ------------------------------------------------------------- */

/* {id, kind} of one dataset; false when it vanished meanwhile. */
static bool dataset_entry(silt_workspace *ws, const char *name, json_t *list)
{
    silt_dataset *ds = NULL;
    silt_dataset_info info;
    if (silt_dataset_open(&ds, ws, name) < 0 || silt_dataset_info_get(&info, ds) < 0) {
        silt_dataset_free(ds);
        return false;
    }
    json_array_append_new(list, json_pack("{s:s,s:s,s:s}", "name", info.name, "id", info.id, "kind",
                                          info.kind == SILT_ROOT ? "Root" : "Derivative"));
    silt_dataset_free(ds);
    return true;
}

static int node_info(srv_req *r, srv_resp *out)
{
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
    json_t *list = json_array();
    for (size_t i = 0; list && names[i]; i++)
        if (srv_token_sees(r, names[i]))
            dataset_entry(ws, names[i], list);
    silt_strv_free(names);
    silt_workspace_free(ws);
    srv_json(out, 200, list ? json_pack("{s:s,s:o}", "version", SILT_VERSION, "datasets", list) : NULL);
    return 0;
}

/* ---- routes ---------------------------------------------------------------- */

static const srv_route ROUTES[] = {
    {SRV_GET, "odf/info", node_info, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET | SRV_POST, "odf/query", srv_odf_query, SRV_NEED_READ, NULL, SRV_BODY_JSON},
    {SRV_GET, "odf/:ds/refs/head", refs_head, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/blocks/:hash", blocks, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/data/:hash", data, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/checkpoints/:hash", checkpoints, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_PUT, "odf/:ds/refs/head", put_head, SRV_NEED_WRITE, NULL, SRV_BODY_JSON},
    {SRV_PUT, "odf/:ds/blocks/:hash", put_block, SRV_NEED_WRITE, NULL, SRV_BODY_FILE},
    {SRV_PUT, "odf/:ds/data/:hash", put_data, SRV_NEED_WRITE, NULL, SRV_BODY_FILE},
    {SRV_PUT, "odf/:ds/checkpoints/:hash", put_checkpoint, SRV_NEED_WRITE, NULL, SRV_BODY_FILE},
    {SRV_POST, "odf/:ds/ingest", srv_odf_ingest, SRV_NEED_WRITE, NULL, SRV_BODY_FILE},
    {SRV_GET, "odf/:ds/tail", srv_odf_tail, SRV_NEED_READ, NULL, SRV_BODY_NONE},
    {SRV_GET, "odf/:ds/metadata", srv_odf_metadata, SRV_NEED_READ, NULL, SRV_BODY_NONE},
};

const srv_route_table SRV_ODF_ROUTES = {SRV_FAMILY_ODF, "odf", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
