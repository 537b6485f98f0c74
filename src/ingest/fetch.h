/* fetch.h — ingress of polling sources: `Url` (http, https, ftp, file via
 * libcurl, with conditional requests) and `FilesGlob` (a growing set of
 * local files, ordered by name or event time).
 *
 * Source state (ODF SourceState, kinds as kamu writes them):
 *  - Url over HTTP: `odf/etag` = the ETag response header when present,
 *    else `odf/last-modified` = Last-Modified as RFC 3339; sent back as
 *    If-None-Match / If-Modified-Since; 304 means up to date;
 *  - Url over file://: `odf/last-modified` = the file's mtime (ms); an
 *    unchanged mtime means up to date;
 *  - FilesGlob: `odf/etag` = the file name (last path component) of the
 *    last ingested file; only files after it are considered.
 */
#ifndef SILT_INGEST_FETCH_H
#define SILT_INGEST_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "odf/odf_types.h"
#include "util/timeutil.h"

#define SILT_STATE_ETAG "odf/etag"
#define SILT_STATE_LAST_MODIFIED "odf/last-modified"

/* Default timeouts (seconds): SILT_HTTP_TIMEOUT overrides the first — a
 * transfer that receives no data for that long is aborted. */
#define SILT_HTTP_TIMEOUT_DEFAULT 60
#define SILT_HTTP_CONNECT_TIMEOUT 10
#define SILT_HTTP_MAX_REDIRECTS 10

/* Redaction hook for URLs/headers in messages: returns a malloc'd copy of
 * `text` with secret values replaced (NULL on ENOMEM). */
typedef char *(*silt_redact_fn)(void *ctx, const char *text);

typedef struct silt_fetch_url_opts {
    const char *url;
    const char *const *header_names; /* request headers (nheaders each) */
    const char *const *header_values;
    size_t nheaders;
    const char *prev_kind;  /* previous source state (kind, value) or NULL */
    const char *prev_value;
    const char *out_path;   /* where the body goes (not used for file://) */
    silt_redact_fn redact;  /* may be NULL: user:password@ is stripped anyway */
    void *redact_ctx;
} silt_fetch_url_opts;

typedef struct silt_fetch_url_result {
    bool up_to_date;        /* 304 / unchanged mtime: nothing fetched */
    char *path;             /* file holding the data (malloc'd): out_path, or the local file of file:// */
    char *state_kind;       /* new source state (malloc'd) or NULL when the server sent no validator */
    char *state_value;
    bool has_last_modified; /* Last-Modified header / file mtime */
    silt_time last_modified;
    long status;            /* HTTP status (0 for other protocols) */
    uint64_t bytes;         /* body bytes received */
} silt_fetch_url_result;

/* Fetches a URL. Errors (messages carry the redacted URL):
 *  SILT_EIO "GET URL: HTTP 500" (status >= 400 or other non-2xx), "GET URL:
 *  no data for N s (timeout, SILT_HTTP_TIMEOUT)", "GET URL: <curl message>"
 *  (connection refused, too many redirects, …); SILT_ENOTFOUND for a
 *  missing file:// file; SILT_EINVAL for unsupported schemes. */
int silt_fetch_url(silt_fetch_url_result *out, const silt_fetch_url_opts *o);
void silt_fetch_url_result_free(silt_fetch_url_result *r);

/* Formats t as an HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT") into out[40]. */
void silt_http_date(silt_time t, char *out);

/* ---- FilesGlob ----------------------------------------------------------- */

typedef struct silt_glob_file {
    char *path;        /* as matched (malloc'd) */
    const char *name;  /* last path component (points into path) */
    bool has_time;     /* event time from the event time source */
    silt_time time;
    uint64_t size;     /* bytes (stat at listing time) */
    char *reason;      /* skipped files: why (malloc'd), else NULL */
} silt_glob_file;

/* The regular files matching a glob, split by what pull does with them. */
typedef struct silt_glob_listing {
    silt_glob_file *files;   /* after the last ingested file, in ingest order */
    size_t n;
    silt_glob_file *before;  /* sorting before the last ingested file (in
                                ingest order; the file named last_name itself
                                is not listed): already ingested, or added
                                late and never to be read */
    size_t nbefore;
    silt_glob_file *skipped; /* whose event time cannot be determined from
                                the path (FromPath does not match, the group
                                does not parse): `reason` says why; by name */
    size_t nskipped;
    size_t total;            /* matching regular files */
} silt_glob_listing;

/* Lists the regular files matching glob `pattern` relative to the file
 * named `last_name` (NULL = nothing ingested yet), sorted in ingest order:
 * `order` ODF_SourceOrdering_ByName (by file name) or _ByEventTime (by
 * event time, then name; needs FromPath or FromMetadata). `event_time` is
 * the ingress' EventTimeSource (type 0 = FromSystemTime). A file whose
 * event time cannot be determined from its path is put in out->skipped,
 * not failed: one such file never blocks the others. Errors concern the
 * source as a whole: an invalid FromPath pattern or timestamp format,
 * ByEventTime without an event time, an unreadable directory, ENOMEM. The
 * caller frees with silt_glob_listing_free (also after an error). */
int silt_fetch_glob(silt_glob_listing *out, const char *pattern, int order, const odf_union *event_time,
                    const char *last_name);
void silt_glob_listing_free(silt_glob_listing *l);

#endif
