/* evm.h — ingress of `EthereumLogs` / `EvmLogs` sources: scans the logs of
 * an EVM node over JSON-RPC (HTTP, libcurl) into one Parquet file per batch,
 * with the columns of the ODF spec (block_number UBIGINT, block_hash BLOB,
 * block_timestamp TIMESTAMP NULL, transaction_index UBIGINT,
 * transaction_hash BLOB, log_index UBIGINT, address BLOB, topic0..3 BLOB
 * NULL, data BLOB, and `event` STRUCT when a signature is given), to be read
 * by the source's `read: {kind: Parquet}` as in kamu.
 *
 * Source state (kind odf/etag, as kamu writes it): "<block>@<block hash
 * hex>" of the last block scanned. A batch scans forward from the block after
 * it in chunks of SILT_EVM_BLOCK_STRIDE blocks (default 100000; a chunk the
 * node refuses as too large is halved and retried), up to the head minus
 * SILT_EVM_CONFIRMATIONS (default 0) and within the filter's block range; it
 * ends after SILT_EVM_BATCH_SIZE logs (default 100000; cut at a block
 * boundary) or SILT_EVM_COMMIT_BLOCKS scanned blocks (default 1000000), and
 * says whether more blocks remain.
 */
#ifndef SILT_INGEST_EVM_H
#define SILT_INGEST_EVM_H

#include <stdbool.h>
#include <stdint.h>

#include "ingest/fetch.h"

typedef struct silt_evm_opts {
    bool has_chain_id;
    uint64_t chain_id;
    const char *node_url;    /* required */
    const char *filter;      /* SQL WHERE or NULL */
    const char *signature;   /* Solidity event signature or NULL */
    const char *prev_state;  /* previous odf/etag value or NULL */
    const char *tmpdir;      /* where the Parquet file (and the engine's spill) goes */
    silt_redact_fn redact;   /* for the node URL in messages (may be NULL) */
    void *redact_ctx;
} silt_evm_opts;

typedef struct silt_evm_result {
    bool up_to_date;         /* no block to scan: nothing else is set */
    char *path;              /* Parquet file (malloc'd) or NULL when no log matched */
    uint64_t num_logs;
    uint64_t from_block, to_block; /* scanned range */
    char *state_value;       /* new odf/etag value (malloc'd) */
    bool has_more;           /* blocks remain up to the target */
} silt_evm_result;

/* Checks the source's fields (node URL given, filter and signature parse)
 * without contacting the node. SILT_EINVAL with a one-line message. */
int silt_evm_check(const silt_evm_opts *o);

/* One batch. Errors (SILT_EIO for the node, SILT_EINVAL for the source,
 * one line, the URL redacted): "eth_chainId: <curl message> (node URL)",
 * "the node at URL serves chain 31337, the source expects chainId 1",
 * "eth_getLogs: node error -32000: …", a log the signature cannot decode
 * ("log 3 of tx 0x…: …"), a previous state that is not "<n>@<hash>". */
int silt_evm_fetch(silt_evm_result *out, const silt_evm_opts *o);
void silt_evm_result_free(silt_evm_result *r);

#endif
