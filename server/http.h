/* http.h — the server's request and response model, shared by the route
 * families (foundry_*.c, odf_*.c, basic.c) and the libmicrohttpd glue
 * (http.c). Handlers never see libmicrohttpd: they get an srv_req (method,
 * percent-decoded path segments, decoded query arguments, headers, the body
 * as a memory buffer or a file) and fill an srv_resp (status, content type,
 * and a buffer, a file descriptor or a pull stream).
 *
 * Error envelopes: routes under /api/ and /admin/ answer errors as Foundry's Conjure
 * envelope {errorCode, errorName, errorInstanceId, parameters, message};
 * routes under /odf/ and the rest as {"message": …} (kamu's shape). Both
 * are application/json, and every response carries the CORS headers.
 *
 * Ownership: everything an srv_req points to lives until the request
 * completes; an srv_resp owns its body (buffer freed, fd closed, stream's
 * free callback called) once a handler returned.
 */
#ifndef SILT_SERVER_HTTP_H
#define SILT_SERVER_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "silt.h"

/* ---- requests ------------------------------------------------------------ */

typedef enum srv_method {
    SRV_GET = 1, SRV_HEAD = 2, SRV_POST = 4, SRV_PUT = 8, SRV_DELETE = 16, SRV_OPTIONS = 32,
    SRV_OTHER = 64
} srv_method;

typedef enum srv_family { SRV_FAMILY_PLAIN = 0, SRV_FAMILY_FOUNDRY = 1, SRV_FAMILY_ODF = 2 } srv_family;

/* What a route needs of the caller's token. NONE: no token needed. */
typedef enum srv_need { SRV_NEED_NONE = 0, SRV_NEED_READ = 1, SRV_NEED_WRITE = 2, SRV_NEED_ADMIN = 3 } srv_need;

typedef struct srv_arg {
    char *key;   /* percent-decoded */
    char *value; /* percent-decoded ("" for a key without '=') */
} srv_arg;

#define SRV_MAX_SEGMENTS 64
#define SRV_MAX_ARGS 256

/* The parsed request line: what the router and the fuzz target work on. */
typedef struct srv_target {
    char *segments[SRV_MAX_SEGMENTS]; /* raw path split on '/', each decoded */
    size_t nseg;
    srv_arg args[SRV_MAX_ARGS];
    size_t nargs;
    char *text; /* one malloc'd buffer holding the segments, keys and values */
    size_t text_len, text_cap;
} srv_target;

/* Splits a raw (still percent-encoded) path on '/' and decodes each
 * segment; parses a raw query string ("a=1&b=x%20y"; '+' is a space) when
 * given. Empty segments (from "//" or a trailing '/') are dropped. A
 * segment that decodes to "." or "..", contains a NUL byte, or is not valid
 * UTF-8 is refused, as is a malformed %-escape: SILT_EINVAL with a message.
 * Free with srv_target_clear. */
int srv_target_parse(srv_target *t, const char *raw_path, const char *raw_query);
void srv_target_clear(srv_target *t);
/* Decodes %XX escapes (and '+' to space when plus_is_space) in place;
 * SILT_EINVAL for a malformed escape or a decoded NUL byte. */
int srv_percent_decode(char *s, bool plus_is_space);

typedef struct srv_token {
    bool present;         /* a valid token authenticated the request */
    char name[72];        /* token name ("admin" for SILT_ADMIN_TOKEN) */
    int scope;            /* SRV_NEED_READ / WRITE / ADMIN */
    bool stored;          /* a token of tokens.json: `info` holds it */
    silt_token_info info; /* its name patterns (silt_token_allows) */
} srv_token;

struct srv_server;
struct srv_route;

typedef struct srv_req {
    struct srv_server *srv;
    srv_method method;
    const char *method_name;
    const char *url;          /* raw path */
    srv_target target;
    const struct srv_route *route;
    const char *params[8];    /* the route's :name / *name captures, in pattern order */
    size_t nparams;
    srv_token token;
    void *conn;               /* the MHD connection (http.c only) */
    /* body: small bodies (JSON) in memory, large ones (uploads, ingest) in a
     * private scratch file; exactly one is used, per the route's body kind */
    char *body;               /* NUL-terminated, malloc'd */
    size_t body_len;
    char *body_path;          /* scratch file holding the body */
    uint64_t body_size;
} srv_req;

/* Header value (case-insensitive name) or NULL. */
const char *srv_header(const srv_req *r, const char *name);
/* First value of query argument `key`, or NULL. */
const char *srv_arg_get(const srv_req *r, const char *key);
/* Every value of a repeated key, in order; *n set. Returns a malloc'd
 * array of borrowed strings (free the array only), NULL when n is 0. */
const char **srv_arg_all(const srv_req *r, const char *key, size_t *n);
/* The workspace directory the server serves. */
const char *srv_workspace_dir(const srv_req *r);
/* Opens the served workspace (a fresh handle per call; caller frees). On
 * failure fills `out` with a 500 and returns the negative code. */
struct srv_resp;
int srv_open_ws(srv_req *r, struct srv_resp *out, silt_workspace **ws);
/* Is the request's token allowed to see dataset `name`? (patterns) */
bool srv_token_sees(const srv_req *r, const char *name);

/* ---- responses ----------------------------------------------------------- */

typedef long (*srv_stream_fn)(void *ctx, uint64_t pos, char *buf, size_t max); /* >0, 0 = end, <0 error */
typedef void (*srv_stream_free_fn)(void *ctx);

typedef struct srv_header_kv {
    char *name, *value;
} srv_header_kv;

typedef struct srv_resp {
    int status;
    const char *content_type;  /* static string */
    char *buf;                 /* malloc'd body */
    size_t len;
    int fd;                    /* >= 0: body is fd from offset 0, fd_size bytes */
    uint64_t fd_size;
    srv_stream_fn stream;      /* pull stream (chunked) */
    void *stream_ctx;
    srv_stream_free_fn stream_free;
    srv_header_kv headers[8];
    size_t nheaders;
    uint64_t bytes;            /* for the log (filled by http.c) */
} srv_resp;

void srv_resp_init(srv_resp *o);
void srv_resp_clear(srv_resp *o);
/* Adds a response header (copied). */
int srv_resp_header(srv_resp *o, const char *name, const char *value);
/* JSON body (steals the reference to j; indentation off). */
int srv_json(srv_resp *o, int status, json_t *j);
/* A body copied from memory. */
int srv_bytes(srv_resp *o, int status, const char *content_type, const void *data, size_t len);
/* The same taking ownership of buf (malloc'd, NUL-terminated after len bytes). */
int srv_bytes_take(srv_resp *o, int status, const char *content_type, char *buf, size_t len);
/* Empty body (204, 200 for HEAD-like answers). */
int srv_empty(srv_resp *o, int status);
/* A file opened by the caller (fd is owned by o from now on). */
int srv_file(srv_resp *o, int status, const char *content_type, int fd, uint64_t size);
/* A pull stream (ctx owned by o: freed with free_fn). */
int srv_stream(srv_resp *o, int status, const char *content_type, srv_stream_fn fn, void *ctx,
               srv_stream_free_fn free_fn);

/* Foundry error envelope: errorCode one of PERMISSION_DENIED, INVALID_ARGUMENT,
 * NOT_FOUND, CONFLICT, REQUEST_ENTITY_TOO_LARGE, INTERNAL, TIMEOUT, … (the
 * status follows from it; `status` > 0 overrides, e.g. 401, 405, 415);
 * params (stolen; may be NULL = {}); message printf-style (may be NULL). */
int srv_foundry_error(srv_resp *o, int status, const char *error_code, const char *error_name, json_t *params,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* {"message": …} error of the ODF / plain routes. */
int srv_odf_error(srv_resp *o, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An error in the request's family; for Foundry routes error_name /
 * error_code are used, for the others only the status and message. */
/* Whether answers under the first path segment `seg` (len bytes, raw) use
 * the Foundry envelope: "api" (Foundry's routes) and "admin" (silt's own,
 * server/admin.c); every other path answers {"message"}. */
bool srv_foundry_envelope(const char *seg, size_t len);
int srv_error(srv_req *r, srv_resp *o, int status, const char *error_code, const char *error_name,
              json_t *params, const char *fmt, ...) __attribute__((format(printf, 7, 8)));
/* Maps a library failure (negative SILT_E* code, message in
 * silt_error_last()) to an error response in the request's family: not
 * found 404, exists/conflict 409, invalid/validation 400, else 500. For
 * Foundry routes, error_name (may be NULL: a generic name by status) names
 * the error. */
int srv_lib_error(srv_req *r, srv_resp *o, int code, const char *error_name, json_t *params);

/* ---- routes -------------------------------------------------------------- */

typedef enum srv_body_kind { SRV_BODY_NONE = 0, SRV_BODY_JSON = 1, SRV_BODY_FILE = 2 } srv_body_kind;

typedef int (*srv_handler)(srv_req *r, srv_resp *out);

/* A route: methods it answers, a pattern of '/'-separated tokens — a literal,
 * ":name" (exactly one segment) or "*name" (one or more segments, joined with
 * '/'; at most one per pattern) — the handler, what it needs of the token,
 * the Foundry error name for a token without the scope (NULL: ApiUsageDenied
 * with missingScope), and the body it takes. HEAD is accepted wherever GET is. */
typedef struct srv_route {
    unsigned methods;
    const char *pattern;
    srv_handler handler;
    srv_need need;
    const char *denied_name;
    srv_body_kind body;
} srv_route;

typedef struct srv_route_table {
    srv_family family;
    const char *prefix;         /* first path segment that selects the family ("api", "odf", NULL = any) */
    const srv_route *routes;
    size_t n;
} srv_route_table;

/* Route tables of the families (each in its own file). */
extern const srv_route_table SRV_BASIC_ROUTES;
extern const srv_route_table SRV_FOUNDRY_ROUTES;
extern const srv_route_table SRV_ODF_ROUTES;
extern const srv_route_table SRV_ADMIN_ROUTES; /* silt's own, under /admin/v1/ (admin.c) */

typedef enum srv_match_result { SRV_MATCHED = 0, SRV_NO_ROUTE = 1, SRV_BAD_METHOD = 2 } srv_match_result;

/* Finds the route for a method and parsed target. On SRV_MATCHED sets
 * *route, the captures (params borrowed from t or, for "*name", from
 * `joined`, a buffer of at least 4096 bytes per capture the caller
 * provides) and *family; on SRV_BAD_METHOD *allowed holds the methods the
 * path answers; *family is set in every case (by prefix). */
srv_match_result srv_route_match(srv_method m, const srv_target *t, const srv_route **route,
                                 const char **params, size_t *nparams, char *joined, size_t joined_cap,
                                 srv_family *family, unsigned *allowed);

#endif
