/* mqtt_subs.c — a thread per MQTT source for `silt serve`
 * (docs/ingestion.md "Mqtt"): each keeps the source's persistent session
 * connected through silt_mqtt_subscribe, which buffers every message
 * durably before acknowledging it; a lost or refused connection is logged
 * and retried after a backoff that doubles from 500 ms up to
 * SILT_MQTT_BACKOFF_MAX_MS (default 30000) and starts over after a
 * connection that subscribed. The buffer is flushed by the source's Flow
 * or `silt pull`, never here. Stopping: every thread polls the stop flag
 * every 100 ms (also while waiting to reconnect).
 */
#include "mqtt_subs.h"

#include "silt.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct sub {
    struct srv_mqtt *m;
    char *dataset, *source;
    pthread_t thread;
    bool started;
    atomic_bool done;
} sub;

struct srv_mqtt {
    char *ws_dir;
    pthread_mutex_t *log_lock;
    atomic_bool stop;
    sub *subs;
    size_t n;
};

static void logf_(srv_mqtt *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(srv_mqtt *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(m->log_lock);
    fputs("silt serve: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    pthread_mutex_unlock(m->log_lock);
    va_end(ap);
}

static void log_line(void *ctx, const char *line) { logf_(ctx, "%s", line); }

static int should_stop(void *ctx) { return atomic_load(&((srv_mqtt *)ctx)->stop); }

static int backoff_max(void)
{
    const char *v = getenv("SILT_MQTT_BACKOFF_MAX_MS");
    long l = v ? strtol(v, NULL, 10) : 0;
    return l >= 100 && l <= 600000 ? (int)l : 30000;
}

/* Sleeps ms in 100 ms steps; false when asked to stop meanwhile. */
static bool wait_ms(srv_mqtt *m, int ms)
{
    for (int t = 0; t < ms && !atomic_load(&m->stop); t += 100) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return !atomic_load(&m->stop);
}

static void session(sub *s, silt_workspace *ws, int *delay)
{
    srv_mqtt *m = s->m;
    silt_mqtt_sub_opts o = {.stop = should_stop, .stop_ctx = m, .log = log_line, .log_ctx = m};
    silt_mqtt_sub_result r;
    int rc = silt_mqtt_subscribe(ws, s->dataset, s->source, &o, &r);
    if (r.subscribed)
        *delay = 500;
    if (rc == 0)
        return;
    const char *e = silt_error_last();
    if (strncmp(e, "mqtt: ", 6) == 0)
        e += 6;
    logf_(m, "mqtt: source '%s' of '%s': %s; reconnecting in %d ms", s->source, s->dataset, e, *delay);
    wait_ms(m, *delay);
    *delay = *delay * 2 > backoff_max() ? backoff_max() : *delay * 2;
}

static void *sub_main(void *arg)
{
    sub *s = arg;
    srv_mqtt *m = s->m;
    silt_workspace *ws = NULL;
    if (silt_workspace_open(&ws, m->ws_dir) < 0) {
        logf_(m, "mqtt: source '%s' of '%s': %s", s->source, s->dataset, silt_error_last());
    } else {
        logf_(m, "mqtt: source '%s' of '%s': subscribing", s->source, s->dataset);
        int delay = 500;
        while (!atomic_load(&m->stop))
            session(s, ws, &delay);
    }
    silt_workspace_free(ws);
    atomic_store(&s->done, true);
    return NULL;
}

static srv_mqtt *list_sources(const char *ws_dir, pthread_mutex_t *log_lock)
{
    silt_workspace *ws = NULL;
    silt_mqtt_ref *refs = NULL;
    size_t n = 0;
    srv_mqtt *m = NULL;
    if (silt_workspace_open(&ws, ws_dir) < 0 || silt_mqtt_sources(&refs, &n, ws) < 0) {
        fprintf(stderr, "silt serve: mqtt: %s\n", silt_error_last());
    } else if (n) {
        m = calloc(1, sizeof *m);
        if (m && ((m->subs = calloc(n, sizeof *m->subs)) == NULL || (m->ws_dir = strdup(ws_dir)) == NULL)) {
            free(m->subs);
            free(m);
            m = NULL;
        }
        for (size_t i = 0; m && i < n; i++) {
            m->subs[i] = (sub){.m = m, .dataset = refs[i].dataset, .source = refs[i].source};
            refs[i].dataset = refs[i].source = NULL;
        }
        if (m) {
            m->n = n;
            m->log_lock = log_lock;
        } else {
            fprintf(stderr, "silt serve: mqtt: out of memory\n");
        }
    }
    silt_mqtt_refs_free(refs, n);
    silt_workspace_free(ws);
    return m;
}

srv_mqtt *srv_mqtt_start(const char *ws_dir, pthread_mutex_t *log_lock)
{
    srv_mqtt *m = list_sources(ws_dir, log_lock);
    if (!m)
        return NULL;
    atomic_init(&m->stop, false);
    for (size_t i = 0; i < m->n; i++) {
        atomic_init(&m->subs[i].done, false);
        m->subs[i].started = pthread_create(&m->subs[i].thread, NULL, sub_main, &m->subs[i]) == 0;
        if (!m->subs[i].started) {
            atomic_store(&m->subs[i].done, true);
            fprintf(stderr, "silt serve: mqtt: cannot start the thread of source '%s'\n", m->subs[i].source);
        }
    }
    return m;
}

void srv_mqtt_request_stop(srv_mqtt *m)
{
    if (m)
        atomic_store(&m->stop, true);
}

bool srv_mqtt_done(const srv_mqtt *m)
{
    for (size_t i = 0; m && i < m->n; i++)
        if (!atomic_load(&((srv_mqtt *)m)->subs[i].done))
            return false;
    return true;
}

void srv_mqtt_free(srv_mqtt *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        if (m->subs[i].started)
            pthread_join(m->subs[i].thread, NULL);
        free(m->subs[i].dataset);
        free(m->subs[i].source);
    }
    free(m->subs);
    free(m->ws_dir);
    free(m);
}
