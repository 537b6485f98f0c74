/* hash.c — SHA3-256 through OpenSSL 3 EVP, plus a self-contained Keccak-256
 * (original Keccak padding 0x01, as used by Ethereum; OpenSSL 3.0 lacks it).
 *
 * Invariants: every OpenSSL failure is reported as SILT_EINTERNAL; a
 * silt_sha3_ctx always owns exactly one EVP_MD_CTX, initialised for SHA3-256
 * at creation; nothing here exits or aborts. */
#include "util/hash.h"
#include "util/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

/* Small updates (a few bytes per value when hashing data column by column)
 * are collected in `buf` and handed to OpenSSL in blocks: one
 * EVP_DigestUpdate call per value would dominate the cost. The digest is the
 * same: SHA3 is a streaming function of the concatenated input. */
#define SHA3_BUF 8192

struct silt_sha3_ctx {
    EVP_MD_CTX *md;
    int finished;
    size_t used;
    unsigned char buf[SHA3_BUF];
};

static int sha3_flush(silt_sha3_ctx *c)
{
    if (c->used && EVP_DigestUpdate(c->md, c->buf, c->used) != 1)
        return silt_err(SILT_EINTERNAL, "sha3-256: OpenSSL update failed");
    c->used = 0;
    return 0;
}

int silt_sha3_256(const void *data, size_t len, uint8_t out[SILT_SHA3_256_LEN])
{
    unsigned int n = 0;
    if (!data && len)
        return silt_err(SILT_EINVAL, "sha3-256: NULL data");
    if (EVP_Digest(data ? data : "", len, out, &n, EVP_sha3_256(), NULL) != 1 || n != SILT_SHA3_256_LEN)
        return silt_err(SILT_EINTERNAL, "sha3-256: OpenSSL digest failed");
    return 0;
}

silt_sha3_ctx *silt_sha3_new(void)
{
    silt_sha3_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        silt_err(SILT_ENOMEM, "out of memory");
        return NULL;
    }
    c->md = EVP_MD_CTX_new();
    if (!c->md) {
        free(c);
        silt_err(SILT_ENOMEM, "out of memory (EVP_MD_CTX)");
        return NULL;
    }
    if (EVP_DigestInit_ex(c->md, EVP_sha3_256(), NULL) != 1) {
        EVP_MD_CTX_free(c->md);
        free(c);
        silt_err(SILT_EINTERNAL, "sha3-256: OpenSSL init failed");
        return NULL;
    }
    return c;
}

int silt_sha3_update(silt_sha3_ctx *c, const void *data, size_t len)
{
    if (!c || (!data && len))
        return silt_err(SILT_EINVAL, "sha3-256: bad argument to update");
    if (c->finished)
        return silt_err(SILT_EINTERNAL, "sha3-256: update after final");
    if (len == 0)
        return 0;
    if (len <= SHA3_BUF - c->used) {
        memcpy(c->buf + c->used, data, len);
        c->used += len;
        return 0;
    }
    int rc = sha3_flush(c);
    if (rc)
        return rc;
    if (len < SHA3_BUF) {
        memcpy(c->buf, data, len);
        c->used = len;
        return 0;
    }
    if (EVP_DigestUpdate(c->md, data, len) != 1)
        return silt_err(SILT_EINTERNAL, "sha3-256: OpenSSL update failed");
    return 0;
}

int silt_sha3_final(silt_sha3_ctx *c, uint8_t out[SILT_SHA3_256_LEN])
{
    unsigned int n = 0;
    if (!c)
        return silt_err(SILT_EINVAL, "sha3-256: NULL context");
    if (c->finished)
        return silt_err(SILT_EINTERNAL, "sha3-256: final called twice");
    c->finished = 1;
    int rc = sha3_flush(c);
    if (rc)
        return rc;
    if (EVP_DigestFinal_ex(c->md, out, &n) != 1 || n != SILT_SHA3_256_LEN)
        return silt_err(SILT_EINTERNAL, "sha3-256: OpenSSL final failed");
    return 0;
}

void silt_sha3_free(silt_sha3_ctx *c)
{
    if (!c)
        return;
    EVP_MD_CTX_free(c->md);
    free(c);
}

int silt_sha3_file(const char *path, uint8_t out[SILT_SHA3_256_LEN], uint64_t *size_out)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR)
            return silt_err(SILT_ENOTFOUND, "%s: file not found", path);
        return silt_err(SILT_EIO, "%s: cannot open: %s", path, strerror(e));
    }
    silt_sha3_ctx *c = silt_sha3_new();
    if (!c) {
        close(fd);
        return silt_err_context(SILT_ENOMEM, "%s", path);
    }
    enum { CHUNK = 1 << 16 };
    uint8_t *buf = malloc(CHUNK);
    if (!buf) {
        silt_sha3_free(c);
        close(fd);
        return silt_err(SILT_ENOMEM, "%s: out of memory", path);
    }
    uint64_t total = 0;
    int rc = 0;
    for (;;) {
        ssize_t r = read(fd, buf, CHUNK);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            rc = silt_err(SILT_EIO, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        total += (uint64_t)r;
        rc = silt_sha3_update(c, buf, (size_t)r);
        if (rc < 0)
            break;
    }
    if (rc == 0)
        rc = silt_sha3_final(c, out);
    free(buf);
    silt_sha3_free(c);
    close(fd);
    if (rc == 0 && size_out)
        *size_out = total;
    return rc;
}

/* ---- Keccak-256 (Keccak-f[1600], rate 136 bytes, pad 0x01 ... 0x80) ---- */

static const uint64_t keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL,
    0x8000000080008000ULL, 0x000000000000808bULL, 0x0000000080000001ULL,
    0x8000000080008081ULL, 0x8000000000008009ULL, 0x000000000000008aULL,
    0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL,
    0x8000000000008003ULL, 0x8000000000008002ULL, 0x8000000000000080ULL,
    0x000000000000800aULL, 0x800000008000000aULL, 0x8000000080008081ULL,
    0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

/* rotation offsets r[x][y], lane index x + 5*y */
static const unsigned keccak_rot[25] = {
    0, 1, 62, 28, 27,
    36, 44, 6, 55, 20,
    3, 10, 43, 25, 39,
    41, 45, 15, 21, 8,
    18, 2, 61, 56, 14,
};

static uint64_t rotl64(uint64_t v, unsigned n)
{
    return n ? (v << n) | (v >> (64 - n)) : v;
}

static void keccak_f1600(uint64_t a[25])
{
    for (int round = 0; round < 24; round++) {
        uint64_t c[5], d[5], b[25];
        for (int x = 0; x < 5; x++)
            c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20];
        for (int x = 0; x < 5; x++)
            d[x] = c[(x + 4) % 5] ^ rotl64(c[(x + 1) % 5], 1);
        for (int i = 0; i < 25; i++)
            a[i] ^= d[i % 5];
        /* rho + pi: B[y, 2x+3y] = rot(A[x,y], r[x,y]) */
        for (int x = 0; x < 5; x++)
            for (int y = 0; y < 5; y++)
                b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl64(a[x + 5 * y], keccak_rot[x + 5 * y]);
        /* chi */
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 5; x++)
                a[x + 5 * y] = b[x + 5 * y] ^ (~b[(x + 1) % 5 + 5 * y] & b[(x + 2) % 5 + 5 * y]);
        /* iota */
        a[0] ^= keccak_rc[round];
    }
}

static void keccak_absorb_block(uint64_t st[25], const uint8_t *blk, size_t rate)
{
    for (size_t i = 0; i < rate / 8; i++) {
        uint64_t lane = 0;
        for (int k = 7; k >= 0; k--)
            lane = (lane << 8) | blk[i * 8 + (size_t)k];
        st[i] ^= lane;
    }
    keccak_f1600(st);
}

int silt_keccak256(const void *data, size_t len, uint8_t out[SILT_KECCAK_256_LEN])
{
    enum { RATE = 136 };
    if (!data && len)
        return silt_err(SILT_EINVAL, "keccak-256: NULL data");
    const uint8_t *p = data;
    uint64_t st[25];
    memset(st, 0, sizeof st);
    while (len >= RATE) {
        keccak_absorb_block(st, p, RATE);
        p += RATE;
        len -= RATE;
    }
    uint8_t last[RATE];
    memset(last, 0, sizeof last);
    if (len)
        memcpy(last, p, len);
    last[len] ^= 0x01;
    last[RATE - 1] ^= 0x80;
    keccak_absorb_block(st, last, RATE);
    for (size_t i = 0; i < SILT_KECCAK_256_LEN; i++)
        out[i] = (uint8_t)(st[i / 8] >> (8 * (i % 8)));
    return 0;
}
