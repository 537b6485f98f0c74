/* store.h — object + ref storage of one dataset, behind one interface.
 *
 * A store holds the content-addressed objects of a dataset (kinds "blocks",
 * "data", "checkpoints"; named by the multibase text of their SHA3-256
 * multihash) and its refs ("head", "branches/<name>"; each a multihash text
 * without trailing newline). The interface is a table of function pointers
 * so that an S3-compatible backend can later implement the same layout and
 * the same rules:
 *  - objects are immutable and written atomically; writing an object that
 *    already exists is a no-op;
 *  - a ref is updated by compare-and-swap against the value the writer read;
 *    a lost race is SILT_ECONFLICT ("concurrent update of NAME: head moved;
 *    retry").
 * The local backend (localfs.c) lays the store out as DESIGN.md §4:
 *   <dir>/blocks/<mh> <dir>/data/<mh> <dir>/checkpoints/<mh>
 *   <dir>/refs/head <dir>/refs/branches/<name> <dir>/refs/.lock
 */
#ifndef SILT_STORE_STORE_H
#define SILT_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/hash.h"
#include "util/multiformats.h"

typedef struct silt_store silt_store;

typedef struct silt_store_ops {
    const char *backend; /* e.g. "localfs" */
    /* Stores `len` bytes under kind/<mh>. The caller vouches that mh is the
     * SHA3-256 multihash of data. No-op if the object exists. */
    int (*put)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
               const void *data, size_t len);
    /* Copies a local file in as kind/<mh> (no-op if it exists). */
    int (*put_file)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                    const char *src_path);
    /* Moves a local file in as kind/<mh> when possible (same file system:
     * fsync + rename + fsync dir; otherwise copy), so big slices are not
     * copied. `src` no longer exists afterwards (also when the object
     * already existed). */
    int (*adopt_file)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                      const char *src_path);
    /* Appends the object's bytes to `out`. SILT_ENOTFOUND if missing. */
    int (*get)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], silt_buf *out);
    /* 1 if the object exists (its size in *size_out, may be NULL), 0 if it
     * does not, < 0 on I/O error. */
    int (*stat)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                uint64_t *size_out);
    /* Reads a ref's value (appended to out, no newline). SILT_ENOTFOUND if
     * the ref does not exist. */
    int (*ref_read)(silt_store *s, const char *ref, silt_buf *out);
    /* Sets `ref` to `value` if its current value equals `expected`
     * (expected == NULL: the ref must not exist yet). SILT_ECONFLICT else. */
    int (*ref_cas)(silt_store *s, const char *ref, const char *expected, const char *value);
    /* Removes a ref if its value equals `expected` (NULL: unconditionally). */
    int (*ref_delete)(silt_store *s, const char *ref, const char *expected);
    /* Local path of an object (malloc'd), or NULL when the backend has none
     * (remote) or on ENOMEM. Used for verification by hashing the file. */
    char *(*object_path)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN]);
    /* Streams object kind/<mh> into the local file dst_path (created or
     * truncated; the caller removes it on failure). SILT_ENOTFOUND if the
     * object is missing. The bytes are not checked against mh here: the
     * backend hashes them (SHA3-256) as they are written, into `digest`,
     * and counts them into *size, so the caller (the transfer) checks what
     * it received without reading the file again. */
    int (*get_to_file)(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst_path,
                       uint8_t digest[SILT_SHA3_256_LEN], uint64_t *size);
    void (*free)(silt_store *s);
} silt_store_ops;

struct silt_store {
    const silt_store_ops *ops;
    void *impl;
};

/* Opens the local file system store rooted at `dir` (a dataset directory).
 * With `create`, the directories blocks/, data/, checkpoints/, refs/ and
 * refs/branches/ are created; otherwise `dir` must exist (SILT_ENOTFOUND).
 * Caller owns *out (silt_store_free). */
int silt_store_open_local(silt_store **out, const char *dir, bool create);
/* silt_store_open_local(out, dir, false) without its checks that dir exists
 * and that none of its directories is a symbolic link: for the dataset
 * layer's open cache, which knows the layout was checked and is unchanged. */
int silt_store_open_local_unchecked(silt_store **out, const char *dir);
void silt_store_free(silt_store *s);

/* How a remote store is reached (silt_store_open_url). All fields may be
 * 0/NULL: no token, default timeouts. Strings are borrowed for the call
 * and copied by the backend. */
typedef struct silt_store_remote_opts {
    const char *token;       /* bearer token of a silt node, or NULL */
    long connect_timeout_s;  /* 0 = 10 s */
    long timeout_s;          /* whole request; 0 = none (large objects) */
} silt_store_remote_opts;

/* Opens the store of dataset `dataset_name` in the repository at `url`:
 *  - file:///path       the localfs store on /path/<name>/ (the ODF
 *                       repository layout: one directory per dataset name);
 *                       with `create` the directories are made, otherwise
 *                       SILT_ENOTFOUND "dataset 'N' not found in URL";
 *  - http(s)://host[:port]/prefix   the HTTP backend (http.c) on
 *                       <url>/<name>/refs/head, blocks/<mh>, … of the ODF
 *                       Simple Transfer Protocol (a silt node's /odf);
 *  - s3://bucket/prefix, s3+http(s)://host[:port]/bucket/prefix   the S3
 *                       backend (s3.h) on <prefix>/<name>/; the endpoint is
 *                       the URL's (s3+http form), else $AWS_ENDPOINT_URL,
 *                       else AWS's; region $AWS_REGION / $AWS_DEFAULT_REGION
 *                       [us-east-1]; without `create`, a dataset without
 *                       refs/head is SILT_ENOTFOUND as for file://.
 * Anything else is SILT_EINVAL naming the URL. Caller owns *out. */
int silt_store_open_url(silt_store **out, const char *url, const char *dataset_name,
                        const silt_store_remote_opts *opts, bool create);
/* The HTTP backend on the dataset base URL `base` (".../odf/<name>", no
 * trailing slash). Caller owns *out. */
int silt_store_open_http(silt_store **out, const char *base, const silt_store_remote_opts *opts);

/* Response parsing of the HTTP backend (http.c; fuzzed by fuzz_remote_url):
 * the status of a header line "HTTP/x NNN …" of `len` bytes (not
 * NUL-terminated), -1 when it is not a status line; and the message of an
 * error body (the "message" string of a JSON body, else the body cut to 200
 * bytes, newlines as spaces): points into `body`, which it modifies (its
 * data must be NUL-terminated, as silt_buf keeps it); "" when empty. */
long silt_http_status_line(const char *buf, size_t len);
const char *silt_http_server_message(silt_buf *body);

/* Convenience wrappers around the ops. */
int silt_store_put(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                   const void *data, size_t len);
int silt_store_put_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                        const char *src_path);
int silt_store_adopt_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                          const char *src_path);
/* Local path of an object (malloc'd; NULL for remote backends or ENOMEM). */
char *silt_store_object_path(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN]);
int silt_store_get(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], silt_buf *out);
/* ops->get_to_file (see above). */
int silt_store_get_to_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst_path,
                           uint8_t digest[SILT_SHA3_256_LEN], uint64_t *size);
int silt_store_stat(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                    uint64_t *size_out);
/* Checks that object kind/<mh> exists, has `size` bytes and hashes (SHA3-256)
 * to `mh`: the check before an object is read back to build on it (a merge
 * state, a view checkpoint). 0 when it does; SILT_ENOTFOUND "KIND/<mh> is
 * missing"; SILT_ECORRUPT "KIND/<mh> has N bytes, expected M" or "KIND/<mh>
 * does not match its hash"; SILT_EIO on read errors. */
int silt_store_check_object(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                            uint64_t size);
int silt_store_ref_read(silt_store *s, const char *ref, silt_buf *out);
int silt_store_ref_cas(silt_store *s, const char *ref, const char *expected, const char *value);

/* Reads a ref holding a multihash and parses it into `mh`. SILT_ENOTFOUND if
 * the ref is missing, SILT_ECORRUPT if its text is not a multihash. */
int silt_store_ref_read_hash(silt_store *s, const char *ref, uint8_t mh[SILT_MH_LEN]);

/* Valid ref/branch name: [A-Za-z0-9._-]{1,100}, not starting with '.' or '-'. */
bool silt_store_valid_branch_name(const char *name);
/* An object kind of the layout: "blocks", "data" or "checkpoints". */
bool silt_store_valid_kind(const char *kind);
/* A ref of the layout: "head" or "branches/<valid branch name>". */
bool silt_store_valid_ref(const char *ref);

#endif
