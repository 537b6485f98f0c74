/* branch.c — branches of a dataset: create, list, delete.
 *
 * A branch is the ref refs/branches/<name> (master is refs/head); it shares
 * every block up to the one it was created from with its parent, so its
 * views include the parent's transactions before the fork.
 * Invariants: creation is a compare-and-swap from "absent" (two creators:
 * one wins, the other gets SILT_EEXISTS); deletion happens under the
 * branch's transaction lock after checking that no transaction is OPEN
 * there, and only removes the ref (blocks stay; they may be shared) and its
 * summary cache.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "dataset/files.h"
#include "dataset/txn.h"
#include "util/error.h"
#include "util/fsutil.h"

int silt_branch_create(silt_dataset *ds, const char *branch, const char *from_branch, const char *at_rid)
{
    if (!branch || !silt_store_valid_branch_name(branch))
        return silt_err(SILT_EINVAL, "invalid branch name '%s': use [A-Za-z0-9._-], 1..100 chars, not starting "
                                     "with '.' or '-'",
                        branch ? branch : "");
    if (strcmp(branch, "master") == 0 || strcmp(branch, "head") == 0)
        return silt_err(SILT_EEXISTS, "branch %s of %s already exists", branch, ds->name);
    if (from_branch && at_rid)
        return silt_err(SILT_EINVAL, "branch create: give either --from or --at, not both");
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
    if (!rc) {
        char text[SILT_MH_TEXT_LEN + 1], ref[128];
        silt_multihash_to_text(head, SILT_MH_LEN, text);
        snprintf(ref, sizeof ref, "branches/%s", branch);
        rc = silt_store_ref_cas(ds->store, ref, NULL, text);
        if (rc == SILT_ECONFLICT)
            rc = silt_err(SILT_EEXISTS, "branch %s of %s already exists", branch, ds->name);
    }
    silt_dataset_free(src);
    return rc;
}

static int cmp_branch(const void *a, const void *b)
{
    const silt_branch_info *x = a, *y = b;
    if (strcmp(x->name, "master") == 0)
        return -1;
    if (strcmp(y->name, "master") == 0)
        return 1;
    return strcmp(x->name, y->name);
}

int silt_branch_list(silt_branch_info **out, size_t *n_out, silt_dataset *ds)
{
    *out = NULL;
    *n_out = 0;
    char *dir = silt_path_join(ds->dir, "refs", "branches", NULL);
    if (!dir)
        return silt_err(SILT_ENOMEM, "out of memory");
    size_t n = 0, cap = 8;
    silt_branch_info *v = calloc(cap, sizeof *v);
    int rc = v ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    if (!rc) {
        snprintf(v[n++].name, sizeof v->name, "master");
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && !rc && (e = readdir(d)) != NULL) {
            if (!silt_store_valid_branch_name(e->d_name))
                continue;
            if (n == cap) {
                cap *= 2;
                silt_branch_info *nv = realloc(v, cap * sizeof *nv);
                if (!nv) {
                    rc = silt_err(SILT_ENOMEM, "out of memory");
                    break;
                }
                v = nv;
            }
            memset(&v[n], 0, sizeof v[n]);
            memcpy(v[n++].name, e->d_name, strlen(e->d_name) + 1); /* valid names are <= 100 chars */
        }
        if (d)
            closedir(d);
    }
    free(dir);
    for (size_t i = 0; !rc && i < n; i++) {
        silt_dataset *b = NULL;
        rc = silt_ds_open_dir(&b, ds->ws, ds->dir, v[i].name);
        if (rc == SILT_ENOTFOUND) { /* deleted meanwhile */
            silt_err_clear();
            rc = 0;
            v[i].name[0] = '\0';
            continue;
        }
        if (!rc) {
            snprintf(v[i].head, sizeof v[i].head, "%s", b->head);
            v[i].num_blocks = b->st.empty ? 0 : b->st.seq + 1;
            rc = silt_txn_open_on_branch(ds, v[i].name, v[i].open_txn);
        }
        silt_dataset_free(b);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (v && v[i].name[0])
            v[k++] = v[i];
    if (rc) {
        free(v);
        return rc;
    }
    qsort(v, k, sizeof *v, cmp_branch);
    *out = v;
    *n_out = k;
    return 0;
}

int silt_branch_delete(silt_dataset *ds, const char *branch)
{
    if (!branch || strcmp(branch, "master") == 0)
        return silt_err(SILT_EINVAL, "branch master of %s cannot be deleted", ds->name);
    if (!silt_store_valid_branch_name(branch))
        return silt_err(SILT_EINVAL, "invalid branch name '%s'", branch);
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
        rc = ds->store->ops->ref_delete(ds->store, ref, NULL);
    if (!rc) {
        /* the summary cache of that ref is garbage now (a new branch of the
         * same name must not start from it) */
        char file[160];
        snprintf(file, sizeof file, "%s.json", branch);
        char *sp = silt_path_join(ds->dir, "summary", "branches", file, NULL);
        if (sp)
            unlink(sp);
        free(sp);
    }
    silt_txn_unlock_branch(fd);
    return rc;
}
