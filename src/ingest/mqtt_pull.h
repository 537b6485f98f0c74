/* mqtt_pull.h — `silt pull` (and the server) on an MQTT source: the
 * source's templated connection fields rendered, a bounded drain of the
 * persistent session into the buffer, and the flush (docs/ingestion.md
 * "Mqtt"). */
#ifndef SILT_INGEST_MQTT_PULL_H
#define SILT_INGEST_MQTT_PULL_H

#include "ingest/config.h"
#include "ingest/mqtt_source.h"

/* The source name (buffer file, source state) of a legacy SetPollingSource
 * whose fetch step is Mqtt. */
#define SILT_MQTT_LEGACY_SOURCE "odf-polling"

/* A rendered target: owns its strings (they may hold secrets). */
typedef struct silt_mqtt_rendered {
    silt_mqtt_target t;
    char *host, *user, *pass;
    char **topics;
    int *qos;
} silt_mqtt_rendered;

/* Renders host, username, password and every topic path of `m` with `cfg`
 * (templates `${{ env.X }}`, `${{ config.X }}`); port 0 = 1883, a topic
 * without qos = AtMostOnce. SILT_EINVAL for no host or no topics. */
int silt_mqtt_render(silt_mqtt_rendered *r, silt_config *cfg, const odf_IngressMqtt *m);
void silt_mqtt_rendered_free(silt_mqtt_rendered *r);

/* The drain limits of `silt pull`: SILT_MQTT_IDLE_MS (default 1000) and
 * SILT_MQTT_MAX_MS (default 30000) from the environment. */
void silt_mqtt_drain_limits(int *idle_ms, int *max_ms);

/* Drains the session of source `name` (spec: its Source; for a legacy
 * SetPollingSource a spec built from it) into the buffer — skipped when a
 * server holds the session, which buffers itself — then flushes the buffer
 * as one AddData. Fills out like a polling pull. */
int silt_mqtt_pull(silt_dataset *ds, const char *name, odf_SourceSpec *spec, const odf_IngressMqtt *m,
                   silt_config *cfg, const silt_pull_opts *o, silt_pull_result *out);

#endif
