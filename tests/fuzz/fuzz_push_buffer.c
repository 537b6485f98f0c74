/* fuzz_push_buffer.c — libFuzzer target for the push buffer file parser
 * (ingest/push_buffer.h). Invariants checked: no crash or read past the
 * input; the valid prefix lies within the input and is at least the header
 * when the header is there; records are numbered without gaps from
 * base_seq to next_seq; re-parsing the valid prefix alone gives the same
 * result without a torn tail (appending after the cut is safe). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/push_buffer.h"
#include "util/error.h"

typedef struct num {
    uint64_t next;
    bool first;
} num;

static int count(void *ctx, uint64_t seq, const char *rec, size_t len)
{
    (void)rec;
    (void)len;
    num *n = ctx;
    if (!n->first && seq != n->next)
        abort();
    n->first = false;
    n->next = seq + 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    silt_pbuf_scan a, b;
    num n = {0, true};
    int rc = silt_pbuf_parse(data, size, &a, count, &n);
    if (rc != 0) {
        if (rc != SILT_ECORRUPT)
            abort();
        return 0;
    }
    if (a.valid_end > size || (a.torn != (a.valid_end < size)) || a.next_seq < a.base_seq)
        abort();
    if (!n.first && n.next != a.next_seq)
        abort();
    if (silt_pbuf_parse(data, (size_t)a.valid_end, &b, NULL, NULL) != 0 || b.torn ||
        b.valid_end != a.valid_end || b.next_seq != a.next_seq || b.drop_before != a.drop_before ||
        b.frames != a.frames)
        abort();
    return 0;
}
