/* mqtt_serve.c — the MQTT sources of a workspace and one subscriber
 * connection for `silt serve` (include/silt.h "MQTT subscriptions"). The
 * server's thread per source (server/mqtt.c) reconnects; this file only
 * resolves a source (Flow Source or legacy SetPollingSource), renders its
 * target and runs silt_mqtt_run until told to stop. */
#include "dataset/dataset_internal.h"
#include "ingest/mqtt_pull.h"
#include "ingest/resources.h"
#include "util/error.h"

#include <stdlib.h>
#include <string.h>

void silt_mqtt_refs_free(silt_mqtt_ref *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++) {
        free(v[i].dataset);
        free(v[i].source);
    }
    free(v);
}

static int add_ref(silt_mqtt_ref **v, size_t *n, const char *ds, const char *src)
{
    silt_mqtt_ref *nv = realloc(*v, (*n + 1) * sizeof **v);
    if (!nv)
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    *v = nv;
    nv[*n].dataset = strdup(ds);
    nv[*n].source = strdup(src);
    (*n)++;
    return nv[*n - 1].dataset && nv[*n - 1].source ? 0 : silt_err(SILT_ENOMEM, "mqtt: out of memory");
}

/* The legacy SetPollingSource of ds when it fetches Mqtt (NULL otherwise). */
static const odf_SetPollingSource *legacy_mqtt(silt_dataset *ds, silt_arena *a)
{
    odf_MetadataBlock *b = NULL;
    if (!ds->st.polling_source.present || silt_ds_load_block(ds, ds->st.polling_source.hash, a, &b) != 0 ||
        b->event.type != ODF_MetadataEvent_SetPollingSource)
        return NULL;
    const odf_SetPollingSource *ps = b->event.value;
    return ps->fetch.type == ODF_FetchStep_Mqtt ? ps : NULL;
}

static int scan_dataset(silt_workspace *ws, silt_dataset *ds, silt_arena *a, silt_mqtt_ref **v, size_t *n)
{
    silt_flow_def **flows = NULL;
    size_t nf = 0;
    int rc = silt_res_flows_for_dataset(&flows, &nf, a, ws, ds->name);
    for (size_t i = 0; !rc && i < nf; i++)
        for (size_t j = 0; !rc && j < flows[i]->ntasks; j++) {
            odf_SourceSpec *s = NULL;
            if (silt_res_source_load(&s, a, ws, flows[i]->tasks[j].source) != 0) {
                silt_err_clear();
                continue;
            }
            if (s->ingress.type == ODF_Ingress_Mqtt)
                rc = add_ref(v, n, ds->name, flows[i]->tasks[j].source);
        }
    if (!rc && nf == 0 && legacy_mqtt(ds, a))
        rc = add_ref(v, n, ds->name, SILT_MQTT_LEGACY_SOURCE);
    return rc;
}

int silt_mqtt_sources(silt_mqtt_ref **out, size_t *n, silt_workspace *ws)
{
    *out = NULL;
    *n = 0;
    char **names = NULL;
    int rc = silt_dataset_list(&names, ws);
    for (size_t i = 0; rc >= 0 && names && names[i]; i++) {
        silt_dataset *ds = NULL;
        silt_arena *a = silt_arena_new();
        if (!a) {
            rc = silt_err(SILT_ENOMEM, "mqtt: out of memory");
            break;
        }
        if (silt_dataset_open(&ds, ws, names[i]) < 0 || silt_ds_sync(ds) < 0)
            silt_err_clear();
        else if (ds->st.dataset_kind == ODF_DatasetKind_Root)
            rc = scan_dataset(ws, ds, a, out, n);
        silt_dataset_free(ds);
        silt_arena_free(a);
    }
    silt_strv_free(names);
    if (rc < 0) {
        silt_mqtt_refs_free(*out, *n);
        *out = NULL;
        *n = 0;
        return rc;
    }
    return 0;
}

/* What silt_mqtt_run needs of the source: read step and ingress. */
static int resolve(silt_dataset *ds, const char *source, silt_arena *a, const odf_union **read,
                   odf_IngressMqtt *m, odf_ValueRefs **config)
{
    *config = NULL;
    if (strcmp(source, SILT_MQTT_LEGACY_SOURCE) == 0) {
        const odf_SetPollingSource *ps = legacy_mqtt(ds, a);
        if (!ps)
            return silt_err(SILT_ENOTFOUND, "mqtt: dataset '%s' has no SetPollingSource fetching Mqtt", ds->name);
        const odf_FetchStepMqtt *f = ps->fetch.value;
        *m = (odf_IngressMqtt){f->host, f->port, f->username, f->password, f->topics};
        *read = &ps->read;
        return 0;
    }
    odf_SourceSpec *s = NULL;
    int rc = silt_res_source_load(&s, a, ds->ws, source);
    if (!rc && s->ingress.type != ODF_Ingress_Mqtt)
        rc = silt_err(SILT_EINVAL, "mqtt: source '%s' is not an Mqtt source", source);
    if (rc)
        return rc;
    *m = *(const odf_IngressMqtt *)s->ingress.value;
    *read = &s->read;
    *config = s->config;
    return 0;
}

static int run_one(silt_dataset *ds, const char *source, const silt_mqtt_sub_opts *o, silt_mqtt_run_stats *st)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "mqtt: out of memory");
    const odf_union *read = NULL;
    odf_IngressMqtt m;
    odf_ValueRefs *refs = NULL;
    silt_config *cfg = NULL;
    silt_mqtt_rendered r;
    memset(&r, 0, sizeof r);
    int rc = resolve(ds, source, a, &read, &m, &refs);
    if (!rc)
        rc = silt_config_load(&cfg, ds->ws->root, refs);
    if (!rc)
        rc = silt_mqtt_render(&r, cfg, &m);
    if (!rc) {
        silt_mqtt_run_opts ro = {.stop = o->stop, .stop_ctx = o->stop_ctx, .log = o->log, .log_ctx = o->log_ctx,
                                 .cfg = cfg};
        rc = silt_mqtt_run(ds, source, read, &r.t, &ro, st);
    }
    if (rc)
        rc = silt_config_redact_error(cfg, rc);
    silt_mqtt_rendered_free(&r);
    silt_config_free(cfg);
    silt_arena_free(a);
    return rc;
}

int silt_mqtt_subscribe(silt_workspace *ws, const char *dataset, const char *source, const silt_mqtt_sub_opts *o,
                        silt_mqtt_sub_result *out)
{
    silt_mqtt_run_stats st;
    memset(&st, 0, sizeof st);
    silt_dataset *ds = NULL;
    int rc = silt_dataset_open(&ds, ws, dataset);
    if (!rc)
        rc = silt_ds_sync(ds);
    if (!rc)
        rc = run_one(ds, source, o, &st);
    silt_dataset_free(ds);
    if (out)
        *out = (silt_mqtt_sub_result){st.subscribed, st.messages, st.records, st.duplicates, st.rejected};
    return rc;
}
