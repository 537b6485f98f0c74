/* info.c — JSON records in a dataset's info/ directory (see info.h).
 * Invariants: a record is only ever replaced atomically, so a crash leaves
 * the old or the new content; a missing record reads as an empty object.
 * In a long-running process a record's text (or its absence) comes from the
 * stat cache (statcache.c) while the file stats as when it was read: a
 * replacement by rename gives it a new inode, creating it makes it stat. */
#include "dataset/info.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dataset/dataset_internal.h"

#include "util/error.h"
#include "util/fsutil.h"

static int info_lock(silt_dataset *ds, const char *name, bool exclusive);

/* silt_fs_read of a record, through the stat cache (see the head comment).
 * A text holding a NUL byte is not cached (the cache keeps C strings). A
 * record known to be absent is SILT_ENOTFOUND without a message (its only
 * caller reads that as an empty object; formatting one cost a vsnprintf
 * per request). */
static int read_cached(const char *p, silt_buf *b)
{
    if (!silt_process_caches_on())
        return silt_fs_read(p, b);
    silt_stat_id ids[SILT_STAT_IDS] = {{0}};
    bool present = silt_stat_id_of(p, &ids[0]) == 0;
    if (present ? !S_ISREG(ids[0].mode) : errno != ENOENT)
        return silt_fs_read(p, b);
    char *hit = silt_statcache_get('i', p, ids);
    if (hit) {
        int rc = present ? silt_buf_append(b, hit, strlen(hit)) : SILT_ENOTFOUND;
        free(hit);
        return rc;
    }
    int rc = silt_fs_read(p, b);
    if (rc == 0 && present && (!b->len || !memchr(b->data, 0, b->len)))
        silt_statcache_put('i', p, ids, b->data ? b->data : "");
    else if (rc == SILT_ENOTFOUND && !present)
        silt_statcache_put('i', p, ids, "");
    return rc;
}

int silt_ds_info_load(silt_dataset *ds, const char *name, json_t **out)
{
    *out = NULL;
    char *p = silt_path_join(ds->dir, "info", name, NULL);
    if (!p)
        return silt_err(SILT_ENOMEM, "out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = read_cached(p, &b);
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
