/* foundry_table.h — the readTable route of the Foundry API (foundry_table.c). */
#ifndef SILT_SERVER_FOUNDRY_TABLE_H
#define SILT_SERVER_FOUNDRY_TABLE_H

#include "http.h"

/* GET /api/v2/datasets/{datasetRid}/readTable (params[0] = the dataset). */
int srv_foundry_read_table(srv_req *r, srv_resp *out);

#endif
