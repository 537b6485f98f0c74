/* s3_util.c — the network-free parts of the S3 client (s3_client.h): URL
 * and name validation, key building, and the retry / backoff policy.
 * Invariant: a name accepted here needs no escaping in a URL path, so the
 * client builds request URLs by concatenation. */
#include "store/s3_client.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

bool silt_s3_valid_bucket(const char *name)
{
    if (!name)
        return false;
    size_t n = strlen(name);
    if (n < 3 || n > 63)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && ((c != '.' && c != '-') || i == 0 || i == n - 1))
            return false;
        if (c == '.' && name[i + 1] == '.')
            return false;
    }
    return true;
}

static bool seg_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

bool silt_s3_valid_prefix(const char *prefix)
{
    if (!prefix)
        return false;
    size_t n = strlen(prefix);
    if (n > 512)
        return false;
    size_t seg = 0; /* start of the current segment */
    for (size_t i = 0; i <= n; i++) {
        if (i == n || prefix[i] == '/') {
            size_t len = i - seg;
            if (n == 0)
                return true;
            if (len == 0 || (len == 1 && prefix[seg] == '.') ||
                (len == 2 && prefix[seg] == '.' && prefix[seg + 1] == '.'))
                return false;
            seg = i + 1;
        } else if (!seg_char(prefix[i])) {
            return false;
        }
    }
    return true;
}

char *silt_s3_key_join(const char *prefix, const char *rest)
{
    size_t a = prefix ? strlen(prefix) : 0, b = strlen(rest);
    char *k = malloc(a + b + 2);
    if (!k)
        return NULL;
    if (a) {
        memcpy(k, prefix, a);
        k[a++] = '/';
    }
    memcpy(k + a, rest, b + 1);
    return k;
}

static int bad_url(const char *url, const char *why)
{
    return silt_err(SILT_EINVAL, "invalid S3 URL '%.200s': %s", url, why);
}

int silt_s3_url_parse(const char *url, char **bucket, char **prefix)
{
    *bucket = *prefix = NULL;
    if (!url)
        return silt_err(SILT_EINVAL, "invalid S3 URL: empty");
    if (strncmp(url, "s3://", 5) != 0)
        return bad_url(url, "expected s3://bucket/prefix");
    const char *b = url + 5;
    const char *slash = strchr(b, '/');
    size_t blen = slash ? (size_t)(slash - b) : strlen(b);
    char *bk = strndup(b, blen);
    if (!bk)
        return silt_err(SILT_ENOMEM, "out of memory");
    if (!silt_s3_valid_bucket(bk)) {
        free(bk);
        return bad_url(url, "bucket names have 3-63 characters of a-z, 0-9, '.' and '-', "
                            "starting and ending with a letter or digit");
    }
    const char *p = slash ? slash + 1 : "";
    size_t plen = strlen(p);
    if (plen > 1 && p[plen - 1] == '/') /* one trailing slash is allowed: s3://b/ds/ */
        plen--;
    char *pf = strndup(p, plen);
    if (!pf) {
        free(bk);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    if (!silt_s3_valid_prefix(pf)) {
        free(bk);
        free(pf);
        return bad_url(url, "the prefix has segments of A-Z, a-z, 0-9, '.', '_' and '-' "
                            "separated by single '/' (no '.' or '..' segments)");
    }
    *bucket = bk;
    *prefix = pf;
    return 0;
}

bool silt_s3_retryable(int curl_rc, long http, const char *s3code)
{
    switch (curl_rc) {
    case CURLE_OK:
        break;
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
    case CURLE_WRITE_ERROR: /* our local file */
    case CURLE_READ_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
    case CURLE_OUT_OF_MEMORY:
        return false;
    default:
        return true; /* connection refused / reset, timeouts, partial transfers */
    }
    if (http >= 500 && http <= 599)
        return true;
    if (http == 429)
        return true;
    return s3code && (strcmp(s3code, "SlowDown") == 0 || strcmp(s3code, "RequestTimeout") == 0 ||
                      strcmp(s3code, "InternalError") == 0 || strcmp(s3code, "ServiceUnavailable") == 0);
}

unsigned silt_s3_backoff_ms(unsigned attempt, unsigned base_ms, unsigned max_ms, double jitter01)
{
    if (attempt == 0)
        return 0;
    unsigned long long d = base_ms;
    for (unsigned i = 1; i < attempt && d < max_ms; i++)
        d *= 2;
    if (d > max_ms)
        d = max_ms;
    if (!(jitter01 >= 0.0)) /* NaN or negative */
        jitter01 = 0.0;
    if (jitter01 > 1.0)
        jitter01 = 1.0;
    return (unsigned)((double)d * (0.5 + jitter01 / 2.0));
}
