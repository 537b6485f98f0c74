/* fuzz_csv_options.c — libFuzzer target for the CSV reader's option handling.
 *
 * The input is split at NUL bytes into ReadStepCsv option strings:
 *   [0] flags byte(s) (bit 0 header, bit 1 inferSchema, bit 2 ddlSchema
 *       "a STRING, b BIGINT"), [1] separator, [2] quote, [3] escape,
 *   [4] nullValue, [5] dateFormat, [6] timestampFormat, [7] encoding,
 *   [8] the CSV text itself (else a fixed tiny CSV is read).
 * A missing segment leaves the option at its default. Each input builds the
 * DuckDB read SQL and runs it through silt_read_files. Invariants checked:
 * no crash; the result is 0 or a negative SILT_E* code with a one-line
 * message; on success exactly the target table exists, on failure it does
 * not; no other table appears or disappears (option values can never inject
 * SQL), and the engine keeps working.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/read.h"
#include "util/error.h"

static silt_engine *E;
static char g_fixed[256], g_var[256];

static void cleanup(void)
{
    unlink(g_fixed);
    unlink(g_var);
}

static int init(void)
{
    silt_engine_opts o = {.threads = 1, .memory_limit = "256MB"};
    if (silt_engine_open(&E, &o) != 0)
        return -1;
    const char *base = getenv("TMPDIR");
    snprintf(g_fixed, sizeof g_fixed, "%s/fuzz-csv-%d-fixed.csv", base && *base ? base : "/tmp", (int)getpid());
    snprintf(g_var, sizeof g_var, "%s/fuzz-csv-%d-var.csv", base && *base ? base : "/tmp", (int)getpid());
    FILE *f = fopen(g_fixed, "wb");
    if (!f)
        return -1;
    fputs("a,b\n1,2020-01-02\n\"x,y\",\\N\n'q';\"r\"\"s\"\n", f);
    fclose(f);
    atexit(cleanup);
    /* a sentinel that an injected statement might try to drop */
    return silt_engine_exec(E, "CREATE TABLE sentinel AS SELECT 42 AS v");
}

static uint64_t ntables(void)
{
    uint64_t n = 0;
    if (silt_engine_query_u64(E, &n, "SELECT count(*) FROM duckdb_tables()") != 0)
        __builtin_trap();
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        if (init() != 0)
            __builtin_trap();
        ready = 1;
    }
    /* split into NUL-terminated segments (copy, so each is a C string) */
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    buf[size] = '\0';
    char *seg[9] = {0};
    size_t nseg = 0;
    char *p = buf, *end = buf + size;
    while (nseg < 9 && p <= end) {
        seg[nseg++] = p;
        char *z = memchr(p, '\0', (size_t)(end - p) + 1);
        if (!z || z >= end)
            break;
        p = z + 1;
    }
    unsigned flags = nseg > 0 && seg[0][0] ? (unsigned char)seg[0][0] : 0;
    static const char *cols[] = {"a STRING", "b BIGINT"};
    odf_ReadStepCsv c = {0};
    c.has_header = true, c.header = flags & 1;
    c.has_infer_schema = true, c.infer_schema = (flags >> 1) & 1;
    if (flags & 4) {
        c.ddl_schema.items = (char **)cols;
        c.ddl_schema.n = 2;
        c.ddl_schema.present = true;
    }
    c.separator = nseg > 1 ? seg[1] : NULL;
    c.quote = nseg > 2 ? seg[2] : NULL;
    c.escape = nseg > 3 ? seg[3] : NULL;
    c.null_value = nseg > 4 ? seg[4] : NULL;
    c.date_format = nseg > 5 ? seg[5] : NULL;
    c.timestamp_format = nseg > 6 ? seg[6] : NULL;
    c.encoding = nseg > 7 ? seg[7] : NULL;
    const char *file = g_fixed;
    if (nseg > 8) {
        FILE *f = fopen(g_var, "wb");
        if (f) {
            fwrite(seg[8], 1, (size_t)(end - seg[8]), f);
            fclose(f);
            file = g_var;
        }
    }
    uint64_t before = ntables();
    odf_union u = {ODF_ReadStep_Csv, &c};
    const char *files[] = {file};
    int rc = silt_read_files(E, &u, files, NULL, 1, "fz");
    if (rc > 0 || rc < SILT_EINTERNAL)
        __builtin_trap();
    if (rc < 0) {
        const char *m = silt_error_last();
        if (!*m || strchr(m, '\n'))
            __builtin_trap(); /* one-line message */
    }
    uint64_t exists = 9;
    if (silt_engine_query_u64(E, &exists, "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'fz'") != 0)
        __builtin_trap();
    if (exists != (rc == 0 ? 1u : 0u))
        __builtin_trap();
    if (ntables() != before + (rc == 0 ? 1 : 0))
        __builtin_trap();
    uint64_t v = 0;
    if (silt_engine_query_u64(E, &v, "SELECT v FROM sentinel") != 0 || v != 42)
        __builtin_trap();
    if (rc == 0 && silt_engine_exec(E, "DROP TABLE fz") != 0)
        __builtin_trap();
    free(buf);
    return 0;
}
