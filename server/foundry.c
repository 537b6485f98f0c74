/* foundry.c — the Foundry Platform API v2 datasets surface under /api/v2/
 * (research/foundry-api.md §1.3–1.6): its route table. */
#include "foundry_table.h"
#include "http.h"

static const srv_route ROUTES[] = {
    {SRV_GET, "api/v2/datasets/:ds/readTable", srv_foundry_read_table, SRV_NEED_READ,
     "ReadTableDatasetPermissionDenied", SRV_BODY_NONE},
};

const srv_route_table SRV_FOUNDRY_ROUTES = {SRV_FAMILY_FOUNDRY, "api", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
