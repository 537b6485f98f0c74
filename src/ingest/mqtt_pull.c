/* mqtt_pull.c — rendering an MQTT source's target and `silt pull` on it
 * (see mqtt_pull.h). A drain that fails (broker unreachable, refused
 * credentials) commits nothing; what it acknowledged stays buffered. */
#include "ingest/mqtt_pull.h"

#include "ingest/push_flush.h"
#include "util/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void silt_mqtt_rendered_free(silt_mqtt_rendered *r)
{
    free(r->host);
    free(r->user);
    free(r->pass);
    for (size_t i = 0; r->topics && i < r->t.ntopics; i++)
        free(r->topics[i]);
    free(r->topics);
    free(r->qos);
    memset(r, 0, sizeof *r);
}

static int render_topics(silt_mqtt_rendered *r, silt_config *cfg, const odf_IngressMqtt *m)
{
    size_t n = m->topics.n;
    r->topics = calloc(n ? n : 1, sizeof *r->topics);
    r->qos = calloc(n ? n : 1, sizeof *r->qos);
    if (!r->topics || !r->qos)
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++) {
        const odf_MqttTopicSubscription *ts = m->topics.items[i];
        char what[48];
        snprintf(what, sizeof what, "ingress.topics[%zu].path", i);
        rc = silt_config_render(cfg, what, ts->path ? ts->path : "", &r->topics[i]);
        if (!rc && !*r->topics[i])
            rc = silt_err(SILT_EINVAL, "mqtt: %s is empty", what);
        r->qos[i] = ts->has_qos ? ts->qos : ODF_MqttQos_AtMostOnce;
        r->t.ntopics = i + 1;
    }
    return rc;
}

int silt_mqtt_render(silt_mqtt_rendered *r, silt_config *cfg, const odf_IngressMqtt *m)
{
    memset(r, 0, sizeof *r);
    if (!m || !m->host || !*m->host)
        return silt_err(SILT_EINVAL, "mqtt: the ingress has no host");
    if (m->topics.n == 0)
        return silt_err(SILT_EINVAL, "mqtt: the ingress has no topics");
    int rc = silt_config_render(cfg, "ingress.host", m->host, &r->host);
    if (!rc && m->username)
        rc = silt_config_render(cfg, "ingress.username", m->username, &r->user);
    if (!rc && m->password)
        rc = silt_config_render(cfg, "ingress.password", m->password, &r->pass);
    if (!rc)
        rc = render_topics(r, cfg, m);
    if (rc) {
        silt_mqtt_rendered_free(r);
        return rc;
    }
    r->t = (silt_mqtt_target){r->host, m->port ? m->port : 1883, r->user, r->pass,
                              (const char *const *)r->topics, r->qos, m->topics.n};
    return 0;
}

static int env_ms(const char *name, int def)
{
    const char *v = getenv(name);
    char *end = NULL;
    long l = v && *v ? strtol(v, &end, 10) : -1;
    return l > 0 && l < 3600000 && end && !*end ? (int)l : def;
}

void silt_mqtt_drain_limits(int *idle_ms, int *max_ms)
{
    *idle_ms = env_ms("SILT_MQTT_IDLE_MS", 1000);
    *max_ms = env_ms("SILT_MQTT_MAX_MS", 30000);
}

static int drain(silt_dataset *ds, const char *name, const odf_SourceSpec *spec, const silt_mqtt_target *t,
                 silt_config *cfg, const silt_pull_opts *o)
{
    silt_mqtt_run_opts ro = {.log = o->warn, .log_ctx = o->warn_ctx, .cfg = cfg};
    silt_mqtt_drain_limits(&ro.idle_ms, &ro.max_ms);
    silt_mqtt_run_stats st;
    memset(&st, 0, sizeof st);
    int rc = silt_mqtt_run(ds, name, &spec->read, t, &ro, &st);
    if (rc == SILT_ECONFLICT) { /* silt serve holds the session and buffers: just flush */
        silt_err_clear();
        return 0;
    }
    return rc;
}

int silt_mqtt_pull(silt_dataset *ds, const char *name, odf_SourceSpec *spec, const odf_IngressMqtt *m,
                   silt_config *cfg, const silt_pull_opts *o, silt_pull_result *out)
{
    silt_mqtt_rendered r;
    int rc = silt_mqtt_render(&r, cfg, m);
    if (rc)
        return silt_config_redact_error(cfg, rc);
    rc = drain(ds, name, spec, &r.t, cfg, o);
    silt_mqtt_rendered_free(&r);
    silt_push_flush_result f;
    if (!rc)
        rc = silt_push_flush_source(&f, ds, name, spec);
    if (rc)
        return silt_config_redact_error(cfg, rc);
    if (f.committed) {
        out->num_ingests = 1;
        out->num_records = f.ingest.num_records;
        out->has_offsets = f.ingest.num_records > 0;
        out->first_offset = f.ingest.first_offset;
        out->last_offset = f.ingest.last_offset;
    } else {
        out->up_to_date = true;
    }
    return 0;
}
