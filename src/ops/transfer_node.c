/* transfer_node.c — the receiving side of a push to a silt node (silt.h:
 * silt_node_object_put, silt_node_ref_set; routes in server/odf.c).
 *
 * Objects of a dataset the node has go straight into its store (unreferenced
 * until its ref moves; gc removes them if the push never completes); objects
 * of a dataset the node does not have yet go to .silt/tmp/incoming-<name>/,
 * which becomes the dataset when its first ref is set; a pusher's HEAD sees
 * the staged ones too (silt_node_object_open), so a first push resumes.
 * Invariants: an object is stored only after its body hashed to its name;
 * a ref is set only when every block from the new head back to the old one
 * (or the Seed) and every object they name is present with its size, so a
 * reader of the node never sees a head whose objects are missing.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dataset/dataset_internal.h"
#include "odf/block.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

static int parse_hash(const char *text, uint8_t mh[SILT_MH_LEN])
{
    silt_buf b = SILT_BUF_INIT;
    int rc = text ? silt_multihash_from_text(text, &b) : SILT_EINVAL;
    if (rc == 0 && b.len != SILT_MH_LEN)
        rc = SILT_EINVAL;
    if (rc == 0)
        memcpy(mh, b.data, SILT_MH_LEN);
    silt_buf_free(&b);
    return rc < 0 ? silt_err(SILT_EINVAL, "'%s' is not a SHA3-256 multihash", text ? text : "") : 0;
}

/* The directory that receives dataset `name`: its own, or the staging one
 * (*staged = true). */
static int target_dir(silt_workspace *ws, const char *name, char **dir, bool *staged)
{
    *staged = false;
    if (!silt_ds_name_valid(name))
        return silt_err(SILT_EINVAL, "invalid dataset name '%s': " SILT_DS_NAME_RULE, name ? name : "");
    int rc = silt_ws_find_by_name(ws, name, dir);
    if (rc != SILT_ENOTFOUND)
        return rc;
    silt_err_clear();
    char leaf[160];
    snprintf(leaf, sizeof leaf, "incoming-%s", name);
    *dir = silt_path_join(ws->root, "tmp", leaf, NULL);
    *staged = true;
    return *dir ? 0 : silt_err(SILT_ENOMEM, "out of memory");
}

int silt_node_object_put(silt_workspace *ws, const char *name, const char *kind, const char *hash,
                         const char *body_path)
{
    uint8_t mh[SILT_MH_LEN], d[SILT_SHA3_256_LEN], got[SILT_MH_LEN];
    if (!kind || (strcmp(kind, "blocks") && strcmp(kind, "data") && strcmp(kind, "checkpoints")))
        return silt_err(SILT_EINVAL, "unknown object kind '%s'", kind ? kind : "");
    int rc = parse_hash(hash, mh);
    if (rc == 0)
        rc = silt_sha3_file(body_path, d, NULL);
    if (rc < 0)
        return rc;
    silt_multihash_wrap_sha3(d, got);
    if (memcmp(got, mh, SILT_MH_LEN) != 0)
        return silt_err(SILT_ECORRUPT, "%s/%s: the body does not match its hash", kind, hash);
    char *dir = NULL;
    bool staged = false;
    silt_store *s = NULL;
    rc = target_dir(ws, name, &dir, &staged);
    if (rc == 0)
        rc = silt_store_open_local(&s, dir, staged);
    if (rc == 0)
        rc = silt_store_adopt_file(s, kind, mh, body_path);
    silt_store_free(s);
    free(dir);
    return rc;
}

static int open_regular(int *fd_out, uint64_t *size_out, const char *path, const char *kind, const char *hash)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    int err = errno;
    struct stat st;
    if (fd < 0 && err != ENOENT && err != ELOOP)
        return silt_err(SILT_EIO, "%s/%s: %s", kind, hash, strerror(err));
    if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return silt_err(SILT_ENOTFOUND, "%s/%s is not on this node", kind, hash);
    *fd_out = fd;
    *size_out = (uint64_t)st.st_size;
    return 0;
}

int silt_node_object_open(int *fd_out, uint64_t *size_out, silt_workspace *ws, const char *name, const char *kind,
                          const char *hash)
{
    uint8_t mh[SILT_MH_LEN];
    *fd_out = -1;
    *size_out = 0;
    if (!kind || (strcmp(kind, "blocks") && strcmp(kind, "data") && strcmp(kind, "checkpoints")))
        return silt_err(SILT_EINVAL, "unknown object kind '%s'", kind ? kind : "");
    int rc = parse_hash(hash, mh);
    char *dir = NULL, *path = NULL;
    bool staged = false;
    silt_store *s = NULL;
    if (rc == 0)
        rc = target_dir(ws, name, &dir, &staged);
    if (rc == 0 && staged && !silt_fs_is_dir(dir))
        rc = silt_err(SILT_ENOTFOUND, "%s/%s is not on this node", kind, hash);
    if (rc == 0)
        rc = silt_store_open_local(&s, dir, false);
    if (rc == 0 && !(path = silt_store_object_path(s, kind, mh)))
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (rc == 0)
        rc = open_regular(fd_out, size_out, path, kind, hash);
    free(path);
    silt_store_free(s);
    free(dir);
    return rc;
}

static int check_objects(silt_store *s, const odf_DataSlice *nd, const odf_Checkpoint *cp, const char *blk)
{
    const odf_bytes *h[2] = {nd ? &nd->physical_hash : NULL, cp ? &cp->physical_hash : NULL};
    const uint64_t sz[2] = {nd ? nd->size : 0, cp ? cp->size : 0};
    const char *kinds[2] = {"data", "checkpoints"};
    for (int i = 0; i < 2; i++) {
        if (!h[i] || !h[i]->data)
            continue;
        if (h[i]->len != SILT_MH_LEN)
            return silt_err(SILT_EVALIDATION, "block %s names an invalid %s hash", blk, kinds[i]);
        uint64_t have = 0;
        int rc = silt_store_stat(s, kinds[i], h[i]->data, &have);
        if (rc < 0)
            return rc;
        char t[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(h[i]->data, SILT_MH_LEN, t);
        if (rc == 0 || have != sz[i])
            return silt_err(SILT_EVALIDATION, "%s/%s (of block %s) has not been pushed", kinds[i], t, blk);
    }
    return 0;
}

/* Every block from `value` back to `expected` (or the Seed) is present and
 * hash-checked, and so is every object it names. */
static int check_complete(silt_store *s, const char *value, const char *expected)
{
    uint8_t cur[SILT_MH_LEN];
    int rc = parse_hash(value, cur);
    silt_arena *a = rc == 0 ? silt_arena_new() : NULL;
    if (rc == 0 && !a)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    while (rc == 0) {
        char t[SILT_MH_TEXT_LEN + 1];
        silt_multihash_to_text(cur, SILT_MH_LEN, t);
        if (expected && strcmp(t, expected) == 0)
            break;
        silt_buf b = SILT_BUF_INIT;
        rc = silt_store_get(s, "blocks", cur, &b);
        if (rc == SILT_ENOTFOUND)
            rc = silt_err(SILT_EVALIDATION, "blocks/%s has not been pushed", t);
        uint8_t got[SILT_MH_LEN];
        if (rc == 0)
            rc = odf_block_hash((const uint8_t *)(b.data ? b.data : ""), b.len, got);
        if (rc == 0 && memcmp(got, cur, SILT_MH_LEN) != 0)
            rc = silt_err(SILT_ECORRUPT, "blocks/%s does not match its hash", t);
        odf_MetadataBlock *mb = NULL;
        if (rc == 0)
            rc = odf_block_decode(a, (const uint8_t *)b.data, b.len, &mb, NULL);
        silt_buf_free(&b);
        if (rc < 0)
            break;
        if (mb->event.type == ODF_MetadataEvent_AddData) {
            const odf_AddData *ad = mb->event.value;
            rc = check_objects(s, ad->new_data, ad->new_checkpoint, t);
        } else if (mb->event.type == ODF_MetadataEvent_ExecuteTransform) {
            const odf_ExecuteTransform *et = mb->event.value;
            rc = check_objects(s, et->new_data, et->new_checkpoint, t);
        }
        if (rc < 0 || !mb->prev_block_hash.data || mb->prev_block_hash.len != SILT_MH_LEN)
            break;
        memcpy(cur, mb->prev_block_hash.data, SILT_MH_LEN);
    }
    silt_arena_free(a);
    return rc;
}

/* First push of `name`: the staged directory becomes the dataset. */
static int publish_incoming(silt_workspace *ws, const char *dir, const char *name, const char *value)
{
    silt_store *s = NULL;
    int rc = silt_store_open_local(&s, dir, true);
    if (rc == 0)
        rc = check_complete(s, value, NULL);
    silt_buf cur = SILT_BUF_INIT;
    if (rc == 0 && silt_store_ref_read(s, "head", &cur) == 0)
        rc = silt_store_ref_cas(s, "head", cur.data, value); /* a retried first push */
    else if (rc == 0) {
        silt_err_clear();
        rc = silt_store_ref_cas(s, "head", NULL, value);
    }
    silt_buf_free(&cur);
    silt_store_free(s);
    char *info = rc == 0 ? silt_path_join(dir, "info", NULL) : NULL;
    char *alias = info ? silt_path_join(info, "alias", NULL) : NULL;
    if (rc == 0 && !alias)
        rc = silt_err(SILT_ENOMEM, "out of memory");
    if (rc == 0)
        rc = silt_fs_mkdirs(info);
    if (rc == 0)
        rc = silt_fs_write_atomic(alias, name, strlen(name), false);
    silt_dataset *ds = NULL;
    char id[SILT_DID_TEXT_LEN + 1] = "";
    if (rc == 0)
        rc = silt_ds_open_dir(&ds, ws, dir, NULL);
    if (rc == 0)
        memcpy(id, ds->id, sizeof id);
    silt_dataset_free(ds);
    char *home = rc == 0 ? silt_path_join(ws->datasets, id + 8, NULL) : NULL;
    if (rc == 0 && home && silt_fs_is_dir(home))
        rc = silt_err(SILT_EEXISTS, "dataset %s is already on this node under another name", id);
    if (rc == 0)
        rc = silt_ds_publish_staged(ws, dir, name, id, NULL);
    free(home);
    free(info);
    free(alias);
    return rc;
}

int silt_node_ref_set(silt_workspace *ws, const char *name, const char *expected, const char *value)
{
    uint8_t mh[SILT_MH_LEN];
    int rc = parse_hash(value, mh);
    if (rc == 0 && expected)
        rc = parse_hash(expected, mh);
    char *dir = NULL;
    bool staged = false;
    if (rc == 0)
        rc = target_dir(ws, name, &dir, &staged);
    if (rc == 0 && staged && expected)
        rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: dataset does not exist (expected head %s)", name,
                      expected);
    else if (rc == 0 && !staged && !expected)
        rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: dataset already exists", name);
    if (rc == 0 && staged) {
        rc = publish_incoming(ws, dir, name, value);
    } else if (rc == 0) {
        silt_store *s = NULL;
        rc = silt_store_open_local(&s, dir, false);
        silt_buf cur = SILT_BUF_INIT;
        if (rc == 0)
            rc = silt_store_ref_read(s, "head", &cur);
        if (rc == 0 && strcmp(cur.data ? cur.data : "", expected) != 0)
            rc = silt_err(SILT_ECONFLICT, "concurrent update of %s: head moved; retry", name);
        silt_buf_free(&cur);
        if (rc == 0) /* the head is re-checked by the compare-and-swap below */
            rc = check_complete(s, value, expected);
        if (rc == 0)
            rc = silt_store_ref_cas(s, "head", expected, value);
        silt_store_free(s);
        silt_dataset *ds = NULL;
        if (rc == 0 && silt_ds_open_dir(&ds, ws, dir, NULL) < 0)
            silt_err_clear(); /* the summary catches up on the next open */
        silt_dataset_free(ds);
    }
    free(dir);
    return rc;
}
