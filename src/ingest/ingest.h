/* ingest.h — the ingestion pipeline shared by push (`silt ingest`) and
 * polling (`silt pull`) sources: read -> preprocess -> event time -> merge ->
 * write slice + checkpoint -> commit (SetDataSchema if the schema grew, then
 * AddData, published by one compare-and-swap).
 *
 * Stages run in one embedded engine as TEMP TABLEs: __silt_read (read step),
 * __silt_pre (preprocess), __silt_in (merge input: event time first),
 * __silt_prev (previous merge state from the last checkpoint), __silt_out
 * (changelog, rowid = final order), __silt_state (next merge state).
 */
#ifndef SILT_INGEST_H
#define SILT_INGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "odf/odf_types.h"
#include "silt.h"
#include "util/timeutil.h"

typedef struct silt_ingest_request {
    const odf_union *read;       /* ODF ReadStep */
    const odf_union *preprocess; /* ODF Transform, or NULL / type 0 */
    const odf_union *merge;      /* ODF MergeStrategy */
    const char *const *files;    /* local files to read */
    const char *const *display;  /* names for messages (may be NULL) */
    size_t nfiles;
    bool has_event_time;         /* fallback event time for rows without one */
    silt_time event_time;
    const odf_SourceState *source_state; /* state to commit, or NULL */
    uint64_t target_records_per_slice;   /* 0 = one slice per ingest */
    silt_progress_fn progress;           /* may be NULL: called before the read (done 0) and after the
                                            merge, before the commit (done = total, records); a nonzero
                                            return there is SILT_ECANCELED and nothing is committed */
    void *progress_ctx;
    silt_progress *prog;                 /* the counters reported (phase, unit, totals set by the caller) */
} silt_ingest_request;

/* Runs the pipeline on `ds` and commits the result. "Up to date" (nothing
 * new and no state change) writes no block and sets out->up_to_date. A
 * commit that loses the race to another writer is retried against the new
 * head (5 attempts in all, random backoff) while the request is still valid
 * there: same push / polling sources and the same state of
 * req->source_state's source; the input is re-read only when the vocab or
 * schema changed. Otherwise SILT_ECONFLICT ("… head moved; retry"). A
 * checkpoint is checked (size, SHA3-256) before it is read back as the
 * merge state: SILT_ECORRUPT naming it and its block. */
int silt_ingest_run(silt_dataset *ds, const silt_ingest_request *req, silt_ingest_result *out);

#endif
