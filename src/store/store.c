/* store.c — backend-independent helpers of the store interface (store.h):
 * thin wrappers over the ops table, ref parsing and name validation.
 * Invariant: every wrapper only dispatches; behaviour lives in the backend. */
#include "store/store.h"

#include <stdlib.h>
#include <string.h>

#include "util/error.h"
#include "util/hash.h"

void silt_store_free(silt_store *s)
{
    if (s && s->ops && s->ops->free)
        s->ops->free(s);
}

int silt_store_put(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                   const void *data, size_t len)
{
    return s->ops->put(s, kind, mh, data, len);
}

int silt_store_get(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], silt_buf *out)
{
    return s->ops->get(s, kind, mh, out);
}

int silt_store_get_to_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst_path,
                           uint8_t digest[SILT_SHA3_256_LEN], uint64_t *size)
{
    return s->ops->get_to_file(s, kind, mh, dst_path, digest, size);
}

int silt_store_stat(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                    uint64_t *size_out)
{
    return s->ops->stat(s, kind, mh, size_out);
}

int silt_store_check_object(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                            uint64_t size)
{
    char text[SILT_MH_TEXT_LEN + 1];
    silt_multihash_to_text(mh, SILT_MH_LEN, text);
    uint64_t actual = 0;
    int rc = silt_store_stat(s, kind, mh, &actual);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return silt_err(SILT_ENOTFOUND, "%s/%s is missing", kind, text);
    if (actual != size)
        return silt_err(SILT_ECORRUPT, "%s/%s has %llu bytes, expected %llu", kind, text,
                        (unsigned long long)actual, (unsigned long long)size);
    uint8_t digest[SILT_SHA3_256_LEN], got[SILT_MH_LEN];
    char *path = silt_store_object_path(s, kind, mh);
    if (path) {
        rc = silt_sha3_file(path, digest, NULL);
        free(path);
    } else {
        silt_buf b = SILT_BUF_INIT;
        rc = silt_store_get(s, kind, mh, &b);
        if (rc == 0)
            rc = silt_sha3_256(b.data ? b.data : "", b.len, digest);
        silt_buf_free(&b);
    }
    if (rc < 0)
        return rc;
    silt_multihash_wrap_sha3(digest, got);
    if (memcmp(got, mh, SILT_MH_LEN) != 0)
        return silt_err(SILT_ECORRUPT, "%s/%s does not match its hash", kind, text);
    return 0;
}

int silt_store_ref_read(silt_store *s, const char *ref, silt_buf *out)
{
    return s->ops->ref_read(s, ref, out);
}

int silt_store_ref_cas(silt_store *s, const char *ref, const char *expected, const char *value)
{
    return s->ops->ref_cas(s, ref, expected, value);
}

int silt_store_ref_read_hash(silt_store *s, const char *ref, uint8_t mh[SILT_MH_LEN])
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_store_ref_read(s, ref, &b);
    if (rc < 0) {
        silt_buf_free(&b);
        return rc;
    }
    silt_buf bytes = SILT_BUF_INIT;
    rc = silt_multihash_from_text(b.data ? b.data : "", &bytes);
    if (rc == 0 && bytes.len != SILT_MH_LEN)
        rc = silt_err(SILT_EINVAL, "not a SHA3-256 multihash");
    if (rc < 0)
        rc = silt_err_context(SILT_ECORRUPT, "refs/%s holds an invalid hash", ref);
    else
        memcpy(mh, bytes.data, SILT_MH_LEN);
    silt_buf_free(&b);
    silt_buf_free(&bytes);
    return rc;
}

bool silt_store_valid_branch_name(const char *name)
{
    if (!name)
        return false;
    size_t n = strlen(name);
    if (n == 0 || n > 100 || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

int silt_store_put_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                        const char *src_path)
{
    return s->ops->put_file(s, kind, mh, src_path);
}

int silt_store_adopt_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN],
                          const char *src_path)
{
    return s->ops->adopt_file(s, kind, mh, src_path);
}

char *silt_store_object_path(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    return s->ops->object_path ? s->ops->object_path(s, kind, mh) : NULL;
}

bool silt_store_valid_kind(const char *kind)
{
    static const char *const kinds[] = {"blocks", "data", "checkpoints"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kind && strcmp(kind, kinds[i]) == 0)
            return true;
    return false;
}

bool silt_store_valid_ref(const char *ref)
{
    if (!ref)
        return false;
    if (strcmp(ref, "head") == 0)
        return true;
    return strncmp(ref, "branches/", 9) == 0 && silt_store_valid_branch_name(ref + 9);
}
