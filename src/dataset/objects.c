/* objects.c — read access to the stored objects of a dataset by kind and
 * hash (silt_dataset_object_open), for the ODF Simple Transfer Protocol of
 * `silt serve`.
 *
 * Invariants: the hash text is checked to be exactly the canonical form
 * silt names objects by ("f1620" + 64 lowercase hex digits) and is parsed
 * into multihash bytes; the path is built by the store from those bytes and
 * a known kind, so no input can reach another file; the object is opened
 * without following a symlink and must be a regular file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "util/error.h"

static bool canonical_hash(const char *h)
{
    if (!h || strncmp(h, "f1620", 5) != 0 || strlen(h) != SILT_MH_TEXT_LEN)
        return false;
    for (const char *p = h + 5; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

int silt_dataset_object_open(int *fd_out, uint64_t *size_out, silt_dataset *ds, const char *kind,
                             const char *hash)
{
    *fd_out = -1;
    *size_out = 0;
    if (!kind || (strcmp(kind, "blocks") != 0 && strcmp(kind, "data") != 0 && strcmp(kind, "checkpoints") != 0))
        return silt_err(SILT_EINVAL, "unknown object kind '%s' (blocks, data or checkpoints)", kind ? kind : "");
    if (!canonical_hash(hash))
        return silt_err(SILT_EINVAL, "invalid object hash '%.80s': expected f1620 and 64 lowercase hex digits",
                        hash ? hash : "");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multihash_from_text(hash, &b);
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = silt_err(SILT_EINVAL, "invalid object hash '%s'", hash);
    char *path = rc == 0 ? silt_store_object_path(ds->store, kind, (const uint8_t *)b.data) : NULL;
    silt_buf_free(&b);
    if (rc < 0)
        return rc;
    if (!path)
        return silt_err(SILT_EUNSUPPORTED, "dataset '%s': its store has no local objects", silt_ds_label(ds));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int err = errno;
    free(path);
    if (fd < 0 && (err == ENOENT || err == ELOOP))
        return silt_err(SILT_ENOTFOUND, "%s/%s is not in dataset '%s'", kind, hash, ds->name);
    if (fd < 0)
        return silt_err(SILT_EIO, "%s/%s of dataset '%s': %s", kind, hash, ds->name, strerror(err));
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return silt_err(SILT_ENOTFOUND, "%s/%s is not in dataset '%s'", kind, hash, ds->name);
    }
    *fd_out = fd;
    *size_out = (uint64_t)st.st_size;
    return 0;
}
