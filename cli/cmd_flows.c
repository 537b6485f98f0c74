/* cmd_flows.c — `silt flows`: the flows of the workspace and their scheduler.
 *   silt flows                          list Flow resources and legacy schedules
 *   silt flows set NAME --cron EXPR     schedule a dataset's SetPollingSource
 *   silt flows set NAME --none          remove that schedule
 *   silt flows run [NAME...] [--once]   run due flows in the foreground
 *   silt flows history [NAME]           past runs, newest first
 * Uses the public API only (the scheduler is src/ops/scheduler.c). Times are
 * UTC; next runs are computed from the current time (SILT_FAKE_SYSTEM_TIME
 * in tests), runs from the scheduler clock (SILT_SCHEDULER_CLOCK_FILE in
 * tests). `run` without --once loops until SIGINT/SIGTERM (exit 0), logging
 * on stderr; with --once it prints one line per run on stdout (or a JSON
 * array) and exits 1 when a run did not succeed.
 */
#include "cli.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void fmt_time(int64_t t, char *out, size_t cap)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (t < 0 || !gmtime_r(&tt, &tm) || !strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, cap, "-");
}

/* ---- silt flows (list) ------------------------------------------------------- */

static json_t *flow_json(const silt_flow_info *f)
{
    char next[40];
    fmt_time(f->next_run, next, sizeof next);
    json_t *sched = json_array();
    for (size_t j = 0; sched && j < f->nschedules; j++)
        json_array_append_new(sched, json_string(f->schedules[j]));
    return json_pack("{s:s,s:s,s:o,s:o,s:o,s:o}", "name", f->name, "target", f->target, "schedules",
                     sched ? sched : json_array(), "nextRun", f->next_run >= 0 ? json_string(next) : json_null(),
                     "source", f->source ? json_string(f->source) : json_null(), "targetRecordsPerSlice",
                     f->target_records_per_slice ? json_integer((json_int_t)f->target_records_per_slice)
                                                 : json_null());
}

static void flow_print(const silt_flow_info *f, bool legacy)
{
    char next[40], sched[256] = "";
    fmt_time(f->next_run, next, sizeof next);
    size_t o = 0;
    for (size_t j = 0; j < f->nschedules && o < sizeof sched; j++) {
        int w = snprintf(sched + o, sizeof sched - o, "%s%s", j ? "; " : "", f->schedules[j]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
    printf("%-24s %-24s %-24s %-20s %s\n", f->name, f->target,
           legacy ? "SetPollingSource" : f->source ? f->source : "-", next, f->nschedules ? sched : "-");
}

static int flows_list(cli_ctx *c, silt_workspace *ws)
{
    silt_flow_info *v = NULL, *l = NULL;
    size_t n = 0, nl = 0;
    if (silt_flows_list(&v, &n, ws, -1) < 0 || silt_flow_schedules_list(&l, &nl, ws, -1) < 0) {
        silt_flows_free(v, n);
        return cli_fail(NULL);
    }
    json_t *arr = c->json ? json_array() : NULL;
    if (!c->json && n + nl)
        printf("%-24s %-24s %-24s %-20s %s\n", "NAME", "TARGET", "SOURCE", "NEXT RUN", "SCHEDULE");
    /* merge the two sorted lists by name */
    for (size_t i = 0, k = 0; i < n || k < nl;) {
        bool legacy = i >= n || (k < nl && strcmp(l[k].name, v[i].name) < 0);
        const silt_flow_info *f = legacy ? &l[k++] : &v[i++];
        if (arr)
            json_array_append_new(arr, flow_json(f));
        else if (!c->json)
            flow_print(f, legacy);
    }
    if (arr)
        cli_json_print(arr);
    silt_flows_free(v, n);
    silt_flows_free(l, nl);
    return EXIT_OK;
}

/* ---- silt flows set ------------------------------------------------------------ */

static int flows_set(cli_ctx *c, silt_workspace *ws, int argc, char **argv)
{
    const char *name = NULL, *cron = NULL;
    bool none = false;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r = cli_opt_value(argc, argv, &i, "--cron", &v);
        if (r < 0)
            return cli_usage("flows set: --cron needs a value");
        if (r > 0)
            cron = v;
        else if (!strcmp(argv[i], "--none"))
            none = true;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("flows set: unknown option '%s'", argv[i]);
        else if (name)
            return cli_usage("flows set takes one NAME");
        else
            name = argv[i];
    }
    if (!name || none == (cron != NULL))
        return cli_usage("flows set needs NAME and --cron EXPR or --none");
    if (silt_flow_schedule_set(ws, name, none ? NULL : cron) < 0)
        return cli_fail(NULL);
    if (c->json)
        cli_json_print(json_pack("{s:s,s:o}", "name", name, "cron", cron ? json_string(cron) : json_null()));
    else if (cron)
        printf("%s: schedule set to '%s'\n", name, cron);
    else
        printf("%s: schedule removed\n", name);
    return EXIT_OK;
}

/* ---- run lines -------------------------------------------------------------------- */

static json_t *run_json(const silt_flow_run *r)
{
    char st[40], en[40], a[CLI_TIME_MAX], b[CLI_TIME_MAX];
    time_t ts = (time_t)r->start, te = (time_t)r->end;
    struct tm tm;
    strftime(st, sizeof st, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&ts, &tm));
    strftime(en, sizeof en, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&te, &tm));
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "flow", r->flow, "dataset", r->dataset,
                          "trigger", r->trigger, "outcome", r->outcome, "start", cli_time(a, st), "end",
                          cli_time(b, en), "attempt", (json_int_t)r->attempt, "records", (json_int_t)r->records,
                          "blocks", (json_int_t)r->blocks);
    if (!j)
        return NULL;
    json_object_set_new(j, "firstOffset", r->has_offsets ? json_integer((json_int_t)r->first_offset) : json_null());
    json_object_set_new(j, "lastOffset", r->has_offsets ? json_integer((json_int_t)r->last_offset) : json_null());
    json_object_set_new(j, "error", r->error ? json_string(r->error) : json_null());
    return j;
}

static bool run_succeeded(const silt_flow_run *r)
{
    return !strcmp(r->outcome, "ok") || !strcmp(r->outcome, "up-to-date");
}

typedef struct run_out {
    cli_ctx *c;
    json_t *arr;
    bool failed;
} run_out;

/* --once: one line per run on stdout, or an element of the JSON array. */
static void on_run(void *ctx, const silt_flow_run *r)
{
    run_out *o = ctx;
    o->failed = o->failed || !run_succeeded(r);
    if (o->arr) {
        json_array_append_new(o->arr, run_json(r));
    } else if (!strcmp(r->outcome, "ok")) {
        printf("%s: %llu new record%s (offsets %llu..%llu)\n", r->flow, (unsigned long long)r->records,
               r->records == 1 ? "" : "s", (unsigned long long)r->first_offset, (unsigned long long)r->last_offset);
    } else if (!strcmp(r->outcome, "up-to-date")) {
        printf("%s: up to date\n", r->flow);
    } else {
        printf("%s: %s: %s\n", r->flow, r->outcome, r->error ? r->error : "");
    }
    fflush(stdout);
}

static void log_line(void *ctx, const char *line)
{
    fprintf(stderr, "%s%s\n", (const char *)ctx, line);
    fflush(stderr);
}

/* ---- silt flows run ----------------------------------------------------------------- */

static silt_scheduler *g_sched;
static volatile sig_atomic_t g_signal;

static void on_signal(int sig)
{
    g_signal = sig;
    if (g_sched)
        silt_scheduler_stop(g_sched);
}

static int run_loop(silt_scheduler *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    g_sched = s;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "silt flows: scheduler started\n");
    silt_scheduler_loop(s);
    fprintf(stderr, "silt flows: %s received, stopping\n", g_signal == SIGINT ? "SIGINT" : "SIGTERM");
    g_sched = NULL;
    return EXIT_OK;
}

/* An unknown flow name fails before the loop starts: EXIT_FAIL or 0. */
static int check_names(silt_workspace *ws, const char **names, size_t nn)
{
    silt_flow_info *v = NULL, *l = NULL;
    size_t n = 0, nl = 0;
    int rc = silt_flows_list(&v, &n, ws, -1);
    if (rc == 0)
        rc = silt_flow_schedules_list(&l, &nl, ws, -1);
    if (rc < 0) {
        silt_flows_free(v, n);
        return cli_fail(NULL);
    }
    for (size_t i = 0; rc == 0 && i < nn; i++) {
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = !strcmp(v[k].name, names[i]);
        for (size_t k = 0; k < nl && !found; k++)
            found = !strcmp(l[k].name, names[i]);
        if (!found)
            rc = cli_fail_code(SILT_ENOTFOUND, "flow '%s' not found", names[i]);
    }
    silt_flows_free(v, n);
    silt_flows_free(l, nl);
    return rc;
}

static int flows_run(cli_ctx *c, silt_workspace *ws, int argc, char **argv)
{
    bool once = false;
    const char **names = calloc((size_t)argc + 1, sizeof *names);
    size_t nn = 0;
    if (!names)
        return cli_fail_code(SILT_ENOMEM, "out of memory");
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--once")) {
            once = true;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(names);
            return cli_usage("flows run: unknown option '%s'", argv[i]);
        } else {
            names[nn++] = argv[i];
        }
    }
    run_out out = {c, c->json && once ? json_array() : NULL, false};
    silt_scheduler_opts o = {.log = log_line, .log_ctx = (void *)"silt flows: "};
    if (!once) { /* the loop looks after the named flows only */
        o.flows = names;
        o.nflows = nn;
    } else {
        o.on_run = on_run;
        o.on_run_ctx = &out;
    }
    silt_scheduler *s = NULL;
    int status = EXIT_OK;
    if (silt_scheduler_new(&s, silt_workspace_path(ws), &o) < 0) {
        status = cli_fail(NULL);
    } else if (!once) {
        status = check_names(ws, names, nn) ? EXIT_FAIL : run_loop(s);
    } else if (nn) {
        for (size_t i = 0; i < nn && status == EXIT_OK; i++)
            if (silt_scheduler_run_flow(s, names[i]) < 0)
                status = cli_fail(NULL);
    } else if (silt_scheduler_tick(s, NULL) < 0) {
        status = cli_fail(NULL);
    }
    if (out.arr) {
        if (status == EXIT_OK)
            cli_json_write(out.arr);
        json_decref(out.arr);
    }
    if (status == EXIT_OK && out.failed)
        status = EXIT_FAIL;
    silt_scheduler_free(s);
    free(names);
    return status;
}

/* ---- silt flows history ------------------------------------------------------------------ */

static int flows_history(cli_ctx *c, silt_workspace *ws, int argc, char **argv)
{
    const char *name = NULL;
    for (int i = 0; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage("flows history: unknown option '%s'", argv[i]);
        if (name)
            return cli_usage("flows history takes at most one NAME");
        name = argv[i];
    }
    silt_flow_run *v = NULL;
    size_t n = 0;
    if (silt_flow_history(&v, &n, ws, name) < 0)
        return cli_fail(NULL);
    if (c->json) {
        json_t *arr = json_array();
        for (size_t i = 0; arr && i < n; i++)
            json_array_append_new(arr, run_json(&v[i]));
        cli_json_print(arr);
    } else {
        if (n)
            printf("%-24s %-24s %-20s %-20s %-8s %-10s %7s %s\n", "START", "END", "FLOW", "DATASET", "TRIGGER",
                   "OUTCOME", "RECORDS", "ERROR");
        for (size_t i = 0; i < n; i++) {
            json_t *j = run_json(&v[i]);
            printf("%-24s %-24s %-20s %-20s %-8s %-10s %7llu %s\n", json_string_value(json_object_get(j, "start")),
                   json_string_value(json_object_get(j, "end")), v[i].flow, v[i].dataset, v[i].trigger,
                   v[i].outcome, (unsigned long long)v[i].records, v[i].error ? v[i].error : "-");
            json_decref(j);
        }
    }
    silt_flow_runs_free(v, n);
    return EXIT_OK;
}

int cmd_flows(cli_ctx *c, int argc, char **argv)
{
    const char *sub = argc ? argv[0] : NULL;
    if (sub && !strcmp(sub, "--"))
        sub = NULL;
    if (sub && sub[0] == '-')
        return cli_usage("flows: unknown option '%s'", sub);
    if (sub && strcmp(sub, "set") && strcmp(sub, "run") && strcmp(sub, "history"))
        return cli_usage("flows: unknown subcommand '%s' (set, run, history)", sub);
    silt_workspace *ws;
    if (cli_open_workspace(c, &ws))
        return EXIT_FAIL;
    int rc;
    if (!sub)
        rc = flows_list(c, ws);
    else if (!strcmp(sub, "set"))
        rc = flows_set(c, ws, argc - 1, argv + 1);
    else if (!strcmp(sub, "run"))
        rc = flows_run(c, ws, argc - 1, argv + 1);
    else
        rc = flows_history(c, ws, argc - 1, argv + 1);
    silt_workspace_free(ws);
    return rc;
}
