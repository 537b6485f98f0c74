/* tokens.h — the tokens file `.silt/tokens.json` (internal; the public API
 * is the silt_token_* section of silt.h).
 *
 * Format (docs/server.md "Tokens"; written by silt_tokfile_format):
 *   {"version": 1, "tokens": [{"name", "sha256", "scope", "datasets",
 *    "created", "expires", "lastUsed"}, …]}
 * name [A-Za-z0-9._-]{1,64}, unique; sha256 64 lowercase hex digits;
 * scope "read" | "write" | "admin"; datasets an array of patterns (1..255
 * printable ASCII characters each; empty = every dataset); created an
 * RFC 3339 time; expires and lastUsed an RFC 3339 time or null (may be
 * left out). Times are kept as whole seconds. Unknown keys, duplicate keys
 * and duplicate names are errors: the file may be edited by hand, and a
 * misspelt "datasets" must not silently grant every dataset.
 */
#ifndef SILT_OPS_TOKENS_H
#define SILT_OPS_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "silt.h"
#include "util/buf.h"

#define SILT_TOKEN_HASH_LEN 32
/* Largest tokens file read (bytes). */
#define SILT_TOKENS_FILE_MAX (16u << 20)

typedef struct silt_tok {
    char name[SILT_TOKEN_NAME_MAX + 1];
    uint8_t hash[SILT_TOKEN_HASH_LEN]; /* SHA-256 of the secret text */
    silt_scope scope;
    char **datasets; /* malloc'd (each and the array) */
    size_t ndatasets;
    int64_t created; /* UNIX seconds */
    bool has_expires;
    int64_t expires;
    bool has_last_used;
    int64_t last_used;
} silt_tok;

typedef struct silt_tokfile {
    silt_tok *v; /* malloc'd */
    size_t n;
} silt_tokfile;

/* Parses the text of a tokens file. `path` names it in messages
 * ("PATH: token 2: …"). On error *out is empty and the code is SILT_EINVAL
 * (or SILT_ENOMEM). */
int silt_tokfile_parse(silt_tokfile *out, const char *text, size_t len, const char *path);
/* Appends the text of the file (indented JSON, tokens sorted by name, a
 * final newline) to out. 0 or SILT_ENOMEM. */
int silt_tokfile_format(silt_buf *out, const silt_tokfile *f);
/* Frees the tokens and empties f (NULL is a no-op). */
void silt_tokfile_free(silt_tokfile *f);

/* Name and pattern rules of silt_token_create (true when valid). */
bool silt_token_name_ok(const char *name);
bool silt_token_pattern_ok(const char *pattern);

#endif
