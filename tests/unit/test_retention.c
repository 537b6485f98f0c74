/* test_retention.c — retention marks, gc and the purge record (gc.c,
 * retention.c): the spec's worked example with exact counts, unmark, and a
 * property test with random histories and branches: after every gc, every
 * file of every retained view can be read and verification passes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "silt.h"

typedef struct fx {
    char *dir;
    silt_workspace *ws;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    f->dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(f->dir), 0);
    assert_int_equal(silt_workspace_open(&f->ws, f->dir), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;
    silt_workspace_free(f->ws);
    tu_rmrf(f->dir);
    free(f->dir);
    free(f);
    return 0;
}

/* Writes `content` to a local file and puts it as `path`. */
static void put(fx *f, silt_dataset *ds, const char *rid, const char *path, const char *content)
{
    char local[1024];
    snprintf(local, sizeof local, "%s/in.tmp", f->dir);
    assert_int_equal(tu_write_file(local, content, strlen(content)), 0);
    assert_int_equal(silt_txn_put(ds, rid, local, path), 0);
}

static char *txn(fx *f, silt_dataset *ds, silt_txn_type t, const char *const *paths, const char *const *contents)
{
    char *rid = NULL;
    assert_int_equal(silt_txn_start(&rid, ds, t), 0);
    for (size_t i = 0; paths[i]; i++) {
        if (t == SILT_TXN_DELETE)
            assert_int_equal(silt_txn_rm(ds, rid, paths[i]), 0);
        else
            put(f, ds, rid, paths[i], contents[i]);
    }
    assert_int_equal(silt_txn_commit(ds, rid, NULL), 0);
    return rid;
}

static void quiet(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "verify: %s\n", line);
}

static void test_spec_example(void **state)
{
    fx *f = *state;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_files_create(&ds, f->ws, "ex"), 0);
    char *t1 = txn(f, ds, SILT_TXN_SNAPSHOT, (const char *[]){"A", "B", NULL}, (const char *[]){"a", "b"});
    char *t2 = txn(f, ds, SILT_TXN_APPEND, (const char *[]){"C", NULL}, (const char *[]){"c"});
    char *t3 = txn(f, ds, SILT_TXN_UPDATE, (const char *[]){"A", NULL}, (const char *[]){"a'"});
    char *t4 = txn(f, ds, SILT_TXN_DELETE, (const char *[]){"B", NULL}, NULL);
    char *t5 = txn(f, ds, SILT_TXN_SNAPSHOT, (const char *[]){"D", NULL}, (const char *[]){"d"});

    /* no policy: nothing is marked */
    silt_retention_mark *m = NULL;
    size_t n = 9;
    assert_int_equal(silt_retention_apply(&m, &n, ds, false), 0);
    assert_int_equal(n, 0);
    free(m);

    assert_int_equal(silt_retention_set(ds, NULL, 0), 0);
    silt_retention_policy *p = NULL;
    assert_int_equal(silt_retention_get(&p, &n, ds), 0);
    assert_int_equal(n, 1);
    assert_string_equal(p[0].branch, "");
    assert_int_equal(p[0].keep_days, 0);
    free(p);

    /* dry run stores nothing */
    assert_int_equal(silt_retention_apply(&m, &n, ds, true), 0);
    assert_int_equal(n, 3);
    free(m);
    assert_int_equal(silt_retention_marks(&m, &n, ds), 0);
    assert_int_equal(n, 0);
    free(m);

    /* t1 (A, B), t2 (C), t3 (A') are in no retained view; t4 wrote no files */
    assert_int_equal(silt_retention_apply(&m, &n, ds, false), 0);
    assert_int_equal(n, 3);
    assert_string_equal(m[0].rid, t1);
    assert_int_equal(m[0].num_files, 2);
    assert_int_equal(m[0].bytes, 2);
    assert_string_equal(m[0].branch, "master");
    assert_string_equal(m[1].rid, t2);
    assert_string_equal(m[2].rid, t3);
    assert_int_equal(m[2].bytes, 2);
    free(m);

    /* unmark t2: held, never marked again */
    assert_int_equal(silt_retention_unmark(ds, t2), 1);
    assert_int_equal(silt_retention_unmark(ds, t2), SILT_ENOTFOUND);
    char want[160];
    snprintf(want, sizeof want, "transaction %s is not marked in ex", t2);
    assert_string_equal(silt_error_last(), want);

    silt_gc_result r;
    silt_gc_opts o = {.grace_seconds = 0};
    assert_int_equal(silt_gc(&r, ds, &o), 0);
    assert_int_equal(r.marked, 2);
    assert_int_equal(r.transactions_purged, 2);
    assert_int_equal(r.objects_deleted, 3); /* a, b, a' */
    assert_int_equal(r.bytes_deleted, 4);
    assert_int_equal(silt_retention_marks(&m, &n, ds), 0);
    assert_int_equal(n, 0);
    free(m);

    /* the latest view is intact; the old view reports purged objects */
    FILE *null = fopen("/dev/null", "w");
    assert_int_equal(silt_files_cat(ds, "D", NULL, null), 0);
    assert_int_equal(silt_files_cat(ds, "C", t2, null), 0);
    silt_view *v = NULL;
    assert_int_equal(silt_files_view(&v, ds, t3, NULL, NULL), 0);
    assert_int_equal(silt_view_count(v), 3);
    char rid[64];
    assert_int_equal(silt_files_purged(rid, ds, silt_view_find(v, "A")->content_hash), 1);
    assert_string_equal(rid, t3);
    assert_int_equal(silt_files_purged(rid, ds, silt_view_find(v, "B")->content_hash), 1);
    assert_string_equal(rid, t1);
    assert_int_equal(silt_files_purged(rid, ds, silt_view_find(v, "C")->content_hash), 0);
    assert_string_equal(rid, "");
    silt_view_free(v);
    fclose(null);
    assert_int_equal(silt_dataset_verify(ds, quiet, NULL), 0);

    /* a second gc has nothing left to do */
    assert_int_equal(silt_gc(&r, ds, &o), 0);
    assert_int_equal(r.transactions_purged, 0);
    assert_int_equal(r.objects_deleted, 0);
    free(t1);
    free(t2);
    free(t3);
    free(t4);
    free(t5);
    silt_dataset_free(ds);
}

/* ---- property test ------------------------------------------------------------ */

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

/* Every file of every retained view of every branch can be read. */
static void check_retained(fx *f, const char *name)
{
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, f->ws, name), 0);
    silt_branch_info *br = NULL;
    size_t nb = 0;
    assert_int_equal(silt_branch_list(&br, &nb, ds), 0);
    silt_retention_policy *pol = NULL;
    size_t np = 0;
    assert_int_equal(silt_retention_get(&pol, &np, ds), 0);
    FILE *null = fopen("/dev/null", "w");
    for (size_t b = 0; b < nb; b++) {
        int64_t days = -1; /* no policy */
        for (size_t k = 0; k < np; k++)
            if (pol[k].branch[0] == '\0' && days < 0)
                days = pol[k].keep_days;
        for (size_t k = 0; k < np; k++)
            if (strcmp(pol[k].branch, br[b].name) == 0)
                days = pol[k].keep_days;
        char ref[256];
        snprintf(ref, sizeof ref, "%s@%s", name, br[b].name);
        silt_dataset *bd = NULL;
        assert_int_equal(silt_dataset_open(&bd, f->ws, ref), 0);
        silt_txn_info *t = NULL;
        size_t nt = 0;
        assert_int_equal(silt_txn_list(&t, &nt, bd), 0);
        /* latest view (NULL) + every committed view when days != 0 (all commits are recent) */
        for (size_t k = 0; k <= nt; k++) {
            const char *at = k == nt ? NULL : t[k].rid;
            if (at && (days == 0 || t[k].status != SILT_TXN_COMMITTED))
                continue;
            silt_view *v = NULL;
            int rc = silt_files_view(&v, bd, at, NULL, NULL);
            if (rc == SILT_ENOTFOUND) { /* committed on another branch (not inherited) */
                continue;
            }
            assert_int_equal(rc, 0);
            for (size_t i = 0; i < silt_view_count(v); i++) {
                rc = silt_files_cat(bd, silt_view_entry(v, i)->path, at, null);
                if (rc)
                    fail_msg("%s: cat '%s' at %s: %s", ref, silt_view_entry(v, i)->path, at ? at : "latest",
                             silt_error_last());
            }
            silt_view_free(v);
        }
        free(t);
        silt_dataset_free(bd);
    }
    fclose(null);
    free(pol);
    free(br);
    assert_int_equal(silt_dataset_verify(ds, quiet, NULL), 0);
    silt_dataset_free(ds);
}

static void random_history(fx *f, unsigned seed)
{
    char name[32];
    snprintf(name, sizeof name, "p%u", seed);
    silt_dataset *ds = NULL;
    assert_int_equal(silt_files_create(&ds, f->ws, name), 0);
    silt_dataset_free(ds);
    unsigned s = seed;
    char branches[6][16] = {"master"};
    size_t nbr = 1;
    char open_rid[6][64] = {{0}};
    char commits[64][64];
    size_t ncommits = 0;
    for (int step = 0; step < 28; step++) {
        unsigned op = rnd(&s) % 10;
        size_t bi = rnd(&s) % nbr;
        char ref[64];
        snprintf(ref, sizeof ref, "%s@%s", name, branches[bi]);
        assert_int_equal(silt_dataset_open(&ds, f->ws, ref), 0);
        if (op < 6) { /* a transaction: commit, abort, or left open for a while */
            if (open_rid[bi][0]) {
                int rc = rnd(&s) % 3 ? silt_txn_commit(ds, open_rid[bi], NULL) : silt_txn_abort(ds, open_rid[bi]);
                if (rc && rc != SILT_EEXISTS && rc != SILT_ENOTFOUND)
                    fail_msg("closing %s: %s", open_rid[bi], silt_error_last());
                open_rid[bi][0] = '\0';
            } else {
                silt_txn_type t = (silt_txn_type)(rnd(&s) % 4);
                char *rid = NULL;
                assert_int_equal(silt_txn_start(&rid, ds, t), 0);
                silt_view *v = NULL;
                assert_int_equal(silt_files_view(&v, ds, NULL, NULL, NULL), 0);
                unsigned nf = 1 + rnd(&s) % 3;
                for (unsigned i = 0; i < nf; i++) {
                    if (t == SILT_TXN_DELETE) {
                        if (silt_view_count(v) == 0)
                            break;
                        const silt_file_entry *e = silt_view_entry(v, rnd(&s) % silt_view_count(v));
                        assert_int_equal(silt_txn_rm(ds, rid, e->path), 0);
                    } else {
                        char path[16], content[32];
                        snprintf(path, sizeof path, "f%u.txt", rnd(&s) % 6);
                        snprintf(content, sizeof content, "content %u", rnd(&s) % 8);
                        if (t == SILT_TXN_APPEND && silt_view_find(v, path))
                            continue;
                        put(f, ds, rid, path, content);
                    }
                }
                silt_view_free(v);
                unsigned fate = rnd(&s) % 6;
                if (fate == 0) {
                    assert_int_equal(silt_txn_abort(ds, rid), 0);
                } else if (fate == 1) {
                    snprintf(open_rid[bi], 64, "%s", rid);
                } else {
                    int rc = silt_txn_commit(ds, rid, NULL);
                    if (rc && rc != SILT_EEXISTS && rc != SILT_ENOTFOUND)
                        fail_msg("commit: %s", silt_error_last());
                    if (rc == 0 && ncommits < 64)
                        snprintf(commits[ncommits++], 64, "%s", rid);
                    if (rc)
                        assert_int_equal(silt_txn_abort(ds, rid), 0);
                }
                free(rid);
            }
        } else if (op == 6 && nbr < 6) { /* a branch from a branch or a transaction */
            char bn[16];
            snprintf(bn, sizeof bn, "b%zu", nbr);
            const char *at = ncommits && rnd(&s) % 2 ? commits[rnd(&s) % ncommits] : NULL;
            int rc = silt_branch_create(ds, bn, NULL, at);
            if (rc == 0)
                snprintf(branches[nbr++], 16, "%s", bn);
            else
                assert_int_equal(rc, SILT_ENOTFOUND); /* rid not on this branch */
        } else if (op == 7) { /* a retention policy */
            unsigned k = rnd(&s) % 3;
            assert_int_equal(silt_retention_set(ds, rnd(&s) % 2 ? NULL : branches[bi], k == 2 ? 1 : 0), 0);
        } else { /* gc, maybe after an unmark */
            silt_retention_mark *m = NULL;
            size_t n = 0;
            assert_int_equal(silt_retention_apply(&m, &n, ds, false), 0);
            if (n && rnd(&s) % 4 == 0)
                assert_int_equal(silt_retention_unmark(ds, m[rnd(&s) % n].rid), 1);
            free(m);
            silt_gc_result r;
            silt_gc_opts o = {.grace_seconds = 0};
            assert_int_equal(silt_gc(&r, ds, &o), 0);
            silt_dataset_free(ds);
            ds = NULL;
            check_retained(f, name);
        }
        silt_dataset_free(ds);
    }
    /* open transactions survived every gc: they still commit */
    for (size_t b = 0; b < nbr; b++) {
        if (!open_rid[b][0])
            continue;
        char ref[64];
        snprintf(ref, sizeof ref, "%s@%s", name, branches[b]);
        assert_int_equal(silt_dataset_open(&ds, f->ws, ref), 0);
        int rc = silt_txn_commit(ds, open_rid[b], NULL);
        if (rc && rc != SILT_EEXISTS && rc != SILT_ENOTFOUND)
            fail_msg("late commit: %s", silt_error_last());
        silt_dataset_free(ds);
    }
    assert_int_equal(silt_dataset_open(&ds, f->ws, name), 0);
    assert_int_equal(silt_retention_set(ds, NULL, 0), 0);
    silt_gc_result r;
    silt_gc_opts o = {.grace_seconds = 0};
    assert_int_equal(silt_gc(&r, ds, &o), 0);
    silt_dataset_free(ds);
    check_retained(f, name);
}

static void test_property(void **state)
{
    fx *f = *state;
    unsigned seeds = 3;
    const char *env = getenv("SILT_RETENTION_SEEDS");
    if (env)
        seeds = (unsigned)atoi(env);
    for (unsigned seed = 1; seed <= seeds; seed++)
        random_history(f, seed * 7919u);
}

static void test_policy_errors(void **state)
{
    fx *f = *state;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_files_create(&ds, f->ws, "pe"), 0);
    assert_int_equal(silt_retention_set(ds, NULL, -1), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "retention of pe: --keep-days must be 0..1000000, got -1");
    assert_int_equal(silt_retention_set(ds, "../x", 3), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "retention of pe: invalid branch name '../x'");
    assert_int_equal(silt_retention_set(ds, "dev", 3), 0);
    assert_int_equal(silt_retention_set(ds, NULL, 7), 0);
    assert_int_equal(silt_retention_set(ds, "dev", 2), 0);
    silt_retention_policy *p = NULL;
    size_t n = 0;
    assert_int_equal(silt_retention_get(&p, &n, ds), 0);
    assert_int_equal(n, 2);
    assert_string_equal(p[0].branch, "");
    assert_int_equal(p[0].keep_days, 7);
    assert_string_equal(p[1].branch, "dev");
    assert_int_equal(p[1].keep_days, 2);
    free(p);
    silt_dataset_free(ds);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spec_example, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_property, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
