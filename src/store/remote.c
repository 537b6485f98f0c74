/* remote.c — the store dispatcher: a repository URL and a dataset name to
 * the store that holds that dataset (store.h, silt_store_open_url).
 *
 * file:///path -> localfs on /path/<name>/ (the ODF repository layout, as
 * kamu lays out local repositories); http(s)://… -> the HTTP backend on
 * <url>/<name>; s3://bucket/prefix and s3+http(s)://host:port/bucket/prefix
 * -> the S3 backend (s3.h) on <prefix>/<name>/, the endpoint taken from
 * the URL (kamu's s3+http form), else from AWS_ENDPOINT_URL, else AWS's
 * https://s3.<region>.amazonaws.com; the region from AWS_REGION /
 * AWS_DEFAULT_REGION; credentials from the environment (s3_client.h).
 * Invariants: the dataset name is checked before it becomes a path or URL
 * segment (no '/', no "..", no leading '.'), so a name never escapes its
 * repository; a URL's secrets never appear in a message (tokens are not
 * part of URLs here).
 */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/s3.h"
#include "util/error.h"
#include "util/fsutil.h"

/* A dataset name as a path segment: [A-Za-z0-9._-], not starting with '.'. */
static bool name_segment_ok(const char *n)
{
    return n && silt_store_valid_branch_name(n);
}

static int open_file_repo(silt_store **out, const char *url, const char *name, bool create)
{
    const char *path = url + 7; /* after "file://" */
    if (path[0] != '/')
        return silt_err(SILT_EINVAL, "repository URL '%s': a file URL needs an absolute path (file:///path)", url);
    char *dir = silt_path_join(path, name, NULL);
    if (!dir)
        return silt_err(SILT_ENOMEM, "store: out of memory");
    int rc = 0;
    if (!create && !silt_fs_is_dir(dir))
        rc = silt_err(SILT_ENOTFOUND, "dataset '%s' not found in %s", name, url);
    if (rc == 0)
        rc = silt_store_open_local(out, dir, create);
    free(dir);
    return rc;
}

static int open_http_repo(silt_store **out, const char *url, const char *name, const silt_store_remote_opts *opts)
{
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    size_t cap = n + strlen(name) + 2;
    char *base = malloc(cap);
    if (!base)
        return silt_err(SILT_ENOMEM, "store: out of memory");
    snprintf(base, cap, "%.*s/%s", (int)n, url, name);
    int rc = silt_store_open_http(out, base, opts);
    free(base);
    return rc;
}

/* "s3+http(s)://host[:port]/bucket[/prefix]" -> endpoint "http(s)://host[:port]"
 * and "s3://bucket[/prefix]" (both into caller buffers). */
static int split_s3_endpoint(const char *url, char *endpoint, size_t ecap, char *s3url, size_t scap)
{
    const char *rest = url + 3; /* "http(s)://host[:port]/bucket…" */
    const char *host = strstr(rest, "://");
    const char *slash = host ? strchr(host + 3, '/') : NULL;
    if (!host || !slash || slash == host + 3 || !slash[1])
        return silt_err(SILT_EINVAL, "repository URL '%s': expected s3+http(s)://host[:port]/bucket[/prefix]", url);
    snprintf(endpoint, ecap, "%.*s", (int)(slash - rest), rest);
    snprintf(s3url, scap, "s3://%s", slash + 1);
    return 0;
}

static int open_s3_repo(silt_store **out, const char *url, const char *name, bool create)
{
    char endpoint[512] = "", s3url[1024];
    if (strlen(url) >= sizeof s3url - 8)
        return silt_err(SILT_EINVAL, "repository URL is too long");
    int rc = 0;
    if (strncmp(url, "s3+", 3) == 0)
        rc = split_s3_endpoint(url, endpoint, sizeof endpoint, s3url, sizeof s3url);
    else
        snprintf(s3url, sizeof s3url, "%s", url);
    const char *region = getenv("AWS_REGION");
    if (!region || !*region)
        region = getenv("AWS_DEFAULT_REGION");
    if (!region || !*region)
        region = "us-east-1";
    if (!rc && !endpoint[0]) {
        const char *e = getenv("AWS_ENDPOINT_URL");
        if (e && *e)
            snprintf(endpoint, sizeof endpoint, "%s", e);
        else
            snprintf(endpoint, sizeof endpoint, "https://s3.%s.amazonaws.com", region);
    }
    char *bucket = NULL, *prefix = NULL, *key = NULL;
    if (!rc)
        rc = silt_s3_url_parse(s3url, &bucket, &prefix);
    if (!rc) {
        size_t cap = strlen(prefix) + strlen(name) + 2;
        key = malloc(cap);
        if (!key)
            rc = silt_err(SILT_ENOMEM, "store: out of memory");
        else
            snprintf(key, cap, "%s%s%s", prefix, *prefix ? "/" : "", name);
    }
    if (!rc) {
        silt_s3_config cfg = {.endpoint = endpoint, .region = region, .bucket = bucket};
        rc = silt_store_open_s3(out, &cfg, key, create);
    }
    if (!rc && !create) { /* as for file://: a dataset the repository does not hold is "not found" */
        silt_buf head = SILT_BUF_INIT;
        int hr = silt_store_ref_read(*out, "head", &head);
        silt_buf_free(&head);
        if (hr == SILT_ENOTFOUND)
            rc = silt_err(SILT_ENOTFOUND, "dataset '%s' not found in %s", name, url);
        else if (hr < 0)
            rc = hr;
        if (rc) {
            silt_store_free(*out);
            *out = NULL;
        }
    }
    free(bucket);
    free(prefix);
    free(key);
    return rc;
}

int silt_store_open_url(silt_store **out, const char *url, const char *dataset_name,
                        const silt_store_remote_opts *opts, bool create)
{
    *out = NULL;
    if (!url || !*url)
        return silt_err(SILT_EINVAL, "empty repository URL");
    if (!name_segment_ok(dataset_name))
        return silt_err(SILT_EINVAL, "invalid dataset name '%s' for repository %s",
                        dataset_name ? dataset_name : "", url);
    if (strncmp(url, "file://", 7) == 0)
        return open_file_repo(out, url, dataset_name, create);
    if (strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0)
        return open_http_repo(out, url, dataset_name, opts);
    if (strncmp(url, "s3://", 5) == 0 || strncmp(url, "s3+http://", 10) == 0 || strncmp(url, "s3+https://", 11) == 0)
        return open_s3_repo(out, url, dataset_name, create);
    return silt_err(SILT_EINVAL,
                    "repository URL '%s': expected file:///path, http(s)://host[:port]/odf, s3://bucket/prefix or "
                    "s3+http(s)://host[:port]/bucket/prefix",
                    url);
}
