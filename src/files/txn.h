/* txn.h — internals of transactions (txn.c) shared with branch.c. The public
 * transaction API is in silt.h; the on-disk format is described in txn.c. */
#ifndef SILT_FILES_TXN_H
#define SILT_FILES_TXN_H

#include <stdbool.h>

#include "files/files.h"
#include "silt.h"
#include "util/buf.h"

/* rid of `branch`'s OPEN transaction into rid (64 bytes; "" when none). */
int silt_txn_open_on_branch(silt_dataset *ds, const char *branch, char *rid);
/* Takes / releases the lock of `branch`'s transactions (txn/lock-<branch>);
 * returns the fd (>= 0) or a negative code. */
int silt_txn_lock_branch(silt_dataset *ds, const char *branch);
void silt_txn_unlock_branch(int fd);

/* Takes txn/objects.lock (held shared by every put from storing its
 * objects until their journal lines are durable); gc holds it exclusive so
 * that no object it is about to delete is staged meanwhile. Returns the fd
 * for silt_fs_unlock. Taken before any branch lock. */
int silt_txn_lock_objects(silt_dataset *ds, bool exclusive);

/* ---- read-only access (verify, gc): no lock, no recovery -------------- */

/* Is `rid` of the form ri.silt.main.transaction.<uuid>? */
bool silt_txn_rid_valid(const char *rid);
/* The record txn/<rid> as stored. SILT_ENOTFOUND, SILT_EINVAL (bad rid),
 * SILT_ECORRUPT (unreadable record). */
int silt_txn_read_record(silt_dataset *ds, const char *rid, silt_txn_info *out);
/* Was a commit of rid attempted (txn/<rid>.committing exists)? */
bool silt_txn_commit_attempted(silt_dataset *ds, const char *rid);
/* The staged changes of rid (txn/<rid>.staged); strings point into *text
 * (caller frees *text with silt_buf_free and *out with free()). No journal:
 * 0 changes. */
int silt_txn_staged(silt_dataset *ds, const char *rid, silt_buf *text, silt_files_change **out, size_t *n);

#endif
