/* scheduler.c — the flow scheduler thread of `silt serve`: starts with the
 * server (after the signal mask is set, so SIGTERM still goes to the
 * server's sigwait), ticks the library's scheduler (include/silt.h,
 * silt_scheduler_loop) and logs each run on stderr under the server's log
 * lock ("silt serve: flow 'NAME': …"). Stopping asks the scheduler to stop —
 * a run in progress ends at its next safe point, never half-committed — and
 * the server waits for the thread within its shutdown budget.
 */
#include "flow_sched.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct srv_sched {
    silt_scheduler *s;
    pthread_t thread;
    pthread_mutex_t *log_lock;
    atomic_bool done;
};

static void sched_log(void *ctx, const char *line)
{
    srv_sched *t = ctx;
    pthread_mutex_lock(t->log_lock);
    fprintf(stderr, "silt serve: %s\n", line);
    fflush(stderr);
    pthread_mutex_unlock(t->log_lock);
}

static void *sched_main(void *arg)
{
    srv_sched *t = arg;
    silt_scheduler_loop(t->s);
    atomic_store(&t->done, true);
    return NULL;
}

srv_sched *srv_sched_start(const char *ws_dir, pthread_mutex_t *log_lock)
{
    srv_sched *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->log_lock = log_lock;
    atomic_init(&t->done, false);
    silt_scheduler_opts o = {.log = sched_log, .log_ctx = t};
    if (silt_scheduler_new(&t->s, ws_dir, &o) < 0) {
        fprintf(stderr, "silt serve: scheduler: %s\n", silt_error_last());
        free(t);
        return NULL;
    }
    if (pthread_create(&t->thread, NULL, sched_main, t) != 0) {
        fprintf(stderr, "silt serve: scheduler: cannot start its thread\n");
        silt_scheduler_free(t->s);
        free(t);
        return NULL;
    }
    return t;
}

void srv_sched_request_stop(srv_sched *t)
{
    if (t)
        silt_scheduler_stop(t->s);
}

bool srv_sched_done(const srv_sched *t) { return !t || atomic_load(&((srv_sched *)t)->done); }

void srv_sched_free(srv_sched *t)
{
    if (!t)
        return;
    pthread_join(t->thread, NULL);
    silt_scheduler_free(t->s);
    free(t);
}
