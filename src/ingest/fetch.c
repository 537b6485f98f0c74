/* fetch.c — Url and FilesGlob ingress (see fetch.h).
 *
 * Invariants: a URL is only ever written to messages after redaction
 * (user:password@ stripped, then the caller's hook); the body file is
 * complete when silt_fetch_url returns 0 and not up to date, and removed on
 * failure; a 304 / unchanged mtime never touches out_path; redirects are
 * followed up to SILT_HTTP_MAX_REDIRECTS over http/https/ftp only.
 */
#include "ingest/fetch.h"

#include "ingest/event_time.h"
#include "util/buf.h"
#include "util/error.h"

#include <curl/curl.h>
#include <errno.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;
static void curl_init(void) { curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT); }

void silt_http_date(silt_time t, char *out)
{
    static const char *const DAY[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *const MON[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t s = (time_t)t.sec;
    struct tm tm;
    if (!gmtime_r(&s, &tm)) {
        strcpy(out, "Thu, 01 Jan 1970 00:00:00 GMT");
        return;
    }
    snprintf(out, 40, "%s, %02d %s %04d %02d:%02d:%02d GMT", DAY[tm.tm_wday % 7], tm.tm_mday, MON[tm.tm_mon % 12],
             tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

/* URL for messages: userinfo removed, then the caller's redaction. */
static char *redact_url(const silt_fetch_url_opts *o)
{
    const char *u = o->url;
    char *s = strdup(u);
    if (!s)
        return NULL;
    char *scheme = strstr(s, "://");
    if (scheme) {
        char *host = scheme + 3;
        char *slash = strchr(host, '/');
        char *at = strchr(host, '@');
        if (at && (!slash || at < slash))
            memmove(host, at + 1, strlen(at + 1) + 1);
    }
    if (o->redact) {
        char *r = o->redact(o->redact_ctx, s);
        free(s);
        s = r;
    }
    return s;
}

void silt_fetch_url_result_free(silt_fetch_url_result *r)
{
    if (!r)
        return;
    free(r->path);
    free(r->state_kind);
    free(r->state_value);
    memset(r, 0, sizeof *r);
}

static int set_state(silt_fetch_url_result *r, const char *kind, const char *value)
{
    r->state_kind = strdup(kind);
    r->state_value = strdup(value);
    if (!r->state_kind || !r->state_value)
        return silt_err(SILT_ENOMEM, "fetch: out of memory");
    return 0;
}

/* ---- file:// ------------------------------------------------------------- */

static int fetch_file(silt_fetch_url_result *out, const silt_fetch_url_opts *o, const char *shown)
{
    CURLU *h = curl_url();
    char *path = NULL;
    int rc = 0;
    if (!h)
        return silt_err(SILT_ENOMEM, "fetch: out of memory");
    if (curl_url_set(h, CURLUPART_URL, o->url, 0) != CURLUE_OK ||
        curl_url_get(h, CURLUPART_PATH, &path, CURLU_URLDECODE) != CURLUE_OK || !path) {
        curl_url_cleanup(h);
        return silt_err(SILT_EINVAL, "fetch %s: not a valid file URL", shown);
    }
    curl_url_cleanup(h);
    struct stat st;
    if (stat(path, &st) != 0) {
        int e = errno;
        rc = silt_err(e == ENOENT ? SILT_ENOTFOUND : SILT_EIO, "fetch %s: %s", shown, strerror(e));
        curl_free(path);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        curl_free(path);
        return silt_err(SILT_EINVAL, "fetch %s: not a regular file", shown);
    }
    /* mtime in milliseconds, as the state records it */
    silt_time mt = {(int64_t)st.st_mtim.tv_sec, (uint32_t)(st.st_mtim.tv_nsec / 1000000 * 1000000)};
    char text[40];
    silt_time_format(mt, text);
    out->has_last_modified = true;
    out->last_modified = mt;
    out->bytes = (uint64_t)st.st_size;
    if (o->prev_kind && strcmp(o->prev_kind, SILT_STATE_LAST_MODIFIED) == 0 && o->prev_value) {
        silt_time prev;
        if (silt_time_parse(o->prev_value, &prev) == 0 && silt_time_cmp(prev, mt) == 0) {
            out->up_to_date = true;
            curl_free(path);
            return 0;
        }
    }
    out->path = strdup(path);
    curl_free(path);
    if (!out->path)
        return silt_err(SILT_ENOMEM, "fetch: out of memory");
    return set_state(out, SILT_STATE_LAST_MODIFIED, text);
}

/* ---- http(s) / ftp ---------------------------------------------------------- */

typedef struct hdrs {
    char *etag, *last_modified;
    bool oom;
} hdrs;

static char *trim_dup(const char *p, size_t n)
{
    while (n && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return strndup(p, n);
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ctx)
{
    hdrs *h = ctx;
    size_t n = size * nitems;
    if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) { /* a new response (after a redirect): forget the old */
        free(h->etag);
        free(h->last_modified);
        h->etag = h->last_modified = NULL;
        return n;
    }
    char **slot = NULL;
    size_t klen = 0;
    if (n > 5 && strncasecmp(buf, "ETag:", 5) == 0) {
        slot = &h->etag;
        klen = 5;
    } else if (n > 14 && strncasecmp(buf, "Last-Modified:", 14) == 0) {
        slot = &h->last_modified;
        klen = 14;
    }
    if (slot) {
        free(*slot);
        *slot = trim_dup(buf + klen, n - klen);
        if (!*slot)
            h->oom = true;
    }
    return n;
}

static long http_timeout(void)
{
    const char *v = getenv("SILT_HTTP_TIMEOUT");
    if (v && *v) {
        char *end;
        long t = strtol(v, &end, 10);
        if (!*end && t > 0 && t < 1000000)
            return t;
    }
    return SILT_HTTP_TIMEOUT_DEFAULT;
}

static int fetch_curl(silt_fetch_url_result *out, const silt_fetch_url_opts *o, const char *shown, bool http)
{
    if (!o->out_path)
        return silt_err(SILT_EINVAL, "fetch %s: no output path", shown);
    pthread_once(&curl_once, curl_init);
    if (curl_init_rc != CURLE_OK)
        return silt_err(SILT_EIO, "fetch: cannot initialise libcurl");
    CURL *c = curl_easy_init();
    if (!c)
        return silt_err(SILT_ENOMEM, "fetch: out of memory");
    FILE *f = fopen(o->out_path, "wb");
    if (!f) {
        int e = errno;
        curl_easy_cleanup(c);
        return silt_err(SILT_EIO, "cannot create '%s': %s", o->out_path, strerror(e));
    }
    hdrs h = {0};
    struct curl_slist *list = NULL;
    int rc = 0;
    char errbuf[CURL_ERROR_SIZE] = "";
    silt_buf line = SILT_BUF_INIT;
    for (size_t i = 0; i < o->nheaders && !rc; i++) {
        silt_buf_clear(&line);
        if (silt_buf_printf(&line, "%s: %s", o->header_names[i], o->header_values[i] ? o->header_values[i] : "")) {
            rc = silt_err(SILT_ENOMEM, "fetch: out of memory");
            break;
        }
        struct curl_slist *nl = curl_slist_append(list, line.data);
        if (!nl)
            rc = silt_err(SILT_ENOMEM, "fetch: out of memory");
        else
            list = nl;
    }
    bool conditional = false;
    if (!rc && o->prev_kind && o->prev_value && *o->prev_value) {
        if (http && strcmp(o->prev_kind, SILT_STATE_ETAG) == 0) {
            silt_buf_clear(&line);
            if (silt_buf_printf(&line, "If-None-Match: %s", o->prev_value)) {
                rc = silt_err(SILT_ENOMEM, "fetch: out of memory");
            } else {
                struct curl_slist *nl = curl_slist_append(list, line.data);
                if (!nl)
                    rc = silt_err(SILT_ENOMEM, "fetch: out of memory");
                else
                    list = nl;
            }
            conditional = true;
        } else if (strcmp(o->prev_kind, SILT_STATE_LAST_MODIFIED) == 0) {
            silt_time prev;
            if (silt_time_parse(o->prev_value, &prev) == 0) {
                curl_easy_setopt(c, CURLOPT_TIMECONDITION, (long)CURL_TIMECOND_IFMODSINCE);
                curl_easy_setopt(c, CURLOPT_TIMEVALUE_LARGE, (curl_off_t)prev.sec);
                conditional = true;
            }
        }
    }
    silt_buf_free(&line);
    long timeout = http_timeout();
    if (!rc) {
        curl_easy_setopt(c, CURLOPT_URL, o->url);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https,ftp,ftps");
        curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https,ftp,ftps");
        curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
        curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)SILT_HTTP_MAX_REDIRECTS);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)SILT_HTTP_CONNECT_TIMEOUT);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, timeout);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_FILETIME, 1L);
        curl_easy_setopt(c, CURLOPT_USERAGENT, "silt/" SILT_VERSION);
        curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, &h);
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, ""); /* transparent gzip/deflate/br transfer encoding */
        if (list)
            curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
        CURLcode cr = curl_easy_perform(c);
        long status = 0;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        out->status = http ? status : 0;
        if (cr == CURLE_OPERATION_TIMEDOUT)
            rc = silt_err(SILT_EIO, "GET %s: timed out (no data for %ld s; SILT_HTTP_TIMEOUT)", shown, timeout);
        else if (cr == CURLE_WRITE_ERROR)
            rc = silt_err(SILT_EIO, "GET %s: cannot write '%s'", shown, o->out_path);
        else if (cr != CURLE_OK)
            rc = silt_err(SILT_EIO, "GET %s: %s", shown, *errbuf ? errbuf : curl_easy_strerror(cr));
        else if (h.oom)
            rc = silt_err(SILT_ENOMEM, "fetch: out of memory");
        else if (http && status == 304 && conditional)
            out->up_to_date = true;
        else if (http && (status < 200 || status > 299))
            rc = silt_err(SILT_EIO, "GET %s: HTTP %ld", shown, status);
        if (!rc && !out->up_to_date) {
            long unmet = 0;
            curl_easy_getinfo(c, CURLINFO_CONDITION_UNMET, &unmet);
            if (unmet && conditional)
                out->up_to_date = true;
        }
        if (!rc) {
            curl_off_t ft = -1, dl = 0;
            curl_easy_getinfo(c, CURLINFO_FILETIME_T, &ft);
            curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &dl);
            out->bytes = (uint64_t)(dl > 0 ? dl : 0);
            if (h.last_modified) {
                time_t t = curl_getdate(h.last_modified, NULL);
                if (t >= 0)
                    ft = t;
            }
            if (ft >= 0) {
                out->has_last_modified = true;
                out->last_modified = (silt_time){(int64_t)ft, 0};
            }
        }
    }
    if (fclose(f) != 0 && !rc)
        rc = silt_err(SILT_EIO, "cannot write '%s': %s", o->out_path, strerror(errno));
    if (!rc && !out->up_to_date) {
        out->path = strdup(o->out_path);
        if (!out->path)
            rc = silt_err(SILT_ENOMEM, "fetch: out of memory");
        else if (h.etag && *h.etag)
            rc = set_state(out, SILT_STATE_ETAG, h.etag);
        else if (out->has_last_modified) {
            char text[40];
            silt_time_format(out->last_modified, text);
            rc = set_state(out, SILT_STATE_LAST_MODIFIED, text);
        }
    }
    if (rc || out->up_to_date)
        unlink(o->out_path);
    free(h.etag);
    free(h.last_modified);
    curl_slist_free_all(list);
    curl_easy_cleanup(c);
    return rc;
}

int silt_fetch_url(silt_fetch_url_result *out, const silt_fetch_url_opts *o)
{
    memset(out, 0, sizeof *out);
    if (!o->url || !*o->url)
        return silt_err(SILT_EINVAL, "fetch: no URL");
    char *shown = redact_url(o);
    if (!shown)
        return silt_err(SILT_ENOMEM, "fetch: out of memory");
    int rc;
    if (strncasecmp(o->url, "file:", 5) == 0)
        rc = fetch_file(out, o, shown);
    else if (strncasecmp(o->url, "http://", 7) == 0 || strncasecmp(o->url, "https://", 8) == 0)
        rc = fetch_curl(out, o, shown, true);
    else if (strncasecmp(o->url, "ftp://", 6) == 0 || strncasecmp(o->url, "ftps://", 7) == 0)
        rc = fetch_curl(out, o, shown, false);
    else
        rc = silt_err(SILT_EINVAL, "fetch %s: unsupported URL scheme (http, https, ftp, file)", shown);
    free(shown);
    if (rc)
        silt_fetch_url_result_free(out);
    return rc;
}

/* ---- FilesGlob ---------------------------------------------------------------- */

static void files_free(silt_glob_file *files, size_t n)
{
    if (!files)
        return;
    for (size_t i = 0; i < n; i++) {
        free(files[i].path);
        free(files[i].reason);
    }
    free(files);
}

void silt_glob_listing_free(silt_glob_listing *l)
{
    if (!l)
        return;
    files_free(l->files, l->n);
    files_free(l->before, l->nbefore);
    files_free(l->skipped, l->nskipped);
    memset(l, 0, sizeof *l);
}

static int cmp_by_name(const void *a, const void *b)
{
    const silt_glob_file *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->path, y->path);
}

static int cmp_by_time(const void *a, const void *b)
{
    const silt_glob_file *x = a, *y = b;
    int c = silt_time_cmp(x->time, y->time);
    return c ? c : cmp_by_name(a, b);
}

static int file_time(const odf_union *et, const char *path, bool *has, silt_time *t)
{
    struct stat st;
    bool has_m = false;
    silt_time m = {0, 0};
    if (et && et->type == ODF_EventTimeSource_FromMetadata && stat(path, &st) == 0) {
        has_m = true;
        m = (silt_time){(int64_t)st.st_mtim.tv_sec, (uint32_t)(st.st_mtim.tv_nsec / 1000000 * 1000000)};
    }
    return silt_et_resolve(et, ODF_EventTimeSource_FromSystemTime, path, has_m, m, has, t);
}

/* Fills f from matched path `path`: 1 = a regular file, 0 = not one. A
 * per-file event time failure (EINVAL; the source itself was checked by
 * silt_et_check) becomes f->reason. */
static int list_one(silt_glob_file *f, const char *path, const odf_union *et)
{
    struct stat st;
    memset(f, 0, sizeof *f);
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    f->size = (uint64_t)st.st_size;
    if (!(f->path = strdup(path)))
        return silt_err(SILT_ENOMEM, "FilesGlob: out of memory");
    const char *slash = strrchr(f->path, '/');
    f->name = slash ? slash + 1 : f->path;
    int rc = file_time(et, f->path, &f->has_time, &f->time);
    if (rc == SILT_EINVAL) {
        f->has_time = false;
        if (!(f->reason = strdup(silt_error_last())))
            rc = silt_err(SILT_ENOMEM, "FilesGlob: out of memory");
        else
            rc = 0;
        silt_err_clear();
    }
    if (rc) {
        free(f->path);
        f->path = NULL;
        return rc;
    }
    return 1;
}

/* Globs `pattern` into l->files (unsorted) and l->skipped. */
static int list_matches(silt_glob_listing *l, const char *pattern, const odf_union *et)
{
    glob_t g;
    memset(&g, 0, sizeof g);
    int gr = glob(pattern, GLOB_NOSORT, NULL, &g);
    if (gr == GLOB_NOSPACE) {
        globfree(&g);
        return silt_err(SILT_ENOMEM, "FilesGlob: out of memory");
    }
    if (gr == GLOB_ABORTED) {
        globfree(&g);
        return silt_err(SILT_EIO, "FilesGlob '%s': cannot read a directory", pattern);
    }
    size_t cap = gr == 0 && g.gl_pathc ? g.gl_pathc : 1;
    l->files = calloc(cap, sizeof *l->files);
    l->skipped = calloc(cap, sizeof *l->skipped);
    int rc = l->files && l->skipped ? 0 : silt_err(SILT_ENOMEM, "FilesGlob: out of memory");
    for (size_t i = 0; gr == 0 && i < g.gl_pathc && !rc; i++) {
        silt_glob_file f;
        int got = list_one(&f, g.gl_pathv[i], et);
        if (got < 0)
            rc = got;
        else if (got && f.reason)
            l->skipped[l->nskipped++] = f;
        else if (got)
            l->files[l->n++] = f;
    }
    globfree(&g);
    l->total = l->n + l->nskipped;
    return rc;
}

/* Moves the files at or before the last ingested one from l->files (sorted)
 * to l->before (the file named last_name itself is dropped). */
static int split_at_last(silt_glob_listing *l, bool by_time, const odf_union *et, const char *last_name)
{
    bool has_last_time = false;
    silt_time last_time = {0, 0};
    if (by_time) {
        for (size_t i = 0; i < l->n && !has_last_time; i++)
            if (strcmp(l->files[i].name, last_name) == 0) {
                has_last_time = true;
                last_time = l->files[i].time;
            }
        if (!has_last_time && et && et->type == ODF_EventTimeSource_FromPath) {
            if (file_time(et, last_name, &has_last_time, &last_time) != 0) {
                has_last_time = false;
                silt_err_clear();
            }
        }
    }
    l->before = calloc(l->n ? l->n : 1, sizeof *l->before);
    if (!l->before)
        return silt_err(SILT_ENOMEM, "FilesGlob: out of memory");
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        silt_glob_file *f = &l->files[i];
        int c;
        if (by_time && has_last_time) {
            c = silt_time_cmp(f->time, last_time);
            c = c ? c : strcmp(f->name, last_name);
        } else {
            c = strcmp(f->name, last_name);
        }
        if (c > 0)
            l->files[k++] = *f;
        else if (c < 0)
            l->before[l->nbefore++] = *f;
        else {
            free(f->path);
            free(f->reason);
        }
    }
    l->n = k;
    return 0;
}

int silt_fetch_glob(silt_glob_listing *out, const char *pattern, int order, const odf_union *event_time,
                    const char *last_name)
{
    memset(out, 0, sizeof *out);
    if (!pattern || !*pattern)
        return silt_err(SILT_EINVAL, "FilesGlob: no path pattern");
    int rc = silt_et_check(event_time);
    if (rc)
        return silt_err_context(rc, "FilesGlob '%s'", pattern);
    bool by_time = order == ODF_SourceOrdering_ByEventTime;
    rc = list_matches(out, pattern, event_time);
    for (size_t i = 0; !rc && by_time && i < out->n; i++)
        if (!out->files[i].has_time)
            rc = silt_err(SILT_EINVAL,
                          "FilesGlob '%s': order ByEventTime needs an event time (FromPath or FromMetadata) "
                          "for '%s'",
                          pattern, out->files[i].name);
    if (rc)
        return rc;
    qsort(out->files, out->n, sizeof *out->files, by_time ? cmp_by_time : cmp_by_name);
    qsort(out->skipped, out->nskipped, sizeof *out->skipped, cmp_by_name);
    return last_name ? split_at_last(out, by_time, event_time, last_name) : 0;
}
