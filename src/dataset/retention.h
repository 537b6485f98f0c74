/* retention.h — internals of retention policies, marks, garbage collection
 * (retention.c, gc.c) and of tabular schemas on files datasets
 * (files_schema.c). The public API is in silt.h ("retention and garbage
 * collection", "schemas on files datasets"); formats are in docs/datasets.md
 * and docs/decisions.md.
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
#ifndef SILT_DATASET_RETENTION_H
#define SILT_DATASET_RETENTION_H

#include <jansson.h>
#include <stdbool.h>

#include "dataset/dataset_internal.h"
#include "engine/engine.h"
#include "silt.h"

/* ---- retention.c ------------------------------------------------------- */

/* Takes the dataset's retention lock (info/retention.lock, exclusive flock;
 * released by the kernel on SIGKILL). Returns the fd or a negative code. */
int silt_retention_lock(silt_dataset *ds);
void silt_retention_unlock(int fd);

/* Loads info/<name> (a JSON object) into *out (new reference); a missing
 * file gives an empty object. SILT_ECORRUPT naming the file when it is not
 * a JSON object. */
int silt_retention_load(silt_dataset *ds, const char *name, json_t **out);
/* Writes info/<name> atomically (sorted keys, indented). */
int silt_retention_save(silt_dataset *ds, const char *name, const json_t *j);

/* keep-days in force for `branch` (a branch policy wins over the dataset
 * default): 1 and *days set when there is one, 0 when none. */
int silt_retention_keep_days(const json_t *policies, const char *branch, int64_t *days);

/* ---- gc.c ---------------------------------------------------------------- */

/* Everything gc knows about one dataset (all branches). Opaque. */
typedef struct silt_gc_scan silt_gc_scan;

/* Scans every branch of the dataset: chain objects (slices, checkpoints),
 * file rows (transaction -> objects), retained views, open transactions'
 * staged objects, the purge record. `now_ms` is the reference time of the
 * keep-days windows. Caller frees with silt_gc_scan_free. */
int silt_gc_scan_new(silt_gc_scan **out, silt_dataset *ds, int64_t now_ms);
void silt_gc_scan_free(silt_gc_scan *s);
/* Transactions the policies mark now (not retained, wrote files, not held,
 * not yet purged), as a JSON array of mark objects (new reference). */
int silt_gc_scan_candidates(silt_gc_scan *s, const json_t *held, json_t **out);
/* Is rid in a retained view (by the scan)? */
bool silt_gc_scan_retained(const silt_gc_scan *s, const char *rid);

/* verify.c hook: checks that every file object linked by the rows of ds's
 * chain exists with its size. A missing object recorded in info/purged.json
 * is NOT a problem (purged by retention); any other missing or wrong-sized
 * object is reported through `problem` as "file object <mh> ('path',
 * transaction <rid>): missing (not purged by retention)". Returns 0 or a
 * negative code on I/O / memory errors (problems are not errors). No-op for
 * datasets that are not files datasets. */
int silt_gc_verify_links(silt_dataset *ds, void (*problem)(void *ctx, const char *line), void *ctx);

/* ---- files_schema.c ------------------------------------------------------ */

/* Extra attribute key of the AddData that sets a files dataset's tabular
 * schema: {"schema": <ODF DataSchema JSON>, "format": "parquet|csv|json",
 * "csvOptions": {<ReadStepCsv fields>}} or {"schema": null} (removed). */
#define SILT_FILES_SCHEMA_KEY "silt.dev/filesSchema"

/* The tabular schema attribute in force at block `at` (NULL = head) of ds's
 * branch: *out = new reference to the attribute object, or NULL when no
 * schema was ever set (or it was removed). */
int silt_files_schema_at(silt_dataset *ds, const uint8_t *at, json_t **out);

/* For data_views.c: creates TEMP TABLE/VIEW `view` in `e` holding the files
 * of ds's view (as of block `upto`, NULL = latest) read with the tabular
 * schema. SILT_EINVAL "dataset 'x' has no tabular schema"; a file that does
 * not conform: SILT_EINVAL "dataset 'x': file 'p' does not conform to the
 * schema (format csv): <engine message>". */
int silt_files_create_sql_view(silt_engine *e, silt_dataset *ds, const char *view, const uint8_t *upto);

#endif
