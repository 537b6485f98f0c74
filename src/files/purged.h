/* purged.h — the purge record of a files dataset (info/purged.json): which
 * committed transactions retention swept, and which objects went with
 * them. Written only by `silt gc` (src/ops/gc.c), BEFORE any object is
 * deleted, so a missing object is either recorded here (purged) or
 * corruption; read by views, `cat`, `files` and `verify`.
 *
 * Format: {"transactions": {rid: {"purged": RFC 3339}},
 *          "objects": {multihash: rid}}
 */
#ifndef SILT_FILES_PURGED_H
#define SILT_FILES_PURGED_H

#include <jansson.h>

#include "dataset/dataset_internal.h"

#define SILT_PURGE_RECORD "purged.json"

/* Loads the purge record (new reference; an empty object when there is
 * none). SILT_ECORRUPT when it is not a JSON object. */
int silt_purge_record_load(silt_dataset *ds, json_t **out);
/* Replaces the purge record atomically. Caller holds the retention lock. */
int silt_purge_record_save(silt_dataset *ds, const json_t *record);

#endif
