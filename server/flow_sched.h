/* flow_sched.h — the flow scheduler thread of `silt serve` (scheduler.c). */
#ifndef SILT_SERVER_FLOW_SCHED_H
#define SILT_SERVER_FLOW_SCHED_H

#include <pthread.h>
#include <stdbool.h>

#include "silt.h"

typedef struct srv_sched srv_sched;

/* Starts the scheduler over the workspace `ws_dir` on its own thread; its
 * log lines go to stderr under *log_lock. NULL when it could not start (the
 * reason is printed; the server runs without it). */
srv_sched *srv_sched_start(const char *ws_dir, pthread_mutex_t *log_lock);
/* Asks it to stop (returns at once; NULL is a no-op). */
void srv_sched_request_stop(srv_sched *t);
/* True once its thread has returned (or t is NULL). */
bool srv_sched_done(const srv_sched *t);
/* Joins the thread (call after srv_sched_done) and frees. */
void srv_sched_free(srv_sched *t);

#endif
