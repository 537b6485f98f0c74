/* info.h — the JSON records a dataset keeps in its `info/` directory
 * (retention policies, marks, the purge record, …): local housekeeping that
 * is not part of the chain. Each file is one JSON object, replaced
 * atomically (temp + fsync + rename); callers serialise read-modify-write
 * cycles with a lock of their own (silt_fs_lock on an info/<x>.lock file).
 */
#ifndef SILT_DATASET_INFO_H
#define SILT_DATASET_INFO_H

#include <jansson.h>
#include <stdbool.h>

#include "dataset/dataset_internal.h"

/* Loads info/<name> (a JSON object) into *out (new reference, caller
 * decrefs); a missing file gives an empty object. SILT_ECORRUPT naming the
 * file when it is not a JSON object. */
int silt_ds_info_load(silt_dataset *ds, const char *name, json_t **out);
/* Writes info/<name> atomically (sorted keys, indented), creating info/. */
int silt_ds_info_save(silt_dataset *ds, const char *name, const json_t *j);
/* Takes the flock of info/<name> (created; exclusive). Returns the fd for
 * silt_fs_unlock or a negative code. */
int silt_ds_info_lock(silt_dataset *ds, const char *name);

/* The roots lock of a dataset (info/roots.lock). An operation that adds a
 * root of reachability — a new branch ref pointing at an old block, an
 * object staged for a transaction — holds it shared while it does so; gc
 * holds it exclusive from the moment it computes what is reachable until
 * its sweep ends, so nothing it is about to delete can become reachable in
 * between. Returns the fd for silt_fs_unlock or a negative code. */
int silt_ds_roots_lock(silt_dataset *ds, bool exclusive);

#endif
