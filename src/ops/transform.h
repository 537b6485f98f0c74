/* transform.h — the SQL transform of a derivative, as the ops layer uses it
 * beside `silt pull` (silt_dataset_derive in silt.h): replaying one
 * recorded ExecuteTransform for `silt verify` (transform.c). */
#ifndef SILT_OPS_TRANSFORM_H
#define SILT_OPS_TRANSFORM_H

#include "dataset/dataset_internal.h"
#include "engine/writer.h"

typedef struct silt_replay_result {
    uint64_t num_records;                        /* records the replayed run would commit */
    uint8_t logical_hash[SILT_LOGICAL_HASH_LEN]; /* their slice's logical hash (when num_records > 0) */
    bool incremental;                            /* the stateless mode ran */
    bool skipped;                                /* an input is not in the workspace: not replayed */
} silt_replay_result;

/* Runs the ExecuteTransform block `b` of derivative ds again, without
 * writing anything: SetTransform `st` (the one in force at b), each input
 * read at the blocks and offset intervals b's queryInputs record, the
 * derivative's own state at `prev_hash` (b's previous block), the records'
 * system time b's. When an input is not in the workspace (a dataset
 * imported from elsewhere, or an input deleted since) nothing runs and
 * out->skipped is set. The slice is written to a scratch directory only to hash
 * it. Errors: an input block no longer on the input's chain (its history
 * was reset) is SILT_ENOTFOUND "block X is not in the chain of dataset 'n'";
 * a queryInputs entry missing or without a block is SILT_EVALIDATION; a
 * query that fails is the engine's error. */
int silt_transform_replay(silt_dataset *ds, const odf_SetTransform *st, const odf_MetadataBlock *b,
                          const uint8_t prev_hash[SILT_MH_LEN], silt_replay_result *out);

/* Replays every ExecuteTransform of ds's chain (oldest first, each with the
 * SetTransform in force at it) and reports through `report` one line per
 * block whose replay fails or whose result is not the recorded newData
 * (record count, logical hash), or whose queryInputs do not continue the
 * previous ExecuteTransform's; *problems counts them. Returns 0 (also when
 * problems were found) or an error that stopped the replay (memory, a chain
 * that cannot be read). */
int silt_transform_verify_replay(silt_dataset *ds, void (*report)(void *ctx, const char *line), void *ctx,
                                 size_t *problems);

#endif
