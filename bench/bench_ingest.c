/* bench_ingest.c — data plane benchmarks, side by side with the raw engine.
 *
 * Generates the inputs with the engine itself (N rows of CSV with a date, two
 * strings, two integers and two floats — ~840 MB for 10M rows), then measures
 * in one run:
 *   raw      DuckDB's own COPY (FROM read_csv(…)) TO '….parquet' (baseline)
 *   append   `silt ingest` of the CSV into an Append dataset
 *   snapshot `silt ingest` of snapshots against N rows of state with 1%
 *            changed, 0.1% removed, 0.1% added; rounds 2..R, ratio R / 2
 *   ledger   `silt ingest` of N rows of which half are already present
 *   sql      `silt sql` aggregate vs the same query by DuckDB over the same
 *            Parquet files
 * Each silt run is a separate process; its peak RSS comes from wait4().
 *
 * Usage: bench_ingest SILT_BINARY [ROWS=10000000] [SNAPSHOT_ROUNDS=10]
 * Prints a Markdown table for docs/performance.md.
 */
#include "engine/engine.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *g_silt, *g_ws;

/* Runs silt with args; returns wall seconds, peak RSS in MiB via *rss. */
static double run_silt(double *rss, const char *const *args, const char *out_path)
{
    const char *argv[32];
    int n = 0;
    argv[n++] = g_silt;
    argv[n++] = "--workspace";
    argv[n++] = g_ws;
    for (int i = 0; args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    double t0 = now_s();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(out_path ? out_path : "/dev/null", "w", stdout))
            _exit(127);
        execv(g_silt, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    double t = now_s() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "silt %s failed\n", args[0]);
        exit(1);
    }
    if (rss)
        *rss = ru.ru_maxrss / 1024.0;
    return t;
}

static void must(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", what, silt_error_last());
        exit(1);
    }
}

static double exec_timed(silt_engine *e, const char *sql)
{
    double t0 = now_s();
    must(silt_engine_exec(e, sql), sql);
    return now_s() - t0;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

static const char *COLUMNS_SCHEMA =
    "        fields:\n"
    "        - {name: id, type: {kind: Int64}}\n"
    "        - {name: day, type: {kind: Date}}\n"
    "        - {name: name, type: {kind: String}}\n"
    "        - {name: category, type: {kind: String}}\n"
    "        - {name: quantity, type: {kind: Int64}}\n"
    "        - {name: price, type: {kind: Float64}}\n"
    "        - {name: score, type: {kind: Float64}}\n";

static void manifest(const char *dir, const char *name, const char *merge)
{
    char path[4096], text[8192];
    snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
    snprintf(text, sizeof text,
             "kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Root\n  metadata:\n"
             "  - kind: AddPushSource\n    sourceName: bench\n    read:\n      kind: Csv\n      header: true\n"
             "      schema:\n%s    merge:\n%s",
             name, COLUMNS_SCHEMA, merge);
    write_file(path, text);
    const char *args[] = {"add", path, NULL};
    run_silt(NULL, args, NULL);
}

/* CSV with ids [lo, hi) and a "version" that changes some rows' values. */
static void gen_csv(silt_engine *e, const char *path, long lo, long hi, int version, double change_frac)
{
    char sql[16384];
    snprintf(sql, sizeof sql,
             "COPY (SELECT i AS id, DATE '2020-01-01' + CAST(i %% 1000 AS INTEGER) AS day, "
             "'name-' || CAST(i AS VARCHAR) AS name, 'category-' || CAST(i %% 37 AS VARCHAR) AS category, "
             "CAST(i %% 100000 + CASE WHEN hash(i) %% 100000 < %ld THEN %d ELSE 0 END AS BIGINT) AS quantity, "
             "CAST(i %% 977 AS DOUBLE) / 7.0 AS price, CAST(i %% 1013 AS DOUBLE) / 3.0 AS score "
             "FROM range(%ld, %ld) t(i)) TO '%s' (FORMAT csv, HEADER true)",
             (long)(change_frac * 100000), version, lo, hi, path);
    must(silt_engine_exec(e, sql), "generate csv");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_ingest SILT_BINARY [ROWS] [SNAPSHOT_ROUNDS]\n");
        return 2;
    }
    g_silt = argv[1];
    long rows = argc > 2 ? atol(argv[2]) : 10000000L;
    int rounds = argc > 3 ? atoi(argv[3]) : 10;
    if (rounds < 3)
        rounds = 3;
    char tmpl[] = "/tmp/silt-bench-ingest-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return 1;
    g_ws = dir;
    silt_engine *e;
    silt_engine_opts eo = {.spill_dir = NULL, .memory_limit = "4GB"};
    must(silt_engine_open(&e, &eo), "engine");

    char csv[4096], raw[4096];
    snprintf(csv, sizeof csv, "%s/input.csv", dir);
    snprintf(raw, sizeof raw, "%s/raw.parquet", dir);
    double tg = now_s();
    gen_csv(e, csv, 0, rows, 0, 0.0);
    tg = now_s() - tg;
    struct stat_sz {
        long long b;
    } sz = {0};
    FILE *f = fopen(csv, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        sz.b = ftell(f);
        fclose(f);
    }

    /* baseline: the raw engine conversion */
    char sql[16384];
    snprintf(sql, sizeof sql, "COPY (FROM read_csv('%s')) TO '%s' (FORMAT parquet)", csv, raw);
    double t_raw = exec_timed(e, sql);
    silt_engine_free(e);

    {
        const char *args[] = {"init", dir, NULL};
        (void)args;
        char cmd[16384];
        snprintf(cmd, sizeof cmd, "'%s' init '%s' >/dev/null", g_silt, dir);
        if (system(cmd) != 0)
            return 1;
    }

    /* append */
    manifest(dir, "append", "      kind: Append\n");
    double rss_append;
    const char *a_args[] = {"ingest", "append", csv, NULL};
    double t_append = run_silt(&rss_append, a_args, NULL);

    /* snapshot: round 1 = full load, then rounds with changes */
    manifest(dir, "snap", "      kind: Snapshot\n      primaryKey: [id]\n");
    double *t_snap = calloc((size_t)rounds + 1, sizeof *t_snap);
    double rss_snap = 0;
    must(silt_engine_open(&e, &eo), "engine");
    for (int r = 1; r <= rounds; r++) {
        char snap[4096];
        snprintf(snap, sizeof snap, "%s/snap-%d.csv", dir, r);
        /* round r: ids shifted by 0.1% per round (0.1% removed, 0.1% added), 1% changed */
        long shift = (long)(rows * 0.001) * (r - 1);
        gen_csv(e, snap, shift, rows + shift, r, r == 1 ? 0.0 : 0.01);
        const char *s_args[] = {"ingest", "snap", snap, NULL};
        double rss;
        t_snap[r] = run_silt(&rss, s_args, NULL);
        if (rss > rss_snap)
            rss_snap = rss;
        unlink(snap);
    }

    /* ledger: first half, then everything (half already present) */
    manifest(dir, "ledger", "      kind: Ledger\n      primaryKey: [id]\n");
    char half[4096];
    snprintf(half, sizeof half, "%s/half.csv", dir);
    gen_csv(e, half, 0, rows / 2, 0, 0.0);
    const char *l1[] = {"ingest", "ledger", half, NULL};
    run_silt(NULL, l1, NULL);
    double rss_ledger;
    const char *l2[] = {"ingest", "ledger", csv, NULL};
    double t_ledger = run_silt(&rss_ledger, l2, NULL);

    /* sql aggregate: silt sql vs the engine over the same slice files */
    const char *q_args[] = {"sql", "SELECT category, count(*), sum(quantity), avg(price) FROM append GROUP BY 1 ORDER BY 1",
                            "--format", "csv", NULL};
    double rss_sql;
    double t_sql = run_silt(&rss_sql, q_args, NULL);
    char files[4096];
    snprintf(files, sizeof files, "%s/.silt/datasets/*/data/*", dir);
    /* only the append dataset's slices: find its directory via its alias */
    char cmd[16384], adir[4096] = "";
    snprintf(cmd, sizeof cmd, "grep -lx append %s/.silt/datasets/*/info/alias", dir);
    FILE *p = popen(cmd, "r");
    if (p && fgets(adir, sizeof adir, p)) {
        adir[strcspn(adir, "\n")] = '\0';
        char *slash = strstr(adir, "/info/alias");
        if (slash)
            *slash = '\0';
    }
    if (p)
        pclose(p);
    snprintf(sql, sizeof sql,
             "SELECT category, count(*), sum(quantity), avg(price) FROM read_parquet('%s/data/*') GROUP BY 1 "
             "ORDER BY 1",
             adir);
    double t_duck = exec_timed(e, sql);
    silt_engine_free(e);

    printf("| benchmark (%ld rows, %.0f MB CSV) | silt | raw engine | ratio | target | peak RSS |\n", rows,
           sz.b / 1e6);
    printf("|---|---|---|---|---|---|\n");
    printf("| append ingest vs COPY read_csv -> parquet | %.2f s | %.2f s | %.2f | <= 1.3 | %.0f MiB |\n", t_append,
           t_raw, t_append / t_raw, rss_append);
    printf("| snapshot ingest (round 2) vs raw conversion | %.2f s | %.2f s | %.2f | <= 2.5 | %.0f MiB |\n",
           t_snap[2], t_raw, t_snap[2] / t_raw, rss_snap);
    printf("| snapshot ingest round %d vs round 2 | %.2f s | %.2f s | %.2f | <= 1.2 | |\n", rounds, t_snap[rounds],
           t_snap[2], t_snap[rounds] / t_snap[2]);
    printf("| ledger ingest (half present) vs raw conversion | %.2f s | %.2f s | %.2f | <= 2.0 | %.0f MiB |\n",
           t_ledger, t_raw, t_ledger / t_raw, rss_ledger);
    printf("| `silt sql` aggregate vs DuckDB on the same files | %.2f s | %.2f s | %.2f | <= 1.2 | %.0f MiB |\n",
           t_sql, t_duck, t_sql / t_duck, rss_sql);
    printf("\n(input generation: %.1f s; snapshot rounds:", tg);
    for (int r = 1; r <= rounds; r++)
        printf(" %.2f", t_snap[r]);
    printf(" s)\n");
    free(t_snap);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
