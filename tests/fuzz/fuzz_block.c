/* fuzz_block.c — libFuzzer target: metadata block decoding.
 * Any input must be rejected cleanly or decode; a decoded block must
 * re-encode, and the canonical re-encoding must decode again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "odf/block.h"
#include "odf/flatbuf.h"
#include "util/arena.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    silt_arena *a = silt_arena_new();
    if (!a)
        return 0;
    odf_MetadataBlock *b = NULL;
    int version = 0;
    if (odf_block_decode(a, data, size, &b, &version) == 0) {
        silt_buf out = SILT_BUF_INIT;
        if (odf_block_encode(&out, b) == 0) {
            odf_MetadataBlock *b2 = NULL;
            if (odf_block_decode(a, (const uint8_t *)out.data, out.len, &b2, &version) != 0)
                abort(); /* our own canonical output must decode */
            silt_buf out2 = SILT_BUF_INIT;
            if (odf_block_encode(&out2, b2) != 0 || out2.len != out.len)
                abort(); /* and be a fixed point */
            silt_buf_free(&out2);
        }
        silt_buf_free(&out);
    }
    /* the raw input as a bare FlatBuffer of other root types */
    void *obj = NULL;
    (void)odf_fb_decode(a, &odf_desc_MetadataBlock, data, size, &obj);
    (void)odf_fb_decode(a, &odf_desc_DatasetSnapshot, data, size, &obj);
    silt_arena_free(a);
    return 0;
}
