/* transform_replay.c — replay verification of a derivative (issue 16,
 * docs/transforms.md "Verifying a derivative"): every ExecuteTransform of
 * the chain is run again from what it recorded and its result compared with
 * the recorded newData.
 *
 * Invariants:
 *  - the blocks are replayed oldest first, each with the SetTransform in
 *    force at it; nothing is written (the replayed slice lives in a scratch
 *    directory until it is hashed);
 *  - a block whose replay fails (an input block no longer on the input's
 *    chain, a data file that cannot be read, a query error), whose result
 *    differs from newData (no data where there is some, a different number
 *    of records, another logical hash), or whose queryInputs do not start
 *    where the previous ExecuteTransform's ended, is one reported problem
 *    naming the block by sequence number and hash;
 *  - a block with an input that is not in the workspace (imported from
 *    elsewhere, or deleted) is not replayed: its hashes and chain rules are
 *    all that can be checked here.
 */
#include "ops/transform.h"

#include "engine/digest.h"
#include "util/error.h"
#include "util/multiformats.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rp {
    silt_dataset *ds;
    silt_arena *a;
    void (*report)(void *ctx, const char *line);
    void *ctx;
    size_t *problems;
    uint8_t (*hashes)[SILT_MH_LEN]; /* the chain, oldest first */
    size_t n;
} rp;

static void problem(rp *r, size_t i, const char *fmt, ...)
{
    char hash[SILT_MH_TEXT_LEN + 1], msg[1024], line[1400];
    silt_multihash_to_text(r->hashes[i], SILT_MH_LEN, hash);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "block %zu (%s): ExecuteTransform replay: %s", i, hash, msg);
    (*r->problems)++;
    if (r->report)
        r->report(r->ctx, line);
}

/* The chain of ds from its head back to the seed, stored oldest first. */
static int collect(rp *r)
{
    if (r->ds->st.empty)
        return 0;
    size_t n = (size_t)r->ds->st.seq + 1;
    r->hashes = silt_arena_alloc(r->a, n * sizeof *r->hashes);
    if (!r->hashes)
        return SILT_ENOMEM;
    uint8_t h[SILT_MH_LEN];
    memcpy(h, r->ds->st.head, SILT_MH_LEN);
    for (size_t k = n; k-- > 0;) {
        memcpy(r->hashes[k], h, SILT_MH_LEN);
        odf_MetadataBlock *b = NULL;
        int rc = silt_ds_load_block(r->ds, h, r->a, &b);
        if (rc)
            return rc;
        if (k == 0)
            break;
        if (!b->prev_block_hash.data || b->prev_block_hash.len != SILT_MH_LEN)
            return silt_err(SILT_ECORRUPT, "block %zu has no previous block", k);
        memcpy(h, b->prev_block_hash.data, SILT_MH_LEN);
    }
    r->n = n;
    return 0;
}

static const odf_ExecuteTransformInput *entry_for(const odf_ExecuteTransform *et, const odf_bytes *did)
{
    for (size_t k = 0; et && k < et->query_inputs.n; k++) {
        const odf_ExecuteTransformInput *q = et->query_inputs.items[k];
        if (q && q->dataset_id.len == did->len && memcmp(q->dataset_id.data, did->data, did->len) == 0)
            return q;
    }
    return NULL;
}

static bool same_bytes(const odf_bytes *x, const odf_bytes *y)
{
    if (!x->data || !y->data)
        return !x->data && !y->data;
    return x->len == y->len && memcmp(x->data, y->data, x->len) == 0;
}

/* Does every entry of et start where `last` left its input? */
static void check_continues(rp *r, size_t i, const odf_ExecuteTransform *et, const odf_ExecuteTransform *last)
{
    for (size_t k = 0; k < et->query_inputs.n; k++) {
        const odf_ExecuteTransformInput *q = et->query_inputs.items[k];
        if (!q)
            continue;
        const odf_ExecuteTransformInput *p = entry_for(last, &q->dataset_id);
        odf_bytes none = {NULL, 0};
        const odf_bytes *pb = !p ? &none : p->new_block_hash.data ? &p->new_block_hash : &p->prev_block_hash;
        bool has_po = p && (p->has_new_offset || p->has_prev_offset);
        uint64_t po = p && p->has_new_offset ? p->new_offset : p ? p->prev_offset : 0;
        if (!same_bytes(&q->prev_block_hash, pb) || q->has_prev_offset != has_po ||
            (has_po && q->prev_offset != po)) {
            char did[SILT_DID_TEXT_LEN + 1] = "?";
            if (q->dataset_id.len == SILT_DID_LEN)
                silt_did_to_text(q->dataset_id.data, did);
            problem(r, i, "queryInputs of %s do not start where the previous ExecuteTransform ended", did);
        }
    }
}

static void compare(rp *r, size_t i, const odf_ExecuteTransform *et, const silt_replay_result *got)
{
    const odf_DataSlice *d = et->new_data;
    uint64_t want = d && d->offset_interval ? d->offset_interval->end - d->offset_interval->start + 1 : 0;
    if (got->num_records != want) {
        problem(r, i, "the query gives %llu record%s, newData holds %llu", (unsigned long long)got->num_records,
                got->num_records == 1 ? "" : "s", (unsigned long long)want);
        return;
    }
    if (!want)
        return;
    char g[SILT_ARROW_MH_TEXT_LEN + 1], w[2 * 64 + 2] = "(none)";
    if (d->logical_hash.data && d->logical_hash.len <= 64)
        silt_multihash_to_text(d->logical_hash.data, d->logical_hash.len, w);
    if (d->logical_hash.len != SILT_LOGICAL_HASH_LEN ||
        memcmp(d->logical_hash.data, got->logical_hash, SILT_LOGICAL_HASH_LEN) != 0) {
        silt_arrow_multihash_text(got->logical_hash, g);
        problem(r, i, "the result's logical hash %s is not newData.logicalHash %s (the query is not "
                      "deterministic, or its inputs changed)", g, w);
    }
}

static int replay_all(rp *r)
{
    const odf_SetTransform *st = NULL;
    const odf_ExecuteTransform *last = NULL;
    for (size_t i = 0; i < r->n; i++) {
        odf_MetadataBlock *b = NULL;
        int rc = silt_ds_load_block(r->ds, r->hashes[i], r->a, &b);
        if (rc)
            return rc;
        if (b->event.type == ODF_MetadataEvent_SetTransform)
            st = b->event.value;
        if (b->event.type != ODF_MetadataEvent_ExecuteTransform || !b->event.value)
            continue;
        const odf_ExecuteTransform *et = b->event.value;
        check_continues(r, i, et, last);
        last = et;
        if (!st) {
            problem(r, i, "no SetTransform precedes it");
            continue;
        }
        silt_replay_result got;
        rc = silt_transform_replay(r->ds, st, b, i ? r->hashes[i - 1] : NULL, &got);
        if (rc == SILT_ENOMEM)
            return rc;
        if (rc < 0)
            problem(r, i, "%s", silt_error_last());
        else if (!got.skipped)
            compare(r, i, et, &got);
        silt_err_clear();
    }
    return 0;
}

int silt_transform_verify_replay(silt_dataset *ds, void (*report)(void *ctx, const char *line), void *ctx,
                                 size_t *problems)
{
    rp r = {.ds = ds, .report = report, .ctx = ctx, .problems = problems};
    r.a = silt_arena_new();
    if (!r.a)
        return silt_err(SILT_ENOMEM, "out of memory");
    int rc = collect(&r);
    if (!rc)
        rc = replay_all(&r);
    silt_arena_free(r.a);
    if (rc == SILT_ENOMEM && !silt_error_last()[0])
        return silt_err(rc, "out of memory");
    return rc;
}
