/* odf_common.h — helpers shared by the ODF node routes (odf.c,
 * odf_data.c, odf_query.c): opening the request's dataset with the
 * not-found rule for hidden datasets, spooling a JSON answer through a
 * scratch file, and the kamu dataFormat names.
 */
#ifndef SILT_SERVER_ODF_COMMON_H
#define SILT_SERVER_ODF_COMMON_H

#include <stdio.h>

#include "http.h"

/* An open dataset of a request: the workspace, the dataset, its info. */
typedef struct odf_ds {
    silt_workspace *ws;
    silt_dataset *ds;
    silt_dataset_info info;
} odf_ds;

/* Opens the dataset named by the route's first capture: a name or a
 * did:odf: id (a branch ref "name@branch" is not a dataset here). An
 * absent dataset and one the token may not see get the same 404
 * {"message": "dataset 'X' not found"}; returns < 0 with `out` filled on
 * any failure. Free with odf_ds_close. */
int odf_ds_open(srv_req *r, srv_resp *out, odf_ds *d);
void odf_ds_close(odf_ds *d);

/* A scratch file of the workspace for a response body (already unlinked:
 * nothing stays behind); `out` filled on failure. */
int odf_spool_open(srv_req *r, srv_resp *out, silt_workspace *ws, FILE **f);
/* Sends the spooled file as the body (fflush, size, srv_file); closes f. */
int odf_spool_send(srv_resp *out, int status, const char *content_type, FILE *f);

/* kamu's dataFormat (JsonAoS, JsonSoA, JsonAoA; aliases json-aos, …,
 * case-insensitive; NULL = JsonAoS) -> silt's format name and the
 * canonical kamu name. false for anything else. */
bool odf_data_format(const char *name, const char **silt_fmt, const char **kamu_name);
/* A count argument: decimal digits only, <= max. false otherwise. */
bool odf_parse_count(const char *text, uint64_t max, uint64_t *out);

/* A /odf/query request (GET arguments or POST body), parsed. */
typedef struct odf_query_dataset {
    char *alias;  /* the dataset as the query names it */
    char *block;  /* blockHash to pin it at, or NULL */
    char *id;     /* did:odf: id it must have, or NULL */
} odf_query_dataset;

typedef struct odf_query_req {
    char *query;
    const char *silt_fmt, *kamu_fmt; /* static */
    uint64_t skip, limit;
    odf_query_dataset *datasets;
    size_t ndatasets;
} odf_query_req;

/* Parses a POST /odf/query JSON body {query, queryDialect?, dataFormat?,
 * include?, skip?, limit?, datasets?: [{alias, blockHash?, id?}]}; unknown
 * fields are refused (as kamu does). 0, or -1 with a one-line reason in
 * `err`. Free with odf_query_req_free (also after a failure). */
int odf_query_parse_body(odf_query_req *q, const char *body, size_t len, char *err, size_t errcap);
void odf_query_req_free(odf_query_req *q);

/* Handlers of odf_data.c and odf_query.c. */
int srv_odf_ingest(srv_req *r, srv_resp *out);
int srv_odf_tail(srv_req *r, srv_resp *out);
int srv_odf_metadata(srv_req *r, srv_resp *out);
int srv_odf_query(srv_req *r, srv_resp *out);

#endif
