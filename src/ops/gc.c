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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

static int open_engine(silt_dataset *ds, silt_engine **e)
{
    char *spill = silt_path_join(ds->ws->root, "tmp", "spill", NULL);
    int rc = spill ? silt_fs_mkdirs(spill) : oom();
    if (!rc) {
        silt_engine_opts eo = {.spill_dir = spill};
        rc = silt_engine_open(e, &eo);
    }
    free(spill);
    return rc;
}

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
    silt_buf sql = SILT_BUF_INIT;
    int rc = silt_buf_puts(&sql, "SELECT transaction_rid, content_hash, path, size FROM read_parquet(");
    if (!rc)
        rc = slice_list(s->ds, slices, &sql);
    if (rc > 0)
        rc = silt_buf_puts(&sql, ") WHERE op IN (0, 3) ORDER BY \"offset\"");
    if (!rc)
        rc = open_engine(s->ds, &e);
    row_ctx rx = {s};
    if (!rc)
        rc = silt_engine_query_rows(e, sql.data, on_row, &rx);
    if (rc < 0 && rc != SILT_ENOMEM)
        rc = silt_err_context(rc, "gc of %s: reading the file rows", s->ds->name);
    silt_engine_free(e);
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

/* Objects staged by transactions whose record is not closed. */
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
        if (l < 8 || strcmp(de->d_name + l - 7, ".staged") != 0)
            continue;
        char rid[128];
        snprintf(rid, sizeof rid, "%.*s", (int)(l - 7), de->d_name);
        /* the record is read directly (silt_txn_get would take the branch
         * lock, which gc already holds); unreadable = kept, to be safe */
        char *rp = silt_path_join(dir, rid, NULL);
        silt_buf rb = SILT_BUF_INIT;
        const char *status = NULL;
        json_t *rj = NULL;
        if (rp && silt_fs_read(rp, &rb) == 0 && rb.data) {
            rj = json_loadb(rb.data, rb.len, 0, NULL);
            status = json_string_value(json_object_get(rj, "status"));
        }
        bool closed = status && (strcmp(status, "COMMITTED") == 0 || strcmp(status, "ABORTED") == 0);
        json_decref(rj);
        silt_buf_free(&rb);
        free(rp);
        silt_err_clear();
        if (closed)
            continue; /* committed: its rows say; aborted: garbage */
        char *p = silt_path_join(dir, de->d_name, NULL);
        silt_buf b = SILT_BUF_INIT;
        if (!p) {
            rc = oom();
            break;
        }
        if (silt_fs_read(p, &b) == 0 && b.data) {
            char *save = NULL;
            for (char *line = strtok_r(b.data, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save))
                if (line[0] == 'P' && line[1] == '\t') {
                    char *tab = strchr(line + 2, '\t');
                    if (tab) {
                        *tab = '\0';
                        rc = set_true(s->keep, line + 2);
                    }
                }
        }
        silt_err_clear();
        silt_buf_free(&b);
        free(p);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

int silt_gc_scan_new(silt_gc_scan **out, silt_dataset *ds, int64_t now_ms)
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
    if (!rc)
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
            if (bt[i].v[k].ms >= from)
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
        rc = silt_gc_scan_new(&s, ds, silt_time_to_ms(silt_time_now()));
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

/* Is the file older than the grace period? (missing: no) */
static bool old_enough(const char *path, int64_t grace, uint64_t *size)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return false;
    if (size)
        *size = (uint64_t)st.st_size;
    return (int64_t)time(NULL) - (int64_t)st.st_mtime >= grace;
}

static int unlink_obj(const char *path)
{
    if (unlink(path) != 0 && errno != ENOENT)
        return silt_err(SILT_EIO, "gc: cannot delete %s: %s", path, strerror(errno));
    return 0;
}

/* Deletes .tmp-* leftovers of `sub` (relative to the dataset dir). */
static int sweep_tmp(silt_dataset *ds, const char *sub, int64_t grace, const silt_gc_opts *o,
                     silt_gc_result *res)
{
    char *dir = silt_path_join(ds->dir, sub, NULL);
    if (!dir)
        return oom();
    DIR *d = opendir(dir);
    int rc = 0;
    struct dirent *de;
    while (d && !rc && (de = readdir(d)) != NULL) {
        if (strncmp(de->d_name, ".tmp-", 5) != 0)
            continue;
        char *p = silt_path_join(dir, de->d_name, NULL);
        if (!p) {
            rc = oom();
            break;
        }
        if (old_enough(p, grace, NULL)) {
            say(o, "%s %s/%s (leftover of a crashed write)", o && o->dry_run ? "would delete" : "delete", sub,
                de->d_name);
            if (!(o && o->dry_run))
                rc = unlink_obj(p);
            res->leftovers_deleted++;
        }
        free(p);
    }
    if (d)
        closedir(d);
    if (!rc && !(o && o->dry_run) && d)
        silt_fs_fsync_dir(dir);
    silt_err_clear();
    free(dir);
    return rc;
}

/* Deletes unreferenced objects of `kind` older than the grace period. */
static int sweep_unreferenced(silt_dataset *ds, const char *kind, const json_t *keep1, const json_t *keep2,
                              const json_t *keep3, int64_t grace, const silt_gc_opts *o, silt_gc_result *res)
{
    char *dir = silt_path_join(ds->dir, kind, NULL);
    if (!dir)
        return oom();
    DIR *d = opendir(dir);
    int rc = 0;
    struct dirent *de;
    while (d && !rc && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strlen(de->d_name) != SILT_MH_TEXT_LEN)
            continue;
        if (json_object_get(keep1, de->d_name) || (keep2 && json_object_get(keep2, de->d_name)) ||
            (keep3 && json_object_get(keep3, de->d_name)))
            continue;
        char *p = silt_path_join(dir, de->d_name, NULL);
        if (!p) {
            rc = oom();
            break;
        }
        uint64_t size = 0;
        if (old_enough(p, grace, &size)) {
            say(o, "%s %s/%s (unreferenced)", o && o->dry_run ? "would delete" : "delete", kind, de->d_name);
            if (!(o && o->dry_run))
                rc = unlink_obj(p);
            res->objects_deleted++;
            res->bytes_deleted += size;
        }
        free(p);
    }
    if (d)
        closedir(d);
    if (!rc && !(o && o->dry_run) && d)
        silt_fs_fsync_dir(dir);
    silt_err_clear();
    free(dir);
    return rc;
}

int silt_gc(silt_gc_result *out, silt_dataset *ds, const silt_gc_opts *opts)
{
    silt_gc_result res;
    memset(&res, 0, sizeof res);
    if (out)
        *out = res;
    bool dry = opts && opts->dry_run;
    int64_t grace = grace_of(opts);
    int fd = silt_retention_lock(ds);
    if (fd < 0)
        return fd;
    /* the transaction lock of every branch: no put/commit while we sweep */
    silt_branch_info *br = NULL;
    size_t nbr = 0;
    int rc = silt_branch_list(&br, &nbr, ds);
    int *bfd = rc ? NULL : calloc(nbr ? nbr : 1, sizeof *bfd);
    if (!rc && !bfd)
        rc = oom();
    for (size_t i = 0; bfd && i < nbr; i++)
        bfd[i] = -1;
    for (size_t i = 0; !rc && i < nbr; i++) {
        int f = silt_txn_lock_branch(ds, br[i].name);
        if (f < 0)
            rc = f;
        else
            bfd[i] = f;
    }
    json_t *marks = NULL, *purged = NULL, *del = json_object(), *sweep = json_object();
    silt_gc_scan *s = NULL;
    if (!rc && (!del || !sweep))
        rc = oom();
    if (!rc)
        rc = silt_gc_mark_locked(ds, dry, &marks, &purged, &s);
    json_t *ptx = rc ? NULL : json_object_get(purged, "transactions");
    json_t *pobj = rc ? NULL : json_object_get(purged, "objects");
    if (!rc && !json_is_object(ptx)) {
        ptx = json_object();
        if (!ptx || json_object_set_new(purged, "transactions", ptx))
            rc = oom();
    }
    if (!rc && !json_is_object(pobj)) {
        pobj = json_object();
        if (!pobj || json_object_set_new(purged, "objects", pobj))
            rc = oom();
    }
    /* transactions to sweep: the marks (re-checked by the scan) and those
     * recorded as purged (finishing an interrupted sweep) */
    size_t i;
    json_t *m;
    if (!rc) {
        json_array_foreach(json_object_get(marks, "marks"), i, m)
        {
            const char *r = json_string_value(json_object_get(m, "rid"));
            if (r && !silt_gc_scan_retained(s, r) && json_object_set(sweep, r, json_true()) == 0 &&
                !json_object_get(ptx, r))
                res.marked++;
        }
        const char *r;
        json_t *x;
        json_object_foreach(ptx, r, x)
        {
            if (json_object_set(sweep, r, json_true()))
                rc = oom();
        }
    }
    /* keep: objects written by any transaction not swept */
    json_t *keep_w = json_object();
    if (!rc && !keep_w)
        rc = oom();
    const char *rid;
    json_t *r;
    if (!rc)
        json_object_foreach(s->rids, rid, r)
        {
            if (json_object_get(sweep, rid))
                continue;
            const char *mh;
            json_t *pth;
            json_object_foreach(json_object_get(r, "objects"), mh, pth)
            {
                if (set_true(keep_w, mh))
                    rc = oom();
            }
        }
    /* deletable objects of swept transactions */
    if (!rc)
        json_object_foreach(sweep, rid, r)
        {
            const char *mh;
            json_t *pth;
            json_object_foreach(json_object_get(json_object_get(s->rids, rid), "objects"), mh, pth)
            {
                if (json_object_get(keep_w, mh) || json_object_get(s->keep, mh) || json_object_get(s->chain_data, mh) ||
                    json_object_get(del, mh))
                    continue;
                json_t *d = json_pack("{s:s,s:O}", "rid", rid, "path", pth);
                if (!d || json_object_set_new(del, mh, d))
                    rc = oom();
            }
        }
    /* the purge record first, then the marks, then the bytes */
    char now[40];
    silt_time_format(silt_time_from_ms(silt_time_to_ms(silt_time_now())), now);
    if (!rc && !dry) {
        bool changed = false;
        json_object_foreach(sweep, rid, r)
        {
            if (!json_object_get(ptx, rid)) {
                json_t *rec = json_pack("{s:s}", "purged", now);
                if (!rec || json_object_set_new(ptx, rid, rec))
                    rc = oom();
                changed = true;
                res.transactions_purged++;
            }
        }
        const char *mh;
        json_t *d;
        json_object_foreach(del, mh, d)
        {
            const char *dr = json_string_value(json_object_get(d, "rid"));
            const char *cur = json_string_value(json_object_get(pobj, mh));
            if (!cur || strcmp(cur, dr) != 0) {
                if (json_object_set_new(pobj, mh, json_string(dr)))
                    rc = oom();
                changed = true;
            }
        }
        if (!rc && changed)
            rc = silt_purge_record_save(ds, purged);
        json_t *arr = json_object_get(marks, "marks");
        bool mchanged = false;
        for (size_t k = 0; !rc && k < json_array_size(arr);) {
            const char *mr = json_string_value(json_object_get(json_array_get(arr, k), "rid"));
            if (mr && json_object_get(ptx, mr)) {
                json_array_remove(arr, k);
                mchanged = true;
            } else {
                k++;
            }
        }
        if (!rc && mchanged)
            rc = silt_ds_info_save(ds, "marks.json", marks);
    } else if (!rc) {
        json_object_foreach(sweep, rid, r)
        {
            if (!json_object_get(ptx, rid))
                res.transactions_purged++;
        }
    }
    if (!rc) {
        const char *mh;
        json_t *d;
        bool any = false;
        json_object_foreach(del, mh, d)
        {
            silt_buf b = SILT_BUF_INIT;
            if (silt_multihash_from_text(mh, &b) || b.len != SILT_MH_LEN) {
                silt_buf_free(&b);
                silt_err_clear();
                continue;
            }
            char *p = silt_store_object_path(ds->store, "data", (const uint8_t *)b.data);
            silt_buf_free(&b);
            if (!p) {
                rc = oom();
                break;
            }
            uint64_t size = 0;
            struct stat st;
            if (lstat(p, &st) == 0) {
                size = (uint64_t)st.st_size;
                say(opts, "%s data/%s (file '%s' of transaction %s, purged by retention)",
                    dry ? "would delete" : "delete", mh, json_string_value(json_object_get(d, "path")),
                    json_string_value(json_object_get(d, "rid")));
                res.objects_deleted++;
                res.bytes_deleted += size;
                if (!dry)
                    rc = unlink_obj(p);
                any = true;
            }
            free(p);
            if (rc)
                break;
        }
        if (!rc && any && !dry) {
            char *dd = silt_path_join(ds->dir, "data", NULL);
            if (dd)
                silt_fs_fsync_dir(dd);
            free(dd);
            silt_err_clear();
        }
    }
    /* unreferenced objects and leftovers, once older than the grace period */
    json_t *referenced = json_object();
    if (!rc && !referenced)
        rc = oom();
    if (!rc)
        json_object_foreach(s->rids, rid, r)
        {
            const char *mh;
            json_t *pth;
            json_object_foreach(json_object_get(r, "objects"), mh, pth)
            {
                if (!json_object_get(del, mh) && set_true(referenced, mh))
                    rc = oom();
            }
        }
    if (!rc) {
        /* referenced objects of swept transactions that were already deleted
         * are not in `del`; ones kept are in keep_w/keep */
        json_t *k2 = json_object();
        if (!k2)
            rc = oom();
        const char *mh;
        json_t *x;
        if (!rc) {
            json_object_foreach(s->keep, mh, x) { json_object_set(k2, mh, json_true()); }
            json_object_foreach(keep_w, mh, x) { json_object_set(k2, mh, json_true()); }
            json_object_foreach(del, mh, x) { json_object_set(k2, mh, json_true()); } /* handled above */
        }
        if (!rc)
            rc = sweep_unreferenced(ds, "data", s->chain_data, k2, referenced, grace, opts, &res);
        if (!rc)
            rc = sweep_unreferenced(ds, "checkpoints", s->chain_cp, NULL, NULL, grace, opts, &res);
        json_decref(k2);
    }
    static const char *const TMPDIRS[] = {"data", "checkpoints", "blocks", "refs", "refs/branches", "info", "txn"};
    for (size_t k = 0; !rc && k < sizeof TMPDIRS / sizeof TMPDIRS[0]; k++)
        rc = sweep_tmp(ds, TMPDIRS[k], grace, opts, &res);
    json_decref(referenced);
    json_decref(keep_w);
    json_decref(marks);
    json_decref(purged);
    json_decref(del);
    json_decref(sweep);
    silt_gc_scan_free(s);
    for (size_t k = 0; bfd && k < nbr; k++)
        silt_txn_unlock_branch(bfd[k]);
    free(bfd);
    free(br);
    silt_retention_unlock(fd);
    if (!rc && out)
        *out = res;
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
        bool del = owner == SILT_OWNER_GONE || old_enough(p, grace, NULL);
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
