/* resources.h — Source and Flow resources (ODF RFC-018) in a workspace.
 *
 * A resource is a YAML document
 *   $schema: https://opendatafabric.org/schemas/source/v1alpha1/Source   (or …/flow/v1alpha1/Flow;
 *            the spec text's "…/sources/…" and "…/flows/…" and a ".json" suffix are accepted)
 *   headers: {name: NAME}
 *   spec: SourceSpec | FlowSpec
 * applied with `silt add` (mixed with DatasetSnapshot documents) and stored
 * as canonical YAML in `<.silt>/resources/sources/NAME.yaml` and
 * `<.silt>/resources/flows/NAME.yaml` (atomic writes; re-adding replaces).
 *
 * String forms accepted on input (ODF "struct-or-string"):
 *   config values   "SecretSet:NAME#key", "VariableSet:NAME#key", or a literal
 *                   (kept as ValueRef{type "Literal", path = value}, see config.h)
 *   flow target     "Dataset:NAME" (or {type: Dataset, name: NAME})
 *   task source     "Source:NAME" / "NAME" (or {type: Source, name: NAME})
 *   Ingest task     `targetRecordsPerSlice: N` (spec text) or
 *                   `params: {targetSliceRecords: N}` (JSON schema)
 * silt runs only `Schedule` triggers and `Ingest` tasks; other ODF kinds are
 * rejected as unsupported.
 *
 * Memory: every decoded object lives in the silt_arena passed in.
 */
#ifndef SILT_INGEST_RESOURCES_H
#define SILT_INGEST_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odf/odf_types.h"
#include "silt.h"
#include "util/arena.h"

/* One Ingest task of a flow. */
typedef struct silt_ingest_task {
    char *source;                      /* Source resource name */
    uint64_t target_records_per_slice; /* 0 = not set (no splitting) */
} silt_ingest_task;

/* A Flow resource, decoded. */
typedef struct silt_flow_def {
    char *name;
    char *target;  /* dataset name */
    char **crons;  /* Schedule trigger expressions (validated) */
    size_t ncrons;
    silt_ingest_task *tasks;
    size_t ntasks;
    int line;      /* 1-based line of the document in its file */
} silt_flow_def;

/* Loads Source NAME of the workspace into `a`. SILT_ENOTFOUND
 * "source 'x' not found" if there is none. `config` of the result holds
 * ValueRefs as described above (hand it to silt_config_load). */
int silt_res_source_load(odf_SourceSpec **out, silt_arena *a, silt_workspace *ws, const char *name);

/* Loads Flow NAME into `a`. SILT_ENOTFOUND "flow 'x' not found". */
int silt_res_flow_load(silt_flow_def **out, silt_arena *a, silt_workspace *ws, const char *name);

/* All flows whose target is dataset `dataset`, sorted by flow name (an empty
 * result is not an error: *n = 0). Arrays and flows live in `a`. */
int silt_res_flows_for_dataset(silt_flow_def ***out, size_t *n, silt_arena *a, silt_workspace *ws,
                               const char *dataset);

/* What `silt pull DATASET` runs when the dataset has no legacy
 * SetPollingSource: the first Ingest task of the first flow (by name) that
 * targets DATASET, with its Source loaded. SILT_ENOTFOUND "dataset 'x' has
 * no flow with an Ingest task" when none. All strings/objects in `a`. */
typedef struct silt_ingest_plan {
    const char *flow;                  /* flow name */
    const char *source_name;           /* Source resource name */
    odf_SourceSpec *source;            /* the loaded source */
    uint64_t target_records_per_slice; /* 0 = not set */
} silt_ingest_plan;
int silt_res_ingest_plan(silt_ingest_plan *out, silt_arena *a, silt_workspace *ws, const char *dataset);

/* ---- `silt add` support (called from silt_dataset_add_manifest) ---------- */

typedef struct silt_res_batch silt_res_batch;

/* New empty batch for file `path` (borrowed; must outlive the batch). */
int silt_res_batch_new(silt_res_batch **out, const char *path);
void silt_res_batch_free(silt_res_batch *b);

/* Parses one document of the file (text padded so that lines match, see
 * yamldocs.c; `line` = its first line). Returns 1 when the document is not a
 * resource (no top-level `$schema`), 0 when it was parsed and validated into
 * the batch, or a negative code with "FILE:LINE: FIELD: message". */
int silt_res_batch_parse(silt_res_batch *b, const char *text, size_t len, int line);

/* Resolves flow references: targets against the workspace's datasets plus
 * `new_datasets` (names defined in the same file), sources against the
 * workspace's sources plus the batch. Errors name file:line and field. */
int silt_res_batch_check(silt_res_batch *b, silt_workspace *ws, const char *const *new_datasets,
                         size_t n_new);

/* Stores every resource of the batch (atomic write each) and records the
 * outcome for silt_resources_last_added(). */
int silt_res_batch_commit(silt_res_batch *b, silt_workspace *ws);

/* Number of resources in the batch. */
size_t silt_res_batch_count(const silt_res_batch *b);

#endif
