/* s3.c — S3-compatible backend of the store interface (s3.h, store.h).
 *
 * Objects: put is a PUT with If-None-Match: * (a 412 means the object is
 * there already: a no-op, as objects are content-addressed); put_file and
 * adopt_file HEAD first so a large object is not uploaded twice.
 * Refs: a ref object holds the multihash text. ref_cas reads the ref with
 * its ETag and PUTs the new value with If-Match: <etag> (If-None-Match: *
 * when the ref must not exist), so the service decides atomically which of
 * several writers wins; the others get 412 (SILT_ECONFLICT). S3 has no
 * conditional DELETE, so a ref is deleted by a conditional PUT of an empty
 * body (a tombstone): an empty ref object reads as a missing ref, and a
 * create over a tombstone is a CAS against the tombstone's ETag.
 * Invariant: every ref change is one conditional PUT; nothing here reads a
 * ref from a cache. The first ref change on a handle probes that the
 * service honours the conditions (some S3 implementations ignore them,
 * which would silently lose updates) and refuses ref changes otherwise. */
#include "store/s3.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"

typedef struct s3store {
    silt_s3_client *c;
    char *prefix;
    int cas_ok; /* 0 unknown, 1 conditions honoured, < 0 the probe's error code */
} s3store;

#define CAS_ROUNDS 8 /* retries of a ref delete / create-over-tombstone racing others */

/* malloc'd key of kind/<mh>, NULL after recording an error. */
static char *obj_key(s3store *st, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    if (!silt_store_valid_kind(kind)) {
        silt_err(SILT_EINVAL, "store: unknown object kind '%s'", kind ? kind : "(null)");
        return NULL;
    }
    char rest[16 + SILT_MH_TEXT_LEN + 1];
    size_t kl = strlen(kind);
    memcpy(rest, kind, kl);
    rest[kl] = '/';
    silt_multihash_to_text(mh, SILT_MH_LEN, rest + kl + 1);
    char *k = silt_s3_key_join(st->prefix, rest);
    if (!k)
        silt_err(SILT_ENOMEM, "store: out of memory");
    return k;
}

static char *ref_key(s3store *st, const char *ref)
{
    if (!silt_store_valid_ref(ref)) {
        silt_err(SILT_EINVAL, "store: invalid ref name '%s'", ref ? ref : "(null)");
        return NULL;
    }
    char rest[8 + 120];
    snprintf(rest, sizeof rest, "refs/%s", ref);
    char *k = silt_s3_key_join(st->prefix, rest);
    if (!k)
        silt_err(SILT_ENOMEM, "store: out of memory");
    return k;
}

/* ---- objects ----------------------------------------------------------- */

static int s3_stat(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], uint64_t *size_out)
{
    s3store *st = s->impl;
    char *k = obj_key(st, kind, mh);
    if (!k)
        return SILT_EINVAL;
    int rc = silt_s3_head(st->c, k, size_out, NULL);
    free(k);
    return rc;
}

static int s3_put(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const void *data, size_t len)
{
    s3store *st = s->impl;
    char *k = obj_key(st, kind, mh);
    if (!k)
        return SILT_EINVAL;
    silt_s3_cond cond = {.if_none_match = true};
    int rc = silt_s3_put(st->c, k, data, len, &cond, NULL);
    if (rc == SILT_ECONFLICT) { /* it exists: same name, same bytes */
        silt_err_clear();
        rc = 0;
    }
    free(k);
    return rc;
}

static int s3_put_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *src)
{
    s3store *st = s->impl;
    char *k = obj_key(st, kind, mh);
    if (!k)
        return SILT_EINVAL;
    int rc = silt_s3_head(st->c, k, NULL, NULL);
    if (rc == 0)
        rc = silt_s3_put_file(st->c, k, src);
    else if (rc == 1)
        rc = 0;
    free(k);
    return rc;
}

static int s3_adopt_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *src)
{
    int rc = s3_put_file(s, kind, mh, src);
    if (rc == 0 && unlink(src) != 0 && errno != ENOENT)
        rc = silt_err(SILT_EIO, "%s: unlink: %s", src, strerror(errno));
    return rc;
}

static int s3_get(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], silt_buf *out)
{
    s3store *st = s->impl;
    char *k = obj_key(st, kind, mh);
    if (!k)
        return SILT_EINVAL;
    int rc = silt_s3_get(st->c, k, out, NULL);
    free(k);
    return rc;
}

/* The download lands in dst through a temp file (s3_client.h); its digest
 * and size are then read from the page cache (one more pass over the bytes,
 * not over the network). */
static int s3_get_to_file(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN], const char *dst,
                          uint8_t digest[SILT_SHA3_256_LEN], uint64_t *size)
{
    s3store *st = s->impl;
    char *k = obj_key(st, kind, mh);
    if (!k)
        return SILT_EINVAL;
    int rc = silt_s3_get_to_file(st->c, k, dst);
    free(k);
    if (rc == 0)
        rc = silt_sha3_file(dst, digest, size);
    return rc;
}

static char *s3_object_path(silt_store *s, const char *kind, const uint8_t mh[SILT_MH_LEN])
{
    (void)s;
    (void)kind;
    (void)mh;
    return NULL;
}

/* ---- refs -------------------------------------------------------------- */

/* Reads ref key k: value into out (trailing whitespace dropped), ETag into
 * etag. 1 if the ref holds a value, 0 if it is missing or a tombstone
 * (etag "" when missing), < 0 on errors. */
static int ref_get(s3store *st, const char *k, silt_buf *out, char etag[SILT_S3_ETAG_MAX])
{
    size_t start = out->len;
    etag[0] = '\0';
    int rc = silt_s3_get(st->c, k, out, etag);
    if (rc == SILT_ENOTFOUND) {
        silt_err_clear();
        return 0;
    }
    if (rc < 0)
        return rc;
    while (out->len > start && (out->data[out->len - 1] == '\n' || out->data[out->len - 1] == '\r' ||
                                out->data[out->len - 1] == ' ' || out->data[out->len - 1] == '\t'))
        out->data[--out->len] = '\0';
    return out->len > start ? 1 : 0;
}

static int s3_ref_read(silt_store *s, const char *ref, silt_buf *out)
{
    s3store *st = s->impl;
    char *k = ref_key(st, ref);
    if (!k)
        return SILT_EINVAL;
    char etag[SILT_S3_ETAG_MAX];
    int rc = ref_get(st, k, out, etag);
    free(k);
    if (rc == 0)
        return silt_err(SILT_ENOTFOUND, "refs/%s does not exist", ref);
    return rc < 0 ? rc : 0;
}

/* Checks once per handle that the service answers 412 to a failed
 * If-None-Match: * and a failed If-Match (a service that ignores them
 * would let two writers both "win"). */
static int probe_conditions(s3store *st)
{
    if (st->cas_ok)
        return st->cas_ok > 0 ? 0 : st->cas_ok;
    char rnd[17], rest[48];
    int rc = silt_random_hex(rnd, 8);
    snprintf(rest, sizeof rest, "refs/.cas-probe-%s", rc == 0 ? rnd : "0");
    char *k = silt_s3_key_join(st->prefix, rest);
    if (!k)
        return silt_err(SILT_ENOMEM, "store: out of memory");
    silt_s3_cond none = {.if_none_match = true}, match = {.if_match = "00000000000000000000000000000000"};
    rc = silt_s3_put(st->c, k, "probe", 5, NULL, NULL);
    int r1 = rc == 0 ? silt_s3_put(st->c, k, "probe", 5, &none, NULL) : rc;
    int r2 = r1 == SILT_ECONFLICT ? silt_s3_put(st->c, k, "probe", 5, &match, NULL) : r1;
    int code = r2 == SILT_ECONFLICT ? 0 : r2 < 0 && r2 != SILT_ECONFLICT ? r2 : SILT_EUNSUPPORTED;
    (void)silt_s3_delete(st->c, k);
    if (code == SILT_EUNSUPPORTED)
        code = silt_err(SILT_EUNSUPPORTED,
                        "s3: bucket %s ignores conditional writes (If-None-Match / If-Match on PUT); "
                        "refusing to update refs there, as concurrent writers would lose updates",
                        silt_s3_client_bucket(st->c));
    else if (code < 0)
        code = silt_err_context(code, "s3: checking conditional writes");
    free(k);
    if (code == 0 || code == SILT_EUNSUPPORTED) /* transient errors are not cached */
        st->cas_ok = code == 0 ? 1 : code;
    if (code == 0)
        silt_err_clear();
    return code;
}

/* One conditional PUT of value (may be "") against the etag read (NULL: the
 * key must not exist). SILT_ECONFLICT when another writer came first. */
static int cond_put(s3store *st, const char *k, const char *etag, const char *value)
{
    silt_s3_cond cond = {.if_none_match = etag == NULL, .if_match = etag};
    return silt_s3_put(st->c, k, value, strlen(value), &cond, NULL);
}

static int conflict(const char *ref, const char *why)
{
    return silt_err(SILT_ECONFLICT, "concurrent update of %s: %s; retry", ref, why);
}

/* After a lost conditional PUT: the write may have landed with its answer
 * lost (the retry then sees our own value), so read the ref back. */
static int lost_race(s3store *st, const char *k, const char *ref, const char *value, const char *why)
{
    silt_buf cur = SILT_BUF_INIT;
    char etag[SILT_S3_ETAG_MAX];
    int rc = ref_get(st, k, &cur, etag);
    if (rc == 1 && strcmp(cur.data, value) == 0)
        rc = 0;
    else if (rc >= 0)
        rc = conflict(ref, why);
    silt_buf_free(&cur);
    if (rc == 0)
        silt_err_clear();
    return rc;
}

/* ref_cas with expected == NULL: create, also over a tombstone. */
static int ref_create(s3store *st, const char *k, const char *ref, const char *value)
{
    for (int round = 0; round < CAS_ROUNDS; round++) {
        silt_buf cur = SILT_BUF_INIT;
        char etag[SILT_S3_ETAG_MAX];
        int rc = ref_get(st, k, &cur, etag);
        silt_buf_free(&cur);
        if (rc == 1)
            return conflict(ref, "ref already exists");
        if (rc < 0)
            return rc;
        rc = cond_put(st, k, etag[0] ? etag : NULL, value);
        if (rc != SILT_ECONFLICT)
            return rc;
        rc = lost_race(st, k, ref, value, "ref already exists");
        if (rc != SILT_ECONFLICT)
            return rc;
        /* someone else created it, or a tombstone moved: look again */
    }
    return conflict(ref, "ref already exists");
}

static int s3_ref_cas(silt_store *s, const char *ref, const char *expected, const char *value)
{
    s3store *st = s->impl;
    if (!value || !*value || strchr(value, '\n'))
        return silt_err(SILT_EINVAL, "ref %s: invalid value", ref ? ref : "(null)");
    char *k = ref_key(st, ref);
    if (!k)
        return SILT_EINVAL;
    int rc = probe_conditions(st);
    if (rc == 0 && !expected) {
        rc = ref_create(st, k, ref, value);
    } else if (rc == 0) {
        silt_buf cur = SILT_BUF_INIT;
        char etag[SILT_S3_ETAG_MAX];
        rc = ref_get(st, k, &cur, etag);
        if (rc == 0)
            rc = conflict(ref, "ref was deleted");
        else if (rc == 1 && strcmp(cur.data, expected) != 0)
            rc = conflict(ref, "head moved");
        else if (rc == 1) {
            rc = cond_put(st, k, etag, value);
            if (rc == SILT_ECONFLICT)
                rc = lost_race(st, k, ref, value, "head moved");
        }
        silt_buf_free(&cur);
    }
    free(k);
    return rc;
}

static int ref_delete_round(s3store *st, const char *k, const char *ref, const char *expected)
{
    silt_buf cur = SILT_BUF_INIT;
    char etag[SILT_S3_ETAG_MAX];
    int rc = ref_get(st, k, &cur, etag);
    if (rc == 0)
        rc = expected ? conflict(ref, "ref was deleted") : silt_err(SILT_ENOTFOUND, "refs/%s does not exist", ref);
    else if (rc == 1 && expected && strcmp(cur.data, expected) != 0)
        rc = conflict(ref, "head moved");
    else if (rc == 1)
        rc = cond_put(st, k, etag, ""); /* the tombstone */
    silt_buf_free(&cur);
    return rc;
}

static int s3_ref_delete(silt_store *s, const char *ref, const char *expected)
{
    s3store *st = s->impl;
    char *k = ref_key(st, ref);
    if (!k)
        return SILT_EINVAL;
    int rc = probe_conditions(st);
    for (int round = 0; rc == 0 && round < CAS_ROUNDS; round++) {
        rc = ref_delete_round(st, k, ref, expected);
        if (rc != SILT_ECONFLICT || expected)
            break;
        rc = 0; /* unconditional delete raced a writer: read again */
        if (round == CAS_ROUNDS - 1)
            rc = conflict(ref, "ref keeps changing");
    }
    if (rc == SILT_ECONFLICT && expected && !strstr(silt_error_last(), "concurrent update"))
        rc = conflict(ref, "head moved");
    free(k);
    return rc;
}

static void s3_free(silt_store *s)
{
    s3store *st = s->impl;
    if (st) {
        silt_s3_client_free(st->c);
        free(st->prefix);
    }
    free(st);
    free(s);
}

static const silt_store_ops S3_OPS = {
    .backend = "s3",
    .put = s3_put,
    .put_file = s3_put_file,
    .adopt_file = s3_adopt_file,
    .get = s3_get,
    .stat = s3_stat,
    .ref_read = s3_ref_read,
    .ref_cas = s3_ref_cas,
    .ref_delete = s3_ref_delete,
    .object_path = s3_object_path,
    .get_to_file = s3_get_to_file,
    .free = s3_free,
};

/* Without create: the bucket must exist (a HEAD of a key tells 404
 * NoSuchBucket from a missing key by the listing, so list one key). */
static int no_keys(void *ctx, const char *key, uint64_t size)
{
    (void)ctx;
    (void)key;
    (void)size;
    return 1; /* one is enough */
}

static int check_bucket(silt_s3_client *c, bool create)
{
    if (create)
        return silt_s3_create_bucket(c);
    int rc = silt_s3_list(c, "refs/", 1, no_keys, NULL);
    if (rc == SILT_ENOTFOUND)
        return silt_err(SILT_ENOTFOUND, "s3: bucket %s does not exist", silt_s3_client_bucket(c));
    return rc < 0 ? rc : 0;
}

int silt_store_open_s3(silt_store **out, const silt_s3_config *cfg, const char *prefix, bool create)
{
    *out = NULL;
    if (!silt_s3_valid_prefix(prefix ? prefix : ""))
        return silt_err(SILT_EINVAL, "s3: invalid key prefix '%.200s'", prefix ? prefix : "");
    silt_s3_client *c = NULL;
    int rc = silt_s3_client_open(&c, cfg);
    if (rc == 0)
        rc = check_bucket(c, create);
    silt_store *s = rc == 0 ? calloc(1, sizeof *s) : NULL;
    s3store *st = s ? calloc(1, sizeof *st) : NULL;
    char *p = st ? strdup(prefix ? prefix : "") : NULL;
    if (rc == 0 && !p) {
        free(s);
        free(st);
        rc = silt_err(SILT_ENOMEM, "store: out of memory");
    }
    if (rc < 0) {
        silt_s3_client_free(c);
        return rc;
    }
    st->c = c;
    st->prefix = p;
    s->ops = &S3_OPS;
    s->impl = st;
    *out = s;
    return 0;
}
