/* dataset.c — datasets of a workspace: create (Seed), open by reference,
 * append blocks, create one dataset from a DatasetSnapshot, rename,
 * delete, list, info. (`silt add` of whole manifest files, with Source and
 * Flow resources, is src/ops/manifest.c.)
 *
 * Invariants:
 *  - a new dataset is built completely in `.silt/tmp/<random>/` and renamed
 *    into `.silt/datasets/<did-multibase>/` under the workspace lock after
 *    re-checking that its name is free: a failed creation leaves nothing
 *    visible;
 *  - every block is validated with odf_chain_check against the state at the
 *    head the writer read (the handle's state, which the append never
 *    re-syncs), written as an immutable object, and then the ref is moved by
 *    compare-and-swap from that head; a lost race is SILT_ECONFLICT
 *    ("concurrent update of NAME: head moved; retry") and leaves only an
 *    unreferenced object behind;
 *  - system time never decreases along a chain (max(now, last));
 *  - renames and deletes happen under the workspace lock; a deleted dataset
 *    is first moved to `.silt/trash/` (atomic), then removed. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "engine/writer.h"
#include "odf/block.h"
#include "odf/yaml.h"
#include "util/arena.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

/* ---- handles ------------------------------------------------------------ */

static void rid_compute(const uint8_t did[SILT_DID_LEN], char out[64]);

static silt_dataset *ds_new(silt_workspace *ws, const char *dir, const char *branch)
{
    silt_dataset *ds = silt_zalloc(sizeof *ds);
    if (!ds)
        return NULL;
    ds->ws = ws;
    ds->dir = strdup(dir);
    ds->branch = strdup(branch && strcmp(branch, "master") != 0 ? branch : "master");
    if (ds->branch && strcmp(ds->branch, "master") != 0) {
        size_t n = strlen(ds->branch) + 10;
        ds->ref = malloc(n);
        if (ds->ref)
            snprintf(ds->ref, n, "branches/%s", ds->branch);
    } else {
        ds->ref = strdup("head");
    }
    if (!ds->dir || !ds->branch || !ds->ref || odf_chain_state_init(&ds->st) < 0) {
        free(ds->dir);
        free(ds->branch);
        free(ds->ref);
        free(ds);
        return NULL;
    }
    return ds;
}

void silt_dataset_free(silt_dataset *ds)
{
    if (!ds)
        return;
    silt_store_free(ds->store);
    odf_chain_state_free(&ds->st);
    free(ds->dir);
    free(ds->name);
    free(ds->branch);
    free(ds->ref);
    free(ds);
}

const char *silt_ds_label(const silt_dataset *ds)
{
    static _Thread_local char buf[256];
    if (strcmp(ds->branch, "master") == 0)
        snprintf(buf, sizeof buf, "%s", ds->name ? ds->name : "?");
    else
        snprintf(buf, sizeof buf, "%s@%s", ds->name ? ds->name : "?", ds->branch);
    return buf;
}

/* The dataset's store. In a long-running process the check that none of
 * its directories is a symbolic link (silt_store_open_local) is skipped
 * while the directory and its refs/ stat as when it last passed: replacing
 * an entry of either (blocks/, refs/branches/, …) changes its mtime and
 * ctime (statcache.c). */
static int store_open(silt_store **out, const char *dir)
{
    if (!silt_process_caches_on())
        return silt_store_open_local(out, dir, false);
    silt_stat_id ids[SILT_STAT_IDS] = {{0}};
    if (silt_stat_id_of(dir, &ids[0]) < 0 && errno == ENOENT)
        return silt_err(SILT_ENOTFOUND, "%s: dataset directory not found", dir);
    char *refs = silt_path_join(dir, "refs", NULL);
    bool have = refs && ids[0].valid && S_ISDIR(ids[0].mode) && silt_stat_id_of(refs, &ids[1]) == 0 &&
                S_ISDIR(ids[1].mode);
    free(refs);
    char *hit = have ? silt_statcache_get('l', dir, ids) : NULL;
    if (hit) {
        free(hit);
        return silt_store_open_local_unchecked(out, dir);
    }
    int rc = silt_store_open_local(out, dir, false);
    if (rc == 0 && have)
        silt_statcache_put('l', dir, ids, "");
    return rc;
}

/* Opens the dataset in `dir`. The store is opened first: its stat of the
 * directory is the existence check of a reference resolved without one
 * (`ref`, named in the error; NULL = a directory known to exist). */
static int open_dir(silt_dataset **out, silt_workspace *ws, const char *dir, const char *branch, bool sync,
                    const char *ref)
{
    *out = NULL;
    silt_dataset *ds = ds_new(ws, dir, branch);
    if (!ds)
        return silt_err(SILT_ENOMEM, "dataset: out of memory");
    int rc = store_open(&ds->store, dir);
    if (rc == SILT_ENOTFOUND && ref)
        rc = silt_err(SILT_ENOTFOUND, "dataset '%s' not found", ref);
    if (rc == 0 && (rc = silt_ws_read_alias(dir, &ds->name)) == SILT_ENOTFOUND) {
        const char *base = strrchr(dir, '/');
        ds->name = strdup(base ? base + 1 : dir);
        rc = ds->name ? 0 : silt_err(SILT_ENOMEM, "dataset: out of memory");
    }
    if (rc == 0 && strcmp(ds->ref, "head") != 0) {
        silt_buf b = SILT_BUF_INIT;
        rc = silt_store_ref_read(ds->store, ds->ref, &b);
        silt_buf_free(&b);
        if (rc == SILT_ENOTFOUND)
            rc = silt_err(SILT_ENOTFOUND, "dataset '%s' has no branch '%s'", ds->name, ds->branch);
    }
    if (rc == 0 && sync)
        rc = silt_ds_sync(ds);
    if (rc == 0) {
        silt_did_to_text(ds->st.dataset_id, ds->id);
        silt_ds_rid_of(ds->st.dataset_id, ds->rid);
    }
    if (rc < 0) {
        silt_dataset_free(ds);
        return rc;
    }
    *out = ds;
    return 0;
}

int silt_ds_open_dir(silt_dataset **out, silt_workspace *ws, const char *dir, const char *branch)
{
    return open_dir(out, ws, dir, branch, true, NULL);
}

int silt_ds_open_unsynced(silt_dataset **out, silt_workspace *ws, const char *dir, const char *branch)
{
    return open_dir(out, ws, dir, branch, false, NULL);
}

void silt_ds_rid_of(const uint8_t did[SILT_DID_LEN], char out[64])
{
    /* a pure function of the id: the last answer of this thread is kept */
    static _Thread_local uint8_t last_did[SILT_DID_LEN];
    static _Thread_local char last_rid[64];
    if (last_rid[0] && memcmp(last_did, did, SILT_DID_LEN) == 0) {
        memcpy(out, last_rid, 64);
        return;
    }
    rid_compute(did, out);
    memcpy(last_did, did, SILT_DID_LEN);
    memcpy(last_rid, out, 64);
}

static void rid_compute(const uint8_t did[SILT_DID_LEN], char out[64])
{
    static const char TAG[] = "silt.dev/dataset-rid";
    uint8_t in[sizeof TAG - 1 + SILT_DID_LEN], h[SILT_SHA3_256_LEN];
    memcpy(in, TAG, sizeof TAG - 1);
    memcpy(in + sizeof TAG - 1, did, SILT_DID_LEN);
    if (silt_sha3_256(in, sizeof in, h) < 0)
        memset(h, 0, sizeof h);
    h[6] = (uint8_t)((h[6] & 0x0f) | 0x80);
    h[8] = (uint8_t)((h[8] & 0x3f) | 0x80);
    snprintf(out, 64,
             SILT_DATASET_RID_PREFIX "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", h[0],
             h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]);
}

static int find_by_rid_scan(silt_workspace *ws, const char *rid, char **dir_out);

/* The dataset directory whose id gives `rid` (malloc'd into *dir_out).
 * A cached directory is the answer while it exists: its name is the id
 * the RID was computed from, so no other directory can have that RID.
 * `unchecked`: the caller's open stats the directory anyway (open_dir),
 * so a cached one is returned without a stat of its own. */
static int find_by_rid(silt_workspace *ws, const char *rid, char **dir_out, bool unchecked)
{
    char *dir = silt_ws_dircache_get(ws, 'r', rid);
    if (dir && (unchecked || silt_fs_is_dir(dir))) {
        *dir_out = dir;
        return 0;
    }
    free(dir);
    int rc = find_by_rid_scan(ws, rid, dir_out);
    if (rc == 0)
        silt_ws_dircache_put(ws, 'r', rid, *dir_out);
    return rc;
}

static int find_by_rid_scan(silt_workspace *ws, const char *rid, char **dir_out)
{
    DIR *d = opendir(ws->datasets);
    if (!d)
        return silt_err(SILT_EIO, "%s: cannot list datasets: %s", ws->datasets, strerror(errno));
    int rc = silt_err(SILT_ENOTFOUND, "dataset '%s' not found", rid);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        silt_buf b = SILT_BUF_INIT;
        char got[64];
        bool match = silt_multibase_decode(e->d_name, &b) == 0 && b.len == SILT_DID_LEN;
        if (match) {
            silt_ds_rid_of((const uint8_t *)b.data, got);
            match = strcmp(got, rid) == 0;
        }
        silt_buf_free(&b);
        if (match) {
            *dir_out = silt_path_join(ws->datasets, e->d_name, NULL);
            rc = *dir_out ? 0 : silt_err(SILT_ENOMEM, "dataset: out of memory");
            break;
        }
    }
    closedir(d);
    if (rc == SILT_ENOTFOUND)
        silt_err(SILT_ENOTFOUND, "dataset '%s' not found", rid);
    return rc;
}

/* Resolves a reference to the dataset directory (malloc'd) and the branch
 * (malloc'd, NULL = master). */
static int resolve_ref(silt_workspace *ws, const char *ref, char **dir_out, char **branch_out, bool unchecked)
{
    *dir_out = NULL;
    *branch_out = NULL;
    if (!ref || !*ref)
        return silt_err(SILT_EINVAL, "empty dataset reference");
    if (strncmp(ref, "did:odf:", 8) == 0) {
        uint8_t did[SILT_DID_LEN];
        int rc = silt_did_from_text(ref, did);
        if (rc < 0)
            return silt_err_context(SILT_EINVAL, "dataset reference '%s'", ref);
        char mb[2 * SILT_DID_LEN + 2];
        silt_multibase_encode_f(did, SILT_DID_LEN, mb);
        char *dir = silt_path_join(ws->datasets, mb, NULL);
        if (!dir)
            return silt_err(SILT_ENOMEM, "dataset: out of memory");
        if (!unchecked && !silt_fs_is_dir(dir)) {
            free(dir);
            return silt_err(SILT_ENOTFOUND, "dataset '%s' not found", ref);
        }
        *dir_out = dir;
        return 0;
    }
    if (strncmp(ref, SILT_DATASET_RID_PREFIX, strlen(SILT_DATASET_RID_PREFIX)) == 0)
        return find_by_rid(ws, ref, dir_out, unchecked);
    const char *at = strchr(ref, '@');
    char name[128];
    size_t nlen = at ? (size_t)(at - ref) : strlen(ref);
    if (nlen >= sizeof name)
        return silt_err(SILT_EINVAL, "invalid dataset reference '%s': name too long", ref);
    memcpy(name, ref, nlen);
    name[nlen] = '\0';
    if (!silt_ds_name_ref_ok(name))
        return silt_err(SILT_EINVAL, "invalid dataset reference '%s': " SILT_DS_NAME_RULE, ref);
    if (at && !silt_store_valid_branch_name(at + 1))
        return silt_err(SILT_EINVAL, "invalid dataset reference '%s': bad branch name", ref);
    int rc = silt_ws_find_by_name(ws, name, dir_out);
    if (rc < 0)
        return rc;
    if (at && strcmp(at + 1, "master") != 0) {
        *branch_out = strdup(at + 1);
        if (!*branch_out) {
            free(*dir_out);
            *dir_out = NULL;
            return silt_err(SILT_ENOMEM, "dataset: out of memory");
        }
    }
    return 0;
}

int silt_dataset_open_unread(silt_dataset **out, silt_workspace *ws, const char *ref)
{
    *out = NULL;
    char *dir = NULL, *branch = NULL;
    int rc = resolve_ref(ws, ref, &dir, &branch, true);
    if (rc == 0)
        rc = open_dir(out, ws, dir, branch, false, ref);
    free(dir);
    free(branch);
    return rc;
}

int silt_dataset_open(silt_dataset **out, silt_workspace *ws, const char *ref)
{
    *out = NULL;
    char *dir = NULL, *branch = NULL;
    int rc = resolve_ref(ws, ref, &dir, &branch, true);
    if (rc == 0)
        rc = open_dir(out, ws, dir, branch, true, ref);
    free(dir);
    free(branch);
    return rc;
}

/* ---- appending ---------------------------------------------------------- */

int silt_ds_adopt_slice(silt_dataset *ds, silt_arena *a, const char *tmp, const silt_slice_info *si, uint64_t first,
                        odf_DataSlice **out)
{
    *out = NULL;
    int rc = silt_store_adopt_file(ds->store, "data", si->physical_hash, tmp);
    if (rc)
        return rc;
    odf_DataSlice *nd = silt_arena_alloc(a, sizeof *nd);
    odf_OffsetInterval *oi = silt_arena_alloc(a, sizeof *oi);
    uint8_t *lh = silt_arena_memdup(a, si->logical_hash, sizeof si->logical_hash);
    uint8_t *ph = silt_arena_memdup(a, si->physical_hash, sizeof si->physical_hash);
    if (!nd || !oi || !lh || !ph)
        return SILT_ENOMEM;
    memset(nd, 0, sizeof *nd);
    oi->start = first;
    oi->end = first + si->num_rows - 1;
    nd->logical_hash = (odf_bytes){lh, sizeof si->logical_hash};
    nd->physical_hash = (odf_bytes){ph, sizeof si->physical_hash};
    nd->offset_interval = oi;
    nd->size = si->size;
    *out = nd;
    return 0;
}

void silt_ds_add_data_continue(const silt_dataset *ds, odf_AddData *ad, odf_Checkpoint *cp)
{
    if (ds->st.has_last_offset) {
        ad->has_prev_offset = true;
        ad->prev_offset = ds->st.last_offset;
    }
    if (!ds->st.has_checkpoint)
        return;
    ad->prev_checkpoint = (odf_bytes){(uint8_t *)ds->st.checkpoint, SILT_MH_LEN};
    if (cp) {
        cp->physical_hash = ad->prev_checkpoint;
        cp->size = ds->st.checkpoint_size;
        ad->new_checkpoint = cp;
    }
}

int silt_ds_append_events_n(silt_dataset *ds, const odf_union *events, size_t n,
                            uint8_t (*hashes_out)[SILT_MH_LEN])
{
    return silt_ds_append_events_at(ds, events, n, hashes_out, NULL);
}

/* Builds block i of a batch on `st` (the state left by the previous block),
 * validates it, stores it and advances `st`. */
static int append_one(silt_dataset *ds, odf_chain_state *st, const odf_union *event, silt_time now,
                      const odf_chain_env *env, uint8_t mh[SILT_MH_LEN])
{
    odf_MetadataBlock blk;
    memset(&blk, 0, sizeof blk);
    blk.system_time = (odf_time){now.sec, now.nsec};
    blk.has_system_time = true;
    if (!st->empty) {
        const odf_time last = st->last_system_time;
        if (blk.system_time.sec < last.sec ||
            (blk.system_time.sec == last.sec && blk.system_time.nsec < last.nsec))
            blk.system_time = last;
        blk.prev_block_hash = (odf_bytes){st->head, SILT_MH_LEN};
        blk.sequence_number = st->seq + 1;
    }
    blk.event = *event;
    silt_buf enc = SILT_BUF_INIT;
    int rc = odf_block_encode_hash(&enc, &blk, mh);
    if (rc == 0)
        rc = odf_chain_check(st, &blk, mh, env);
    if (rc == 0)
        rc = silt_store_put(ds->store, "blocks", mh, enc.data, enc.len);
    silt_buf_free(&enc);
    if (rc == 0)
        rc = odf_chain_apply(st, &blk, mh);
    return rc;
}

/* The batch is built on ds->st as the caller left it: the state its events
 * were made from. It is never re-synced here, so a ref that moved since is
 * a conflict at the compare-and-swap, never a rule violation of an event
 * checked against a head it was not made for. Only a handle without any
 * state (a chain being created) is synced first. The blocks are validated
 * on a copy of the state, so ds->st is unchanged unless the batch lands. */
int silt_ds_append_events_at(silt_dataset *ds, const odf_union *events, size_t n,
                             uint8_t (*hashes_out)[SILT_MH_LEN], const silt_time *system_time)
{
    if (n == 0)
        return 0;
    int rc = 0;
    if (ds->st.empty) {
        rc = silt_ds_sync(ds);
        if (rc == SILT_ENOTFOUND && ds->st.empty && events[0].type == ODF_MetadataEvent_Seed) {
            silt_err_clear();
            rc = 0; /* creating the chain */
        }
        if (rc < 0)
            return rc;
    }
    char old_head[SILT_MH_TEXT_LEN + 1];
    bool was_empty = ds->st.empty;
    if (!was_empty)
        silt_multihash_to_text(ds->st.head, SILT_MH_LEN, old_head);
    silt_time now = system_time ? *system_time : silt_time_now();
    odf_chain_state st;
    rc = odf_chain_state_copy(&st, &ds->st);
    if (rc < 0)
        return silt_err(rc, "dataset '%s': out of memory", silt_ds_label(ds));
    uint8_t mh[SILT_MH_LEN];
    odf_chain_env env;
    silt_ds_chain_env(ds, &env);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = append_one(ds, &st, &events[i], now, &env, mh);
        if (rc == 0 && hashes_out)
            memcpy(hashes_out[i], mh, SILT_MH_LEN);
    }
    if (rc == 0) {
        /* one compare-and-swap publishes every block of the batch */
        char text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(mh, SILT_MH_LEN, text);
        rc = silt_store_ref_cas(ds->store, ds->ref, was_empty ? NULL : old_head, text);
        if (rc == SILT_ECONFLICT)
            rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: head moved; retry", silt_ds_label(ds));
    }
    if (rc < 0) {
        odf_chain_state_free(&st);
        return silt_err_context(rc, "dataset '%s'", silt_ds_label(ds));
    }
    odf_chain_state_free(&ds->st);
    ds->st = st;
    silt_ds_refresh_info(ds);
    if (silt_ds_summary_save(ds) < 0)
        silt_err_clear(); /* not fatal: the summary is a cache */
    return 0;
}

int silt_ds_append_event(silt_dataset *ds, const odf_union *event, uint8_t hash_out[SILT_MH_LEN])
{
    uint8_t h[1][SILT_MH_LEN];
    int rc = silt_ds_append_events_n(ds, event, 1, h);
    if (rc == 0 && hash_out)
        memcpy(hash_out, h[0], SILT_MH_LEN);
    return rc;
}

/* ---- creation ----------------------------------------------------------- */

/* Builds a new dataset with its Seed in a fresh staging directory. On
 * success *ds_out is open on the staging dir (caller frees) and *stage_out
 * is the staging path (malloc'd); on failure nothing is left behind. */
static int create_staged(silt_workspace *ws, const char *name, int32_t odf_kind,
                         silt_dataset **ds_out, char **stage_out)
{
    *ds_out = NULL;
    *stage_out = NULL;
    char *stage = NULL;
    int rc = silt_ws_mktemp(ws, "tmp", &stage);
    if (rc < 0)
        return rc;
    silt_dataset *ds = ds_new(ws, stage, NULL);
    char *info = silt_path_join(stage, "info", NULL);
    char *alias = info ? silt_path_join(info, "alias", NULL) : NULL;
    if (!ds || !alias || !(ds->name = strdup(name)))
        rc = silt_err(SILT_ENOMEM, "dataset: out of memory");
    if (rc == 0)
        rc = silt_fs_mkdirs(info);
    if (rc == 0)
        rc = silt_fs_write_atomic(alias, name, strlen(name), false);
    if (rc == 0)
        rc = silt_store_open_local(&ds->store, stage, true);
    uint8_t did[SILT_DID_LEN];
    if (rc == 0)
        rc = silt_did_generate(did, NULL);
    if (rc == 0) {
        odf_Seed seed = {.dataset_id = {did, SILT_DID_LEN}, .dataset_kind = odf_kind};
        odf_union ev = {ODF_MetadataEvent_Seed, &seed};
        rc = silt_ds_append_event(ds, &ev, NULL);
    }
    if (rc == 0)
        silt_did_to_text(did, ds->id);
    free(info);
    free(alias);
    if (rc < 0) {
        silt_dataset_free(ds);
        silt_fs_remove_tree(stage);
        free(stage);
        return rc;
    }
    *ds_out = ds;
    *stage_out = stage;
    return 0;
}

/* Under the workspace lock: checks that `name` is free or, with `replace`,
 * moves the dataset holding it into a fresh trash dir (*old_out = the
 * moved path, *home_out = where it was; both malloc'd, NULL if none). */
static int publish_clear_name(silt_workspace *ws, const char *name, bool replace, char **old_out,
                              char **home_out)
{
    char *other = NULL, *trash = NULL;
    int rc = silt_ws_find_by_name(ws, name, &other);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    if (rc == 0 && !replace)
        rc = silt_err(SILT_EEXISTS, "dataset '%s' already exists", name);
    if (rc == 0)
        rc = silt_ws_mktemp(ws, "trash", &trash);
    char *old = trash ? silt_path_join(trash, "dataset", NULL) : NULL;
    if (rc == 0 && !old)
        rc = silt_err(SILT_ENOMEM, "dataset: out of memory");
    if (rc == 0 && rename(other, old) != 0)
        rc = silt_err(SILT_EIO, "%s: cannot move dataset to trash: %s", other, strerror(errno));
    free(trash);
    if (rc < 0) {
        free(old);
        free(other);
        return rc;
    }
    *old_out = old;
    *home_out = other;
    return 0;
}

/* Moves a staged dataset into datasets/ under the workspace lock, after
 * re-checking that its name is free (with `replace`: the dataset of that
 * name is replaced, and restored if the move fails). Consumes (removes) the
 * staging dir on failure. *dir_out (may be NULL) receives the final
 * directory. */
static int publish(silt_workspace *ws, const char *stage, const char *name, const char *id, bool replace,
                   char **dir_out)
{
    char *dest = silt_path_join(ws->datasets, id + 8 /* after "did:odf:" */, NULL);
    if (!dest) {
        silt_fs_remove_tree(stage);
        return silt_err(SILT_ENOMEM, "dataset: out of memory");
    }
    char *old = NULL, *home = NULL;
    int fd = silt_ws_lock(ws);
    int rc = fd < 0 ? fd : publish_clear_name(ws, name, replace, &old, &home);
    if (rc == 0 && rename(stage, dest) != 0)
        rc = silt_err(SILT_EIO, "%s: cannot move dataset into place: %s", dest, strerror(errno));
    if (rc == 0)
        rc = silt_fs_fsync_dir(ws->datasets);
    if (rc < 0) {
        silt_fs_remove_tree(silt_fs_is_dir(stage) ? stage : dest);
        if (old)
            (void)rename(old, home); /* the replaced dataset comes back */
    }
    if (fd >= 0)
        silt_ws_unlock(fd);
    if (old) {
        char *trash = strrchr(old, '/');
        if (trash)
            *trash = '\0';
        if (rc == 0 && silt_fs_remove_tree(old) < 0)
            silt_err_clear(); /* leftovers in trash/ are garbage */
        else if (rc < 0)
            rmdir(old);
    }
    free(old);
    free(home);
    if (rc < 0) {
        free(dest);
        return rc;
    }
    if (dir_out)
        *dir_out = dest;
    else
        free(dest);
    return 0;
}

int silt_ds_publish_staged(silt_workspace *ws, const char *stage, const char *name, const char *id, char **dir_out)
{
    return publish(ws, stage, name, id, false, dir_out);
}

int silt_ds_check_name_free(silt_workspace *ws, const char *name)
{
    if (!silt_ds_name_valid(name))
        return silt_err(SILT_EINVAL, "invalid dataset name '%s': " SILT_DS_NAME_RULE, name ? name : "");
    char *dir = NULL;
    int rc = silt_ws_find_by_name(ws, name, &dir);
    free(dir);
    if (rc == 0)
        return silt_err(SILT_EEXISTS, "dataset '%s' already exists", name);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    return rc;
}

int silt_dataset_create(silt_dataset **out, silt_workspace *ws, const char *name, silt_dataset_kind kind)
{
    *out = NULL;
    int rc = silt_ds_check_name_free(ws, name);
    if (rc < 0)
        return rc;
    if (kind != SILT_ROOT && kind != SILT_DERIVATIVE)
        return silt_err(SILT_EINVAL, "dataset '%s': invalid kind %d", name, (int)kind);
    silt_dataset *staged = NULL;
    char *stage = NULL;
    rc = create_staged(ws, name, kind == SILT_ROOT ? ODF_DatasetKind_Root : ODF_DatasetKind_Derivative,
                       &staged, &stage);
    if (rc < 0)
        return rc;
    char id[SILT_DID_TEXT_LEN + 1];
    memcpy(id, staged->id, sizeof id);
    silt_dataset_free(staged);
    char *dir = NULL;
    rc = publish(ws, stage, name, id, false, &dir);
    free(stage);
    if (rc == 0)
        rc = silt_ds_open_dir(out, ws, dir, NULL);
    free(dir);
    return rc;
}

/* Reads a whole file (text) into `b`, naming the file on error. */
int silt_ds_read_text(const char *path, silt_buf *b)
{
    return odf_yaml_read_file(path, b); /* within the YAML input limits */
}

int silt_ds_check_snapshot(const char *path, int line, const odf_DatasetSnapshot *s)
{
    if (!silt_ds_name_valid(s->name))
        return silt_err(SILT_EINVAL, "%s:%d: content.name: invalid dataset name '%s': " SILT_DS_NAME_RULE, path,
                        line, s->name ? s->name : "");
    for (size_t i = 0; i < s->metadata.n; i++) {
        if (s->metadata.items[i].type == ODF_MetadataEvent_Seed)
            return silt_err(SILT_EINVAL,
                            "%s:%d: content.metadata[%zu]: a Seed event cannot be given in a manifest "
                            "(it is generated)",
                            path, line, i);
        if (s->metadata.items[i].type == 0 || !s->metadata.items[i].value)
            return silt_err(SILT_EINVAL, "%s:%d: content.metadata[%zu]: missing event", path, line, i);
    }
    return 0;
}

const char *silt_ds_event_kind_name(uint8_t type)
{
    if (type == 0 || type > odf_udesc_MetadataEvent.nvariants)
        return "?";
    return odf_udesc_MetadataEvent.kinds[type - 1];
}

int silt_ds_add_snapshot(silt_workspace *ws, const char *path, int line, const odf_DatasetSnapshot *s,
                         bool replace)
{
    int rc = replace ? (silt_ds_name_valid(s->name)
                            ? 0
                            : silt_err(SILT_EINVAL, "invalid dataset name '%s': " SILT_DS_NAME_RULE, s->name))
                     : silt_ds_check_name_free(ws, s->name);
    if (rc < 0)
        return silt_err_context(rc, "%s:%d", path, line);
    /* SetTransform inputs resolved (and checked) before anything is staged */
    silt_arena *ra = silt_arena_new();
    odf_union *events = s->metadata.n ? calloc(s->metadata.n, sizeof *events) : NULL;
    if (!ra || (s->metadata.n && !events)) {
        silt_arena_free(ra);
        free(events);
        return silt_err(SILT_ENOMEM, "dataset: out of memory");
    }
    if (s->metadata.n)
        memcpy(events, s->metadata.items, s->metadata.n * sizeof *events);
    for (size_t i = 0; i < s->metadata.n && rc == 0; i++) {
        rc = silt_ds_resolve_events(ws, s->name, NULL, &events[i], 1, ra);
        if (rc < 0)
            silt_err_context(rc, "%s:%d: dataset '%s': content.metadata[%zu] (%s)", path, line, s->name, i,
                             silt_ds_event_kind_name(events[i].type));
    }
    silt_dataset *ds = NULL;
    char *stage = NULL;
    if (rc == 0) {
        rc = create_staged(ws, s->name, s->kind, &ds, &stage);
        if (rc < 0)
            silt_err_context(rc, "%s:%d: dataset '%s'", path, line, s->name);
    }
    if (rc < 0) {
        silt_arena_free(ra);
        free(events);
        return rc;
    }
    for (size_t i = 0; i < s->metadata.n && rc == 0; i++) {
        rc = silt_ds_append_event(ds, &events[i], NULL);
        if (rc < 0)
            silt_err_context(rc, "%s:%d: dataset '%s': content.metadata[%zu] (%s)", path, line,
                             s->name, i, silt_ds_event_kind_name(s->metadata.items[i].type));
    }
    silt_arena_free(ra);
    free(events);
    char id[SILT_DID_TEXT_LEN + 1];
    memcpy(id, ds->id, sizeof id);
    silt_dataset_free(ds);
    if (rc < 0) {
        silt_fs_remove_tree(stage);
        free(stage);
        return rc;
    }
    rc = publish(ws, stage, s->name, id, replace, NULL);
    free(stage);
    if (rc < 0)
        return silt_err_context(rc, "%s:%d", path, line);
    return 0;
}

/* ---- rename / delete / list ---------------------------------------------- */

int silt_dataset_rename(silt_workspace *ws, const char *ref, const char *new_name)
{
    if (!silt_ds_name_valid(new_name))
        return silt_err(SILT_EINVAL, "invalid dataset name '%s': " SILT_DS_NAME_RULE, new_name ? new_name : "");
    int fd = silt_ws_lock(ws);
    if (fd < 0)
        return fd;
    char *dir = NULL, *branch = NULL, *other = NULL, *alias = NULL;
    int rc = resolve_ref(ws, ref, &dir, &branch, false);
    if (rc == 0 && branch)
        rc = silt_err(SILT_EINVAL, "rename: '%s' names a branch; give the dataset name", ref);
    if (rc == 0) {
        rc = silt_ws_find_by_name(ws, new_name, &other);
        if (rc == 0 && strcmp(other, dir) != 0)
            rc = silt_err(SILT_EEXISTS, "dataset '%s' already exists", new_name);
        else if (rc == 0 || rc == SILT_ENOTFOUND)
            rc = 0;
    }
    if (rc == 0 && !(alias = silt_path_join(dir, "info", "alias", NULL)))
        rc = silt_err(SILT_ENOMEM, "dataset: out of memory");
    if (rc == 0)
        rc = silt_fs_write_atomic(alias, new_name, strlen(new_name), false);
    silt_ws_unlock(fd);
    free(alias);
    free(other);
    free(dir);
    free(branch);
    return rc;
}

/* Resolves every reference of a delete to its directory (dirs[i], malloc'd;
 * a dataset named twice keeps only its first entry, the others NULL). */
static int delete_resolve(silt_workspace *ws, const char *const *refs, size_t n, char **dirs)
{
    for (size_t i = 0; i < n; i++) {
        char *branch = NULL;
        int rc = resolve_ref(ws, refs[i], &dirs[i], &branch, false);
        if (rc == 0 && branch)
            rc = silt_err(SILT_EINVAL, "delete: '%s' names a branch; give the dataset name", refs[i]);
        free(branch);
        if (rc < 0 && n > 1) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", silt_error_last());
            return silt_err(rc, "%s; nothing deleted", msg);
        }
        if (rc < 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (dirs[j] && strcmp(dirs[j], dirs[i]) == 0) {
                free(dirs[i]);
                dirs[i] = NULL;
                break;
            }
    }
    return 0;
}

/* Moves the resolved datasets into `trash` (as trash/<i>); on a failure
 * the ones already moved go back, so either all are moved or none. */
static int delete_move(const char *trash, char **dirs, size_t n)
{
    int rc = 0;
    size_t moved = 0;
    char sub[32];
    for (; moved < n && rc == 0; moved++) {
        if (!dirs[moved])
            continue;
        snprintf(sub, sizeof sub, "%zu", moved);
        char *dest = silt_path_join(trash, sub, NULL);
        if (!dest)
            rc = silt_err(SILT_ENOMEM, "dataset: out of memory");
        else if (rename(dirs[moved], dest) != 0)
            rc = silt_err(SILT_EIO, "%s: cannot move dataset to trash: %s", dirs[moved], strerror(errno));
        free(dest);
        if (rc < 0)
            break;
    }
    for (size_t i = 0; rc < 0 && i < moved; i++) {
        if (!dirs[i])
            continue;
        snprintf(sub, sizeof sub, "%zu", i);
        char *dest = silt_path_join(trash, sub, NULL);
        if (dest)
            (void)rename(dest, dirs[i]); /* best effort; the first error is reported */
        free(dest);
    }
    return rc;
}

int silt_dataset_delete_many(silt_workspace *ws, const char *const *refs, size_t n)
{
    if (n == 0)
        return 0;
    char **dirs = calloc(n, sizeof *dirs);
    if (!dirs)
        return silt_err(SILT_ENOMEM, "dataset: out of memory");
    char *trash = NULL;
    int fd = silt_ws_lock(ws);
    int rc = fd < 0 ? fd : delete_resolve(ws, refs, n, dirs);
    if (rc == 0)
        rc = silt_ws_mktemp(ws, "trash", &trash);
    if (rc == 0)
        rc = delete_move(trash, dirs, n);
    if (rc == 0)
        rc = silt_fs_fsync_dir(ws->datasets);
    if (fd >= 0)
        silt_ws_unlock(fd);
    if (trash && silt_fs_remove_tree(trash) < 0 && rc == 0)
        silt_err_clear(); /* the datasets are gone; leftovers in trash/ are garbage */
    free(trash);
    for (size_t i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
    return rc;
}

int silt_dataset_delete(silt_workspace *ws, const char *ref)
{
    return silt_dataset_delete_many(ws, &ref, 1);
}

void silt_strv_free(char **v)
{
    if (!v)
        return;
    for (char **p = v; *p; p++)
        free(*p);
    free(v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int silt_dataset_list(char ***names_out, silt_workspace *ws)
{
    *names_out = NULL;
    DIR *d = opendir(ws->datasets);
    if (!d)
        return silt_err(SILT_EIO, "%s: cannot list datasets: %s", ws->datasets, strerror(errno));
    char **v = calloc(1, sizeof *v);
    size_t n = 0;
    int rc = v ? 0 : silt_err(SILT_ENOMEM, "dataset: out of memory");
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *dir = silt_path_join(ws->datasets, e->d_name, NULL);
        char *alias = NULL;
        if (!dir) {
            rc = silt_err(SILT_ENOMEM, "dataset: out of memory");
            break;
        }
        int r = silt_ws_read_alias(dir, &alias);
        /* the name's directory as a lookup hint: opening each listed dataset
         * by name (silt list) then reads one alias, not every dataset's */
        if (r == 0)
            silt_ws_dircache_put(ws, 'n', alias, dir);
        free(dir);
        if (r < 0) {
            if (r == SILT_ENOMEM)
                rc = r;
            continue; /* not a dataset directory */
        }
        char **nv = realloc(v, (n + 2) * sizeof *nv);
        if (!nv) {
            free(alias);
            rc = silt_err(SILT_ENOMEM, "dataset: out of memory");
            break;
        }
        v = nv;
        v[n++] = alias;
        v[n] = NULL;
    }
    closedir(d);
    if (rc < 0) {
        silt_strv_free(v);
        return rc;
    }
    silt_err_clear();
    qsort(v, n, sizeof *v, cmp_str);
    *names_out = v;
    return (int)n;
}

/* ---- info ---------------------------------------------------------------- */

int silt_dataset_info_get(silt_dataset_info *out, silt_dataset *ds)
{
    memset(out, 0, sizeof *out);
    int rc = silt_ds_sync(ds);
    if (rc < 0)
        return rc;
    silt_dataset_info_as_read(out, ds);
    return 0;
}

void silt_dataset_pin(silt_dataset *ds)
{
    ds->pinned = true;
}

void silt_dataset_info_as_read(silt_dataset_info *out, const silt_dataset *ds)
{
    memset(out, 0, sizeof *out);
    const odf_chain_state *st = &ds->st;
    out->name = ds->name;
    out->id = ds->id;
    out->rid = ds->rid;
    out->branch = ds->branch;
    out->kind = st->dataset_kind == ODF_DatasetKind_Derivative ? SILT_DERIVATIVE : SILT_ROOT;
    out->head = ds->head;
    out->num_blocks = st->empty ? 0 : st->seq + 1;
    out->has_last_offset = st->has_last_offset;
    out->last_offset = st->last_offset;
    out->num_records = st->num_records;
    out->has_watermark = st->has_watermark;
    memcpy(out->watermark, ds->watermark, sizeof out->watermark);
    memcpy(out->last_system_time, ds->last_system_time, sizeof out->last_system_time);
    out->has_schema = st->schema.present;
    out->has_polling_source = st->polling_source.present;
    out->has_transform = st->transform.present;
    out->num_push_sources = st->num_push_sources;
    out->data_size = st->data_size;
}

/* ---- append_events -------------------------------------------------------- */

int silt_dataset_append_events(silt_dataset *ds, const char *path)
{
    silt_buf text = SILT_BUF_INIT;
    int rc = silt_ds_read_text(path, &text);
    silt_arena *a = rc == 0 ? silt_arena_new() : NULL;
    if (rc == 0 && !a)
        rc = SILT_ENOMEM;
    silt_ydoc *docs = NULL;
    size_t ndocs = 0;
    if (rc == 0)
        rc = silt_yaml_split(a, text.data ? text.data : "", text.len, path, &docs, &ndocs);
    if (rc == 0 && ndocs == 0)
        rc = silt_err(SILT_EINVAL, "%s: no YAML document found", path);
    /* collect every event first: a parse error appends nothing */
    odf_union *events = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; rc == 0 && i < ndocs; i++) {
        silt_ydoc *d = &docs[i];
        const odf_union *src = NULL;
        size_t count = 1;
        odf_union one;
        if (d->kind && strcmp(d->kind, "MetadataEvent") == 0) {
            if (!d->content)
                rc = silt_err(SILT_EINVAL, "%s:%d: content: missing", path, d->line);
            else
                rc = odf_yaml_parse_event_at(a, d->content, d->content_len, path, d->content_line, &one);
            src = &one;
        } else if (d->kind && strcmp(d->kind, "DatasetSnapshot") == 0) {
            void *obj = NULL;
            rc = odf_yaml_parse_manifest_at(a, d->text, d->len, path, d->line, "DatasetSnapshot", NULL, &obj);
            if (rc == 0) {
                odf_DatasetSnapshot *s = obj;
                src = s->metadata.items;
                count = s->metadata.n;
            }
        } else if (d->kind && strcmp(d->kind, "MetadataBlock") == 0) {
            rc = silt_err(SILT_EINVAL, "%s:%d: kind: a MetadataBlock cannot be appended; give its event",
                          path, d->line);
        } else {
            rc = odf_yaml_parse_event_at(a, d->text, d->len, path, d->line, &one);
            src = &one;
        }
        for (size_t j = 0; rc == 0 && j < count; j++) {
            if (src[j].type == ODF_MetadataEvent_Seed) {
                rc = silt_err(SILT_EINVAL, "%s:%d: a Seed event cannot be appended", path, d->line);
                break;
            }
            if (n == cap) {
                cap = cap ? cap * 2 : 8;
                odf_union *ne = realloc(events, cap * sizeof *ne);
                if (!ne) {
                    rc = silt_err(SILT_ENOMEM, "%s: out of memory", path);
                    break;
                }
                events = ne;
            }
            events[n++] = src[j];
        }
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = silt_ds_resolve_events(ds->ws, ds->name, ds->id, &events[i], 1, a);
        if (rc < 0)
            silt_err_context(rc, "%s: event %zu (%s)", path, i + 1, silt_ds_event_kind_name(events[i].type));
    }
    size_t appended = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = silt_ds_append_event(ds, &events[i], NULL);
        if (rc < 0)
            silt_err_context(rc, "%s: event %zu (%s)", path, i + 1, silt_ds_event_kind_name(events[i].type));
        else
            appended++;
    }
    free(events);
    silt_arena_free(a);
    silt_buf_free(&text);
    return rc < 0 ? rc : (int)appended;
}
