/* s3_client.h — a small S3 client (libcurl, AWS SigV4, path-style URLs).
 *
 * Requests go to <endpoint>/<bucket>/<key>; curl signs them
 * (CURLOPT_AWS_SIGV4) and we send x-amz-content-sha256 (the SHA-256 of the
 * body) ourselves, which curl 7.88 then signs. Keys and prefixes are limited
 * to [A-Za-z0-9._-/] (the store layout needs no more), so a key is never
 * escaped. Transient failures (connection errors, timeouts, HTTP 5xx,
 * SlowDown) are retried with exponential backoff; every other failure is one
 * line naming the operation, the key and the S3 error code, e.g.
 *   "s3: PUT bkt/ds/refs/head: HTTP 403 SignatureDoesNotMatch"
 * Credentials never appear in a message or a log. A client is safe to use
 * from several threads at once (one curl handle per request, connections
 * shared through a locked curl share).
 */
#ifndef SILT_STORE_S3_CLIENT_H
#define SILT_STORE_S3_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Configuration. Strings are borrowed for silt_s3_client_open only (the
 * client copies them). NULL / 0 fields take the defaults in brackets. */
typedef struct silt_s3_config {
    const char *endpoint;      /* "http(s)://host[:port]" (required) */
    const char *region;        /* ["us-east-1"] */
    const char *bucket;        /* 3-63 chars [a-z0-9.-] (required) */
    const char *access_key;    /* [$AWS_ACCESS_KEY_ID] */
    const char *secret_key;    /* [$AWS_SECRET_ACCESS_KEY] */
    const char *session_token; /* [$AWS_SESSION_TOKEN; none if unset] */
    uint64_t multipart_threshold; /* objects above it are uploaded in parts [64 MiB] */
    uint64_t part_size;           /* [16 MiB]; S3 wants >= 5 MiB except the last */
    int max_retries;              /* retries after the first attempt [4]; -1: none */
    unsigned retry_base_ms;       /* first backoff [200 ms], doubled each retry */
    unsigned retry_max_ms;        /* backoff cap [5000 ms] */
    long connect_timeout_ms;      /* [10000] */
    long stall_timeout_s;         /* abort when < 1 byte/s for this long [60] */
} silt_s3_config;

typedef struct silt_s3_client silt_s3_client;

/* Validates cfg (SILT_EINVAL naming the field: endpoint, bucket, missing
 * credentials) and creates a client. Caller owns *out (silt_s3_client_free). */
int silt_s3_client_open(silt_s3_client **out, const silt_s3_config *cfg);
void silt_s3_client_free(silt_s3_client *c);
/* The bucket the client talks to (borrowed, lives as long as c). */
const char *silt_s3_client_bucket(const silt_s3_client *c);

/* Longest ETag kept (quotes stripped), with its NUL. */
#define SILT_S3_ETAG_MAX 80

/* Conditions of a PUT (NULL: unconditional). */
typedef struct silt_s3_cond {
    bool if_none_match; /* If-None-Match: * — the object must not exist */
    const char *if_match; /* If-Match: <etag> — its current ETag must be this */
} silt_s3_cond;

/* Creates the bucket; 0 also when we already own it. */
int silt_s3_create_bucket(silt_s3_client *c);
/* PUT of len bytes. A failed condition is SILT_ECONFLICT. etag_out (may be
 * NULL, SILT_S3_ETAG_MAX bytes) receives the new ETag. */
int silt_s3_put(silt_s3_client *c, const char *key, const void *data, size_t len,
                const silt_s3_cond *cond, char *etag_out);
/* Uploads a local file: one PUT up to the multipart threshold, otherwise a
 * multipart upload (aborted on failure, so no parts are left behind). */
int silt_s3_put_file(silt_s3_client *c, const char *key, const char *path);
/* Appends the object to out; etag_out as for put. SILT_ENOTFOUND if missing. */
int silt_s3_get(silt_s3_client *c, const char *key, silt_buf *out, char *etag_out);
/* Streams the object into dst_path (through a temp file renamed over it,
 * so on failure dst_path is unchanged). SILT_ENOTFOUND if missing. */
int silt_s3_get_to_file(silt_s3_client *c, const char *key, const char *dst_path);
/* 1 if the object exists (size and etag out, each may be NULL), 0 if not. */
int silt_s3_head(silt_s3_client *c, const char *key, uint64_t *size_out, char *etag_out);
/* DELETE (S3 answers 204 also for a missing key). */
int silt_s3_delete(silt_s3_client *c, const char *key);

/* One listed object; strings borrowed for the callback's duration. */
typedef int (*silt_s3_list_fn)(void *ctx, const char *key, uint64_t size);
/* ListObjectsV2 of every key under prefix, page by page (max_keys per page,
 * 0: 1000). A non-zero return of fn stops the listing and is returned. */
int silt_s3_list(silt_s3_client *c, const char *prefix, unsigned max_keys, silt_s3_list_fn fn,
                 void *ctx);

/* ---- pure helpers (no network; unit-tested and fuzzed) ---------------- */

/* Retry policy: true when an attempt that ended with curl code `curl_rc`
 * (0 = transfer completed), HTTP status `http` and S3 error code `s3code`
 * (may be NULL or "") is worth retrying. */
bool silt_s3_retryable(int curl_rc, long http, const char *s3code);
/* Backoff before retry number `attempt` (1-based): base * 2^(attempt-1),
 * capped at max, then scaled by jitter in [0.5, 1] (jitter01 in [0, 1]). */
unsigned silt_s3_backoff_ms(unsigned attempt, unsigned base_ms, unsigned max_ms, double jitter01);

/* Parses an S3 error body <Error><Code>..</Code><Message>..</Message>..:
 * copies Code / Message (truncated to the capacities). SILT_EINVAL when
 * the body is not such an XML document (code and msg are then ""). */
int silt_s3_parse_error(const char *xml, size_t len, char *code, size_t code_cap, char *msg,
                        size_t msg_cap);
/* Parses a ListBucketResult page: fn per <Contents> (Key, Size), *truncated
 * from IsTruncated, the NextContinuationToken appended to next_token.
 * SILT_EINVAL on malformed XML or a Contents without Key / with a bad Size. */
int silt_s3_parse_list(const char *xml, size_t len, silt_s3_list_fn fn, void *ctx, bool *truncated,
                       silt_buf *next_token);
/* Text of the first element `name` anywhere in the document (appended to
 * out). SILT_ENOTFOUND if absent, SILT_EINVAL if the XML is malformed. */
int silt_s3_xml_find(const char *xml, size_t len, const char *name, silt_buf *out);

/* Parses "s3://bucket[/prefix]": *bucket and *prefix malloc'd (caller
 * frees; prefix "" when absent, without leading or trailing '/').
 * SILT_EINVAL "invalid S3 URL 'U': <reason>" otherwise. */
int silt_s3_url_parse(const char *url, char **bucket, char **prefix);
/* Valid bucket name: 3-63 chars of [a-z0-9.-], starting and ending with a
 * letter or digit. */
bool silt_s3_valid_bucket(const char *name);
/* Valid key prefix: "" or segments of [A-Za-z0-9._-] separated by single
 * '/', none "." or "..", at most 512 chars, no leading/trailing '/'. */
bool silt_s3_valid_prefix(const char *prefix);
/* "<prefix>/<rest>" (just rest when prefix is ""), malloc'd; NULL on ENOMEM. */
char *silt_s3_key_join(const char *prefix, const char *rest);

#endif
