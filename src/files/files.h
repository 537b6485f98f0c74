/* files.h — files datasets (DESIGN.md §7): an ODF root dataset whose rows are
 * file entries, and its views (latest, as of a transaction, start..end range).
 *
 * A files dataset is a ledger whose SetDataSchema is
 *   offset UInt64, op UInt8, system_time Timestamp(ms, UTC),
 *   event_time Timestamp(ms, UTC)      commit time of the transaction
 *   path String                        logical path ("a/b.csv")
 *   content_hash String                multihash "f1620…" of the bytes, field
 *                                      extra {"opendatafabric.org/type":
 *                                      {"kind":"ObjectLink","linkType":{"kind":"Multihash"}}}
 *   size Int64                         bytes
 *   content_type Option<String>        media type guessed from the extension
 *   transaction_rid String             "ri.silt.main.transaction.<uuid>"
 *   transaction_type String            SNAPSHOT | APPEND | UPDATE | DELETE
 * with schema extra {"silt.dev/archetype":"Files"} (the mark of a files
 * dataset). File bytes are objects data/<multihash> (same namespace as the
 * slices). Each committed transaction is exactly one AddData whose extra is
 *   {"opendatafabric.org/linkedObjects":{"numObjectsNaive":N,"sizeNaive":S},
 *    "silt.dev/transaction":{"rid":"ri.silt…","type":"UPDATE"}}
 * and whose newCheckpoint is (periodically) a Parquet file of the view after
 * that block; see files.c for the rules.
 *
 * View semantics follow spec/foundry-datasets.md "Dataset views" exactly;
 * on the chain they are the changelog projection: a path is in the view
 * when its last row (by offset) is +A or +C.
 *
 * Memory: results are malloc'd and owned by the caller (silt_view_free);
 * strings inside an entry belong to the view.
 */
#ifndef SILT_FILES_FILES_H
#define SILT_FILES_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "dataset/dataset_internal.h"
#include "silt.h"

/* Prefix of transaction rids; the rest is a lowercase UUID v4. */
#define SILT_TXN_RID_PREFIX "ri.silt.main.transaction."
#define SILT_TXN_RID_LEN 61 /* prefix (25) + uuid (36) */

/* Content type guessed from a logical path's extension ("text/csv",
 * "application/x-parquet", …; "application/octet-stream" when unknown).
 * Static string. */
const char *silt_files_content_type(const char *path);

/* Normalises a logical path into `out` (malloc'd): backslashes are not
 * separators, "./" segments and repeated trailing slashes are errors too —
 * accepted paths are relative, '/'-separated, every segment non-empty and
 * neither "." nor "..", no control characters, at most 1024 bytes; a single
 * leading "./" is dropped. SILT_EINVAL "invalid logical path '…': reason". */
int silt_files_path_normalize(char **out, const char *path);

/* Is the dataset (at its branch head) a files dataset? 1 yes, 0 no, < 0 error. */
int silt_files_is_files(silt_dataset *ds);

/* Fails with SILT_EINVAL "dataset 'x' is not a files dataset (create it with
 * 'silt new x --files')" unless ds is one. */
int silt_files_require(silt_dataset *ds);

/* ---- the view API (also used by schemas/sql/retention) ------------------ */

/* Which view (DESIGN §7): exactly one of the three modes. */
typedef struct silt_view_spec {
    const char *at;          /* rid: the view as of that committed transaction */
    const char *range_start; /* rid: START of START..END (both set, or neither) */
    const char *range_end;   /* rid: END */
} silt_view_spec;            /* all NULL (or spec NULL) = latest view */

/* The view of ds's branch (see silt_view_spec); entries sorted by path.
 * Errors: SILT_ENOTFOUND "transaction RID is not committed on branch B of
 * NAME" when a rid is unknown, open, aborted or not in this branch's
 * history; SILT_EINVAL "range START..END: START is after END" when reversed.
 * Caller owns *out (silt_view_free). */
int silt_view_get(silt_view **out, silt_dataset *ds, const silt_view_spec *spec);

/* Local file holding a file entry's bytes (malloc'd), from the view entry's
 * content hash; NULL on ENOMEM or for remote stores. */
char *silt_view_object_path(silt_dataset *ds, const silt_file_entry *e);

/* ---- internals shared with txn.c / branch.c ------------------------------ */

/* One staged change of a transaction. */
typedef struct silt_files_change {
    bool remove;              /* DELETE: remove `path` */
    const char *path;         /* normalised logical path */
    const char *content_hash; /* multihash text (puts) */
    uint64_t size;
} silt_files_change;

/* Commits the changes of transaction `rid` of `type` as one AddData on ds's
 * branch (rules of silt_txn_commit; the last change of a path wins). On a
 * lost compare-and-swap returns SILT_ECONFLICT and nothing is visible. */
int silt_files_commit(silt_dataset *ds, const char *rid, silt_txn_type type, const silt_files_change *changes,
                      size_t n, uint8_t block_out[34]);

/* Finds the AddData of `rid` on ds's branch scanning back from the head, no
 * further than blocks with a system time before not_before_ms (-1 = the
 * whole chain). 1 found (hash in block_out), 0 not found, < 0 error. */
int silt_files_find_commit(silt_dataset *ds, const char *rid, int64_t not_before_ms, uint8_t block_out[34]);

/* The time of a new commit on ds's branch (its AddData's system time and
 * watermark): now in milliseconds, never before the last block, strictly
 * after the watermark (ds must be synced). */
silt_time silt_files_commit_time(const silt_dataset *ds);

/* A transaction committed on a branch's chain (its AddData block). */
typedef struct silt_files_commit_info {
    char rid[64];
    silt_txn_type type;
    uint8_t block[34]; /* multihash of the AddData */
    int64_t time_ms;   /* the block's system time */
} silt_files_commit_info;

/* Every transaction committed on ds's branch chain, newest first. *out is
 * malloc'd (free()). */
int silt_files_commits(silt_dataset *ds, silt_files_commit_info **out, size_t *n_out);

/* ---- files_verify.c: what `silt verify` checks beyond the chain ------- */

/* State of one dataset's verification across its branches (opaque). */
typedef struct silt_files_vstate silt_files_vstate;
int silt_files_vstate_new(silt_files_vstate **out, silt_dataset *ds);
void silt_files_vstate_free(silt_files_vstate *fs);

/* Linked file objects of ds's branch not checked for an earlier branch
 * (existence, size, content hash) and the completeness of its latest
 * view; see files_verify.c. Problems are reported with the branch and
 * counted in *tally. No-op for datasets that are not files datasets.
 * Returns 0 or a negative code on I/O / memory errors. */
int silt_files_verify_branch(silt_files_vstate *fs, silt_dataset *ds, silt_verify_report_fn report, void *ctx,
                             silt_verify_tally *tally);
/* The transaction records of txn/ against the chains of every branch
 * verified before (call after silt_files_verify_branch of each). */
int silt_files_verify_txns(silt_files_vstate *fs, silt_dataset *ds, silt_verify_report_fn report, void *ctx,
                           silt_verify_tally *tally);
/* Purges the purge record explains as far as this layer can tell, for the
 * policy check above: {rid: {"branch": b, "objects": [mh, …]}} (borrowed). */
const json_t *silt_files_vstate_purges(const silt_files_vstate *fs);

#endif
