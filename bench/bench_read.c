/* bench_read.c — Read phase benchmark (issue: data plane, fast read path).
 *
 * Generates a CSV of ROWS rows with DuckDB (7 columns: BIGINT, DATE, 2 x
 * VARCHAR, BIGINT, 2 x DOUBLE, with a header), then times, RUNS times each
 * and alternating:
 *   - silt_read_files with a ReadStepCsv carrying the matching ddlSchema
 *     (the fast path: one typed read_csv scan into the TEMP TABLE),
 *   - the same with the slow path forced (silt_read_set_mode), for reference,
 *   - DuckDB's own `CREATE OR REPLACE TABLE t AS FROM read_csv(file)`
 *     (auto-detection, the baseline),
 * and prints the medians and the ratio fast/DuckDB (target <= 1.15).
 *
 * Usage: bench_read [ROWS=1000000] [RUNS=3]
 * The CSV lives in a temp directory under $TMPDIR (or /tmp), removed at exit.
 */
#include "engine/engine.h"
#include "engine/read.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    long rows = argc > 1 ? atol(argv[1]) : 1000000;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (rows <= 0 || runs <= 0 || runs > 100) {
        fprintf(stderr, "usage: bench_read [ROWS=1000000] [RUNS=3]\n");
        return 2;
    }
    const char *base = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/silt-bench-read-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char csv[4200];
    snprintf(csv, sizeof csv, "%s/in.csv", dir);

    silt_engine *e = NULL;
    silt_arena *a = silt_arena_new();
    int rc = a ? silt_engine_open(&e, NULL) : SILT_ENOMEM;
    double t0 = now_s();
    if (!rc)
        rc = silt_engine_execf(e,
                               "COPY (SELECT i AS id, DATE '2000-01-01' + (i %% 9000)::INT AS day, "
                               "'name-' || i AS name, 'city ' || (i %% 977) AS city, (i * 7919) %% 100003 AS n, "
                               "i / 7.0 AS x, (i %% 1000) * 0.125 - 3 AS y FROM range(%ld) r(i)) TO '%s' "
                               "(FORMAT csv, HEADER)",
                               rows, csv);
    struct stat st = {0};
    stat(csv, &st);
    if (!rc)
        printf("generated %ld rows, %.1f MB in %.2f s\n", rows, st.st_size / 1e6, now_s() - t0);

    const char *cols[] = {"id BIGINT", "day DATE", "name STRING", "city STRING", "n BIGINT", "x DOUBLE", "y DOUBLE"};
    odf_ReadStepCsv c = {.has_header = true, .header = true};
    c.ddl_schema.items = (char **)cols;
    c.ddl_schema.n = 7;
    c.ddl_schema.present = true;
    odf_union step = {ODF_ReadStep_Csv, &c};
    const char *files[] = {csv};

    double *tf = calloc((size_t)runs, sizeof *tf), *ts = calloc((size_t)runs, sizeof *ts),
           *td = calloc((size_t)runs, sizeof *td);
    if (!tf || !ts || !td)
        rc = SILT_ENOMEM;
    bool fast = false;
    for (int r = 0; r < runs && !rc; r++) {
        double s;
        silt_buf q = SILT_BUF_INIT;
        char *qs = silt_sql_str(csv);
        rc = qs ? silt_buf_printf(&q, "CREATE OR REPLACE TABLE duck AS FROM read_csv(%s)", qs) : SILT_ENOMEM;
        free(qs);
        s = now_s();
        rc = rc ? rc : silt_engine_exec(e, q.data);
        td[r] = now_s() - s;
        silt_buf_free(&q);
        silt_engine_exec(e, "DROP TABLE IF EXISTS duck");

        silt_read_set_mode(SILT_READ_AUTO);
        s = now_s();
        rc = rc ? rc : silt_read_files(e, &step, files, NULL, 1, "silt_fast");
        tf[r] = now_s() - s;
        fast = silt_read_last_was_fast();
        silt_engine_exec(e, "DROP TABLE IF EXISTS silt_fast");

        silt_read_set_mode(SILT_READ_SLOW);
        s = now_s();
        rc = rc ? rc : silt_read_files(e, &step, files, NULL, 1, "silt_slow");
        ts[r] = now_s() - s;
        silt_read_set_mode(SILT_READ_AUTO);
        silt_engine_exec(e, "DROP TABLE IF EXISTS silt_slow");
        if (!rc)
            printf("run %d: duckdb %.3f s, silt fast %.3f s, silt slow %.3f s\n", r + 1, td[r], tf[r], ts[r]);
    }
    if (rc) {
        fprintf(stderr, "bench_read: %s\n", silt_error_last());
    } else {
        double md = median(td, runs), mf = median(tf, runs), ms = median(ts, runs);
        printf("\n| rows | MB | DuckDB read_csv | silt fast | silt slow | fast/DuckDB | slow/DuckDB |\n"
               "|---:|---:|---:|---:|---:|---:|---:|\n"
               "| %ld | %.1f | %.3f s | %.3f s | %.3f s | %.2f | %.2f |\n",
               rows, st.st_size / 1e6, md, mf, ms, mf / md, ms / md);
        printf("fast path used: %s; target fast/DuckDB <= 1.15: %s\n", fast ? "yes" : "NO",
               mf / md <= 1.15 ? "met" : "NOT met");
    }
    free(tf);
    free(ts);
    free(td);
    silt_engine_free(e);
    silt_arena_free(a);
    silt_fs_remove_tree(dir);
    return rc ? 1 : 0;
}
