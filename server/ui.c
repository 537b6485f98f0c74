/* ui.c — the web UI's static files: GET/HEAD /ui/ and /ui/<path> from the
 * table tools/embed_ui.py generated at build time (ui.h), and `/`, which
 * redirects to /ui/ (docs/ui.md).
 *
 * Invariants: no token is needed (the files hold no data; every data call
 * of the UI carries the user's token to the public JSON routes); a path
 * that names no asset answers index.html (the UI routes in the browser), so
 * a reload of /ui/datasets/x works; every answer has a strong ETag (a
 * matching If-None-Match gives 304 without a body), `Cache-Control:
 * no-cache` (revalidated each time, cheap with the ETag) and a strict
 * Content-Security-Policy: scripts, styles and connections from this
 * origin only, no inline script or style, no frames.
 */
#include "http.h"
#include "ui.h"

#include <stdlib.h>
#include <string.h>

#define UI_CSP                                                                                                   \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " \
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

static int cmp_asset(const void *key, const void *elem)
{
    return strcmp(key, ((const silt_ui_asset *)elem)->path);
}

/* The asset at `path`, or NULL. */
static const silt_ui_asset *find_asset(const char *path)
{
    return bsearch(path, SILT_UI_ASSETS, SILT_UI_NASSETS, sizeof SILT_UI_ASSETS[0], cmp_asset);
}

/* Does an If-None-Match value ("*", or a list of entity tags, weak or
 * strong) match etag? Weak comparison, as RFC 9110 §13.1.2 asks for. */
static bool etag_matches(const char *inm, const char *etag)
{
    size_t el = strlen(etag);
    for (const char *p = inm; *p;) {
        p += strspn(p, " \t,");
        if (*p == '*')
            return true;
        if (p[0] == 'W' && p[1] == '/')
            p += 2;
        size_t n = strcspn(p, ",");
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n == el && memcmp(p, etag, el) == 0)
            return true;
        p += strcspn(p, ",");
    }
    return false;
}

static int send_asset(srv_req *r, srv_resp *out, const silt_ui_asset *a)
{
    const char *inm = srv_header(r, "If-None-Match");
    int rc = inm && etag_matches(inm, a->etag) ? srv_empty(out, 304)
                                                 : srv_bytes(out, 200, a->content_type, a->data, a->len);
    if (rc < 0)
        return rc;
    srv_resp_header(out, "ETag", a->etag);
    srv_resp_header(out, "Cache-Control", "no-cache");
    srv_resp_header(out, "Content-Security-Policy", UI_CSP);
    srv_resp_header(out, "X-Content-Type-Options", "nosniff");
    srv_resp_header(out, "Referrer-Policy", "no-referrer");
    return 0;
}

/* GET /ui, /ui/ and /ui/<path>: the asset, else index.html. */
static int ui_file(srv_req *r, srv_resp *out)
{
    const silt_ui_asset *a = r->nparams ? find_asset(r->params[0]) : NULL;
    if (!a)
        a = find_asset("index.html");
    if (!a)
        return srv_odf_error(out, 500, "the web UI was built without index.html");
    return send_asset(r, out, a);
}

/* GET /: to the UI. */
static int ui_root(srv_req *r, srv_resp *out)
{
    (void)r;
    int rc = srv_empty(out, 302);
    if (rc == 0)
        rc = srv_resp_header(out, "Location", "/ui/");
    return rc;
}

static const srv_route ROUTES[] = {
    {SRV_GET, "ui", ui_file, SRV_NEED_NONE, NULL, SRV_BODY_NONE},
    {SRV_GET, "ui/*path", ui_file, SRV_NEED_NONE, NULL, SRV_BODY_NONE},
};

static const srv_route ROOT_ROUTES[] = {
    {SRV_GET, "", ui_root, SRV_NEED_NONE, NULL, SRV_BODY_NONE},
};

const srv_route_table SRV_UI_ROUTES = {SRV_FAMILY_PLAIN, "ui", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
/* prefix "" selects only the path without segments, `/` */
const srv_route_table SRV_UI_ROOT_ROUTES = {SRV_FAMILY_PLAIN, "", ROOT_ROUTES,
                                            sizeof ROOT_ROUTES / sizeof ROOT_ROUTES[0]};
