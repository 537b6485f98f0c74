/* scheduler.c — the flow scheduler: decides which flows are due (their
 * Schedule triggers' cron, or the legacy schedules of flow_store.c) and runs
 * them, one at a time, as `silt pull` of the flow's target dataset.
 *
 * Invariants:
 *  - a flow is claimed before it runs: under the flock of state.lock its
 *    state is re-read, checked to be still due and saved with after = now,
 *    so another scheduler (a second `silt serve`, `silt flows run`) that
 *    ticks at the same time finds it not due; the run itself holds the
 *    dataset's pull lock without waiting (silt_pull_opts.no_wait), so a
 *    flow never runs while another pull of its dataset (a CLI `silt pull`)
 *    does: that run is recorded "busy" and retried after 30 s;
 *  - any number of missed slots gives one run: the state only remembers the
 *    time up to which the schedule is satisfied;
 *  - a run is a pull: whole AddData blocks or nothing (ingest.h). A stop
 *    request makes the pull's progress callback answer "stop", so the pull
 *    ends at its next safe point with SILT_ECANCELED ("aborted", retried at
 *    the next start);
 *  - the scheduler clock is the only reader of SILT_SCHEDULER_CLOCK_FILE.
 */
#include "ops/scheduler.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

/* ---- due times ---------------------------------------------------------- */

/* Earliest fire time of the crons strictly after t; -1 if none fires. */
static int64_t first_after(const silt_cron *crons, size_t n, int64_t t)
{
    int64_t best = -1;
    for (size_t i = 0; i < n; i++) {
        int64_t x;
        if (silt_cron_next(&crons[i], t, &x) == 0 && (best < 0 || x < best))
            best = x;
    }
    silt_err_clear();
    return best;
}

silt_sched_trigger silt_sched_due(const silt_cron *crons, size_t n, const silt_sched_state *st, int64_t now,
                                  int64_t *next_due)
{
    if (next_due)
        *next_due = -1;
    if (!st->known) {
        if (next_due)
            *next_due = first_after(crons, n, now);
        return SILT_SCHED_NOT_DUE;
    }
    int64_t slot = first_after(crons, n, st->after);
    if (slot >= 0 && slot <= now) {
        int64_t second = first_after(crons, n, slot);
        return (second >= 0 && second <= now) || now - slot >= 60 ? SILT_SCHED_MISSED : SILT_SCHED_SCHEDULE;
    }
    if (st->retry_at > 0 && st->retry_at <= now)
        return SILT_SCHED_RETRY;
    if (next_due) {
        *next_due = slot;
        if (st->retry_at > 0 && (slot < 0 || st->retry_at < slot))
            *next_due = st->retry_at;
    }
    return SILT_SCHED_NOT_DUE;
}

int64_t silt_sched_backoff(unsigned failures)
{
    if (failures < 1)
        failures = 1;
    if (failures > 5)
        return 600;
    return (int64_t)30 << (failures - 1);
}

const char *silt_sched_trigger_name(silt_sched_trigger t)
{
    switch (t) {
    case SILT_SCHED_SCHEDULE:
        return "schedule";
    case SILT_SCHED_MISSED:
        return "missed";
    case SILT_SCHED_RETRY:
        return "retry";
    default:
        return NULL;
    }
}

/* ---- clock ----------------------------------------------------------------- */

int silt_scheduler_clock(int64_t *now)
{
    const char *f = getenv("SILT_SCHEDULER_CLOCK_FILE");
    if (!f || !*f) {
        *now = silt_time_now().sec;
        return 0;
    }
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(f, &b);
    if (rc < 0) {
        silt_buf_free(&b);
        return silt_err(SILT_EINVAL, "SILT_SCHEDULER_CLOCK_FILE: %s", silt_error_last());
    }
    char text[64];
    size_t n = b.len < sizeof text - 1 ? b.len : sizeof text - 1;
    memcpy(text, b.data ? (const char *)b.data : "", n);
    silt_buf_free(&b);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' ' || text[n - 1] == '\r'))
        n--;
    text[n] = '\0';
    silt_time t;
    if (silt_time_parse(text, &t) < 0)
        return silt_err(SILT_EINVAL, "SILT_SCHEDULER_CLOCK_FILE %s: not an RFC 3339 time: '%s'", f, text);
    *now = t.sec;
    return 0;
}

/* ---- the flows -------------------------------------------------------------- */

typedef struct sflow {
    const char *name;    /* borrowed from the silt_flow_info */
    const char *dataset;
    silt_cron *crons;
    size_t ncrons;
} sflow;

typedef struct flowset {
    silt_flow_info *res, *leg; /* Flow resources, legacy schedules */
    size_t nres, nleg;
    sflow *v;
    size_t n;
} flowset;

struct silt_scheduler {
    char *dir;
    char **names;
    size_t nnames;
    silt_report_fn log;
    void *log_ctx;
    void (*on_run)(void *ctx, const silt_flow_run *run);
    void *on_run_ctx;
    atomic_bool stop;
};

static void flowset_free(flowset *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        free(fs->v[i].crons);
    free(fs->v);
    silt_flows_free(fs->res, fs->nres);
    silt_flows_free(fs->leg, fs->nleg);
    memset(fs, 0, sizeof *fs);
}

static void logf_(silt_scheduler *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(silt_scheduler *s, const char *fmt, ...)
{
    if (!s->log)
        return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    s->log(s->log_ctx, line);
}

static bool wanted(const silt_scheduler *s, const char *name)
{
    if (!s->nnames)
        return true;
    for (size_t i = 0; i < s->nnames; i++)
        if (!strcmp(s->names[i], name))
            return true;
    return false;
}

/* Adds flow `fi` (its parsable crons; a bad one is logged and ignored). */
static int flowset_add(silt_scheduler *s, flowset *fs, const silt_flow_info *fi)
{
    sflow *f = &fs->v[fs->n];
    memset(f, 0, sizeof *f);
    f->name = fi->name;
    f->dataset = fi->target;
    f->crons = calloc(fi->nschedules ? fi->nschedules : 1, sizeof *f->crons);
    if (!f->crons)
        return silt_err(SILT_ENOMEM, "scheduler: out of memory");
    fs->n++;
    for (size_t j = 0; j < fi->nschedules; j++) {
        if (silt_cron_parse(&f->crons[f->ncrons], fi->schedules[j]) == 0)
            f->ncrons++;
        else
            logf_(s, "flow '%s': schedule ignored: %s", fi->name, silt_error_last());
    }
    silt_err_clear();
    return 0;
}

/* Every flow the scheduler looks after; an unknown name of s->names is
 * SILT_ENOTFOUND. */
static int flowset_load(silt_scheduler *s, silt_workspace *ws, flowset *fs)
{
    memset(fs, 0, sizeof *fs);
    int rc = silt_flows_list(&fs->res, &fs->nres, ws, 0);
    if (rc == 0)
        rc = silt_flow_schedules_list(&fs->leg, &fs->nleg, ws, 0);
    if (rc == 0 && !(fs->v = calloc(fs->nres + fs->nleg + 1, sizeof *fs->v)))
        rc = silt_err(SILT_ENOMEM, "scheduler: out of memory");
    for (size_t i = 0; rc == 0 && i < fs->nres; i++)
        if (wanted(s, fs->res[i].name))
            rc = flowset_add(s, fs, &fs->res[i]);
    for (size_t i = 0; rc == 0 && i < fs->nleg; i++)
        if (wanted(s, fs->leg[i].name))
            rc = flowset_add(s, fs, &fs->leg[i]);
    for (size_t i = 0; rc == 0 && i < s->nnames; i++) {
        bool found = false;
        for (size_t k = 0; k < fs->n && !found; k++)
            found = !strcmp(fs->v[k].name, s->names[i]);
        if (!found)
            rc = silt_err(SILT_ENOTFOUND, "flow '%s' not found", s->names[i]);
    }
    if (rc < 0)
        flowset_free(fs);
    return rc;
}

/* ---- state ------------------------------------------------------------------ */

typedef struct state_txn {
    char *path;
    int fd;
    json_t *st;
} state_txn;

static int state_begin(silt_workspace *ws, state_txn *t)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    char *lpath = silt_sched_path(ws, "state.lock", true);
    t->path = silt_sched_path(ws, "state.json", true);
    int rc = lpath && t->path ? 0 : silt_error_code();
    if (rc == 0 && (t->fd = silt_fs_lock(lpath, true)) < 0)
        rc = t->fd;
    if (rc == 0)
        rc = silt_sched_state_load(t->path, &t->st);
    free(lpath);
    if (rc < 0) {
        silt_fs_unlock(t->fd);
        free(t->path);
        memset(t, 0, sizeof *t);
    }
    return rc;
}

/* Saves (when save) and releases. */
static int state_end(state_txn *t, bool save)
{
    int rc = save ? silt_sched_state_save(t->path, t->st) : 0;
    json_decref(t->st);
    silt_fs_unlock(t->fd);
    free(t->path);
    memset(t, 0, sizeof *t);
    return rc;
}

/* ---- one run ---------------------------------------------------------------- */

typedef struct run_ctx {
    silt_scheduler *s;
    const char *flow;
} run_ctx;

static int stop_requested(void *ctx, const silt_progress *p)
{
    (void)p;
    return atomic_load(&((run_ctx *)ctx)->s->stop) ? 1 : 0;
}

static void pull_warning(void *ctx, const char *line)
{
    run_ctx *c = ctx;
    logf_(c->s, "flow '%s': warning: %s", c->flow, line);
}

/* Pulls f->dataset; fills the outcome fields of r. */
static void run_pull(silt_scheduler *s, silt_workspace *ws, const sflow *f, silt_flow_run *r)
{
    run_ctx ctx = {s, f->name};
    silt_pull_opts o;
    memset(&o, 0, sizeof o);
    o.no_wait = true;
    o.warn = pull_warning;
    o.warn_ctx = &ctx;
    o.progress = stop_requested;
    o.progress_ctx = &ctx;
    silt_pull_result res;
    memset(&res, 0, sizeof res);
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, ws, f->dataset);
    if (rc >= 0)
        rc = silt_dataset_pull(&res, ds, &o);
    silt_dataset_free(ds);
    r->records = res.num_records;
    r->blocks = res.num_ingests;
    r->has_offsets = res.has_offsets && res.num_ingests;
    r->first_offset = res.first_offset;
    r->last_offset = res.last_offset;
    const char *outcome = rc >= 0 ? (res.num_ingests ? "ok" : "up-to-date")
                          : res.busy ? "busy"
                          : rc == SILT_ECANCELED && atomic_load(&s->stop) ? "aborted"
                                                                          : "failed";
    r->outcome = strdup(outcome);
    if (rc < 0)
        r->error = strdup(silt_error_last());
}

/* The state after run r. */
static void state_after_run(silt_sched_state *st, const silt_flow_run *r, int64_t end)
{
    if (!strcmp(r->outcome, "ok") || !strcmp(r->outcome, "up-to-date")) {
        st->failures = 0;
        st->retry_at = 0;
    } else if (!strcmp(r->outcome, "busy")) {
        st->retry_at = end + 30;
    } else if (!strcmp(r->outcome, "aborted")) {
        st->retry_at = end; /* due at the next start */
    } else {
        st->failures++;
        st->retry_at = end + silt_sched_backoff(st->failures);
    }
}

static void log_run(silt_scheduler *s, const silt_flow_run *r, const silt_sched_state *st)
{
    char when[40];
    silt_time_format((silt_time){st->retry_at, 0}, when);
    if (!strcmp(r->outcome, "ok"))
        logf_(s, "flow '%s': %llu new record%s (offsets %llu..%llu) in %llu block%s", r->flow,
              (unsigned long long)r->records, r->records == 1 ? "" : "s", (unsigned long long)r->first_offset,
              (unsigned long long)r->last_offset, (unsigned long long)r->blocks, r->blocks == 1 ? "" : "s");
    else if (!strcmp(r->outcome, "up-to-date"))
        logf_(s, "flow '%s': up to date", r->flow);
    else if (!strcmp(r->outcome, "failed"))
        logf_(s, "flow '%s': failed (attempt %u): %s; retry at %s", r->flow, r->attempt, r->error, when);
    else
        logf_(s, "flow '%s': %s: %s; retry at %s", r->flow, r->outcome, r->error ? r->error : "", when);
}

/* Runs claimed flow f (state *st as claimed, trigger named), records it,
 * updates its state. */
static int run_claimed(silt_scheduler *s, silt_workspace *ws, const sflow *f, const char *trigger,
                       unsigned attempt, int64_t start)
{
    silt_flow_run r;
    memset(&r, 0, sizeof r);
    r.flow = strdup(f->name);
    r.dataset = strdup(f->dataset);
    r.trigger = strdup(trigger);
    r.attempt = attempt;
    r.start = start;
    if (!r.flow || !r.dataset || !r.trigger) {
        silt_flow_run_clear(&r);
        return silt_err(SILT_ENOMEM, "scheduler: out of memory");
    }
    logf_(s, "flow '%s': run started (%s, dataset '%s')", f->name, trigger, f->dataset);
    run_pull(s, ws, f, &r);
    if (silt_scheduler_clock(&r.end) < 0 || r.end < start)
        r.end = start;
    if (!r.outcome) {
        silt_flow_run_clear(&r);
        return silt_err(SILT_ENOMEM, "scheduler: out of memory");
    }
    state_txn t;
    int rc = state_begin(ws, &t);
    silt_sched_state st;
    if (rc == 0) {
        silt_sched_state_get(t.st, f->name, &st);
        st.known = true;
        state_after_run(&st, &r, r.end);
        rc = silt_sched_state_put(t.st, f->name, &st);
        int rc2 = state_end(&t, rc == 0);
        rc = rc ? rc : rc2;
    }
    char *hpath = silt_sched_path(ws, "history.jsonl", true);
    int hrc = hpath ? silt_sched_history_append(hpath, &r, SILT_FLOW_HISTORY_MAX) : silt_error_code();
    free(hpath);
    rc = rc ? rc : hrc;
    if (rc == 0)
        log_run(s, &r, &st);
    if (rc == 0 && s->on_run)
        s->on_run(s->on_run_ctx, &r);
    silt_flow_run_clear(&r);
    return rc;
}

/* Claims f if it is due at `now` (or always, when manual). 1 = claimed
 * (*trigger, *attempt set), 0 = not due (*next_due updated). */
static int claim(silt_workspace *ws, const sflow *f, int64_t now, bool manual, const char **trigger,
                 unsigned *attempt, int64_t *next_due)
{
    if (!manual && !f->ncrons)
        return 0; /* never due (a failed manual run is not retried either) */
    state_txn t;
    int rc = state_begin(ws, &t);
    if (rc < 0)
        return rc;
    silt_sched_state st;
    silt_sched_state_get(t.st, f->name, &st);
    int64_t nd = -1;
    silt_sched_trigger due = silt_sched_due(f->crons, f->ncrons, &st, now, &nd);
    bool save = manual || due != SILT_SCHED_NOT_DUE || !st.known;
    if (save) {
        *trigger = manual ? "manual" : silt_sched_trigger_name(due);
        *attempt = st.failures + 1;
        st.known = true;
        st.after = now > st.after ? now : st.after;
        if (manual || due != SILT_SCHED_NOT_DUE)
            st.retry_at = 0;
        rc = silt_sched_state_put(t.st, f->name, &st);
    }
    int rc2 = state_end(&t, save && rc == 0);
    if (rc == 0)
        rc = rc2;
    if (rc < 0)
        return rc;
    if (!manual && due == SILT_SCHED_NOT_DUE) {
        if (nd >= 0 && (*next_due < 0 || nd < *next_due))
            *next_due = nd;
        return 0;
    }
    return 1;
}

/* ---- public API ------------------------------------------------------------- */

int silt_scheduler_new(silt_scheduler **out, const char *dir, const silt_scheduler_opts *opts)
{
    *out = NULL;
    silt_scheduler *s = calloc(1, sizeof *s);
    if (!s || (dir && !(s->dir = strdup(dir))))
        goto oom;
    atomic_init(&s->stop, false);
    if (opts) {
        s->log = opts->log;
        s->log_ctx = opts->log_ctx;
        s->on_run = opts->on_run;
        s->on_run_ctx = opts->on_run_ctx;
        if (opts->nflows && !(s->names = calloc(opts->nflows, sizeof *s->names)))
            goto oom;
        for (size_t i = 0; i < opts->nflows; i++, s->nnames++)
            if (!(s->names[i] = strdup(opts->flows[i])))
                goto oom;
    }
    *out = s;
    return 0;
oom:
    silt_scheduler_free(s);
    return silt_err(SILT_ENOMEM, "scheduler: out of memory");
}

void silt_scheduler_free(silt_scheduler *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->names);
    free(s->dir);
    free(s);
}

void silt_scheduler_stop(silt_scheduler *s) { atomic_store(&s->stop, true); }

int silt_scheduler_tick(silt_scheduler *s, int64_t *next_due)
{
    if (next_due)
        *next_due = -1;
    int64_t now, nd = -1;
    int rc = silt_scheduler_clock(&now);
    silt_workspace *ws = NULL;
    if (rc == 0)
        rc = silt_workspace_open(&ws, s->dir);
    flowset fs;
    memset(&fs, 0, sizeof fs);
    if (rc == 0)
        rc = flowset_load(s, ws, &fs);
    int runs = 0;
    for (size_t i = 0; rc == 0 && i < fs.n && !atomic_load(&s->stop); i++) {
        const char *trigger = NULL;
        unsigned attempt = 1;
        int c = claim(ws, &fs.v[i], now, false, &trigger, &attempt, &nd);
        if (c < 0)
            rc = c;
        else if (c == 1 && (rc = run_claimed(s, ws, &fs.v[i], trigger, attempt, now)) == 0)
            runs++;
    }
    /* a flow run by this tick is due again no earlier than its next slot */
    for (size_t i = 0; rc == 0 && runs && i < fs.n; i++) {
        int64_t x = first_after(fs.v[i].crons, fs.v[i].ncrons, now);
        if (x >= 0 && (nd < 0 || x < nd))
            nd = x;
    }
    flowset_free(&fs);
    silt_workspace_free(ws);
    if (next_due)
        *next_due = nd;
    return rc < 0 ? rc : runs;
}

int silt_scheduler_run_flow(silt_scheduler *s, const char *name)
{
    int64_t now;
    int rc = silt_scheduler_clock(&now);
    silt_workspace *ws = NULL;
    if (rc == 0)
        rc = silt_workspace_open(&ws, s->dir);
    flowset fs;
    memset(&fs, 0, sizeof fs);
    if (rc == 0)
        rc = flowset_load(s, ws, &fs);
    const sflow *f = NULL;
    for (size_t i = 0; rc == 0 && i < fs.n && !f; i++)
        if (!strcmp(fs.v[i].name, name))
            f = &fs.v[i];
    if (rc == 0 && !f)
        rc = silt_err(SILT_ENOTFOUND, "flow '%s' not found", name);
    const char *trigger = NULL;
    unsigned attempt = 1;
    int64_t nd = -1;
    if (rc == 0 && (rc = claim(ws, f, now, true, &trigger, &attempt, &nd)) == 1)
        rc = run_claimed(s, ws, f, trigger, attempt, now);
    flowset_free(&fs);
    silt_workspace_free(ws);
    return rc < 0 ? rc : 0;
}

/* Sleeps up to `ms` milliseconds, waking early on a stop request. */
static void nap(silt_scheduler *s, long ms)
{
    while (ms > 0 && !atomic_load(&s->stop)) {
        long step = ms < 50 ? ms : 50;
        struct timespec ts = {0, step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
}

int silt_scheduler_loop(silt_scheduler *s)
{
    const char *cf = getenv("SILT_SCHEDULER_CLOCK_FILE");
    bool fake = cf && *cf;
    while (!atomic_load(&s->stop)) {
        int rc = silt_scheduler_tick(s, NULL);
        if (rc < 0)
            logf_(s, "scheduler: %s", silt_error_last());
        if (fake) {
            nap(s, 200);
            continue;
        }
        /* wake just after the next whole second of the real clock */
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        nap(s, 1000 - now.tv_nsec / 1000000L + 5);
    }
    return 0;
}
