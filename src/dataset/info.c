/* info.c — JSON records in a dataset's info/ directory (see info.h).
 * Invariants: a record is only ever replaced atomically, so a crash leaves
 * the old or the new content; a missing record reads as an empty object. */
#include "dataset/info.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/fsutil.h"

static int info_lock(silt_dataset *ds, const char *name, bool exclusive);

int silt_ds_info_load(silt_dataset *ds, const char *name, json_t **out)
{
    *out = NULL;
    char *p = silt_path_join(ds->dir, "info", name, NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(p, &b);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        *out = json_object();
        rc = *out ? 0 : silt_err(SILT_ENOMEM, "out of memory");
    } else if (!rc) {
        json_error_t je;
        json_t *j = json_loadb(b.data ? b.data : "", b.len, 0, &je);
        if (!j || !json_is_object(j)) {
            json_decref(j);
            rc = silt_err(SILT_ECORRUPT, "%s: not a JSON object (line %d: %s)", p, je.line, j ? "" : je.text);
        } else {
            *out = j;
        }
    }
    silt_buf_free(&b);
    free(p);
    return rc;
}

int silt_ds_info_save(silt_dataset *ds, const char *name, const json_t *j)
{
    char *dir = silt_path_join(ds->dir, "info", NULL);
    char *p = silt_path_join(ds->dir, "info", name, NULL);
    char *t = j ? json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    int rc = dir && p && t ? silt_fs_mkdirs(dir) : silt_err(SILT_ENOMEM, "out of memory");
    if (!rc)
        rc = silt_fs_write_atomic(p, t, strlen(t), false);
    free(t);
    free(p);
    free(dir);
    return rc;
}

int silt_ds_roots_lock(silt_dataset *ds, bool exclusive) { return info_lock(ds, "roots.lock", exclusive); }

int silt_ds_info_lock(silt_dataset *ds, const char *name) { return info_lock(ds, name, true); }

static int info_lock(silt_dataset *ds, const char *name, bool exclusive)
{
    char *dir = silt_path_join(ds->dir, "info", NULL);
    char *p = silt_path_join(ds->dir, "info", name, NULL);
    int fd = dir && p ? silt_fs_mkdirs(dir) : silt_err(SILT_ENOMEM, "out of memory");
    if (fd == 0)
        fd = silt_fs_lock(p, exclusive);
    free(dir);
    free(p);
    return fd;
}
