/* mqtt_subs.h — the MQTT subscriptions of `silt serve` (mqtt_subs.c). */
#ifndef SILT_SERVER_MQTT_SUBS_H
#define SILT_SERVER_MQTT_SUBS_H

#include <pthread.h>
#include <stdbool.h>

typedef struct srv_mqtt srv_mqtt;

/* Starts one thread per MQTT source of the workspace `ws_dir` (silt_mqtt_sources);
 * log lines go to stderr under *log_lock. NULL when there is none or it
 * could not start (the reason is printed; the server runs without it). */
srv_mqtt *srv_mqtt_start(const char *ws_dir, pthread_mutex_t *log_lock);
/* Asks every thread to disconnect (returns at once; NULL is a no-op). */
void srv_mqtt_request_stop(srv_mqtt *m);
/* True once every thread has returned (or m is NULL). */
bool srv_mqtt_done(const srv_mqtt *m);
/* Joins the threads (call after srv_mqtt_done) and frees. */
void srv_mqtt_free(srv_mqtt *m);

#endif
