/* transfer.c — the chain transfer between two stores (transfer.h), the same
 * code for every backend (localfs, HTTP, later S3).
 *
 * Order, as ODF prescribes for stores without transactions: data slices and
 * checkpoints first, then blocks (oldest first), then refs/head by
 * compare-and-swap against the head read at the start.
 * Invariants: nothing is written to the target before its hash (SHA3-256
 * multihash of the bytes) equals its name and, for objects, its size equals
 * the one the block records; the ref moves last, so a reader of the target
 * never sees a head whose blocks or objects are missing; objects the target
 * already has with the right size are not fetched again (an interrupted
 * transfer resumes); the source is never written.
 */
#include "ops/transfer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odf/block.h"
#include "odf/odf_types.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/hash.h"

typedef struct xfer_obj {
    const char *kind; /* "data" or "checkpoints" */
    uint8_t mh[SILT_MH_LEN];
    uint64_t size;
} xfer_obj;

typedef struct xfer_block {
    uint8_t mh[SILT_MH_LEN];
    silt_buf bytes;
    bool present; /* the target has it already */
} xfer_block;

typedef struct xfer {
    silt_store *src, *dst;
    const silt_xfer_opts *o;
    silt_xfer_result *res;
    xfer_block *blocks; /* newest first */
    size_t nblocks, capblocks;
    xfer_obj *objs;
    size_t nobjs, capobjs;
    /* worker state */
    pthread_mutex_t mu;
    size_t next;
    int err_code;
    char err_msg[512];
} xfer;

static const char *label(const char *l, const char *dflt) { return l ? l : dflt; }

static void mh_text(const uint8_t mh[SILT_MH_LEN], char out[SILT_MH_TEXT_LEN + 1])
{
    silt_multihash_to_text(mh, SILT_MH_LEN, out);
}

static int parse_mh(const char *text, uint8_t mh[SILT_MH_LEN], const char *what)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multihash_from_text(text, &b);
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = SILT_EINVAL;
    if (rc == 0)
        memcpy(mh, b.data, SILT_MH_LEN);
    silt_buf_free(&b);
    return rc < 0 ? silt_err(SILT_ECORRUPT, "%s: '%s' is not a SHA3-256 multihash", what, text) : 0;
}

/* Reads refs/head of s into text (""/0 when it does not exist). */
static int read_head(silt_store *s, char text[SILT_MH_TEXT_LEN + 1], const char *lbl)
{
    silt_buf b = SILT_BUF_INIT;
    text[0] = '\0';
    int rc = silt_store_ref_read(s, "head", &b);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        rc = 0;
    } else if (rc == 0 && (b.len != SILT_MH_TEXT_LEN)) {
        rc = silt_err(SILT_ECORRUPT, "%s: refs/head holds an invalid hash", lbl);
    } else if (rc == 0) {
        memcpy(text, b.data, SILT_MH_TEXT_LEN + 1);
        uint8_t mh[SILT_MH_LEN];
        rc = parse_mh(text, mh, lbl);
    }
    silt_buf_free(&b);
    return rc;
}

static int add_obj(xfer *x, const char *kind, const odf_bytes *h, uint64_t size, const char *blk)
{
    if (!h->data)
        return 0;
    if (h->len != SILT_MH_LEN)
        return silt_err(SILT_ECORRUPT, "block %s names a %s object with an invalid hash", blk, kind);
    for (size_t i = 0; i < x->nobjs; i++)
        if (memcmp(x->objs[i].mh, h->data, SILT_MH_LEN) == 0 && strcmp(x->objs[i].kind, kind) == 0)
            return 0;
    if (x->nobjs == x->capobjs) {
        size_t cap = x->capobjs ? 2 * x->capobjs : 16;
        xfer_obj *n = realloc(x->objs, cap * sizeof *n);
        if (!n)
            return silt_err(SILT_ENOMEM, "transfer: out of memory");
        x->objs = n;
        x->capobjs = cap;
    }
    xfer_obj *o = &x->objs[x->nobjs++];
    o->kind = kind;
    memcpy(o->mh, h->data, SILT_MH_LEN);
    o->size = size;
    return 0;
}

/* The objects one block names (AddData / ExecuteTransform), its prev hash,
 * and the dataset id when it is the Seed. */
static int scan_block(xfer *x, const xfer_block *b, bool *has_prev, uint8_t prev[SILT_MH_LEN])
{
    char t[SILT_MH_TEXT_LEN + 1];
    mh_text(b->mh, t);
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "transfer: out of memory");
    odf_MetadataBlock *mb = NULL;
    int rc = odf_block_decode(a, (const uint8_t *)b->bytes.data, b->bytes.len, &mb, NULL);
    if (rc < 0) {
        rc = silt_err_context(SILT_ECORRUPT, "blocks/%s", t);
        silt_arena_free(a);
        return rc;
    }
    const odf_DataSlice *nd = NULL;
    const odf_Checkpoint *cp = NULL;
    if (mb->event.type == ODF_MetadataEvent_AddData) {
        const odf_AddData *ad = mb->event.value;
        nd = ad->new_data;
        cp = ad->new_checkpoint;
    } else if (mb->event.type == ODF_MetadataEvent_ExecuteTransform) {
        const odf_ExecuteTransform *et = mb->event.value;
        nd = et->new_data;
        cp = et->new_checkpoint;
    } else if (mb->event.type == ODF_MetadataEvent_Seed) {
        const odf_Seed *sd = mb->event.value;
        if (sd->dataset_id.len == SILT_DID_LEN) {
            memcpy(x->res->did, sd->dataset_id.data, SILT_DID_LEN);
            x->res->have_did = true;
        }
    }
    if (nd)
        rc = add_obj(x, "data", &nd->physical_hash, nd->size, t);
    if (rc == 0 && cp)
        rc = add_obj(x, "checkpoints", &cp->physical_hash, cp->size, t);
    *has_prev = mb->prev_block_hash.data != NULL;
    if (rc == 0 && *has_prev) {
        if (mb->prev_block_hash.len != SILT_MH_LEN)
            rc = silt_err(SILT_ECORRUPT, "blocks/%s: invalid prevBlockHash", t);
        else
            memcpy(prev, mb->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

/* Block `mh`: from the target when it has it (resume), else from the
 * source; its bytes must hash to mh. */
static int fetch_block(xfer *x, const uint8_t mh[SILT_MH_LEN], xfer_block *b)
{
    memset(b, 0, sizeof *b);
    memcpy(b->mh, mh, SILT_MH_LEN);
    char t[SILT_MH_TEXT_LEN + 1];
    mh_text(mh, t);
    int rc = silt_store_stat(x->dst, "blocks", mh, NULL);
    if (rc == 1 && silt_store_get(x->dst, "blocks", mh, &b->bytes) == 0) {
        b->present = true;
    } else {
        silt_err_clear();
        silt_buf_clear(&b->bytes);
        rc = silt_store_get(x->src, "blocks", mh, &b->bytes);
        if (rc == SILT_ENOTFOUND)
            return silt_err(SILT_ENOTFOUND, "blocks/%s is missing in %s", t, label(x->o->src_label, "the source"));
        if (rc < 0)
            return rc;
    }
    uint8_t got[SILT_MH_LEN];
    rc = odf_block_hash((const uint8_t *)(b->bytes.data ? b->bytes.data : ""), b->bytes.len, got);
    if (rc < 0)
        return rc;
    if (memcmp(got, mh, SILT_MH_LEN) != 0)
        return silt_err(SILT_ECORRUPT, "blocks/%s from %s does not match its hash; nothing was committed", t,
                        b->present ? label(x->o->dst_label, "the target") : label(x->o->src_label, "the source"));
    return 0;
}

static int push_block(xfer *x, xfer_block *b)
{
    if (x->nblocks == x->capblocks) {
        size_t cap = x->capblocks ? 2 * x->capblocks : 64;
        xfer_block *n = realloc(x->blocks, cap * sizeof *n);
        if (!n)
            return silt_err(SILT_ENOMEM, "transfer: out of memory");
        x->blocks = n;
        x->capblocks = cap;
    }
    x->blocks[x->nblocks++] = *b;
    return 0;
}

/* Walks src from `head` back until `stop` (may be "") or the Seed;
 * *found tells whether `stop` was met. */
static int walk_source(xfer *x, const char *head, const char *stop, bool *found)
{
    uint8_t cur[SILT_MH_LEN];
    int rc = parse_mh(head, cur, "refs/head");
    *found = false;
    while (rc == 0) {
        char t[SILT_MH_TEXT_LEN + 1];
        mh_text(cur, t);
        if (*stop && strcmp(t, stop) == 0) {
            *found = true;
            break;
        }
        xfer_block b;
        rc = fetch_block(x, cur, &b);
        if (rc == 0)
            rc = push_block(x, &b);
        if (rc < 0) {
            silt_buf_free(&b.bytes);
            break;
        }
        bool has_prev = false;
        rc = scan_block(x, &x->blocks[x->nblocks - 1], &has_prev, cur);
        if (rc < 0 || !has_prev)
            break;
    }
    return rc;
}

static bool in_source_chain(const xfer *x, const char *t)
{
    for (size_t i = 0; i < x->nblocks; i++) {
        char s[SILT_MH_TEXT_LEN + 1];
        mh_text(x->blocks[i].mh, s);
        if (strcmp(s, t) == 0)
            return true;
    }
    return false;
}

/* Walks the target from its head: *ahead when it meets src_head; otherwise
 * counts the blocks not in the source chain (what --force drops) into
 * *dropped and notes them. */
static int walk_target(xfer *x, const char *dst_head, const char *src_head, bool *ahead, uint64_t *dropped,
                       bool note)
{
    uint8_t cur[SILT_MH_LEN];
    int rc = parse_mh(dst_head, cur, "refs/head");
    *ahead = false;
    *dropped = 0;
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "transfer: out of memory");
    while (rc == 0) {
        char t[SILT_MH_TEXT_LEN + 1];
        mh_text(cur, t);
        if (strcmp(t, src_head) == 0) {
            *ahead = true;
            break;
        }
        if (in_source_chain(x, t))
            break;
        silt_buf b = SILT_BUF_INIT;
        rc = silt_store_get(x->dst, "blocks", cur, &b);
        odf_MetadataBlock *mb = NULL;
        if (rc == 0)
            rc = odf_block_decode(a, (const uint8_t *)b.data, b.len, &mb, NULL);
        silt_buf_free(&b);
        if (rc < 0) {
            rc = silt_err_context(rc, "%s: blocks/%s", label(x->o->dst_label, "the target"), t);
            break;
        }
        (*dropped)++;
        if (note && x->o->note) {
            char line[200];
            snprintf(line, sizeof line, "dropping block %s (sequence %llu) from %s", t,
                     (unsigned long long)mb->sequence_number, label(x->o->dst_label, "the target"));
            x->o->note(x->o->note_ctx, line);
        }
        if (!mb->prev_block_hash.data || mb->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(cur, mb->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

/* ---- objects, in parallel --------------------------------------------------- */

static void worker_fail(xfer *x)
{
    pthread_mutex_lock(&x->mu);
    if (!x->err_code) {
        x->err_code = silt_error_code() ? silt_error_code() : SILT_EIO;
        snprintf(x->err_msg, sizeof x->err_msg, "%s", silt_error_last());
    }
    pthread_mutex_unlock(&x->mu);
}

/* Compares a received object's SHA3-256 digest and size with its name and
 * the size its block records. */
static int check_digest(const xfer_obj *o, const uint8_t d[SILT_SHA3_256_LEN], uint64_t size, const char *from)
{
    uint8_t got[SILT_MH_LEN];
    silt_multihash_wrap_sha3(d, got);
    char t[SILT_MH_TEXT_LEN + 1];
    mh_text(o->mh, t);
    if (memcmp(got, o->mh, SILT_MH_LEN) != 0)
        return silt_err(SILT_ECORRUPT, "%s/%s from %s does not match its hash; nothing was committed", o->kind, t,
                        from);
    if (size != o->size)
        return silt_err(SILT_ECORRUPT, "%s/%s from %s has %llu bytes, its block says %llu; nothing was committed",
                        o->kind, t, from, (unsigned long long)size, (unsigned long long)o->size);
    return 0;
}

/* Hashes the (local) file at path and checks it (check_digest). */
static int check_file(const xfer_obj *o, const char *path, const char *from)
{
    uint8_t d[SILT_SHA3_256_LEN];
    uint64_t size = 0;
    int rc = silt_sha3_file(path, d, &size);
    return rc < 0 ? rc : check_digest(o, d, size, from);
}

static int copy_obj(xfer *x, const xfer_obj *o, size_t idx, bool *skipped)
{
    uint64_t have = 0;
    *skipped = false;
    int rc = silt_store_stat(x->dst, o->kind, o->mh, &have);
    if (rc < 0)
        return rc;
    if (rc == 1 && have == o->size) {
        *skipped = true;
        return 0;
    }
    const char *from = label(x->o->src_label, "the source");
    char t[SILT_MH_TEXT_LEN + 1];
    mh_text(o->mh, t);
    char *local = silt_store_object_path(x->src, o->kind, o->mh);
    if (local) {
        if (access(local, F_OK) != 0)
            rc = silt_err(SILT_ENOTFOUND, "%s/%s is missing in %s", o->kind, t, from);
        else
            rc = check_file(o, local, from);
        if (rc == 0)
            rc = silt_store_put_file(x->dst, o->kind, o->mh, local);
        free(local);
        return rc;
    }
    silt_err_clear();
    if (!x->o->tmp_dir)
        return silt_err(SILT_EINVAL, "transfer: no scratch directory for downloads");
    char path[4096];
    snprintf(path, sizeof path, "%s/obj-%zu", x->o->tmp_dir, idx);
    uint8_t d[SILT_SHA3_256_LEN];
    uint64_t got = 0;
    rc = silt_store_get_to_file(x->src, o->kind, o->mh, path, d, &got);
    if (rc == SILT_ENOTFOUND)
        rc = silt_err(SILT_ENOTFOUND, "%s/%s is missing in %s", o->kind, t, from);
    if (rc == 0) /* hashed while it was downloaded: not read again */
        rc = check_digest(o, d, got, from);
    if (rc == 0)
        rc = silt_store_adopt_file(x->dst, o->kind, o->mh, path);
    unlink(path);
    return rc;
}

static void *worker(void *arg)
{
    xfer *x = arg;
    for (;;) {
        pthread_mutex_lock(&x->mu);
        size_t i = x->next++;
        bool stop = x->err_code != 0 || i >= x->nobjs;
        pthread_mutex_unlock(&x->mu);
        if (stop)
            break;
        bool skipped = false;
        if (copy_obj(x, &x->objs[i], i, &skipped) < 0) {
            worker_fail(x);
            break;
        }
        pthread_mutex_lock(&x->mu);
        if (skipped)
            x->res->skipped++;
        else {
            x->res->objects++;
            x->res->bytes += x->objs[i].size;
        }
        pthread_mutex_unlock(&x->mu);
    }
    return NULL;
}

static int copy_objects(xfer *x)
{
    int jobs = x->o->jobs > 0 ? x->o->jobs : 8;
    if (jobs > 64)
        jobs = 64;
    if ((size_t)jobs > x->nobjs)
        jobs = (int)x->nobjs;
    pthread_t th[64];
    int started = 0;
    for (; started < jobs; started++)
        if (pthread_create(&th[started], NULL, worker, x) != 0)
            break;
    if (started == 0 && x->nobjs > 0)
        worker(x);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    if (x->err_code)
        return silt_err(x->err_code, "%s", x->err_msg);
    return 0;
}

/* ---- the whole transfer ----------------------------------------------------- */

static int check_ancestry(xfer *x, const char *src_head, const char *dst_head)
{
    bool ahead = false;
    uint64_t dropped = 0;
    int rc = walk_target(x, dst_head, src_head, &ahead, &dropped, false);
    if (rc < 0)
        return rc;
    const char *sl = label(x->o->src_label, "the source"), *dl = label(x->o->dst_label, "the target");
    if (!x->o->force) {
        if (ahead)
            return silt_err(SILT_ECONFLICT,
                            "%s (head %s) is ahead of %s (head %s): nothing to transfer; --force moves it back, "
                            "dropping %llu blocks",
                            dl, dst_head, sl, src_head, (unsigned long long)dropped);
        return silt_err(SILT_ECONFLICT,
                        "%s (head %s) and %s (head %s) have diverged: neither head descends from the other; "
                        "--force overwrites %s, dropping %llu blocks",
                        sl, src_head, dl, dst_head, dl, (unsigned long long)dropped);
    }
    x->res->dropped = dropped;
    if (x->o->note) {
        char line[400];
        snprintf(line, sizeof line, "--force: %s (head %s) is replaced by %s (head %s); %llu blocks are dropped", dl,
                 dst_head, sl, src_head, (unsigned long long)dropped);
        x->o->note(x->o->note_ctx, line);
    }
    return walk_target(x, dst_head, src_head, &ahead, &dropped, true);
}

static int write_blocks(xfer *x)
{
    for (size_t i = x->nblocks; i-- > 0;) {
        xfer_block *b = &x->blocks[i];
        if (b->present)
            continue;
        int rc = silt_store_put(x->dst, "blocks", b->mh, b->bytes.data ? b->bytes.data : "", b->bytes.len);
        if (rc < 0)
            return rc;
        x->res->blocks++;
    }
    return 0;
}

static int run(xfer *x)
{
    const char *sl = label(x->o->src_label, "the source");
    char src_head[SILT_MH_TEXT_LEN + 1], dst_head[SILT_MH_TEXT_LEN + 1];
    int rc = read_head(x->src, src_head, sl);
    if (rc == 0 && !*src_head)
        rc = silt_err(SILT_ENOTFOUND, "%s has no refs/head", sl);
    if (rc == 0)
        rc = read_head(x->dst, dst_head, label(x->o->dst_label, "the target"));
    if (rc < 0)
        return rc;
    memcpy(x->res->old_head, dst_head, sizeof dst_head);
    memcpy(x->res->new_head, src_head, sizeof src_head);
    if (strcmp(src_head, dst_head) == 0) {
        x->res->up_to_date = true;
        return 0;
    }
    bool found = false;
    rc = walk_source(x, src_head, dst_head, &found);
    if (rc == 0 && *dst_head && !found)
        rc = check_ancestry(x, src_head, dst_head);
    if (rc == 0)
        rc = copy_objects(x);
    if (rc == 0)
        rc = write_blocks(x);
    if (rc == 0)
        rc = silt_store_ref_cas(x->dst, "head", *dst_head ? dst_head : NULL, src_head);
    return rc;
}

int silt_xfer_run(silt_store *src, silt_store *dst, const silt_xfer_opts *opts, silt_xfer_result *out)
{
    memset(out, 0, sizeof *out);
    silt_xfer_opts dflt = {0};
    xfer x = {.src = src, .dst = dst, .o = opts ? opts : &dflt, .res = out};
    if (pthread_mutex_init(&x.mu, NULL) != 0)
        return silt_err(SILT_ENOMEM, "transfer: cannot create a mutex");
    int rc = run(&x);
    for (size_t i = 0; i < x.nblocks; i++)
        silt_buf_free(&x.blocks[i].bytes);
    free(x.blocks);
    free(x.objs);
    pthread_mutex_destroy(&x.mu);
    return rc;
}
