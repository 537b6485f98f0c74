/* foundry.c — the Foundry Platform API v2 datasets surface under /api/v2/
 * (research/foundry-api.md §1.3–1.6): its route table. */
#include "http.h"

static const srv_route ROUTES[] = {
    {0, "api/v2/-", NULL, SRV_NEED_READ, NULL, SRV_BODY_NONE}, /* placeholder: never matches a method */
};

const srv_route_table SRV_FOUNDRY_ROUTES = {SRV_FAMILY_FOUNDRY, "api", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
