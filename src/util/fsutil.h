/* fsutil.h — file system helpers with the durability rules of DESIGN.md §4.
 * Paths in error messages are always the caller's path. OS errors ENOENT and
 * ENOTDIR are reported as SILT_ENOTFOUND, other OS errors as SILT_EIO. */
#ifndef SILT_UTIL_FSUTIL_H
#define SILT_UTIL_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* Writes `data` atomically to `path`: a temp file in the same directory
 * (".tmp-<pid>-<random hex>"), fsync, rename over `path`, fsync the directory.
 * With `exclusive`, fails with SILT_EEXISTS if `path` exists (link(2)
 * instead of rename). Leaves no temp file behind on failure. */
int silt_fs_write_atomic(const char *path, const void *data, size_t len, bool exclusive);

/* As silt_fs_write_atomic, with the file created with permission bits
 * `mode` (e.g. 0600 for a file only its owner may read: the temp file is
 * created with that mode, so the data is never readable by others, not
 * even for an instant; the umask may only remove bits). */
int silt_fs_write_atomic_mode(const char *path, const void *data, size_t len, bool exclusive, unsigned mode);

/* Copies a file atomically into place (same rules; replaces dst). */
int silt_fs_copy_atomic(const char *src, const char *dst);

/* Reads a whole file into `out` (appends). ENOTFOUND if missing, EIO else. */
int silt_fs_read(const char *path, silt_buf *out);
/* Writes all n bytes of p at offset `at` of fd (pwrite, retried on EINTR and
 * short writes). SILT_EIO "PATH: reason" on error; `path` names fd. */
int silt_fs_pwrite_all(int fd, const void *p, size_t n, long long at, const char *path);

/* mkdir -p with mode 0755. */
int silt_fs_mkdirs(const char *path);

/* fsync a directory. */
int silt_fs_fsync_dir(const char *path);

bool silt_fs_exists(const char *path);
bool silt_fs_is_dir(const char *path);

/* rm -rf without spawning a shell; never follows symlinks; a missing path
 * is success. Refuses "/". */
int silt_fs_remove_tree(const char *path);

/* Opens (creating it, mode 0644; its directory must exist) the lock file
 * `path` and takes a flock on it: exclusive or shared; waits, retrying on
 * EINTR. Returns the fd (>= 0) to pass to silt_fs_unlock, or a negative code.
 * The kernel releases the lock when the process dies, even on SIGKILL. */
int silt_fs_lock(const char *path, bool exclusive);
/* As silt_fs_lock(path, true) but never waits: SILT_ECONFLICT ("… is
 * locked") when another open file holds the lock. */
int silt_fs_trylock(const char *path);
/* Releases a lock taken by silt_fs_lock (fd < 0 is a no-op). */
void silt_fs_unlock(int fd);

/* Fills `out` with `nbytes` random bytes from the kernel's CSPRNG
 * (getrandom(2), blocking until it is seeded). 0 or SILT_EIO. */
int silt_random_bytes(void *out, size_t nbytes);

/* Fills `out` with 2*nbytes lowercase hex digits of random bytes from the
 * kernel (getrandom) plus a NUL; `out` must hold 2*nbytes+1 bytes. */
int silt_random_hex(char *out, size_t nbytes);

/* Joins path components with '/' into a malloc'd string (caller frees);
 * NULL on ENOMEM. Last argument must be NULL. */
char *silt_path_join(const char *first, ...);

#endif
