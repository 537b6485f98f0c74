/* fuzz_thrift.c — libFuzzer target for the Thrift compact value tree
 * (src/engine/thrift.h). Any input must parse or be rejected with
 * SILT_ECORRUPT/SILT_ENOMEM; a parsed tree must write, and the written bytes
 * must parse to a tree that writes the same bytes again (the encoding of a
 * tree is canonical and stable). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/thrift.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return 0;
    silt_thrift_value *v = NULL;
    size_t used = 0;
    int rc = silt_thrift_parse(a, data, size, &used, &v);
    if (rc) {
        if (v || (rc != SILT_ECORRUPT && rc != SILT_ENOMEM))
            abort();
        silt_arena_free(a);
        return 0;
    }
    if (!v || used > size)
        abort();
    silt_buf w1 = SILT_BUF_INIT, w2 = SILT_BUF_INIT;
    if (silt_thrift_write(&w1, v) == 0) {
        silt_thrift_value *v2 = NULL;
        size_t used2 = 0;
        if (silt_thrift_parse(a, (const uint8_t *)w1.data, w1.len, &used2, &v2) != 0 || used2 != w1.len)
            abort();
        if (silt_thrift_write(&w2, v2) != 0 || w2.len != w1.len || memcmp(w1.data, w2.data, w1.len) != 0)
            abort();
    }
    silt_buf_free(&w1);
    silt_buf_free(&w2);
    silt_arena_free(a);
    return 0;
}
