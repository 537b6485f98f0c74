/* respond.c — response builders and the two error envelopes (see http.h).
 * No libmicrohttpd here: http.c turns an srv_resp into an MHD response.
 */
#include "http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

void srv_resp_init(srv_resp *o)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
}

void srv_resp_clear(srv_resp *o)
{
    free(o->buf);
    if (o->fd >= 0)
        close(o->fd);
    if (o->stream_free && o->stream_ctx)
        o->stream_free(o->stream_ctx);
    for (size_t i = 0; i < o->nheaders; i++) {
        free(o->headers[i].name);
        free(o->headers[i].value);
    }
    srv_resp_init(o);
}

/* Drops any body set before (a handler that failed half-way). */
static void reset_body(srv_resp *o)
{
    free(o->buf);
    o->buf = NULL;
    o->len = 0;
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->stream_free && o->stream_ctx)
        o->stream_free(o->stream_ctx);
    o->stream = NULL;
    o->stream_ctx = NULL;
    o->stream_free = NULL;
}

int srv_resp_header(srv_resp *o, const char *name, const char *value)
{
    if (o->nheaders >= sizeof o->headers / sizeof o->headers[0])
        return SILT_EINVAL;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return SILT_ENOMEM;
    }
    o->headers[o->nheaders].name = n;
    o->headers[o->nheaders].value = v;
    o->nheaders++;
    return 0;
}

int srv_bytes(srv_resp *o, int status, const char *content_type, const void *data, size_t len)
{
    reset_body(o);
    o->buf = malloc(len + 1);
    if (!o->buf) {
        o->status = 500;
        o->content_type = "application/json";
        return SILT_ENOMEM;
    }
    if (len)
        memcpy(o->buf, data, len);
    o->buf[len] = '\0';
    o->len = len;
    o->status = status;
    o->content_type = content_type;
    return 0;
}

int srv_bytes_take(srv_resp *o, int status, const char *content_type, char *buf, size_t len)
{
    reset_body(o);
    o->buf = buf;
    o->len = len;
    o->status = status;
    o->content_type = content_type;
    return 0;
}

int srv_json(srv_resp *o, int status, json_t *j)
{
    if (!j)
        return srv_bytes(o, 500, "application/json", "{\"message\":\"out of memory\"}", 27);
    char *text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    if (!text)
        return srv_bytes(o, 500, "application/json", "{\"message\":\"out of memory\"}", 27);
    reset_body(o);
    o->buf = text;
    o->len = strlen(text);
    o->status = status;
    o->content_type = "application/json";
    return 0;
}

int srv_empty(srv_resp *o, int status)
{
    reset_body(o);
    o->status = status;
    o->content_type = NULL;
    return 0;
}

int srv_file(srv_resp *o, int status, const char *content_type, int fd, uint64_t size)
{
    reset_body(o);
    o->fd = fd;
    o->fd_size = size;
    o->status = status;
    o->content_type = content_type;
    return 0;
}

int srv_stream(srv_resp *o, int status, const char *content_type, srv_stream_fn fn, void *ctx,
               srv_stream_free_fn free_fn)
{
    reset_body(o);
    o->stream = fn;
    o->stream_ctx = ctx;
    o->stream_free = free_fn;
    o->status = status;
    o->content_type = content_type;
    return 0;
}

/* ---- errors -------------------------------------------------------------- */

static int status_of_code(const char *code)
{
    static const struct {
        const char *code;
        int status;
    } MAP[] = {
        {"PERMISSION_DENIED", 403}, {"INVALID_ARGUMENT", 400}, {"NOT_FOUND", 404},
        {"CONFLICT", 409},          {"REQUEST_ENTITY_TOO_LARGE", 413}, {"FAILED_PRECONDITION", 500},
        {"INTERNAL", 500},          {"TIMEOUT", 500},          {"CUSTOM_CLIENT", 400},
        {"CUSTOM_SERVER", 500},
    };
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (strcmp(MAP[i].code, code) == 0)
            return MAP[i].status;
    return 500;
}

static void uuid_v4(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b) {
        /* never fails for 16 bytes after boot; keep a unique-enough fallback */
        for (size_t i = 0; i < sizeof b; i++)
            b[i] = (unsigned char)(rand() & 0xff);
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static int foundry_error_v(srv_resp *o, int status, const char *code, const char *name, json_t *params,
                           const char *fmt, va_list ap)
{
    char msg[1024] = "";
    if (fmt)
        vsnprintf(msg, sizeof msg, fmt, ap);
    char id[37];
    uuid_v4(id);
    json_t *j = json_object();
    if (j) {
        json_object_set_new(j, "errorCode", json_string(code));
        json_object_set_new(j, "errorName", json_string(name));
        json_object_set_new(j, "errorInstanceId", json_string(id));
        json_object_set_new(j, "parameters", params ? params : json_object());
        params = NULL;
        json_object_set_new(j, "message", json_string(*msg ? msg : name));
    }
    json_decref(params);
    return srv_json(o, status > 0 ? status : status_of_code(code), j);
}

int srv_foundry_error(srv_resp *o, int status, const char *error_code, const char *error_name, json_t *params,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = foundry_error_v(o, status, error_code, error_name, params, fmt, ap);
    va_end(ap);
    return rc;
}

static int odf_error_v(srv_resp *o, int status, const char *fmt, va_list ap)
{
    char msg[1024] = "";
    if (fmt)
        vsnprintf(msg, sizeof msg, fmt, ap);
    json_t *j = json_pack("{s:s}", "message", msg);
    return srv_json(o, status, j);
}

int srv_odf_error(srv_resp *o, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = odf_error_v(o, status, fmt, ap);
    va_end(ap);
    return rc;
}

bool srv_foundry_envelope(const char *seg, size_t len)
{
    return (len == 3 && memcmp(seg, "api", 3) == 0) || (len == 5 && memcmp(seg, "admin", 5) == 0);
}

int srv_error(srv_req *r, srv_resp *o, int status, const char *error_code, const char *error_name, json_t *params,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc;
    bool foundry = r->target.nseg > 0 &&
                   srv_foundry_envelope(r->target.segments[0], strlen(r->target.segments[0]));
    if (foundry) {
        rc = foundry_error_v(o, status, error_code ? error_code : "INTERNAL",
                             error_name ? error_name : "Default:Internal", params, fmt, ap);
    } else {
        json_decref(params);
        rc = odf_error_v(o, status > 0 ? status : status_of_code(error_code ? error_code : "INTERNAL"), fmt, ap);
    }
    va_end(ap);
    return rc;
}

int srv_lib_error(srv_req *r, srv_resp *o, int code, const char *error_name, json_t *params)
{
    const char *msg = silt_error_last();
    const char *ecode;
    const char *generic;
    int status;
    switch (code) {
    case SILT_ENOTFOUND:
        ecode = "NOT_FOUND", generic = "Default:NotFound", status = 404;
        break;
    case SILT_EEXISTS:
    case SILT_ECONFLICT:
        ecode = "CONFLICT", generic = "Default:Conflict", status = 409;
        break;
    case SILT_EINVAL:
    case SILT_EVALIDATION:
    case SILT_EUNSUPPORTED:
        ecode = "INVALID_ARGUMENT", generic = "Default:InvalidArgument", status = 400;
        break;
    default:
        ecode = "INTERNAL", generic = "Default:Internal", status = 500;
        break;
    }
    return srv_error(r, o, status, ecode, error_name ? error_name : generic, params, "%s",
                     msg && *msg ? msg : "operation failed");
}
