/* scheduler.h — the pure parts of the flow scheduler (scheduler.c), exposed
 * for the unit tests: when a flow is due, the retry backoff, and the
 * bounded history file.
 *
 * A flow's state is the time `after` up to which its schedule is satisfied
 * (the time of its last claimed run, or of the tick that first saw it), its
 * consecutive failures and the time of its next retry (0 = none).
 */
#ifndef SILT_OPS_SCHEDULER_H
#define SILT_OPS_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ingest/cron.h"
#include "silt.h"

typedef struct silt_sched_state {
    bool known;       /* false: the flow was never seen by a scheduler */
    int64_t after;    /* schedule satisfied up to this time */
    unsigned failures;
    int64_t retry_at; /* 0 = no retry pending */
} silt_sched_state;

typedef enum silt_sched_trigger {
    SILT_SCHED_NOT_DUE = 0,
    SILT_SCHED_SCHEDULE, /* a slot passed, on time */
    SILT_SCHED_MISSED,   /* more than one slot passed, or the slot is >= 60 s late */
    SILT_SCHED_RETRY,    /* the retry time of a failed run came */
} silt_sched_trigger;

/* Decides whether a flow with crons[0..n) and state `st` is due at `now`
 * (an unknown flow never is). *next_due (may be NULL): the earliest time
 * after `now` at which it becomes due if it is not due now and nothing
 * changes (-1: never). Crons that never fire are ignored. */
silt_sched_trigger silt_sched_due(const silt_cron *crons, size_t n, const silt_sched_state *st, int64_t now,
                                  int64_t *next_due);

/* Delay before retry number `failures` (>= 1): 30 s, 60 s, 120 s, 240 s,
 * 480 s, then 600 s. */
int64_t silt_sched_backoff(unsigned failures);

/* "schedule", "missed", "retry" (NULL for NOT_DUE). */
const char *silt_sched_trigger_name(silt_sched_trigger t);

/* Appends run `r` to the history file `path` (JSON lines, oldest first),
 * dropping the oldest runs of r->flow beyond `max`; atomic rewrite under
 * the flock of `path`.lock. */
int silt_sched_history_append(const char *path, const silt_flow_run *r, size_t max);

/* Reads the history file `path` (missing = empty), newest first, only
 * `flow`'s runs when not NULL. Free with silt_flow_runs_free. */
int silt_sched_history_read(const char *path, const char *flow, silt_flow_run **out, size_t *n);

/* ---- storage (flow_store.c): `.silt/flows/` ------------------------------ */

/* `.silt/flows/<file>` of the workspace in a malloc'd string (the directory
 * created when `create`); NULL on failure (error set). */
char *silt_sched_path(silt_workspace *ws, const char *file, bool create);

/* state.json as one JSON object (new reference; missing = {}). The caller
 * holds the flock of state.lock (silt_fs_lock) around load … save. */
int silt_sched_state_load(const char *path, json_t **out);
int silt_sched_state_save(const char *path, const json_t *st);
void silt_sched_state_get(const json_t *st, const char *flow, silt_sched_state *out);
int silt_sched_state_put(json_t *st, const char *flow, const silt_sched_state *in);

#endif
