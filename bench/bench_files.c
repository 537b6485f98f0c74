/* bench_files.c — files datasets: 100,000 files over 1,000 transactions
 * (100 puts + commit each, through the public API), then times the latest
 * view (what `silt files NAME` does) and the view as of the middle
 * transaction. Target: the latest view lists in under 1 s (the view
 * checkpoint avoids scanning every transaction).
 * Usage: bench_files [NTXN [FILES_PER_TXN]] (defaults 1000 100). The
 * workspace lives in $SILT_BENCH_DIR, else /dev/shm when present (the build
 * phase is bound by fsync on disks; the figure measured is the listing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "silt.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int die(const char *what)
{
    fprintf(stderr, "bench_files: %s: %s\n", what, silt_error_last());
    return 1;
}

int main(int argc, char **argv)
{
    int ntxn = argc > 1 ? atoi(argv[1]) : 1000;
    int per = argc > 2 ? atoi(argv[2]) : 100;
    const char *base = getenv("SILT_BENCH_DIR");
    if (!base)
        base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char tmpl[4096];
    snprintf(tmpl, sizeof tmpl, "%s/silt-bench-files-XXXXXX", base);
    char *dir = mkdtemp(tmpl);
    if (!dir)
        return 1;
    silt_workspace *ws = NULL;
    silt_dataset *ds = NULL;
    if (silt_workspace_init(dir) < 0 || silt_workspace_open(&ws, dir) < 0)
        return die("workspace");
    if (silt_files_create(&ds, ws, "bench") < 0)
        return die("create");
    char src[4200], logical[64], content[128];
    snprintf(src, sizeof src, "%s/src.bin", dir);
    char *mid = NULL;
    double t0 = now_s();
    for (int t = 0; t < ntxn; t++) {
        char *rid = NULL;
        if (silt_txn_start(&rid, ds, t == 0 ? SILT_TXN_SNAPSHOT : SILT_TXN_APPEND) < 0)
            return die("start");
        for (int i = 0; i < per; i++) {
            snprintf(logical, sizeof logical, "part-%04d/file-%06d.csv", t, t * per + i);
            int n = snprintf(content, sizeof content, "id,txn\n%d,%d\n", t * per + i, t);
            FILE *f = fopen(src, "wb");
            if (!f || fwrite(content, 1, (size_t)n, f) != (size_t)n || fclose(f) != 0)
                return 1;
            if (silt_txn_put(ds, rid, src, logical) < 0)
                return die("put");
        }
        if (silt_txn_commit(ds, rid, NULL) < 0)
            return die("commit");
        if (t == ntxn / 2)
            mid = rid;
        else
            free(rid);
    }
    double build = now_s() - t0;
    printf("build: %d transactions x %d files in %.1f s (%.1f ms per transaction)\n", ntxn, per, build,
           1000.0 * build / ntxn);
    /* a fresh handle, as a new `silt files` process would have */
    silt_dataset_free(ds);
    if (silt_dataset_open(&ds, ws, "bench") < 0)
        return die("open");
    t0 = now_s();
    silt_view *v = NULL;
    if (silt_files_view(&v, ds, NULL, NULL, NULL) < 0)
        return die("view");
    double latest = now_s() - t0;
    size_t n = silt_view_count(v);
    silt_view_free(v);
    t0 = now_s();
    if (silt_files_view(&v, ds, mid, NULL, NULL) < 0)
        return die("view --at");
    double at = now_s() - t0;
    size_t nat = silt_view_count(v);
    silt_view_free(v);
    printf("latest view: %zu files in %.3f s (target < 1 s: %s)\n", n, latest, latest < 1.0 ? "ok" : "SLOW");
    printf("view as of transaction %d: %zu files in %.3f s\n", ntxn / 2 + 1, nat, at);
    free(mid);
    silt_dataset_free(ds);
    silt_workspace_free(ws);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return n == (size_t)ntxn * (size_t)per && latest < 1.0 ? 0 : 1;
}
