/* http.c — libmicrohttpd glue of `silt serve`: the daemon, one thread per
 * connection, the access handler's phases, bodies streamed to scratch files,
 * authentication, CORS, request logging and the graceful stop.
 *
 * Phases of a request (the access handler is called several times):
 *  1. first call: parse the raw target (the unescape callback is the
 *     identity, so %2F stays inside its segment), match the route,
 *     authenticate, check the declared body size; an error found here is
 *     queued at once when a body is announced (the connection is closed
 *     after it) and on the next call otherwise (keep-alive);
 *  2. body calls: bytes go to memory (JSON, capped) or to a private
 *     scratch file of the workspace (uploads, capped by --max-upload);
 *  3. last call: the handler runs and its response is queued.
 * The completion callback logs the request and removes the scratch file,
 * so an upload cut off half-way leaves nothing behind.
 */
#include "http.h"
#include "flow_sched.h"
#include "mqtt_subs.h"
#include "server.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JSON_BODY_MAX (8u << 20) /* 8 MiB of JSON is far more than any route takes */
#define DEFAULT_MAX_UPLOAD (16ull << 30)
#define SMALL_FILE_MAX (64u << 10) /* file bodies up to this go out from memory */
/* Request line and header fields: at most HEADER_MAX bytes and
 * HEADER_FIELDS_MAX fields, else our 431. libmicrohttpd parses them in a
 * per-connection pool of CONN_POOL bytes, cleared on every request (so its
 * size is paid per request): a request that does not fit it at all gets
 * libmicrohttpd's own 431 page. HEADER_MAX plus the pool's records of
 * HEADER_FIELDS_MAX fields and the response header fit CONN_POOL. */
#define HEADER_MAX (16u << 10)
#define HEADER_FIELDS_MAX 100u
#define CONN_POOL (32u << 10)

typedef struct srv_server {
    char *ws_dir;              /* the directory holding .silt */
    uint64_t max_upload;
    const char *const *origins;
    size_t norigins;
    const char *admin_token;   /* SILT_ADMIN_TOKEN or NULL */
    silt_token_set *tokens;    /* tokens.json (cached, thread-safe) */
    atomic_int active;         /* requests between first call and completion */
    pthread_mutex_t log_lock;
} srv_server;

/* State of one request across the handler calls. */
typedef struct conn_req {
    srv_req req;
    srv_resp resp;
    bool ready;           /* an early response is decided (resp filled) */
    bool queued;
    int body_fd;
    char *scratch_dir;
    uint64_t received;
    char joined[4096];
    struct timespec start;
} conn_req;

/* ---- helpers for handlers ----------------------------------------------- */

const char *srv_header(const srv_req *r, const char *name)
{
    return MHD_lookup_connection_value((struct MHD_Connection *)r->conn, MHD_HEADER_KIND, name);
}

const char *srv_arg_get(const srv_req *r, const char *key)
{
    for (size_t i = 0; i < r->target.nargs; i++)
        if (strcmp(r->target.args[i].key, key) == 0)
            return r->target.args[i].value;
    return NULL;
}

const char **srv_arg_all(const srv_req *r, const char *key, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < r->target.nargs; i++)
        if (strcmp(r->target.args[i].key, key) == 0)
            (*n)++;
    if (!*n)
        return NULL;
    const char **v = malloc(*n * sizeof *v);
    if (!v) {
        *n = 0;
        return NULL;
    }
    size_t k = 0;
    for (size_t i = 0; i < r->target.nargs; i++)
        if (strcmp(r->target.args[i].key, key) == 0)
            v[k++] = r->target.args[i].value;
    return v;
}

const char *srv_workspace_dir(const srv_req *r)
{
    return r->srv->ws_dir;
}

int srv_open_ws(srv_req *r, srv_resp *out, silt_workspace **ws)
{
    int rc = silt_workspace_open(ws, r->srv->ws_dir);
    if (rc < 0)
        srv_lib_error(r, out, SILT_EINTERNAL, NULL, NULL);
    return rc;
}

bool srv_token_sees(const srv_req *r, const char *name)
{
    return !r->token.stored || silt_token_allows(&r->token.info, name);
}

/* ---- CORS ---------------------------------------------------------------- */

/* The Access-Control-Allow-Origin value for a request's Origin, or NULL. */
static const char *allowed_origin(const srv_server *s, const char *origin)
{
    for (size_t i = 0; i < s->norigins; i++) {
        if (strcmp(s->origins[i], "*") == 0)
            return "*";
        if (origin && strcmp(s->origins[i], origin) == 0)
            return origin;
    }
    return NULL;
}

static void add_cors(const srv_server *s, struct MHD_Connection *c, struct MHD_Response *resp)
{
    const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
    const char *allow = allowed_origin(s, origin);
    if (!allow)
        return;
    MHD_add_response_header(resp, "Access-Control-Allow-Origin", allow);
    if (strcmp(allow, "*") != 0)
        MHD_add_response_header(resp, "Vary", "Origin");
    MHD_add_response_header(resp, "Access-Control-Expose-Headers", "Content-Type, Content-Length, ETag");
}

static void preflight(const srv_server *s, srv_resp *o)
{
    srv_empty(o, 204);
    srv_resp_header(o, "Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, OPTIONS");
    srv_resp_header(o, "Access-Control-Allow-Headers", "authorization, content-type, fetch-user-agent, odf-event-time");
    srv_resp_header(o, "Access-Control-Max-Age", "600");
    (void)s;
}

/* ---- authentication ------------------------------------------------------ */

/* Constant-time equality of a presented secret and the admin token: the
 * time depends only on the lengths. */
static bool secret_equal(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    volatile unsigned char diff = (unsigned char)(la != lb);
    for (size_t i = 0; i < lb; i++)
        diff |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
    return diff == 0;
}

static const char *scope_name(int need)
{
    return need == SRV_NEED_ADMIN ? "silt:admin" : need == SRV_NEED_WRITE ? "api:datasets-write" : "api:datasets-read";
}

/* Fills r->token from the Authorization header; 0, or fills o with the
 * 401 and returns -1. */
static int authenticate(srv_server *s, srv_req *r, srv_resp *o)
{
    const char *h = srv_header(r, "Authorization");
    if (!h || strncasecmp(h, "Bearer ", 7) != 0 || !h[7]) {
        srv_error(r, o, 401, "UNAUTHORIZED", "MissingCredentials", NULL,
                  "%s", h ? "malformed Authorization header: expected 'Bearer <token>'"
                          : "authentication required: send 'Authorization: Bearer <token>'");
        srv_resp_header(o, "WWW-Authenticate", "Bearer");
        return -1;
    }
    const char *secret = h + 7;
    if (s->admin_token && secret_equal(secret, s->admin_token)) {
        r->token.present = true;
        snprintf(r->token.name, sizeof r->token.name, "admin");
        r->token.scope = SRV_NEED_ADMIN;
        return 0;
    }
    int rc = silt_token_set_check(s->tokens, secret, &r->token.info);
    if (rc == 0) {
        r->token.present = r->token.stored = true;
        snprintf(r->token.name, sizeof r->token.name, "%s", r->token.info.name);
        r->token.scope = r->token.info.scope == SILT_SCOPE_ADMIN   ? SRV_NEED_ADMIN
                         : r->token.info.scope == SILT_SCOPE_WRITE ? SRV_NEED_WRITE
                                                                   : SRV_NEED_READ;
        return 0;
    }
    if (rc != SILT_ENOTFOUND) {
        /* the tokens file cannot be used (too open, malformed): nobody can
         * be authenticated until it is fixed */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", silt_error_last());
        srv_error(r, o, 500, "INTERNAL", "Default:Internal", NULL, "cannot check tokens: %s", msg);
        return -1;
    }
    srv_error(r, o, 401, "UNAUTHORIZED", "InvalidCredentials", NULL, "invalid or expired token");
    srv_resp_header(o, "WWW-Authenticate", "Bearer error=\"invalid_token\"");
    return -1;
}

static int authorize(srv_req *r, srv_resp *o)
{
    const srv_route *rt = r->route;
    if (r->token.scope >= (int)rt->need)
        return 0;
    if (rt->denied_name) {
        srv_error(r, o, 403, "PERMISSION_DENIED", rt->denied_name, NULL, "the token '%s' may not do this (needs %s)",
                  r->token.name, scope_name(rt->need));
    } else {
        json_t *p = json_pack("{s:s}", "missingScope", scope_name(rt->need));
        srv_error(r, o, 403, "PERMISSION_DENIED", "ApiUsageDenied", p, "the token '%s' lacks the scope %s",
                  r->token.name, scope_name(rt->need));
    }
    return -1;
}

/* ---- request phases ------------------------------------------------------ */

static srv_method method_of(const char *m)
{
    static const struct {
        const char *name;
        srv_method m;
    } M[] = {{"GET", SRV_GET}, {"HEAD", SRV_HEAD}, {"POST", SRV_POST}, {"PUT", SRV_PUT}, {"DELETE", SRV_DELETE},
             {"OPTIONS", SRV_OPTIONS}};
    for (size_t i = 0; i < sizeof M / sizeof M[0]; i++)
        if (strcmp(M[i].name, m) == 0)
            return M[i].m;
    return SRV_OTHER;
}

typedef struct query_build {
    char *buf;
    size_t len, cap;
    bool oom;
} query_build;

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    query_build *q = cls;
    size_t need = strlen(key) + (value ? strlen(value) + 1 : 0) + 2;
    if (q->len + need + 1 > q->cap) {
        size_t cap = (q->cap + need) * 2;
        char *nb = realloc(q->buf, cap);
        if (!nb) {
            q->oom = true;
            return MHD_NO;
        }
        q->buf = nb;
        q->cap = cap;
    }
    q->len += (size_t)sprintf(q->buf + q->len, "%s%s%s%s", q->len ? "&" : "", key, value ? "=" : "",
                              value ? value : "");
    return MHD_YES;
}

static void methods_text(unsigned ms, char *out, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } N[] = {{SRV_GET, "GET"}, {SRV_HEAD, "HEAD"}, {SRV_POST, "POST"}, {SRV_PUT, "PUT"}, {SRV_DELETE, "DELETE"}};
    out[0] = '\0';
    for (size_t i = 0; i < sizeof N / sizeof N[0]; i++)
        if (ms & N[i].bit)
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? ", " : "", N[i].name);
}

typedef struct header_size {
    size_t bytes, fields;
} header_size;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
    (void)kind;
    header_size *h = cls;
    h->bytes += strlen(key) + (value ? strlen(value) : 0) + 4; /* "key: value\r\n" */
    h->fields++;
    return MHD_YES;
}

/* The 431 of a request whose line and header fields exceed the limits;
 * false when within them. query_len: the length of the query string. */
static bool headers_too_large(srv_req *r, srv_resp *o, size_t query_len)
{
    header_size h = {strlen(r->method_name) + strlen(r->url) + (query_len ? query_len + 1 : 0) + 12, 0};
    MHD_get_connection_values(r->conn, MHD_HEADER_KIND, count_header, &h);
    if (h.bytes <= HEADER_MAX && h.fields <= HEADER_FIELDS_MAX)
        return false;
    json_t *p = json_pack("{s:I,s:I,s:I,s:I}", "sizeBytes", (json_int_t)h.bytes, "maxSizeBytes",
                          (json_int_t)HEADER_MAX, "fields", (json_int_t)h.fields, "maxFields",
                          (json_int_t)HEADER_FIELDS_MAX);
    srv_error(r, o, 431, "INVALID_ARGUMENT", "RequestHeaderFieldsTooLarge", p,
              "request line and headers of %zu bytes in %zu fields exceed the limit of %u bytes and %u fields", h.bytes,
              h.fields, HEADER_MAX, HEADER_FIELDS_MAX);
    return true;
}

/* Phase 1. Returns true when the request can go on to its body / handler;
 * false when q->resp holds the answer already. */
static bool begin(srv_server *s, conn_req *q, struct MHD_Connection *c, const char *url, const char *method)
{
    srv_req *r = &q->req;
    r->srv = s;
    r->conn = c;
    r->url = url;
    r->method_name = method;
    r->method = method_of(method);
    query_build qb = {0};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, collect_arg, &qb);
    if (qb.oom) {
        free(qb.buf);
        srv_odf_error(&q->resp, 500, "out of memory");
        return false;
    }
    int rc = srv_target_parse(&r->target, url, qb.buf);
    free(qb.buf);
    if (rc == 0 && headers_too_large(r, &q->resp, qb.len))
        return false;
    if (rc < 0) {
        const char *seg = url[0] == '/' ? url + 1 : url;
        if (srv_foundry_envelope(seg, strcspn(seg, "/?")))
            srv_foundry_error(&q->resp, 400, "INVALID_ARGUMENT", "InvalidRequestTarget", NULL,
                              "malformed request target: bad %%-escape, '.' or '..' segment, NUL byte or invalid UTF-8");
        else
            srv_odf_error(&q->resp, 400,
                          "malformed request target: bad %%-escape, '.' or '..' segment, NUL byte or invalid UTF-8");
        return false;
    }
    if (r->method == SRV_OPTIONS) {
        preflight(s, &q->resp);
        return false;
    }
    srv_family fam;
    unsigned allowed;
    srv_match_result m = srv_route_match(r->method, &r->target, &r->route, r->params, &r->nparams, q->joined,
                                         sizeof q->joined, &fam, &allowed);
    if (m == SRV_NO_ROUTE) {
        srv_error(r, &q->resp, 404, "NOT_FOUND", "RouteNotFound", NULL, "no route for %s %s", method, url);
        return false;
    }
    if (m == SRV_BAD_METHOD) {
        char ms[64];
        methods_text(allowed, ms, sizeof ms);
        srv_error(r, &q->resp, 405, "INVALID_ARGUMENT", "MethodNotAllowed", NULL, "%s is not allowed on %s (allowed: %s)",
                  method, url, ms);
        srv_resp_header(&q->resp, "Allow", ms);
        return false;
    }
    if (r->route->need != SRV_NEED_NONE && (authenticate(s, r, &q->resp) < 0 || authorize(r, &q->resp) < 0))
        return false;
    return true;
}

/* Prepares the body sink after begin() succeeded. */
static bool begin_body(srv_server *s, conn_req *q)
{
    srv_req *r = &q->req;
    const char *cl = srv_header(r, "Content-Length");
    const char *te = NULL;
    uint64_t declared = cl ? strtoull(cl, NULL, 10) : 0;
    (void)te;
    uint64_t cap = r->route->body == SRV_BODY_FILE ? s->max_upload : JSON_BODY_MAX;
    if (declared > cap) {
        json_t *p = json_pack("{s:I,s:I}", "sizeBytes", (json_int_t)declared, "maxSizeBytes", (json_int_t)cap);
        srv_error(r, &q->resp, 413, "REQUEST_ENTITY_TOO_LARGE", "RequestEntityTooLarge", p,
                  "request body of %llu bytes is larger than the limit of %llu bytes (--max-upload)",
                  (unsigned long long)declared, (unsigned long long)cap);
        return false;
    }
    if (r->route->body != SRV_BODY_FILE)
        return true;
    silt_workspace *ws = NULL;
    char *dir = NULL;
    if (silt_workspace_open(&ws, s->ws_dir) < 0 || silt_workspace_mktemp(ws, &dir) < 0) {
        srv_lib_error(r, &q->resp, SILT_EIO, NULL, NULL);
        silt_workspace_free(ws);
        return false;
    }
    silt_workspace_free(ws);
    q->scratch_dir = dir;
    size_t n = strlen(dir) + 8;
    r->body_path = malloc(n);
    if (!r->body_path) {
        srv_odf_error(&q->resp, 500, "out of memory");
        return false;
    }
    snprintf(r->body_path, n, "%s/body", dir);
    q->body_fd = open(r->body_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (q->body_fd < 0) {
        srv_error(r, &q->resp, 500, "INTERNAL", "Default:Internal", NULL, "cannot create %s: %s", r->body_path,
                  strerror(errno));
        return false;
    }
    return true;
}

/* Phase 2: one chunk of the body. Returns false when q->resp holds an error. */
static bool take_body(srv_server *s, conn_req *q, const char *data, size_t n)
{
    srv_req *r = &q->req;
    uint64_t cap = r->route->body == SRV_BODY_FILE ? s->max_upload : JSON_BODY_MAX;
    if (r->route->body == SRV_BODY_NONE) {
        q->received += n; /* ignored (e.g. the JSON content type of a GET) */
        return true;
    }
    if (q->received + n > cap) {
        json_t *p = json_pack("{s:I}", "maxSizeBytes", (json_int_t)cap);
        srv_error(r, &q->resp, 413, "REQUEST_ENTITY_TOO_LARGE", "RequestEntityTooLarge", p,
                  "request body is larger than the limit of %llu bytes (--max-upload)", (unsigned long long)cap);
        return false;
    }
    q->received += n;
    if (r->route->body == SRV_BODY_JSON) {
        char *nb = realloc(r->body, r->body_len + n + 1);
        if (!nb) {
            srv_odf_error(&q->resp, 500, "out of memory");
            return false;
        }
        memcpy(nb + r->body_len, data, n);
        r->body = nb;
        r->body_len += n;
        r->body[r->body_len] = '\0';
        return true;
    }
    while (n) {
        ssize_t w = write(q->body_fd, data, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            srv_error(r, &q->resp, 500, "INTERNAL", "Default:Internal", NULL, "writing the request body failed: %s",
                      strerror(errno));
            return false;
        }
        data += w;
        n -= (size_t)w;
    }
    return true;
}

/* Fills as much of MHD's block as the stream gives at once: a stream may
 * hand out one message or one chunk per call, and every callback return is
 * an HTTP chunk and a write, so small pieces are gathered first. */
static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
    srv_resp *holder = cls;
    size_t got = 0;
    while (got < max) {
        long n = holder->stream(holder->stream_ctx, pos + got, buf + got, max - got);
        if (n < 0)
            return got ? (ssize_t)got : MHD_CONTENT_READER_END_WITH_ERROR;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    return got ? (ssize_t)got : MHD_CONTENT_READER_END_OF_STREAM;
}

static void stream_free(void *cls)
{
    srv_resp *holder = cls;
    if (holder->stream_free)
        holder->stream_free(holder->stream_ctx);
    free(holder);
}

/* A small file's response from memory (NULL: send it from the fd). MHD
 * sends an fd response's header and body as two writes (sendfile), and the
 * second one waits for the client's delayed ACK (Nagle): up to 40 ms for a
 * 4 KiB file. One buffer goes out with its header in one write. */
static struct MHD_Response *small_file(srv_resp *o)
{
    size_t n = (size_t)o->fd_size, got = 0;
    char *buf = malloc(n ? n : 1);
    if (!buf)
        return NULL;
    while (got < n) {
        ssize_t k = pread(o->fd, buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    struct MHD_Response *resp = got == n ? MHD_create_response_from_buffer(n, buf, MHD_RESPMEM_MUST_FREE) : NULL;
    if (!resp) {
        free(buf);
        return NULL;
    }
    close(o->fd);
    o->fd = -1;
    return resp;
}

/* Turns q->resp into an MHD response and queues it. */
static enum MHD_Result send_resp(srv_server *s, conn_req *q, struct MHD_Connection *c)
{
    srv_resp *o = &q->resp;
    struct MHD_Response *resp = NULL;
    if (o->stream) {
        srv_resp *holder = malloc(sizeof *holder);
        if (holder) {
            srv_resp_init(holder);
            holder->stream = o->stream;
            holder->stream_ctx = o->stream_ctx;
            holder->stream_free = o->stream_free;
            resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256 * 1024, stream_reader, holder, stream_free);
            if (resp) {
                o->stream = NULL;
                o->stream_ctx = NULL;
                o->stream_free = NULL;
            } else {
                free(holder);
            }
        }
        o->bytes = 0;
    } else if (o->fd >= 0 && o->fd_size <= SMALL_FILE_MAX && (resp = small_file(o)) != NULL) {
        o->bytes = o->fd_size;
    } else if (o->fd >= 0) {
        resp = MHD_create_response_from_fd64(o->fd_size, o->fd);
        if (resp)
            o->fd = -1;
        o->bytes = o->fd_size;
    } else {
        resp = MHD_create_response_from_buffer(o->len, o->buf, MHD_RESPMEM_MUST_FREE);
        if (resp)
            o->buf = NULL;
        o->bytes = o->len;
    }
    if (!resp)
        return MHD_NO;
    if (o->content_type)
        MHD_add_response_header(resp, "Content-Type", o->content_type);
    for (size_t i = 0; i < o->nheaders; i++)
        MHD_add_response_header(resp, o->headers[i].name, o->headers[i].value);
    add_cors(s, c, resp);
    enum MHD_Result rc = MHD_queue_response(c, (unsigned)o->status, resp);
    MHD_destroy_response(resp);
    q->queued = true;
    return rc;
}

/* Request records are reused: each thread keeps the record of its last
 * finished request (thread-per-connection: a keep-alive connection's
 * requests run on one thread). A record is 9 KiB, mostly the target's slot
 * arrays and the `*name` join buffer, which hold nothing beyond their
 * counts; a fresh calloc per request cleared all of it and, being a large
 * allocation, made malloc consolidate its fast bins every time. */
static pthread_key_t g_spare_key;
static pthread_once_t g_spare_once = PTHREAD_ONCE_INIT;
static bool g_spare_ok;

static void spare_init(void) { g_spare_ok = pthread_key_create(&g_spare_key, free) == 0; }

/* A record with every field of an unused one (malloc'd; conn_req_give). */
static conn_req *conn_req_take(void)
{
    pthread_once(&g_spare_once, spare_init);
    conn_req *q = g_spare_ok ? pthread_getspecific(g_spare_key) : NULL;
    if (q)
        pthread_setspecific(g_spare_key, NULL);
    else if (!(q = malloc(sizeof *q)))
        return NULL;
    /* everything but the slot arrays of the target and the join buffer */
    memset(&q->req, 0, offsetof(srv_req, target));
    q->req.target.nseg = q->req.target.nargs = 0;
    q->req.target.text = NULL;
    memset((char *)&q->req + offsetof(srv_req, route), 0, sizeof q->req - offsetof(srv_req, route));
    srv_resp_init(&q->resp);
    q->ready = q->queued = false;
    q->body_fd = -1;
    q->scratch_dir = NULL;
    q->received = 0;
    q->joined[0] = '\0';
    return q;
}

/* Keeps q (its contents released) as this thread's spare, or frees it. */
static void conn_req_give(conn_req *q)
{
    if (g_spare_ok && !pthread_getspecific(g_spare_key) && pthread_setspecific(g_spare_key, q) == 0)
        return;
    free(q);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    srv_server *s = cls;
    conn_req *q = *con_cls;
    if (!q) {
        q = conn_req_take();
        if (!q)
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &q->start);
        *con_cls = q;
        atomic_fetch_add(&s->active, 1);
        if (!begin(s, q, c, url, method) || !begin_body(s, q)) {
            q->ready = true;
            /* an early answer with a body coming: send it now (MHD closes
             * the connection after it instead of reading the body) */
            const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
            const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Transfer-Encoding");
            if ((cl && strtoull(cl, NULL, 10) > 0) || te)
                return send_resp(s, q, c);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!q->ready && !take_body(s, q, upload_data, *upload_data_size)) {
            q->ready = true;
            *upload_data_size = 0;
            return send_resp(s, q, c);
        }
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (q->queued)
        return MHD_YES;
    if (!q->ready) {
        if (q->body_fd >= 0) {
            if (fsync(q->body_fd) < 0 || close(q->body_fd) < 0) {
                q->body_fd = -1;
                srv_error(&q->req, &q->resp, 500, "INTERNAL", "Default:Internal", NULL, "writing the request body failed");
                return send_resp(s, q, c);
            }
            q->body_fd = -1;
            q->req.body_size = q->received;
        }
        q->req.route->handler(&q->req, &q->resp);
        if (!q->resp.status)
            srv_error(&q->req, &q->resp, 500, "INTERNAL", "Default:Internal", NULL, "handler gave no response");
    }
    return send_resp(s, q, c);
}

/* ---- completion: log and clean up ---------------------------------------- */

/* Appends s to line[*n..cap); false when it does not fit. */
static bool put_str(char *line, size_t *n, size_t cap, const char *s)
{
    size_t l = strlen(s);
    if (*n + l >= cap)
        return false;
    memcpy(line + *n, s, l);
    *n += l;
    return true;
}

static bool put_u64(char *line, size_t *n, size_t cap, unsigned long long v)
{
    char d[24];
    size_t k = sizeof d;
    d[--k] = '\0';
    do
        d[--k] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    return put_str(line, n, cap, d + k);
}

/* The log line "METHOD URL STATUS BYTES 1.5ms TOKEN[ (aborted)]\n" formatted
 * without stdio (it is on every request); 0 when it does not fit in cap. */
static size_t log_line(char *line, size_t cap, const char *method, const char *url, int status,
                       unsigned long long bytes, double ms, const char *token, bool aborted)
{
    unsigned long long tenths = ms > 0 ? (unsigned long long)(ms * 10 + 0.5) : 0;
    char frac[3] = {'.', (char)('0' + tenths % 10), '\0'};
    size_t n = 0;
    bool ok = put_str(line, &n, cap, method) && put_str(line, &n, cap, " ") && put_str(line, &n, cap, url) &&
              put_str(line, &n, cap, " ") && put_u64(line, &n, cap, (unsigned long long)(status < 0 ? 0 : status)) &&
              put_str(line, &n, cap, " ") && put_u64(line, &n, cap, bytes) && put_str(line, &n, cap, " ") &&
              put_u64(line, &n, cap, tenths / 10) && put_str(line, &n, cap, frac) && put_str(line, &n, cap, "ms ") &&
              put_str(line, &n, cap, token) && put_str(line, &n, cap, aborted ? " (aborted)\n" : "\n");
    return ok ? n : 0;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)c;
    srv_server *s = cls;
    conn_req *q = *con_cls;
    if (!q)
        return;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double ms = (double)(end.tv_sec - q->start.tv_sec) * 1e3 + (double)(end.tv_nsec - q->start.tv_nsec) / 1e6;
    /* formatted outside the lock; one write(2) per line keeps lines whole */
    char line[1024];
    size_t n = log_line(line, sizeof line, q->req.method_name ? q->req.method_name : "-", q->req.url ? q->req.url : "-",
                        q->queued ? q->resp.status : 0, (unsigned long long)q->resp.bytes, ms,
                        q->req.token.present ? q->req.token.name : "-", toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
    pthread_mutex_lock(&s->log_lock);
    if (n > 0) {
        (void)!write(STDERR_FILENO, line, n);
    } else { /* a long URL: the unbounded path */
        fprintf(stderr, "%s %s %d %llu %.1fms %s%s\n", q->req.method_name ? q->req.method_name : "-",
                q->req.url ? q->req.url : "-", q->queued ? q->resp.status : 0, (unsigned long long)q->resp.bytes,
                ms, q->req.token.present ? q->req.token.name : "-",
                toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (aborted)");
        fflush(stderr);
    }
    pthread_mutex_unlock(&s->log_lock);
    if (q->body_fd >= 0)
        close(q->body_fd);
    if (q->req.body_path)
        unlink(q->req.body_path);
    if (q->scratch_dir)
        rmdir(q->scratch_dir);
    free(q->scratch_dir);
    free(q->req.body_path);
    free(q->req.body);
    if (q->req.token.stored)
        silt_token_info_clear(&q->req.token.info);
    srv_target_clear(&q->req.target);
    srv_resp_clear(&q->resp);
    conn_req_give(q);
    *con_cls = NULL;
    atomic_fetch_sub(&s->active, 1);
}

static size_t unescape_identity(void *cls, struct MHD_Connection *c, char *uri)
{
    (void)cls;
    (void)c;
    return strlen(uri);
}

/* ---- listening socket ------------------------------------------------------ */

static int listen_socket(const char *spec, char *shown, size_t shown_cap)
{
    char host[256];
    const char *port;
    if (spec[0] == '[') {
        const char *e = strchr(spec, ']');
        if (!e || e[1] != ':' || (size_t)(e - spec - 1) >= sizeof host) {
            fprintf(stderr, "silt: --listen '%s': expected HOST:PORT or [IPv6]:PORT\n", spec);
            return -1;
        }
        memcpy(host, spec + 1, (size_t)(e - spec - 1));
        host[e - spec - 1] = '\0';
        port = e + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon || (size_t)(colon - spec) >= sizeof host) {
            fprintf(stderr, "silt: --listen '%s': expected HOST:PORT (e.g. 127.0.0.1:8080)\n", spec);
            return -1;
        }
        memcpy(host, spec, (size_t)(colon - spec));
        host[colon - spec] = '\0';
        port = colon + 1;
    }
    char *end;
    long pn = strtol(port, &end, 10);
    if (!*port || *end || pn < 0 || pn > 65535) {
        fprintf(stderr, "silt: --listen '%s': the port must be a number 0..65535\n", spec);
        return -1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
    struct addrinfo *ai = NULL;
    int g = getaddrinfo(host, port, &hints, &ai);
    if (g != 0) {
        fprintf(stderr, "silt: --listen '%s': %s (give a numeric address, e.g. 127.0.0.1 or [::1])\n", spec,
                gai_strerror(g));
        return -1;
    }
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 512) < 0) {
        fprintf(stderr, "silt: cannot listen on %s: %s\n", spec, strerror(errno));
        if (fd >= 0)
            close(fd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char addr[INET6_ADDRSTRLEN] = "";
    unsigned p = 0;
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &a->sin6_addr, addr, sizeof addr);
        p = ntohs(a->sin6_port);
        snprintf(shown, shown_cap, "[%s]:%u", addr, p);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &a->sin_addr, addr, sizeof addr);
        p = ntohs(a->sin_port);
        snprintf(shown, shown_cap, "%s:%u", addr, p);
    }
    return fd;
}

/* ---- run ------------------------------------------------------------------- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int silt_server_run(const silt_server_opts *o)
{
    silt_workspace *ws = NULL;
    if (silt_workspace_open(&ws, o->workspace) < 0) {
        fprintf(stderr, "silt: %s\n", silt_error_last());
        return 1;
    }
    srv_server s = {0};
    silt_process_caches_enable();
    s.ws_dir = strdup(silt_workspace_path(ws));
    int trc = silt_token_set_open(&s.tokens, ws);
    silt_workspace_free(ws);
    if (trc < 0) {
        fprintf(stderr, "silt: %s\n", silt_error_last());
        free(s.ws_dir);
        return 1;
    }
    if (!s.ws_dir) {
        fprintf(stderr, "silt: out of memory\n");
        silt_token_set_free(s.tokens);
        return 1;
    }
    s.max_upload = o->max_upload ? o->max_upload : DEFAULT_MAX_UPLOAD;
    s.origins = o->origins;
    s.norigins = o->norigins;
    const char *adm = getenv("SILT_ADMIN_TOKEN");
    s.admin_token = adm && *adm ? adm : NULL;
    pthread_mutex_init(&s.log_lock, NULL);
    atomic_init(&s.active, 0);

    char shown[300];
    int lfd = listen_socket(o->listen ? o->listen : "127.0.0.1:8080", shown, sizeof shown);
    if (lfd < 0) {
        silt_token_set_free(s.tokens);
        free(s.ws_dir);
        return 1;
    }
    /* every thread MHD starts inherits this mask: the signals go to sigwait */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    unsigned timeout = o->connection_timeout ? o->connection_timeout : 60;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_ERROR_LOG, 0, NULL,
        NULL, on_request, &s, MHD_OPTION_LISTEN_SOCKET, lfd, MHD_OPTION_UNESCAPE_CALLBACK, unescape_identity, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_POOL,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout, MHD_OPTION_CONNECTION_LIMIT, 1000u, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "silt: cannot start the HTTP server on %s\n", shown);
        close(lfd);
        silt_token_set_free(s.tokens);
        free(s.ws_dir);
        return 1;
    }
    printf("listening on http://%s\n", shown);
    fflush(stdout);
    srv_sched *sched = srv_sched_start(s.ws_dir, &s.log_lock); /* the flows (flow_sched.h) */
    srv_mqtt *mqtt = srv_mqtt_start(s.ws_dir, &s.log_lock);    /* MQTT sources (mqtt_subs.h) */

    int sig = 0;
    sigwait(&set, &sig);
    fprintf(stderr, "silt serve: %s received, stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    MHD_socket qfd = MHD_quiesce_daemon(d); /* no new connections */
    if (qfd != MHD_INVALID_SOCKET)
        close(qfd);
    srv_sched_request_stop(sched);
    srv_mqtt_request_stop(mqtt);
    double deadline = now_s() + 4.0;
    while ((atomic_load(&s.active) > 0 || !srv_sched_done(sched) || !srv_mqtt_done(mqtt)) && now_s() < deadline) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int left = atomic_load(&s.active);
    if (left > 0) {
        /* Every acknowledged change is durable already (the library commits
         * before a response is sent); what is still running was never
         * acknowledged. Leave without joining its threads. */
        fprintf(stderr, "silt serve: %d request(s) still running after 4 s; exiting without them\n", left);
        fflush(stderr);
        _exit(0);
    }
    if (!srv_sched_done(sched)) {
        /* a flow run that did not reach a safe point: its pull commits whole
         * AddData blocks only, and the pull lock dies with the process */
        fprintf(stderr, "silt serve: a flow run still running after 4 s; exiting without it\n");
        fflush(stderr);
        _exit(0);
    }
    if (!srv_mqtt_done(mqtt)) { /* a subscriber stuck in a send: what it acknowledged is durable */
        fprintf(stderr, "silt serve: an MQTT subscriber still running after 4 s; exiting without it\n");
        fflush(stderr);
        _exit(0);
    }
    srv_mqtt_free(mqtt);
    srv_sched_free(sched);
    MHD_stop_daemon(d);
    silt_token_set_free(s.tokens);
    free(s.ws_dir);
    fprintf(stderr, "silt serve: stopped\n");
    return 0;
}
