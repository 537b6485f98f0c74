/* retention.c — retention policies and marks of a dataset (silt.h
 * "retention and garbage collection"; formats in retention.h).
 *
 * Invariants:
 *  - every read-modify-write of info/retention.json, info/marks.json and
 *    info/purged.json happens under the flock of info/retention.lock and
 *    replaces the file atomically (temp + fsync + rename), so a crash leaves
 *    the old or the new content;
 *  - marking never touches data: it only computes, from a gc scan, which
 *    committed transactions are in no retained view and stores them; a
 *    transaction unmarked by hand is "held" and never marked again;
 *  - a mark whose transaction is already recorded as purged is not listed.
 */
#include "ops/retention.h"
#include "files/purged.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

int silt_retention_lock(silt_dataset *ds) { return silt_ds_info_lock(ds, "retention.lock"); }

void silt_retention_unlock(int fd) { silt_fs_unlock(fd); }

int silt_retention_keep_days(const json_t *policies, const char *branch, int64_t *days)
{
    int found = 0;
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(policies, "policies"), i, p)
    {
        const char *b = json_string_value(json_object_get(p, "branch"));
        json_t *d = json_object_get(p, "keepDays");
        if (!json_is_integer(d))
            continue;
        if (b && branch && strcmp(b, branch) == 0) {
            *days = json_integer_value(d);
            return 1; /* the branch's own policy wins */
        }
        if (!b) {
            *days = json_integer_value(d);
            found = 1;
        }
    }
    return found;
}

int silt_retention_set(silt_dataset *ds, const char *branch, int64_t keep_days)
{
    if (keep_days < 0 || keep_days > 1000000)
        return silt_err(SILT_EINVAL, "retention of %s: --keep-days must be 0..1000000, got %lld", ds->name,
                        (long long)keep_days);
    if (branch && !silt_store_valid_branch_name(branch))
        return silt_err(SILT_EINVAL, "retention of %s: invalid branch name '%s'", ds->name, branch);
    int fd = silt_retention_lock(ds);
    if (fd < 0)
        return fd;
    json_t *j = NULL;
    int rc = silt_ds_info_load(ds, "retention.json", &j);
    json_t *arr = rc ? NULL : json_object_get(j, "policies");
    if (!rc && !json_is_array(arr)) {
        arr = json_array();
        if (!arr || json_object_set_new(j, "policies", arr))
            rc = silt_err(SILT_ENOMEM, "out of memory");
    }
    size_t i;
    json_t *p;
    bool done = false;
    if (!rc)
        json_array_foreach(arr, i, p)
        {
            const char *b = json_string_value(json_object_get(p, "branch"));
            if ((b && branch && strcmp(b, branch) == 0) || (!b && !branch)) {
                json_object_set_new(p, "keepDays", json_integer(keep_days));
                done = true;
            }
        }
    if (!rc && !done) {
        json_t *np = json_pack("{s:o,s:I}", "branch", branch ? json_string(branch) : json_null(), "keepDays",
                               (json_int_t)keep_days);
        if (!np || json_array_append_new(arr, np))
            rc = silt_err(SILT_ENOMEM, "out of memory");
    }
    if (!rc)
        rc = silt_ds_info_save(ds, "retention.json", j);
    json_decref(j);
    silt_retention_unlock(fd);
    return rc;
}

static int cmp_policy(const void *a, const void *b)
{
    const silt_retention_policy *x = a, *y = b;
    return strcmp(x->branch, y->branch); /* "" (the default) first */
}

int silt_retention_get(silt_retention_policy **out, size_t *n, silt_dataset *ds)
{
    *out = NULL;
    *n = 0;
    json_t *j = NULL;
    int rc = silt_ds_info_load(ds, "retention.json", &j);
    if (rc)
        return rc;
    json_t *arr = json_object_get(j, "policies");
    size_t cnt = json_array_size(arr);
    silt_retention_policy *v = cnt ? calloc(cnt, sizeof *v) : NULL;
    if (cnt && !v) {
        json_decref(j);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    size_t k = 0, i;
    json_t *p;
    json_array_foreach(arr, i, p)
    {
        json_t *d = json_object_get(p, "keepDays");
        if (!json_is_integer(d))
            continue;
        const char *b = json_string_value(json_object_get(p, "branch"));
        snprintf(v[k].branch, sizeof v[k].branch, "%s", b ? b : "");
        v[k].keep_days = json_integer_value(d);
        k++;
    }
    json_decref(j);
    if (k > 1)
        qsort(v, k, sizeof *v, cmp_policy);
    *out = v;
    *n = k;
    return 0;
}

/* ---- marks ------------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void mark_from_json(silt_retention_mark *m, const json_t *o)
{
    memset(m, 0, sizeof *m);
    snprintf(m->rid, sizeof m->rid, "%s", jstr(o, "rid"));
    snprintf(m->branch, sizeof m->branch, "%s", jstr(o, "branch"));
    snprintf(m->committed, sizeof m->committed, "%s", jstr(o, "committed"));
    snprintf(m->marked, sizeof m->marked, "%s", jstr(o, "marked"));
    m->num_files = (uint64_t)json_integer_value(json_object_get(o, "files"));
    m->bytes = (uint64_t)json_integer_value(json_object_get(o, "bytes"));
}

/* Sorting: by commit time, then by the order the marks were recorded in
 * (chain order), so transactions committed within one millisecond keep
 * the order they were committed in. */
typedef struct {
    silt_retention_mark m;
    size_t seq;
} seq_mark;

static int cmp_mark(const void *a, const void *b)
{
    const seq_mark *x = a, *y = b;
    int c = strcmp(x->m.committed, y->m.committed);
    return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Marks of `marks` (JSON) not recorded as purged in `purged`, sorted. */
static int marks_out(silt_retention_mark **out, size_t *n, const json_t *marks, const json_t *purged)
{
    *out = NULL;
    *n = 0;
    json_t *arr = json_object_get(marks, "marks");
    json_t *ptx = json_object_get(purged, "transactions");
    size_t cnt = json_array_size(arr);
    if (cnt == 0)
        return 0;
    seq_mark *sv = calloc(cnt, sizeof *sv);
    silt_retention_mark *v = calloc(cnt, sizeof *v);
    if (!sv || !v) {
        free(sv);
        free(v);
        return silt_err(SILT_ENOMEM, "out of memory");
    }
    size_t k = 0, i;
    json_t *o;
    json_array_foreach(arr, i, o)
    {
        const char *rid = json_string_value(json_object_get(o, "rid"));
        if (!rid || json_object_get(ptx, rid))
            continue;
        mark_from_json(&sv[k].m, o);
        sv[k].seq = k;
        k++;
    }
    if (k > 1)
        qsort(sv, k, sizeof *sv, cmp_mark);
    for (i = 0; i < k; i++)
        v[i] = sv[i].m;
    free(sv);
    if (k == 0) {
        free(v);
        v = NULL;
    }
    *out = v;
    *n = k;
    return 0;
}

/* Implemented in gc.c: marking under the retention lock (fd held). */
int silt_gc_mark_locked(silt_dataset *ds, bool dry_run, json_t **marks_out, json_t **purged_out,
                        silt_gc_scan **scan_out);

int silt_retention_apply(silt_retention_mark **out, size_t *n, silt_dataset *ds, bool dry_run)
{
    *out = NULL;
    *n = 0;
    int fd = silt_retention_lock(ds);
    if (fd < 0)
        return fd;
    json_t *marks = NULL, *purged = NULL;
    int rc = silt_gc_mark_locked(ds, dry_run, &marks, &purged, NULL);
    if (!rc)
        rc = marks_out(out, n, marks, purged);
    json_decref(marks);
    json_decref(purged);
    silt_retention_unlock(fd);
    return rc;
}

int silt_retention_marks(silt_retention_mark **out, size_t *n, silt_dataset *ds)
{
    *out = NULL;
    *n = 0;
    json_t *marks = NULL, *purged = NULL;
    int rc = silt_ds_info_load(ds, "marks.json", &marks);
    if (!rc)
        rc = silt_purge_record_load(ds, &purged);
    if (!rc)
        rc = marks_out(out, n, marks, purged);
    json_decref(marks);
    json_decref(purged);
    return rc;
}

int silt_retention_unmark(silt_dataset *ds, const char *rid)
{
    int fd = silt_retention_lock(ds);
    if (fd < 0)
        return fd;
    json_t *marks = NULL, *purged = NULL;
    int rc = silt_ds_info_load(ds, "marks.json", &marks);
    if (!rc)
        rc = silt_purge_record_load(ds, &purged);
    json_t *arr = rc ? NULL : json_object_get(marks, "marks");
    json_t *held = rc ? NULL : json_object_get(marks, "held");
    if (!rc && !json_is_array(held)) {
        held = json_array();
        if (!held || json_object_set_new(marks, "held", held))
            rc = silt_err(SILT_ENOMEM, "out of memory");
    }
    json_t *ptx = rc ? NULL : json_object_get(purged, "transactions");
    int count = 0;
    for (size_t i = 0; !rc && i < json_array_size(arr);) {
        const char *r = json_string_value(json_object_get(json_array_get(arr, i), "rid"));
        if (r && (!rid || strcmp(r, rid) == 0) && !json_object_get(ptx, r)) {
            if (json_array_append_new(held, json_string(r))) {
                rc = silt_err(SILT_ENOMEM, "out of memory");
                break;
            }
            json_array_remove(arr, i);
            count++;
        } else {
            i++;
        }
    }
    if (!rc && rid && count == 0) {
        if (json_object_get(ptx, rid))
            rc = silt_err(SILT_EINVAL, "transaction %s of %s was already swept by gc (purged by retention)", rid,
                          silt_ds_label(ds));
        else
            rc = silt_err(SILT_ENOTFOUND, "transaction %s is not marked in %s", rid, silt_ds_label(ds));
    }
    if (!rc && count)
        rc = silt_ds_info_save(ds, "marks.json", marks);
    json_decref(marks);
    json_decref(purged);
    silt_retention_unlock(fd);
    return rc ? rc : count;
}
