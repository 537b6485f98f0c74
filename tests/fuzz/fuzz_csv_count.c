/* fuzz_csv_count.c — libFuzzer target for the record counter of the read
 * cross-check (src/engine/read_count.c).
 *
 * Byte 0 picks the dialect (default, escape = quote, no escape, no quoting,
 * quote and escape '\''); the rest is the CSV text. Invariants checked: the
 * 64-byte block decoder and the byte-at-a-time state machine agree on every
 * statistic; records and empty lines never exceed the line breaks + 1; the
 * longest record fits in the input; the NDJSON counter never counts more
 * lines than there are line breaks + 1.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    odf_ReadStepCsv d[5] = {[1].escape = "\"", [2].escape = "", [3].quote = "", [4].quote = "'", [4].escape = "'"};
    const odf_ReadStepCsv *c = &d[data[0] % 5];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    silt_csv_stats a, b;
    if (silt_read_csv_scan_mem(p, n, c, &a) || silt_read_csv_scan_mem_scalar(p, n, c, &b))
        abort();
    if (memcmp(&a, &b, sizeof a))
        abort();
    uint64_t breaks = 0;
    for (size_t i = 0; i < n; i++)
        breaks += p[i] == '\n' || p[i] == '\r';
    if (a.records + a.empty + a.leading_empty > breaks + 1 || a.max_len > n || (a.records && !a.max_line && a.max_len))
        abort();
    uint64_t lines = 0;
    if (silt_read_ndjson_count_mem(p, n, &lines) || lines > breaks + 1)
        abort();
    return 0;
}
