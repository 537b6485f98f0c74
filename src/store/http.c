/* http.c — HTTP backend of the store interface (store.h): one dataset of a
 * server of the ODF Simple Transfer Protocol (a silt node's /odf/<name>).
 *
 * Objects: GET/HEAD/PUT <base>/<kind>/<mh>; the head ref: GET <base>/refs/head
 * and PUT <base>/refs/head with If-Match: <old head> (If-None-Match: * when
 * the ref must not exist yet), 412 meaning a lost race (SILT_ECONFLICT).
 * Only the ref "head" exists over HTTP. Every request is one libcurl easy
 * handle of its own, so a store may be used from several threads at once;
 * they share one connection pool (a curl share handle, locked per data
 * kind), so a transfer's requests reuse keep-alive connections.
 * Invariants: the bearer token goes only into the Authorization header,
 * never into a message; a response other than 2xx is an error naming the
 * method, the URL and the server's message; nothing is cached.
 */
#include "store/store.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/arena.h"
#include "util/error.h"
#include "util/hash.h"

typedef struct http_store {
    char *base;  /* ".../odf/<name>" */
    char *auth;  /* "Authorization: Bearer …" or NULL */
    long connect_timeout, timeout;
    CURLSH *share; /* connections (and DNS) reused by every request of the store */
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
    bool locks_ok;
} http_store;

static void share_lock(CURL *e, curl_lock_data d, curl_lock_access a, void *ud)
{
    (void)e;
    (void)a;
    http_store *h = ud;
    pthread_mutex_lock(&h->locks[d]);
}

static void share_unlock(CURL *e, curl_lock_data d, void *ud)
{
    (void)e;
    http_store *h = ud;
    pthread_mutex_unlock(&h->locks[d]);
}

/* The connection pool shared by the store's requests (threads lock it via
 * the callbacks); without it every request would open a connection. A
 * failure leaves h->share NULL: requests then work unshared. */
static void share_init(http_store *h)
{
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        if (pthread_mutex_init(&h->locks[i], NULL) != 0) {
            while (i-- > 0)
                pthread_mutex_destroy(&h->locks[i]);
            return;
        }
    h->locks_ok = true;
    h->share = curl_share_init();
    if (!h->share)
        return;
    curl_share_setopt(h->share, CURLSHOPT_LOCKFUNC, share_lock);
    curl_share_setopt(h->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
    curl_share_setopt(h->share, CURLSHOPT_USERDATA, h);
    if (curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT) != CURLSHE_OK ||
        curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK) {
        curl_share_cleanup(h->share);
        h->share = NULL;
    }
}

static pthread_once_t g_curl_once = PTHREAD_ONCE_INIT;
static CURLcode g_curl_rc;
static void curl_init_once(void) { g_curl_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

/* One request: where the body goes and where it comes from. */
typedef struct http_call {
    const char *method;
    const char *url;
    silt_buf *sink_buf;        /* response body (2xx) */
    FILE *sink_file;           /* … or into this file */
    silt_sha3_ctx *sink_hash;  /* the file's bytes are hashed as they come */
    uint64_t sink_bytes;       /* … and counted */
    const void *up_data;       /* request body in memory */
    size_t up_len, up_pos;
    FILE *up_file;             /* … or from this file */
    uint64_t up_size;
    const char *extra_header;  /* e.g. If-Match */
    long status;
    double content_length;
    silt_buf err_body;         /* response body of a non-2xx answer */
    int write_failed;
} http_call;

static size_t on_write(char *ptr, size_t size, size_t n, void *ud)
{
    http_call *c = ud;
    size_t len = size * n;
    if (c->write_failed)
        return 0;
    if (c->sink_file && c->status >= 200 && c->status < 300) {
        if (fwrite(ptr, 1, len, c->sink_file) != len) {
            c->write_failed = errno ? errno : EIO;
            return 0;
        }
        if (c->sink_hash && silt_sha3_update(c->sink_hash, ptr, len) < 0) {
            c->write_failed = EIO;
            return 0;
        }
        c->sink_bytes += len;
        return len;
    }
    silt_buf *b = (c->status >= 200 && c->status < 300 && c->sink_buf) ? c->sink_buf : &c->err_body;
    if (b == &c->err_body && b->len > 4096)
        return len; /* enough of an error message */
    if (silt_buf_append(b, ptr, len) < 0) {
        c->write_failed = ENOMEM;
        return 0;
    }
    return len;
}

long silt_http_status_line(const char *buf, size_t len)
{
    if (len < 5 || strncmp(buf, "HTTP/", 5) != 0)
        return -1;
    const char *sp = memchr(buf, ' ', len), *end = buf + len;
    if (!sp)
        return -1;
    long v = 0;
    int digits = 0;
    for (const char *p = sp + 1; p < end && *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
        v = v * 10 + (*p - '0');
    return digits == 3 ? v : -1;
}

/* (libcurl passes header lines without a terminating NUL.) */
static size_t on_header(char *buf, size_t size, size_t n, void *ud)
{
    http_call *c = ud;
    long st = silt_http_status_line(buf, size * n);
    if (st >= 0)
        c->status = st;
    return size * n;
}

static size_t on_read(char *ptr, size_t size, size_t n, void *ud)
{
    http_call *c = ud;
    size_t cap = size * n;
    if (c->up_file)
        return fread(ptr, 1, cap, c->up_file);
    size_t left = c->up_len - c->up_pos;
    size_t k = left < cap ? left : cap;
    if (k)
        memcpy(ptr, (const char *)c->up_data + c->up_pos, k);
    c->up_pos += k;
    return k;
}

const char *silt_http_server_message(silt_buf *body)
{
    if (!body->data || !body->len)
        return "";
    char *m = strstr(body->data, "\"message\"");
    char *q = m ? strchr(m + 9, '"') : NULL;
    if (q) {
        char *e = strchr(q + 1, '"');
        if (e)
            *e = '\0';
        return q + 1;
    }
    if (body->len > 200)
        body->data[200] = '\0';
    for (char *p = body->data; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    return body->data;
}

static const char *server_message(http_call *c) { return silt_http_server_message(&c->err_body); }

static int perform(http_store *h, http_call *c)
{
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_rc != CURLE_OK)
        return silt_err(SILT_EIO, "cannot initialise libcurl");
    CURL *e = curl_easy_init();
    struct curl_slist *hdr = NULL;
    if (!e)
        return silt_err(SILT_ENOMEM, "http store: out of memory");
    if (h->auth)
        hdr = curl_slist_append(hdr, h->auth);
    if (c->extra_header)
        hdr = curl_slist_append(hdr, c->extra_header);
    hdr = curl_slist_append(hdr, "Expect:");
    curl_easy_setopt(e, CURLOPT_URL, c->url);
    if (h->share)
        curl_easy_setopt(e, CURLOPT_SHARE, h->share);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, h->connect_timeout);
    if (h->timeout)
        curl_easy_setopt(e, CURLOPT_TIMEOUT, h->timeout);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, c);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, c);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    if (strcmp(c->method, "HEAD") == 0) {
        curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (strcmp(c->method, "PUT") == 0) {
        curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(e, CURLOPT_READDATA, c);
        curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                         (curl_off_t)(c->up_file ? c->up_size : c->up_len));
    }
    CURLcode cc = curl_easy_perform(e);
    curl_off_t cl = -1;
    curl_easy_getinfo(e, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    c->content_length = (double)cl;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &c->status);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(e);
    if (c->write_failed)
        return silt_err(c->write_failed == ENOMEM ? SILT_ENOMEM : SILT_EIO, "%s %s: cannot store the response: %s",
                        c->method, c->url, strerror(c->write_failed));
    if (cc != CURLE_OK)
        return silt_err(SILT_EIO, "%s %s: %s", c->method, c->url, curl_easy_strerror(cc));
    return 0;
}

/* Maps a finished call's status to 0 or an error (404 -> SILT_ENOTFOUND,
 * 412 -> SILT_ECONFLICT, 401/403 -> SILT_EINVAL). */
static int status_rc(http_call *c, const char *what)
{
    if (c->status >= 200 && c->status < 300)
        return 0;
    const char *m = server_message(c);
    int code = c->status == 404   ? SILT_ENOTFOUND
               : c->status == 412 ? SILT_ECONFLICT
               : (c->status == 401 || c->status == 403) ? SILT_EINVAL
               : c->status == 400 ? SILT_ECORRUPT
                                  : SILT_EIO;
    return silt_err(code, "%s %s: HTTP %ld%s%s", c->method, what, c->status, *m ? ": " : "", m);
}

static char *obj_url(http_store *h, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    if (!kind || (strcmp(kind, "blocks") && strcmp(kind, "data") && strcmp(kind, "checkpoints"))) {
        silt_err(SILT_EINVAL, "store: unknown object kind '%s'", kind ? kind : "(null)");
        return NULL;
    }
    char text[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(mh, SILT_MH_LEN, text);
    size_t n = strlen(h->base) + strlen(kind) + sizeof text + 4;
    char *u = malloc(n);
    if (!u)
        silt_err(SILT_ENOMEM, "http store: out of memory");
    else
        snprintf(u, n, "%s/%s/%s", h->base, kind, text);
    return u;
}

static int ht_get(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], silt_buf *out)
{
    char *u = obj_url(s->impl, kind, mh);
    if (!u)
        return silt_error_code();
    http_call c = {.method = "GET", .url = u, .sink_buf = out};
    int rc = perform(s->impl, &c);
    if (rc == 0)
        rc = status_rc(&c, u);
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

/* GET into dst, hashing (SHA3-256) and counting the body as it is written. */
static int ht_get_to_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst,
                          uint8_t digest[SILT_SHA3_256_LEN], uint64_t *size)
{
    char *u = obj_url(s->impl, kind, mh);
    if (!u)
        return silt_error_code();
    silt_sha3_ctx *hc = silt_sha3_new();
    FILE *f = hc ? fopen(dst, "we") : NULL;
    if (!f) {
        int rc = hc ? silt_err(SILT_EIO, "%s: %s", dst, strerror(errno)) : silt_err(SILT_ENOMEM, "http store: out of memory");
        silt_sha3_free(hc);
        free(u);
        return rc;
    }
    http_call c = {.method = "GET", .url = u, .sink_file = f, .sink_hash = hc};
    int rc = perform(s->impl, &c);
    if (rc == 0)
        rc = status_rc(&c, u);
    if (fclose(f) != 0 && rc == 0)
        rc = silt_err(SILT_EIO, "%s: %s", dst, strerror(errno));
    if (rc == 0)
        rc = silt_sha3_final(hc, digest);
    *size = c.sink_bytes;
    silt_sha3_free(hc);
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

static int ht_stat(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], uint64_t *size_out)
{
    char *u = obj_url(s->impl, kind, mh);
    if (!u)
        return silt_error_code();
    http_call c = {.method = "HEAD", .url = u};
    int rc = perform(s->impl, &c);
    if (rc == 0) {
        rc = status_rc(&c, u);
        if (rc == SILT_ENOTFOUND) {
            silt_err_clear();
            rc = 0;
        } else if (rc == 0) {
            if (size_out)
                *size_out = c.content_length >= 0 ? (uint64_t)c.content_length : 0;
            rc = 1;
        }
    }
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

static int ht_put_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *src)
{
    char *u = obj_url(s->impl, kind, mh);
    if (!u)
        return silt_error_code();
    FILE *f = fopen(src, "re");
    long end = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        end = ftell(f);
    if (!f || end < 0 || fseek(f, 0, SEEK_SET) != 0) {
        int rc = silt_err(SILT_EIO, "%s: %s", src, strerror(errno));
        if (f)
            fclose(f);
        free(u);
        return rc;
    }
    http_call c = {.method = "PUT", .url = u, .up_file = f, .up_size = (uint64_t)end};
    int rc = perform(s->impl, &c);
    if (rc == 0)
        rc = status_rc(&c, u);
    fclose(f);
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

static int ht_put(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const void *data, size_t len)
{
    char *u = obj_url(s->impl, kind, mh);
    if (!u)
        return silt_error_code();
    http_call c = {.method = "PUT", .url = u, .up_data = data, .up_len = len};
    int rc = perform(s->impl, &c);
    if (rc == 0)
        rc = status_rc(&c, u);
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

static int ht_adopt_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *src)
{
    int rc = ht_put_file(s, kind, mh, src);
    unlink(src);
    return rc;
}

static char *head_url(http_store *h, const char *ref)
{
    if (!ref || strcmp(ref, "head") != 0) {
        silt_err(SILT_EINVAL, "http store: only the ref 'head' is served (not '%s')", ref ? ref : "(null)");
        return NULL;
    }
    size_t n = strlen(h->base) + 16;
    char *u = malloc(n);
    if (!u)
        silt_err(SILT_ENOMEM, "http store: out of memory");
    else
        snprintf(u, n, "%s/refs/head", h->base);
    return u;
}

static int ht_ref_read(silt_store *s, const char *ref, silt_buf *out)
{
    char *u = head_url(s->impl, ref);
    if (!u)
        return silt_error_code();
    size_t start = out->len;
    http_call c = {.method = "GET", .url = u, .sink_buf = out};
    int rc = perform(s->impl, &c);
    if (rc == 0)
        rc = status_rc(&c, u);
    while (rc == 0 && out->len > start && strchr("\r\n \t", out->data[out->len - 1]))
        out->data[--out->len] = '\0';
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

static int ht_ref_cas(silt_store *s, const char *ref, const char *expected, const char *value)
{
    if (!value || !*value || strchr(value, '\n') || (expected && strchr(expected, '\n')))
        return silt_err(SILT_EINVAL, "ref %s: invalid value", ref ? ref : "(null)");
    char *u = head_url(s->impl, ref);
    if (!u)
        return silt_error_code();
    char hdr[SILT_MH_TEXT_LEN + 64];
    if (expected)
        snprintf(hdr, sizeof hdr, "If-Match: %s", expected);
    else
        snprintf(hdr, sizeof hdr, "If-None-Match: *");
    http_call c = {.method = "PUT", .url = u, .up_data = value, .up_len = strlen(value), .extra_header = hdr};
    int rc = perform(s->impl, &c);
    if (rc == 0)
        rc = status_rc(&c, u);
    silt_buf_free(&c.err_body);
    free(u);
    return rc;
}

static int ht_ref_delete(silt_store *s, const char *ref, const char *expected)
{
    (void)s;
    (void)expected;
    return silt_err(SILT_EINVAL, "http store: refs/%s cannot be deleted over HTTP", ref ? ref : "(null)");
}

static void ht_free(silt_store *s)
{
    http_store *h = s->impl;
    if (h) {
        if (h->share)
            curl_share_cleanup(h->share);
        for (int i = 0; h->locks_ok && i < CURL_LOCK_DATA_LAST; i++)
            pthread_mutex_destroy(&h->locks[i]);
        free(h->base);
        if (h->auth) {
            memset(h->auth, 0, strlen(h->auth));
            free(h->auth);
        }
    }
    free(h);
    free(s);
}

static const silt_store_ops HTTP_OPS = {
    .backend = "http",
    .put = ht_put,
    .put_file = ht_put_file,
    .adopt_file = ht_adopt_file,
    .get = ht_get,
    .stat = ht_stat,
    .ref_read = ht_ref_read,
    .ref_cas = ht_ref_cas,
    .ref_delete = ht_ref_delete,
    .object_path = NULL,
    .get_to_file = ht_get_to_file,
    .free = ht_free,
};

int silt_store_open_http(silt_store **out, const char *base, const silt_store_remote_opts *opts)
{
    *out = NULL;
    silt_store *s = silt_zalloc(sizeof *s);
    http_store *h = silt_zalloc(sizeof *h);
    if (s && h && (h->base = strdup(base))) {
        size_t n = strlen(h->base);
        while (n > 0 && h->base[n - 1] == '/')
            h->base[--n] = '\0';
    }
    const char *tok = opts ? opts->token : NULL;
    if (s && h && h->base && tok && *tok) {
        size_t n = strlen(tok) + 32;
        if ((h->auth = malloc(n)))
            snprintf(h->auth, n, "Authorization: Bearer %s", tok);
    }
    if (!s || !h || !h->base || (tok && *tok && !h->auth)) {
        if (h) {
            free(h->base);
            free(h->auth);
        }
        free(h);
        free(s);
        return silt_err(SILT_ENOMEM, "http store: out of memory");
    }
    h->connect_timeout = opts && opts->connect_timeout_s > 0 ? opts->connect_timeout_s : 10;
    h->timeout = opts ? opts->timeout_s : 0;
    pthread_once(&g_curl_once, curl_init_once);
    if (g_curl_rc == CURLE_OK)
        share_init(h);
    s->ops = &HTTP_OPS;
    s->impl = h;
    *out = s;
    return 0;
}
