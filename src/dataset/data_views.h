/* data_views.h — datasets as SQL views (internal): the slice files of a
 * dataset in offset order, its vocabulary and current schema, and the
 * TEMP VIEWs `silt sql` / `silt tail` query. The public entry points
 * (silt_sql, silt_dataset_tail, silt_dataset_schema_get) are in silt.h.
 *
 * Cost: finding the slices walks the chain newest-first from the head (or
 * the as-of block) and stops at the block holding offset 0 (or once
 * `max_records` records are covered), so metadata blocks older than the
 * first data block are never read; data blocks are all read (one small file
 * each).
 */
#ifndef SILT_DATASET_DATA_VIEWS_H
#define SILT_DATASET_DATA_VIEWS_H

#include <stdbool.h>
#include <stdint.h>

#include "dataset/dataset_internal.h"
#include "engine/engine.h"
#include "engine/query.h"

typedef struct silt_slice_list {
    char **files;          /* absolute paths, offset order (owned) */
    size_t n;
    uint64_t first_offset; /* offset of the first record of files[0] */
    bool has_last_offset;
    uint64_t last_offset;  /* last offset covered */
} silt_slice_list;

void silt_slice_list_free(silt_slice_list *l);

/* Collects the slices of ds (AddData / ExecuteTransform newData) from the
 * block `upto` (NULL = head) backwards. `upto` must be on the chain of ds's
 * ref (SILT_ENOTFOUND "block X is not in the chain of dataset 'name'"). With
 * max_records > 0, stops once the newest max_records records are covered.
 * A slice file missing from data/ is SILT_ECORRUPT naming the block. */
int silt_ds_slices(silt_dataset *ds, const uint8_t *upto, uint64_t max_records,
                   silt_slice_list *out);

/* System column names of ds (SetVocab or defaults); strings live in `a`. */
int silt_ds_vocab(silt_dataset *ds, silt_arena *a, silt_vocab_names *out);

/* Current DataSchema of ds (arena-owned) or *out = NULL when none is set. */
int silt_ds_schema(silt_dataset *ds, silt_arena *a, odf_DataSchema **out);

/* Creates TEMP VIEW `view` in `e` over the data of ledger dataset ds up to
 * block `upto` (NULL = head); with `current`, also "<view>:current". Files
 * datasets are viewed through their tabular schema instead
 * (src/files/files_schema.h). */
int silt_ds_create_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto,
                        bool current);

/* An engine for one call: in-memory, spilling into a fresh
 * `.silt/tmp/<random>/` (*tmpdir, malloc'd). Caller closes it with
 * silt_ws_engine_close. */
int silt_ws_engine_open(silt_workspace *ws, silt_engine **e, char **tmpdir);
/* Frees the engine and removes its scratch directory; returns rc, keeping
 * the caller's error message (a leftover scratch directory is not an
 * error). Consumes tmpdir. */
int silt_ws_engine_close(silt_engine *e, char *tmpdir, int rc);

#endif
