/* evm_abi.h — Solidity event signatures and ABI decoding of EVM logs.
 *
 * A signature is `Name(type [indexed] [name], …) [anonymous]` with the ABI
 * types address, bool, uintN / intN (N = 8..256, step 8; uint = uint256),
 * bytesN (1..32), bytes, string, fixed T[k] and dynamic T[] arrays and
 * tuples `(T a, U b)` / `tuple(…)`. The canonical form (types only, no
 * spaces) hashed with Keccak-256 is topic0 (the selector) of a non-anonymous
 * event.
 *
 * A decoded log is appended as one JSON object of the `event` column (see
 * silt_evm_sql_type for its column type): integers of up to 64 bits as JSON
 * numbers, wider ones as decimal strings, binary values (address, bytesN,
 * bytes, indexed dynamic values = their topic hash) as lowercase hex without
 * 0x, strings as JSON strings (invalid UTF-8 replaced by U+FFFD), arrays as
 * lists, tuples as objects. Decoding is strict: dirty padding, offsets or
 * lengths out of range and non-0/1 booleans are errors (SILT_EINVAL), never
 * a crash; nesting is limited to SILT_EVM_MAX_DEPTH.
 */
#ifndef SILT_INGEST_EVM_ABI_H
#define SILT_INGEST_EVM_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"

#define SILT_EVM_MAX_DEPTH 16

typedef enum {
    SILT_EVM_ADDRESS = 1,
    SILT_EVM_BOOL,
    SILT_EVM_UINT,
    SILT_EVM_INT,
    SILT_EVM_FBYTES, /* bytesN */
    SILT_EVM_BYTES,
    SILT_EVM_STRING,
    SILT_EVM_ARRAY,
    SILT_EVM_TUPLE,
} silt_evm_kind;

typedef struct silt_evm_type silt_evm_type;
struct silt_evm_type {
    silt_evm_kind kind;
    unsigned bits;            /* uint/int: N; bytesN: N (bytes) */
    size_t len;               /* array: static length, 0 = dynamic T[] */
    silt_evm_type *elem;      /* array element */
    silt_evm_type **comps;    /* tuple components (ncomps) */
    char **names;             /* their names ("_<i>" when unnamed) */
    size_t ncomps;
};

typedef struct silt_evm_param {
    silt_evm_type *type;
    char *name;               /* "_<i>" when the signature names none */
    bool indexed;
} silt_evm_param;

typedef struct silt_evm_sig {
    char *name;
    silt_evm_param *params;
    size_t nparams;
    size_t nindexed;
    bool anonymous;
    char *canonical;          /* Name(type,type,…) */
    uint8_t selector[32];     /* keccak256(canonical) */
} silt_evm_sig;

/* Parses `text` (whitespace and newlines anywhere between tokens). Every
 * allocation lives in arena `a`. Errors: SILT_EINVAL "signature: <what> at
 * position N" (one line), SILT_ENOMEM. */
int silt_evm_sig_parse(silt_evm_sig **out, silt_arena *a, const char *text);

/* Appends the DuckDB type of the `event` column ("STRUCT(…)") to `out`;
 * `wire` gives the type as read from the NDJSON file (binary values as hex
 * VARCHAR), otherwise the final type (BLOB). 0 or SILT_ENOMEM. */
int silt_evm_sql_type(silt_buf *out, const silt_evm_sig *s, bool wire);

/* Appends the SQL expression converting the wire column `col` (an
 * identifier) to the final `event` value (hex -> BLOB, recursively). */
int silt_evm_sql_convert(silt_buf *out, const silt_evm_sig *s, const char *col);

/* Decodes one log: `topics` (ntopics of 32 bytes, topic0 first) and `data`
 * (len bytes), appending the JSON object to `out` (nothing is appended on
 * error). SILT_EINVAL with a one-line message ("topic count 2, the signature
 * has 3 indexed parameters", "data: offset out of range at byte 64", …). */
int silt_evm_decode(silt_buf *out, const silt_evm_sig *s, const uint8_t (*topics)[32], size_t ntopics,
                    const uint8_t *data, size_t len);

/* Hex helpers: lowercase hex of n bytes (no prefix) appended to out; and
 * parsing "0x…" (or bare) hex into exactly n bytes (-1 on bad input) or
 * into a malloc'd buffer (*len set; SILT_EINVAL / SILT_ENOMEM). */
int silt_evm_hex_append(silt_buf *out, const uint8_t *p, size_t n);
int silt_evm_hex_fixed(const char *s, uint8_t *out, size_t n);
int silt_evm_hex_alloc(const char *s, uint8_t **out, size_t *len);

#endif
