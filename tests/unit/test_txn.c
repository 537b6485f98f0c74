/* test_txn.c — files datasets: transactions, views, branches (src/dataset/
 * files.c, txn.c, branch.c), replaying spec/foundry-datasets.md literally. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files/files.h"
#include "silt.h"
#include "testutil.h"
#include "util/multiformats.h"

typedef struct fx {
    char *dir;
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
        assert_int_equal(strlen(e->time), 24); /* 2026-01-01T00:00:00.000Z */
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
    assert_int_equal(silt_txn_abort(ds, r), 0);
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
    assert_int_equal(strlen(ti.closed), 24);

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths_and_types),
        cmocka_unit_test_setup_teardown(test_spec_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_branches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recover_after_crash, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
