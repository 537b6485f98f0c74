/* retention.h — internals of retention policies, marks and garbage
 * collection (retention.c, gc.c): the only modules that delete objects of a
 * dataset. The public API is in silt.h ("retention and garbage
 * collection"); formats are in docs/datasets.md and docs/decisions.md.
 *
 * Files in the dataset directory (all JSON, replaced atomically, guarded by
 * the flock of info/retention.lock):
 *   info/retention.json  {"policies":[{"branch":null|"b","keepDays":N},…]}
 *   info/marks.json      {"marks":[{rid,branch,committed,marked,files,bytes}],
 *                         "held":[rid,…]}   (unmarked by hand: never re-marked)
 *   info/purged.json     {"transactions":{rid:{"purged":time}},
 *                         "objects":{multihash:rid}}   written BEFORE the
 *                         objects are deleted (the record of a sweep)
 */
#ifndef SILT_OPS_RETENTION_H
#define SILT_OPS_RETENTION_H

#include <jansson.h>
#include <stdbool.h>

#include "dataset/dataset_internal.h"
#include "dataset/info.h"
#include "engine/engine.h"
#include "silt.h"

/* ---- retention.c ------------------------------------------------------- */

/* Takes the dataset's retention lock (info/retention.lock, exclusive flock;
 * released by the kernel on SIGKILL). Returns the fd or a negative code. */
int silt_retention_lock(silt_dataset *ds);
void silt_retention_unlock(int fd);

/* keep-days in force for `branch` (a branch policy wins over the dataset
 * default): 1 and *days set when there is one, 0 when none. */
int silt_retention_keep_days(const json_t *policies, const char *branch, int64_t *days);

/* ---- gc.c ---------------------------------------------------------------- */

/* Everything gc knows about one dataset (all branches). Opaque. */
typedef struct silt_gc_scan silt_gc_scan;

/* Scans every branch of the dataset: chain objects (slices, checkpoints),
 * file rows (transaction -> objects), retained views, open transactions'
 * staged objects. `now_ms` is the reference time of the keep-days windows;
 * `policies` the content of info/retention.json to apply (NULL: the file).
 * Caller frees with silt_gc_scan_free. */
int silt_gc_scan_new(silt_gc_scan **out, silt_dataset *ds, int64_t now_ms, const json_t *policies);
/* Did the scan see `rid` as a committed transaction that wrote files? */
bool silt_gc_scan_knows(const silt_gc_scan *s, const char *rid);
void silt_gc_scan_free(silt_gc_scan *s);
/* Transactions the policies mark now (not retained, wrote files, not held,
 * not yet purged), as a JSON array of mark objects (new reference). */
int silt_gc_scan_candidates(silt_gc_scan *s, const json_t *held, json_t **out);
/* Is rid in a retained view (by the scan)? */
bool silt_gc_scan_retained(const silt_gc_scan *s, const char *rid);

/* Marking under the retention lock (held by the caller): the marks in
 * force and the purge record (new references); the scan when scan_out is
 * given (caller frees). */
int silt_gc_mark_locked(silt_dataset *ds, bool dry_run, json_t **marks_out, json_t **purged_out,
                        silt_gc_scan **scan_out);

#endif
