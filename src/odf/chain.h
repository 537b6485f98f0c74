/* chain.h — ODF metadata chain rules.
 *
 * odf_chain_state is everything the rules need to know about a chain without
 * walking it: the head, the sequence number and system time of the head, the
 * dataset identity, data offsets, checkpoint, watermark, the blocks holding
 * the current schema / vocab / sources / info / license / attachments /
 * transform, and the last source state per source name. It is what the
 * dataset summary (src/dataset/summary.c) persists next to the refs.
 *
 * Every value the rules use names the block it comes from (the Seed, the
 * last AddData/ExecuteTransform, the block of each current event and source
 * state), so a state read back from an untrusted cache can be checked
 * against a handful of blocks with odf_chain_state_validate() instead of
 * being trusted.
 *
 * Validation is incremental: odf_chain_check() tells whether `blk` may be
 * appended to a chain in `state`; odf_chain_apply() advances the state.
 * Verifying a whole chain = check + apply for every block from the seed on.
 *
 * Rules (ODF "Metadata Chain: Validation" + silt's strictness):
 *  - the first block is a Seed with sequence number 0 and no prevBlockHash;
 *    no other block is a Seed;
 *  - sequenceNumber = previous + 1, prevBlockHash = hash of the previous block;
 *  - systemTime never decreases;
 *  - AddData only in root datasets, ExecuteTransform only in derivative ones;
 *    SetPollingSource/AddPushSource/DisablePushSource/DisablePollingSource
 *    only in root, SetTransform only in derivative datasets;
 *  - AddData/ExecuteTransform: prevOffset equals the last offset (both absent
 *    before any data); newData.offsetInterval.start = last offset + 1 (or 0),
 *    end >= start; prevCheckpoint equals the last newCheckpoint hash;
 *    newWatermark never decreases and may not disappear once set; data needs
 *    a schema first (a SetDataSchema earlier in the chain); an event that
 *    changes nothing (no data, same checkpoint, same watermark, same source
 *    state) is rejected as a no-op; referenced objects (data slice, new
 *    checkpoint) must exist in the store (checked through a callback);
 *  - SetDataSchema: additive only — every existing field stays, same name,
 *    same type, same position; new fields are appended and must be nullable
 *    (DataType Option); an identical schema is a no-op; field names are
 *    unique (ASCII case ignored);
 *  - SetVocab: given names are non-empty, the four system column names are
 *    distinct (case ignored), none is a data column of the current schema,
 *    and once there is a SetDataSchema the names in force may not change;
 *  - SetVocab, SetInfo, SetLicense, SetAttachments, SetTransform,
 *    SetPollingSource, AddPushSource: identical to the current one = no-op;
 *  - push and polling sources are mutually exclusive; AddPushSource with an
 *    existing name replaces it; DisablePushSource of an unknown name and
 *    DisablePollingSource without a polling source are errors.
 * Every violation is SILT_EVALIDATION with a message naming the rule, e.g.
 * "block 5 (AddData): prevOffset is 7 but the last offset is 9".
 */
#ifndef SILT_ODF_CHAIN_H
#define SILT_ODF_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "odf/odf_types.h"
#include "util/arena.h"
#include "util/multiformats.h"

typedef struct odf_push_source_ref {
    char *name;                    /* source name ("" for an unnamed one) */
    uint8_t block[SILT_MH_LEN];    /* block that defined it */
} odf_push_source_ref;

typedef struct odf_source_state_ref {
    char *source_name;
    char *kind;
    char *value;
    uint8_t block[SILT_MH_LEN];    /* AddData that recorded it */
} odf_source_state_ref;

typedef struct odf_block_ref {
    bool present;
    uint8_t hash[SILT_MH_LEN];
} odf_block_ref;

typedef struct odf_chain_state {
    silt_arena *arena;             /* owns the strings and arrays below */
    bool empty;                    /* no block yet */
    uint8_t head[SILT_MH_LEN];
    uint64_t seq;                  /* sequence number of the head */
    odf_time last_system_time;
    uint8_t dataset_id[SILT_DID_LEN];
    int32_t dataset_kind;          /* ODF_DatasetKind_* */

    bool has_last_offset;
    uint64_t last_offset;
    uint64_t num_records;          /* sum of slice lengths */
    uint64_t data_size;            /* sum of slice sizes */
    uint64_t num_data_blocks;      /* AddData/ExecuteTransform with newData */
    bool has_checkpoint;
    uint8_t checkpoint[SILT_MH_LEN];
    uint64_t checkpoint_size;
    bool has_watermark;
    odf_time watermark;

    odf_block_ref seed;            /* the Seed (dataset id and kind) */
    odf_block_ref schema, vocab, polling_source, transform, info, license, attachments;
    odf_block_ref last_data_block; /* last block with newData */
    odf_block_ref last_data_event; /* last AddData/ExecuteTransform: offsets, checkpoint,
                                      watermark */
    odf_push_source_ref *push_sources;
    size_t num_push_sources;
    odf_source_state_ref *source_states; /* last state per source name */
    size_t num_source_states;
} odf_chain_state;

/* Callbacks into the store used by the rules. */
typedef struct odf_chain_env {
    void *ctx;
    /* Loads and decodes a block by its multihash (arena-owned result). */
    int (*load_block)(void *ctx, const uint8_t hash[SILT_MH_LEN], silt_arena *a,
                      odf_MetadataBlock **out);
    /* Returns 1 if the object exists with the given size, 0 if it is missing
     * (or has another size), < 0 on I/O error. kind is "data" or "checkpoints". */
    int (*object_exists)(void *ctx, const char *kind, const uint8_t hash[SILT_MH_LEN],
                         uint64_t size);
} odf_chain_env;

/* Initialises an empty state with a fresh arena. */
int odf_chain_state_init(odf_chain_state *st);
void odf_chain_state_free(odf_chain_state *st);

/* May `blk` (whose multihash is `hash`) be appended? 0 or SILT_EVALIDATION. */
int odf_chain_check(const odf_chain_state *st, const odf_MetadataBlock *blk,
                    const uint8_t hash[SILT_MH_LEN], const odf_chain_env *env);

/* Advances the state past `blk` (assumes odf_chain_check passed). */
int odf_chain_apply(odf_chain_state *st, const odf_MetadataBlock *blk,
                    const uint8_t hash[SILT_MH_LEN]);

/* Deep copy of `src` into `dst` (which is overwritten, not freed: pass an
 * uninitialised or freed state). dst owns a fresh arena. */
int odf_chain_state_copy(odf_chain_state *dst, const odf_chain_state *src);

/* Checks a state against the blocks it names, through env->load_block
 * (which must check each block's hash): the head (sequence number, system
 * time), the Seed (dataset id and kind), the last AddData/ExecuteTransform
 * (last offset, checkpoint hash and size, watermark), the last block with
 * newData, and the block of every current event, push source and source
 * state (right kind, same name and value, not after the head). Reads at
 * most 6 + 7 + (push sources) + (source states) blocks, whatever the
 * chain's length. 0 when consistent, SILT_ECORRUPT "chain state: …" naming
 * the first mismatch, other negative codes from the loader. What it cannot
 * tell without walking the chain: that a named block is an ancestor of the
 * head and the newest of its kind, and the totals (numRecords, dataSize,
 * numDataBlocks), which no rule uses. */
int odf_chain_state_validate(const odf_chain_state *st, const odf_chain_env *env);

/* Serialises the state to/from JSON text (for the summary file). The JSON is
 * an object; unknown keys are ignored on load. Version 2 (the blocks behind
 * offsets and source states); other versions are SILT_ECORRUPT. */
int odf_chain_state_to_json(const odf_chain_state *st, char **out /* malloc'd */);
int odf_chain_state_from_json(odf_chain_state *st, const char *json);

#endif
