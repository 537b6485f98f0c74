/* basic.c — routes outside the two API families: GET /health (no token). */
#include "http.h"

static int health(srv_req *r, srv_resp *out)
{
    (void)r;
    return srv_json(out, 200, json_pack("{s:s,s:s}", "status", "ok", "version", SILT_VERSION));
}

static const srv_route ROUTES[] = {
    {SRV_GET, "health", health, SRV_NEED_NONE, NULL, SRV_BODY_NONE},
};

const srv_route_table SRV_BASIC_ROUTES = {SRV_FAMILY_PLAIN, NULL, ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
