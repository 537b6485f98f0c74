/* odf.c — ODF node routes under /odf/: its route table. */
#include "http.h"

static const srv_route ROUTES[] = {
    {0, "odf/-", NULL, SRV_NEED_READ, NULL, SRV_BODY_NONE}, /* placeholder: never matches a method */
};

const srv_route_table SRV_ODF_ROUTES = {SRV_FAMILY_ODF, "odf", ROUTES, sizeof ROUTES / sizeof ROUTES[0]};
