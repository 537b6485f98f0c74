/* verify.c — `silt verify`: full check of one ref of a dataset.
 *
 * Walks from the ref head back to the seed, reading every block file once:
 * the SHA3-256 multihash of its bytes must equal its file name, it must
 * decode, and its prevBlockHash must lead to an existing block. Then, from
 * the seed forward, every block is checked against the chain rules
 * (odf_chain_check, which also checks that referenced data slices and
 * checkpoints exist with their sizes) and applied; the physical hash of each
 * referenced data slice / checkpoint file is recomputed. Every problem is
 * reported as one line through the callback; the summary is never trusted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "odf/block.h"
#include "util/error.h"
#include "util/hash.h"

typedef struct vctx {
    silt_report_fn report;
    void *rctx;
    int corrupt;   /* hash / decode / missing problems */
    int invalid;   /* rule violations */
} vctx;

static void report(vctx *v, int *counter, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(vctx *v, int *counter, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    (*counter)++;
    if (v->report)
        v->report(v->rctx, line);
}

typedef struct vblock {
    uint8_t hash[SILT_MH_LEN];
    odf_MetadataBlock *blk;
} vblock;

/* Recomputes the physical hash of an object; reports a mismatch. */
static int check_object_hash(silt_dataset *ds, vctx *v, const char *kind, const odf_bytes *mh,
                             uint64_t blk_seq)
{
    if (!mh->data || mh->len != SILT_MH_LEN || silt_multihash_check(mh->data, mh->len) < 0)
        return 0; /* malformed hashes are the chain rules' business */
    char *path = ds->store->ops->object_path(ds->store, kind, mh->data);
    if (!path)
        return 0; /* remote backend: existence is checked by the rules */
    uint8_t digest[SILT_SHA3_256_LEN];
    uint64_t size = 0;
    int rc = silt_sha3_file(path, digest, &size);
    if (rc == 0 && memcmp(digest, mh->data + 2, SILT_SHA3_256_LEN) != 0)
        report(v, &v->corrupt, "%s %s: hash mismatch (tampered or corrupted), referenced by block %llu",
               kind, path, (unsigned long long)blk_seq);
    else if (rc == SILT_ENOTFOUND)
        rc = 0; /* reported by the chain rules as a missing object */
    free(path);
    return rc == SILT_ENOMEM ? rc : 0;
}

static int check_block_objects(silt_dataset *ds, vctx *v, const odf_MetadataBlock *blk)
{
    const odf_DataSlice *data = NULL;
    const odf_Checkpoint *cp = NULL;
    if (blk->event.type == ODF_MetadataEvent_AddData && blk->event.value) {
        const odf_AddData *e = blk->event.value;
        data = e->new_data;
        cp = e->new_checkpoint;
    } else if (blk->event.type == ODF_MetadataEvent_ExecuteTransform && blk->event.value) {
        const odf_ExecuteTransform *e = blk->event.value;
        data = e->new_data;
        cp = e->new_checkpoint;
    }
    int rc = 0;
    if (data)
        rc = check_object_hash(ds, v, "data", &data->physical_hash, blk->sequence_number);
    if (rc == 0 && cp)
        rc = check_object_hash(ds, v, "checkpoints", &cp->physical_hash, blk->sequence_number);
    return rc;
}

int silt_dataset_verify(silt_dataset *ds, silt_report_fn report_fn, void *rctx)
{
    vctx v = {report_fn, rctx, 0, 0};
    uint8_t cur[SILT_MH_LEN];
    int rc = silt_store_ref_read_hash(ds->store, ds->ref, cur);
    if (rc == SILT_ENOTFOUND || rc == SILT_ECORRUPT) {
        report(&v, &v.corrupt, "ref %s/refs/%s: %s", ds->dir, ds->ref, silt_error_last());
        return silt_err(SILT_ECORRUPT, "dataset '%s': verification failed (1 problem)", ds->name);
    }
    if (rc < 0)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    vblock *list = NULL;
    size_t n = 0, cap = 0;
    bool complete = false;
    char referrer[96];
    snprintf(referrer, sizeof referrer, "ref %s", ds->ref);
    /* 1. walk back: hashes, decoding, links */
    for (;;) {
        char *path = ds->store->ops->object_path(ds->store, "blocks", cur);
        if (!path) {
            rc = SILT_ENOMEM;
            break;
        }
        silt_buf bytes = SILT_BUF_INIT;
        int r = silt_store_get(ds->store, "blocks", cur, &bytes);
        if (r == SILT_ENOTFOUND) {
            report(&v, &v.corrupt, "block %s: missing (referenced by %s)", path, referrer);
        } else if (r < 0) {
            report(&v, &v.corrupt, "block %s: cannot read: %s", path, silt_error_last());
        }
        odf_MetadataBlock *blk = NULL;
        if (r == 0) {
            uint8_t mh[SILT_MH_LEN];
            if (odf_block_hash((const uint8_t *)bytes.data, bytes.len, mh) == 0 &&
                memcmp(mh, cur, SILT_MH_LEN) != 0)
                report(&v, &v.corrupt, "block %s: hash mismatch (tampered or corrupted)", path);
            if (odf_block_decode(a, (const uint8_t *)bytes.data, bytes.len, &blk, NULL) < 0) {
                report(&v, &v.corrupt, "block %s: cannot decode (truncated or corrupted): %s", path,
                       silt_error_last());
                blk = NULL;
            }
        }
        silt_buf_free(&bytes);
        free(path);
        if (!blk)
            break;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            vblock *nl = realloc(list, cap * sizeof *nl);
            if (!nl) {
                rc = silt_err(SILT_ENOMEM, "verify: out of memory");
                break;
            }
            list = nl;
        }
        memcpy(list[n].hash, cur, SILT_MH_LEN);
        list[n].blk = blk;
        n++;
        if (!blk->prev_block_hash.data) {
            complete = true;
            break;
        }
        if (blk->prev_block_hash.len != SILT_MH_LEN || n > list[0].blk->sequence_number + 1) {
            report(&v, &v.invalid, "block %llu: prevBlockHash does not lead to the seed (sequence numbers "
                                   "do not decrease)",
                   (unsigned long long)blk->sequence_number);
            break;
        }
        snprintf(referrer, sizeof referrer, "prevBlockHash of block %llu",
                 (unsigned long long)blk->sequence_number);
        memcpy(cur, blk->prev_block_hash.data, SILT_MH_LEN);
    }
    /* 2. forward: chain rules and referenced objects */
    odf_chain_state st;
    if (rc == 0 && complete)
        rc = odf_chain_state_init(&st);
    else
        complete = false;
    if (rc == 0 && complete) {
        odf_chain_env env;
        silt_ds_chain_env(ds, &env);
        for (size_t i = n; i-- > 0;) {
            char text[SILT_MH_TEXT_LEN + 1];
            silt_multihash_to_text(list[i].hash, SILT_MH_LEN, text);
            int r = odf_chain_check(&st, list[i].blk, list[i].hash, &env);
            if (r == SILT_ENOMEM || r == SILT_EIO) {
                rc = r;
                break;
            }
            if (r < 0) {
                report(&v, &v.invalid, "block blocks/%s: %s", text, silt_error_last());
                if (i > 0)
                    report(&v, &v.invalid, "blocks after sequence number %llu were not checked against "
                                           "the chain rules",
                           (unsigned long long)list[i].blk->sequence_number);
                break;
            }
            rc = check_block_objects(ds, &v, list[i].blk);
            if (rc == 0)
                rc = odf_chain_apply(&st, list[i].blk, list[i].hash);
            if (rc < 0)
                break;
        }
        odf_chain_state_free(&st);
    }
    free(list);
    silt_arena_free(a);
    if (rc < 0)
        return rc;
    int problems = v.corrupt + v.invalid;
    if (problems == 0)
        return 0;
    return silt_err(v.corrupt ? SILT_ECORRUPT : SILT_EVALIDATION,
                    "dataset '%s': verification failed (%d problem%s)", ds->name, problems,
                    problems == 1 ? "" : "s");
}
