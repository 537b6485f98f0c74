/* remote.c — the store dispatcher: a repository URL and a dataset name to
 * the store that holds that dataset (store.h, silt_store_open_url).
 *
 * file:///path -> localfs on /path/<name>/ (the ODF repository layout, as
 * kamu lays out local repositories); http(s)://… -> the HTTP backend on
 * <url>/<name>; s3://… -> refused until the S3 store is wired here.
 * Invariants: the dataset name is checked before it becomes a path or URL
 * segment (no '/', no "..", no leading '.'), so a name never escapes its
 * repository; a URL's secrets never appear in a message (tokens are not
 * part of URLs here).
 */
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (strncmp(url, "s3://", 5) == 0)
        return silt_err(SILT_EINVAL, "s3 repositories are not available in this build yet");
    return silt_err(SILT_EINVAL, "repository URL '%s': expected file:///path, http(s)://host[:port]/odf or s3://bucket/prefix",
                    url);
}
