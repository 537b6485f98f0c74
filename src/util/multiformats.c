/* multiformats.c — multibase (f/F/u/z decode, f encode), SHA3-256
 * multihashes, did:odf identifiers (ed25519 via OpenSSL) and standard base64.
 *
 * Invariants: decoders append to the caller's silt_buf and, on any failure,
 * restore its previous length so a partial result is never visible; every
 * rejection is SILT_EINVAL with a one-line reason. Varints are unsigned LEB128
 * and must be minimally encoded. Nothing here exits or aborts. */
#include "util/multiformats.h"
#include "util/error.h"
#include "util/hash.h"

#include <string.h>

#include <openssl/evp.h>

#define MB_SHOW 80 /* max chars of offending input quoted in messages */

static const char hex_lower[] = "0123456789abcdef";

void silt_multibase_encode_f(const uint8_t *data, size_t len, char *out)
{
    *out++ = 'f';
    for (size_t i = 0; i < len; i++) {
        *out++ = hex_lower[data[i] >> 4];
        *out++ = hex_lower[data[i] & 15];
    }
    *out = '\0';
}

int silt_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int decode_hex(const char *s, size_t n, silt_buf *out)
{
    if (n % 2)
        return silt_err(SILT_EINVAL, "invalid multibase base16 '%.*s': odd number of digits",
                        MB_SHOW, s);
    int rc = silt_buf_reserve(out, n / 2);
    if (rc < 0)
        return rc;
    for (size_t i = 0; i < n; i += 2) {
        int hi = silt_hex_digit(s[i]), lo = silt_hex_digit(s[i + 1]);
        if (hi < 0 || lo < 0)
            return silt_err(SILT_EINVAL, "invalid multibase base16 '%.*s': bad character at %zu",
                            MB_SHOW, s, hi < 0 ? i : i + 1);
        out->data[out->len++] = (char)(hi << 4 | lo);
    }
    out->data[out->len] = '\0';
    return 0;
}

/* ---- base64 (standard and url-safe) ---- */

static int b64_val(unsigned char c, int url)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == (url ? '-' : '+'))
        return 62;
    if (c == (url ? '_' : '/'))
        return 63;
    return -1;
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* url: base64url alphabet without padding or whitespace (multibase 'u').
 * !url: standard alphabet; padding optional but must be correct when
 * present; ASCII whitespace ignored (YAML folds long values).
 * Non-zero trailing bits are rejected in both modes. */
static int b64_decode(const char *s, size_t n, int url, silt_buf *out, const char *what)
{
    int rc = silt_buf_reserve(out, n / 4 * 3 + 3);
    if (rc < 0)
        return rc;
    uint32_t acc = 0;
    size_t q = 0, pads = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!url && is_space(c))
            continue;
        if (!url && c == '=') {
            pads++;
            continue;
        }
        int v = b64_val((unsigned char)c, url);
        if (v < 0 || pads)
            return silt_err(SILT_EINVAL, "invalid %s '%.*s': bad character at %zu", what, MB_SHOW, s, i);
        acc = acc << 6 | (uint32_t)v;
        if (++q == 4) {
            out->data[out->len++] = (char)(acc >> 16);
            out->data[out->len++] = (char)(acc >> 8);
            out->data[out->len++] = (char)acc;
            acc = 0;
            q = 0;
        }
    }
    if (q == 1)
        return silt_err(SILT_EINVAL, "invalid %s '%.*s': truncated input", what, MB_SHOW, s);
    if (pads && (q == 0 || q + pads != 4))
        return silt_err(SILT_EINVAL, "invalid %s '%.*s': wrong padding", what, MB_SHOW, s);
    if (q == 2) {
        if (acc & 0xf)
            return silt_err(SILT_EINVAL, "invalid %s '%.*s': non-zero trailing bits", what, MB_SHOW, s);
        out->data[out->len++] = (char)(acc >> 4);
    } else if (q == 3) {
        if (acc & 0x3)
            return silt_err(SILT_EINVAL, "invalid %s '%.*s': non-zero trailing bits", what, MB_SHOW, s);
        out->data[out->len++] = (char)(acc >> 10);
        out->data[out->len++] = (char)(acc >> 2);
    }
    out->data[out->len] = '\0';
    return 0;
}

/* ---- base58btc ---- */

static const char b58_alpha[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

static int b58_val(char c)
{
    const char *p = c ? strchr(b58_alpha, c) : NULL;
    return p ? (int)(p - b58_alpha) : -1;
}

static int decode_b58(const char *s, size_t n, silt_buf *out)
{
    size_t zeros = 0;
    while (zeros < n && s[zeros] == '1')
        zeros++;
    /* log(58)/log(256) < 0.733 */
    size_t cap = (n - zeros) * 733 / 1000 + 1;
    int rc = silt_buf_reserve(out, zeros + cap);
    if (rc < 0)
        return rc;
    /* big-endian number built in the tail of the buffer region */
    uint8_t *num = (uint8_t *)out->data + out->len + zeros;
    memset(num, 0, cap);
    size_t used = 0; /* significant bytes at the end of num */
    for (size_t i = zeros; i < n; i++) {
        int v = b58_val(s[i]);
        if (v < 0)
            return silt_err(SILT_EINVAL, "invalid multibase base58btc '%.*s': bad character at %zu",
                            MB_SHOW, s, i);
        uint32_t carry = (uint32_t)v;
        size_t k = 0;
        for (size_t j = cap; j > 0 && (carry || k < used); j--, k++) {
            carry += 58u * num[j - 1];
            num[j - 1] = (uint8_t)carry;
            carry >>= 8;
        }
        if (carry) /* cannot happen given cap; defensive */
            return silt_err(SILT_EINTERNAL, "base58 decode overflow");
        used = k;
    }
    memset(out->data + out->len, 0, zeros);
    memmove(out->data + out->len + zeros, num + (cap - used), used);
    out->len += zeros + used;
    out->data[out->len] = '\0';
    return 0;
}

int silt_multibase_decode(const char *text, silt_buf *out)
{
    if (!text || !*text)
        return silt_err(SILT_EINVAL, "invalid multibase: empty string");
    size_t start = out->len;
    const char *body = text + 1;
    size_t n = strlen(body);
    int rc;
    switch (text[0]) {
    case 'f':
    case 'F':
        rc = decode_hex(body, n, out);
        break;
    case 'u':
        rc = b64_decode(body, n, 1, out, "multibase base64url");
        break;
    case 'z':
        rc = decode_b58(body, n, out);
        break;
    default:
        rc = silt_err(SILT_EINVAL, "invalid multibase '%.*s': unsupported prefix '%c'",
                      MB_SHOW, text, text[0]);
    }
    if (rc < 0) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}

/* ---- multihash ---- */

/* Reads a minimal unsigned LEB128 varint (at most 9 bytes, as multiformats
 * requires). Returns bytes consumed, 0 on error. */
static size_t read_varint(const uint8_t *p, size_t n, uint64_t *v)
{
    uint64_t r = 0;
    for (size_t i = 0; i < n && i < 9; i++) {
        r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80)) {
            if (i > 0 && p[i] == 0)
                return 0; /* not minimal */
            *v = r;
            return i + 1;
        }
    }
    return 0;
}

void silt_multihash_wrap_sha3(const uint8_t digest[32], uint8_t out[SILT_MH_LEN])
{
    out[0] = SILT_MH_SHA3_256;
    out[1] = 32;
    memmove(out + 2, digest, 32);
}

int silt_multihash_sha3(const void *data, size_t len, uint8_t out[SILT_MH_LEN])
{
    uint8_t d[32];
    int rc = silt_sha3_256(data, len, d);
    if (rc < 0)
        return rc;
    silt_multihash_wrap_sha3(d, out);
    return 0;
}

/* Returns NULL when valid, else a static reason. */
static const char *mh_problem(const uint8_t *mh, size_t len)
{
    uint64_t code, dlen;
    if (!mh || len == 0)
        return "empty";
    size_t a = read_varint(mh, len, &code);
    if (!a)
        return "bad hash code varint";
    size_t b = read_varint(mh + a, len - a, &dlen);
    if (!b)
        return "bad digest length varint";
    if (dlen != len - a - b)
        return "digest length does not match";
    if (code == SILT_MH_SHA3_256 && dlen != 32)
        return "sha3-256 digest must be 32 bytes";
    return NULL;
}

int silt_multihash_check(const uint8_t *mh, size_t len)
{
    const char *why = mh_problem(mh, len);
    if (why)
        return silt_err(SILT_EINVAL, "invalid multihash: %s", why);
    return 0;
}

void silt_multihash_to_text(const uint8_t *mh, size_t len, char *out)
{
    silt_multibase_encode_f(mh, len, out);
}

int silt_multihash_from_text(const char *text, silt_buf *out)
{
    if (!text)
        return silt_err(SILT_EINVAL, "invalid multihash: NULL");
    size_t start = out->len;
    int rc = silt_multibase_decode(text, out);
    if (rc < 0) {
        if (rc == SILT_EINVAL) {
            /* keep the decoder's reason, but say what was being parsed */
            return silt_err_context(rc, "invalid multihash '%.*s'", MB_SHOW, text);
        }
        return rc;
    }
    const char *why = mh_problem((const uint8_t *)out->data + start, out->len - start);
    if (why) {
        out->len = start;
        out->data[start] = '\0';
        return silt_err(SILT_EINVAL, "invalid multihash '%.*s': %s", MB_SHOW, text, why);
    }
    return 0;
}

/* ---- did:odf ---- */

static int did_from_pkey(EVP_PKEY *pk, uint8_t did[SILT_DID_LEN])
{
    size_t n = 32;
    if (EVP_PKEY_get_raw_public_key(pk, did + 2, &n) != 1 || n != 32)
        return silt_err(SILT_EINTERNAL, "ed25519: cannot extract public key");
    did[0] = 0xed;
    did[1] = 0x01;
    return 0;
}

int silt_did_from_seed(const uint8_t seed[32], uint8_t did[SILT_DID_LEN])
{
    EVP_PKEY *pk = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, seed, 32);
    if (!pk)
        return silt_err(SILT_EINTERNAL, "ed25519: cannot load private key");
    int rc = did_from_pkey(pk, did);
    EVP_PKEY_free(pk);
    return rc;
}

int silt_did_generate(uint8_t did[SILT_DID_LEN], uint8_t private_key_out[32])
{
    EVP_PKEY *pk = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
    if (!ctx)
        return silt_err(SILT_EINTERNAL, "ed25519: cannot create key context");
    int rc = 0;
    if (EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &pk) != 1 || !pk) {
        rc = silt_err(SILT_EINTERNAL, "ed25519: key generation failed");
        goto done;
    }
    if (private_key_out) {
        size_t n = 32;
        if (EVP_PKEY_get_raw_private_key(pk, private_key_out, &n) != 1 || n != 32) {
            rc = silt_err(SILT_EINTERNAL, "ed25519: cannot extract private key");
            goto done;
        }
    }
    rc = did_from_pkey(pk, did);
done:
    EVP_PKEY_free(pk);
    EVP_PKEY_CTX_free(ctx);
    return rc;
}

void silt_did_to_text(const uint8_t did[SILT_DID_LEN], char *out)
{
    memcpy(out, "did:odf:", 8);
    silt_multibase_encode_f(did, SILT_DID_LEN, out + 8);
}

int silt_did_from_text(const char *text, uint8_t did[SILT_DID_LEN])
{
    if (!text || strncmp(text, "did:odf:", 8) != 0)
        return silt_err(SILT_EINVAL, "invalid dataset id '%.*s': must start with 'did:odf:'",
                        MB_SHOW, text ? text : "");
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_multibase_decode(text + 8, &b);
    if (rc < 0) {
        silt_buf_free(&b);
        if (rc == SILT_EINVAL)
            return silt_err_context(rc, "invalid dataset id '%.*s'", MB_SHOW, text);
        return rc;
    }
    const uint8_t *p = (const uint8_t *)b.data;
    if (b.len < 2 || p[0] != 0xed || p[1] != 0x01)
        rc = silt_err(SILT_EINVAL, "invalid dataset id '%.*s': not an ed25519 public key (multicodec 0xed)",
                      MB_SHOW, text);
    else if (b.len != SILT_DID_LEN)
        rc = silt_err(SILT_EINVAL, "invalid dataset id '%.*s': key must be 32 bytes, got %zu",
                      MB_SHOW, text, b.len - 2);
    else
        memcpy(did, p, SILT_DID_LEN);
    silt_buf_free(&b);
    return rc;
}

/* ---- standard base64 ---- */

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int silt_base64_encode(const uint8_t *data, size_t len, silt_buf *out)
{
    if (len > (SIZE_MAX - 4) / 4 * 3)
        return silt_err(SILT_ENOMEM, "base64: input too large");
    size_t olen = (len + 2) / 3 * 4;
    int rc = silt_buf_reserve(out, olen);
    if (rc < 0)
        return rc;
    char *o = out->data + out->len;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        *o++ = b64_std[v >> 18];
        *o++ = b64_std[(v >> 12) & 63];
        *o++ = b64_std[(v >> 6) & 63];
        *o++ = b64_std[v & 63];
    }
    if (len - i == 1) {
        uint32_t v = (uint32_t)data[i] << 16;
        *o++ = b64_std[v >> 18];
        *o++ = b64_std[(v >> 12) & 63];
        *o++ = '=';
        *o++ = '=';
    } else if (len - i == 2) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;
        *o++ = b64_std[v >> 18];
        *o++ = b64_std[(v >> 12) & 63];
        *o++ = b64_std[(v >> 6) & 63];
        *o++ = '=';
    }
    out->len += olen;
    out->data[out->len] = '\0';
    return 0;
}

int silt_base64_decode(const char *text, silt_buf *out)
{
    if (!text)
        return silt_err(SILT_EINVAL, "invalid base64: NULL");
    size_t start = out->len;
    int rc = b64_decode(text, strlen(text), 0, out, "base64");
    if (rc < 0) {
        out->len = start;
        if (out->data)
            out->data[start] = '\0';
    }
    return rc;
}
