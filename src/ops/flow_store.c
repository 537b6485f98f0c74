/* flow_store.c — what the flow scheduler keeps in `.silt/flows/`:
 *  - schedules.json {"DATASET": "CRON", …}: schedules given to legacy
 *    polling sources (`silt flows set`), changed under schedules.lock;
 *  - state.json {"FLOW": {"after", "failures", "retryAt"}, …}: see
 *    scheduler.h, changed under state.lock by the scheduler;
 *  - history.jsonl: one JSON object per run, oldest first, at most `max`
 *    runs per flow, rewritten under history.jsonl.lock.
 * Invariants: every file is replaced atomically (silt_fs_write_atomic), so
 * a reader or a crash sees the old or the new version, never a mix; a
 * history line that does not parse is skipped by readers (a file written by
 * a newer silt) and dropped at the next rewrite.
 */
#include "ops/scheduler.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

char *silt_sched_path(silt_workspace *ws, const char *file, bool create)
{
    char *dir = silt_path_join(silt_workspace_path(ws), "flows", NULL);
    char *p = dir ? silt_path_join(dir, file, NULL) : NULL;
    if (!p) {
        free(dir);
        silt_err(SILT_ENOMEM, "flows: out of memory");
        return NULL;
    }
    int rc = create ? silt_fs_mkdirs(dir) : 0;
    free(dir);
    if (rc < 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* ---- JSON object files ---------------------------------------------------- */

static int load_object(const char *path, json_t **out)
{
    *out = NULL;
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &b);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        silt_buf_free(&b);
        *out = json_object();
        return *out ? 0 : silt_err(SILT_ENOMEM, "flows: out of memory");
    }
    if (rc < 0) {
        silt_buf_free(&b);
        return rc;
    }
    json_error_t e;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, &e);
    silt_buf_free(&b);
    if (!json_is_object(j)) {
        json_decref(j);
        return silt_err(SILT_ECORRUPT, "%s: not a JSON object", path);
    }
    *out = j;
    return 0;
}

static int save_object(const char *path, const json_t *j)
{
    char *text = json_dumps(j, JSON_SORT_KEYS | JSON_INDENT(2));
    if (!text)
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    size_t n = strlen(text);
    int rc = silt_fs_write_atomic(path, text, n, false);
    free(text);
    return rc;
}

int silt_sched_state_load(const char *path, json_t **out) { return load_object(path, out); }
int silt_sched_state_save(const char *path, const json_t *st) { return save_object(path, st); }

void silt_sched_state_get(const json_t *st, const char *flow, silt_sched_state *out)
{
    memset(out, 0, sizeof *out);
    json_t *f = json_object_get(st, flow);
    json_t *after = json_object_get(f, "after");
    if (!json_is_integer(after))
        return;
    out->known = true;
    out->after = json_integer_value(after);
    json_int_t fails = json_integer_value(json_object_get(f, "failures"));
    out->failures = fails > 0 && fails < 1000000 ? (unsigned)fails : 0;
    out->retry_at = json_integer_value(json_object_get(f, "retryAt"));
}

int silt_sched_state_put(json_t *st, const char *flow, const silt_sched_state *in)
{
    json_t *f = json_pack("{s:I,s:I,s:I}", "after", (json_int_t)in->after, "failures", (json_int_t)in->failures,
                          "retryAt", (json_int_t)in->retry_at);
    if (!f || json_object_set_new(st, flow, f) < 0)
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    return 0;
}

/* ---- legacy schedules ------------------------------------------------------ */

/* Checks that `dataset` may get a schedule: a root dataset with a
 * SetPollingSource that no Flow resource targets. */
static int schedulable(silt_workspace *ws, const char *dataset)
{
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, ws, dataset);
    if (rc < 0)
        return rc;
    silt_dataset_info in;
    rc = silt_dataset_info_get(&in, ds);
    bool ok = rc >= 0 && in.kind == SILT_ROOT && in.has_polling_source;
    silt_dataset_free(ds);
    if (rc < 0)
        return rc;
    if (!ok)
        return silt_err(SILT_EINVAL,
                        "flows set: dataset '%s' has no polling source (SetPollingSource) to schedule", dataset);
    silt_flow_info *fl = NULL;
    size_t n = 0;
    if ((rc = silt_flows_list(&fl, &n, ws, 0)) < 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (!strcmp(fl[i].target, dataset) || !strcmp(fl[i].name, dataset))
            rc = silt_err(SILT_EINVAL,
                          "flows set: dataset '%s' is run by flow '%s'; its schedule is the flow's (silt add)",
                          dataset, fl[i].name);
    silt_flows_free(fl, n);
    return rc;
}

int silt_flow_schedule_set(silt_workspace *ws, const char *dataset, const char *cron)
{
    silt_cron c;
    int rc = cron ? silt_cron_parse(&c, cron) : 0;
    if (rc == 0 && cron)
        rc = schedulable(ws, dataset);
    if (rc < 0)
        return rc;
    char *path = silt_sched_path(ws, "schedules.json", true);
    char *lpath = silt_sched_path(ws, "schedules.lock", true);
    int fd = path && lpath ? silt_fs_lock(lpath, true) : silt_error_code();
    json_t *j = NULL;
    rc = fd < 0 ? fd : load_object(path, &j);
    if (rc == 0 && cron) {
        if (json_object_set_new(j, dataset, json_string(cron)) < 0)
            rc = silt_err(SILT_ENOMEM, "flows: out of memory");
    } else if (rc == 0 && json_object_del(j, dataset) < 0) {
        rc = silt_err(SILT_ENOTFOUND, "flows set: dataset '%s' has no schedule", dataset);
    }
    if (rc == 0)
        rc = save_object(path, j);
    json_decref(j);
    silt_fs_unlock(fd);
    free(path);
    free(lpath);
    return rc;
}

static int info_from_schedule(silt_flow_info *fi, const char *name, const char *cron, int64_t now)
{
    fi->next_run = -1;
    fi->name = strdup(name);
    fi->target = strdup(name);
    fi->schedules = calloc(1, sizeof *fi->schedules);
    if (!fi->name || !fi->target || !fi->schedules || !(fi->schedules[0] = strdup(cron)))
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    fi->nschedules = 1;
    silt_cron c;
    int64_t next;
    if (silt_cron_parse(&c, cron) == 0 && silt_cron_next(&c, now, &next) == 0)
        fi->next_run = next;
    silt_err_clear();
    return 0;
}

int silt_flow_schedules_list(silt_flow_info **out, size_t *n, silt_workspace *ws, int64_t now)
{
    *out = NULL;
    *n = 0;
    if (now < 0)
        now = silt_time_now().sec;
    char *path = silt_sched_path(ws, "schedules.json", false);
    json_t *j = NULL;
    int rc = path ? load_object(path, &j) : silt_error_code();
    free(path);
    if (rc < 0)
        return rc;
    size_t cnt = json_object_size(j);
    silt_flow_info *v = calloc(cnt ? cnt : 1, sizeof *v);
    if (!v)
        rc = silt_err(SILT_ENOMEM, "flows: out of memory");
    /* jansson iterates in insertion order: sort by name */
    const char **keys = calloc(cnt ? cnt : 1, sizeof *keys);
    size_t k = 0;
    const char *key;
    json_t *val;
    if (!keys)
        rc = silt_err(SILT_ENOMEM, "flows: out of memory");
    json_object_foreach(j, key, val) if (keys && json_is_string(val)) keys[k++] = key;
    for (size_t a = 1; a < k; a++)
        for (size_t b = a; b > 0 && strcmp(keys[b - 1], keys[b]) > 0; b--) {
            const char *t = keys[b];
            keys[b] = keys[b - 1];
            keys[b - 1] = t;
        }
    for (size_t i = 0; rc == 0 && i < k; i++, (*n)++)
        rc = info_from_schedule(&v[i], keys[i], json_string_value(json_object_get(j, keys[i])), now);
    free(keys);
    json_decref(j);
    if (rc < 0) {
        silt_flows_free(v, *n);
        *n = 0;
        return rc;
    }
    *out = v;
    return 0;
}

/* ---- history ---------------------------------------------------------------- */

static json_t *run_to_json(const silt_flow_run *r)
{
    char st[40], en[40];
    silt_time_format((silt_time){r->start, 0}, st);
    silt_time_format((silt_time){r->end, 0}, en);
    json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I,s:I,s:I}", "flow", r->flow, "dataset", r->dataset,
                          "trigger", r->trigger, "outcome", r->outcome, "start", st, "end", en, "attempt",
                          (json_int_t)r->attempt, "records", (json_int_t)r->records, "blocks",
                          (json_int_t)r->blocks);
    if (!j)
        return NULL;
    json_object_set_new(j, "firstOffset", r->has_offsets ? json_integer((json_int_t)r->first_offset) : json_null());
    json_object_set_new(j, "lastOffset", r->has_offsets ? json_integer((json_int_t)r->last_offset) : json_null());
    json_object_set_new(j, "error", r->error ? json_string(r->error) : json_null());
    return j;
}

static char *dup_field(const json_t *j, const char *key)
{
    const char *s = json_string_value(json_object_get(j, key));
    return s ? strdup(s) : NULL;
}

/* 0, 1 when `j` is not a run record, or SILT_ENOMEM. */
static int run_from_json(const json_t *j, silt_flow_run *r)
{
    memset(r, 0, sizeof *r);
    silt_time st, en;
    const char *s = json_string_value(json_object_get(j, "start"));
    const char *e = json_string_value(json_object_get(j, "end"));
    if (!s || !e || silt_time_parse(s, &st) < 0 || silt_time_parse(e, &en) < 0) {
        silt_err_clear();
        return 1;
    }
    static const char *const REQUIRED[] = {"flow", "dataset", "trigger", "outcome"};
    for (size_t i = 0; i < 4; i++)
        if (!json_is_string(json_object_get(j, REQUIRED[i])))
            return 1;
    r->start = st.sec;
    r->end = en.sec;
    r->flow = dup_field(j, "flow");
    r->dataset = dup_field(j, "dataset");
    r->trigger = dup_field(j, "trigger");
    r->outcome = dup_field(j, "outcome");
    bool has_error = json_is_string(json_object_get(j, "error"));
    r->error = dup_field(j, "error");
    r->attempt = (unsigned)json_integer_value(json_object_get(j, "attempt"));
    r->records = (uint64_t)json_integer_value(json_object_get(j, "records"));
    r->blocks = (uint64_t)json_integer_value(json_object_get(j, "blocks"));
    json_t *fo = json_object_get(j, "firstOffset"), *lo = json_object_get(j, "lastOffset");
    r->has_offsets = json_is_integer(fo) && json_is_integer(lo);
    r->first_offset = (uint64_t)json_integer_value(fo);
    r->last_offset = (uint64_t)json_integer_value(lo);
    if (!r->flow || !r->dataset || !r->trigger || !r->outcome || (has_error && !r->error)) {
        silt_flow_run_clear(r);
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    }
    return 0;
}

void silt_flow_run_clear(silt_flow_run *r)
{
    if (!r)
        return;
    free(r->flow);
    free(r->dataset);
    free(r->trigger);
    free(r->outcome);
    free(r->error);
    memset(r, 0, sizeof *r);
}

void silt_flow_runs_free(silt_flow_run *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        silt_flow_run_clear(&v[i]);
    free(v);
}

/* The lines of the history file (parsed), oldest first; *lines owns them. */
static int history_load(const char *path, json_t **lines)
{
    *lines = json_array();
    if (!*lines)
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &b);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        rc = 0;
    }
    const char *p = (const char *)b.data, *end = p ? p + b.len : NULL;
    while (rc == 0 && p && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        json_t *j = json_loadb(p, (size_t)(le - p), 0, NULL);
        silt_flow_run r = {0};
        int v = json_is_object(j) ? run_from_json(j, &r) : 1;
        if (v < 0)
            rc = v;
        silt_flow_run_clear(&r);
        if (v == 0 && json_array_append(*lines, j) < 0)
            rc = silt_err(SILT_ENOMEM, "flows: out of memory");
        json_decref(j);
        p = le + 1;
    }
    silt_buf_free(&b);
    if (rc < 0) {
        json_decref(*lines);
        *lines = NULL;
    }
    return rc;
}

static bool is_flow(const json_t *j, const char *flow)
{
    const char *f = json_string_value(json_object_get(j, "flow"));
    return f && !strcmp(f, flow);
}

/* Writes `lines`, skipping the first `drop` runs of `flow`. */
static int history_save(const char *path, const json_t *lines, const char *flow, size_t drop)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = 0;
    size_t i;
    json_t *j;
    json_array_foreach(lines, i, j)
    {
        if (drop && is_flow(j, flow)) {
            drop--;
            continue;
        }
        char *t = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
        if (!t || silt_buf_puts(&b, t) < 0 || silt_buf_putc(&b, '\n') < 0)
            rc = silt_err(SILT_ENOMEM, "flows: out of memory");
        free(t);
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = silt_fs_write_atomic(path, b.data ? (const char *)b.data : "", b.len, false);
    silt_buf_free(&b);
    return rc;
}

int silt_sched_history_append(const char *path, const silt_flow_run *r, size_t max)
{
    char *lpath = malloc(strlen(path) + 6);
    if (!lpath)
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    strcpy(lpath, path);
    strcat(lpath, ".lock");
    int fd = silt_fs_lock(lpath, true);
    free(lpath);
    if (fd < 0)
        return fd;
    json_t *lines = NULL;
    int rc = history_load(path, &lines);
    json_t *j = rc == 0 ? run_to_json(r) : NULL;
    if (rc == 0 && (!j || json_array_append_new(lines, j) < 0))
        rc = silt_err(SILT_ENOMEM, "flows: out of memory");
    size_t count = 0, i;
    json_t *e;
    if (rc == 0)
        json_array_foreach(lines, i, e) count += is_flow(e, r->flow);
    if (rc == 0)
        rc = history_save(path, lines, r->flow, count > max ? count - max : 0);
    json_decref(lines);
    silt_fs_unlock(fd);
    return rc;
}

int silt_sched_history_read(const char *path, const char *flow, silt_flow_run **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    json_t *lines = NULL;
    int rc = history_load(path, &lines);
    if (rc < 0)
        return rc;
    size_t total = json_array_size(lines);
    silt_flow_run *v = calloc(total ? total : 1, sizeof *v);
    if (!v) {
        json_decref(lines);
        return silt_err(SILT_ENOMEM, "flows: out of memory");
    }
    size_t k = 0;
    for (size_t i = total; i-- > 0;) {
        json_t *j = json_array_get(lines, i);
        if (flow && !is_flow(j, flow))
            continue;
        int x = run_from_json(j, &v[k]);
        if (x < 0) {
            silt_flow_runs_free(v, k);
            json_decref(lines);
            return x;
        }
        k += x == 0;
    }
    json_decref(lines);
    *out = v;
    *n = k;
    return 0;
}

int silt_flow_history(silt_flow_run **out, size_t *n, silt_workspace *ws, const char *flow)
{
    char *path = silt_sched_path(ws, "history.jsonl", false);
    if (!path)
        return silt_error_code();
    int rc = silt_sched_history_read(path, flow, out, n);
    free(path);
    return rc;
}
