/* s3_client.c — requests to an S3-compatible store (s3_client.h).
 *
 * Each request is one curl easy handle, signed by curl (CURLOPT_AWS_SIGV4
 * "aws:amz:<region>:s3") with the x-amz-content-sha256 header we compute,
 * and retried by s3_perform() under the policy of s3_util.c. Invariants:
 * a response body is delivered to the caller's sink only for 2xx answers
 * (error bodies go to a bounded buffer, parsed for the S3 error code); a
 * retried attempt first rewinds the sink, so the caller sees one attempt's
 * bytes; the credentials live only in the curl handle (CURLOPT_USERPWD),
 * never in a message. Query strings are built sorted and escaped, as the
 * SigV4 canonical request requires (curl 7.88 signs them as given). */
#include "store/s3_client.h"

#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fsutil.h"

#define ERR_BODY_MAX 65536
#define DEF_THRESHOLD (64ull << 20)
#define DEF_PART (16ull << 20)
#define MAX_PARTS 10000

struct silt_s3_client {
    char *endpoint, *bucket, *sigv4, *userpwd, *token_hdr;
    uint64_t threshold, part_size;
    int max_retries;
    unsigned base_ms, max_ms;
    long connect_ms, stall_s;
    CURLSH *share;
    pthread_mutex_t locks[CURL_LOCK_DATA_LAST];
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u)
{
    (void)h;
    (void)a;
    pthread_mutex_lock(&((silt_s3_client *)u)->locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *u)
{
    (void)h;
    pthread_mutex_unlock(&((silt_s3_client *)u)->locks[d]);
}

/* ---- client ------------------------------------------------------------ */

static const char *env_or(const char *v, const char *env)
{
    if (v && *v)
        return v;
    const char *e = getenv(env);
    return e && *e ? e : NULL;
}

static int check_endpoint(const char *ep)
{
    size_t scheme = ep && strncmp(ep, "http://", 7) == 0 ? 7 : ep && strncmp(ep, "https://", 8) == 0 ? 8 : 0;
    if (!scheme || !ep[scheme])
        return silt_err(SILT_EINVAL, "s3: endpoint must be an http:// or https:// URL");
    if (strpbrk(ep + scheme, "?# \t\r\n"))
        return silt_err(SILT_EINVAL, "s3: endpoint URL must not have a query, a fragment or blanks");
    return 0;
}

static char *dup_printf(const char *fmt, const char *a, const char *b)
{
    silt_buf t = SILT_BUF_INIT;
    if (silt_buf_printf(&t, fmt, a, b) < 0) {
        silt_buf_free(&t);
        return NULL;
    }
    return silt_buf_detach(&t);
}

static int client_strings(silt_s3_client *c, const silt_s3_config *cfg)
{
    const char *ak = env_or(cfg->access_key, "AWS_ACCESS_KEY_ID");
    const char *sk = env_or(cfg->secret_key, "AWS_SECRET_ACCESS_KEY");
    const char *tok = env_or(cfg->session_token, "AWS_SESSION_TOKEN");
    if (!ak || !sk)
        return silt_err(SILT_EINVAL, "s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
    if (strchr(ak, ':'))
        return silt_err(SILT_EINVAL, "s3: the access key id must not contain ':'");
    size_t el = strlen(cfg->endpoint);
    while (el && cfg->endpoint[el - 1] == '/')
        el--;
    c->endpoint = strndup(cfg->endpoint, el);
    c->bucket = strdup(cfg->bucket);
    c->sigv4 = dup_printf("aws:amz:%s:%s", cfg->region && *cfg->region ? cfg->region : "us-east-1", "s3");
    c->userpwd = dup_printf("%s:%s", ak, sk);
    if (tok)
        c->token_hdr = dup_printf("x-amz-security-token: %s%s", tok, "");
    if (!c->endpoint || !c->bucket || !c->sigv4 || !c->userpwd || (tok && !c->token_hdr))
        return silt_err(SILT_ENOMEM, "s3: out of memory");
    return 0;
}

int silt_s3_client_open(silt_s3_client **out, const silt_s3_config *cfg)
{
    *out = NULL;
    int rc = check_endpoint(cfg ? cfg->endpoint : NULL);
    if (rc < 0)
        return rc;
    if (!silt_s3_valid_bucket(cfg->bucket))
        return silt_err(SILT_EINVAL, "s3: invalid bucket name '%.80s'", cfg->bucket ? cfg->bucket : "");
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return silt_err(SILT_EIO, "s3: cannot initialise libcurl");
    silt_s3_client *c = calloc(1, sizeof *c);
    if (!c)
        return silt_err(SILT_ENOMEM, "s3: out of memory");
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_init(&c->locks[i], NULL);
    rc = client_strings(c, cfg);
    c->threshold = cfg->multipart_threshold ? cfg->multipart_threshold : DEF_THRESHOLD;
    c->part_size = cfg->part_size ? cfg->part_size : DEF_PART;
    c->max_retries = cfg->max_retries < 0 ? 0 : cfg->max_retries ? cfg->max_retries : 4;
    c->base_ms = cfg->retry_base_ms ? cfg->retry_base_ms : 200;
    c->max_ms = cfg->retry_max_ms ? cfg->retry_max_ms : 5000;
    c->connect_ms = cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms : 10000;
    c->stall_s = cfg->stall_timeout_s > 0 ? cfg->stall_timeout_s : 60;
    if (rc == 0 && !(c->share = curl_share_init()))
        rc = silt_err(SILT_ENOMEM, "s3: out of memory");
    if (rc == 0) {
        curl_share_setopt(c->share, CURLSHOPT_LOCKFUNC, share_lock);
        curl_share_setopt(c->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
        curl_share_setopt(c->share, CURLSHOPT_USERDATA, c);
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
        curl_share_setopt(c->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    }
    if (rc < 0) {
        silt_s3_client_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

static void wipe_free(char *s)
{
    if (s) {
        volatile char *v = s;
        while (*v)
            *v++ = 0;
        free(s);
    }
}

void silt_s3_client_free(silt_s3_client *c)
{
    if (!c)
        return;
    if (c->share)
        curl_share_cleanup(c->share);
    for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
        pthread_mutex_destroy(&c->locks[i]);
    free(c->endpoint);
    free(c->bucket);
    free(c->sigv4);
    wipe_free(c->userpwd);
    wipe_free(c->token_hdr);
    free(c);
}

const char *silt_s3_client_bucket(const silt_s3_client *c) { return c->bucket; }

/* ---- one request ------------------------------------------------------- */

typedef struct req {
    const char *op;     /* "PUT", "GET", … (also the message's operation) */
    const char *key;    /* NULL: the bucket itself */
    const char *query;  /* canonical query string or NULL */
    const char *cond[3]; /* extra header lines (NULL-terminated) */
    const char *body;
    size_t body_len, body_off;
    silt_buf *out;      /* 2xx body sink, or */
    FILE *file;         /* 2xx body streamed here */
    size_t out_start;
    /* response */
    long http;
    char etag[SILT_S3_ETAG_MAX];
    uint64_t length;
    silt_buf err_body;
    bool sink_failed;
} req;

static void sha256_hex(const void *data, size_t len, char hex[65])
{
    unsigned char d[32];
    unsigned int n = 0;
    if (!EVP_Digest(data ? data : "", len, d, &n, EVP_sha256(), NULL) || n != 32) {
        strcpy(hex, "UNSIGNED-PAYLOAD");
        return;
    }
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static size_t on_write(char *p, size_t sz, size_t n, void *u)
{
    void **ud = u;
    req *r = ud[0];
    long code = 0;
    curl_easy_getinfo((CURL *)ud[1], CURLINFO_RESPONSE_CODE, &code);
    size_t len = sz * n;
    if (code < 200 || code > 299) {
        if (r->err_body.len + len <= ERR_BODY_MAX && silt_buf_append(&r->err_body, p, len) < 0)
            return 0;
        return len;
    }
    if (r->file) {
        if (fwrite(p, 1, len, r->file) != len) {
            r->sink_failed = true;
            return 0;
        }
    } else if (r->out) {
        if (silt_buf_append(r->out, p, len) < 0) {
            r->sink_failed = true;
            return 0;
        }
    }
    return len;
}

static size_t on_read(char *p, size_t sz, size_t n, void *u)
{
    req *r = u;
    size_t left = r->body_len - r->body_off, want = sz * n;
    if (want > left)
        want = left;
    memcpy(p, r->body + r->body_off, want);
    r->body_off += want;
    return want;
}

static size_t on_header(char *p, size_t sz, size_t n, void *u)
{
    req *r = u;
    size_t len = sz * n;
    if (len > 5 && strncasecmp(p, "ETag:", 5) == 0) {
        const char *v = p + 5, *e = p + len;
        while (v < e && (*v == ' ' || *v == '"'))
            v++;
        while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '"'))
            e--;
        size_t vl = (size_t)(e - v) < SILT_S3_ETAG_MAX - 1 ? (size_t)(e - v) : SILT_S3_ETAG_MAX - 1;
        memcpy(r->etag, v, vl);
        r->etag[vl] = '\0';
    } else if (len > 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
        r->length = strtoull(p + 15, NULL, 10);
    }
    return len;
}

static char *req_url(silt_s3_client *c, const req *r)
{
    silt_buf u = SILT_BUF_INIT;
    int rc = silt_buf_printf(&u, "%s/%s", c->endpoint, c->bucket);
    if (rc == 0 && r->key)
        rc = silt_buf_printf(&u, "/%s", r->key);
    if (rc == 0 && r->query)
        rc = silt_buf_printf(&u, "?%s", r->query);
    if (rc < 0) {
        silt_buf_free(&u);
        return NULL;
    }
    return silt_buf_detach(&u);
}

static struct curl_slist *req_headers(silt_s3_client *c, const req *r)
{
    char line[96];
    char hex[65];
    sha256_hex(r->body, r->body_len, hex);
    snprintf(line, sizeof line, "x-amz-content-sha256: %s", hex);
    struct curl_slist *l = curl_slist_append(NULL, line), *t;
    /* No "Expect:" line to switch 100-continue off: curl 7.88 would sign
     * the empty header it then does not send (SignatureDoesNotMatch). */
    const char *more[5] = {c->token_hdr, r->cond[0], r->cond[1], r->cond[2], NULL};
    for (size_t i = 0; l && i < 4; i++) {
        if (!more[i])
            continue;
        if (!(t = curl_slist_append(l, more[i]))) {
            curl_slist_free_all(l);
            return NULL;
        }
        l = t;
    }
    return l;
}

static void setup_handle(silt_s3_client *c, CURL *h, req *r, void **ud, char *errbuf)
{
    curl_easy_setopt(h, CURLOPT_SHARE, c->share);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->stall_s);
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
    curl_easy_setopt(h, CURLOPT_USERPWD, c->userpwd);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "silt-s3");
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, ud);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, r);
    if (strcmp(r->op, "PUT") == 0) {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(h, CURLOPT_READDATA, r);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->op, "POST") == 0) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body ? r->body : "");
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
    } else if (strcmp(r->op, "HEAD") == 0) {
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (strcmp(r->op, "DELETE") == 0) {
        curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
    }
}

/* Rewinds response state and the caller's sink before an attempt. */
static int reset_attempt(req *r)
{
    r->http = 0;
    r->etag[0] = '\0';
    r->length = 0;
    r->body_off = 0;
    silt_buf_clear(&r->err_body);
    if (r->out) {
        r->out->len = r->out_start;
        if (r->out->data)
            r->out->data[r->out_start] = '\0';
    }
    if (r->file && (fflush(r->file) != 0 || ftruncate(fileno(r->file), 0) != 0 || fseek(r->file, 0, SEEK_SET) != 0))
        return silt_err(SILT_EIO, "s3: %s %s: cannot rewind the local file: %s", r->op,
                        r->key ? r->key : "", strerror(errno));
    return 0;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static double jitter(void)
{
    unsigned char b = 128;
    (void)silt_random_bytes(&b, 1);
    return b / 255.0;
}

/* One attempt; returns the curl code. */
static CURLcode attempt_once(silt_s3_client *c, req *r, char *errbuf)
{
    CURL *h = curl_easy_init();
    if (!h)
        return CURLE_OUT_OF_MEMORY;
    char *url = req_url(c, r);
    struct curl_slist *hdrs = url ? req_headers(c, r) : NULL;
    CURLcode cc = CURLE_OUT_OF_MEMORY;
    if (url && hdrs) {
        void *ud[2] = {r, h};
        setup_handle(c, h, r, ud, errbuf);
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
        cc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->http);
    }
    curl_slist_free_all(hdrs);
    free(url);
    curl_easy_cleanup(h);
    return cc;
}

static int status_error(silt_s3_client *c, req *r, const char *s3code, const char *s3msg)
{
    int code = r->http == 404 ? SILT_ENOTFOUND : r->http == 412 ? SILT_ECONFLICT : SILT_EIO;
    return silt_err(code, "s3: %s %s%s%s: HTTP %ld %s%s%.200s", r->op, c->bucket, r->key ? "/" : "",
                    r->key ? r->key : "", r->http,
                    *s3code ? s3code : r->http == 404 ? "NotFound" : r->http == 412 ? "PreconditionFailed" : "",
                    *s3msg ? ": " : "", s3msg);
}

/* Runs the request with retries. 0 on 2xx; negative code with the message
 * set otherwise (retried at most c->max_retries times when retryable). */
static int s3_perform(silt_s3_client *c, req *r)
{
    r->out_start = r->out ? r->out->len : 0;
    char s3code[64] = "", s3msg[256] = "";
    char errbuf[CURL_ERROR_SIZE];
    CURLcode cc = CURLE_OK;
    int attempt = 0;
    for (;; attempt++) {
        int rc = reset_attempt(r);
        if (rc < 0)
            return rc;
        errbuf[0] = '\0';
        s3code[0] = s3msg[0] = '\0';
        cc = attempt_once(c, r, errbuf);
        if (cc == CURLE_OK && r->http >= 200 && r->http <= 299)
            return 0;
        if (r->err_body.len)
            (void)silt_s3_parse_error(r->err_body.data, r->err_body.len, s3code, sizeof s3code, s3msg,
                                      sizeof s3msg);
        if (r->sink_failed || attempt >= c->max_retries || !silt_s3_retryable((int)cc, r->http, s3code))
            break;
        sleep_ms(silt_s3_backoff_ms((unsigned)attempt + 1, c->base_ms, c->max_ms, jitter()));
    }
    if (r->sink_failed)
        return silt_err(SILT_EIO, "s3: %s %s/%s: cannot store the response: %s", r->op, c->bucket,
                        r->key ? r->key : "", r->file ? strerror(errno) : "out of memory");
    if (cc != CURLE_OK)
        return silt_err(SILT_EIO, "s3: %s %s%s%s: %s (after %d attempt%s)", r->op, c->bucket, r->key ? "/" : "",
                        r->key ? r->key : "", *errbuf ? errbuf : curl_easy_strerror(cc), attempt + 1,
                        attempt ? "s" : "");
    return status_error(c, r, s3code, s3msg);
}

static void req_free(req *r) { silt_buf_free(&r->err_body); }

/* ---- operations -------------------------------------------------------- */

int silt_s3_create_bucket(silt_s3_client *c)
{
    req r = {.op = "PUT"};
    int rc = s3_perform(c, &r);
    if (rc < 0 && r.http == 409 && strstr(silt_error_last(), "BucketAlreadyOwnedByYou"))
        rc = 0;
    req_free(&r);
    return rc;
}

int silt_s3_put(silt_s3_client *c, const char *key, const void *data, size_t len, const silt_s3_cond *cond,
                char *etag_out)
{
    char im[SILT_S3_ETAG_MAX + 16];
    req r = {.op = "PUT", .key = key, .body = data, .body_len = len};
    if (cond && cond->if_none_match)
        r.cond[0] = "If-None-Match: *";
    if (cond && cond->if_match) {
        /* radosgw compares If-Match with the stored ETag literally, which is
         * kept without quotes (docs/decisions.md): send it bare. */
        snprintf(im, sizeof im, "If-Match: %s", cond->if_match);
        r.cond[r.cond[0] ? 1 : 0] = im;
    }
    int rc = s3_perform(c, &r);
    if (rc == 0 && etag_out)
        memcpy(etag_out, r.etag, sizeof r.etag);
    req_free(&r);
    return rc;
}

int silt_s3_get(silt_s3_client *c, const char *key, silt_buf *out, char *etag_out)
{
    req r = {.op = "GET", .key = key, .out = out};
    int rc = s3_perform(c, &r);
    if (rc == 0 && etag_out)
        memcpy(etag_out, r.etag, sizeof r.etag);
    req_free(&r);
    return rc;
}

/* Streams into a temp file next to dst_path, renamed over it on success,
 * so a failed download leaves dst_path as it was (as localfs's copy). */
int silt_s3_get_to_file(silt_s3_client *c, const char *key, const char *dst_path)
{
    char rnd[17];
    silt_buf tmp = SILT_BUF_INIT;
    int rc = silt_random_hex(rnd, 8);
    if (rc == 0)
        rc = silt_buf_printf(&tmp, "%s.part-%d-%s", dst_path, (int)getpid(), rnd);
    FILE *f = rc == 0 ? fopen(tmp.data, "wbx") : NULL;
    if (rc == 0 && !f)
        rc = silt_err(SILT_EIO, "%s: %s", tmp.data, strerror(errno));
    if (rc < 0) {
        silt_buf_free(&tmp);
        return rc;
    }
    req r = {.op = "GET", .key = key, .file = f};
    rc = s3_perform(c, &r);
    req_free(&r);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0)
        rc = rc < 0 ? rc : silt_err(SILT_EIO, "%s: %s", dst_path, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = silt_err(SILT_EIO, "%s: %s", dst_path, strerror(errno));
    if (rc == 0 && rename(tmp.data, dst_path) != 0)
        rc = silt_err(SILT_EIO, "cannot move %s to %s: %s", tmp.data, dst_path, strerror(errno));
    if (rc < 0)
        unlink(tmp.data);
    silt_buf_free(&tmp);
    return rc;
}

int silt_s3_head(silt_s3_client *c, const char *key, uint64_t *size_out, char *etag_out)
{
    req r = {.op = "HEAD", .key = key};
    int rc = s3_perform(c, &r);
    if (rc == 0) {
        if (size_out)
            *size_out = r.length;
        if (etag_out)
            memcpy(etag_out, r.etag, sizeof r.etag);
        rc = 1;
    } else if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        rc = 0;
    }
    req_free(&r);
    return rc;
}

int silt_s3_delete(silt_s3_client *c, const char *key)
{
    req r = {.op = "DELETE", .key = key};
    int rc = s3_perform(c, &r);
    req_free(&r);
    return rc;
}

/* ---- listing ----------------------------------------------------------- */

static int list_page(silt_s3_client *c, const char *prefix, unsigned max_keys, const char *token,
                     silt_s3_list_fn fn, void *ctx, bool *truncated, silt_buf *next)
{
    silt_buf q = SILT_BUF_INIT, body = SILT_BUF_INIT;
    char *etok = token && *token ? curl_easy_escape(NULL, token, 0) : NULL;
    char *epre = curl_easy_escape(NULL, prefix, 0);
    int rc = epre && (!token || !*token || etok) ? 0 : silt_err(SILT_ENOMEM, "s3: out of memory");
    /* sorted by name, as the SigV4 canonical query */
    if (rc == 0 && etok)
        rc = silt_buf_printf(&q, "continuation-token=%s&", etok);
    if (rc == 0)
        rc = silt_buf_printf(&q, "list-type=2&max-keys=%u&prefix=%s", max_keys, epre);
    curl_free(etok);
    curl_free(epre);
    if (rc == 0) {
        req r = {.op = "GET", .query = q.data, .out = &body};
        rc = s3_perform(c, &r);
        req_free(&r);
    }
    if (rc == 0) {
        silt_buf_clear(next);
        rc = silt_s3_parse_list(body.data, body.len, fn, ctx, truncated, next);
        if (rc < 0 && rc == SILT_EINVAL)
            rc = silt_err_context(SILT_EIO, "s3: list %s/%s", c->bucket, prefix);
    }
    silt_buf_free(&q);
    silt_buf_free(&body);
    return rc;
}

int silt_s3_list(silt_s3_client *c, const char *prefix, unsigned max_keys, silt_s3_list_fn fn, void *ctx)
{
    silt_buf tok = SILT_BUF_INIT, next = SILT_BUF_INIT;
    bool truncated = true;
    int rc = 0;
    if (!max_keys || max_keys > 1000)
        max_keys = 1000;
    while (rc == 0 && truncated) {
        rc = list_page(c, prefix ? prefix : "", max_keys, tok.data, fn, ctx, &truncated, &next);
        silt_buf_clear(&tok);
        if (rc == 0 && truncated)
            rc = silt_buf_append(&tok, next.data, next.len);
    }
    silt_buf_free(&tok);
    silt_buf_free(&next);
    return rc;
}

/* ---- multipart upload -------------------------------------------------- */

typedef struct mpu {
    silt_s3_client *c;
    const char *key;
    char *upload_id; /* escaped for the query */
    silt_buf complete; /* CompleteMultipartUpload body */
} mpu;

static int mpu_begin(mpu *m)
{
    silt_buf body = SILT_BUF_INIT, id = SILT_BUF_INIT;
    req r = {.op = "POST", .key = m->key, .query = "uploads=", .out = &body};
    int rc = s3_perform(m->c, &r);
    req_free(&r);
    if (rc == 0 && silt_s3_xml_find(body.data, body.len, "UploadId", &id) < 0)
        rc = silt_err(SILT_EIO, "s3: POST %s/%s?uploads: no UploadId in the answer", m->c->bucket, m->key);
    if (rc == 0 && !(m->upload_id = curl_easy_escape(NULL, id.data ? id.data : "", (int)id.len)))
        rc = silt_err(SILT_ENOMEM, "s3: out of memory");
    if (rc == 0)
        rc = silt_buf_puts(&m->complete, "<CompleteMultipartUpload>");
    silt_buf_free(&body);
    silt_buf_free(&id);
    return rc;
}

static int mpu_part(mpu *m, unsigned n, const char *data, size_t len)
{
    char q[512];
    if ((size_t)snprintf(q, sizeof q, "partNumber=%u&uploadId=%s", n, m->upload_id) >= sizeof q)
        return silt_err(SILT_EIO, "s3: upload id too long");
    req r = {.op = "PUT", .key = m->key, .query = q, .body = data, .body_len = len};
    int rc = s3_perform(m->c, &r);
    if (rc == 0)
        rc = silt_buf_printf(&m->complete, "<Part><PartNumber>%u</PartNumber><ETag>\"%s\"</ETag></Part>", n, r.etag);
    req_free(&r);
    return rc;
}

static int mpu_complete(mpu *m)
{
    char q[512];
    snprintf(q, sizeof q, "uploadId=%s", m->upload_id);
    int rc = silt_buf_puts(&m->complete, "</CompleteMultipartUpload>");
    silt_buf body = SILT_BUF_INIT;
    if (rc == 0) {
        req r = {.op = "POST", .key = m->key, .query = q, .body = m->complete.data,
                 .body_len = m->complete.len, .out = &body};
        rc = s3_perform(m->c, &r);
        req_free(&r);
    }
    if (rc == SILT_ENOTFOUND && strstr(silt_error_last(), "NoSuchUpload") &&
        silt_s3_head(m->c, m->key, NULL, NULL) == 1)
        rc = 0; /* a retried complete whose first attempt landed */
    char code[64], msg[256];
    /* S3 may answer 200 with an <Error> body to a CompleteMultipartUpload */
    if (rc == 0 && silt_s3_parse_error(body.data, body.len, code, sizeof code, msg, sizeof msg) == 0)
        rc = silt_err(SILT_EIO, "s3: POST %s/%s (complete multipart upload): %s%s%s", m->c->bucket, m->key, code,
                      *msg ? ": " : "", msg);
    else if (rc == 0)
        silt_err_clear();
    silt_buf_free(&body);
    return rc;
}

static void mpu_abort(mpu *m)
{
    if (!m->upload_id)
        return;
    char q[512];
    snprintf(q, sizeof q, "uploadId=%s", m->upload_id);
    req r = {.op = "DELETE", .key = m->key, .query = q};
    (void)s3_perform(m->c, &r); /* best effort; the first error is the one reported */
    req_free(&r);
}

static int upload_parts(mpu *m, FILE *f, const char *path, uint64_t size)
{
    uint64_t part = m->c->part_size;
    if ((size + part - 1) / part > MAX_PARTS)
        part = (size + MAX_PARTS - 1) / MAX_PARTS;
    char *buf = malloc((size_t)part);
    if (!buf)
        return silt_err(SILT_ENOMEM, "s3: out of memory for a %llu-byte part", (unsigned long long)part);
    int rc = 0;
    for (unsigned n = 1; rc == 0; n++) {
        size_t got = fread(buf, 1, (size_t)part, f);
        if (got < part && ferror(f)) {
            rc = silt_err(SILT_EIO, "%s: read: %s", path, strerror(errno));
            break;
        }
        if (got == 0 && n > 1)
            break;
        rc = mpu_part(m, n, buf, got);
        if (got < part)
            break;
    }
    free(buf);
    return rc;
}

static int put_multipart(silt_s3_client *c, const char *key, const char *path, uint64_t size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "%s: %s", path, strerror(errno));
    mpu m = {.c = c, .key = key, .complete = SILT_BUF_INIT};
    int rc = mpu_begin(&m);
    if (rc == 0)
        rc = upload_parts(&m, f, path, size);
    if (rc == 0)
        rc = mpu_complete(&m);
    fclose(f);
    if (rc < 0) {
        silt_buf saved = SILT_BUF_INIT;
        int code = rc;
        (void)silt_buf_puts(&saved, silt_error_last());
        mpu_abort(&m);
        rc = silt_err(code, "%s", saved.data ? saved.data : "s3: multipart upload failed");
        silt_buf_free(&saved);
    }
    curl_free(m.upload_id);
    silt_buf_free(&m.complete);
    return rc;
}

int silt_s3_put_file(silt_s3_client *c, const char *key, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return silt_err(errno == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "%s: %s", path, strerror(errno));
    if ((uint64_t)st.st_size > c->threshold)
        return put_multipart(c, key, path, (uint64_t)st.st_size);
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &b);
    if (rc == 0)
        rc = silt_s3_put(c, key, b.data, b.len, NULL, NULL);
    silt_buf_free(&b);
    return rc;
}
