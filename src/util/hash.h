/* hash.h — SHA3-256 (OpenSSL) and Keccak-256.
 * Digests are 32 raw bytes written to caller-provided memory. */
#ifndef SILT_UTIL_HASH_H
#define SILT_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define SILT_SHA3_256_LEN 32

/* One-shot SHA3-256 of `len` bytes. Returns 0 or SILT_EINTERNAL. */
int silt_sha3_256(const void *data, size_t len, uint8_t out[SILT_SHA3_256_LEN]);

/* Streaming SHA3-256. ctx is opaque; create with _new, free with _free
 * (accepts NULL). _final may be called once; it does not free. */
typedef struct silt_sha3_ctx silt_sha3_ctx;
silt_sha3_ctx *silt_sha3_new(void);
int silt_sha3_update(silt_sha3_ctx *c, const void *data, size_t len);
int silt_sha3_final(silt_sha3_ctx *c, uint8_t out[SILT_SHA3_256_LEN]);
void silt_sha3_free(silt_sha3_ctx *c);

/* SHA3-256 of a whole file, streamed. ENOTFOUND/EIO with the path in the message. */
int silt_sha3_file(const char *path, uint8_t out[SILT_SHA3_256_LEN], uint64_t *size_out);

/* Keccak-256 (original Keccak padding, as Ethereum uses; differs from
 * SHA3-256). One-shot; own implementation. Returns 0 (EINVAL on NULL data). */
#define SILT_KECCAK_256_LEN 32
int silt_keccak256(const void *data, size_t len, uint8_t out[SILT_KECCAK_256_LEN]);

#endif
