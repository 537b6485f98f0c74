/* fuzz_router.c — libFuzzer target: the request router of `silt serve`
 * and the JSON body parser of POST /odf/query.
 * The first byte picks the part: even = a request target (the next byte
 * is the method; the rest is "raw-path[?raw-query]"), odd = a JSON body.
 * Any input must be refused cleanly or parsed; a parsed target has only
 * decoded segments without "." / ".." / NUL, and a match names a route. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "odf_common.h"

static void fuzz_target(const uint8_t *data, size_t size)
{
    static const srv_method M[] = {SRV_GET, SRV_HEAD, SRV_POST, SRV_PUT, SRV_DELETE, SRV_OPTIONS, SRV_OTHER};
    if (size < 1)
        return;
    srv_method m = M[data[0] % (sizeof M / sizeof M[0])];
    char *text = malloc(size);
    if (!text)
        return;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char *q = strchr(text, '?');
    if (q)
        *q++ = '\0';
    srv_target t;
    if (srv_target_parse(&t, text, q) == 0) {
        for (size_t i = 0; i < t.nseg; i++)
            if (!t.segments[i][0] || strcmp(t.segments[i], ".") == 0 || strcmp(t.segments[i], "..") == 0)
                abort();
        const srv_route *route;
        const char *params[8];
        size_t np;
        char joined[4096];
        srv_family fam;
        unsigned allowed;
        srv_match_result r = srv_route_match(m, &t, &route, params, &np, joined, sizeof joined, &fam, &allowed);
        if (r == SRV_MATCHED && (!route || !route->handler || np > 8))
            abort();
        for (size_t i = 0; r == SRV_MATCHED && i < np; i++)
            if (!params[i] || strlen(params[i]) > sizeof joined)
                abort();
        srv_target_clear(&t);
    }
    free(text);
}

static void fuzz_query_body(const uint8_t *data, size_t size)
{
    odf_query_req q;
    char err[512];
    if (odf_query_parse_body(&q, (const char *)data, size, err, sizeof err) == 0) {
        if (!q.query || !q.silt_fmt || !q.kamu_fmt || q.limit > 100000000ull)
            abort();
        for (size_t i = 0; i < q.ndatasets; i++)
            if (!q.datasets[i].alias)
                abort();
    } else if (!err[0]) {
        abort(); /* a refusal always says why */
    }
    odf_query_req_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_query_body(data + 1, size - 1);
    else
        fuzz_target(data + 1, size - 1);
    return 0;
}
