/* bench_chain.c — metadata chain benchmarks (issue: foundation).
 *
 *  1. Append throughput: N small blocks (SetInfo events) appended one by one
 *     through the public API with fsync on (atomic object writes + CAS ref).
 *  2. `silt log -n 10` on a chain of 10,000 blocks vs a chain of 10 blocks:
 *     each run is a fresh process (open workspace, open dataset, print 10
 *     blocks); the median of R runs is compared. The summary next to the refs
 *     makes this O(1) in chain length; the target ratio is <= 1.5.
 *
 * Usage: bench_chain SILT_BINARY [N_BLOCKS=10000] [RUNS=30]
 * Prints a Markdown table that can be pasted into docs/performance.md.
 */
#include "silt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static int append_n(silt_dataset *ds, const char *dir, long n, double *secs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/event.yaml", dir);
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        FILE *f = fopen(path, "w");
        if (!f)
            return -1;
        fprintf(f, "kind: SetInfo\ndescription: benchmark block %ld\n", i);
        fclose(f);
        if (silt_dataset_append_events(ds, path) < 0) {
            fprintf(stderr, "append %ld: %s\n", i, silt_error_last());
            return -1;
        }
    }
    *secs = now_s() - t0;
    return 0;
}

static double median_log_time(const char *silt, const char *ws, const char *name, int runs)
{
    double *t = calloc((size_t)runs, sizeof *t);
    if (!t)
        return -1;
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        pid_t pid = fork();
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stdout))
                _exit(127);
            execl(silt, silt, "--workspace", ws, "log", name, "-n", "10", (char *)NULL);
            _exit(127);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        t[r] = now_s() - t0;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "silt log failed\n");
            free(t);
            return -1;
        }
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    double m = t[runs / 2];
    free(t);
    return m;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_chain SILT_BINARY [N_BLOCKS] [RUNS]\n");
        return 2;
    }
    const char *silt = argv[1];
    long n = argc > 2 ? atol(argv[2]) : 10000;
    int runs = argc > 3 ? atoi(argv[3]) : 30;
    char tmpl[] = "/tmp/silt-bench-XXXXXX";
    char *dir = mkdtemp(tmpl);
    if (!dir || silt_workspace_init(dir) < 0) {
        fprintf(stderr, "init: %s\n", silt_error_last());
        return 1;
    }
    silt_workspace *ws;
    silt_dataset *small, *big;
    if (silt_workspace_open(&ws, dir) < 0 || silt_dataset_create(&small, ws, "small", SILT_ROOT) < 0 ||
        silt_dataset_create(&big, ws, "big", SILT_ROOT) < 0) {
        fprintf(stderr, "setup: %s\n", silt_error_last());
        return 1;
    }
    double t_small, t_big;
    if (append_n(small, dir, 9, &t_small) < 0 || append_n(big, dir, n - 1, &t_big) < 0)
        return 1;
    double rate = (double)(n - 1) / t_big;
    double l_small = median_log_time(silt, dir, "small", runs);
    double l_big = median_log_time(silt, dir, "big", runs);
    if (l_small < 0 || l_big < 0)
        return 1;
    printf("| benchmark | figure |\n|---|---|\n");
    printf("| append %ld small blocks (fsync on) | %.2f s, %.0f blocks/s |\n", n - 1, t_big, rate);
    printf("| `silt log -n 10`, chain of 10 blocks (median of %d) | %.2f ms |\n", runs, l_small * 1e3);
    printf("| `silt log -n 10`, chain of %ld blocks (median of %d) | %.2f ms |\n", n, runs, l_big * 1e3);
    printf("| ratio %ld / 10 blocks (target <= 1.5) | %.2f |\n", n, l_big / l_small);
    silt_dataset_free(small);
    silt_dataset_free(big);
    silt_workspace_free(ws);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : 1;
}
