/* skipped.h — what a FilesGlob pull did not read, and why: the names the
 * chain records as ingested by a source (to tell a file added late, which
 * sorts before the last ingested one, from one read long ago) and the
 * record of skipped files, info/pull-skipped.json, that `silt sources`
 * shows.
 *
 * The record is local housekeeping (not part of the chain): one JSON object
 * keyed by source name (the name the source state is written under), each
 * an array of {"file", "reason"} sorted as listed; a source with nothing
 * skipped has no key. It is rewritten by every successful pull of a
 * FilesGlob source, under the info lock of the record.
 */
#ifndef SILT_INGEST_SKIPPED_H
#define SILT_INGEST_SKIPPED_H

#include <stdbool.h>
#include <stddef.h>

#include "dataset/dataset_internal.h"
#include "util/arena.h"

#define SILT_SKIPPED_RECORD "pull-skipped.json"

/* Every source state value that an AddData of ds's chain recorded for
 * `source_name` (and, when also_default, for "default": kamu's name of the
 * legacy polling source), as stored (possibly sealed), sorted with strcmp
 * and allocated in `a`. Walks the chain from the head. */
int silt_skipped_ingested_values(char ***out, size_t *n, silt_dataset *ds, const char *source_name,
                                 bool also_default, silt_arena *a);

/* Is `value` in the sorted array? */
bool silt_skipped_contains(char *const *values, size_t n, const char *value);

/* Replaces the entry of `source_name` in ds's record by the n (file,
 * reason) pairs (n = 0 removes it). The file is not written when nothing
 * changes (so a pull that skips nothing leaves a dataset without a record
 * untouched). */
int silt_skipped_record(silt_dataset *ds, const char *source_name, const char *const *files,
                        const char *const *reasons, size_t n);

#endif
