/* txn.h — internals of transactions (txn.c) shared with branch.c. The public
 * transaction API is in silt.h; the on-disk format is described in txn.c. */
#ifndef SILT_FILES_TXN_H
#define SILT_FILES_TXN_H

#include "silt.h"

/* rid of `branch`'s OPEN transaction into rid (64 bytes; "" when none). */
int silt_txn_open_on_branch(silt_dataset *ds, const char *branch, char *rid);
/* Takes / releases the lock of `branch`'s transactions (txn/lock-<branch>);
 * returns the fd (>= 0) or a negative code. */
int silt_txn_lock_branch(silt_dataset *ds, const char *branch);
void silt_txn_unlock_branch(int fd);

#endif
