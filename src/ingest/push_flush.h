/* push_flush.h — the flush of a push buffer file shared by RestEndpoint
 * (push_rest.c) and MQTT (mqtt_source.c) sources: the live records of
 * `<.silt>/buffers/<dataset id>/<source>.wal` become ONE AddData through
 * the source's read (as NDJSON) / preprocess / merge, with the source
 * state {silt/push-buffer, next seq}, then the file is compacted. Holds
 * `<source>.flush.lock` throughout and `<source>.lock` while reading and
 * compacting (see push_rest.c for the crash argument). */
#ifndef SILT_INGEST_PUSH_FLUSH_H
#define SILT_INGEST_PUSH_FLUSH_H

#include "odf/odf_types.h"
#include "silt.h"

/* Flushes source `name` (spec: its Source resource, owned by the caller)
 * of `ds`; out->committed when an AddData was written. Errors: negative
 * SILT_E* (ingest errors as silt_ingest_run's), nothing committed. */
int silt_push_flush_source(silt_push_flush_result *out, silt_dataset *ds, const char *name, odf_SourceSpec *spec);

#endif
