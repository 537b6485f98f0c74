/* test_progress.c — the library's progress callbacks and cancellation
 * (silt_progress_fn): the counters a FilesGlob pull, an ingest, an upload
 * and verify report, and a callback asking to stop — a pull stops before
 * the next file with exactly the files before it committed, an ingest and
 * an upload commit nothing — with SILT_ECANCELED; and the output hook of
 * silt_sql: one report per chunk of 2048 rows with the bytes written so
 * far, a last one with total = done, and a stop after the rows written
 * (the output file removed, a table writing nothing). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "silt.h"

static char *g_dir;
static silt_workspace *g_ws;

#define MAXC 64
typedef struct calls {
    silt_progress v[MAXC];
    char item[MAXC][64];
    size_t n;
    uint64_t stop_at_done; /* ask to stop when done reaches it (0 = never) */
} calls;

static int record(void *ctx, const silt_progress *p)
{
    calls *c = ctx;
    if (c->n < MAXC) {
        c->v[c->n] = *p;
        snprintf(c->item[c->n], sizeof c->item[c->n], "%s", p->item ? p->item : "");
        c->v[c->n].item = NULL;
    }
    c->n++;
    return c->stop_at_done && p->done >= c->stop_at_done;
}

static void write_text(const char *rel, const char *text)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", g_dir, rel);
    assert_int_equal(tu_write_file(p, text, strlen(text)), 0);
}

static int setup(void **state)
{
    (void)state;
    g_dir = tu_mkdtemp();
    assert_int_equal(silt_workspace_init(g_dir), 0);
    assert_int_equal(silt_workspace_open(&g_ws, g_dir), 0);
    char p[1024];
    snprintf(p, sizeof p, "%s/drop", g_dir);
    assert_int_equal(mkdir(p, 0755), 0);
    for (int i = 1; i <= 5; i++) {
        char rel[64], text[64];
        snprintf(rel, sizeof rel, "drop/f-%d.csv", i);
        snprintf(text, sizeof text, "id\n%d\n", i); /* 5 bytes each */
        write_text(rel, text);
    }
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: glob\n  kind: Root\n  metadata:\n"
             "    - kind: SetPollingSource\n      fetch:\n        kind: FilesGlob\n        path: %s/drop/f-*.csv\n"
             "      read:\n        kind: Csv\n        header: true\n        ddlSchema: [id BIGINT]\n"
             "      merge:\n        kind: Append\n",
             g_dir);
    write_text("glob.yaml", yaml);
    write_text("push.yaml", "kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: push\n  kind: Root\n  metadata:\n"
                            "    - kind: AddPushSource\n      sourceName: default\n      read:\n        kind: Csv\n"
                            "        header: true\n        ddlSchema: [id BIGINT]\n      merge:\n        kind: Append\n");
    const char *m[] = {"glob.yaml", "push.yaml"};
    for (size_t i = 0; i < 2; i++) {
        char **names = NULL;
        snprintf(p, sizeof p, "%s/%s", g_dir, m[i]);
        assert_true(silt_dataset_add_manifest(&names, g_ws, p) >= 0);
        silt_strv_free(names);
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    silt_workspace_free(g_ws);
    tu_rmrf(g_dir);
    free(g_dir);
    return 0;
}

static void head_of(const char *name, char *out)
{
    silt_dataset *ds = NULL;
    silt_dataset_info info;
    assert_int_equal(silt_dataset_open(&ds, g_ws, name), 0);
    assert_int_equal(silt_dataset_info_get(&info, ds), 0);
    snprintf(out, 80, "%s", info.head ? info.head : "");
    silt_dataset_free(ds);
}

/* A pull over 5 files asked to stop once 2 are done: 2 AddData, the state
 * at the 2nd file, SILT_ECANCELED naming the 3rd; the next pull reads the
 * other 3. */
static void test_pull_cancel(void **state)
{
    (void)state;
    calls c = {.stop_at_done = 2};
    silt_pull_opts o = {.progress = record, .progress_ctx = &c};
    silt_pull_result r;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "glob"), 0);
    assert_int_equal(silt_dataset_pull(&r, ds, &o), SILT_ECANCELED);
    assert_string_equal(silt_error_last(), "pull 'glob': interrupted before 'f-3.csv'");
    assert_int_equal(r.num_ingests, 2);
    assert_int_equal(r.num_records, 2);
    assert_int_equal(c.n, 3); /* before f-1, before f-2, before f-3 (stop) */
    for (size_t i = 0; i < c.n; i++) {
        assert_string_equal(c.v[i].phase, "pull");
        assert_string_equal(c.v[i].unit, "files");
        assert_int_equal(c.v[i].done, i);
        assert_int_equal(c.v[i].total, 5);
        assert_int_equal(c.v[i].bytes, 5 * i);
        assert_int_equal(c.v[i].total_bytes, 25);
        assert_int_equal(c.v[i].records, i);
        char want[16];
        snprintf(want, sizeof want, "f-%zu.csv", i + 1);
        assert_string_equal(c.item[i], want);
    }
    assert_int_equal(silt_dataset_verify(ds, NULL, NULL), 0);
    silt_dataset_free(ds);
    /* the rest, reported to the end (a last call with no item) */
    calls d = {0};
    o.progress_ctx = &d;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "glob"), 0);
    assert_int_equal(silt_dataset_pull(&r, ds, &o), 0);
    assert_int_equal(r.num_ingests, 3);
    assert_int_equal(r.first_offset, 2);
    assert_int_equal(r.last_offset, 4);
    assert_int_equal(d.n, 4);
    assert_int_equal(d.v[3].done, 3);
    assert_int_equal(d.v[3].total, 3);
    assert_int_equal(d.v[3].records, 3);
    assert_string_equal(d.item[3], "");
    silt_dataset_free(ds);
}

/* An ingest asked to stop commits nothing; without a stop it reports the
 * file before the read and the records before the commit. */
static void test_ingest_cancel(void **state)
{
    (void)state;
    write_text("in.csv", "id\n1\n2\n3\n");
    char path[1024], h0[80], h1[80];
    snprintf(path, sizeof path, "%s/in.csv", g_dir);
    const char *files[1] = {path};
    const char *disp[1] = {"in.csv"};
    head_of("push", h0);
    calls c = {.stop_at_done = 1};
    silt_ingest_opts o = {.files = files, .display = disp, .nfiles = 1, .progress = record, .progress_ctx = &c};
    silt_ingest_result r;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "push"), 0);
    assert_int_equal(silt_dataset_ingest(&r, ds, &o), SILT_ECANCELED);
    assert_string_equal(silt_error_last(),
                        "ingest into 'push': interrupted before the commit (nothing was committed)");
    silt_dataset_free(ds);
    head_of("push", h1);
    assert_string_equal(h1, h0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.v[0].phase, "ingest");
    assert_int_equal(c.v[0].done, 0);
    assert_int_equal(c.v[0].total, 1);
    assert_int_equal(c.v[0].total_bytes, 9);
    assert_string_equal(c.item[0], "in.csv");
    assert_int_equal(c.v[1].done, 1);
    assert_int_equal(c.v[1].bytes, 9);
    assert_int_equal(c.v[1].records, 3);
    calls d = {0};
    o.progress_ctx = &d;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "push"), 0);
    assert_int_equal(silt_dataset_ingest(&r, ds, &o), 0);
    assert_int_equal(r.num_records, 3);
    silt_dataset_free(ds);
    assert_int_equal(d.n, 2);
}

/* An upload asked to stop after one stored file leaves nothing; verify
 * reports every block of its chain. */
static void test_upload_cancel_and_verify(void **state)
{
    (void)state;
    silt_dataset *fd = NULL;
    assert_int_equal(silt_files_create(&fd, g_ws, "raw"), 0);
    silt_dataset_free(fd);
    write_text("a.txt", "aaaa");
    write_text("b.txt", "bb");
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s/a.txt", g_dir);
    snprintf(b, sizeof b, "%s/b.txt", g_dir);
    const char *in[2] = {a, b};
    silt_put_list *l = NULL;
    assert_int_equal(silt_put_list_build(&l, in, 2, g_dir, NULL), 0);
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "raw"), 0);
    calls c = {.stop_at_done = 1};
    silt_dataset_set_progress(ds, record, &c);
    char *rid = NULL;
    assert_int_equal(silt_txn_upload(&rid, NULL, ds, SILT_TXN_UPDATE, l), SILT_ECANCELED);
    assert_string_equal(silt_error_last(), "upload rolled back, nothing written: interrupted before 'b.txt'");
    assert_null(rid);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.v[0].phase, "upload");
    assert_int_equal(c.v[0].total, 2);
    assert_int_equal(c.v[0].total_bytes, 6);
    assert_string_equal(c.item[0], "a.txt");
    assert_int_equal(c.v[1].bytes, 4);
    silt_txn_info *t = NULL;
    size_t nt = 0;
    assert_int_equal(silt_txn_list(&t, &nt, ds), 0);
    assert_int_equal(nt, 0);
    free(t);
    /* verify through the same handle: blocks done of the total */
    calls v = {0};
    silt_dataset_set_progress(ds, record, &v);
    assert_int_equal(silt_dataset_verify(ds, NULL, NULL), 0);
    assert_true(v.n >= 1);
    assert_string_equal(v.v[v.n - 1].phase, "verify");
    assert_int_equal(v.v[v.n - 1].done, v.v[v.n - 1].total);
    silt_dataset_set_progress(ds, NULL, NULL);
    silt_dataset_free(ds);
    silt_put_list_free(l);
}

/* Bytes of the first n lines of `text`. */
static uint64_t bytes_of_lines(const char *text, uint64_t n)
{
    const char *p = text;
    for (uint64_t i = 0; i < n && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return p ? (uint64_t)(p - text) : strlen(text);
}

static void test_sql_output_progress(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/q.csv", g_dir);
    calls c = {0};
    uint64_t rows = 99;
    silt_sql_opts o = {.format = "csv", .output = path, .rows_out = &rows, .progress = record, .progress_ctx = &c};
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i FROM range(5000)", &o), 0);
    assert_int_equal(rows, 5000);
    size_t len = 0;
    char *text = tu_read_file(path, &len);
    assert_non_null(text);
    assert_int_equal(c.n, 4);
    static const uint64_t done[] = {2048, 4096, 5000, 5000}, total[] = {0, 0, 0, 5000};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(c.v[i].phase, "sql");
        assert_string_equal(c.v[i].unit, "rows");
        assert_int_equal(c.v[i].done, done[i]);
        assert_int_equal(c.v[i].total, total[i]);
        assert_int_equal(c.v[i].bytes, bytes_of_lines(text, done[i] + 1)); /* + the header */
    }
    assert_int_equal(c.v[3].bytes, len);
    free(text);

    /* a stop after the second chunk: SILT_ECANCELED, the file removed */
    memset(&c, 0, sizeof c);
    c.stop_at_done = 4096;
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i FROM range(100000)", &o), SILT_ECANCELED);
    assert_string_equal(silt_error_last(), "interrupted");
    assert_int_equal(rows, 4096);
    assert_int_equal(c.n, 2);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);

    /* the same to a stream: exactly the rows written are there */
    FILE *f = tmpfile();
    assert_non_null(f);
    memset(&c, 0, sizeof c);
    c.stop_at_done = 2048;
    silt_sql_opts so = {.format = "ndjson", .out = f, .rows_out = &rows, .progress = record, .progress_ctx = &c};
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i FROM range(100000)", &so), SILT_ECANCELED);
    assert_int_equal(rows, 2048);
    assert_int_equal(ftell(f), (long)c.v[0].bytes);
    fclose(f);

    /* a table: the rows rendered; a stop writes nothing */
    f = tmpfile();
    assert_non_null(f);
    memset(&c, 0, sizeof c);
    so.format = "table";
    so.out = f;
    c.stop_at_done = 2048;
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i FROM range(5000)", &so), SILT_ECANCELED);
    assert_int_equal(rows, 0);
    assert_int_equal(ftell(f), 0);
    assert_int_equal(c.v[0].bytes, 10 + 90 * 2 + 900 * 3 + 1048 * 4); /* the digits of 0..2047 */
    /* a table of no rows: one report, total = done = 0 */
    memset(&c, 0, sizeof c);
    c.stop_at_done = 0;
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i FROM range(0)", &so), 0);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.v[0].done, 0);
    assert_int_equal(c.v[0].total, 0);
    assert_true(ftell(f) > 0);
    fclose(f);
}

/* Stops at the first report of a Parquet export's size (unit ""). */
static int stop_on_size(void *ctx, const silt_progress *p)
{
    record(ctx, p);
    return p->unit && !p->unit[0];
}

/* A Parquet export: sizes from the ticker thread (unit "", growing), then
 * one report of the rows with the final size; a stop interrupts DuckDB. */
static void test_parquet_progress(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof path, "%s/q.parquet", g_dir);
    calls c = {0};
    uint64_t rows = 99;
    silt_sql_opts o = {.format = "parquet", .output = path, .rows_out = &rows, .progress = record, .progress_ctx = &c};
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i FROM range(1000)", &o), 0);
    assert_int_equal(rows, 1000);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(c.n >= 1 && c.n <= MAXC);
    const silt_progress *last = &c.v[c.n - 1];
    assert_string_equal(last->phase, "sql");
    assert_string_equal(last->unit, "rows");
    assert_int_equal(last->done, 1000);
    assert_int_equal(last->total, 1000);
    assert_int_equal(last->bytes, (uint64_t)st.st_size);
    for (size_t i = 0; i + 1 < c.n; i++) {
        assert_string_equal(c.v[i].unit, "");
        assert_true(c.v[i].bytes <= (i + 2 < c.n ? c.v[i + 1].bytes : last->bytes));
    }

    /* stopped at the first size report: SILT_ECANCELED, the file removed */
    memset(&c, 0, sizeof c);
    o.progress = stop_on_size;
    assert_int_equal(silt_sql(g_ws, "SELECT range AS i, repeat('x', 40) || range AS s FROM range(200000000)", &o),
                     SILT_ECANCELED);
    assert_string_equal(silt_error_last(), "interrupted");
    assert_int_equal(rows, 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.v[0].unit, "");
    assert_int_equal(stat(path, &st), -1);

    /* a text result still being computed: after 1 s one report (unit "",
     * 0 bytes); a stop interrupts the query, nothing is written */
    FILE *f = tmpfile();
    assert_non_null(f);
    memset(&c, 0, sizeof c);
    silt_sql_opts so = {.format = "csv", .out = f, .rows_out = &rows, .progress = stop_on_size, .progress_ctx = &c};
    assert_int_equal(silt_sql(g_ws, "SELECT sum(range * 7 % 13) AS s FROM range(3000000000)", &so), SILT_ECANCELED);
    assert_string_equal(silt_error_last(), "interrupted");
    assert_int_equal(rows, 0);
    assert_int_equal(c.n, 1);
    assert_string_equal(c.v[0].unit, "");
    assert_int_equal(c.v[0].bytes, 0);
    assert_int_equal(ftell(f), 0);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pull_cancel),
        cmocka_unit_test(test_ingest_cancel),
        cmocka_unit_test(test_upload_cancel_and_verify),
        cmocka_unit_test(test_sql_output_progress),
        cmocka_unit_test(test_parquet_progress),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
