/* test_util.c — unit tests for src/util: hashing, multiformats, time and
 * file system helpers. Encoders for base58btc / base64url used only to build
 * round-trip inputs live here (the library only decodes those bases). */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/error.h"
#include "util/fsutil.h"
#include "util/hash.h"
#include "util/multiformats.h"
#include "util/scratch.h"
#include "util/timeutil.h"

/* ------------------------------------------------------------------ helpers */

static void hex_to_bytes(const char *hex, uint8_t *out)
{
    size_t n = strlen(hex) / 2;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        sscanf(hex + 2 * i, "%2x", &v);
        out[i] = (uint8_t)v;
    }
}

static char *enc_b58(const uint8_t *p, size_t n)
{
    static const char alpha[] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
    size_t zeros = 0;
    while (zeros < n && p[zeros] == 0)
        zeros++;
    size_t cap = n * 138 / 100 + 2;
    uint8_t *digits = calloc(cap, 1);
    assert_non_null(digits);
    size_t used = 0;
    for (size_t i = zeros; i < n; i++) {
        unsigned carry = p[i];
        size_t k = 0;
        for (size_t j = cap; j > 0 && (carry || k < used); j--, k++) {
            carry += 256u * digits[j - 1];
            digits[j - 1] = (uint8_t)(carry % 58);
            carry /= 58;
        }
        used = k;
    }
    char *s = malloc(zeros + used + 2);
    assert_non_null(s);
    size_t o = 0;
    s[o++] = 'z';
    for (size_t i = 0; i < zeros; i++)
        s[o++] = '1';
    for (size_t i = cap - used; i < cap; i++)
        s[o++] = alpha[digits[i]];
    s[o] = '\0';
    free(digits);
    return s;
}

static char *enc_b64url(const uint8_t *p, size_t n)
{
    static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char *s = malloc(n * 4 / 3 + 4);
    assert_non_null(s);
    size_t o = 0;
    s[o++] = 'u';
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        acc = acc << 8 | p[i];
        bits += 8;
        while (bits >= 6) {
            s[o++] = alpha[(acc >> (bits - 6)) & 63];
            bits -= 6;
        }
    }
    if (bits)
        s[o++] = alpha[(acc << (6 - bits)) & 63];
    s[o] = '\0';
    return s;
}

static int count_tmp_files(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (strncmp(de->d_name, ".tmp-", 5) == 0)
            n++;
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------ hash */

/* silt_error_code: the code of the message in silt_error_last(), kept by
 * silt_err_context, SILT_OK after silt_err_clear (the CLI's --json errors). */
static void test_error_code(void **state)
{
    (void)state;
    silt_err_clear();
    assert_int_equal(silt_error_code(), SILT_OK);
    assert_string_equal(silt_error_last(), "");
    assert_int_equal(silt_err(SILT_ENOTFOUND, "dataset '%s' not found", "x"), SILT_ENOTFOUND);
    assert_int_equal(silt_error_code(), SILT_ENOTFOUND);
    assert_int_equal(silt_err_context(SILT_ECONFLICT, "ingest into '%s'", "x"), SILT_ECONFLICT);
    assert_int_equal(silt_error_code(), SILT_ECONFLICT);
    assert_string_equal(silt_error_last(), "ingest into 'x': dataset 'x' not found");
    silt_err_clear();
    assert_int_equal(silt_error_code(), SILT_OK);
}

static void test_sha3_vectors(void **state)
{
    uint8_t d[32];
    assert_int_equal(silt_sha3_256("", 0, d), 0);
    assert_string_equal(tu_hex(d, 32), "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
    assert_int_equal(silt_sha3_256(NULL, 0, d), 0);
    assert_string_equal(tu_hex(d, 32), "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a");
    assert_int_equal(silt_sha3_256("abc", 3, d), 0);
    assert_string_equal(tu_hex(d, 32), "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
}

static void test_sha3_streaming(void **state)
{
    uint8_t data[3000], a[32], b[32];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 31 + 7);
    assert_int_equal(silt_sha3_256(data, sizeof data, a), 0);
    silt_sha3_ctx *c = silt_sha3_new();
    assert_non_null(c);
    size_t off = 0, step = 1;
    while (off < sizeof data) {
        size_t n = step < sizeof data - off ? step : sizeof data - off;
        assert_int_equal(silt_sha3_update(c, data + off, n), 0);
        off += n;
        step = step * 3 + 1;
    }
    assert_int_equal(silt_sha3_update(c, NULL, 0), 0);
    assert_int_equal(silt_sha3_final(c, b), 0);
    assert_memory_equal(a, b, 32);
    assert_true(silt_sha3_final(c, b) < 0); /* final only once */
    silt_sha3_free(c);
    silt_sha3_free(NULL);
}

static void test_sha3_file(void **state)
{
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    char *p = silt_path_join(dir, "f.bin", NULL);
    assert_non_null(p);
    static uint8_t data[200000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i ^ (i >> 8));
    assert_int_equal(tu_write_file(p, data, sizeof data), 0);
    uint8_t a[32], b[32];
    uint64_t size = 0;
    assert_int_equal(silt_sha3_file(p, a, &size), 0);
    assert_int_equal(size, sizeof data);
    assert_int_equal(silt_sha3_256(data, sizeof data, b), 0);
    assert_memory_equal(a, b, 32);
    char *missing = silt_path_join(dir, "nope", NULL);
    assert_int_equal(silt_sha3_file(missing, a, NULL), SILT_ENOTFOUND);
    assert_non_null(strstr(silt_error_last(), "nope"));
    free(missing);
    free(p);
    tu_rmrf(dir);
    free(dir);
}

static void test_keccak256(void **state)
{
    uint8_t d[32];
    assert_int_equal(silt_keccak256("", 0, d), 0);
    assert_string_equal(tu_hex(d, 32), "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    const char *fox = "The quick brown fox jumps over the lazy dog";
    assert_int_equal(silt_keccak256(fox, strlen(fox), d), 0);
    assert_string_equal(tu_hex(d, 32), "4d741b6f1eb29cb2a9b9911c82f56fa8d73b04959d3d9d222895df6c0b28aa15");
    /* Transfer(address,address,uint256) event topic */
    const char *sig = "Transfer(address,address,uint256)";
    assert_int_equal(silt_keccak256(sig, strlen(sig), d), 0);
    assert_string_equal(tu_hex(d, 32), "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef");
}

/* ------------------------------------------------------------------ multiformats */

static const char *PREV_MH = "f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272";

static void test_multihash_text(void **state)
{
    uint8_t mh[SILT_MH_LEN];
    char text[SILT_MH_TEXT_LEN + 1];
    assert_int_equal(silt_multihash_sha3("prev", 4, mh), 0);
    assert_int_equal(silt_multihash_check(mh, sizeof mh), 0);
    silt_multihash_to_text(mh, sizeof mh, text);
    assert_string_equal(text, PREV_MH);
    assert_int_equal(strlen(text), SILT_MH_TEXT_LEN);

    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_multihash_from_text(PREV_MH, &b), 0);
    assert_int_equal(b.len, SILT_MH_LEN);
    assert_memory_equal(b.data, mh, SILT_MH_LEN);

    /* upper-case base16 */
    char upper[SILT_MH_TEXT_LEN + 1];
    for (size_t i = 0; i <= SILT_MH_TEXT_LEN; i++)
        upper[i] = (char)(i == 0 ? 'F' : (text[i] >= 'a' && text[i] <= 'f' ? text[i] - 32 : text[i]));
    silt_buf_clear(&b);
    assert_int_equal(silt_multihash_from_text(upper, &b), 0);
    assert_memory_equal(b.data, mh, SILT_MH_LEN);

    /* base64url and base58btc forms of the same bytes */
    char *u = enc_b64url(mh, sizeof mh);
    char *z = enc_b58(mh, sizeof mh);
    silt_buf_clear(&b);
    assert_int_equal(silt_multihash_from_text(u, &b), 0);
    assert_int_equal(b.len, SILT_MH_LEN);
    assert_memory_equal(b.data, mh, SILT_MH_LEN);
    silt_buf_clear(&b);
    assert_int_equal(silt_multihash_from_text(z, &b), 0);
    assert_int_equal(b.len, SILT_MH_LEN);
    assert_memory_equal(b.data, mh, SILT_MH_LEN);
    free(u);
    free(z);

    uint8_t d[32], w[SILT_MH_LEN];
    assert_int_equal(silt_sha3_256("prev", 4, d), 0);
    silt_multihash_wrap_sha3(d, w);
    assert_memory_equal(w, mh, SILT_MH_LEN);
    silt_buf_free(&b);
}

static void test_multibase_roundtrips(void **state)
{
    uint8_t data[64];
    silt_buf b = SILT_BUF_INIT;
    for (size_t n = 0; n <= sizeof data; n++) {
        for (size_t i = 0; i < n; i++)
            data[i] = (uint8_t)(n * 13 + i * 101);
        if (n > 2) {
            data[0] = 0; /* leading zero bytes are base58's special case */
            data[1] = 0;
        }
        char *u = enc_b64url(data, n);
        char *z = enc_b58(data, n);
        char f[2 * sizeof data + 2];
        silt_multibase_encode_f(data, n, f);
        const char *texts[3] = {u, z, f};
        for (int k = 0; k < 3; k++) {
            silt_buf_clear(&b);
            assert_int_equal(silt_multibase_decode(texts[k], &b), 0);
            assert_int_equal(b.len, n);
            if (n)
                assert_memory_equal(b.data, data, n);
        }
        free(u);
        free(z);
    }
    /* known base58btc vectors */
    silt_buf_clear(&b);
    assert_int_equal(silt_multibase_decode("zStV1DL6CwTryKyV", &b), 0);
    assert_string_equal(b.data, "hello world");
    silt_buf_clear(&b);
    assert_int_equal(silt_multibase_decode("z1112", &b), 0);
    assert_int_equal(b.len, 4);
    assert_memory_equal(b.data, "\0\0\0\1", 4);
    /* decode appends */
    silt_buf_clear(&b);
    assert_int_equal(silt_buf_puts(&b, "x"), 0);
    assert_int_equal(silt_multibase_decode("f41", &b), 0);
    assert_string_equal(b.data, "xA");
    silt_buf_free(&b);
}

static void test_multibase_rejects(void **state)
{
    static const char *bad[] = {
        "",        /* empty */
        "x1234",   /* unsupported prefix */
        "m SGVsbG8", /* base64 'm' not supported */
        "f123",    /* odd hex length */
        "f12g4",   /* bad hex char */
        "z0OIl",   /* chars outside base58btc alphabet */
        "uAB=",    /* padding in base64url */
        "uA+B",    /* standard alphabet char in base64url */
        "uA",      /* truncated base64url */
        "uAB",     /* non-zero trailing bits */
    };
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_buf_puts(&b, "keep"), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        silt_err_clear();
        assert_int_equal(silt_multibase_decode(bad[i], &b), SILT_EINVAL);
        assert_true(strlen(silt_error_last()) > 0);
        assert_int_equal(b.len, 4); /* nothing appended on failure */
        assert_string_equal(b.data, "keep");
    }
    silt_buf_free(&b);
}

static void test_multihash_rejects(void **state)
{
    silt_buf b = SILT_BUF_INIT;
    /* 31-byte digest with a 32 length byte */
    char shortmh[SILT_MH_TEXT_LEN];
    memcpy(shortmh, PREV_MH, SILT_MH_TEXT_LEN - 2);
    shortmh[SILT_MH_TEXT_LEN - 2] = '\0';
    assert_int_equal(silt_multihash_from_text(shortmh, &b), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "invalid multihash"));
    /* consistent length but sha3 with 31 bytes */
    char wrong[80];
    snprintf(wrong, sizeof wrong, "f161f%.62s", PREV_MH + 5);
    assert_int_equal(strlen(wrong), 67);
    assert_int_equal(silt_multihash_from_text(wrong, &b), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "32 bytes"));
    assert_int_equal(silt_multihash_from_text("f", &b), SILT_EINVAL);
    assert_int_equal(silt_multihash_from_text("f16", &b), SILT_EINVAL);
    assert_int_equal(silt_multihash_from_text("f1620", &b), SILT_EINVAL);
    assert_int_equal(silt_multihash_from_text("q1620", &b), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "q1620"));
    assert_int_equal(silt_multihash_from_text("f1621", &b), SILT_EINVAL);
    assert_int_equal(b.len, 0);
    /* non-minimal varint */
    const uint8_t nm[] = {0x96, 0x00, 0x01, 0xaa};
    assert_int_equal(silt_multihash_check(nm, sizeof nm), SILT_EINVAL);
    /* other hash codes are structurally valid */
    const uint8_t other[] = {0x12, 0x02, 0xaa, 0xbb};
    assert_int_equal(silt_multihash_check(other, sizeof other), 0);
    assert_int_equal(silt_multihash_check(other, 3), SILT_EINVAL);
    silt_buf_free(&b);
}

static void test_did(void **state)
{
    /* RFC 8032 test 1 */
    uint8_t seed[32], did[SILT_DID_LEN], did2[SILT_DID_LEN];
    hex_to_bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60", seed);
    assert_int_equal(silt_did_from_seed(seed, did), 0);
    assert_int_equal(did[0], 0xed);
    assert_int_equal(did[1], 0x01);
    assert_string_equal(tu_hex(did + 2, 32), "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    char text[SILT_DID_TEXT_LEN + 1];
    silt_did_to_text(did, text);
    assert_string_equal(text, "did:odf:fed01d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    assert_int_equal(strlen(text), SILT_DID_TEXT_LEN);
    assert_int_equal(silt_did_from_text(text, did2), 0);
    assert_memory_equal(did, did2, SILT_DID_LEN);

    /* base58 form of the same id */
    char *z = enc_b58(did, SILT_DID_LEN);
    char zt[128];
    snprintf(zt, sizeof zt, "did:odf:%s", z);
    memset(did2, 0, sizeof did2);
    assert_int_equal(silt_did_from_text(zt, did2), 0);
    assert_memory_equal(did, did2, SILT_DID_LEN);
    free(z);

    /* generate: seed reproduces the id; two ids differ */
    uint8_t g1[SILT_DID_LEN], g2[SILT_DID_LEN], s1[32];
    assert_int_equal(silt_did_generate(g1, s1), 0);
    assert_int_equal(silt_did_generate(g2, NULL), 0);
    assert_memory_not_equal(g1, g2, SILT_DID_LEN);
    assert_int_equal(silt_did_from_seed(s1, did2), 0);
    assert_memory_equal(g1, did2, SILT_DID_LEN);
}

static void test_did_rejects(void **state)
{
    uint8_t did[SILT_DID_LEN];
    const char *key = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
    char t[160];
    assert_int_equal(silt_did_from_text("did:key:fed01", did), SILT_EINVAL);
    assert_int_equal(silt_did_from_text("fed01", did), SILT_EINVAL);
    assert_int_equal(silt_did_from_text("", did), SILT_EINVAL);
    assert_int_equal(silt_did_from_text(NULL, did), SILT_EINVAL);
    snprintf(t, sizeof t, "did:odf:fe701%s", key); /* secp256k1-pub multicodec */
    assert_int_equal(silt_did_from_text(t, did), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "multicodec"));
    snprintf(t, sizeof t, "did:odf:fed01%.62s", key); /* 31-byte key */
    assert_int_equal(silt_did_from_text(t, did), SILT_EINVAL);
    snprintf(t, sizeof t, "did:odf:fed01%s00", key); /* 33-byte key */
    assert_int_equal(silt_did_from_text(t, did), SILT_EINVAL);
    snprintf(t, sizeof t, "did:odf:xed01%s", key);
    assert_int_equal(silt_did_from_text(t, did), SILT_EINVAL);
    snprintf(t, sizeof t, "did:odf:fed01%.63s", key); /* odd length */
    assert_int_equal(silt_did_from_text(t, did), SILT_EINVAL);
    assert_int_equal(silt_did_from_text("did:odf:", did), SILT_EINVAL);
}

static void test_base64(void **state)
{
    static const char *plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *enc[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    silt_buf b = SILT_BUF_INIT;
    for (size_t i = 0; i < 7; i++) {
        silt_buf_clear(&b);
        assert_int_equal(silt_base64_encode((const uint8_t *)plain[i], strlen(plain[i]), &b), 0);
        assert_string_equal(b.data ? b.data : "", enc[i]);
        silt_buf_clear(&b);
        assert_int_equal(silt_base64_decode(enc[i], &b), 0);
        assert_int_equal(b.len, strlen(plain[i]));
        if (b.len)
            assert_memory_equal(b.data, plain[i], b.len);
    }
    /* binary round trip over all byte values */
    uint8_t all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (uint8_t)i;
    silt_buf e = SILT_BUF_INIT;
    assert_int_equal(silt_base64_encode(all, sizeof all, &e), 0);
    silt_buf_clear(&b);
    assert_int_equal(silt_base64_decode(e.data, &b), 0);
    assert_int_equal(b.len, 256);
    assert_memory_equal(b.data, all, 256);
    silt_buf_free(&e);
    /* whitespace (folded YAML) and missing padding are accepted */
    silt_buf_clear(&b);
    assert_int_equal(silt_base64_decode("Zm9v\n YmFy\n", &b), 0);
    assert_string_equal(b.data, "foobar");
    silt_buf_clear(&b);
    assert_int_equal(silt_base64_decode("Zm8", &b), 0);
    assert_string_equal(b.data, "fo");
    /* rejects */
    static const char *bad[] = {"Z", "Zg=", "Zg===", "Zm9v=", "Zg==Zg==", "Zm9-", "Zm9_", "Zh==", "@@@@"};
    silt_buf_clear(&b);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(silt_base64_decode(bad[i], &b), SILT_EINVAL);
        assert_int_equal(b.len, 0);
    }
    silt_buf_free(&b);
}

/* ------------------------------------------------------------------ time */

static void check_parse(const char *text, int64_t sec, uint32_t nsec)
{
    silt_time t = {12345, 6};
    int rc = silt_time_parse(text, &t);
    if (rc != 0)
        fail_msg("parse '%s': %s", text, silt_error_last());
    if (t.sec != sec || t.nsec != nsec)
        fail_msg("parse '%s': got %lld.%09u want %lld.%09u", text, (long long)t.sec, t.nsec,
                 (long long)sec, nsec);
}

static void check_fmt(int64_t sec, uint32_t nsec, const char *want)
{
    char out[40];
    silt_time t = {sec, nsec};
    silt_time_format(t, out);
    assert_string_equal(out, want);
    silt_time back;
    assert_int_equal(silt_time_parse(out, &back), 0);
    assert_int_equal(silt_time_cmp(back, t), 0);
}

static void test_time_parse_format(void **state)
{
    check_parse("2020-01-01T12:00:00Z", 1577880000, 0);
    check_fmt(1577880000, 0, "2020-01-01T12:00:00Z");
    check_parse("1970-01-01T00:00:00Z", 0, 0);
    check_fmt(0, 0, "1970-01-01T00:00:00Z");
    check_parse("2020-01-01", 1577836800, 0);
    check_parse("2020-01-01 12:00:00Z", 1577880000, 0);
    check_parse("2020-01-01t12:00:00z", 1577880000, 0);
    /* fractions */
    check_parse("2020-01-01T12:00:00.5Z", 1577880000, 500000000);
    check_fmt(1577880000, 500000000, "2020-01-01T12:00:00.500Z");
    check_fmt(1577880000, 120000000, "2020-01-01T12:00:00.120Z");
    check_fmt(1577880000, 123456000, "2020-01-01T12:00:00.123456Z");
    check_fmt(1577880000, 1000, "2020-01-01T12:00:00.000001Z");
    check_fmt(1577880000, 123456789, "2020-01-01T12:00:00.123456789Z");
    check_fmt(1577880000, 100, "2020-01-01T12:00:00.000000100Z");
    check_parse("2020-01-01T12:00:00.000Z", 1577880000, 0);
    check_parse("2020-01-01T12:00:00.123456789Z", 1577880000, 123456789);
    /* offsets */
    check_parse("2020-01-01T12:00:00+02:00", 1577872800, 0);
    check_parse("2020-01-01T12:00:00-05:30", 1577899800, 0);
    check_parse("2020-01-01T00:30:00.25+01:00", 1577835000, 250000000);
    check_fmt(1577835000, 250000000, "2019-12-31T23:30:00.250Z");
    /* leap years */
    check_parse("2020-02-29T00:00:00Z", 1582934400, 0);
    check_parse("2000-02-29T00:00:00Z", 951782400, 0);
    check_fmt(951782400, 0, "2000-02-29T00:00:00Z");
    check_parse("2021-03-01T00:00:00Z", 1614556800, 0);
    /* before 1970 */
    check_parse("1969-12-31T23:59:59Z", -1, 0);
    check_fmt(-1, 0, "1969-12-31T23:59:59Z");
    check_fmt(-1, 999000000, "1969-12-31T23:59:59.999Z");
    check_parse("1900-01-01T00:00:00Z", -2208988800LL, 0);
    check_fmt(-2208988800LL, 0, "1900-01-01T00:00:00Z");
    check_parse("0001-01-01T00:00:00Z", -62135596800LL, 0);
    check_fmt(-62135596800LL, 0, "0001-01-01T00:00:00Z");
    check_fmt(-62135596800LL - 86400LL * 366, 0, "0000-01-01T00:00:00Z"); /* year 0 is leap */
    check_fmt(-62135596800LL - 86400LL * 367, 0, "-0001-12-31T00:00:00Z");
    check_parse("-0001-12-31T00:00:00Z", -62135596800LL - 86400LL * 367, 0);
    /* far future */
    check_parse("9999-12-31T23:59:59Z", 253402300799LL, 0);
    check_fmt(253402300799LL, 0, "9999-12-31T23:59:59Z");
    check_fmt(253402300800LL, 0, "+10000-01-01T00:00:00Z");
    check_parse("+10000-01-01T00:00:00Z", 253402300800LL, 0);
    /* leap second folds into the next second */
    check_parse("2016-12-31T23:59:60Z", 1483228800, 0);
    /* extreme values do not crash and stay within 40 bytes */
    char out[40];
    silt_time_format((silt_time){INT64_MIN, 0}, out);
    assert_true(strlen(out) < 40);
    silt_time_format((silt_time){INT64_MAX, 999999999}, out);
    assert_true(strlen(out) < 40);
    /* unnormalised nsec carries */
    silt_time_format((silt_time){0, 1500000000u}, out);
    assert_string_equal(out, "1970-01-01T00:00:01.500Z");
}

static void test_time_rejects(void **state)
{
    static const char *bad[] = {
        "", "2020", "20-01-01", "2020-1-01", "2020-13-01", "2020-00-10", "2020-01-32",
        "2019-02-29", "1900-02-29", "2020-04-31", "2020-01-01T", "2020-01-01T12:00Z",
        "2020-01-01T24:00:00Z", "2020-01-01T12:60:00Z", "2020-01-01T12:00:61Z",
        "2020-01-01T12:00:00", "2020-01-01T12:00:00.Z", "2020-01-01T12:00:00.1234567890Z",
        "2020-01-01T12:00:00+2:00", "2020-01-01T12:00:00+24:00", "2020-01-01T12:00:00Zjunk",
        "2020-01-01X12:00:00Z", "12020-01-01T00:00:00Z", "2020-01-01T12:00:00+02:00:00",
        " 2020-01-01T12:00:00Z", "+1234567890-01-01",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        silt_time t;
        if (silt_time_parse(bad[i], &t) != SILT_EINVAL)
            fail_msg("accepted '%s'", bad[i]);
        assert_non_null(strstr(silt_error_last(), "invalid time"));
    }
    silt_time t;
    assert_int_equal(silt_time_parse(NULL, &t), SILT_EINVAL);
}

static void test_time_parts(void **state)
{
    int32_t y;
    uint16_t ord;
    uint32_t secs, ns;
    silt_time t;
    assert_int_equal(silt_time_parse("2020-01-01T12:00:00Z", &t), 0);
    silt_time_to_parts(t, &y, &ord, &secs, &ns);
    assert_int_equal(y, 2020);
    assert_int_equal(ord, 1);
    assert_int_equal(secs, 43200);
    assert_int_equal(ns, 0);

    silt_time_to_parts((silt_time){1609372800 + 5, 7}, &y, &ord, &secs, &ns); /* 2020-12-31 */
    assert_int_equal(y, 2020);
    assert_int_equal(ord, 366);
    assert_int_equal(secs, 5);
    assert_int_equal(ns, 7);

    silt_time_to_parts((silt_time){-1, 999}, &y, &ord, &secs, &ns);
    assert_int_equal(y, 1969);
    assert_int_equal(ord, 365);
    assert_int_equal(secs, 86399);
    assert_int_equal(ns, 999);

    assert_int_equal(silt_time_from_parts(2020, 1, 43200, 0, &t), 0);
    assert_int_equal(t.sec, 1577880000);
    assert_int_equal(silt_time_from_parts(1969, 365, 86399, 5, &t), 0);
    assert_int_equal(t.sec, -1);
    assert_int_equal(t.nsec, 5);
    assert_int_equal(silt_time_from_parts(2020, 366, 0, 0, &t), 0);
    assert_int_equal(silt_time_from_parts(2019, 366, 0, 0, &t), SILT_EINVAL);
    assert_int_equal(silt_time_from_parts(2019, 0, 0, 0, &t), SILT_EINVAL);
    assert_int_equal(silt_time_from_parts(2019, 1, 86400, 0, &t), SILT_EINVAL);
    assert_int_equal(silt_time_from_parts(2019, 1, 0, 1000000000u, &t), SILT_EINVAL);
    assert_int_equal(silt_time_from_parts(-4713, 1, 0, 0, &t), 0);
    silt_time_to_parts(t, &y, &ord, &secs, &ns);
    assert_int_equal(y, -4713);
    assert_int_equal(ord, 1);
}

/* Sweep a wide range: parts and text round trips, and agreement with the C
 * library's gmtime_r where time_t covers it. */
static void test_time_sweep(void **state)
{
    const int64_t span = 400LL * 146097 * 86400; /* +-160000 years */
    int64_t step = 86400LL * 97 + 3607;
    for (int64_t s = -span; s < span; s += step * 37) {
        for (int k = 0; k < 3; k++) {
            int64_t sec = s + k * 86399;
            silt_time t = {sec, (uint32_t)(k * 1000)};
            int32_t y;
            uint16_t ord;
            uint32_t secs, ns;
            silt_time_to_parts(t, &y, &ord, &secs, &ns);
            silt_time back;
            assert_int_equal(silt_time_from_parts(y, ord, secs, ns, &back), 0);
            assert_int_equal(silt_time_cmp(back, t), 0);
            char out[40];
            silt_time_format(t, out);
            assert_int_equal(silt_time_parse(out, &back), 0);
            if (silt_time_cmp(back, t) != 0)
                fail_msg("format/parse mismatch for %lld: %s", (long long)sec, out);
            time_t tt = (time_t)sec;
            struct tm tm;
            if (gmtime_r(&tt, &tm)) {
                assert_int_equal(y, (int64_t)tm.tm_year + 1900);
                assert_int_equal(ord, tm.tm_yday + 1);
                assert_int_equal(secs, tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec);
            }
        }
    }
}

static void test_time_ms_cmp_now(void **state)
{
    silt_time t = silt_time_from_ms(-1);
    assert_int_equal(t.sec, -1);
    assert_int_equal(t.nsec, 999000000);
    assert_int_equal(silt_time_to_ms(t), -1);
    t = silt_time_from_ms(1577880000123LL);
    assert_int_equal(t.sec, 1577880000);
    assert_int_equal(t.nsec, 123000000);
    assert_int_equal(silt_time_to_ms(t), 1577880000123LL);
    assert_int_equal(silt_time_to_ms((silt_time){5, 999999}), 5000);
    assert_int_equal(silt_time_to_ms((silt_time){INT64_MAX, 0}), INT64_MAX);

    assert_int_equal(silt_time_cmp((silt_time){1, 0}, (silt_time){1, 0}), 0);
    assert_true(silt_time_cmp((silt_time){1, 0}, (silt_time){1, 1}) < 0);
    assert_true(silt_time_cmp((silt_time){2, 0}, (silt_time){1, 999999999}) > 0);
    assert_true(silt_time_cmp((silt_time){-2, 0}, (silt_time){-1, 0}) < 0);

    setenv("SILT_FAKE_SYSTEM_TIME", "2050-01-02T03:04:05.5Z", 1);
    t = silt_time_now();
    char out[40];
    silt_time_format(t, out);
    assert_string_equal(out, "2050-01-02T03:04:05.500Z");
    unsetenv("SILT_FAKE_SYSTEM_TIME");
    t = silt_time_now();
    assert_true(t.sec > 1700000000);
}

/* ------------------------------------------------------------------ fs */

static void test_fs_write_atomic(void **state)
{
    char *dir = tu_mkdtemp();
    assert_non_null(dir);
    char *p = silt_path_join(dir, "obj", NULL);
    assert_int_equal(silt_fs_write_atomic(p, "hello", 5, false), 0);
    size_t n;
    char *got = tu_read_file(p, &n);
    assert_non_null(got);
    assert_int_equal(n, 5);
    assert_string_equal(got, "hello");
    free(got);
    assert_int_equal(count_tmp_files(dir), 0);

    /* overwrite */
    assert_int_equal(silt_fs_write_atomic(p, "bye", 3, false), 0);
    got = tu_read_file(p, &n);
    assert_string_equal(got, "bye");
    free(got);

    /* exclusive on an existing file */
    assert_int_equal(silt_fs_write_atomic(p, "new", 3, true), SILT_EEXISTS);
    assert_non_null(strstr(silt_error_last(), p));
    got = tu_read_file(p, &n);
    assert_string_equal(got, "bye");
    free(got);
    assert_int_equal(count_tmp_files(dir), 0);

    /* exclusive on a new file; empty content */
    char *q = silt_path_join(dir, "empty", NULL);
    assert_int_equal(silt_fs_write_atomic(q, NULL, 0, true), 0);
    got = tu_read_file(q, &n);
    assert_int_equal(n, 0);
    free(got);
    assert_int_equal(count_tmp_files(dir), 0);

    /* missing directory */
    char *m = silt_path_join(dir, "no", "such", "file", NULL);
    assert_int_equal(silt_fs_write_atomic(m, "x", 1, false), SILT_ENOTFOUND);
    assert_false(silt_fs_exists(m));

    /* failure after the temp file exists (rename over a non-empty
     * directory): the temp file is removed */
    char *sub = silt_path_join(dir, "subdir", NULL);
    char *subf = silt_path_join(sub, "inner", NULL);
    assert_int_equal(silt_fs_mkdirs(sub), 0);
    assert_int_equal(silt_fs_write_atomic(subf, "i", 1, false), 0);
    assert_int_equal(silt_fs_write_atomic(sub, "x", 1, false), SILT_EIO);
    assert_int_equal(count_tmp_files(dir), 0);
    assert_int_equal(silt_fs_copy_atomic(subf, sub), SILT_EIO);
    assert_int_equal(count_tmp_files(dir), 0);
    assert_true(silt_fs_is_dir(sub));
    free(subf);
    free(sub);

    /* relative path (dir ".") */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(dir), 0);
    assert_int_equal(silt_fs_write_atomic("rel", "r", 1, true), 0);
    assert_int_equal(chdir(cwd), 0);
    char *r = silt_path_join(dir, "rel", NULL);
    assert_true(silt_fs_exists(r));
    assert_int_equal(count_tmp_files(dir), 0);

    free(r);
    free(m);
    free(q);
    free(p);
    tu_rmrf(dir);
    free(dir);
}

static void test_fs_copy_read(void **state)
{
    char *dir = tu_mkdtemp();
    char *src = silt_path_join(dir, "src", NULL);
    char *dst = silt_path_join(dir, "dst", NULL);
    size_t big = 300000;
    char *data = malloc(big);
    assert_non_null(data);
    for (size_t i = 0; i < big; i++)
        data[i] = (char)(i * 7);
    assert_int_equal(tu_write_file(src, data, big), 0);
    assert_int_equal(silt_fs_copy_atomic(src, dst), 0);
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_buf_puts(&b, "pre"), 0);
    assert_int_equal(silt_fs_read(dst, &b), 0);
    assert_int_equal(b.len, big + 3);
    assert_memory_equal(b.data, "pre", 3);
    assert_memory_equal(b.data + 3, data, big);
    assert_int_equal(count_tmp_files(dir), 0);

    char *missing = silt_path_join(dir, "missing", NULL);
    silt_buf_clear(&b);
    assert_int_equal(silt_fs_read(missing, &b), SILT_ENOTFOUND);
    assert_non_null(strstr(silt_error_last(), "missing"));
    assert_int_equal(b.len, 0);
    assert_int_equal(silt_fs_copy_atomic(missing, dst), SILT_ENOTFOUND);
    assert_int_equal(silt_fs_read(dir, &b), SILT_EIO); /* a directory */
    assert_int_equal(count_tmp_files(dir), 0);

    silt_buf_free(&b);
    free(missing);
    free(data);
    free(src);
    free(dst);
    tu_rmrf(dir);
    free(dir);
}

static void test_fs_dirs(void **state)
{
    char *dir = tu_mkdtemp();
    char *deep = silt_path_join(dir, "a", "b", "c/", NULL);
    assert_int_equal(silt_fs_mkdirs(deep), 0);
    assert_true(silt_fs_is_dir(deep));
    assert_int_equal(silt_fs_mkdirs(deep), 0); /* idempotent */
    assert_int_equal(silt_fs_fsync_dir(deep), 0);

    char *f = silt_path_join(dir, "a", "file", NULL);
    assert_int_equal(silt_fs_write_atomic(f, "x", 1, false), 0);
    assert_true(silt_fs_exists(f));
    assert_false(silt_fs_is_dir(f));
    char *under = silt_path_join(f, "sub", NULL);
    assert_true(silt_fs_mkdirs(under) < 0);

    char *missing = silt_path_join(dir, "zzz", NULL);
    assert_false(silt_fs_exists(missing));
    assert_false(silt_fs_is_dir(missing));
    assert_int_equal(silt_fs_fsync_dir(missing), SILT_ENOTFOUND);

    /* remove_tree does not follow symlinks out of the tree */
    char *outside = tu_mkdtemp();
    char *keep = silt_path_join(outside, "keep", NULL);
    assert_int_equal(tu_write_file(keep, "k", 1), 0);
    char *link = silt_path_join(dir, "a", "b", "link", NULL);
    assert_int_equal(symlink(outside, link), 0);
    for (int i = 0; i < 50; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d", i);
        char *x = silt_path_join(deep, name, NULL);
        assert_int_equal(tu_write_file(x, name, strlen(name)), 0);
        free(x);
    }
    char *a = silt_path_join(dir, "a", NULL);
    assert_int_equal(silt_fs_remove_tree(a), 0);
    assert_false(silt_fs_exists(a));
    assert_true(silt_fs_exists(keep));
    assert_int_equal(silt_fs_remove_tree(a), 0); /* missing is fine */
    assert_int_equal(silt_fs_remove_tree("/"), SILT_EINVAL);
    assert_int_equal(silt_fs_remove_tree(""), SILT_EINVAL);
    /* a plain file */
    assert_int_equal(silt_fs_remove_tree(keep), 0);
    assert_false(silt_fs_exists(keep));

    assert_int_equal(silt_fs_remove_tree(outside), 0);
    assert_int_equal(silt_fs_remove_tree(dir), 0);
    assert_false(silt_fs_exists(dir));

    free(a);
    free(link);
    free(keep);
    free(outside);
    free(missing);
    free(under);
    free(f);
    free(deep);
    free(dir);
}

static void test_path_join(void **state)
{
    char *p = silt_path_join("a", "b", "c", NULL);
    assert_string_equal(p, "a/b/c");
    free(p);
    p = silt_path_join("a/", "/b", "c/", NULL);
    assert_string_equal(p, "a/b/c/");
    free(p);
    p = silt_path_join("/", "x", NULL);
    assert_string_equal(p, "/x");
    free(p);
    p = silt_path_join("only", NULL);
    assert_string_equal(p, "only");
    free(p);
    p = silt_path_join("a", "", "b", NULL);
    assert_string_equal(p, "a/b");
    free(p);
}

static void test_random_hex(void **state)
{
    (void)state;
    char a[17], b[17];
    assert_int_equal(silt_random_hex(a, 8), 0);
    assert_int_equal(silt_random_hex(b, 8), 0);
    assert_int_equal(strlen(a), 16);
    assert_int_equal(strspn(a, "0123456789abcdef"), 16);
    assert_string_not_equal(a, b); /* two temporary names differ */
    char big[200];
    assert_int_equal(silt_random_hex(big, 65), SILT_EINVAL);
}

/* field 22 of /proc/<pid>/stat (our test processes have no spaces in comm) */
static unsigned long long start_of(long pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')') + 2;
    for (int field = 3; field < 22; field++)
        p = strchr(p, ' ') + 1;
    return strtoull(p, NULL, 10);
}

static void test_scratch(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char *parent = silt_path_join(dir, "tmp", NULL), *p = NULL;
    assert_int_equal(silt_scratch_mkdir(parent, &p), 0);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    const char *name = strrchr(p, '/') + 1;
    /* <pid>-<start>-<boot8>-<pidns>-<hex16> of this process */
    long pid = 0;
    unsigned long long start = 0, ns = 0;
    char boot[9] = "", rnd[17] = "";
    assert_int_equal(sscanf(name, "%ld-%llu-%8[0-9a-f]-%llu-%16[0-9a-f]", &pid, &start, boot, &ns, rnd), 5);
    assert_int_equal(pid, (long)getpid());
    assert_true(start == start_of(pid));
    assert_int_equal(strlen(rnd), 16);
    long owner = 0;
    assert_int_equal(silt_scratch_owner(name, &owner), SILT_OWNER_ALIVE);
    assert_int_equal(owner, (long)getpid());
    char *q = NULL;
    assert_int_equal(silt_scratch_mkdir(parent, &q), 0);
    assert_string_not_equal(p, q);

    char other[SILT_SCRATCH_NAME_MAX];
    /* the same pid with another start time: the pid was reused */
    snprintf(other, sizeof other, "%ld-%llu-%s-%llu-%s", pid, start + 1, boot, ns, rnd);
    assert_int_equal(silt_scratch_owner(other, NULL), SILT_OWNER_GONE);
    /* a child: alive, then a zombie, then reaped */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t child = fork();
    if (child == 0) {
        char c;
        close(fds[1]);
        ssize_t r = read(fds[0], &c, 1);
        _exit(r < 0 ? 1 : 0);
    }
    close(fds[0]);
    snprintf(other, sizeof other, "%ld-%llu-%s-%llu-%s", (long)child, start_of(child), boot, ns, rnd);
    assert_int_equal(silt_scratch_owner(other, &owner), SILT_OWNER_ALIVE);
    assert_int_equal(owner, (long)child);
    close(fds[1]); /* the child exits */
    siginfo_t si;
    assert_int_equal(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);
    assert_int_equal(silt_scratch_owner(other, NULL), SILT_OWNER_GONE); /* zombie */
    assert_int_equal(waitpid(child, NULL, 0), child);
    assert_int_equal(silt_scratch_owner(other, NULL), SILT_OWNER_GONE);
    /* another boot / host or another pid namespace: cannot tell */
    snprintf(other, sizeof other, "%ld-%llu-%08x-%llu-%s", pid, start, (unsigned)(strtoul(boot, NULL, 16) ^ 1u),
             ns, rnd);
    assert_int_equal(silt_scratch_owner(other, NULL), SILT_OWNER_UNKNOWN);
    snprintf(other, sizeof other, "%ld-%llu-%s-%llu-%s", (long)child, start, boot, ns + 1, rnd);
    assert_int_equal(silt_scratch_owner(other, NULL), SILT_OWNER_UNKNOWN);
    /* not scratch names */
    static const char *const bad[] = {"0123456789abcdef", "spill", "", "1-2-abcdef01-3-0123456789abcde",
                                      "1-2-abcdef01-3-0123456789abcdef0", "x1-2-abcdef01-3-0123456789abcdef",
                                      "1-0-abcdef01-3-0123456789abcdef", "0-5-abcdef01-3-0123456789abcdef",
                                      "1-2-ABCDEF01-3-0123456789abcdef", "duckdb_temp_storage-0.tmp"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(silt_scratch_owner(bad[i], NULL), SILT_OWNER_UNKNOWN);
    free(q);
    free(p);
    free(parent);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha3_vectors),
        cmocka_unit_test(test_sha3_streaming),
        cmocka_unit_test(test_sha3_file),
        cmocka_unit_test(test_keccak256),
        cmocka_unit_test(test_multihash_text),
        cmocka_unit_test(test_multibase_roundtrips),
        cmocka_unit_test(test_multibase_rejects),
        cmocka_unit_test(test_multihash_rejects),
        cmocka_unit_test(test_did),
        cmocka_unit_test(test_did_rejects),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_time_parse_format),
        cmocka_unit_test(test_time_rejects),
        cmocka_unit_test(test_time_parts),
        cmocka_unit_test(test_time_sweep),
        cmocka_unit_test(test_time_ms_cmp_now),
        cmocka_unit_test(test_fs_write_atomic),
        cmocka_unit_test(test_fs_copy_read),
        cmocka_unit_test(test_fs_dirs),
        cmocka_unit_test(test_path_join),
        cmocka_unit_test(test_random_hex),
        cmocka_unit_test(test_scratch),
        cmocka_unit_test(test_error_code),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
