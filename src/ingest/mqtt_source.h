/* mqtt_source.h — MQTT push sources (docs/ingestion.md "Mqtt"): a
 * subscriber session that appends every received message to the source's
 * push buffer file (push_buffer.h MSG / REL frames) and acknowledges it
 * (PUBACK for QoS 1, PUBREC for QoS 2) only after that append is
 * fsynced. The buffer is ingested by the same flush as RestEndpoint's
 * (push_flush.h).
 *
 * Invariants: one session per source at a time (`<source>.session.lock`
 * in the buffer directory, held while connected); the packet-id state
 * that makes QoS 2 exactly-once and dedupes QoS 1 redeliveries lives in
 * the buffer file, so it survives a crash; secrets (rendered host, user,
 * password, topics) never appear in messages or stored data.
 */
#ifndef SILT_INGEST_MQTT_SOURCE_H
#define SILT_INGEST_MQTT_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/config.h"
#include "odf/odf_types.h"
#include "silt.h"

/* Where and what to subscribe: rendered strings, owned by the caller. */
typedef struct silt_mqtt_target {
    const char *host;
    int port;
    const char *username, *password; /* NULL: none */
    const char *const *topics;
    const int *qos; /* ODF_MqttQos_* = MQTT QoS 0..2 */
    size_t ntopics;
} silt_mqtt_target;

typedef struct silt_mqtt_run_opts {
    int idle_ms;          /* > 0: stop after this long without a message (drain) */
    int max_ms;           /* > 0: stop after this long in all (drain) */
    int (*stop)(void *ctx); /* may be NULL: checked every 100 ms, nonzero = stop */
    void *stop_ctx;
    silt_report_fn log;   /* dropped messages, reconnects; may be NULL */
    void *log_ctx;
    const silt_config *cfg; /* redacts log lines and errors; may be NULL */
} silt_mqtt_run_opts;

typedef struct silt_mqtt_run_stats {
    uint64_t messages;   /* messages buffered (with at least one record) */
    uint64_t records;    /* records buffered */
    uint64_t duplicates; /* redeliveries recognised and not stored */
    uint64_t rejected;   /* payloads the read step could not parse (acknowledged, dropped) */
    bool subscribed;     /* the broker accepted the connection and the subscription */
} silt_mqtt_run_stats;

/* Connects, subscribes and buffers messages for source `source` of `ds`
 * (its records read with `read`) until opts says stop, then disconnects.
 * SILT_ECONFLICT when another session of the source is connected;
 * SILT_EIO for the network ("mqtt: cannot connect to …", "the broker
 * closed the connection"); SILT_EINVAL for a refused CONNECT ("mqtt: the
 * broker refused the connection: bad user name or password") or
 * subscription. Everything acknowledged before an error is buffered. */
int silt_mqtt_run(silt_dataset *ds, const char *source, const odf_union *read, const silt_mqtt_target *t,
                  const silt_mqtt_run_opts *o, silt_mqtt_run_stats *st);

/* The client id of the source's persistent session: "silt-" + the
 * dataset id's last 16 characters + "-" + 8 hex digits of the source
 * name's hash (stable across runs and hosts). */
void silt_mqtt_client_id(const silt_dataset *ds, const char *source, char out[40]);

#endif
