/* fsutil.c — file system helpers implementing the durability rules of
 * DESIGN.md §4: objects are written to a temp file ".tmp-<pid>-<random>" in
 * the destination directory, fsynced, moved into place (rename, or link()
 * for exclusive creation) and the directory is fsynced.
 *
 * Invariants: a temp file never outlives a failed call (every error path
 * unlinks it); error messages name the caller's path; ENOENT/ENOTDIR map to
 * SILT_ENOTFOUND, other OS errors to SILT_EIO; nothing exits or aborts. */
#include "util/fsutil.h"
#include "util/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int os_err(int e, const char *path, const char *what)
{
    int code = (e == ENOENT || e == ENOTDIR) ? SILT_ENOTFOUND : SILT_EIO;
    return silt_err(code, "%s: %s: %s", path, what, strerror(e));
}

/* malloc'd directory part of path ("." when there is none). */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

static uint64_t random64(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) == (ssize_t)sizeof r)
        return r;
    /* fallback: not secret, only needs to differ between concurrent writers */
    static _Thread_local uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ (++counter << 40) ^
        ((uint64_t)(uintptr_t)&ts << 7);
    return r;
}

/* Creates a fresh temp file in `dir`. On success *tmp_out is malloc'd
 * (caller unlinks/frees) and the open fd is returned; negative code else. */
static int tmp_create(const char *dir, const char *path, char **tmp_out, unsigned mode)
{
    size_t cap = strlen(dir) + 64;
    char *tmp = malloc(cap);
    if (!tmp)
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    for (int attempt = 0; attempt < 16; attempt++) {
        snprintf(tmp, cap, "%s/.tmp-%ld-%016llx", dir, (long)getpid(), (unsigned long long)random64());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, (mode_t)mode);
        if (fd >= 0) {
            *tmp_out = tmp;
            return fd;
        }
        if (errno != EEXIST && errno != EINTR) {
            int rc = os_err(errno, path, "cannot create temporary file");
            free(tmp);
            return rc;
        }
    }
    free(tmp);
    return silt_err(SILT_EIO, "%s: cannot create a unique temporary file", path);
}

static int write_all(int fd, const void *data, size_t len, const char *path)
{
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return os_err(errno, path, "write failed");
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int silt_fs_fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return os_err(errno, path, "cannot open directory");
    int rc = 0;
    if (fsync(fd) != 0 && errno != EINVAL && errno != ENOTSUP)
        rc = os_err(errno, path, "fsync of directory failed");
    close(fd);
    return rc;
}

/* Second half of an atomic write: fsync+close `fd`, move `tmp` to `path`,
 * fsync `dir`. Always consumes fd and tmp (unlinking tmp on failure). */
static int tmp_commit(int fd, char *tmp, const char *dir, const char *path, bool exclusive)
{
    int rc = 0;
    if (fsync(fd) != 0) {
        rc = os_err(errno, path, "fsync failed");
        close(fd);
        goto fail;
    }
    if (close(fd) != 0) {
        rc = os_err(errno, path, "close failed");
        goto fail;
    }
    if (exclusive) {
        if (link(tmp, path) != 0) {
            int e = errno;
            if (e == EEXIST) {
                rc = silt_err(SILT_EEXISTS, "%s: already exists", path);
                goto fail;
            }
            /* file systems without hard links: atomic no-replace rename */
            if (e != EPERM && e != ENOTSUP && e != ENOSYS && e != EMLINK) {
                rc = os_err(e, path, "cannot link into place");
                goto fail;
            }
            if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) != 0) {
                e = errno;
                rc = e == EEXIST ? silt_err(SILT_EEXISTS, "%s: already exists", path)
                                 : os_err(e, path, "cannot move into place");
                goto fail;
            }
        } else {
            unlink(tmp); /* the object is in place; a leftover name is harmless */
        }
    } else if (rename(tmp, path) != 0) {
        rc = os_err(errno, path, "cannot rename into place");
        goto fail;
    }
    free(tmp);
    return silt_fs_fsync_dir(dir);
fail:
    unlink(tmp);
    free(tmp);
    return rc;
}

int silt_fs_write_atomic(const char *path, const void *data, size_t len, bool exclusive)
{
    return silt_fs_write_atomic_mode(path, data, len, exclusive, 0644);
}

int silt_fs_write_atomic_mode(const char *path, const void *data, size_t len, bool exclusive, unsigned mode)
{
    if (!path || !*path || (!data && len))
        return silt_err(SILT_EINVAL, "write_atomic: bad argument");
    char *dir = dir_of(path);
    if (!dir)
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    if (exclusive && silt_fs_exists(path)) {
        free(dir);
        return silt_err(SILT_EEXISTS, "%s: already exists", path);
    }
    char *tmp = NULL;
    int fd = tmp_create(dir, path, &tmp, mode);
    if (fd < 0) {
        free(dir);
        return fd;
    }
    int rc = write_all(fd, data, len, path);
    if (rc < 0) {
        close(fd);
        unlink(tmp);
        free(tmp);
        free(dir);
        return rc;
    }
    rc = tmp_commit(fd, tmp, dir, path, exclusive);
    free(dir);
    return rc;
}

int silt_fs_copy_atomic(const char *src, const char *dst)
{
    if (!src || !dst || !*dst)
        return silt_err(SILT_EINVAL, "copy_atomic: bad argument");
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return os_err(errno, src, "cannot open");
    char *dir = dir_of(dst);
    if (!dir) {
        close(in);
        return silt_err(SILT_ENOMEM, "%s: out of memory", dst);
    }
    enum { CHUNK = 1 << 16 };
    char *buf = malloc(CHUNK);
    if (!buf) {
        close(in);
        free(dir);
        return silt_err(SILT_ENOMEM, "%s: out of memory", dst);
    }
    char *tmp = NULL;
    int fd = tmp_create(dir, dst, &tmp, 0644);
    if (fd < 0) {
        close(in);
        free(buf);
        free(dir);
        return fd;
    }
    int rc = 0;
    for (;;) {
        ssize_t r = read(in, buf, CHUNK);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = os_err(errno, src, "read failed");
            break;
        }
        if (r == 0)
            break;
        rc = write_all(fd, buf, (size_t)r, dst);
        if (rc < 0)
            break;
    }
    close(in);
    free(buf);
    if (rc < 0) {
        close(fd);
        unlink(tmp);
        free(tmp);
    } else {
        rc = tmp_commit(fd, tmp, dir, dst, false);
    }
    free(dir);
    return rc;
}

int silt_fs_read(const char *path, silt_buf *out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return os_err(errno, path, "cannot open");
    size_t start = out->len;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int rc = os_err(errno, path, "cannot stat");
        close(fd);
        return rc;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return silt_err(SILT_EIO, "%s: is a directory", path);
    }
    int rc = 0;
    if (st.st_size > 0 && (uint64_t)st.st_size < SIZE_MAX / 2)
        rc = silt_buf_reserve(out, (size_t)st.st_size);
    while (rc == 0) {
        rc = silt_buf_reserve(out, 65536);
        if (rc < 0)
            break;
        ssize_t r = read(fd, out->data + out->len, out->cap - out->len - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = os_err(errno, path, "read failed");
            break;
        }
        if (r == 0)
            break;
        out->len += (size_t)r;
    }
    close(fd);
    if (rc < 0)
        out->len = start;
    if (out->data)
        out->data[out->len] = '\0';
    return rc;
}

int silt_fs_mkdirs(const char *path)
{
    if (!path || !*path)
        return silt_err(SILT_EINVAL, "mkdirs: empty path");
    char *p = strdup(path);
    if (!p)
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    int rc = 0;
    size_t n = strlen(p);
    for (size_t i = 1; i <= n && rc == 0; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        if (p[i - 1] == '/')
            continue; /* repeated or trailing slash */
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0755) != 0) {
            int e = errno;
            struct stat st;
            if (e == EEXIST) {
                if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
                    rc = silt_err(SILT_EIO, "%s: '%s' exists and is not a directory", path, p);
            } else {
                rc = os_err(e, path, "cannot create directory");
            }
        }
        p[i] = saved;
    }
    free(p);
    return rc;
}

bool silt_fs_exists(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0;
}

bool silt_fs_is_dir(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Removes `name` relative to directory fd `parent`; never follows symlinks.
 * `root` is the caller's path, used in messages. */
static int remove_at(int parent, const char *name, const char *root, int depth)
{
    struct stat st;
    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
        return errno == ENOENT ? 0 : os_err(errno, root, "cannot stat");
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(parent, name, 0) != 0 && errno != ENOENT)
            return os_err(errno, root, "cannot remove file");
        return 0;
    }
    if (depth > 4096)
        return silt_err(SILT_EIO, "%s: directory tree too deep", root);
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return os_err(errno, root, "cannot open directory");
    DIR *d = fdopendir(fd);
    if (!d) {
        int rc = os_err(errno, root, "cannot read directory");
        close(fd);
        return rc;
    }
    /* Entries are removed while listing; if the directory is still not
     * empty afterwards (entries added concurrently, or readdir skipped some),
     * list it again a bounded number of times. */
    int rc = 0;
    for (int pass = 0; rc == 0 && pass < 8; pass++) {
        if (pass > 0)
            rewinddir(d);
        struct dirent *de;
        errno = 0;
        while (rc == 0 && (de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            rc = remove_at(dirfd(d), de->d_name, root, depth + 1);
            errno = 0;
        }
        if (rc == 0 && errno != 0)
            rc = os_err(errno, root, "cannot read directory");
        if (rc == 0) {
            if (unlinkat(parent, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
                break;
            if (errno != ENOTEMPTY && errno != EEXIST)
                rc = os_err(errno, root, "cannot remove directory");
            else if (pass == 7)
                rc = os_err(errno, root, "cannot remove directory");
        }
    }
    closedir(d);
    return rc;
}

int silt_fs_remove_tree(const char *path)
{
    if (!path || !*path)
        return silt_err(SILT_EINVAL, "remove_tree: empty path");
    if (strcmp(path, "/") == 0)
        return silt_err(SILT_EINVAL, "remove_tree: refusing to remove '/'");
    return remove_at(AT_FDCWD, path, path, 0);
}

int silt_fs_lock(const char *path, bool exclusive)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return os_err(errno, path, "cannot open lock");
    while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) != 0) {
        if (errno == EINTR)
            continue;
        int rc = os_err(errno, path, "cannot lock");
        close(fd);
        return rc;
    }
    return fd;
}

int silt_fs_trylock(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return os_err(errno, path, "cannot open lock");
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return silt_err(SILT_ECONFLICT, "%s is locked", path);
        return os_err(e, path, "cannot lock");
    }
    return fd;
}

void silt_fs_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* releases the flock */
}

int silt_random_bytes(void *out, size_t nbytes)
{
    uint8_t *p = out;
    size_t got = 0;
    while (got < nbytes) {
        ssize_t r = getrandom(p + got, nbytes - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return silt_err(SILT_EIO, "cannot get random bytes: %s", r < 0 ? strerror(errno) : "short read");
        got += (size_t)r;
    }
    return 0;
}

int silt_random_hex(char *out, size_t nbytes)
{
    static const char HEX[] = "0123456789abcdef";
    uint8_t buf[64];
    if (nbytes > sizeof buf)
        return silt_err(SILT_EINVAL, "random: at most %zu bytes", sizeof buf);
    int rc = silt_random_bytes(buf, nbytes);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < nbytes; i++) {
        out[2 * i] = HEX[buf[i] >> 4];
        out[2 * i + 1] = HEX[buf[i] & 15];
    }
    out[2 * nbytes] = '\0';
    return 0;
}

char *silt_path_join(const char *first, ...)
{
    silt_buf b = SILT_BUF_INIT;
    va_list ap;
    va_start(ap, first);
    const char *part = first;
    int failed = 0;
    while (part && !failed) {
        const char *p = part;
        if (b.len > 0) {
            while (*p == '/')
                p++;
            if (*p && b.data[b.len - 1] != '/' && silt_buf_putc(&b, '/') < 0)
                failed = 1;
        }
        if (!failed && *p && silt_buf_puts(&b, p) < 0)
            failed = 1;
        part = va_arg(ap, const char *);
    }
    va_end(ap);
    if (failed) {
        silt_buf_free(&b);
        return NULL;
    }
    return silt_buf_detach(&b);
}

int silt_fs_pwrite_all(int fd, const void *p, size_t n, long long at, const char *path)
{
    const char *q = p;
    while (n) {
        ssize_t w = pwrite(fd, q, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return silt_err(SILT_EIO, "%s: %s", path, strerror(errno));
        q += w;
        n -= (size_t)w;
        at += w;
    }
    return 0;
}
