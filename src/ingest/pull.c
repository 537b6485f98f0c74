/* pull.c — polling ingest (`silt pull`): runs a dataset's polling source
 * (the legacy SetPollingSource event of its chain) through ingress
 * (fetch.h) -> prepare (prepare.h) -> the ingestion pipeline (ingest.h).
 *
 * Invariants:
 *  - every ingest is one atomic AddData (plus SetDataSchema when the schema
 *    grows) published by the pipeline's single compare-and-swap; a failure
 *    leaves the blocks committed before it and nothing of the failed ingest;
 *  - the source state is written under source name "odf/polling" (ODF
 *    legacy polling source; states kamu wrote under "default" are read too)
 *    with the kinds kamu uses: odf/etag (HTTP ETag, or for FilesGlob the
 *    name of the last ingested file) and odf/last-modified (RFC 3339);
 *  - temporary files live in `<.silt>/tmp/<random>/` and are removed on
 *    every path.
 */
#include "dataset/dataset_internal.h"
#include "ingest/event_time.h"
#include "ingest/fetch.h"
#include "ingest/ingest.h"
#include "ingest/prepare.h"
#include "util/error.h"
#include "util/fsutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SILT_POLLING_SOURCE_NAME "odf/polling"
#define SILT_GLOB_MAX_ROUNDS 1000

static const odf_source_state_ref *prev_state(const silt_dataset *ds)
{
    const odf_source_state_ref *fallback = NULL;
    for (size_t i = 0; i < ds->st.num_source_states; i++) {
        const odf_source_state_ref *r = &ds->st.source_states[i];
        if (strcmp(r->source_name, SILT_POLLING_SOURCE_NAME) == 0)
            return r;
        if (strcmp(r->source_name, "default") == 0)
            fallback = r;
    }
    return fallback;
}

static void add_result(silt_pull_result *out, const silt_ingest_result *r)
{
    if (r->up_to_date)
        return;
    out->num_ingests++;
    if (r->num_records) {
        if (!out->has_offsets)
            out->first_offset = r->first_offset;
        out->has_offsets = true;
        out->last_offset = r->last_offset;
        out->num_records += r->num_records;
    }
    snprintf(out->head, sizeof out->head, "%s", r->head);
}

static void finish_result(silt_pull_result *out, silt_dataset *ds)
{
    out->up_to_date = out->num_ingests == 0;
    if (silt_ds_sync(ds) == 0) {
        snprintf(out->head, sizeof out->head, "%s", ds->head);
        if (ds->st.has_watermark) {
            out->has_watermark = true;
            silt_time_format((silt_time){ds->st.watermark.sec, ds->st.watermark.nsec}, out->watermark);
        }
    }
}

/* Last path component of a URL without query/fragment, for messages. */
static char *url_display(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t n = strcspn(p, "?#");
    const char *end = p + n;
    const char *s = end;
    while (s > p && s[-1] != '/')
        s--;
    if (s == end)
        return strdup("(url)");
    return strndup(s, (size_t)(end - s));
}

typedef struct source_parts {
    const odf_uvec *prepare;
    const odf_union *read, *preprocess, *merge;
} source_parts;

/* Prepares `file` and ingests it with the given fallback event time and state. */
static int ingest_one(silt_dataset *ds, const source_parts *sp, const char *tmpdir, const char *file,
                      const char *display, bool has_et, silt_time et, const odf_SourceState *state,
                      const silt_pull_opts *o, silt_ingest_result *r)
{
    char *prepared = NULL;
    int rc = silt_prepare_run(&prepared, sp->prepare, file, display, tmpdir, o->warn, o->warn_ctx);
    if (rc)
        return silt_err_context(rc, "pull '%s'", ds->name);
    const char *files[1] = {prepared};
    const char *disp[1] = {display};
    silt_ingest_request req = {.read = sp->read,
                               .preprocess = sp->preprocess,
                               .merge = sp->merge,
                               .files = files,
                               .display = disp,
                               .nfiles = 1,
                               .has_event_time = has_et,
                               .event_time = et,
                               .source_state = state};
    rc = silt_ingest_run(ds, &req, r);
    free(prepared);
    return rc;
}

static int pull_url(silt_dataset *ds, const odf_FetchStepUrl *u, const source_parts *sp, const silt_pull_opts *o,
                    silt_pull_result *out)
{
    const odf_source_state_ref *prev = prev_state(ds);
    if (u->cache.type == ODF_SourceCaching_Forever && (prev || ds->st.has_last_offset))
        return 0; /* ingested once: never again */
    if (ds->st.has_last_offset && !prev && !o->fetch_uncacheable) {
        out->uncacheable = true;
        return 0;
    }
    size_t nh = u->headers.present ? u->headers.n : 0;
    const char **names = calloc(nh + 1, sizeof *names), **values = calloc(nh + 1, sizeof *values);
    char *tmpdir = NULL, *body = NULL, *display = url_display(u->url ? u->url : "");
    int rc = names && values && display ? 0 : silt_err(SILT_ENOMEM, "pull: out of memory");
    for (size_t i = 0; !rc && i < nh; i++) {
        const odf_RequestHeader *h = u->headers.items[i];
        names[i] = h->name ? h->name : "";
        values[i] = h->value ? h->value : "";
    }
    if (!rc)
        rc = silt_ws_mktemp(ds->ws, "tmp", &tmpdir);
    if (!rc && !(body = silt_path_join(tmpdir, "fetched", NULL)))
        rc = silt_err(SILT_ENOMEM, "pull: out of memory");
    silt_fetch_url_result fr;
    memset(&fr, 0, sizeof fr);
    if (!rc) {
        silt_fetch_url_opts fo = {.url = u->url,
                                  .header_names = names,
                                  .header_values = values,
                                  .nheaders = nh,
                                  .prev_kind = prev ? prev->kind : NULL,
                                  .prev_value = prev ? prev->value : NULL,
                                  .out_path = body};
        rc = silt_fetch_url(&fr, &fo);
        if (rc)
            rc = silt_err_context(rc, "pull '%s'", ds->name);
    }
    if (!rc && !fr.up_to_date) {
        bool has_et = false;
        silt_time et = {0, 0};
        rc = silt_et_resolve(&u->event_time, ODF_EventTimeSource_FromMetadata, u->url, fr.has_last_modified,
                             fr.last_modified, &has_et, &et);
        if (rc)
            rc = silt_err_context(rc, "pull '%s'", ds->name);
        odf_SourceState ss = {SILT_POLLING_SOURCE_NAME, fr.state_kind, fr.state_value};
        silt_ingest_result r;
        if (!rc)
            rc = ingest_one(ds, sp, tmpdir, fr.path, display, has_et, et, fr.state_kind ? &ss : NULL, o, &r);
        if (!rc)
            add_result(out, &r);
    }
    silt_fetch_url_result_free(&fr);
    if (tmpdir)
        silt_fs_remove_tree(tmpdir);
    free(tmpdir);
    free(body);
    free(display);
    free(names);
    free(values);
    return rc;
}

static int pull_glob(silt_dataset *ds, const odf_FetchStepFilesGlob *g, const source_parts *sp,
                     const silt_pull_opts *o, silt_pull_result *out)
{
    int order = g->has_order ? g->order : ODF_SourceOrdering_ByName;
    for (int round = 0; round < SILT_GLOB_MAX_ROUNDS; round++) {
        const odf_source_state_ref *prev = prev_state(ds);
        const char *last = prev && strcmp(prev->kind, SILT_STATE_ETAG) == 0 ? prev->value : NULL;
        if (g->cache.type == ODF_SourceCaching_Forever && (prev || ds->st.has_last_offset))
            return 0;
        silt_glob_file *files = NULL;
        size_t n = 0, total = 0;
        int rc = silt_fetch_glob(&files, &n, &total, g->path, order, &g->event_time, last);
        if (rc)
            return silt_err_context(rc, "pull '%s'", ds->name);
        if (n == 0) {
            if (!last && out->num_ingests == 0)
                return silt_err(SILT_ENOTFOUND, "pull '%s': no files match '%s'", ds->name, g->path);
            return 0;
        }
        for (size_t i = 0; i < n && !rc; i++) {
            char *tmpdir = NULL;
            rc = silt_ws_mktemp(ds->ws, "tmp", &tmpdir);
            if (rc)
                break;
            odf_SourceState ss = {SILT_POLLING_SOURCE_NAME, SILT_STATE_ETAG, (char *)files[i].name};
            silt_ingest_result r;
            rc = ingest_one(ds, sp, tmpdir, files[i].path, files[i].name, files[i].has_time, files[i].time, &ss, o,
                            &r);
            if (!rc)
                add_result(out, &r);
            silt_fs_remove_tree(tmpdir);
            free(tmpdir);
        }
        silt_glob_files_free(files, n);
        if (rc)
            return rc;
        if (g->cache.type == ODF_SourceCaching_Forever)
            return 0;
    }
    return 0;
}

static int set_watermark(silt_dataset *ds, const char *text, silt_pull_result *out)
{
    silt_time t;
    if (silt_time_parse(text, &t) != 0)
        return silt_err(SILT_EINVAL, "--set-watermark '%s': not an RFC 3339 time", text);
    if (ds->st.has_watermark) {
        silt_time cur = {ds->st.watermark.sec, ds->st.watermark.nsec};
        if (silt_time_cmp(t, cur) <= 0)
            return silt_err(SILT_EINVAL, "--set-watermark %s: the watermark of '%s' is already %s", text,
                            ds->name, ds->watermark);
    }
    odf_AddData ad;
    memset(&ad, 0, sizeof ad);
    odf_Checkpoint cp;
    if (ds->st.has_last_offset) {
        ad.has_prev_offset = true;
        ad.prev_offset = ds->st.last_offset;
    }
    if (ds->st.has_checkpoint) {
        ad.prev_checkpoint = (odf_bytes){ds->st.checkpoint, SILT_MH_LEN};
        cp.physical_hash = (odf_bytes){ds->st.checkpoint, SILT_MH_LEN};
        cp.size = ds->st.checkpoint_size;
        ad.new_checkpoint = &cp;
    }
    ad.has_new_watermark = true;
    ad.new_watermark = (odf_time){t.sec, t.nsec};
    odf_union ev = {ODF_MetadataEvent_AddData, &ad};
    int rc = silt_ds_append_events_n(ds, &ev, 1, NULL);
    if (rc)
        return rc;
    out->num_ingests = 1;
    return 0;
}

int silt_dataset_pull(silt_pull_result *out, silt_dataset *ds, const silt_pull_opts *opts)
{
    memset(out, 0, sizeof *out);
    silt_pull_opts none = {0};
    const silt_pull_opts *o = opts ? opts : &none;
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    if (ds->st.dataset_kind != ODF_DatasetKind_Root)
        return silt_err(SILT_EINVAL, "pull '%s': a derivative dataset has no polling source", ds->name);
    if (o->set_watermark) {
        rc = set_watermark(ds, o->set_watermark, out);
        finish_result(out, ds);
        return rc;
    }
    if (!ds->st.polling_source.present)
        return silt_err(SILT_EINVAL, "pull '%s': the dataset has no polling source", ds->name);
    silt_arena *a = silt_arena_new();
    if (!a)
        return silt_err(SILT_ENOMEM, "pull: out of memory");
    odf_MetadataBlock *b = NULL;
    rc = silt_ds_load_block(ds, ds->st.polling_source.hash, a, &b);
    if (!rc && b->event.type != ODF_MetadataEvent_SetPollingSource)
        rc = silt_err(SILT_ECORRUPT, "summary of '%s' points at a block that is not a SetPollingSource", ds->name);
    if (!rc && o->target_records_per_slice && o->warn)
        o->warn(o->warn_ctx, "targetRecordsPerSlice is not supported yet: the input is ingested as one slice");
    if (!rc) {
        const odf_SetPollingSource *ps = b->event.value;
        source_parts sp = {&ps->prepare, &ps->read, &ps->preprocess, &ps->merge};
        switch (ps->fetch.type) {
        case ODF_FetchStep_Url:
            rc = pull_url(ds, ps->fetch.value, &sp, o, out);
            break;
        case ODF_FetchStep_FilesGlob:
            rc = pull_glob(ds, ps->fetch.value, &sp, o, out);
            break;
        case ODF_FetchStep_Container:
        case ODF_FetchStep_Mqtt:
        case ODF_FetchStep_EthereumLogs:
            rc = silt_err(SILT_EUNSUPPORTED, "pull '%s': this fetch step kind is not supported yet", ds->name);
            break;
        default:
            rc = silt_err(SILT_EINVAL, "pull '%s': the polling source has no fetch step", ds->name);
        }
    }
    silt_arena_free(a);
    int keep = rc;
    char msg[1024];
    if (rc)
        snprintf(msg, sizeof msg, "%s", silt_error_last());
    finish_result(out, ds);
    if (keep)
        return silt_err(keep, "%s", msg);
    return 0;
}
