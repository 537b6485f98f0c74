/* fuzz_parquet_footer.c — libFuzzer target for the Parquet footer reader.
 * Input: the Thrift compact FileMetaData bytes (no magic, no length). Any
 * input must parse or be rejected with SILT_ECORRUPT/SILT_ENOMEM; a parsed
 * footer must be internally consistent. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/parquet_meta.h"
#include "util/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    silt_parquet_meta *m = NULL;
    int rc = silt_parquet_parse_footer(data, size, &m);
    if (rc) {
        if (m || (rc != SILT_ECORRUPT && rc != SILT_ENOMEM))
            abort();
        return 0;
    }
    if (!m || m->footer_len != size)
        abort();
    for (size_t i = 0; i < m->num_columns; i++) {
        const silt_parquet_column *c = &m->columns[i];
        if (!c->path || !c->name || !c->top_name || strlen(c->path) < strlen(c->name))
            abort();
        if (c->utc_flag_pos != SIZE_MAX &&
            (c->utc_flag_pos >= size || ((data[c->utc_flag_pos] & 0x0f) != 1 && (data[c->utc_flag_pos] & 0x0f) != 2)))
            abort(); /* the patch position must be a bool field header */
        if (silt_parquet_meta_column(m, c->path) == NULL)
            abort();
    }
    silt_parquet_meta_free(m);
    return 0;
}
