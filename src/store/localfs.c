/* localfs.c — local file system backend of the store interface (store.h).
 *
 * Layout under the dataset directory: blocks/, data/, checkpoints/ hold
 * objects named by their multihash text; refs/head and refs/branches/<name>
 * hold a multihash text without trailing newline; refs/.lock is the lock
 * file serialising ref updates.
 * Invariants: objects and refs are only ever written with
 * silt_fs_write_atomic (temp file, fsync, rename, fsync dir), so a crash
 * leaves the old or the new version, never a torn one; a ref is only written
 * while holding an exclusive flock on refs/.lock after re-reading it (the
 * lock dies with the process, even on SIGKILL). */
#include "store/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/arena.h"
#include "util/error.h"
#include "util/fsutil.h"

typedef struct localfs {
    char *dir;
} localfs;

/* malloc'd path of kind/<mh>, NULL after recording an error. */
static char *obj_path(localfs *fs, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    if (!silt_store_valid_kind(kind)) {
        silt_err(SILT_EINVAL, "store: unknown object kind '%s'", kind ? kind : "(null)");
        return NULL;
    }
    char text[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(mh, SILT_MH_LEN, text);
    char *p = silt_path_join(fs->dir, kind, text, NULL);
    if (!p)
        silt_err(SILT_ENOMEM, "store: out of memory");
    return p;
}

static char *ref_path(localfs *fs, const char *ref)
{
    if (!silt_store_valid_ref(ref)) {
        silt_err(SILT_EINVAL, "store: invalid ref name '%s'", ref ? ref : "(null)");
        return NULL;
    }
    char *p = silt_path_join(fs->dir, "refs", ref, NULL);
    if (!p)
        silt_err(SILT_ENOMEM, "store: out of memory");
    return p;
}

static int lfs_stat(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], uint64_t *size_out)
{
    char *p = obj_path(s->impl, kind, mh);
    if (!p)
        return SILT_EINVAL;
    struct stat st;
    int rc;
    if (stat(p, &st) == 0) {
        if (size_out)
            *size_out = (uint64_t)st.st_size;
        rc = 1;
    } else if (errno == ENOENT || errno == ENOTDIR) {
        rc = 0;
    } else {
        rc = silt_err(SILT_EIO, "%s: stat: %s", p, strerror(errno));
    }
    free(p);
    return rc;
}

static int lfs_put(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const void *data,
                   size_t len)
{
    char *p = obj_path(s->impl, kind, mh);
    if (!p)
        return SILT_EINVAL;
    int rc = 0;
    if (!silt_fs_exists(p)) {
        rc = silt_fs_write_atomic(p, data, len, true);
        if (rc == SILT_EEXISTS) /* a concurrent writer stored the same bytes */
            rc = 0;
    }
    free(p);
    return rc;
}

static int lfs_put_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *src)
{
    char *p = obj_path(s->impl, kind, mh);
    if (!p)
        return SILT_EINVAL;
    int rc = 0;
    if (!silt_fs_exists(p))
        rc = silt_fs_copy_atomic(src, p);
    free(p);
    return rc;
}

static int lfs_adopt_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                          const char *src)
{
    char *p = obj_path(s->impl, kind, mh);
    if (!p)
        return SILT_EINVAL;
    int rc = 0;
    if (silt_fs_exists(p)) {
        unlink(src);
    } else {
        int fd = open(src, O_RDONLY);
        if (fd < 0 || fsync(fd) != 0)
            rc = silt_err(SILT_EIO, "%s: %s", src, strerror(errno));
        if (fd >= 0)
            close(fd);
        if (!rc && rename(src, p) != 0) {
            if (errno == EXDEV) {
                rc = silt_fs_copy_atomic(src, p);
                if (!rc)
                    unlink(src);
            } else {
                rc = silt_err(SILT_EIO, "cannot move %s to %s: %s", src, p, strerror(errno));
            }
        } else if (!rc) {
            char *dir = strdup(p);
            char *slash = dir ? strrchr(dir, '/') : NULL;
            if (slash) {
                *slash = '\0';
                rc = silt_fs_fsync_dir(dir);
            }
            free(dir);
        }
    }
    free(p);
    return rc;
}

static int lfs_get(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], silt_buf *out)
{
    char *p = obj_path(s->impl, kind, mh);
    if (!p)
        return SILT_EINVAL;
    int rc = silt_fs_read(p, out);
    free(p);
    return rc;
}

/* (The transfer reads local objects in place; this copy hashes the file it
 * wrote, which is what the interface promises.) */
static int lfs_get_to_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst,
                           uint8_t digest[SILT_SHA3_256_LEN], uint64_t *size)
{
    char *p = obj_path(s->impl, kind, mh);
    if (!p)
        return SILT_EINVAL;
    int rc = silt_fs_exists(p) ? silt_fs_copy_atomic(p, dst) : silt_err(SILT_ENOTFOUND, "%s: no such file", p);
    if (rc == 0)
        rc = silt_sha3_file(dst, digest, size);
    free(p);
    return rc;
}

static char *lfs_object_path(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    return obj_path(s->impl, kind, mh);
}

/* Reads a ref file into out, without trailing whitespace. */
/* A ref holds one multihash: read with one read(2) into a small buffer (a
 * short read of a regular file is its end); a larger file takes the
 * general path. Refs are replaced by rename, so one open sees one value. */
static int read_small(const char *path, silt_buf *out)
{
    char tmp[256];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return silt_fs_read(path, out); /* its error message and code */
    ssize_t n;
    do
        n = read(fd, tmp, sizeof tmp);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0 || (size_t)n == sizeof tmp)
        return silt_fs_read(path, out);
    return silt_buf_append(out, tmp, (size_t)n);
}

static int read_ref_file(const char *path, const char *ref, silt_buf *out)
{
    size_t start = out->len;
    int rc = read_small(path, out);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "refs/%s does not exist", ref);
    if (rc < 0)
        return rc;
    while (out->len > start && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '\r' ||
                                out->data[out->len - 1] == ' ' || out->data[out->len - 1] == '\t'))
        out->data[--out->len] = '\0';
    return 0;
}

static int lfs_ref_read(silt_store *s, const char *ref, silt_buf *out)
{
    char *p = ref_path(s->impl, ref);
    if (!p)
        return SILT_EINVAL;
    int rc = read_ref_file(p, ref, out);
    free(p);
    return rc;
}

/* Takes the exclusive ref lock; returns the fd (>= 0) or a negative code. */
static int ref_lock(localfs *fs)
{
    char *lp = silt_path_join(fs->dir, "refs", ".lock", NULL);
    if (!lp)
        return silt_err(SILT_ENOMEM, "store: out of memory");
    int fd = silt_fs_lock(lp, true);
    free(lp);
    return fd;
}

static void ref_unlock(int fd) { silt_fs_unlock(fd); }

/* Under the lock: compares the current value of ref with expected.
 * 0 if equal, SILT_ECONFLICT if not, other negative codes on I/O errors. */
static int ref_compare_locked(const char *path, const char *ref, const char *expected)
{
    silt_buf cur = SILT_BUF_INIT;
    int rc = read_ref_file(path, ref, &cur);
    if (rc == SILT_ENOTFOUND) {
        rc = expected ? silt_err(SILT_ECONFLICT, "concurrent update of %s: ref was deleted; retry", ref)
                      : 0;
    } else if (rc == 0) {
        if (!expected)
            rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: ref already exists; retry", ref);
        else if (strcmp(cur.data ? cur.data : "", expected) != 0)
            rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: head moved; retry", ref);
    }
    silt_buf_free(&cur);
    return rc;
}

static int lfs_ref_cas(silt_store *s, const char *ref, const char *expected, const char *value)
{
    localfs *fs = s->impl;
    if (!value || !*value || strchr(value, '\n'))
        return silt_err(SILT_EINVAL, "ref %s: invalid value", ref ? ref : "(null)");
    char *p = ref_path(fs, ref);
    if (!p)
        return SILT_EINVAL;
    int fd = ref_lock(fs);
    if (fd < 0) {
        free(p);
        return fd;
    }
    int rc = ref_compare_locked(p, ref, expected);
    if (rc == 0)
        rc = silt_fs_write_atomic(p, value, strlen(value), false);
    ref_unlock(fd);
    free(p);
    return rc;
}

static int lfs_ref_delete(silt_store *s, const char *ref, const char *expected)
{
    localfs *fs = s->impl;
    char *p = ref_path(fs, ref);
    if (!p)
        return SILT_EINVAL;
    int fd = ref_lock(fs);
    if (fd < 0) {
        free(p);
        return fd;
    }
    int rc = 0;
    if (expected)
        rc = ref_compare_locked(p, ref, expected);
    if (rc == 0) {
        if (unlink(p) != 0)
            rc = errno == ENOENT ? silt_err(SILT_ENOTFOUND, "refs/%s does not exist", ref)
                                 : silt_err(SILT_EIO, "%s: unlink: %s", p, strerror(errno));
        else {
            char *d = silt_path_join(fs->dir, "refs", NULL);
            if (d)
                rc = silt_fs_fsync_dir(d);
            free(d);
        }
    }
    ref_unlock(fd);
    free(p);
    return rc;
}

static void lfs_free(silt_store *s)
{
    localfs *fs = s->impl;
    if (fs)
        free(fs->dir);
    free(fs);
    free(s);
}

static const silt_store_ops LOCALFS_OPS = {
    .backend = "localfs",
    .put = lfs_put,
    .put_file = lfs_put_file,
    .adopt_file = lfs_adopt_file,
    .get = lfs_get,
    .stat = lfs_stat,
    .ref_read = lfs_ref_read,
    .ref_cas = lfs_ref_cas,
    .ref_delete = lfs_ref_delete,
    .object_path = lfs_object_path,
    .get_to_file = lfs_get_to_file,
    .free = lfs_free,
};

/* The dataset directory and the directories of its objects and refs must
 * be real directories: objects are written, and gc deletes them, by name
 * inside them, so a symlink would carry both outside the workspace. */
static int refuse_symlinks(const char *dir)
{
    static const char *const SUBDIRS[] = {"", "blocks", "data", "checkpoints", "refs", "refs/branches", "txn", "info"};
    for (size_t i = 0; i < sizeof SUBDIRS / sizeof SUBDIRS[0]; i++) {
        char *d = silt_path_join(dir, SUBDIRS[i], NULL);
        if (!d)
            return silt_err(SILT_ENOMEM, "store: out of memory");
        struct stat st;
        int rc = 0;
        if (lstat(d, &st) == 0 && S_ISLNK(st.st_mode))
            rc = silt_err(SILT_ECORRUPT,
                          "%s: is a symbolic link; silt does not follow symbolic links inside a dataset "
                          "(replace it with a real directory)",
                          d);
        free(d);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int silt_store_open_local(silt_store **out, const char *dir, bool create)
{
    *out = NULL;
    if (!dir || !*dir)
        return silt_err(SILT_EINVAL, "store: empty directory");
    if (create) {
        static const char *const SUBDIRS[] = {"blocks", "data", "checkpoints", "refs", "refs/branches"};
        for (size_t i = 0; i < sizeof SUBDIRS / sizeof SUBDIRS[0]; i++) {
            char *d = silt_path_join(dir, SUBDIRS[i], NULL);
            if (!d)
                return silt_err(SILT_ENOMEM, "store: out of memory");
            int rc = silt_fs_mkdirs(d);
            free(d);
            if (rc < 0)
                return rc;
        }
    } else if (!silt_fs_is_dir(dir)) {
        return silt_err(SILT_ENOTFOUND, "%s: dataset directory not found", dir);
    }
    int rc = refuse_symlinks(dir);
    if (rc < 0)
        return rc;
    return silt_store_open_local_unchecked(out, dir);
}

int silt_store_open_local_unchecked(silt_store **out, const char *dir)
{
    *out = NULL;
    silt_store *s = silt_zalloc(sizeof *s);
    localfs *fs = silt_zalloc(sizeof *fs);
    char *d = strdup(dir);
    if (!s || !fs || !d) {
        free(s);
        free(fs);
        free(d);
        return silt_err(SILT_ENOMEM, "store: out of memory");
    }
    fs->dir = d;
    s->ops = &LOCALFS_OPS;
    s->impl = fs;
    *out = s;
    return 0;
}
