/* limits.c — per-query limits of the engine: a watchdog thread that
 * interrupts the running statement once its time is up (the `silt serve`
 * query endpoint), and whether the last engine error was DuckDB running out
 * of memory (engine.c records it), so a caller that set a memory limit can
 * say so.
 *
 * Invariants: the watchdog touches the engine only through
 * duckdb_interrupt, which DuckDB allows from another thread; after the
 * deadline it interrupts again every 20 ms until stopped, so a statement
 * that started after the first interrupt (DuckDB clears the flag when a
 * statement begins) is still stopped; stop joins the thread, so nothing of
 * the watchdog outlives the call.
 */
#include "engine/engine_internal.h"
#include "util/error.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct silt_engine_watch {
    silt_engine *e;
    uint32_t timeout_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stop;
    atomic_bool fired;
};

static void add_ms(struct timespec *t, uint64_t ms)
{
    t->tv_sec += (time_t)(ms / 1000);
    t->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

static void *watch_main(void *arg)
{
    silt_engine_watch *w = arg;
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    add_ms(&at, w->timeout_ms);
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        int rc = pthread_cond_timedwait(&w->cond, &w->lock, &at);
        if (rc == ETIMEDOUT && !w->stop) {
            atomic_store(&w->fired, true);
            duckdb_interrupt(silt_engine_conn(w->e));
            add_ms(&at, 20);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int silt_engine_watch_start(silt_engine_watch **out, silt_engine *e, uint32_t timeout_ms)
{
    *out = NULL;
    silt_engine_watch *w = calloc(1, sizeof *w);
    if (!w)
        return silt_err(SILT_ENOMEM, "out of memory");
    w->e = e;
    w->timeout_ms = timeout_ms;
    atomic_init(&w->fired, false);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) {
        free(w);
        return silt_err(SILT_EINTERNAL, "engine: cannot create the query watchdog");
    }
    pthread_mutex_init(&w->lock, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        pthread_cond_destroy(&w->cond);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return silt_err(SILT_EINTERNAL, "engine: cannot start the query watchdog");
    }
    *out = w;
    return 0;
}

bool silt_engine_watch_stop(silt_engine_watch *w)
{
    if (!w)
        return false;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    bool fired = atomic_load(&w->fired);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->lock);
    free(w);
    return fired;
}

static _Thread_local bool last_oom;

void silt_engine_note_error_type(int duckdb_error_type)
{
    last_oom = duckdb_error_type == DUCKDB_ERROR_OUT_OF_MEMORY;
}

bool silt_engine_last_error_was_oom(void) { return last_oom; }
