/* fuzz_snappy.c — libFuzzer target for the Snappy codec and the definition
 * level re-encoder (src/engine/snappy.h, parquet_required.h).
 *  - the input as a compressed stream: decoding either fails with
 *    SILT_ECORRUPT or fills exactly the announced length;
 *  - the input as plain bytes: compress + uncompress gives it back;
 *  - the input as hybrid-encoded levels: lowering either fails cleanly or
 *    produces a stream that decodes (lowered again) without overrunning. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/parquet_required.h"
#include "engine/snappy.h"
#include "util/buf.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t len = 0;
    if (silt_snappy_uncompressed_length(data, size, &len) == 0 && len <= (1u << 22)) {
        uint8_t *out = malloc(len ? len : 1);
        if (out) {
            int rc = silt_snappy_uncompress(data, size, out, len);
            if (rc && rc != SILT_ECORRUPT)
                abort();
            free(out);
        }
    }
    silt_buf c = SILT_BUF_INIT;
    if (silt_snappy_compress(&c, data, size) == 0) {
        uint8_t *back = malloc(size ? size : 1);
        if (back) {
            if (silt_snappy_uncompress((const uint8_t *)c.data, c.len, back, size) != 0 ||
                memcmp(back, data, size) != 0)
                abort();
            free(back);
        }
    }
    silt_buf_free(&c);
    if (size > 2) {
        int bw = data[0] % 4 + 1, max = (1 << bw) - 1;
        size_t n = data[1] * 8u + 1;
        silt_buf out = SILT_BUF_INIT;
        size_t used = 0;
        int rc = silt_parquet_lower_levels(data + 2, size - 2, n, bw, max, silt_parquet_level_width(max - 1), &out,
                                           &used);
        if (rc == 0 && used > size - 2)
            abort();
        if (rc && rc != SILT_EINVAL && rc != SILT_ECORRUPT)
            abort();
        silt_buf_free(&out);
    }
    return 0;
}
