/* multiformats.h — multihash, multibase and did:odf identifiers.
 *
 * Multihash bytes: <varint code><varint len><digest>; silt writes SHA3-256
 * (code 0x16, 32 bytes => 34 bytes "16 20 …"), text form multibase base16
 * lower ("f1620…"). Decoding accepts multibase prefixes f (base16 lower),
 * F (base16 upper), u (base64url, no padding), z (base58btc).
 * did:odf ids: "did:odf:" + multibase of <0xed 0x01><32-byte ed25519 public
 * key>; binary form (as stored in blocks) is those 34 bytes.
 */
#ifndef SILT_UTIL_MULTIFORMATS_H
#define SILT_UTIL_MULTIFORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define SILT_MH_SHA3_256 0x16
#define SILT_MH_LEN 34               /* bytes of a SHA3-256 multihash */
#define SILT_MH_TEXT_LEN 69          /* "f" + 68 hex chars */
#define SILT_DID_LEN 34              /* 0xed 0x01 + 32-byte key */
#define SILT_DID_TEXT_LEN 77         /* "did:odf:f" + 68 hex chars */

/* multibase encode as base16 lower with the 'f' prefix, into `out`
 * (needs 2*len+2 bytes incl. NUL). */
void silt_multibase_encode_f(const uint8_t *data, size_t len, char *out);

/* Decodes multibase text (f, F, u, z). Appends the bytes to `out`.
 * SILT_EINVAL with a message naming the problem on bad input. */
int silt_multibase_decode(const char *text, silt_buf *out);
/* The value 0..15 of hex digit c (either case), -1 when c is not one. */
int silt_hex_digit(char c);

/* SHA3-256 multihash of data: 34 bytes. */
int silt_multihash_sha3(const void *data, size_t len, uint8_t out[SILT_MH_LEN]);
/* Wraps a 32-byte SHA3-256 digest into a multihash. */
void silt_multihash_wrap_sha3(const uint8_t digest[32], uint8_t out[SILT_MH_LEN]);
/* Validates multihash bytes (varint code + len matching the rest). */
int silt_multihash_check(const uint8_t *mh, size_t len);
/* Text form "f1620…" of multihash bytes; out needs 2*len+2 bytes. */
void silt_multihash_to_text(const uint8_t *mh, size_t len, char *out);
/* Parses any multibase text into multihash bytes and validates it;
 * SILT_EINVAL "invalid multihash '…': reason". */
int silt_multihash_from_text(const char *text, silt_buf *out);

/* Generates a fresh ed25519 key pair and returns the DID bytes (34) of its
 * public key. If `private_key_out` is non-NULL the 32-byte seed is stored. */
int silt_did_generate(uint8_t did[SILT_DID_LEN], uint8_t private_key_out[32]);
/* DID bytes from an explicit 32-byte ed25519 private seed (deterministic). */
int silt_did_from_seed(const uint8_t seed[32], uint8_t did[SILT_DID_LEN]);
/* "did:odf:f…" text; out needs SILT_DID_TEXT_LEN+1 bytes. */
void silt_did_to_text(const uint8_t did[SILT_DID_LEN], char *out);
/* Parses "did:odf:<multibase>" (any supported multibase); validates the
 * multicodec prefix 0xed01 and length. SILT_EINVAL on bad input. */
int silt_did_from_text(const char *text, uint8_t did[SILT_DID_LEN]);

/* Standard base64 (with padding) used for raw binary fields in YAML. */
int silt_base64_encode(const uint8_t *data, size_t len, silt_buf *out);
int silt_base64_decode(const char *text, silt_buf *out);

#endif
