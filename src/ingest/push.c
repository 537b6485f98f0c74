/* push.c — push ingest (`silt ingest`): picks the dataset's push source
 * (AddPushSource) and runs the ingestion pipeline on the given files. A
 * dataset without any source accepts a plain Append of a self-describing
 * format (Parquet). */
#include "dataset/dataset_internal.h"
#include "engine/read.h"
#include "ingest/ingest.h"
#include "util/error.h"

#include <string.h>
#include <sys/stat.h>

static int pick_push_source(silt_dataset *ds, silt_arena *a, const char *name, odf_AddPushSource **out)
{
    *out = NULL;
    const odf_chain_state *st = &ds->st;
    const odf_push_source_ref *ref = NULL;
    if (name) {
        for (size_t i = 0; i < st->num_push_sources; i++)
            if (strcmp(st->push_sources[i].name, name) == 0)
                ref = &st->push_sources[i];
        if (!ref)
            return silt_err(SILT_ENOTFOUND, "dataset '%s' has no push source named '%s'", ds->name, name);
    } else if (st->num_push_sources == 1) {
        ref = &st->push_sources[0];
    } else if (st->num_push_sources > 1) {
        return silt_err(SILT_EINVAL, "dataset '%s' has %zu push sources; choose one with --source-name", ds->name,
                        st->num_push_sources);
    } else {
        return 0;
    }
    odf_MetadataBlock *b;
    int rc = silt_ds_load_block(ds, ref->block, a, &b);
    if (rc)
        return rc;
    if (b->event.type != ODF_MetadataEvent_AddPushSource)
        return silt_err(SILT_ECORRUPT, "summary of '%s' points at a block that is not an AddPushSource", ds->name);
    *out = b->event.value;
    return 0;
}

/* Format implied by the files' extensions when all agree (else NULL). */
static const char *infer_format(const silt_ingest_opts *o)
{
    static const struct {
        const char *ext, *format;
    } EXT[] = {{".parquet", "parquet"}, {".csv", "csv"},         {".json", "json"},
               {".ndjson", "ndjson"},   {".jsonl", "ndjson"},     {".geojson", "geojson"},
               {".ndgeojson", "ndgeojson"}, {".shp", "shp"}};
    const char *found = NULL;
    for (size_t i = 0; i < o->nfiles; i++) {
        const char *f = o->files[i], *dot = strrchr(f, '.'), *fmt = NULL;
        for (size_t k = 0; dot && k < sizeof EXT / sizeof EXT[0]; k++)
            if (strcmp(dot, EXT[k].ext) == 0)
                fmt = EXT[k].format;
        if (!fmt || (found && strcmp(found, fmt) != 0))
            return NULL;
        found = fmt;
    }
    return found;
}

/* The error of an ingest into a dataset without a push source: it says how
 * to get one (with the input's format when it is one `silt new
 * --push-source` knows). */
static int no_push_source(const char *name, const char *format)
{
    const char *f = format && strcmp(format, "shp") != 0 && strcmp(format, "parquet") != 0 ? format : "csv";
    return silt_err(SILT_EINVAL,
                    "dataset '%s' has no push source: add one with `silt append %s source.yaml` (kind: "
                    "AddPushSource), or create a dataset with one: `silt new NAME --push-source %s`; "
                    "Parquet (--format parquet) needs none",
                    name, name, f);
}

int silt_dataset_ingest(silt_ingest_result *out, silt_dataset *ds, const silt_ingest_opts *o)
{
    memset(out, 0, sizeof *out);
    if (o->nfiles == 0)
        return silt_err(SILT_EINVAL, "nothing to ingest: no input files");
    int rc = silt_ds_sync(ds);
    if (rc)
        return rc;
    if (ds->st.dataset_kind != ODF_DatasetKind_Root)
        return silt_err(SILT_EINVAL, "dataset '%s' is a derivative dataset; only root datasets accept ingest",
                        ds->name);
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    silt_progress prog = {.phase = "ingest", .unit = "files", .total = o->nfiles};
    for (size_t i = 0; o->progress && i < o->nfiles; i++) {
        struct stat st;
        if (stat(o->files[i], &st) == 0 && S_ISREG(st.st_mode))
            prog.total_bytes += (uint64_t)st.st_size;
    }
    silt_ingest_request req = {.files = o->files,
                               .display = o->display,
                               .nfiles = o->nfiles,
                               .progress = o->progress,
                               .progress_ctx = o->progress_ctx,
                               .prog = &prog};
    odf_AddPushSource *src = NULL;
    odf_union read, merge;
    rc = pick_push_source(ds, a, o->source_name, &src);
    if (!rc && src) {
        req.read = &src->read;
        req.preprocess = &src->preprocess;
        req.merge = &src->merge;
        if (o->format) {
            /* transcoding: the source's schema carries over (see read.h) */
            rc = silt_read_step_transcode(a, &src->read, o->format, &read);
            if (!rc)
                req.read = &read;
        }
    } else if (!rc) {
        if (ds->st.polling_source.present)
            rc = silt_err(SILT_EINVAL, "dataset '%s' has a polling source; use 'silt pull'", ds->name);
        else if (!(o->format ? o->format : infer_format(o)) ||
                 strcmp(o->format ? o->format : infer_format(o), "parquet") != 0)
            rc = no_push_source(ds->name, o->format ? o->format : infer_format(o));
        else
            rc = silt_read_step_for_format(a, "parquet", &read);
        if (!rc) {
            odf_MergeStrategyAppend *ap = silt_arena_alloc(a, sizeof *ap);
            if (!ap)
                rc = SILT_ENOMEM;
            merge = (odf_union){ODF_MergeStrategy_Append, ap};
            req.read = &read;
            req.merge = &merge;
        }
    }
    if (!rc && o->event_time) {
        rc = silt_time_parse(o->event_time, &req.event_time);
        if (rc)
            rc = silt_err(SILT_EINVAL, "--event-time '%s': not an RFC 3339 time", o->event_time);
        req.has_event_time = rc == 0;
    }
    if (!rc)
        rc = silt_ingest_run(ds, &req, out);
    silt_arena_free(a);
    return rc;
}
