/* evm_filter.h — the `filter` of EVM log sources: an SQL WHERE clause over
 * the columns address, topic0..topic3, block_number and block_hash.
 *
 * Grammar (keywords and column names case-insensitive, columns may be
 * "quoted"): OR / AND / NOT over predicates and parentheses; predicates are
 * `col op value` or `value op col` (op = <> != on every column, < <= > >=
 * only on block_number), `col [NOT] IN (v, …)`, `block_number [NOT] BETWEEN
 * a AND b` and `col IS [NOT] NULL`. Values: block numbers are decimal
 * integers; binary columns take X'…' literals or '0x…' strings of exactly
 * their width (address 20 bytes, topics and block_hash 32), or
 * eth_event_selector('Name(type …)') (keccak256 of the canonical signature).
 *
 * Pushdown (silt_evm_filter_pushdown) derives an over-approximation that
 * eth_getLogs can express: a block range (comparisons and BETWEEN, AND =
 * intersection, OR = hull), the address list and each topic position's OR
 * list (= and IN; AND intersects, OR unites; anything else on that column
 * leaves it open). The whole filter is then evaluated on every fetched log
 * (SQL three-valued logic: a NULL topic compares as unknown), so rows are
 * exactly those of the WHERE clause whatever was pushed down.
 */
#ifndef SILT_INGEST_EVM_FILTER_H
#define SILT_INGEST_EVM_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct silt_evm_filter silt_evm_filter;

/* Parses `sql` (NULL or blank = no filter: everything matches). Caller
 * frees *out with silt_evm_filter_free (NULL accepted). SILT_EINVAL with a
 * one-line "filter: <what> at position N", SILT_ENOMEM. */
int silt_evm_filter_parse(silt_evm_filter **out, const char *sql);
void silt_evm_filter_free(silt_evm_filter *f);

/* One log as the filter sees it (address 20 bytes, hashes 32). */
typedef struct silt_evm_log_view {
    uint64_t block_number;
    const uint8_t *block_hash;
    const uint8_t *address;
    const uint8_t (*topics)[32];
    size_t ntopics;
} silt_evm_log_view;

/* Does the log satisfy the WHERE clause (is it TRUE)? */
bool silt_evm_filter_match(const silt_evm_filter *f, const silt_evm_log_view *l);

/* A set of values of one column: `any` (unconstrained) or exactly the n
 * values (n may be 0: nothing matches). Values are 32 bytes (an address in
 * the first 20). */
typedef struct silt_evm_set {
    bool any;
    size_t n;
    uint8_t (*v)[32]; /* malloc'd */
} silt_evm_set;

typedef struct silt_evm_pushdown {
    uint64_t lo, hi;      /* block range; lo > hi = nothing matches */
    silt_evm_set address; /* 20-byte values */
    silt_evm_set topics[4];
} silt_evm_pushdown;

/* The eth_getLogs constraints implied by `f` (NULL = none). Free with
 * silt_evm_pushdown_free. 0 or SILT_ENOMEM. */
int silt_evm_filter_pushdown(const silt_evm_filter *f, silt_evm_pushdown *out);
void silt_evm_pushdown_free(silt_evm_pushdown *p);

/* Intersects `s` with the single value v (for topic0 = the selector). */
int silt_evm_set_restrict(silt_evm_set *s, const uint8_t v[32]);

/* Does the pushdown exclude every log (empty range or an empty set)? */
bool silt_evm_pushdown_empty(const silt_evm_pushdown *p);

#endif
