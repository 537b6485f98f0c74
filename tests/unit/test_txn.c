/* test_txn.c — files datasets: transactions, views, branches (src/files/
 * files.c, txn.c, putlist.c, branches.c), replaying spec/foundry-datasets.md
 * literally; put lists, all-or-nothing uploads, abandoned transactions. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files/files.h"
#include "silt.h"
#include "testutil.h"
#include "util/multiformats.h"
#include "util/timeutil.h"

typedef struct fx {
    char *dir;
    char cwd[4096]; /* working directory before setup_in_dir */
    silt_workspace *ws;
    silt_dataset *ds;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(f->dir), 0);
    assert_int_equal(silt_workspace_open(&f->ws, f->dir), 0);
    assert_int_equal(silt_files_create(&f->ds, f->ws, "files1"), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    silt_dataset_free(f->ds);
    silt_workspace_free(f->ws);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* As setup, with the working directory in the test directory (restored by
 * teardown_in_dir even when an assertion fails). */
static int setup_in_dir(void **state)
{
    setup(state);
    fx *f = *state;
    assert_non_null(getcwd(f->cwd, sizeof f->cwd));
    assert_int_equal(chdir(f->dir), 0);
    return 0;
}

static int teardown_in_dir(void **state)
{
    fx *f = *state;
    assert_int_equal(chdir(f->cwd), 0);
    return teardown(state);
}

/* Writes `content` to <dir>/<name> and returns that path (static buffer). */
static const char *mkfile(fx *f, const char *name, const char *content)
{
    static char p[4096];
    snprintf(p, sizeof p, "%s/%s", f->dir, name);
    assert_int_equal(tu_write_file(p, content, strlen(content)), 0);
    return p;
}

static void mh_of(const char *content, char *out)
{
    uint8_t mh[SILT_MH_LEN];
    assert_int_equal(silt_multihash_sha3(content, strlen(content), mh), 0);
    silt_multihash_to_text(mh, SILT_MH_LEN, out);
}

/* One transaction: puts "name=content" items (content NULL = rm). */
static char *txn(fx *f, silt_dataset *ds, silt_txn_type t, const char *const *items, size_t n)
{
    char *rid = NULL;
    assert_int_equal(silt_txn_start(&rid, ds, t), 0);
    for (size_t i = 0; i < n; i++) {
        char name[64];
        const char *eq = strchr(items[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq ? eq - items[i] : (long)strlen(items[i])), items[i]);
        if (eq)
            assert_int_equal(silt_txn_put(ds, rid, mkfile(f, "src.bin", eq + 1), name), 0);
        else
            assert_int_equal(silt_txn_rm(ds, rid, name), 0);
    }
    char block[72];
    assert_int_equal(silt_txn_commit(ds, rid, block), 0);
    assert_int_equal(strlen(block), SILT_MH_TEXT_LEN);
    return rid;
}

/* Asserts that the view is exactly "path=content@rid ..." (sorted). */
static void expect_view(silt_dataset *ds, const char *at, const char *rs, const char *re, const char *const *exp,
                        const char *const *rids, size_t n)
{
    silt_view *v = NULL;
    int rc = silt_files_view(&v, ds, at, rs, re);
    if (rc)
        fail_msg("view: %s", silt_error_last());
    assert_int_equal(silt_view_count(v), n);
    for (size_t i = 0; i < n; i++) {
        const silt_file_entry *e = silt_view_entry(v, i);
        const char *eq = strchr(exp[i], '=');
        char path[64], hash[SILT_MH_TEXT_LEN + 1];
        snprintf(path, sizeof path, "%.*s", (int)(eq - exp[i]), exp[i]);
        mh_of(eq + 1, hash);
        assert_string_equal(e->path, path);
        assert_string_equal(e->content_hash, hash);
        assert_int_equal(e->size, strlen(eq + 1));
        assert_string_equal(e->rid, rids[i]);
        /* RFC 3339 with the shortest exact fraction: 2026-01-01T00:00:00.123Z,
         * or 2026-01-01T00:00:00Z for a commit on a whole second */
        silt_time parsed;
        assert_int_equal(silt_time_parse(e->time, &parsed), 0);
        assert_true(strlen(e->time) == 24 || (strlen(e->time) == 20 && parsed.nsec == 0));
    }
    silt_view_free(v);
}

static void test_spec_example(void **state)
{
    fx *f = *state;
    silt_dataset *ds = f->ds;
    const char *s1[] = {"A=a-v1", "B=b-v1"};
    char *t1 = txn(f, ds, SILT_TXN_SNAPSHOT, s1, 2);
    const char *s2[] = {"C=c-v1"};
    char *t2 = txn(f, ds, SILT_TXN_APPEND, s2, 1);
    const char *s3[] = {"A=a-v2"};
    char *t3 = txn(f, ds, SILT_TXN_UPDATE, s3, 1);
    const char *s4[] = {"B"};
    char *t4 = txn(f, ds, SILT_TXN_DELETE, s4, 1);

    /* the current view: A' and C */
    const char *v4[] = {"A=a-v2", "C=c-v1"};
    const char *r4[] = {t3, t2};
    expect_view(ds, NULL, NULL, NULL, v4, r4, 2);
    /* B's bytes stay */
    char hb[SILT_MH_TEXT_LEN + 1];
    mh_of("b-v1", hb);
    silt_dataset_info di;
    assert_int_equal(silt_dataset_info_get(&di, ds), 0);
    char p[4096];
    snprintf(p, sizeof p, "%s/.silt/datasets/%s/data/%s", f->dir, di.id + 8, hb);
    size_t blen = 0;
    char *bytes = tu_read_file(p, &blen);
    assert_non_null(bytes);
    assert_string_equal(bytes, "b-v1");
    free(bytes);

    /* a fifth SNAPSHOT {D}: the view is {D} */
    const char *s5[] = {"D=d-v1"};
    char *t5 = txn(f, ds, SILT_TXN_SNAPSHOT, s5, 1);
    const char *v5[] = {"D=d-v1"};
    const char *r5[] = {t5};
    expect_view(ds, NULL, NULL, NULL, v5, r5, 1);

    /* the four earlier transactions stay readable as the older view */
    const char *va1[] = {"A=a-v1", "B=b-v1"};
    const char *ra1[] = {t1, t1};
    expect_view(ds, t1, NULL, NULL, va1, ra1, 2);
    const char *va2[] = {"A=a-v1", "B=b-v1", "C=c-v1"};
    const char *ra2[] = {t1, t1, t2};
    expect_view(ds, t2, NULL, NULL, va2, ra2, 3);
    const char *va3[] = {"A=a-v2", "B=b-v1", "C=c-v1"};
    const char *ra3[] = {t3, t1, t2};
    expect_view(ds, t3, NULL, NULL, va3, ra3, 3);
    expect_view(ds, t4, NULL, NULL, v4, r4, 2);
    expect_view(ds, t5, NULL, NULL, v5, r5, 1);

    /* ranges: files modified in START..END */
    expect_view(ds, NULL, t1, t4, v4, r4, 2);
    const char *vr22[] = {"C=c-v1"};
    const char *rr22[] = {t2};
    expect_view(ds, NULL, t2, t2, vr22, rr22, 1);     /* start = end: that transaction's files */
    expect_view(ds, NULL, t1, t1, va1, ra1, 2);
    expect_view(ds, NULL, t4, t4, NULL, NULL, 0);     /* a DELETE alone removes from an empty set */
    const char *vr23[] = {"A=a-v2", "C=c-v1"};
    const char *rr23[] = {t3, t2};
    expect_view(ds, NULL, t2, t3, vr23, rr23, 2);
    expect_view(ds, NULL, t2, t5, v5, r5, 1);         /* an intermediate SNAPSHOT clears the view */
    silt_view *v = NULL;
    assert_int_equal(silt_files_view(&v, ds, NULL, t3, t2), SILT_EINVAL);
    char msg[512];
    snprintf(msg, sizeof msg, "range %s..%s: START is after END", t3, t2);
    assert_string_equal(silt_error_last(), msg);

    /* cat: latest and as of a transaction */
    char out[4096];
    snprintf(out, sizeof out, "%s/cat.out", f->dir);
    FILE *fo = fopen(out, "wb");
    assert_int_equal(silt_files_cat(ds, "A", t2, fo), 0);
    assert_int_equal(silt_files_cat(ds, "D", NULL, fo), 0);
    fclose(fo);
    size_t len;
    char *got = tu_read_file(out, &len);
    assert_string_equal(got, "a-v1d-v1");
    free(got);
    assert_int_equal(silt_files_cat(ds, "A", NULL, stdout), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "file 'A' is not in the latest view of files1");

    /* the list: five transactions, oldest first */
    silt_txn_info *ti = NULL;
    size_t n = 0;
    assert_int_equal(silt_txn_list(&ti, &n, ds), 0);
    assert_int_equal(n, 5);
    const char *rids[] = {t1, t2, t3, t4, t5};
    const silt_txn_type types[] = {SILT_TXN_SNAPSHOT, SILT_TXN_APPEND, SILT_TXN_UPDATE, SILT_TXN_DELETE,
                                   SILT_TXN_SNAPSHOT};
    for (size_t i = 0; i < 5; i++) {
        assert_string_equal(ti[i].rid, rids[i]);
        assert_int_equal(ti[i].type, types[i]);
        assert_int_equal(ti[i].status, SILT_TXN_COMMITTED);
        assert_string_equal(ti[i].branch, "master");
        assert_int_equal(strlen(ti[i].block), SILT_MH_TEXT_LEN);
    }
    free(ti);
    /* the chain verifies; 1 Seed + 1 SetDataSchema + 5 AddData */
    assert_int_equal(silt_dataset_verify(ds, NULL, NULL), 0);
    silt_dataset_info info;
    assert_int_equal(silt_dataset_info_get(&info, ds), 0);
    assert_int_equal(info.num_blocks, 7);
    /* rows: T1 +A +A, T2 +A, T3 -C +C, T4 -R, T5 -R -R +A */
    assert_int_equal(info.num_records, 2 + 1 + 2 + 1 + 3);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    free(t5);
}

static void test_rules_and_errors(void **state)
{
    fx *f = *state;
    silt_dataset *ds = f->ds;
    const char *s1[] = {"dir/x.csv=1,2\n"};
    char *t1 = txn(f, ds, SILT_TXN_SNAPSHOT, s1, 1);
    char msg[512];

    /* one OPEN transaction per branch */
    char *r = NULL, *r2 = NULL;
    assert_int_equal(silt_txn_start(&r, ds, SILT_TXN_APPEND), 0);
    assert_int_equal(strlen(r), SILT_TXN_RID_LEN);
    assert_int_equal(strncmp(r, "ri.silt.main.transaction.", 25), 0);
    assert_int_equal(r[25 + 14], '4'); /* uuid v4 */
    assert_int_equal(silt_txn_start(&r2, ds, SILT_TXN_UPDATE), SILT_ECONFLICT);
    snprintf(msg, sizeof msg, "branch master of files1 already has an open transaction %s", r);
    assert_string_equal(silt_error_last(), msg);

    /* logical paths */
    const char *src = mkfile(f, "y.bin", "yy");
    assert_int_equal(silt_txn_put(ds, r, src, "../y"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid logical path '../y': '..' is not allowed");
    assert_int_equal(silt_txn_put(ds, r, src, "/abs"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid logical path '/abs': absolute paths are not allowed");
    assert_int_equal(silt_txn_put(ds, r, src, "a//b"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid logical path 'a//b': empty path segment");
    assert_int_equal(silt_txn_put(ds, r, src, "a/"), SILT_EINVAL);
    assert_int_equal(silt_txn_rm(ds, r, "dir/x.csv"), SILT_EINVAL);
    snprintf(msg, sizeof msg,
             "transaction %s is a APPEND transaction: only DELETE transactions remove files", r);
    assert_string_equal(silt_error_last(), msg);

    /* APPEND may not overwrite a file of the view */
    assert_int_equal(silt_txn_put(ds, r, src, "./dir/x.csv"), 0);
    assert_int_equal(silt_txn_commit(ds, r, NULL), SILT_EEXISTS);
    snprintf(msg, sizeof msg,
             "commit of %s: APPEND transaction %s would overwrite 'dir/x.csv', which is already in the view of "
             "files1 (use an UPDATE transaction)",
             r, r);
    assert_string_equal(silt_error_last(), msg);
    /* still OPEN: abort it; staged entries are ignored forever */
    int64_t before_abort = silt_time_to_ms(silt_time_now());
    assert_int_equal(silt_txn_abort(ds, r), 0);
    int64_t after_abort = silt_time_to_ms(silt_time_now());
    assert_int_equal(silt_txn_commit(ds, r, NULL), SILT_ECONFLICT);
    snprintf(msg, sizeof msg, "TransactionNotOpen: transaction %s is ABORTED", r);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(silt_txn_abort(ds, r), SILT_ECONFLICT);
    assert_int_equal(silt_txn_commit(ds, t1, NULL), SILT_ECONFLICT);
    snprintf(msg, sizeof msg, "TransactionNotOpen: transaction %s is COMMITTED", t1);
    assert_string_equal(silt_error_last(), msg);
    silt_txn_info ti;
    assert_int_equal(silt_txn_get(&ti, ds, r), 0);
    assert_int_equal(ti.status, SILT_TXN_ABORTED);
    assert_string_equal(ti.block, "");
    /* closed: the abort's time, RFC 3339 in milliseconds (".000" is not
     * written when the milliseconds are zero, so the length may be 20) */
    silt_time closed;
    assert_int_equal(silt_time_parse(ti.closed, &closed), 0);
    assert_true(silt_time_to_ms(closed) >= before_abort && silt_time_to_ms(closed) <= after_abort);

    /* DELETE of a file not in the view */
    char *d = NULL;
    assert_int_equal(silt_txn_start(&d, ds, SILT_TXN_DELETE), 0);
    assert_int_equal(silt_txn_put(ds, d, src, "z"), SILT_EINVAL);
    assert_int_equal(silt_txn_rm(ds, d, "nope.txt"), 0);
    assert_int_equal(silt_txn_commit(ds, d, NULL), SILT_ENOTFOUND);
    snprintf(msg, sizeof msg, "commit of %s: DELETE transaction %s: 'nope.txt' is not in the view of files1", d, d);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(silt_txn_abort(ds, d), 0);

    /* empty UPDATE is a valid transaction (no rows) */
    char *e = txn(f, ds, SILT_TXN_UPDATE, NULL, 0);
    const char *v[] = {"dir/x.csv=1,2\n"};
    const char *rv[] = {t1};
    expect_view(ds, NULL, NULL, NULL, v, rv, 1);
    silt_view *vw = NULL;
    assert_int_equal(silt_files_view(&vw, ds, e, NULL, NULL), 0);
    assert_int_equal(silt_view_count(vw), 1);
    assert_string_equal(silt_view_entry(vw, 0)->content_type, "text/csv");
    silt_view_free(vw);
    assert_int_equal(silt_files_view(&vw, ds, r, NULL, NULL), SILT_ENOTFOUND);
    snprintf(msg, sizeof msg, "transaction %s is not committed on branch master of files1", r);
    assert_string_equal(silt_error_last(), msg);

    /* a ledger dataset is not a files dataset */
    silt_dataset *led = NULL;
    assert_int_equal(silt_dataset_create(&led, f->ws, "ledger1", SILT_ROOT), 0);
    assert_int_equal(silt_txn_start(&r2, led, SILT_TXN_UPDATE), SILT_EINVAL);
    assert_string_equal(silt_error_last(),
                        "dataset 'ledger1' is not a files dataset (create it with 'silt new ledger1 --files')");
    silt_dataset_free(led);
    assert_int_equal(silt_dataset_verify(ds, NULL, NULL), 0);
    free(e);
    free(d);
    free(r);
    free(t1);
}

static void test_branches(void **state)
{
    fx *f = *state;
    silt_dataset *ds = f->ds;
    const char *s1[] = {"A=a"};
    char *t1 = txn(f, ds, SILT_TXN_SNAPSHOT, s1, 1);
    const char *s2[] = {"B=b"};
    char *t2 = txn(f, ds, SILT_TXN_APPEND, s2, 1);
    assert_int_equal(silt_branch_create(ds, "dev", NULL, NULL), 0);
    assert_int_equal(silt_branch_create(ds, "dev", NULL, NULL), SILT_EEXISTS);
    assert_string_equal(silt_error_last(), "branch dev of files1 already exists");
    assert_int_equal(silt_branch_create(ds, "old", NULL, t1), 0);
    /* the parent's later SNAPSHOT does not affect the branch */
    const char *s3[] = {"C=c"};
    char *t3 = txn(f, ds, SILT_TXN_SNAPSHOT, s3, 1);
    silt_dataset *dev = NULL, *old = NULL;
    assert_int_equal(silt_dataset_open(&dev, f->ws, "files1@dev"), 0);
    assert_int_equal(silt_dataset_open(&old, f->ws, "files1@old"), 0);
    const char *vd[] = {"A=a", "B=b"};
    const char *rd[] = {t1, t2};
    expect_view(dev, NULL, NULL, NULL, vd, rd, 2);
    const char *vo[] = {"A=a"};
    const char *ro[] = {t1};
    expect_view(old, NULL, NULL, NULL, vo, ro, 1);
    const char *vm[] = {"C=c"};
    const char *rm[] = {t3};
    expect_view(ds, NULL, NULL, NULL, vm, rm, 1);
    /* the branch continues incrementally on the parent's transactions */
    const char *s4[] = {"E=e"};
    char *t4 = txn(f, dev, SILT_TXN_APPEND, s4, 1);
    const char *vd2[] = {"A=a", "B=b", "E=e"};
    const char *rd2[] = {t1, t2, t4};
    expect_view(dev, NULL, NULL, NULL, vd2, rd2, 3);
    expect_view(ds, NULL, NULL, NULL, vm, rm, 1);
    assert_int_equal(silt_files_view(&(silt_view *){NULL}, ds, t4, NULL, NULL), SILT_ENOTFOUND);
    /* transactions of dev: inherited t1, t2 and its own t4 */
    silt_txn_info *ti = NULL;
    size_t n = 0;
    assert_int_equal(silt_txn_list(&ti, &n, dev), 0);
    assert_int_equal(n, 3);
    assert_string_equal(ti[0].rid, t1);
    assert_string_equal(ti[1].rid, t2);
    assert_string_equal(ti[2].rid, t4);
    assert_string_equal(ti[2].branch, "dev");
    free(ti);
    /* one OPEN transaction per branch, independently */
    char *ro1 = NULL, *ro2 = NULL;
    assert_int_equal(silt_txn_start(&ro1, dev, SILT_TXN_UPDATE), 0);
    assert_int_equal(silt_txn_start(&ro2, ds, SILT_TXN_UPDATE), 0);
    /* list */
    silt_branch_info *bi = NULL;
    assert_int_equal(silt_branch_list(&bi, &n, ds), 0);
    assert_int_equal(n, 3);
    assert_string_equal(bi[0].name, "master");
    assert_string_equal(bi[0].open_txn, ro2);
    assert_string_equal(bi[1].name, "dev");
    assert_string_equal(bi[1].open_txn, ro1);
    assert_int_equal(bi[1].num_blocks, 5); /* Seed, SetDataSchema, t1, t2, t4 */
    assert_string_equal(bi[2].name, "old");
    assert_string_equal(bi[2].open_txn, "");
    assert_int_equal(bi[2].num_blocks, 3);
    free(bi);
    /* delete rules */
    assert_int_equal(silt_branch_delete(ds, "master"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "branch master of files1 cannot be deleted");
    assert_int_equal(silt_branch_delete(ds, "dev"), SILT_ECONFLICT);
    char msg[512];
    snprintf(msg, sizeof msg, "branch dev of files1 has an open transaction %s; commit or abort it first", ro1);
    assert_string_equal(silt_error_last(), msg);
    assert_int_equal(silt_txn_abort(dev, ro1), 0);
    assert_int_equal(silt_txn_abort(ds, ro2), 0);
    assert_int_equal(silt_branch_delete(ds, "dev"), 0);
    assert_int_equal(silt_branch_delete(ds, "dev"), SILT_ENOTFOUND);
    silt_dataset *gone = NULL;
    assert_int_equal(silt_dataset_open(&gone, f->ws, "files1@dev"), SILT_ENOTFOUND);
    /* recreated from --from old: starts from old's head, not the stale summary */
    assert_int_equal(silt_branch_create(ds, "dev", "old", NULL), 0);
    silt_dataset_free(dev);
    assert_int_equal(silt_dataset_open(&dev, f->ws, "files1@dev"), 0);
    expect_view(dev, NULL, NULL, NULL, vo, ro, 1);
    assert_int_equal(silt_dataset_verify(dev, NULL, NULL), 0);
    assert_int_equal(silt_dataset_verify(ds, NULL, NULL), 0);
    silt_dataset_free(dev);
    silt_dataset_free(old);
    free(ro1);
    free(ro2);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
}

static void test_paths_and_types(void **state)
{
    (void)state;
    char *o = NULL;
    assert_int_equal(silt_files_path_normalize(&o, "./a/b.csv"), 0);
    assert_string_equal(o, "a/b.csv");
    free(o);
    assert_int_equal(silt_files_path_normalize(&o, ""), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid logical path '': empty");
    assert_int_equal(silt_files_path_normalize(&o, "a/./b"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid logical path 'a/./b': '.' segments are not allowed");
    assert_int_equal(silt_files_path_normalize(&o, "a\tb"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "invalid logical path 'a\tb': control characters are not allowed");
    assert_string_equal(silt_files_content_type("x/y.PDF"), "application/pdf");
    assert_string_equal(silt_files_content_type("data.parquet"), "application/vnd.apache.parquet");
    assert_string_equal(silt_files_content_type("README"), "application/octet-stream");
    assert_string_equal(silt_files_content_type(".csv"), "application/octet-stream");
    silt_txn_type t;
    assert_int_equal(silt_txn_type_parse(&t, "Snapshot"), 0);
    assert_int_equal(t, SILT_TXN_SNAPSHOT);
    assert_int_equal(silt_txn_type_parse(&t, "merge"), SILT_EINVAL);
    assert_string_equal(silt_error_last(),
                        "invalid transaction type 'merge' (use snapshot, append, update or delete)");
}

/* A crash after the ref compare-and-swap but before the record update:
 * the record says OPEN, the chain holds the commit; readers complete it. */
static void test_recover_after_crash(void **state)
{
    fx *f = *state;
    const char *s1[] = {"A=a"};
    char *t1 = txn(f, f->ds, SILT_TXN_SNAPSHOT, s1, 1);
    silt_txn_info before;
    assert_int_equal(silt_txn_get(&before, f->ds, t1), 0);
    silt_dataset_info di;
    assert_int_equal(silt_dataset_info_get(&di, f->ds), 0);
    char p[4096], m[4096], rec[1024];
    snprintf(p, sizeof p, "%s/.silt/datasets/%s/txn/%s", f->dir, di.id + 8, t1);
    snprintf(m, sizeof m, "%s/.silt/datasets/%s/txn/open-master", f->dir, di.id + 8);
    int n = snprintf(rec, sizeof rec,
                     "{\"rid\": \"%s\", \"type\": \"SNAPSHOT\", \"branch\": \"master\", \"status\": "
                     "\"OPEN\", \"created\": \"%s\", \"closed\": \"\", \"block\": \"\"}",
                     t1, before.created);
    assert_int_equal(tu_write_file(p, rec, (size_t)n), 0);
    assert_int_equal(tu_write_file(m, t1, strlen(t1)), 0);
    char ip[4200];
    snprintf(ip, sizeof ip, "%s.committing", p);
    assert_int_equal(tu_write_file(ip, "", 0), 0);
    /* a new start finds the marker, recovers the record, and proceeds */
    char *r = NULL;
    assert_int_equal(silt_txn_start(&r, f->ds, SILT_TXN_UPDATE), 0);
    silt_txn_info after;
    assert_int_equal(silt_txn_get(&after, f->ds, t1), 0);
    assert_int_equal(after.status, SILT_TXN_COMMITTED);
    assert_string_equal(after.block, before.block);
    assert_int_equal(silt_txn_commit(f->ds, t1, NULL), SILT_ECONFLICT);
    assert_int_equal(silt_txn_abort(f->ds, r), 0);
    const char *v[] = {"A=a"};
    const char *rv[] = {t1};
    expect_view(f->ds, NULL, NULL, NULL, v, rv, 1);
    free(r);
    free(t1);
}

/* ---- put lists ----------------------------------------------------------- */

/* "local>path" lines of a list, one per entry. */
static char *list_text(const silt_put_list *l)
{
    static char buf[8192];
    buf[0] = '\0';
    for (size_t i = 0; i < silt_put_list_count(l); i++) {
        size_t o = strlen(buf);
        snprintf(buf + o, sizeof buf - o, "%s>%s\n", silt_put_list_local(l, i), silt_put_list_path(l, i));
    }
    return buf;
}

/* Builds a list of the inputs (NULL-terminated) and returns its text, or
 * asserts the error code and returns the message. */
static const char *build(int code, const char *base, const char *as, const char *first, ...)
{
    const char *in[16];
    size_t n = 0;
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s && n < 16; s = va_arg(ap, const char *))
        in[n++] = s;
    va_end(ap);
    silt_put_list *l = NULL;
    int rc = silt_put_list_build(&l, in, n, base, as);
    if (rc != code)
        fprintf(stderr, "build %s: %d %s\n", first, rc, silt_error_last());
    assert_int_equal(rc, code);
    if (rc)
        return silt_error_last();
    assert_non_null(l);
    const char *t = list_text(l);
    silt_put_list_free(l);
    return t;
}

static void test_put_list(void **state)
{
    fx *f = *state;
    assert_int_equal(mkdir("t", 0755), 0);
    assert_int_equal(mkdir("t/b", 0755), 0);
    assert_int_equal(mkdir("t/a", 0755), 0);
    assert_int_equal(mkdir("t/a/.silt", 0755), 0); /* a workspace: skipped */
    assert_int_equal(mkdir("t/empty", 0755), 0);
    assert_int_equal(mkdir("e", 0755), 0);
    assert_int_equal(tu_write_file("t/a/1.csv", "1", 1), 0);
    assert_int_equal(tu_write_file("t/a/.silt/x", "x", 1), 0);
    assert_int_equal(tu_write_file("t/b/2.csv", "2", 1), 0);
    assert_int_equal(tu_write_file("t/top", "3", 1), 0);
    assert_int_equal(tu_write_file("one.txt", "4", 1), 0);

    /* directories recursively, paths relative to the working directory */
    assert_string_equal(build(0, NULL, NULL, "t", NULL), "t/a/1.csv>t/a/1.csv\nt/b/2.csv>t/b/2.csv\nt/top>t/top\n");
    assert_string_equal(build(0, NULL, NULL, "./t/", "one.txt", NULL),
                        "one.txt>one.txt\n./t/a/1.csv>t/a/1.csv\n./t/b/2.csv>t/b/2.csv\n./t/top>t/top\n");
    assert_string_equal(build(0, NULL, NULL, "t/b/../a", NULL), "t/b/../a/1.csv>t/a/1.csv\n");
    /* relative to a base, which may also name absolute inputs */
    assert_string_equal(build(0, "t", NULL, "t/a", "t/top", NULL), "t/a/1.csv>a/1.csv\nt/top>top\n");
    char abs[4200];
    snprintf(abs, sizeof abs, "%s/t/top", f->dir);
    char absbase[4200];
    snprintf(absbase, sizeof absbase, "%s/t", f->dir);
    char exp[8600];
    snprintf(exp, sizeof exp, "%s>top\n", abs);
    assert_string_equal(build(0, absbase, NULL, abs, NULL), exp);
    assert_string_equal(build(0, "t/", NULL, abs, NULL), exp);
    assert_string_equal(build(0, NULL, "x/y.csv", "t/top", NULL), "t/top>x/y.csv\n");

    /* errors: nothing is built */
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "t", "t/a/1.csv", NULL),
                        "inputs 't/a/1.csv' and 't/a/1.csv' both map to logical path 't/a/1.csv'");
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "one.txt", "./one.txt", NULL),
                        "inputs 'one.txt' and './one.txt' both map to logical path 'one.txt'");
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "../x", NULL),
                        "input '../x' is outside the base directory '.': give a base directory that contains it "
                        "(--base DIR) or the logical path (--as PATH)");
    assert_string_equal(build(SILT_EINVAL, "t", NULL, "one.txt", NULL),
                        "input 'one.txt' is outside the base directory 't': give a base directory that contains it "
                        "(--base DIR) or the logical path (--as PATH)");
    snprintf(exp, sizeof exp,
             "input '%s' is an absolute path: logical paths are relative; give a base directory (--base DIR) or "
             "the logical path (--as PATH)",
             abs);
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, abs, NULL), exp);
    assert_string_equal(build(SILT_ENOTFOUND, NULL, NULL, "nope", NULL), "input 'nope': No such file or directory");
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "e", NULL), "nothing to upload: 'e' contains no regular file");
    assert_string_equal(build(SILT_EINVAL, NULL, "x", "t", NULL),
                        "input 't' is a directory: a logical path given with --as names one file (use --base DIR "
                        "for a directory)");
    assert_string_equal(build(SILT_EINVAL, NULL, "../x", "one.txt", NULL),
                        "invalid logical path '../x': '..' is not allowed");
    assert_string_equal(build(SILT_EINVAL, "one.txt", NULL, "one.txt", NULL),
                        "base directory 'one.txt': not a directory");
    /* links: followed when named, refused inside a tree; no special files */
    assert_int_equal(symlink("../../one.txt", "t/b/link"), 0);
    assert_string_equal(build(0, NULL, NULL, "t/b/link", NULL), "t/b/link>t/b/link\n");
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "t", NULL),
                        "'t/b/link' is a symbolic link inside directory 't/b': links in a tree are not followed "
                        "(name its target as an input of its own, or remove it)");
    assert_int_equal(unlink("t/b/link"), 0);
    assert_int_equal(mkfifo("t/b/fifo", 0644), 0);
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "t", NULL),
                        "'t/b/fifo' is not a regular file (only regular files are uploaded)");
    assert_string_equal(build(SILT_EINVAL, NULL, NULL, "t/b/fifo", NULL),
                        "input 't/b/fifo' is not a regular file or a directory");
}

/* ---- uploads: all or nothing --------------------------------------------- */

/* Number of entries of <dataset>/<sub> (files only, names not starting
 * with '.' unless dot). */
static int count_dir(fx *f, const char *sub)
{
    silt_dataset_info di;
    assert_int_equal(silt_dataset_info_get(&di, f->ds), 0);
    char p[4200];
    snprintf(p, sizeof p, "%s/.silt/datasets/%s/%s", f->dir, di.id + 8, sub);
    DIR *d = opendir(p);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strncmp(e->d_name, "lock", 4) != 0 && strcmp(e->d_name, "objects.lock") != 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

static silt_put_list *list_of(const char *a, const char *b)
{
    const char *in[2] = {a, b};
    silt_put_list *l = NULL;
    assert_int_equal(silt_put_list_build(&l, in, b ? 2 : 1, NULL, NULL), 0);
    return l;
}

static void test_upload_all_or_nothing(void **state)
{
    fx *f = *state;
    assert_int_equal(tu_write_file("a.txt", "a1", 2), 0);
    silt_put_list *l = list_of("a.txt", NULL);
    char *t1 = NULL;
    char block[72];
    assert_int_equal(silt_txn_upload(&t1, block, f->ds, SILT_TXN_APPEND, l), 0);
    silt_put_list_free(l);
    silt_txn_info ti;
    assert_int_equal(silt_txn_get(&ti, f->ds, t1), 0);
    assert_int_equal(ti.status, SILT_TXN_COMMITTED);
    assert_string_equal(ti.block, block);
    assert_int_equal(ti.owner_pid, (long)getpid()); /* owned by this process, which is alive */
    assert_true(ti.owner_start > 0);
    assert_false(ti.abandoned);
    int data0 = count_dir(f, "data"), txn0 = count_dir(f, "txn");
    assert_int_equal(data0, 2); /* a1 + the slice */

    /* an OPEN user transaction stages the bytes "shared" */
    assert_int_equal(tu_write_file("shared.txt", "shared", 6), 0);
    char *user = NULL;
    silt_dataset *dev = NULL;
    assert_int_equal(silt_branch_create(f->ds, "dev", NULL, NULL), 0);
    assert_int_equal(silt_dataset_open(&dev, f->ws, "files1@dev"), 0);
    assert_int_equal(silt_txn_start(&user, dev, SILT_TXN_UPDATE), 0);
    assert_int_equal(silt_txn_put(dev, user, "shared.txt", NULL), 0);
    int data1 = count_dir(f, "data"), txn1 = count_dir(f, "txn");

    /* an APPEND that overwrites a.txt fails at commit: nothing stays, but
     * the object the user transaction staged is kept */
    assert_int_equal(tu_write_file("a.txt", "a2", 2), 0);
    assert_int_equal(tu_write_file("copy.txt", "shared", 6), 0);
    l = list_of("a.txt", "copy.txt");
    char *t2 = NULL;
    assert_int_equal(silt_txn_upload(&t2, NULL, f->ds, SILT_TXN_APPEND, l), SILT_EEXISTS);
    assert_null(t2);
    assert_non_null(strstr(silt_error_last(), "upload rolled back, nothing written: commit of "));
    assert_non_null(strstr(silt_error_last(), "would overwrite 'a.txt', which is already in the view of files1"));
    assert_int_equal(count_dir(f, "data"), data1); /* a2 removed, "shared" kept */
    assert_int_equal(count_dir(f, "txn"), txn1);
    silt_txn_info *v = NULL;
    size_t n = 0;
    assert_int_equal(silt_txn_list(&v, &n, f->ds), 0);
    assert_int_equal(n, 1);
    free(v);
    /* the same upload as UPDATE works; the user transaction still commits */
    assert_int_equal(silt_txn_upload(&t2, NULL, f->ds, SILT_TXN_UPDATE, l), 0);
    silt_put_list_free(l);
    assert_int_equal(silt_txn_commit(dev, user, NULL), 0);
    assert_int_equal(silt_dataset_verify(f->ds, NULL, NULL), 0);
    assert_int_equal(silt_dataset_verify(dev, NULL, NULL), 0);
    (void)data0;
    (void)txn0;
    /* a DELETE transaction cannot stage a list */
    char *d = NULL;
    assert_int_equal(silt_txn_start(&d, f->ds, SILT_TXN_DELETE), 0);
    l = list_of("a.txt", NULL);
    assert_int_equal(silt_txn_put_list(f->ds, d, l), SILT_EINVAL);
    char *t3 = NULL;
    assert_int_equal(silt_txn_upload(&t3, NULL, f->ds, SILT_TXN_DELETE, l), SILT_EINVAL);
    assert_null(t3);
    silt_put_list_free(l);
    assert_int_equal(silt_txn_abort(f->ds, d), 0);
    free(d);
    free(user);
    free(t1);
    free(t2);
    silt_dataset_free(dev);
}

/* ---- abandoned transactions ---------------------------------------------- */

/* Field 22 of /proc/<pid>/stat. */
static unsigned long long start_of(long pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *fp = fopen(p, "r");
    assert_non_null(fp);
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    char *s = strrchr(buf, ')') + 2;
    for (int field = 3; field < 22; field++)
        s = strchr(s, ' ') + 1;
    return strtoull(s, NULL, 10);
}

/* Writes an OPEN record of rid on master owned by (pid, start, host) and
 * makes it the branch's open transaction. */
static void plant_open(fx *f, const char *rid, long pid, unsigned long long start, const char *host)
{
    silt_dataset_info di;
    assert_int_equal(silt_dataset_info_get(&di, f->ds), 0);
    char dir[4200], p[4400], m[4400], rec[1024], boot[64] = "";
    snprintf(dir, sizeof dir, "%s/.silt/datasets/%s/txn", f->dir, di.id + 8);
    mkdir(dir, 0755);
    snprintf(p, sizeof p, "%s/%s", dir, rid);
    snprintf(m, sizeof m, "%s/open-master", dir);
    FILE *bf = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (bf) {
        if (!fgets(boot, sizeof boot, bf))
            boot[0] = '\0';
        fclose(bf);
        boot[strcspn(boot, "\n")] = '\0';
    }
    int n = snprintf(rec, sizeof rec,
                     "{\"rid\": \"%s\", \"type\": \"UPDATE\", \"branch\": \"master\", \"status\": \"OPEN\", "
                     "\"created\": \"2024-01-01T00:00:00.000Z\", \"closed\": \"\", \"block\": \"\", \"owner\": "
                     "{\"pid\": %ld, \"start\": %llu, \"host\": \"%s\", \"boot\": \"%s\"}}",
                     rid, pid, start, host, boot);
    assert_int_equal(tu_write_file(p, rec, (size_t)n), 0);
    assert_int_equal(tu_write_file(m, rid, strlen(rid)), 0);
}

static void test_abandoned(void **state)
{
    fx *f = *state;
    char host[256];
    assert_int_equal(gethostname(host, sizeof host), 0);
    const char *dead = "ri.silt.main.transaction.00000000-0000-4000-8000-000000000001";
    const char *recycled = "ri.silt.main.transaction.00000000-0000-4000-8000-000000000002";
    const char *remote = "ri.silt.main.transaction.00000000-0000-4000-8000-000000000003";
    const char *alive = "ri.silt.main.transaction.00000000-0000-4000-8000-000000000004";
    /* a process that is gone: a child that exited and was reaped */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    unsigned long long cstart = start_of((long)getpid()); /* any value: the pid is gone */
    assert_int_equal(waitpid(child, NULL, 0), child);
    plant_open(f, dead, (long)child, cstart, host);
    silt_txn_info ti;
    assert_int_equal(silt_txn_get(&ti, f->ds, dead), 0);
    assert_int_equal(ti.status, SILT_TXN_OPEN);
    assert_true(ti.abandoned);
    assert_int_equal(ti.owner_pid, (long)child);
    assert_string_equal(ti.owner_host, host);
    /* the next writer aborts it and proceeds */
    char *r = NULL;
    assert_int_equal(silt_txn_start(&r, f->ds, SILT_TXN_UPDATE), 0);
    assert_int_equal(silt_txn_get(&ti, f->ds, dead), 0);
    assert_int_equal(ti.status, SILT_TXN_ABORTED);
    assert_false(ti.abandoned);
    char why[512];
    snprintf(why, sizeof why, "abandoned: process %ld on host %s is gone", (long)child, host);
    assert_string_equal(ti.reason, why);
    /* a transaction started by the user is never abandoned */
    assert_int_equal(silt_txn_get(&ti, f->ds, r), 0);
    assert_int_equal(ti.owner_pid, 0);
    assert_false(ti.abandoned);
    char *r2 = NULL;
    assert_int_equal(silt_txn_start(&r2, f->ds, SILT_TXN_UPDATE), SILT_ECONFLICT);
    assert_int_equal(silt_txn_abort(f->ds, r), 0);
    free(r);

    /* a live pid with another start time: the pid was recycled */
    long me = (long)getpid();
    unsigned long long mine = start_of(me);
    plant_open(f, recycled, me, mine + 1, host);
    assert_int_equal(silt_txn_get(&ti, f->ds, recycled), 0);
    assert_true(ti.abandoned);
    /* recover aborts it and says so; a second run finds nothing */
    silt_txn_info *v = NULL;
    size_t n = 0;
    assert_int_equal(silt_txn_recover(&v, &n, f->ds, true), 0);
    assert_int_equal(n, 1);
    assert_string_equal(v[0].rid, recycled);
    assert_int_equal(v[0].status, SILT_TXN_ABORTED);
    snprintf(why, sizeof why, "abandoned: process %ld on host %s is gone", me, host);
    assert_string_equal(v[0].reason, why);
    free(v);
    assert_int_equal(silt_txn_recover(&v, &n, f->ds, true), 0);
    assert_int_equal(n, 0);
    free(v);

    /* an owner on another host, and a live owner, are not abandoned */
    plant_open(f, remote, (long)child, cstart, "some-other-host");
    assert_int_equal(silt_txn_get(&ti, f->ds, remote), 0);
    assert_false(ti.abandoned);
    assert_int_equal(silt_txn_start(&r2, f->ds, SILT_TXN_UPDATE), SILT_ECONFLICT);
    assert_int_equal(silt_txn_abort(f->ds, remote), 0);
    plant_open(f, alive, me, mine, host);
    assert_int_equal(silt_txn_get(&ti, f->ds, alive), 0);
    assert_false(ti.abandoned);
    assert_int_equal(silt_txn_recover(&v, &n, f->ds, true), 0);
    assert_int_equal(n, 0);
    free(v);
    assert_int_equal(silt_txn_start(&r2, f->ds, SILT_TXN_UPDATE), SILT_ECONFLICT);
    assert_int_equal(silt_txn_abort(f->ds, alive), 0);
    assert_int_equal(silt_dataset_verify(f->ds, NULL, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_and_types),
        cmocka_unit_test_setup_teardown(test_spec_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_branches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_after_crash, setup, teardown),
        cmocka_unit_test_setup_teardown(test_put_list, setup_in_dir, teardown_in_dir),
        cmocka_unit_test_setup_teardown(test_upload_all_or_nothing, setup_in_dir, teardown_in_dir),
        cmocka_unit_test_setup_teardown(test_abandoned, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
