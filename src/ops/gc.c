/* gc.c — marking and sweeping of a dataset's objects (`silt retention
 * mark`, `silt gc`) and the writing of the purge record (see retention.h,
 * silt.h, docs/datasets.md). With retention.c, the only code that deletes
 * objects of a dataset.
 *
 * Reachability (computed over EVERY branch of the dataset):
 *  - chain objects: every newData slice and newCheckpoint of every block of
 *    every branch (slices of files datasets are the rows of their views, so
 *    they are never purged); blocks are never deleted;
 *  - retained views of files datasets: the latest view of every branch, the
 *    view as of every transaction committed within keep-days on a branch
 *    with a policy; on a branch without any policy every view is retained;
 *    the base of an OPEN transaction is its branch's latest view;
 *  - objects staged by transactions that are not closed (txn/<rid>.staged);
 *  - objects written by any transaction that is not being swept.
 * A transaction is swept only when it is marked (in no retained view) and
 * re-checked under the locks; its objects that are reachable otherwise stay.
 *
 * Crash safety (SIGKILL at any moment): the purge record (info/purged.json)
 * names every object before it is unlinked, so a missing object is either
 * recorded (purged) or corruption; unlinking is idempotent and a re-run
 * finishes an interrupted sweep. Unreferenced objects and .tmp-* leftovers
 * are only deleted once older than the grace period, so a concurrent writer
 * between writing its object and publishing its block is never robbed.
 * Concurrency: gc holds the dataset's retention lock and the transaction
 * lock of every branch (commits and puts' journal appends wait).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dataset/data_views.h"
#include "dataset/info.h"
#include "files/files.h"
#include "ops/retention.h"
#include "files/purged.h"
#include "files/txn.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/scratch.h"
#include "util/timeutil.h"

#define TXN_KEY "silt.dev/transaction"

struct silt_gc_scan {
    silt_dataset *ds;
    bool files;
    int64_t now_ms;
    json_t *chain_data; /* mh -> true: slices of every branch */
    json_t *chain_cp;   /* mh -> true: checkpoints of every branch */
    json_t *keep;       /* mh -> true: objects of retained views and staged objects */
    json_t *rids;       /* rid -> {objects:{mh:path}, files, bytes, branch, committed} */
    json_t *retained;   /* rid -> true */
};

static int oom(void) { return silt_err(SILT_ENOMEM, "out of memory"); }

void silt_gc_scan_free(silt_gc_scan *s)
{
    if (!s)
        return;
    json_decref(s->chain_data);
    json_decref(s->chain_cp);
    json_decref(s->keep);
    json_decref(s->rids);
    json_decref(s->retained);
    free(s);
}

static int set_true(json_t *o, const char *key)
{
    return json_object_set_new(o, key, json_true()) ? oom() : 0;
}

static void mh_text(const uint8_t *mh, char *out) { silt_multihash_to_text(mh, SILT_MH_LEN, out); }

/* rid of an AddData's transaction attribute into rid (64 bytes) or "". */
static void txn_rid(const odf_AddData *ad, char *rid)
{
    rid[0] = '\0';
    if (!ad->extra || !ad->extra->entries || !strstr(ad->extra->entries, TXN_KEY))
        return;
    json_t *j = json_loads(ad->extra->entries, 0, NULL);
    const char *r = json_string_value(json_object_get(json_object_get(j, TXN_KEY), "rid"));
    if (r && strlen(r) < 64)
        snprintf(rid, 64, "%s", r);
    json_decref(j);
}

/* A committed transaction on one branch's chain. */
typedef struct btxn {
    char rid[64];
    int64_t ms;
} btxn;

typedef struct bscan {
    btxn *v;
    size_t n, cap;
} bscan;

/* Walks the chain of `b` (head to seed): slices and checkpoints into the
 * scan; (with files) the transactions into *bt. When `slices` is given, the
 * slice hashes of this chain are also added there. */
static int walk_chain(silt_gc_scan *s, silt_dataset *b, bscan *bt, json_t *slices)
{
    int rc = silt_ds_sync(b);
    if (rc)
        return rc;
    silt_arena *a = silt_arena_new();
    if (!a)
        return oom();
    uint8_t cur[SILT_MH_LEN];
    memcpy(cur, b->st.head, SILT_MH_LEN);
    while (!rc) {
        odf_MetadataBlock *blk = NULL;
        rc = silt_ds_load_block(b, cur, a, &blk);
        if (rc)
            break;
        const odf_DataSlice *nd = NULL;
        const odf_Checkpoint *cp = NULL;
        char rid[64] = "";
        if (blk->event.type == ODF_MetadataEvent_AddData) {
            const odf_AddData *ad = blk->event.value;
            nd = ad->new_data;
            cp = ad->new_checkpoint;
            txn_rid(ad, rid);
        } else if (blk->event.type == ODF_MetadataEvent_ExecuteTransform) {
            const odf_ExecuteTransform *et = blk->event.value;
            nd = et->new_data;
            cp = et->new_checkpoint;
        }
        char t[SILT_MH_TEXT_LEN + 1];
        if (nd && nd->physical_hash.len == SILT_MH_LEN) {
            mh_text(nd->physical_hash.data, t);
            rc = set_true(s->chain_data, t);
            if (!rc && slices)
                rc = set_true(slices, t);
        }
        if (!rc && cp && cp->physical_hash.len == SILT_MH_LEN) {
            mh_text(cp->physical_hash.data, t);
            rc = set_true(s->chain_cp, t);
        }
        if (!rc && rid[0] && bt) {
            if (bt->n == bt->cap) {
                size_t cap = bt->cap ? bt->cap * 2 : 32;
                btxn *nv = realloc(bt->v, cap * sizeof *nv);
                if (!nv) {
                    rc = oom();
                    break;
                }
                bt->v = nv;
                bt->cap = cap;
            }
            snprintf(bt->v[bt->n].rid, 64, "%s", rid);
            bt->v[bt->n].ms = silt_time_to_ms((silt_time){blk->system_time.sec, blk->system_time.nsec});
            bt->n++;
        }
        if (rc || blk->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(cur, blk->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

/* SQL list "['p1', 'p2']" of the data/ objects named by the keys of `set`. */
static int slice_list(silt_dataset *ds, const json_t *set, silt_buf *sql)
{
    const char *k;
    json_t *v;
    size_t i = 0;
    int rc = silt_buf_putc(sql, '[');
    json_object_foreach((json_t *)set, k, v)
    {
        silt_buf mh = SILT_BUF_INIT;
        if (rc || silt_multihash_from_text(k, &mh) || mh.len != SILT_MH_LEN) {
            silt_buf_free(&mh);
            silt_err_clear();
            continue;
        }
        char *p = silt_store_object_path(ds->store, "data", (const uint8_t *)mh.data);
        char *q = p ? silt_sql_str(p) : NULL;
        rc = q ? silt_buf_printf(sql, "%s%s", i++ ? ", " : "", q) : oom();
        free(p);
        free(q);
        silt_buf_free(&mh);
    }
    if (!rc)
        rc = silt_buf_putc(sql, ']');
    return rc ? rc : (int)i;
}

typedef struct row_ctx {
    silt_gc_scan *s;
} row_ctx;

/* One row (rid, content_hash, path, size) written by a transaction. */
static int on_row(void *ctx, size_t ncols, const char *const *names, const char *const *v)
{
    (void)names;
    silt_gc_scan *s = ((row_ctx *)ctx)->s;
    if (ncols < 4 || !v[0] || !v[1])
        return 0;
    json_t *r = json_object_get(s->rids, v[0]);
    if (!r) {
        r = json_pack("{s:{},s:I,s:I,s:s,s:I}", "objects", "files", (json_int_t)0, "bytes", (json_int_t)0,
                      "branch", "", "committed", (json_int_t)0);
        if (!r || json_object_set_new(s->rids, v[0], r))
            return oom();
    }
    json_t *objs = json_object_get(r, "objects");
    if (!json_object_get(objs, v[1]) && json_object_set_new(objs, v[1], json_string(v[2] ? v[2] : "")))
        return oom();
    json_object_set_new(r, "files", json_integer(json_integer_value(json_object_get(r, "files")) + 1));
    json_object_set_new(r, "bytes", json_integer(json_integer_value(json_object_get(r, "bytes")) +
                                                 (v[3] ? strtoll(v[3], NULL, 10) : 0)));
    return 0;
}

/* Rows written by transactions in the slices `slices` (files datasets). */
static int scan_rows(silt_gc_scan *s, const json_t *slices)
{
    if (json_object_size(slices) == 0)
        return 0;
    silt_engine *e = NULL;
    char *etmp = NULL;
    silt_buf sql = SILT_BUF_INIT;
    int rc = silt_buf_puts(&sql, "SELECT transaction_rid, content_hash, path, size FROM read_parquet(");
    if (!rc)
        rc = slice_list(s->ds, slices, &sql);
    if (rc > 0)
        rc = silt_buf_puts(&sql, ") WHERE op IN (0, 3) ORDER BY \"offset\"");
    if (!rc)
        rc = silt_ws_engine_open(s->ds->ws, &e, &etmp);
    row_ctx rx = {s};
    if (!rc)
        rc = silt_engine_query_rows(e, sql.data, on_row, &rx);
    if (rc < 0 && rc != SILT_ENOMEM)
        rc = silt_err_context(rc, "gc of %s: reading the file rows", s->ds->name);
    rc = silt_ws_engine_close(e, etmp, rc);
    silt_buf_free(&sql);
    return rc;
}

/* A view's entries: their transactions are retained, their objects kept. */
static int retain_view(silt_gc_scan *s, silt_dataset *b, const char *at)
{
    silt_view *v = NULL;
    silt_view_spec spec = {at, NULL, NULL};
    int rc = silt_view_get(&v, b, &spec);
    for (size_t i = 0; !rc && i < silt_view_count(v); i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        rc = set_true(s->retained, e->rid);
        if (!rc)
            rc = set_true(s->keep, e->content_hash);
    }
    silt_view_free(v);
    return rc;
}

/* Objects staged by one transaction unless its record is closed (a
 * committed one's rows say what it wrote; an aborted one's are garbage);
 * an unreadable record counts as open, to be safe. */
static int keep_staged(silt_gc_scan *s, const char *rid)
{
    silt_txn_info t;
    int rc = silt_txn_read_record(s->ds, rid, &t);
    silt_err_clear();
    if (rc == 0 && (t.status == SILT_TXN_COMMITTED || t.status == SILT_TXN_ABORTED))
        return 0;
    silt_buf text = SILT_BUF_INIT;
    silt_files_change *ch = NULL;
    size_t n = 0;
    rc = silt_txn_staged(s->ds, rid, &text, &ch, &n);
    if (rc == SILT_ENOMEM)
        return rc;
    for (size_t k = 0; rc == 0 && k < n; k++)
        if (!ch[k].remove)
            rc = set_true(s->keep, ch[k].content_hash);
    silt_err_clear();
    free(ch);
    silt_buf_free(&text);
    return rc == SILT_ENOMEM ? rc : 0;
}

/* Objects staged by transactions whose record is not closed. The records
 * are read directly (silt_txn_get would take the branch lock, which gc
 * already holds). */
static int scan_staged(silt_gc_scan *s)
{
    char *dir = silt_path_join(s->ds->dir, "txn", NULL);
    if (!dir)
        return oom();
    DIR *d = opendir(dir);
    int rc = 0;
    struct dirent *de;
    while (d && !rc && (de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 8 || strcmp(de->d_name + l - 7, ".staged") != 0 || l - 7 >= 64)
            continue;
        char rid[64];
        snprintf(rid, sizeof rid, "%.*s", (int)(l - 7), de->d_name);
        rc = keep_staged(s, rid);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

int silt_gc_scan_new(silt_gc_scan **out, silt_dataset *ds, int64_t now_ms, const json_t *given_policies)
{
    *out = NULL;
    silt_gc_scan *s = calloc(1, sizeof *s);
    if (!s)
        return oom();
    s->ds = ds;
    s->now_ms = now_ms;
    s->chain_data = json_object();
    s->chain_cp = json_object();
    s->keep = json_object();
    s->rids = json_object();
    s->retained = json_object();
    if (!s->chain_data || !s->chain_cp || !s->keep || !s->rids || !s->retained) {
        silt_gc_scan_free(s);
        return oom();
    }
    int rc = silt_files_is_files(ds);
    s->files = rc == 1;
    rc = rc < 0 ? rc : 0;
    silt_branch_info *br = NULL;
    size_t nbr = 0;
    json_t *policies = NULL;
    if (!rc)
        rc = silt_branch_list(&br, &nbr, ds);
    if (!rc && given_policies)
        policies = json_incref((json_t *)given_policies);
    else if (!rc)
        rc = silt_ds_info_load(ds, "retention.json", &policies);
    bscan *bt = rc ? NULL : calloc(nbr ? nbr : 1, sizeof *bt);
    json_t *slices = json_object();
    if (!rc && (!bt || !slices))
        rc = oom();
    silt_dataset **bds = rc ? NULL : calloc(nbr ? nbr : 1, sizeof *bds);
    if (!rc && !bds)
        rc = oom();
    for (size_t i = 0; !rc && i < nbr; i++) {
        rc = silt_ds_open_dir(&bds[i], ds->ws, ds->dir, br[i].name);
        if (!rc)
            rc = walk_chain(s, bds[i], s->files ? &bt[i] : NULL, slices);
    }
    if (!rc && s->files)
        rc = scan_rows(s, slices);
    for (size_t i = 0; !rc && s->files && i < nbr; i++) {
        /* branch and commit time of every transaction (the oldest wins) */
        for (size_t k = 0; k < bt[i].n; k++) {
            json_t *r = json_object_get(s->rids, bt[i].v[k].rid);
            json_int_t c = json_integer_value(json_object_get(r, "committed"));
            if (r && (c == 0 || bt[i].v[k].ms < c)) {
                json_object_set_new(r, "committed", json_integer(bt[i].v[k].ms));
                json_object_set_new(r, "branch", json_string(br[i].name));
            }
        }
        int64_t days = 0;
        if (silt_retention_keep_days(policies, br[i].name, &days) == 0) {
            for (size_t k = 0; !rc && k < bt[i].n; k++)
                rc = set_true(s->retained, bt[i].v[k].rid); /* no policy: every view is retained */
            continue;
        }
        rc = retain_view(s, bds[i], NULL); /* latest view (= base of an OPEN transaction) */
        int64_t from = now_ms - days * 86400000LL;
        for (size_t k = 0; !rc && k < bt[i].n; k++)
            if (bt[i].v[k].ms >= from && bt[i].v[k].ms <= now_ms)
                rc = retain_view(s, bds[i], bt[i].v[k].rid);
    }
    if (!rc && s->files)
        rc = scan_staged(s);
    for (size_t i = 0; bds && i < nbr; i++)
        silt_dataset_free(bds[i]);
    for (size_t i = 0; bt && i < nbr; i++)
        free(bt[i].v);
    free(bds);
    free(bt);
    free(br);
    json_decref(slices);
    json_decref(policies);
    if (rc) {
        silt_gc_scan_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

bool silt_gc_scan_knows(const silt_gc_scan *s, const char *rid)
{
    return json_integer_value(json_object_get(json_object_get(s->rids, rid), "files")) > 0;
}

bool silt_gc_scan_retained(const silt_gc_scan *s, const char *rid)
{
    return json_object_get(s->retained, rid) != NULL;
}

static bool in_array(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach((json_t *)arr, i, v)
    {
        if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
            return true;
    }
    return false;
}

static void fmt_ms(int64_t ms, char *out) { silt_time_format(silt_time_from_ms(ms), out); }

int silt_gc_scan_candidates(silt_gc_scan *s, const json_t *held, json_t **out)
{
    *out = json_array();
    if (!*out)
        return oom();
    silt_time now = silt_time_from_ms(s->now_ms);
    char marked[40];
    silt_time_format(now, marked);
    const char *rid;
    json_t *r;
    json_object_foreach(s->rids, rid, r)
    {
        if (json_integer_value(json_object_get(r, "files")) == 0 || silt_gc_scan_retained(s, rid) ||
            in_array(held, rid))
            continue;
        char committed[40];
        fmt_ms(json_integer_value(json_object_get(r, "committed")), committed);
        json_t *m = json_pack("{s:s,s:O,s:s,s:s,s:O,s:O}", "rid", rid, "branch", json_object_get(r, "branch"),
                              "committed", committed, "marked", marked, "files", json_object_get(r, "files"),
                              "bytes", json_object_get(r, "bytes"));
        if (!m || json_array_append_new(*out, m))
            return oom();
    }
    return 0;
}

/* Marking under the retention lock: loads marks and purge record, scans,
 * adds new marks, drops marks that became retained; saves unless dry_run. */
int silt_gc_mark_locked(silt_dataset *ds, bool dry_run, json_t **marks_out, json_t **purged_out,
                        silt_gc_scan **scan_out)
{
    *marks_out = *purged_out = NULL;
    if (scan_out)
        *scan_out = NULL;
    json_t *marks = NULL, *purged = NULL, *cand = NULL;
    silt_gc_scan *s = NULL;
    int rc = silt_ds_info_load(ds, "marks.json", &marks);
    if (!rc)
        rc = silt_purge_record_load(ds, &purged);
    if (!rc)
        rc = silt_gc_scan_new(&s, ds, silt_time_to_ms(silt_time_now()), NULL);
    json_t *arr = rc ? NULL : json_object_get(marks, "marks");
    if (!rc && !json_is_array(arr)) {
        arr = json_array();
        if (!arr || json_object_set_new(marks, "marks", arr))
            rc = oom();
    }
    if (!rc)
        rc = silt_gc_scan_candidates(s, json_object_get(marks, "held"), &cand);
    json_t *ptx = json_object_get(purged, "transactions");
    bool changed = false;
    /* drop marks that are retained again (e.g. a new branch) or unknown */
    for (size_t i = 0; !rc && i < json_array_size(arr);) {
        const char *r = json_string_value(json_object_get(json_array_get(arr, i), "rid"));
        if (!r || (!json_object_get(ptx, r) && (silt_gc_scan_retained(s, r) || !json_object_get(s->rids, r)))) {
            json_array_remove(arr, i);
            changed = true;
        } else {
            i++;
        }
    }
    size_t i;
    json_t *c;
    if (!rc)
        json_array_foreach(cand, i, c)
        {
            const char *r = json_string_value(json_object_get(c, "rid"));
            bool have = json_object_get(ptx, r) != NULL;
            size_t k;
            json_t *m;
            json_array_foreach(arr, k, m)
            {
                if (strcmp(json_string_value(json_object_get(m, "rid")) ? json_string_value(json_object_get(m, "rid")) : "", r) == 0)
                    have = true;
            }
            if (!have) {
                if (json_array_append(arr, c)) {
                    rc = oom();
                    break;
                }
                changed = true;
            }
        }
    if (!rc && changed && !dry_run)
        rc = silt_ds_info_save(ds, "marks.json", marks);
    json_decref(cand);
    if (rc) {
        json_decref(marks);
        json_decref(purged);
        silt_gc_scan_free(s);
        return rc;
    }
    *marks_out = marks;
    *purged_out = purged;
    if (scan_out)
        *scan_out = s;
    else
        silt_gc_scan_free(s);
    return 0;
}

/* ---- sweep ------------------------------------------------------------------- */

static int64_t grace_of(const silt_gc_opts *o)
{
    if (o && o->grace_seconds >= 0)
        return o->grace_seconds;
    const char *g = getenv("SILT_GC_GRACE_SECONDS");
    if (g && *g) {
        char *end;
        long long v = strtoll(g, &end, 10);
        if (!*end && v >= 0)
            return v;
    }
    return 3600;
}

static void say(const silt_gc_opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const silt_gc_opts *o, const char *fmt, ...)
{
    if (!o || !o->report)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    o->report(o->report_ctx, line);
}

/* Opens the directory <dataset>/<sub> for deleting inside it, following no
 * symbolic link on the way (O_NOFOLLOW at every component): gc deletes by
 * name relative to this descriptor only. *fd_out = -1 when it does not
 * exist. */
static int open_sweep_dir(silt_dataset *ds, const char *sub, int *fd_out)
{
    *fd_out = -1;
    int fd = open(ds->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    char comp[64];
    const char *p = sub;
    while (fd >= 0 && *p) {
        size_t n = strcspn(p, "/");
        snprintf(comp, sizeof comp, "%.*s", (int)n, p);
        int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(fd);
        fd = nfd;
        errno = e;
        p += n;
        if (*p == '/')
            p++;
    }
    if (fd >= 0) {
        *fd_out = fd;
        return 0;
    }
    if (errno == ENOENT)
        return 0;
    if (errno == ELOOP || errno == ENOTDIR)
        return silt_err(SILT_ECORRUPT,
                        "gc of %s: %s/%s is a symbolic link or not a directory; gc never follows symbolic links "
                        "(replace it with a real directory)",
                        ds->name, ds->dir, sub);
    return silt_err(SILT_EIO, "gc of %s: %s/%s: %s", ds->name, ds->dir, sub, strerror(errno));
}

/* Reports the sweep's counters (entries looked at, objects deleted). */
static void gc_tick(const silt_gc_opts *o, silt_gc_result *res)
{
    res->objects_scanned++;
    if (!o || !o->progress)
        return;
    silt_progress p = {.phase = "gc",
                       .unit = "objects",
                       .done = res->objects_scanned,
                       .bytes = res->bytes_deleted,
                       .removed = res->objects_deleted + res->leftovers_deleted};
    (void)o->progress(o->progress_ctx, &p); /* gc is not cancelled: re-running completes a sweep anyway */
}

/* Is the entry older than the grace period? (missing: no) */
static bool old_enough(int dfd, const char *name, int64_t grace, uint64_t *size)
{
    struct stat st;
    if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return false;
    if (size)
        *size = (uint64_t)st.st_size;
    return (int64_t)time(NULL) - (int64_t)st.st_mtime >= grace;
}

static int unlink_obj(int dfd, const char *sub, const char *name)
{
    if (unlinkat(dfd, name, 0) != 0 && errno != ENOENT)
        return silt_err(SILT_EIO, "gc: cannot delete %s/%s: %s", sub, name, strerror(errno));
    return 0;
}

/* Calls fn(dfd, name) for every entry of <dataset>/<sub>; then fsyncs it
 * when something was deleted. */
typedef int (*sweep_fn)(void *ctx, int dfd, const char *name);
static int sweep_dir(silt_dataset *ds, const char *sub, sweep_fn fn, void *ctx, bool dry)
{
    int dfd;
    int rc = open_sweep_dir(ds, sub, &dfd);
    if (rc || dfd < 0)
        return rc;
    int lfd = dup(dfd);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        if (lfd >= 0)
            close(lfd);
        close(dfd);
        return silt_err(SILT_EIO, "gc of %s: cannot list %s/: %s", ds->name, sub, strerror(errno));
    }
    struct dirent *de;
    while (!rc && (de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
            rc = fn(ctx, dfd, de->d_name);
    closedir(d);
    if (!rc && !dry)
        fsync(dfd);
    close(dfd);
    return rc;
}

typedef struct tmp_ctx {
    const char *sub;
    int64_t grace;
    const silt_gc_opts *o;
    silt_gc_result *res;
} tmp_ctx;

static int tmp_entry(void *ctx, int dfd, const char *name)
{
    tmp_ctx *t = ctx;
    if (strncmp(name, ".tmp-", 5) != 0 || !old_enough(dfd, name, t->grace, NULL))
        return 0;
    bool dry = t->o && t->o->dry_run;
    say(t->o, "%s %s/%s (leftover of a crashed write)", dry ? "would delete" : "delete", t->sub, name);
    t->res->leftovers_deleted++;
    return dry ? 0 : unlink_obj(dfd, t->sub, name);
}

/* Deletes .tmp-* leftovers of `sub` (relative to the dataset dir). */
static int sweep_tmp(silt_dataset *ds, const char *sub, int64_t grace, const silt_gc_opts *o,
                     silt_gc_result *res)
{
    tmp_ctx t = {sub, grace, o, res};
    return sweep_dir(ds, sub, tmp_entry, &t, o && o->dry_run);
}

typedef struct unref_ctx {
    const char *kind;
    const json_t *keep1, *keep2, *keep3;
    int64_t grace;
    const silt_gc_opts *o;
    silt_gc_result *res;
} unref_ctx;

static int unref_entry(void *ctx, int dfd, const char *name)
{
    unref_ctx *u = ctx;
    if (name[0] == '.' || strlen(name) != SILT_MH_TEXT_LEN)
        return 0;
    gc_tick(u->o, u->res);
    if (json_object_get(u->keep1, name) || (u->keep2 && json_object_get(u->keep2, name)) ||
        (u->keep3 && json_object_get(u->keep3, name)))
        return 0;
    uint64_t size = 0;
    if (!old_enough(dfd, name, u->grace, &size))
        return 0;
    bool dry = u->o && u->o->dry_run;
    say(u->o, "%s %s/%s (unreferenced)", dry ? "would delete" : "delete", u->kind, name);
    u->res->objects_deleted++;
    u->res->bytes_deleted += size;
    return dry ? 0 : unlink_obj(dfd, u->kind, name);
}

/* Deletes unreferenced objects of `kind` older than the grace period. */
static int sweep_unreferenced(silt_dataset *ds, const char *kind, const json_t *keep1, const json_t *keep2,
                              const json_t *keep3, int64_t grace, const silt_gc_opts *o, silt_gc_result *res)
{
    unref_ctx u = {kind, keep1, keep2, keep3, grace, o, res};
    return sweep_dir(ds, kind, unref_entry, &u, o && o->dry_run);
}

/* Deletes the objects of swept transactions (`del`: mh -> {rid, path}). */
static int delete_purged(silt_dataset *ds, const json_t *del, const silt_gc_opts *opts, silt_gc_result *res)
{
    if (json_object_size(del) == 0)
        return 0;
    bool dry = opts && opts->dry_run;
    int dfd;
    int rc = open_sweep_dir(ds, "data", &dfd);
    if (rc || dfd < 0)
        return rc;
    const char *mh;
    json_t *d;
    json_object_foreach((json_t *)del, mh, d)
    {
        struct stat st;
        if (rc || strlen(mh) != SILT_MH_TEXT_LEN || fstatat(dfd, mh, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        gc_tick(opts, res);
        say(opts, "%s data/%s (file '%s' of transaction %s, purged by retention)", dry ? "would delete" : "delete",
            mh, json_string_value(json_object_get(d, "path")), json_string_value(json_object_get(d, "rid")));
        res->objects_deleted++;
        res->bytes_deleted += (uint64_t)st.st_size;
        if (!dry)
            rc = unlink_obj(dfd, "data", mh);
    }
    if (!rc && !dry)
        fsync(dfd);
    close(dfd);
    return rc;
}

/* One run of `silt gc NAME`. */
typedef struct gc_run {
    silt_dataset *ds;
    const silt_gc_opts *o;
    bool dry;
    int64_t grace;
    silt_gc_result res;
    int roots_fd, retention_fd, objects_fd; /* locks held for the whole run */
    int *branch_fd;              /* transaction lock of every branch */
    size_t nbranches;
    silt_gc_scan *s;
    json_t *marks, *purged, *ptx, *pobj;
    json_t *sweep;  /* rid -> true: transactions swept */
    json_t *keep_w; /* mh -> true: objects written by a transaction not swept */
    json_t *del;    /* mh -> {rid, path}: objects of swept transactions to delete */
} gc_run;

/* Locks, in the order every other writer uses: the roots lock exclusive (no
 * new branch until the sweep ends), the retention lock, txn/objects.lock
 * exclusive (no put stores or stages an object), then the transaction lock
 * of every branch (no commit). */
static int gc_lock(gc_run *g)
{
    g->roots_fd = silt_ds_roots_lock(g->ds, true);
    if (g->roots_fd < 0)
        return g->roots_fd;
    g->retention_fd = silt_retention_lock(g->ds);
    if (g->retention_fd < 0)
        return g->retention_fd;
    g->objects_fd = silt_txn_lock_objects(g->ds, true);
    if (g->objects_fd < 0)
        return g->objects_fd;
    char **names = NULL;
    int n = silt_ds_branch_names(&names, g->ds);
    if (n < 0)
        return n;
    g->branch_fd = calloc((size_t)n, sizeof *g->branch_fd);
    int rc = g->branch_fd ? 0 : oom();
    for (int i = 0; !rc && i < n; i++) {
        int f = silt_txn_lock_branch(g->ds, names[i]);
        if (f < 0)
            rc = f;
        else
            g->branch_fd[g->nbranches++] = f;
    }
    silt_strv_free(names);
    return rc;
}

static void gc_unlock(gc_run *g)
{
    for (size_t k = 0; k < g->nbranches; k++)
        silt_txn_unlock_branch(g->branch_fd[k]);
    free(g->branch_fd);
    silt_fs_unlock(g->objects_fd);
    silt_retention_unlock(g->retention_fd);
    silt_fs_unlock(g->roots_fd);
}

static json_t *object_member(json_t *parent, const char *key)
{
    json_t *o = json_object_get(parent, key);
    if (json_is_object(o))
        return o;
    o = json_object();
    if (!o || json_object_set_new(parent, key, o))
        return NULL;
    return o;
}

/* Transactions to sweep: the marks (re-checked by the scan) and those
 * recorded as purged (finishing an interrupted sweep). */
static int gc_plan_sweep(gc_run *g)
{
    g->ptx = object_member(g->purged, "transactions");
    g->pobj = object_member(g->purged, "objects");
    if (!g->ptx || !g->pobj)
        return oom();
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(g->marks, "marks"), i, m)
    {
        const char *r = json_string_value(json_object_get(m, "rid"));
        if (!r || silt_gc_scan_retained(g->s, r))
            continue;
        if (json_object_set(g->sweep, r, json_true()))
            return oom();
        if (!json_object_get(g->ptx, r))
            g->res.marked++;
    }
    const char *r;
    json_t *x;
    json_object_foreach(g->ptx, r, x)
    {
        if (json_object_set(g->sweep, r, json_true()))
            return oom();
    }
    return 0;
}

/* What goes: objects of swept transactions that nothing else keeps (a
 * transaction not swept, a retained view, a staged file, a slice). */
static int gc_plan_delete(gc_run *g)
{
    const char *rid, *mh;
    json_t *r, *pth;
    json_object_foreach(g->s->rids, rid, r)
    {
        if (json_object_get(g->sweep, rid))
            continue;
        json_object_foreach(json_object_get(r, "objects"), mh, pth)
        {
            if (set_true(g->keep_w, mh))
                return oom();
        }
    }
    json_object_foreach(g->sweep, rid, r)
    {
        json_object_foreach(json_object_get(json_object_get(g->s->rids, rid), "objects"), mh, pth)
        {
            if (json_object_get(g->keep_w, mh) || json_object_get(g->s->keep, mh) ||
                json_object_get(g->s->chain_data, mh) || json_object_get(g->del, mh))
                continue;
            json_t *d = json_pack("{s:s,s:O}", "rid", rid, "path", pth);
            if (!d || json_object_set_new(g->del, mh, d))
                return oom();
        }
    }
    return 0;
}

/* The purge record first (with the policies in force, so that verify can
 * tell a purge retention made from a forged entry), then the marks; the
 * bytes go only after both are durable. */
static int gc_record(gc_run *g)
{
    const char *rid;
    json_t *r;
    if (g->dry) {
        json_object_foreach(g->sweep, rid, r)
        {
            if (!json_object_get(g->ptx, rid))
                g->res.transactions_purged++;
        }
        return 0;
    }
    char now[40];
    silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), now);
    json_t *policies = NULL;
    int rc = silt_ds_info_load(g->ds, "retention.json", &policies);
    bool changed = false;
    json_object_foreach(g->sweep, rid, r)
    {
        if (rc || json_object_get(g->ptx, rid))
            continue;
        json_t *rec = json_pack("{s:s,s:O}", "purged", now, "policies", policies);
        if (!rec || json_object_set_new(g->ptx, rid, rec))
            rc = oom();
        changed = true;
        g->res.transactions_purged++;
    }
    json_decref(policies);
    const char *mh;
    json_t *d;
    json_object_foreach(g->del, mh, d)
    {
        const char *dr = json_string_value(json_object_get(d, "rid"));
        const char *cur = json_string_value(json_object_get(g->pobj, mh));
        if (rc || (cur && strcmp(cur, dr) == 0))
            continue;
        if (json_object_set_new(g->pobj, mh, json_string(dr)))
            rc = oom();
        changed = true;
    }
    if (!rc && changed)
        rc = silt_purge_record_save(g->ds, g->purged);
    json_t *arr = json_object_get(g->marks, "marks");
    bool mchanged = false;
    for (size_t k = 0; !rc && k < json_array_size(arr);) {
        const char *mr = json_string_value(json_object_get(json_array_get(arr, k), "rid"));
        if (mr && json_object_get(g->ptx, mr)) {
            json_array_remove(arr, k);
            mchanged = true;
        } else {
            k++;
        }
    }
    if (!rc && mchanged)
        rc = silt_ds_info_save(g->ds, "marks.json", g->marks);
    return rc;
}

/* Unreferenced objects and leftovers, once older than the grace period. */
static int gc_sweep_rest(gc_run *g)
{
    json_t *referenced = json_object(), *kept = json_object();
    int rc = referenced && kept ? 0 : oom();
    const char *rid, *mh;
    json_t *r, *x;
    json_object_foreach(g->s->rids, rid, r)
    {
        json_object_foreach(json_object_get(r, "objects"), mh, x)
        {
            if (!rc && !json_object_get(g->del, mh) && set_true(referenced, mh))
                rc = oom();
        }
    }
    /* kept: retained/staged, written by transactions not swept, and those
     * handled above (deleted already or deliberately kept) */
    json_t *sets[] = {g->s->keep, g->keep_w, g->del};
    for (size_t k = 0; !rc && k < 3; k++)
        json_object_foreach(sets[k], mh, x)
        {
            if (set_true(kept, mh))
                rc = oom();
        }
    if (!rc)
        rc = sweep_unreferenced(g->ds, "data", g->s->chain_data, kept, referenced, g->grace, g->o, &g->res);
    if (!rc)
        rc = sweep_unreferenced(g->ds, "checkpoints", g->s->chain_cp, NULL, NULL, g->grace, g->o, &g->res);
    static const char *const TMPDIRS[] = {"data", "checkpoints", "blocks", "refs", "refs/branches", "info", "txn"};
    for (size_t k = 0; !rc && k < sizeof TMPDIRS / sizeof TMPDIRS[0]; k++)
        rc = sweep_tmp(g->ds, TMPDIRS[k], g->grace, g->o, &g->res);
    json_decref(referenced);
    json_decref(kept);
    return rc;
}

int silt_gc(silt_gc_result *out, silt_dataset *ds, const silt_gc_opts *opts)
{
    gc_run g = {.ds = ds, .o = opts, .dry = opts && opts->dry_run, .grace = grace_of(opts),
                .roots_fd = -1, .retention_fd = -1, .objects_fd = -1};
    if (out)
        memset(out, 0, sizeof *out);
    int rc = gc_lock(&g);
    g.sweep = json_object();
    g.keep_w = json_object();
    g.del = json_object();
    if (!rc && (!g.sweep || !g.keep_w || !g.del))
        rc = oom();
    if (!rc)
        rc = silt_gc_mark_locked(ds, g.dry, &g.marks, &g.purged, &g.s);
    if (!rc)
        rc = gc_plan_sweep(&g);
    if (!rc)
        rc = gc_plan_delete(&g);
    if (!rc)
        rc = gc_record(&g);
    if (!rc)
        rc = delete_purged(ds, g.del, opts, &g.res);
    if (!rc)
        rc = gc_sweep_rest(&g);
    json_decref(g.marks);
    json_decref(g.purged);
    json_decref(g.sweep);
    json_decref(g.keep_w);
    json_decref(g.del);
    silt_gc_scan_free(g.s);
    gc_unlock(&g);
    if (!rc && out)
        *out = g.res;
    return rc;
}

/* Sweeps one scratch area of the workspace (`sub`: "tmp", "tmp/spill" or
 * "trash"). An entry whose owner process is gone (util/scratch.h) goes at
 * once, one of a live process never; one whose owner cannot be checked (a
 * name of an older silt, another host or container) goes once older than
 * the grace period — in tmp/spill/ only scratch names are considered (the
 * other entries there are the engine's spill files). */
static int sweep_scratch(silt_workspace *ws, const char *sub, int64_t grace, const silt_gc_opts *opts,
                         silt_gc_result *out)
{
    char *dir = silt_path_join(ws->root, sub, NULL);
    if (!dir)
        return oom();
    DIR *d = opendir(dir);
    int rc = 0;
    struct dirent *de;
    bool spill = strcmp(sub, "tmp/spill") == 0;
    const char *verb = opts && opts->dry_run ? "would delete" : "delete";
    while (d && !rc && (de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
            (strcmp(sub, "tmp") == 0 && strcmp(de->d_name, "spill") == 0))
            continue;
        long pid = -1;
        silt_owner_state owner = silt_scratch_owner(de->d_name, &pid);
        if (owner == SILT_OWNER_ALIVE || (spill && pid < 0))
            continue;
        char *p = silt_path_join(dir, de->d_name, NULL);
        if (!p) {
            rc = oom();
            break;
        }
        bool del = owner == SILT_OWNER_GONE || old_enough(AT_FDCWD, p, grace, NULL);
        if (owner == SILT_OWNER_GONE)
            say(opts, "%s %s/%s (leftover of process %ld, which has exited)", verb, sub, de->d_name, pid);
        else if (del)
            say(opts, "%s %s/%s (leftover of a crashed command)", verb, sub, de->d_name);
        if (del && !(opts && opts->dry_run))
            rc = silt_fs_remove_tree(p);
        if (del && out)
            out->leftovers_deleted++;
        free(p);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

int silt_gc_workspace(silt_gc_result *out, silt_workspace *ws, const silt_gc_opts *opts)
{
    int64_t grace = grace_of(opts);
    static const char *const AREAS[] = {"tmp", "tmp/spill", "trash"};
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof AREAS / sizeof AREAS[0]; i++)
        rc = sweep_scratch(ws, AREAS[i], grace, opts, out);
    return rc;
}
