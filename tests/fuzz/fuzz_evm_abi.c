/* fuzz_evm_abi.c — libFuzzer target for the EVM logs ingress parsers.
 *
 * The input is split at the first two NUL bytes into a Solidity event
 * signature, an SQL filter and the ABI data of a log. The signature and the
 * filter are parsed; the data is decoded against the signature (topics are
 * the selector plus zero words for each indexed parameter, then taken from
 * the data's first words when it is long enough); the filter's pushdown is
 * computed and it is evaluated on a log. Invariants: no crash; every failure
 * is a negative SILT_E* code with a one-line message; a failed decode leaves
 * the output buffer as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/evm_abi.h"
#include "ingest/evm_filter.h"
#include "util/error.h"

static void one_line(int rc)
{
    if (rc > 0 || (rc < 0 && strchr(silt_error_last(), '\n')))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *sig_text = text, *filter_text = "";
    const uint8_t *abi = (const uint8_t *)"";
    size_t nabi = 0, l1 = strlen(text);
    if (l1 < size) {
        filter_text = text + l1 + 1;
        size_t l2 = strlen(filter_text);
        if (l1 + 1 + l2 < size) {
            abi = data + l1 + l2 + 2;
            nabi = size - (l1 + l2 + 2);
        }
    }
    silt_arena *a = silt_arena_new();
    silt_evm_sig *sig = NULL;
    int rc = a ? silt_evm_sig_parse(&sig, a, sig_text) : 0;
    one_line(rc);
    if (!rc && sig) {
        uint8_t topics[4][32];
        memset(topics, 0, sizeof topics);
        size_t nt = sig->nindexed + (sig->anonymous ? 0 : 1);
        if (!sig->anonymous)
            memcpy(topics[0], sig->selector, 32);
        size_t skip = sig->anonymous ? 0 : 1;
        for (size_t i = skip; i < nt && 32 * (i - skip + 1) <= nabi; i++)
            memcpy(topics[i], abi + 32 * (i - skip), 32);
        silt_buf b = SILT_BUF_INIT;
        silt_buf_puts(&b, "x");
        rc = silt_evm_decode(&b, sig, (const uint8_t(*)[32])topics, nt, abi, nabi);
        one_line(rc);
        if (rc && b.len != 1)
            abort();
        silt_buf_clear(&b);
        one_line(silt_evm_sql_type(&b, sig, true));
        one_line(silt_evm_sql_convert(&b, sig, "event"));
        silt_buf_free(&b);
    }
    silt_arena_free(a);
    silt_evm_filter *f = NULL;
    rc = silt_evm_filter_parse(&f, filter_text);
    one_line(rc);
    if (!rc) {
        silt_evm_pushdown p;
        if (silt_evm_filter_pushdown(f, &p) == 0) {
            (void)silt_evm_pushdown_empty(&p);
            silt_evm_pushdown_free(&p);
        }
        uint8_t z[32] = {0}, tp[2][32] = {{0}};
        silt_evm_log_view v = {nabi, z, z, (const uint8_t(*)[32])tp, nabi % 3};
        (void)silt_evm_filter_match(f, &v);
        silt_evm_filter_free(f);
    }
    free(text);
    return 0;
}
