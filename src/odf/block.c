/* block.c — metadata block <-> canonical manifest bytes, block hashes.
 * Version 3 is written for new blocks; version 2 is encoded on request
 * (`silt block hash` of a YAML block that says `version: 2`) exactly as the
 * reference implementation wrote it: the same bytes except that Timestamp
 * structs are not aligned, and the manifest's version field. */
#include "odf/block.h"

#include <stdlib.h>
#include <string.h>

#include "odf/flatbuf.h"
#include "util/error.h"
#include "util/multiformats.h"

/* Manifest {kind: int64, version: int32, content: [ubyte]} is built with the
 * same generic codec as everything else. */

int odf_block_encode(silt_buf *out, const odf_MetadataBlock *b)
{
    return odf_block_encode_version(out, b, ODF_BLOCK_VERSION_CURRENT);
}

int odf_block_encode_version(silt_buf *out, const odf_MetadataBlock *b, int version)
{
    if (!out || !b)
        return silt_err(SILT_EINVAL, "odf_block_encode: null argument");
    if (version < ODF_BLOCK_VERSION_MIN || version > ODF_BLOCK_VERSION_CURRENT)
        return silt_err(SILT_EINVAL, "cannot encode block: unsupported metadata block version %d (supported: %d..%d)",
                        version, ODF_BLOCK_VERSION_MIN, ODF_BLOCK_VERSION_CURRENT);
    silt_buf inner = SILT_BUF_INIT;
    /* version 2 differs only in the alignment of Timestamp structs */
    int rc = odf_fb_encode_aligned(&inner, &odf_desc_MetadataBlock, b, version == 2 ? 1 : 4);
    if (rc < 0) {
        silt_buf_free(&inner);
        return silt_err_context(rc, "cannot encode block");
    }
    odf_Manifest m;
    memset(&m, 0, sizeof(m));
    m.kind = ODF_MULTICODEC_METADATA_BLOCK;
    m.version = version;
    m.content.data = (uint8_t *)(inner.data ? inner.data : "");
    m.content.len = inner.len;
    rc = odf_fb_encode(out, &odf_desc_Manifest, &m);
    silt_buf_free(&inner);
    if (rc < 0)
        return silt_err_context(rc, "cannot encode block");
    return 0;
}

int odf_block_decode(silt_arena *a, const uint8_t *data, size_t len, odf_MetadataBlock **out,
                     int *version)
{
    if (!a || !out || (!data && len))
        return silt_err(SILT_EINVAL, "odf_block_decode: null argument");
    void *mv = NULL;
    int rc = odf_fb_decode(a, &odf_desc_Manifest, data, len, &mv);
    if (rc < 0)
        return silt_err_context(rc == SILT_ENOMEM ? rc : SILT_EINVAL, "invalid block");
    const odf_Manifest *m = mv;
    if (m->kind != ODF_MULTICODEC_METADATA_BLOCK)
        return silt_err(SILT_EINVAL,
                        "invalid block: manifest kind 0x%llx is not an ODF metadata block (0x%x)",
                        (unsigned long long)m->kind, ODF_MULTICODEC_METADATA_BLOCK);
    if (m->version < ODF_BLOCK_VERSION_MIN || m->version > ODF_BLOCK_VERSION_CURRENT)
        return silt_err(SILT_EINVAL,
                        "invalid block: unsupported metadata block version %d (supported: %d..%d)",
                        (int)m->version, ODF_BLOCK_VERSION_MIN, ODF_BLOCK_VERSION_CURRENT);
    if (!m->content.data)
        return silt_err(SILT_EINVAL, "invalid block: manifest has no content");
    void *bv = NULL;
    rc = odf_fb_decode(a, &odf_desc_MetadataBlock, m->content.data, m->content.len, &bv);
    if (rc < 0)
        return silt_err_context(rc == SILT_ENOMEM ? rc : SILT_EINVAL, "invalid block");
    *out = bv;
    if (version)
        *version = (int)m->version;
    return 0;
}

int odf_block_hash(const uint8_t *data, size_t len, uint8_t mh[ODF_BLOCK_HASH_LEN])
{
    if ((!data && len) || !mh)
        return silt_err(SILT_EINVAL, "odf_block_hash: null argument");
    return silt_multihash_sha3(data ? (const void *)data : (const void *)"", len, mh);
}

int odf_block_encode_hash(silt_buf *out, const odf_MetadataBlock *b,
                          uint8_t mh[ODF_BLOCK_HASH_LEN])
{
    return odf_block_encode_hash_version(out, b, ODF_BLOCK_VERSION_CURRENT, mh);
}

int odf_block_encode_hash_version(silt_buf *out, const odf_MetadataBlock *b, int version,
                                  uint8_t mh[ODF_BLOCK_HASH_LEN])
{
    silt_buf tmp = SILT_BUF_INIT;
    silt_buf *dst = out ? out : &tmp;
    size_t start = dst->len;
    int rc = odf_block_encode_version(dst, b, version);
    if (rc == 0)
        rc = odf_block_hash((const uint8_t *)dst->data + start, dst->len - start, mh);
    if (rc < 0 && out)
        out->len = start;
    silt_buf_free(&tmp);
    return rc;
}
