/* transfer.h — copying a dataset's chain from one store to another (any
 * backends of store.h): the one implementation behind `silt pull` of a
 * remote dataset, `silt push`, and the node's receiving side.
 */
#ifndef SILT_OPS_TRANSFER_H
#define SILT_OPS_TRANSFER_H

#include <stdbool.h>
#include <stdint.h>

#include "silt.h"
#include "store/store.h"

typedef struct silt_xfer_opts {
    int jobs;               /* parallel object transfers; <= 0 means 8 */
    bool force;             /* overwrite a diverged / ahead target */
    const char *tmp_dir;    /* local scratch dir for downloads (needed when
                               the source has no local paths) */
    const char *src_label;  /* names of both sides for messages */
    const char *dst_label;
    silt_report_fn note;    /* lines about what --force drops (may be NULL) */
    void *note_ctx;
} silt_xfer_opts;

typedef struct silt_xfer_result {
    bool up_to_date;                      /* nothing to do */
    char old_head[SILT_MH_TEXT_LEN + 1];  /* the target's head before ("" none) */
    char new_head[SILT_MH_TEXT_LEN + 1];
    uint64_t blocks;                      /* blocks written to the target */
    uint64_t objects;                     /* data/checkpoint objects transferred */
    uint64_t bytes;                       /* … their bytes */
    uint64_t skipped;                     /* objects already present */
    uint64_t dropped;                     /* --force: target blocks no longer referenced */
    bool have_did;
    uint8_t did[SILT_DID_LEN];            /* the Seed's dataset id, when the walk reached it */
} silt_xfer_result;

/* Copies the chain of src's refs/head to dst and moves dst's refs/head by
 * compare-and-swap against the head read at the start: blocks are walked
 * from src's head back to dst's head (or the Seed), every block and every
 * data slice / checkpoint they name is fetched (objects in parallel)
 * unless dst already has it with the right size, each is hashed (SHA3-256)
 * and compared with its name before it is written (a download is hashed
 * as it arrives, not read again); objects first, then
 * blocks, then the ref. A divergence or a target ahead of the source is
 * SILT_ECONFLICT naming both heads (unless opts->force). A mismatch is
 * SILT_ECORRUPT naming the object; the ref is then not moved. */
int silt_xfer_run(silt_store *src, silt_store *dst, const silt_xfer_opts *opts, silt_xfer_result *out);

/* The text of .silt/repos.yaml (transfer_ws.c): `text` is NUL-terminated
 * and is modified (split into lines; the entries point into nothing of it:
 * their strings are copied). Lines are "repos:", comments, blank lines and
 * "- name: N" / "url: U" / "tokenEnv: V" entries; each entry is checked
 * (name a dataset name, url file:///, http(s):// or s3:// without spaces,
 * quotes or '#', tokenEnv a variable name). SILT_EINVAL "PATH:LINE: …" on
 * any other line or a bad entry (*out NULL then). Caller frees *out with
 * silt_repos_free(*out, *n). */
int silt_repos_parse(char *text, const char *path, silt_repo **out, size_t *n);
/* Appends the canonical text of `v` (sorted by name, which reorders v) to b:
 * what silt_repos_parse reads back as the same entries. */
int silt_repos_format(silt_buf *b, silt_repo *v, size_t n);

#endif
