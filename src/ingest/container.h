/* container.h — the `Container` ingress of polling sources: runs one batch
 * of an OCI image through podman (with runc) and collects what the ODF
 * container interface says it produces.
 *
 * One run (silt_container_run):
 *   podman run --rm --pull=never --network=none|host --name silt-fetch-…
 *     -v WORKDIR/out:/odf/out -e NAME … [--entrypoint CMD0] IMAGE [CMD1…] [ARGS…]
 * with stdout written to the caller's data file, stderr streamed line by
 * line to a log hook (and its last lines quoted when the run fails), and
 * the environment of the ODF container interface:
 *   ODF_ETAG, ODF_LAST_MODIFIED   the previous source state ("" when none);
 *   ODF_BATCH_SIZE                recommended records per run;
 *   ODF_NEW_ETAG_PATH, ODF_NEW_LAST_MODIFIED_PATH, ODF_NEW_HAS_MORE_DATA_PATH
 *                                 files under /odf/out the container may write.
 * Environment values are handed to podman through its own environment
 * (`-e NAME` without a value), never on its command line, so a secret in an
 * env value is not visible in the process list.
 *
 * podman configuration: CONTAINERS_CONF is honoured when set; otherwise a
 * containers.conf with the settings this sandbox needs (runc, ulimits
 * nofile=1024:1024 and nproc=4096:4096, netns none) is written into the
 * run's work directory and passed to podman (docs/decisions.md).
 *
 * Invariants: the container never pulls from a registry (`--pull=never`,
 * and a missing image is reported before anything runs); a run that times
 * out is killed and removed (`podman rm -f`), and its podman process is
 * reaped; no process started here outlives the call. Messages name the
 * image as given (the caller redacts them).
 */
#ifndef SILT_INGEST_CONTAINER_H
#define SILT_INGEST_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "silt.h"
#include "util/timeutil.h"

#define SILT_CONTAINER_TIMEOUT_DEFAULT 600 /* seconds; SILT_CONTAINER_TIMEOUT overrides */
#define SILT_CONTAINER_BATCH_SIZE_DEFAULT 10000
#define SILT_CONTAINER_OUT_DIR "/odf/out"

typedef struct silt_container_opts {
    const char *image;
    const char *const *command; /* entry point override (ncommand) or none */
    size_t ncommand;
    const char *const *args;    /* arguments (nargs) */
    size_t nargs;
    const char *const *env_names; /* variables for the container (nenv each) */
    const char *const *env_values;
    size_t nenv;
    bool host_network;          /* --network=host instead of none */
    uint64_t batch_size;        /* ODF_BATCH_SIZE; 0 = the default */
    const char *prev_etag;      /* ODF_ETAG / ODF_LAST_MODIFIED; NULL = "" */
    const char *prev_last_modified;
    const char *workdir;        /* an existing private directory, e.g. a <.silt>/tmp/<random> */
    const char *out_path;       /* the container's stdout goes here (created/truncated) */
    int timeout_s;              /* <= 0: SILT_CONTAINER_TIMEOUT, else the default */
    silt_report_fn log;         /* each stderr line (may be NULL) */
    void *log_ctx;
    int (*poll)(void *ctx);     /* called about every 100 ms while the container runs (may be NULL):
                                   non-zero (a SILT_E* code with its message set, e.g. SILT_ECANCELED
                                   for Ctrl-C) stops and removes the container, and the run fails with it */
    void *poll_ctx;
} silt_container_opts;

typedef struct silt_container_result {
    char *etag;                 /* written to ODF_NEW_ETAG_PATH, trailing whitespace trimmed (malloc'd), or NULL */
    bool has_last_modified;     /* written to ODF_NEW_LAST_MODIFIED_PATH (RFC 3339) */
    silt_time last_modified;
    bool has_more;              /* ODF_NEW_HAS_MORE_DATA_PATH was created */
    uint64_t bytes;             /* bytes written to stdout */
} silt_container_result;

/* Runs one batch. Errors (nothing of the run is kept but the caller's files):
 *  SILT_EUNSUPPORTED "podman is not installed (…): install the Debian
 *    package 'podman' (apt-get install podman runc)";
 *  SILT_ENOTFOUND "container image 'IMG' is not available locally (silt
 *    never pulls images: …)";
 *  SILT_EIO "container 'IMG' timed out after N s and was killed
 *    (SILT_CONTAINER_TIMEOUT)", "container 'IMG' exited with status N:
 *    LAST STDERR LINES" (joined by " | "), "… was killed by signal N";
 *  SILT_EINVAL for a Last-Modified that is not RFC 3339, an env name that
 *    is empty or holds '=' or a NUL, an empty image.
 * The caller frees *out with silt_container_result_free (also after an error). */
int silt_container_run(silt_container_result *out, const silt_container_opts *o);
void silt_container_result_free(silt_container_result *r);

/* Timeout of a run from SILT_CONTAINER_TIMEOUT (positive seconds), else the default. */
int silt_container_timeout(void);

#endif
