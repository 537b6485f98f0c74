/* reset.c — `silt reset NAME[@BRANCH] --to BLOCK` (issue 16,
 * docs/transforms.md "Resetting a dataset"): moves a branch's head back to
 * an earlier block of its chain.
 *
 * Invariants:
 *  - the target is a block of the branch's chain, named by its hash, an
 *    unambiguous prefix of the hash, or its sequence number; the head moves
 *    by one compare-and-swap of the ref from the head read (a concurrent
 *    writer makes it fail with SILT_ECONFLICT), then the summary is brought
 *    to the new head; no block or data file is deleted (`silt gc` may);
 *  - resetting master is refused, before anything changes, when a
 *    derivative of the workspace has consumed a block being dropped (one of
 *    its ExecuteTransforms' queryInputs names it), naming the derivative and
 *    its block, unless `force`; other branches are not read by derivatives;
 *  - files datasets are refused: their transactions live in txn/ records
 *    that a moved head would contradict.
 */
#include "silt.h"

#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "store/store.h"
#include "util/error.h"
#include "util/multiformats.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct chain {
    uint8_t (*h)[SILT_MH_LEN]; /* oldest first */
    size_t n;
} chain;

/* The hashes of ds's chain from the seed to the head (arena). */
static int load_chain(silt_dataset *ds, silt_arena *a, chain *c)
{
    c->n = ds->st.empty ? 0 : (size_t)ds->st.seq + 1;
    c->h = silt_arena_alloc(a, (c->n + 1) * sizeof *c->h);
    if (!c->h)
        return SILT_ENOMEM;
    uint8_t h[SILT_MH_LEN];
    memcpy(h, ds->st.head, SILT_MH_LEN);
    for (size_t k = c->n; k-- > 0;) {
        memcpy(c->h[k], h, SILT_MH_LEN);
        odf_MetadataBlock *b = NULL;
        int rc = silt_ds_load_block(ds, h, a, &b);
        if (rc)
            return rc;
        if (k && (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN))
            return silt_err(SILT_ECORRUPT, "block %zu has no previous block", k);
        if (k)
            memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
    return 0;
}

/* The sequence number of the block `to` names in c. */
static int find_target(const chain *c, const char *to, size_t *out)
{
    size_t len = strlen(to), digits = strspn(to, "0123456789");
    if (len && digits == len && len < 20) {
        unsigned long long seq = strtoull(to, NULL, 10);
        if (seq >= c->n)
            return silt_err(SILT_ENOTFOUND, "no block %llu (the head is block %zu)", seq, c->n ? c->n - 1 : 0);
        *out = (size_t)seq;
        return 0;
    }
    for (size_t i = 0; i < len; i++)
        if (!isxdigit((unsigned char)to[i]))
            return silt_err(SILT_EINVAL, "'%s' is neither a block hash, a hash prefix nor a sequence number", to);
    size_t found = 0, at = 0;
    for (size_t k = 0; k < c->n; k++) {
        char t[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(c->h[k], SILT_MH_LEN, t);
        if (strncasecmp(t, to, len) == 0) {
            found++;
            at = k;
        }
    }
    if (found == 0)
        return silt_err(SILT_ENOTFOUND, "no block '%s' in the chain", to);
    if (found > 1)
        return silt_err(SILT_EINVAL, "block prefix '%s' names %zu blocks; give more of the hash", to, found);
    *out = at;
    return 0;
}

static bool dropped(const chain *c, size_t target, const odf_bytes *h)
{
    for (size_t k = target + 1; h->data && h->len == SILT_MH_LEN && k < c->n; k++)
        if (memcmp(c->h[k], h->data, SILT_MH_LEN) == 0)
            return true;
    return false;
}

/* Does derivative d consume a block of ds after `target`? *seq = its block. */
static int consumes(silt_dataset *d, const uint8_t did[SILT_DID_LEN], const chain *c, size_t target, bool *yes,
                    uint64_t *seq)
{
    *yes = false;
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    int rc = 0;
    uint8_t h[SILT_MH_LEN];
    memcpy(h, d->st.head, SILT_MH_LEN);
    while (!rc && !*yes && !d->st.empty) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(d, h, a, &b);
        if (rc)
            break;
        const odf_ExecuteTransform *et =
            b->event.type == ODF_MetadataEvent_ExecuteTransform ? b->event.value : NULL;
        for (size_t k = 0; et && k < et->query_inputs.n; k++) {
            const odf_ExecuteTransformInput *q = et->query_inputs.items[k];
            if (q && q->dataset_id.len == SILT_DID_LEN && memcmp(q->dataset_id.data, did, SILT_DID_LEN) == 0 &&
                (dropped(c, target, &q->new_block_hash) || dropped(c, target, &q->prev_block_hash))) {
                *yes = true;
                *seq = b->sequence_number;
            }
        }
        if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

/* SILT_ECONFLICT naming the first derivative that consumed a dropped block. */
static int check_consumers(silt_dataset *ds, const chain *c, size_t target)
{
    uint8_t did[SILT_DID_LEN];
    int rc = silt_did_from_text(ds->id, did);
    char **names = NULL;
    if (!rc)
        rc = silt_dataset_list(&names, ds->ws); /* >= 0: the count */
    for (size_t i = 0; rc >= 0 && names && names[i]; i++) {
        silt_dataset *d = NULL;
        rc = silt_dataset_open(&d, ds->ws, names[i]);
        if (rc >= 0 && d->st.dataset_kind == ODF_DatasetKind_Derivative && strcmp(d->id, ds->id) != 0) {
            bool yes = false;
            uint64_t seq = 0;
            rc = consumes(d, did, c, target, &yes, &seq);
            if (!rc && yes)
                rc = silt_err(SILT_ECONFLICT,
                              "derivative '%s' has consumed blocks after block %zu (its block %llu); "
                              "reset it first, or give --force",
                              names[i], target, (unsigned long long)seq);
        }
        silt_dataset_free(d);
    }
    silt_strv_free(names);
    return rc < 0 ? rc : 0;
}

static int reset(silt_dataset *ds, const char *to, bool force, silt_reset_result *out)
{
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    int files = silt_files_is_files(ds);
    if (files < 0)
        return files;
    if (files)
        return silt_err(SILT_EINVAL, "a files dataset cannot be reset (its transactions are recorded in txn/)");
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    chain c;
    size_t target = 0;
    rc = load_chain(ds, a, &c);
    if (!rc)
        rc = find_target(&c, to, &target);
    if (!rc) {
        out->from_seq = c.n - 1;
        out->to_seq = target;
        silt_multihash_to_text(c.h[target], SILT_MH_LEN, out->head);
    }
    if (!rc && target + 1 < c.n && !force && strcmp(ds->branch, "master") == 0)
        rc = check_consumers(ds, &c, target);
    if (!rc && target + 1 < c.n) {
        char old[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(ds->st.head, SILT_MH_LEN, old);
        rc = silt_store_ref_cas(ds->store, ds->ref, old, out->head);
        if (rc == SILT_ECONFLICT)
            rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: head moved; retry", silt_ds_label(ds));
        if (!rc)
            rc = silt_ds_sync(ds);
    }
    silt_arena_free(a);
    return rc;
}

int silt_dataset_reset(silt_dataset *ds, const char *to, bool force, silt_reset_result *out)
{
    memset(out, 0, sizeof *out);
    int rc = reset(ds, to, force, out);
    if (rc == SILT_ENOMEM && !silt_error_last()[0])
        rc = silt_err(rc, "out of memory");
    return rc < 0 ? silt_err_context(rc, "reset '%s'", silt_ds_label(ds)) : 0;
}
