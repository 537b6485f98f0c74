/* files_verify.c — what `silt verify` checks of a files dataset beyond its
 * chain and slices (src/dataset/verify.c):
 *
 *  - every file object linked by the rows of a branch's chain (+A/+C rows:
 *    every file of every view) exists in data/, has the size of its rows
 *    and hashes (SHA3-256) to its name; each object is checked once per
 *    dataset, for the first branch whose chain links it;
 *  - a missing object is corruption unless the purge record says retention
 *    purged it AND the record is plausible here: the transaction it names
 *    wrote the object, and the object is in no branch's latest view (the
 *    latest view of every branch is always retained, so a missing file of a
 *    latest view is corruption whatever the record says). Whether the
 *    policy could have marked that transaction is checked above this layer
 *    (src/ops/verify.c), from the candidates collected here;
 *  - the transaction records of txn/ agree with the chains: a COMMITTED
 *    record names the AddData that carries its rid and type, an ABORTED one
 *    is on no chain, every committed transaction has a record, the staged
 *    objects of OPEN transactions exist.
 * Problems are reported and counted, never returned as errors; only I/O
 * errors of the workspace and out-of-memory abort.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "files/files.h"
#include "files/purged.h"
#include "files/txn.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

struct silt_files_vstate {
    json_t *purged;  /* the purge record */
    json_t *pobj;    /* borrowed: purged->objects (mh -> rid) */
    json_t *done;    /* mh -> branch: objects checked */
    json_t *purges;  /* rid -> {branch, objects: [mh]}: purges for the policy check */
    json_t *commits; /* rid -> {branch, block, type}: commits seen on the chains */
};

static int oom(void) { return silt_err(SILT_ENOMEM, "out of memory"); }

int silt_files_vstate_new(silt_files_vstate **out, silt_dataset *ds)
{
    silt_files_vstate *fs = calloc(1, sizeof *fs);
    *out = NULL;
    if (!fs)
        return oom();
    int rc = silt_purge_record_load(ds, &fs->purged);
    fs->done = json_object();
    fs->purges = json_object();
    fs->commits = json_object();
    if (!rc && (!fs->done || !fs->purges || !fs->commits))
        rc = oom();
    if (rc) {
        silt_files_vstate_free(fs);
        return rc;
    }
    fs->pobj = json_object_get(fs->purged, "objects");
    *out = fs;
    return 0;
}

void silt_files_vstate_free(silt_files_vstate *fs)
{
    if (!fs)
        return;
    json_decref(fs->purged);
    json_decref(fs->done);
    json_decref(fs->purges);
    json_decref(fs->commits);
    free(fs);
}

const json_t *silt_files_vstate_purges(const silt_files_vstate *fs) { return fs->purges; }

/* ---- reporting ------------------------------------------------------------ */

typedef struct bctx {
    silt_files_vstate *fs;
    silt_dataset *ds;
    silt_verify_report_fn report;
    void *rctx;
    silt_verify_tally *tally;
    json_t *latest; /* mh -> path: objects of the branch's latest view */
    int rc;
} bctx;

static void problem(bctx *b, const char *branch, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(bctx *b, const char *branch, const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    b->tally->corrupt++;
    if (b->report)
        b->report(b->rctx, branch, line);
}

/* ---- linked objects of one branch ------------------------------------------ */

/* Is `rid` one of the writers (a JSON-ish list "[r1, r2]" from the engine)? */
static bool wrote(const char *writers, const char *rid)
{
    if (!writers || !rid)
        return false;
    size_t n = strlen(rid);
    for (const char *p = strstr(writers, rid); p; p = strstr(p + 1, rid)) {
        char before = p == writers ? '[' : p[-1];
        char after = p[n];
        if ((before == '[' || before == ' ' || before == ',') && (after == ']' || after == ',' || after == '\0'))
            return true;
    }
    return false;
}

/* A missing object that is not in the branch's latest view. */
static int missing_object(bctx *b, const char *mh, const char *path, const char *rid, const char *writers)
{
    const char *br = b->ds->branch;
    const char *prid = json_string_value(json_object_get(b->fs->pobj, mh));
    if (!prid) {
        problem(b, br, "file object %s ('%s', transaction %s): missing (not purged by retention)", mh, path, rid);
        return 0;
    }
    if (!wrote(writers, prid)) {
        problem(b, br,
                "file object %s ('%s'): missing; the purge record says transaction %s purged it, but that "
                "transaction did not write it",
                mh, path, prid);
        return 0;
    }
    json_t *p = json_object_get(b->fs->purges, prid);
    if (!p) {
        p = json_pack("{s:s,s:[]}", "branch", br, "objects");
        if (!p || json_object_set_new(b->fs->purges, prid, p))
            return oom();
    }
    return json_array_append_new(json_object_get(p, "objects"), json_string(mh)) ? oom() : 0;
}

/* Existence, size and content hash of one linked object. */
static int check_object(bctx *b, const char *mh, const char *path, const char *rid, const char *size_text,
                        const char *writers)
{
    const char *br = b->ds->branch;
    silt_buf raw = SILT_BUF_INIT;
    if (silt_multihash_from_text(mh, &raw) || raw.len != SILT_MH_LEN) {
        silt_err_clear();
        silt_buf_free(&raw);
        problem(b, br, "file '%s' (transaction %s): invalid content hash '%s'", path, rid, mh);
        return 0;
    }
    char *file = silt_store_object_path(b->ds->store, "data", (const uint8_t *)raw.data);
    silt_buf_free(&raw);
    if (!file)
        return 0; /* remote store: not checked here */
    uint8_t digest[SILT_SHA3_256_LEN];
    uint64_t size = 0;
    int rc = silt_sha3_file(file, digest, &size);
    free(file);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return json_object_get(b->latest, mh) ? 0 : missing_object(b, mh, path, rid, writers);
    }
    if (rc == SILT_ENOMEM)
        return rc;
    if (rc < 0) {
        problem(b, br, "file object %s ('%s'): cannot read: %s", mh, path, silt_error_last());
        return 0;
    }
    if (size_text && size != strtoull(size_text, NULL, 10))
        problem(b, br, "file object %s ('%s', transaction %s): size %llu but the entry says %s", mh, path, rid,
                (unsigned long long)size, size_text);
    uint8_t want[SILT_MH_LEN], got[SILT_MH_LEN];
    silt_multihash_wrap_sha3(digest, got);
    silt_buf w = SILT_BUF_INIT;
    if (silt_multihash_from_text(mh, &w) == 0 && w.len == SILT_MH_LEN)
        memcpy(want, w.data, SILT_MH_LEN);
    silt_buf_free(&w);
    if (memcmp(want, got, SILT_MH_LEN) != 0) {
        char got_text[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(got, SILT_MH_LEN, got_text);
        problem(b, br, "file object %s ('%s', transaction %s): content hash mismatch: the bytes hash to %s", mh,
                path, rid, got_text);
    }
    return 0;
}

/* Row callback: content_hash, path, rid, size, writers. */
static int on_object(void *ctx, size_t ncols, const char *const *names, const char *const *v)
{
    (void)names;
    bctx *b = ctx;
    if (ncols < 5 || !v[0] || json_object_get(b->fs->done, v[0]))
        return 0;
    if (json_object_set_new(b->fs->done, v[0], json_string(b->ds->branch)))
        return b->rc = oom();
    int rc = check_object(b, v[0], v[1] ? v[1] : "", v[2] ? v[2] : "", v[3], v[4]);
    return rc < 0 ? (b->rc = rc) : 0;
}

/* SELECT of every linked object of the slices `sl` with its writers. */
static int objects_sql(silt_buf *sql, const silt_slice_list *sl)
{
    int rc = silt_buf_puts(sql, "SELECT content_hash, min(path), min(transaction_rid), min(size), "
                                "CAST(list(DISTINCT transaction_rid) AS VARCHAR) FROM read_parquet([");
    for (size_t i = 0; rc == 0 && i < sl->n; i++) {
        char *q = silt_sql_str(sl->files[i]);
        rc = q ? silt_buf_printf(sql, "%s%s", i ? ", " : "", q) : SILT_ENOMEM;
        free(q);
    }
    if (rc == 0)
        rc = silt_buf_puts(sql, "]) WHERE op IN (0, 3) GROUP BY content_hash ORDER BY 2, 1");
    return rc == SILT_ENOMEM ? oom() : rc;
}

/* The latest view must be complete, whatever the purge record says. */
static int check_latest(bctx *b, const silt_view *v)
{
    for (size_t i = 0; i < silt_view_count(v); i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        if (json_object_set_new(b->latest, e->content_hash, json_string(e->path)))
            return oom();
        char *p = silt_view_object_path(b->ds, e);
        if (!p)
            return oom();
        bool present = silt_fs_exists(p);
        free(p);
        if (present)
            continue;
        const char *prid = json_string_value(json_object_get(b->fs->pobj, e->content_hash));
        if (prid)
            problem(b, b->ds->branch,
                    "file '%s' of the latest view: object %s is missing; the purge record says transaction %s "
                    "purged it, but retention never purges a file of a latest view",
                    e->path, e->content_hash, prid);
        else
            problem(b, b->ds->branch, "file '%s' of the latest view: object %s is missing (not purged by retention)",
                    e->path, e->content_hash);
    }
    return 0;
}

/* Remembers the commits of this branch's chain for the record check. */
static int note_commits(silt_files_vstate *fs, silt_dataset *ds)
{
    silt_files_commit_info *c = NULL;
    size_t n = 0;
    int rc = silt_files_commits(ds, &c, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        if (json_object_get(fs->commits, c[i].rid))
            continue;
        char block[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(c[i].block, SILT_MH_LEN, block);
        json_t *o = json_pack("{s:s,s:s,s:s}", "branch", ds->branch, "block", block, "type",
                              silt_txn_type_name(c[i].type));
        if (!o || json_object_set_new(fs->commits, c[i].rid, o))
            rc = oom();
    }
    free(c);
    return rc;
}

int silt_files_verify_branch(silt_files_vstate *fs, silt_dataset *ds, silt_verify_report_fn report, void *rctx,
                             silt_verify_tally *tally)
{
    int rc = silt_files_is_files(ds);
    if (rc <= 0)
        return rc;
    bctx b = {fs, ds, report, rctx, tally, json_object(), 0};
    silt_slice_list sl = {0};
    silt_view *latest = NULL;
    silt_buf sql = SILT_BUF_INIT;
    rc = b.latest ? note_commits(fs, ds) : oom();
    if (!rc)
        rc = silt_ds_slices(ds, NULL, 0, &sl);
    if (!rc)
        rc = silt_view_get(&latest, ds, NULL);
    if (rc == SILT_ECORRUPT || rc == SILT_EINVAL) { /* a damaged chain or slice: reported by the chain check */
        silt_err_clear();
        rc = 0;
        goto done;
    }
    if (!rc)
        rc = check_latest(&b, latest);
    if (!rc && sl.n > 0)
        rc = objects_sql(&sql, &sl);
    silt_engine *e = NULL;
    char *tmpdir = NULL;
    if (!rc && sl.n > 0 && !(rc = silt_ws_engine_open(ds->ws, &e, &tmpdir))) {
        rc = silt_engine_query_rows(e, sql.data, on_object, &b);
        if (b.rc)
            rc = b.rc;
        if (rc < 0 && rc != SILT_ENOMEM) {
            problem(&b, ds->branch, "cannot check the file objects: %s", silt_error_last());
            rc = 0;
        }
        rc = silt_ws_engine_close(e, tmpdir, rc);
    }
done:
    silt_buf_free(&sql);
    silt_view_free(latest);
    silt_slice_list_free(&sl);
    json_decref(b.latest);
    return rc;
}

/* ---- transaction records ------------------------------------------------------- */

/* Does block `hash_text` exist and carry the AddData of rid? (for records of
 * deleted branches, whose chain is no longer walked) */
static bool block_commits(silt_dataset *ds, const char *hash_text, const char *rid)
{
    silt_buf raw = SILT_BUF_INIT;
    silt_buf bytes = SILT_BUF_INIT;
    bool yes = false;
    if (silt_multihash_from_text(hash_text, &raw) == 0 && raw.len == SILT_MH_LEN &&
        silt_store_get(ds->store, "blocks", (const uint8_t *)raw.data, &bytes) == 0)
        yes = bytes.data && memmem(bytes.data, bytes.len, rid, strlen(rid)) != NULL;
    silt_err_clear();
    silt_buf_free(&raw);
    silt_buf_free(&bytes);
    return yes;
}

static void check_committed(bctx *b, const silt_txn_info *t, const json_t *c)
{
    if (!c) {
        if (!block_commits(b->ds, t->block, t->rid))
            problem(b, t->branch,
                    "transaction %s: its record says COMMITTED in block %s, but no chain carries its AddData",
                    t->rid, t->block[0] ? t->block : "(none)");
        return;
    }
    const char *block = json_string_value(json_object_get(c, "block"));
    const char *type = json_string_value(json_object_get(c, "type"));
    if (strcmp(block, t->block) != 0)
        problem(b, t->branch, "transaction %s: its record says block %s, but its AddData is block %s", t->rid,
                t->block[0] ? t->block : "(none)", block);
    if (strcmp(type, silt_txn_type_name(t->type)) != 0)
        problem(b, t->branch, "transaction %s: its record says %s, but it was committed as %s", t->rid,
                silt_txn_type_name(t->type), type);
}

/* The staged objects of an OPEN transaction must exist (gc keeps them). */
static int check_staged(bctx *b, const silt_txn_info *t)
{
    silt_buf text = SILT_BUF_INIT;
    silt_files_change *ch = NULL;
    size_t n = 0;
    int rc = silt_txn_staged(b->ds, t->rid, &text, &ch, &n);
    for (size_t i = 0; !rc && i < n; i++) {
        if (ch[i].remove)
            continue;
        silt_buf raw = SILT_BUF_INIT;
        uint64_t size = 0;
        int st = 0;
        if (silt_multihash_from_text(ch[i].content_hash, &raw) == 0 && raw.len == SILT_MH_LEN)
            st = silt_store_stat(b->ds->store, "data", (const uint8_t *)raw.data, &size);
        silt_err_clear();
        silt_buf_free(&raw);
        if (st == 0)
            problem(b, t->branch, "staged file '%s' of open transaction %s: object %s is missing", ch[i].path, t->rid,
                    ch[i].content_hash);
        else if (st > 0 && size != ch[i].size)
            problem(b, t->branch, "staged file '%s' of open transaction %s: object %s has %llu bytes, staged with %llu",
                    ch[i].path, t->rid, ch[i].content_hash, (unsigned long long)size,
                    (unsigned long long)ch[i].size);
    }
    if (rc == SILT_ECORRUPT || rc == SILT_EIO) {
        problem(b, t->branch, "transaction %s: cannot read its staging journal: %s", t->rid, silt_error_last());
        rc = 0;
    }
    free(ch);
    silt_buf_free(&text);
    return rc;
}

static int check_record(bctx *b, const char *rid, json_t *seen)
{
    silt_txn_info t;
    int rc = silt_txn_read_record(b->ds, rid, &t);
    if (rc == SILT_ECORRUPT || rc == SILT_EINVAL) {
        problem(b, NULL, "%s", silt_error_last()); /* names txn/<rid> */
        return json_object_set_new(seen, rid, json_true()) ? oom() : 0;
    }
    if (rc == SILT_ENOTFOUND) /* removed meanwhile */
        return silt_err_clear(), 0;
    if (rc)
        return rc;
    if (json_object_set_new(seen, rid, json_true()))
        return oom();
    const json_t *c = json_object_get(b->fs->commits, rid);
    if (t.status == SILT_TXN_COMMITTED)
        check_committed(b, &t, c);
    else if (c && (t.status == SILT_TXN_ABORTED || !silt_txn_commit_attempted(b->ds, rid)))
        problem(b, t.branch, "transaction %s is %s, but it was committed in block %s of branch %s", rid,
                silt_txn_status_name(t.status), json_string_value(json_object_get(c, "block")),
                json_string_value(json_object_get(c, "branch")));
    if (t.status == SILT_TXN_OPEN)
        return check_staged(b, &t);
    return 0;
}

int silt_files_verify_txns(silt_files_vstate *fs, silt_dataset *ds, silt_verify_report_fn report, void *rctx,
                           silt_verify_tally *tally)
{
    int rc = silt_files_is_files(ds);
    if (rc <= 0)
        return rc;
    bctx b = {fs, ds, report, rctx, tally, NULL, 0};
    json_t *seen = json_object();
    char *dir = silt_path_join(ds->dir, "txn", NULL);
    rc = seen && dir ? 0 : oom();
    DIR *d = rc ? NULL : opendir(dir);
    struct dirent *de;
    while (d && !rc && (de = readdir(d)) != NULL)
        if (silt_txn_rid_valid(de->d_name))
            rc = check_record(&b, de->d_name, seen);
    if (d)
        closedir(d);
    const char *rid;
    json_t *c;
    json_object_foreach(fs->commits, rid, c)
    {
        if (!rc && !json_object_get(seen, rid))
            problem(&b, json_string_value(json_object_get(c, "branch")),
                    "transaction %s (committed in block %s) has no record in txn/", rid,
                    json_string_value(json_object_get(c, "block")));
    }
    free(dir);
    json_decref(seen);
    return rc;
}
