/* branches.c — the public branch API (silt_branch_create/list/delete) for
 * every kind of dataset, with what transactions add to the refs of
 * src/dataset/branch.c: `--at RID` resolves a committed transaction to its
 * AddData block, a branch shows its OPEN transaction, and a branch with an
 * OPEN transaction cannot be deleted.
 * Invariants: creation holds the dataset's roots lock shared (gc holds it
 * exclusive), and a branch is never created at a transaction whose view
 * lost files to retention; deletion happens under the branch's transaction lock after
 * checking that no transaction is OPEN there, so a transaction never loses
 * its branch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "dataset/info.h"
#include "files/files.h"
#include "files/txn.h"
#include "util/error.h"
#include "util/fsutil.h"

static int require_complete_view(silt_dataset *src, const char *rid);
static int branch_create_locked(silt_dataset *ds, const char *branch, const char *from_branch, const char *at_rid);

/* Creates the branch under the shared roots lock, so that a running gc
 * (which holds it exclusive) either sees the new branch or finishes first. */
int silt_branch_create(silt_dataset *ds, const char *branch, const char *from_branch, const char *at_rid)
{
    if (from_branch && at_rid)
        return silt_err(SILT_EINVAL, "branch create: give either --from or --at, not both");
    int lock = silt_ds_roots_lock(ds, false);
    if (lock < 0)
        return lock;
    int rc = branch_create_locked(ds, branch, from_branch, at_rid);
    silt_fs_unlock(lock);
    return rc;
}

static int branch_create_locked(silt_dataset *ds, const char *branch, const char *from_branch, const char *at_rid)
{
    silt_dataset *src = NULL;
    int rc = silt_ds_open_dir(&src, ds->ws, ds->dir, from_branch ? from_branch : ds->branch);
    if (rc)
        return rc;
    uint8_t head[SILT_MH_LEN];
    memcpy(head, src->st.head, SILT_MH_LEN);
    if (at_rid) {
        int f = silt_files_find_commit(src, at_rid, -1, head);
        if (f == 0)
            rc = silt_err(SILT_ENOTFOUND, "transaction %s is not committed on branch %s of %s", at_rid, src->branch,
                          ds->name);
        else if (f < 0)
            rc = f;
    }
    if (!rc && at_rid)
        rc = require_complete_view(src, at_rid);
    if (!rc)
        rc = silt_ds_branch_create(ds, branch, head);
    silt_dataset_free(src);
    return rc;
}

/* The view as of `rid` must still have all its bytes: a branch there would
 * start with files that retention purged. */
static int require_complete_view(silt_dataset *src, const char *rid)
{
    silt_view *v = NULL;
    silt_view_spec spec = {rid, NULL, NULL};
    int rc = silt_view_get(&v, src, &spec);
    for (size_t i = 0; !rc && i < silt_view_count(v); i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        char prid[64];
        int p = silt_files_purged(prid, src, e->content_hash);
        if (p == 1)
            rc = silt_err(SILT_EINVAL,
                          "cannot branch at transaction %s of %s: its view has files purged by retention "
                          "('%s', transaction %s); branch at a later transaction",
                          rid, src->name, e->path, prid);
        else if (p < 0)
            rc = p;
    }
    silt_view_free(v);
    return rc;
}

int silt_branch_list(silt_branch_info **out, size_t *n_out, silt_dataset *ds)
{
    *out = NULL;
    *n_out = 0;
    char **names = NULL;
    int rc = silt_ds_branch_names(&names, ds);
    if (rc < 0)
        return rc;
    size_t n = (size_t)rc, k = 0;
    silt_branch_info *v = calloc(n ? n : 1, sizeof *v);
    rc = v ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < n; i++) {
        silt_dataset *b = NULL;
        rc = silt_ds_open_dir(&b, ds->ws, ds->dir, names[i]);
        if (rc == SILT_ENOTFOUND) { /* deleted meanwhile */
            silt_err_clear();
            rc = 0;
            continue;
        }
        silt_branch_info *bi = &v[k];
        if (!rc) {
            snprintf(bi->name, sizeof bi->name, "%s", names[i]);
            snprintf(bi->head, sizeof bi->head, "%s", b->head);
            bi->num_blocks = b->st.empty ? 0 : b->st.seq + 1;
            rc = silt_txn_open_on_branch(ds, names[i], bi->open_txn);
        }
        if (!rc)
            k++;
        silt_dataset_free(b);
    }
    silt_strv_free(names);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n_out = k;
    return 0;
}

int silt_branch_delete(silt_dataset *ds, const char *branch)
{
    if (!branch || strcmp(branch, "master") == 0 || !silt_store_valid_branch_name(branch))
        return silt_ds_branch_delete(ds, branch); /* the refs layer words the error */
    char ref[128];
    snprintf(ref, sizeof ref, "branches/%s", branch);
    silt_buf cur = SILT_BUF_INIT;
    int rc = silt_store_ref_read(ds->store, ref, &cur);
    silt_buf_free(&cur);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "dataset '%s' has no branch '%s'", ds->name, branch);
    if (rc)
        return rc;
    int fd = silt_txn_lock_branch(ds, branch);
    if (fd < 0)
        return fd;
    char open_rid[64];
    rc = silt_txn_open_on_branch(ds, branch, open_rid);
    if (!rc && open_rid[0])
        rc = silt_err(SILT_ECONFLICT, "branch %s of %s has an open transaction %s; commit or abort it first",
                      branch, ds->name, open_rid);
    if (!rc)
        rc = silt_ds_branch_delete(ds, branch);
    silt_txn_unlock_branch(fd);
    return rc;
}

/* The newest block of ds's branch that precedes every AddData (the files
 * SetDataSchema of a files dataset; the head when there is no AddData). */
static int before_first_add_data(silt_dataset *ds, uint8_t out[SILT_MH_LEN])
{
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    memcpy(out, ds->st.head, SILT_MH_LEN);
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "out of memory");
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, ds->st.head, SILT_MH_LEN);
    while (!rc) {
        odf_MetadataBlock *b = NULL;
        rc = silt_ds_load_block(ds, cur, a, &b);
        if (rc || b->prev_block_hash.len != SILT_MH_LEN)
            break;
        if (b->event.type == ODF_MetadataEvent_AddData)
            memcpy(out, b->prev_block_hash.data, SILT_MH_LEN);
        memcpy(cur, b->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

int silt_branch_create_empty(silt_dataset *ds, const char *branch)
{
    int rc = silt_files_require(ds);
    if (rc)
        return rc;
    int lock = silt_ds_roots_lock(ds, false);
    if (lock < 0)
        return lock;
    uint8_t at[SILT_MH_LEN];
    rc = before_first_add_data(ds, at);
    if (!rc)
        rc = silt_ds_branch_create(ds, branch, at);
    silt_fs_unlock(lock);
    return rc;
}
