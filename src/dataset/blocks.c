/* blocks.c — public block API: newest-first iteration over a dataset's
 * chain, block accessors, YAML/JSON rendering, and the `silt block hash` /
 * `silt block decode` helpers on loose files.
 *
 * Invariants: the iterator starts at the head the dataset handle synced to
 * and follows prevBlockHash, loading one block per step (cost independent of
 * chain length for the first N blocks); every silt_block owns its arena. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "dataset/dataset_internal.h"
#include "odf/block.h"
#include "odf/json.h"
#include "odf/yaml.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/timeutil.h"

struct silt_block {
    silt_arena *arena;      /* owns blk */
    odf_MetadataBlock *blk;
    char hash[SILT_MH_TEXT_LEN + 1];
    char system_time[40];
};

struct silt_block_iter {
    silt_dataset *ds; /* borrowed */
    bool has_next;
    uint8_t next[SILT_MH_LEN];
    uint64_t remaining; /* guard against cycles: at most head seq + 1 steps */
};

int silt_block_iter_new(silt_block_iter **out, silt_dataset *ds)
{
    *out = NULL;
    int rc = silt_ds_sync(ds);
    if (rc < 0)
        return rc;
    silt_block_iter *it = calloc(1, sizeof *it);
    if (!it)
        return silt_err(SILT_ENOMEM, "block iterator: out of memory");
    it->ds = ds;
    it->has_next = !ds->st.empty;
    memcpy(it->next, ds->st.head, SILT_MH_LEN);
    it->remaining = ds->st.empty ? 0 : ds->st.seq + 1;
    *out = it;
    return 0;
}

/* Wraps a decoded block (arena ownership moves into the result). */
static int block_wrap(silt_block **out, silt_arena *a, odf_MetadataBlock *blk, const uint8_t mh[SILT_MH_LEN])
{
    silt_block *b = calloc(1, sizeof *b);
    if (!b) {
        silt_arena_free(a);
        return silt_err(SILT_ENOMEM, "block: out of memory");
    }
    b->arena = a;
    b->blk = blk;
    silt_multihash_to_text(mh, SILT_MH_LEN, b->hash);
    silt_time_format((silt_time){blk->system_time.sec, blk->system_time.nsec}, b->system_time);
    *out = b;
    return 0;
}

int silt_block_iter_next(silt_block **out, silt_block_iter *it)
{
    *out = NULL;
    if (!it->has_next)
        return 0;
    if (it->remaining == 0)
        return silt_err(SILT_ECORRUPT, "dataset '%s': chain is longer than its head sequence number",
                        it->ds->name);
    silt_arena *a = silt_arena_new();
    if (!a)
        return SILT_ENOMEM;
    odf_MetadataBlock *blk = NULL;
    int rc = silt_ds_load_block(it->ds, it->next, a, &blk);
    if (rc < 0) {
        silt_arena_free(a);
        return rc;
    }
    uint8_t mh[SILT_MH_LEN];
    memcpy(mh, it->next, SILT_MH_LEN);
    it->remaining--;
    if (blk->prev_block_hash.data && blk->prev_block_hash.len == SILT_MH_LEN) {
        memcpy(it->next, blk->prev_block_hash.data, SILT_MH_LEN);
    } else {
        it->has_next = false;
    }
    return block_wrap(out, a, blk, mh);
}

void silt_block_iter_free(silt_block_iter *it)
{
    free(it);
}

void silt_block_free(silt_block *b)
{
    if (!b)
        return;
    silt_arena_free(b->arena);
    free(b);
}

const char *silt_block_hash(const silt_block *b)
{
    return b->hash;
}

uint64_t silt_block_sequence_number(const silt_block *b)
{
    return b->blk->sequence_number;
}

const char *silt_block_event_kind(const silt_block *b)
{
    uint8_t t = b->blk->event.type;
    if (t == 0 || t > odf_udesc_MetadataEvent.nvariants)
        return "Unknown";
    return odf_udesc_MetadataEvent.kinds[t - 1];
}

const char *silt_block_system_time(const silt_block *b)
{
    return b->system_time;
}

int silt_block_to_yaml(char **out, const silt_block *b)
{
    *out = NULL;
    silt_buf buf = SILT_BUF_INIT;
    int rc = odf_yaml_emit_manifest(&buf, "MetadataBlock", ODF_BLOCK_VERSION_CURRENT,
                                    &odf_desc_MetadataBlock, b->blk);
    if (rc == 0 && !(*out = silt_buf_detach(&buf)))
        rc = silt_err(SILT_ENOMEM, "block: out of memory");
    silt_buf_free(&buf);
    return rc;
}

int silt_block_to_json(char **out, const silt_block *b)
{
    *out = NULL;
    json_t *j = odf_to_json(&odf_desc_MetadataBlock, b->blk);
    if (!j)
        return SILT_EINVAL;
    int rc = 0;
    json_t *h = json_string(b->hash);
    if (!h || json_object_set_new(j, "hash", h) != 0)
        rc = silt_err(SILT_ENOMEM, "block: out of memory");
    if (rc == 0 && !(*out = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER)))
        rc = silt_err(SILT_ENOMEM, "block: out of memory");
    json_decref(j);
    return rc;
}

int silt_block_hash_yaml_file(char **out, const char *path)
{
    *out = NULL;
    silt_buf text = SILT_BUF_INIT, enc = SILT_BUF_INIT;
    int rc = odf_yaml_read_file(path, &text);
    silt_arena *a = rc == 0 ? silt_arena_new() : NULL;
    if (rc == 0 && !a)
        rc = SILT_ENOMEM;
    void *obj = NULL;
    int version = 0;
    if (rc == 0)
        rc = odf_yaml_parse_manifest(a, text.data ? text.data : "", text.len, path, "MetadataBlock", &version,
                                     &obj);
    uint8_t mh[SILT_MH_LEN];
    if (rc == 0) /* the version written: a version 2 block hashes as the reference wrote it */
        rc = odf_block_encode_hash_version(&enc, obj, version, mh);
    if (rc == 0) {
        *out = malloc(SILT_MH_TEXT_LEN + 1);
        if (*out)
            silt_multihash_to_text(mh, SILT_MH_LEN, *out);
        else
            rc = silt_err(SILT_ENOMEM, "%s: out of memory", path);
    }
    silt_arena_free(a);
    silt_buf_free(&text);
    silt_buf_free(&enc);
    return rc;
}

int silt_block_decode_file(char **out, const char *path)
{
    *out = NULL;
    silt_buf data = SILT_BUF_INIT;
    int rc = silt_fs_read(path, &data);
    if (rc == SILT_ENOTFOUND)
        rc = silt_err(SILT_ENOTFOUND, "%s: no such file", path);
    silt_arena *a = rc == 0 ? silt_arena_new() : NULL;
    if (rc == 0 && !a)
        rc = SILT_ENOMEM;
    odf_MetadataBlock *blk = NULL;
    int version = ODF_BLOCK_VERSION_CURRENT;
    if (rc == 0) {
        rc = odf_block_decode(a, (const uint8_t *)data.data, data.len, &blk, &version);
        if (rc < 0)
            silt_err_context(rc, "%s", path);
    }
    silt_buf y = SILT_BUF_INIT;
    if (rc == 0)
        rc = odf_yaml_emit_manifest(&y, "MetadataBlock", version, &odf_desc_MetadataBlock, blk);
    if (rc == 0 && !(*out = silt_buf_detach(&y)))
        rc = silt_err(SILT_ENOMEM, "%s: out of memory", path);
    silt_buf_free(&y);
    silt_arena_free(a);
    silt_buf_free(&data);
    return rc;
}
