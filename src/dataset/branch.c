/* branch.c — the refs of a dataset's branches: create, list, delete.
 *
 * A branch is the ref refs/branches/<name> (master is refs/head); it shares
 * every block up to the one it was created from with its parent.
 * Invariants: creation is a compare-and-swap from "absent" (two creators:
 * one wins, the other gets SILT_EEXISTS); deletion only removes the ref
 * (blocks stay; they may be shared) and its summary cache. What a branch
 * means for transactions (an OPEN transaction pins it) is decided above,
 * in src/files/branches.c, which implements the public silt_branch_* API.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "util/error.h"
#include "util/fsutil.h"

int silt_ds_branch_create(silt_dataset *ds, const char *branch, const uint8_t head[SILT_MH_LEN])
{
    if (!branch || !silt_store_valid_branch_name(branch))
        return silt_err(SILT_EINVAL, "invalid branch name '%s': use [A-Za-z0-9._-], 1..100 chars, not starting "
                                     "with '.' or '-'",
                        branch ? branch : "");
    if (strcmp(branch, "master") == 0 || strcmp(branch, "head") == 0)
        return silt_err(SILT_EEXISTS, "branch %s of %s already exists", branch, ds->name);
    char text[SILT_MH_TEXT_LEN + 1], ref[128];
    silt_multihash_to_text(head, SILT_MH_LEN, text);
    snprintf(ref, sizeof ref, "branches/%s", branch);
    int rc = silt_store_ref_cas(ds->store, ref, NULL, text);
    if (rc == SILT_ECONFLICT)
        rc = silt_err(SILT_EEXISTS, "branch %s of %s already exists", branch, ds->name);
    return rc;
}

static int cmp_branch(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    if (strcmp(x, "master") == 0)
        return -1;
    if (strcmp(y, "master") == 0)
        return 1;
    return strcmp(x, y);
}

int silt_ds_branch_names(char ***out, silt_dataset *ds)
{
    *out = NULL;
    char *dir = silt_path_join(ds->dir, "refs", "branches", NULL);
    size_t n = 0, cap = 8;
    char **v = calloc(cap + 1, sizeof *v);
    int rc = dir && v ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    if (!rc && !(v[n++] = strdup("master")))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    DIR *d = rc ? NULL : opendir(dir);
    struct dirent *e;
    while (d && !rc && (e = readdir(d)) != NULL) {
        if (!silt_store_valid_branch_name(e->d_name))
            continue;
        if (n == cap) {
            char **nv = realloc(v, (2 * cap + 1) * sizeof *nv);
            if (!nv) {
                rc = silt_err(SILT_ENOMEM, "out of memory");
                break;
            }
            v = nv;
            cap *= 2;
        }
        v[n] = NULL;
        if (!(v[n++] = strdup(e->d_name)))
            rc = silt_err(SILT_ENOMEM, "out of memory");
    }
    if (d)
        closedir(d);
    free(dir);
    if (v)
        v[n] = NULL;
    if (rc) {
        silt_strv_free(v);
        return rc;
    }
    qsort(v, n, sizeof *v, cmp_branch);
    *out = v;
    return (int)n;
}

int silt_ds_branch_delete(silt_dataset *ds, const char *branch)
{
    if (!branch || strcmp(branch, "master") == 0)
        return silt_err(SILT_EINVAL, "branch master of %s cannot be deleted", ds->name);
    if (!silt_store_valid_branch_name(branch))
        return silt_err(SILT_EINVAL, "invalid branch name '%s'", branch);
    char ref[128];
    snprintf(ref, sizeof ref, "branches/%s", branch);
    int rc = ds->store->ops->ref_delete(ds->store, ref, NULL);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "dataset '%s' has no branch '%s'", ds->name, branch);
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
    return rc;
}
