/* fuzz_avro.c — libFuzzer target for the Avro reader (src/engine/avro.h):
 * the input is an Avro object container file.
 *  - the header parser either fails with SILT_ECORRUPT or returns a header
 *    no longer than the input;
 *  - a writer schema either fails to parse/map cleanly (SILT_ECORRUPT,
 *    SILT_EUNSUPPORTED, SILT_ENOMEM) or maps to an ODF schema that resolves
 *    against itself;
 *  - then the whole file is read by silt_read_avro (Apache Avro C: blocks,
 *    codecs, values) with that schema through a real engine: any outcome
 *    but a crash, a leak or a hang is fine.
 * (What libavro 1.11 loses on bad input is freed by avro_read.c's
 * per-scan allocation tracking: no leak suppression.) */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/avro.h"
#include "engine/engine.h"
#include "odf/desc.h"
#include "odf/json.h"
#include "util/arena.h"
#include "util/error.h"

static silt_engine *E;
static char PATH[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!E) {
        if (silt_engine_open(&E, &(silt_engine_opts){.memory_limit = "256MB", .threads = 1}))
            abort();
        snprintf(PATH, sizeof PATH, "/tmp/fuzz_avro.%d.avro", (int)getpid());
    }
    silt_arena *a = silt_arena_new();
    if (!a)
        return 0;
    silt_avro_header h;
    int rc = silt_avro_header_parse(a, data, size, &h);
    if (rc && rc != SILT_ECORRUPT && rc != SILT_ENOMEM)
        abort();
    if (!rc && h.header_len > size)
        abort();
    silt_avro_node *w = NULL;
    odf_DataSchema *s = NULL;
    if (!rc)
        rc = silt_avro_schema_parse(a, h.schema, h.schema_len, &w);
    if (!rc)
        rc = silt_avro_to_odf(a, w, &s);
    if (rc && rc != SILT_ECORRUPT && rc != SILT_EUNSUPPORTED && rc != SILT_ENOMEM)
        abort();
    silt_avro_plan *p = NULL;
    if (!rc && silt_avro_resolve(a, w, s, &p) != 0)
        abort(); /* a writer schema resolves to the schema inferred from it */
    json_t *sj = rc ? NULL : odf_to_json(&odf_desc_DataSchema, s);
    char *text = sj ? json_dumps(sj, JSON_COMPACT) : NULL;
    char *qs = text ? silt_sql_str(text) : NULL;
    FILE *f = qs ? fopen(PATH, "wb") : NULL;
    if (f) {
        fwrite(data, 1, size, f);
        fclose(f);
        size_t n = strlen(qs) + strlen(PATH) + 96;
        char *sql = malloc(n);
        if (sql) {
            snprintf(sql, n, "SELECT count(*) FROM (SELECT * FROM silt_read_avro('%s', %s))", PATH, qs);
            uint64_t rows;
            (void)silt_engine_query_u64(E, &rows, sql);
            free(sql);
        }
        unlink(PATH);
    }
    free(qs);
    free(text);
    json_decref(sj);
    silt_arena_free(a);
    silt_err_clear();
    return 0;
}
