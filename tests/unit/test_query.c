/* test_query.c — datasets as SQL views (silt_sql), the current-state view,
 * output formats, tail, schema and as-of, and the confinement of queries
 * (silt_engine_confine, silt_engine_check_query, unsafe_file_access). Slices are made here with the
 * engine (COPY … TO parquet) and committed with SetDataSchema/AddData
 * events, independent of the ingestion pipeline. */
#include "testutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dataset/data_views.h"
#include "dataset/dataset_internal.h"
#include "engine/engine.h"
#include "engine/query.h"
#include "engine/schema.h"
#include "silt.h"
#include "util/error.h"
#include "util/fsutil.h"

static char *g_dir;
static silt_workspace *g_ws;
static silt_engine *g_e;
static char g_blocks[8][SILT_MH_TEXT_LEN + 1]; /* AddData block hashes of "pop" */

/* Commits the rows of `select` (columns offset, op, system_time,
 * event_time, data…) as the next slice of ds, with a SetDataSchema first
 * when `new_schema`. Block hash text of the AddData into hash_out. */
static int add_slice(silt_dataset *ds, const char *select, uint64_t first, uint64_t last,
                     bool new_schema, char *hash_out)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/slice.parquet", g_dir);
    if (silt_engine_execf(g_e, "COPY (%s) TO '%s' (FORMAT parquet)", select, path) < 0)
        return -1;
    size_t len;
    char *bytes = tu_read_file(path, &len);
    if (!bytes)
        return -1;
    uint8_t mh[SILT_MH_LEN];
    silt_multihash_sha3(bytes, len, mh);
    free(bytes);
    silt_arena *a = silt_arena_new();
    odf_union ev[2];
    size_t n = 0;
    if (new_schema) {
        odf_DataSchema *schema = NULL;
        if (silt_engine_execf(g_e, "CREATE OR REPLACE TABLE __t AS SELECT * FROM read_parquet('%s')",
                              path) < 0 ||
            silt_schema_from_table(g_e, a, "__t", NULL, &schema) < 0)
            return -1;
        odf_SetDataSchema *sds = silt_arena_alloc(a, sizeof *sds);
        memset(sds, 0, sizeof *sds);
        sds->schema = schema;
        ev[n++] = (odf_union){ODF_MetadataEvent_SetDataSchema, sds};
    }
    if (silt_store_adopt_file(ds->store, "data", mh, path) < 0)
        return -1;
    odf_OffsetInterval *iv = silt_arena_alloc(a, sizeof *iv);
    odf_DataSlice *sl = silt_arena_alloc(a, sizeof *sl);
    odf_AddData *ad = silt_arena_alloc(a, sizeof *ad);
    memset(sl, 0, sizeof *sl);
    memset(ad, 0, sizeof *ad);
    iv->start = first;
    iv->end = last;
    sl->logical_hash = (odf_bytes){mh, SILT_MH_LEN};
    sl->physical_hash = (odf_bytes){mh, SILT_MH_LEN};
    sl->offset_interval = iv;
    sl->size = len;
    ad->new_data = sl;
    if (first > 0) {
        ad->has_prev_offset = true;
        ad->prev_offset = first - 1;
    }
    ev[n++] = (odf_union){ODF_MetadataEvent_AddData, ad};
    uint8_t hashes[2][SILT_MH_LEN];
    int rc = silt_ds_append_events_n(ds, ev, n, hashes);
    if (rc == 0 && hash_out)
        silt_multihash_to_text(hashes[n - 1], SILT_MH_LEN, hash_out);
    silt_arena_free(a);
    return rc;
}

#define ST "TIMESTAMPTZ '2024-01-01 00:00:00+00'"
#define ST2 "TIMESTAMPTZ '2024-02-01 00:00:00.250+00'"

static int setup(void **state)
{
    (void)state;
    unsetenv("SILT_WORKSPACE");
    g_dir = tu_mkdtemp();
    if (!g_dir || silt_workspace_init(g_dir) != 0 || silt_workspace_open(&g_ws, g_dir) != 0)
        return -1;
    if (silt_engine_open(&g_e, NULL) != 0)
        return -1;
    silt_dataset *ds = NULL;
    if (silt_dataset_create(&ds, g_ws, "pop", SILT_ROOT) != 0)
        return -1;
    /* Snapshot-style history: initial state, a correction, a retraction and
     * an append, then a new column with another append and a retraction. */
    const char *s1 =
        "SELECT CAST(o AS UBIGINT) AS \"offset\", CAST(op AS UTINYINT) AS op, " ST " AS system_time, "
        "CAST(et AS TIMESTAMPTZ) AS event_time, city, CAST(population AS BIGINT) AS population "
        "FROM (VALUES (0, 0, '2020-01-01 00:00:00+00', 'A', 100), (1, 0, '2020-01-01 00:00:00+00', 'B', 200), "
        "(2, 0, '2020-01-01 00:00:00+00', 'C', 300)) v(o, op, et, city, population)";
    const char *s2 =
        "SELECT CAST(o AS UBIGINT) AS \"offset\", CAST(op AS UTINYINT) AS op, " ST2 " AS system_time, "
        "CAST(et AS TIMESTAMPTZ) AS event_time, city, CAST(population AS BIGINT) AS population "
        "FROM (VALUES (3, 2, '2020-01-01 00:00:00+00', 'A', 100), (4, 3, '2020-01-01 00:00:00+00', 'A', 110), "
        "(5, 1, '2020-01-01 00:00:00+00', 'B', 200), (6, 0, '2020-01-02 00:00:00.5+00', 'D', 400)) "
        "v(o, op, et, city, population)";
    const char *s3 =
        "SELECT CAST(o AS UBIGINT) AS \"offset\", CAST(op AS UTINYINT) AS op, " ST2 " AS system_time, "
        "CAST(et AS TIMESTAMPTZ) AS event_time, city, CAST(population AS BIGINT) AS population, note "
        "FROM (VALUES (7, 0, '2020-01-03 00:00:00+00', 'E', 500, 'new, \"quoted\"'), "
        "(8, 1, '2020-01-01 00:00:00+00', 'C', 300, NULL)) v(o, op, et, city, population, note)";
    int rc = add_slice(ds, s1, 0, 2, true, g_blocks[0]);
    if (rc == 0)
        rc = add_slice(ds, s2, 3, 6, false, g_blocks[1]);
    if (rc == 0)
        rc = add_slice(ds, s3, 7, 8, true, g_blocks[2]);
    silt_dataset_free(ds);
    if (rc) {
        fprintf(stderr, "setup: %s\n", silt_error_last());
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    silt_engine_free(g_e);
    silt_workspace_free(g_ws);
    tu_rmrf(g_dir);
    free(g_dir);
    return 0;
}

/* Runs silt_sql into a string (malloc'd); *rc_out gets the result code. */
static char *sql_out(const char *q, const char *fmt, int *rc_out, uint64_t *rows)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    silt_sql_opts o = {.format = fmt, .out = f, .rows_out = rows};
    *rc_out = silt_sql(g_ws, q, &o);
    fclose(f);
    return text;
}

static void expect_sql(const char *q, const char *fmt, const char *expected)
{
    int rc;
    char *t = sql_out(q, fmt, &rc, NULL);
    if (rc != 0)
        fprintf(stderr, "error: %s\n", silt_error_last());
    assert_int_equal(rc, 0);
    assert_string_equal(t, expected);
    free(t);
}

static void expect_sql_error(const char *q, const char *fmt, int code, const char *msg)
{
    int rc;
    char *t = sql_out(q, fmt, &rc, NULL);
    assert_int_equal(rc, code);
    assert_string_equal(silt_error_last(), msg);
    free(t);
}

static void test_view_csv(void **state)
{
    (void)state;
    uint64_t rows = 0;
    int rc;
    char *t = sql_out("SELECT * FROM pop", "csv", &rc, &rows);
    assert_int_equal(rc, 0);
    assert_int_equal(rows, 9);
    assert_string_equal(t,
                        "offset,op,system_time,event_time,city,population,note\n"
                        "0,0,2024-01-01T00:00:00Z,2020-01-01T00:00:00Z,A,100,\n"
                        "1,0,2024-01-01T00:00:00Z,2020-01-01T00:00:00Z,B,200,\n"
                        "2,0,2024-01-01T00:00:00Z,2020-01-01T00:00:00Z,C,300,\n"
                        "3,2,2024-02-01T00:00:00.250Z,2020-01-01T00:00:00Z,A,100,\n"
                        "4,3,2024-02-01T00:00:00.250Z,2020-01-01T00:00:00Z,A,110,\n"
                        "5,1,2024-02-01T00:00:00.250Z,2020-01-01T00:00:00Z,B,200,\n"
                        "6,0,2024-02-01T00:00:00.250Z,2020-01-02T00:00:00.500Z,D,400,\n"
                        "7,0,2024-02-01T00:00:00.250Z,2020-01-03T00:00:00Z,E,500,\"new, \"\"quoted\"\"\"\n"
                        "8,1,2024-02-01T00:00:00.250Z,2020-01-01T00:00:00Z,C,300,\n");
    free(t);
    /* column types of the view: system columns typed as DESIGN §6 */
    expect_sql("SELECT column_name, column_type FROM (DESCRIBE pop)", "csv",
               "column_name,column_type\n"
               "offset,UBIGINT\n"
               "op,UTINYINT\n"
               "system_time,TIMESTAMP WITH TIME ZONE\n"
               "event_time,TIMESTAMP WITH TIME ZONE\n"
               "city,VARCHAR\n"
               "population,BIGINT\n"
               "note,VARCHAR\n");
    /* quoted name, trailing semicolon and comment, aggregates */
    expect_sql("SELECT op, count(*) AS n FROM \"pop\" GROUP BY op ORDER BY op; -- done", "csv",
               "op,n\n0,5\n1,2\n2,1\n3,1\n");
}

static void test_current_state(void **state)
{
    (void)state;
    const char *expected =
        "offset,op,system_time,event_time,city,population,note\n"
        "4,3,2024-02-01T00:00:00.250Z,2020-01-01T00:00:00Z,A,110,\n"
        "6,0,2024-02-01T00:00:00.250Z,2020-01-02T00:00:00.500Z,D,400,\n"
        "7,0,2024-02-01T00:00:00.250Z,2020-01-03T00:00:00Z,E,500,\"new, \"\"quoted\"\"\"\n";
    expect_sql("SELECT * FROM \"pop:current\"", "csv", expected);
    expect_sql("SELECT * FROM current_state('pop')", "csv", expected);
    expect_sql("SELECT city, population FROM \"pop:current\" WHERE population > 200", "csv",
               "city,population\nD,400\nE,500\n");
}

static void test_current_state_duplicates(void **state)
{
    (void)state;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_create(&ds, g_ws, "dups", SILT_ROOT), 0);
    /* x added three times, retracted once; y added and retracted; NULLs
     * compare equal; z corrected twice */
    const char *s =
        "SELECT CAST(o AS UBIGINT) AS \"offset\", CAST(op AS UTINYINT) AS op, " ST " AS system_time, "
        "CAST('2020-01-01 00:00:00+00' AS TIMESTAMPTZ) AS event_time, k, CAST(v AS INTEGER) AS v "
        "FROM (VALUES (0, 0, 'x', NULL), (1, 0, 'x', NULL), (2, 0, 'y', 1), (3, 1, 'x', NULL), "
        "(4, 0, 'x', NULL), (5, 1, 'y', 1), (6, 0, 'z', 1), (7, 2, 'z', 1), (8, 3, 'z', 2), "
        "(9, 2, 'z', 2), (10, 3, 'z', 3)) t(o, op, k, v)";
    assert_int_equal(add_slice(ds, s, 0, 10, true, NULL), 0);
    silt_dataset_free(ds);
    expect_sql("SELECT \"offset\", op, k, v FROM \"dups:current\"", "csv",
               "offset,op,k,v\n1,0,x,\n4,0,x,\n10,3,z,3\n");
}

static void test_formats(void **state)
{
    (void)state;
    const char *q = "SELECT \"offset\", city, note, system_time, [1, 2] AS l, {'a': 1.5} AS s, "
                    "'nan'::DOUBLE AS d, \"offset\" > 7 AS b FROM pop WHERE \"offset\" >= 7";
    expect_sql(q, "json",
               "[\n"
               "{\"offset\":7,\"city\":\"E\",\"note\":\"new, \\\"quoted\\\"\",\"system_time\":"
               "\"2024-02-01T00:00:00.250Z\",\"l\":[1,2],\"s\":{\"a\":1.5},\"d\":null,\"b\":false},\n"
               "{\"offset\":8,\"city\":\"C\",\"note\":null,\"system_time\":"
               "\"2024-02-01T00:00:00.250Z\",\"l\":[1,2],\"s\":{\"a\":1.5},\"d\":null,\"b\":true}\n"
               "]\n");
    expect_sql(q, "ndjson",
               "{\"offset\":7,\"city\":\"E\",\"note\":\"new, \\\"quoted\\\"\",\"system_time\":"
               "\"2024-02-01T00:00:00.250Z\",\"l\":[1,2],\"s\":{\"a\":1.5},\"d\":null,\"b\":false}\n"
               "{\"offset\":8,\"city\":\"C\",\"note\":null,\"system_time\":"
               "\"2024-02-01T00:00:00.250Z\",\"l\":[1,2],\"s\":{\"a\":1.5},\"d\":null,\"b\":true}\n");
    expect_sql("SELECT * FROM pop WHERE false", "json", "[]\n");
    expect_sql("SELECT * FROM pop WHERE false", "ndjson", "");
    expect_sql("SELECT \"offset\", city, note FROM pop WHERE \"offset\" IN (6, 7)", NULL,
               "offset | city | note\n"
               "-------+------+--------------\n"
               "     6 | D    | NULL\n"
               "     7 | E    | new, \"quoted\"\n");
    /* timestamps of every unit, dates */
    expect_sql("SELECT TIMESTAMP_NS '2020-01-01 00:00:00.123456789' AS a, "
               "TIMESTAMP '2020-01-01 00:00:00.123456' AS b, TIMESTAMP_S '2020-01-01 00:00:01' AS c, "
               "DATE '2020-02-03' AS d, NULL::TIMESTAMPTZ AS e",
               "csv",
               "a,b,c,d,e\n2020-01-01T00:00:00.123456789Z,2020-01-01T00:00:00.123456Z,"
               "2020-01-01T00:00:01Z,2020-02-03,\n");
    /* duplicate column names survive the conversion wrapper */
    expect_sql("SELECT 1 AS a, 2 AS a, '' AS e", "csv", "a,a,e\n1,2,\"\"\n");
}

static void test_parquet_output(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/out.parquet", g_dir);
    uint64_t rows = 0;
    silt_sql_opts o = {.format = "parquet", .output = path, .rows_out = &rows};
    assert_int_equal(silt_sql(g_ws, "SELECT city, population FROM \"pop:current\"", &o), 0);
    assert_int_equal(rows, 3);
    /* read back by path: only with unsafe_file_access */
    char q[4200];
    snprintf(q, sizeof q, "SELECT * FROM read_parquet('%s')", path);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    silt_sql_opts ou = {.format = "csv", .out = f, .unsafe_file_access = true};
    int rc = silt_sql(g_ws, q, &ou);
    fclose(f);
    assert_int_equal(rc, 0);
    assert_string_equal(text, "city,population\nA,110\nD,400\nE,500\n");
    free(text);
    /* text output to a file */
    snprintf(path, sizeof path, "%s/out.csv", g_dir);
    silt_sql_opts o2 = {.format = "csv", .output = path};
    assert_int_equal(silt_sql(g_ws, "SELECT 42 AS x", &o2), 0);
    char *t = tu_read_file(path, NULL);
    assert_string_equal(t, "x\n42\n");
    free(t);
    /* parquet without an output file */
    silt_sql_opts o3 = {.format = "parquet"};
    assert_int_equal(silt_sql(g_ws, "SELECT 1", &o3), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "sql: format parquet needs an output file");
    /* a failing query leaves no file behind */
    snprintf(path, sizeof path, "%s/bad.parquet", g_dir);
    silt_sql_opts o4 = {.format = "parquet", .output = path};
    assert_int_equal(silt_sql(g_ws, "SELECT * FROM nosuchtable", &o4), SILT_EINVAL);
    assert_false(silt_fs_exists(path));
}

static void test_errors(void **state)
{
    (void)state;
    expect_sql_error("SELECT * FROM nosuch", "csv", SILT_EINVAL,
                     "sql: Catalog Error: Table with name nosuch does not exist!");
    expect_sql_error("SELECT 1; SELECT 2", "csv", SILT_EINVAL, "sql: only one statement is allowed (got 2)");
    expect_sql_error("SELEC 1", "csv", SILT_EINVAL, "sql: Parser Error: syntax error at or near \"SELEC\"");
    expect_sql_error("SELECT 1", "xml", SILT_EINVAL,
                     "unknown output format 'xml' (use table, csv, json, ndjson, parquet or arrow)");
    /* a dataset without schema and data */
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_create(&ds, g_ws, "void", SILT_ROOT), 0);
    silt_dataset_free(ds);
    expect_sql_error("SELECT * FROM void", "csv", SILT_ENOTFOUND, "dataset 'void' has no data");
    /* a name that is not used as a table does not need a view */
    expect_sql("SELECT 'void' AS void, city FROM pop WHERE \"offset\" = 0", "csv", "void,city\nvoid,A\n");
    /* an unknown branch */
    expect_sql_error("SELECT * FROM \"pop@nope\"", "csv", SILT_ENOTFOUND,
                     "dataset 'pop' has no branch 'nope'");
    /* nothing is left in .silt/tmp */
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s/.silt/tmp", g_dir);
    expect_sql("SELECT 1 AS one", "csv", "one\n1\n");
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' 2>/dev/null)\"", tmp);
    assert_int_equal(system(cmd), 0);
}

static void test_as_of(void **state)
{
    (void)state;
    char item[128];
    snprintf(item, sizeof item, "pop=%s", g_blocks[0]);
    const char *items[] = {item};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    silt_sql_opts o = {.format = "csv", .out = f, .as_of = items, .n_as_of = 1};
    int rc = silt_sql(g_ws, "SELECT \"offset\", city FROM pop", &o);
    fclose(f);
    assert_int_equal(rc, 0);
    assert_string_equal(text, "offset,city\n0,A\n1,B\n2,C\n");
    free(text);
    /* bare block: looked up in the referenced datasets; current state too */
    items[0] = g_blocks[1];
    text = NULL;
    f = open_memstream(&text, &len);
    o.out = f;
    rc = silt_sql(g_ws, "SELECT city, population FROM \"pop:current\"", &o);
    fclose(f);
    assert_int_equal(rc, 0);
    assert_string_equal(text, "city,population\nC,300\nA,110\nD,400\n");
    free(text);
    /* a block of no referenced dataset */
    text = NULL;
    f = open_memstream(&text, &len);
    o.out = f;
    rc = silt_sql(g_ws, "SELECT 1", &o);
    fclose(f);
    free(text);
    o.out = NULL;
    assert_int_equal(rc, SILT_ENOTFOUND);
    char msg[256];
    snprintf(msg, sizeof msg, "as-of: block %s is not in any dataset of the query", g_blocks[1]);
    assert_string_equal(silt_error_last(), msg);
    items[0] = "pop=nothash";
    rc = silt_sql(g_ws, "SELECT 1 FROM pop", &o);
    assert_int_equal(rc, SILT_EINVAL);
    assert_string_equal(silt_error_last(), "as-of: 'nothash' is not a block hash (multihash f1620…)");
}

static void test_branch_and_dotted_name(void **state)
{
    (void)state;
    /* branch "dev" at the first AddData */
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "pop"), 0);
    assert_int_equal(silt_store_ref_cas(ds->store, "branches/dev", NULL, g_blocks[0]), 0);
    silt_dataset_free(ds);
    expect_sql("SELECT count(*) AS n FROM \"pop@dev\" UNION ALL SELECT count(*) FROM pop", "csv",
               "n\n3\n9\n");
    expect_sql("SELECT city FROM \"pop@dev:current\" ORDER BY city DESC LIMIT 1", "csv", "city\nC\n");

    assert_int_equal(silt_dataset_create(&ds, g_ws, "ca.bank-x", SILT_ROOT), 0);
    const char *s = "SELECT CAST(0 AS UBIGINT) AS \"offset\", CAST(0 AS UTINYINT) AS op, " ST
                    " AS system_time, DATE '2021-05-06' AS event_time, 1.25::DECIMAL(5,2) AS rate";
    assert_int_equal(add_slice(ds, s, 0, 0, true, NULL), 0);
    silt_dataset_free(ds);
    expect_sql("SELECT event_time, rate FROM \"ca.bank-x\"", "json",
               "[\n{\"event_time\":\"2021-05-06\",\"rate\":1.25}\n]\n");
}

static void test_tail(void **state)
{
    (void)state;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "pop"), 0);
    char *text = NULL;
    size_t len = 0;
    uint64_t rows = 0;
    FILE *f = open_memstream(&text, &len);
    silt_sql_opts o = {.format = "csv", .out = f, .rows_out = &rows};
    assert_int_equal(silt_dataset_tail(ds, 3, &o), 0);
    fclose(f);
    assert_int_equal(rows, 3);
    assert_string_equal(text,
                        "offset,op,system_time,event_time,city,population,note\n"
                        "6,0,2024-02-01T00:00:00.250Z,2020-01-02T00:00:00.500Z,D,400,\n"
                        "7,0,2024-02-01T00:00:00.250Z,2020-01-03T00:00:00Z,E,500,\"new, \"\"quoted\"\"\"\n"
                        "8,1,2024-02-01T00:00:00.250Z,2020-01-01T00:00:00Z,C,300,\n");
    free(text);
    /* more than there are: everything */
    text = NULL;
    f = open_memstream(&text, &len);
    o.out = f;
    assert_int_equal(silt_dataset_tail(ds, 100, &o), 0);
    fclose(f);
    assert_int_equal(rows, 9);
    free(text);
    /* the slices needed for the newest 2 records: only the last one */
    silt_slice_list sl;
    assert_int_equal(silt_ds_slices(ds, NULL, 2, &sl), 0);
    assert_int_equal(sl.n, 1);
    assert_int_equal(sl.first_offset, 7);
    assert_int_equal(sl.last_offset, 8);
    silt_slice_list_free(&sl);
    assert_int_equal(silt_ds_slices(ds, NULL, 0, &sl), 0);
    assert_int_equal(sl.n, 3);
    assert_int_equal(sl.first_offset, 0);
    silt_slice_list_free(&sl);
    silt_dataset_free(ds);

    /* schema but no data: an empty result with the columns */
    assert_int_equal(silt_dataset_create(&ds, g_ws, "empty", SILT_ROOT), 0);
    silt_arena *a = silt_arena_new();
    odf_DataSchema *schema = NULL;
    assert_int_equal(silt_engine_exec(g_e, "CREATE OR REPLACE TABLE __e (\"offset\" UBIGINT, op UTINYINT, "
                                           "system_time TIMESTAMP_MS, event_time TIMESTAMP_MS, v VARCHAR)"),
                     0);
    assert_int_equal(silt_schema_from_table(g_e, a, "__e", NULL, &schema), 0);
    odf_SetDataSchema sds = {.schema = schema};
    odf_union ev = {ODF_MetadataEvent_SetDataSchema, &sds};
    assert_int_equal(silt_ds_append_event(ds, &ev, NULL), 0);
    silt_arena_free(a);
    text = NULL;
    f = open_memstream(&text, &len);
    o.out = f;
    assert_int_equal(silt_dataset_tail(ds, 10, &o), 0);
    fclose(f);
    assert_string_equal(text, "offset,op,system_time,event_time,v\n");
    assert_int_equal(rows, 0);
    free(text);
    silt_dataset_free(ds);
    expect_sql("SELECT count(*) AS n FROM empty", "csv", "n\n0\n");
}

static void test_schema_get(void **state)
{
    (void)state;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_open(&ds, g_ws, "pop"), 0);
    char *t = NULL;
    assert_int_equal(silt_dataset_schema_get(&t, ds, SILT_SCHEMA_TEXT), 0);
    assert_string_equal(t, "offset: Option<UInt64>\n"
                           "op: Option<UInt8>\n"
                           "system_time: Option<Timestamp(Microsecond, UTC)>\n"
                           "event_time: Option<Timestamp(Microsecond, UTC)>\n"
                           "city: Option<String>\n"
                           "population: Option<Int64>\n"
                           "note: Option<String>\n");
    free(t);
    assert_int_equal(silt_dataset_schema_get(&t, ds, SILT_SCHEMA_YAML), 0);
    assert_true(strncmp(t, "fields:\n- name: offset\n  type:\n    kind: Option\n", 48) == 0);
    free(t);
    assert_int_equal(silt_dataset_schema_get(&t, ds, SILT_SCHEMA_JSON), 0);
    assert_non_null(strstr(t, "\"name\": \"note\""));
    assert_true(t[0] == '{' && t[strlen(t) - 1] == '\n');
    free(t);
    silt_dataset_free(ds);
    assert_int_equal(silt_dataset_open(&ds, g_ws, "void"), 0);
    assert_int_equal(silt_dataset_schema_get(&t, ds, SILT_SCHEMA_TEXT), SILT_ENOTFOUND);
    assert_null(t);
    assert_string_equal(silt_error_last(), "dataset 'void' has no schema");
    silt_dataset_free(ds);
}

static void test_vocab(void **state)
{
    (void)state;
    silt_dataset *ds = NULL;
    assert_int_equal(silt_dataset_create(&ds, g_ws, "voc", SILT_ROOT), 0);
    odf_SetVocab v = {.offset_column = "off", .operation_type_column = "kind"};
    odf_union ev = {ODF_MetadataEvent_SetVocab, &v};
    assert_int_equal(silt_ds_append_event(ds, &ev, NULL), 0);
    const char *s = "SELECT CAST(o AS UBIGINT) AS off, CAST(k AS UTINYINT) AS kind, " ST
                    " AS system_time, DATE '2021-05-06' AS event_time, x FROM (VALUES (0, 0, 'a'), "
                    "(1, 1, 'a'), (2, 0, 'b')) t(o, k, x)";
    assert_int_equal(add_slice(ds, s, 0, 2, true, NULL), 0);
    silt_dataset_free(ds);
    expect_sql("SELECT off, kind, x FROM \"voc:current\"", "csv", "off,kind,x\n2,0,b\n");
}

/* ---- confinement (engine.h) ---------------------------------------------------- */

/* Writes `select` to <g_dir>/<name> as Parquet with the unconfined engine; path into out. */
static void make_parquet(const char *name, const char *select, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", g_dir, name);
    assert_int_equal(silt_engine_execf(g_e, "COPY (%s) TO '%s' (FORMAT parquet)", select, out), 0);
}

/* Runs silt_query_run on e into a string (malloc'd). */
static char *run_query(silt_engine *e, const char *q, int *rc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    *rc = silt_query_run(e, q, SILT_QFMT_CSV, f, NULL, NULL);
    fclose(f);
    return text;
}

static void expect_refused(silt_engine *e, const char *q, const char *msg)
{
    int rc;
    char *t = run_query(e, q, &rc);
    if (rc != SILT_EINVAL)
        fprintf(stderr, "query %s: rc %d, %s\n", q, rc, silt_error_last());
    assert_int_equal(rc, SILT_EINVAL);
    assert_string_equal(silt_error_last(), msg);
    assert_string_equal(t, "");
    free(t);
}

static void test_confine_reads_only_view_files(void **state)
{
    (void)state;
    char in[4096], other[4096];
    make_parquet("in.parquet", "SELECT CAST(0 AS UBIGINT) AS \"offset\", CAST(0 AS UTINYINT) AS op, 7 AS x",
                 in, sizeof in);
    make_parquet("other.parquet", "SELECT 'secret' AS s", other, sizeof other);
    silt_engine *e = NULL;
    assert_int_equal(silt_engine_open(&e, NULL), 0);
    assert_false(silt_engine_is_confined(e));
    silt_vocab_names v = {"offset", "op", "system_time", "event_time"};
    const char *files[] = {in};
    assert_int_equal(silt_query_create_slice_view(e, "v", files, 1, &v, 0), 0);
    silt_confine_opts co = {.hint_write = "W", .hint_other = "O", .hint_files = "F"};
    assert_int_equal(silt_engine_confine(e, &co), 0);
    assert_true(silt_engine_is_confined(e));
    /* the view's file is readable, through the view and by its path */
    int rc;
    char *t = run_query(e, "WITH a AS (SELECT x FROM v) SELECT x FROM a WHERE x IN (SELECT x FROM v)", &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(t, "x\n7\n");
    free(t);
    char q[4300];
    snprintf(q, sizeof q, "SELECT x FROM read_parquet('%s')", in);
    t = run_query(e, q, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(t, "x\n7\n");
    free(t);
    /* any other file is not */
    snprintf(q, sizeof q, "SELECT * FROM read_parquet('%s')", other);
    char msg[4500];
    snprintf(msg, sizeof msg,
             "sql: reading files is not allowed: Cannot access file \"%s\" - file system operations are "
             "disabled by configuration (F)",
             other);
    expect_refused(e, q, msg);
    expect_refused(e, "SELECT * FROM read_csv('/etc/passwd')",
                   "sql: reading files is not allowed: Cannot access file \"/etc/passwd\" - file system "
                   "operations are disabled by configuration (F)");
    expect_refused(e, "FROM glob('/*')",
                   "sql: reading files is not allowed: Cannot access file \"/*\" - file system operations "
                   "are disabled by configuration (F)");
    /* statements: only one query */
    expect_refused(e, "SELECT 1; SELECT 2", "sql: only one statement is allowed (got 2)");
    expect_refused(e, "SET enable_external_access = true", "sql: SET is not allowed in a query (O)");
    expect_refused(e, "RESET lock_configuration", "sql: RESET is not allowed in a query (O)");
    snprintf(q, sizeof q, "COPY (SELECT 1) TO '%s'", in); /* an allowed path: still no COPY */
    expect_refused(e, q, "sql: COPY is not allowed in a query (W)");
    expect_refused(e, "COPY (SELECT 1) TO '/tmp/silt-never'", "sql: COPY is not allowed in a query (W)");
    expect_refused(e, "ATTACH ':memory:' AS m", "sql: ATTACH is not allowed in a query (O)");
    expect_refused(e, "INSTALL httpfs", "sql: INSTALL is not allowed in a query (O)");
    expect_refused(e, "LOAD httpfs", "sql: LOAD is not allowed in a query (O)");
    expect_refused(e, "CREATE TABLE t AS SELECT 1", "sql: CREATE is not allowed in a query (O)");
    expect_refused(e, "CALL pragma_version()", "sql: CALL is not allowed in a query (O)");
    expect_refused(e, "PRAGMA enable_profiling", "sql: PRAGMA is not allowed in a query (O)");
    expect_refused(e, "EXPORT DATABASE '/tmp/silt-never'", "sql: EXPORT is not allowed in a query (W)");
    expect_refused(e, "EXPLAIN CREATE TABLE t (a INT)",
                   "sql: EXPLAIN is only allowed as EXPLAIN [ANALYZE] SELECT … (O)");
    expect_refused(e, "EXPLAIN ANALYZE COPY (SELECT 1) TO '/tmp/silt-never'",
                   "sql: COPY is not allowed in a query (W)");
    assert_false(silt_fs_exists("/tmp/silt-never"));
    /* EXPLAIN [ANALYZE] of a query runs */
    t = run_query(e, "EXPLAIN ANALYZE SELECT x FROM v", &rc);
    assert_int_equal(rc, 0);
    assert_true(strncmp(t, "explain_key,explain_value\nanalyzed_plan,", 40) == 0);
    free(t);
    /* silt's own statements cannot turn it back either */
    assert_int_equal(silt_engine_exec(e, "SET enable_external_access = true"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "Invalid Input Error: Cannot change configuration option "
                                           "\"enable_external_access\" - the configuration has been locked");
    /* no file can be added, no second confinement */
    assert_int_equal(silt_engine_allow_file(e, other), SILT_EINTERNAL);
    assert_int_equal(silt_engine_confine(e, NULL), SILT_EINTERNAL);
    silt_engine_free(e);
}

static void test_confine_dirs_and_user_relations(void **state)
{
    (void)state;
    char dir[4096], out[4200];
    snprintf(dir, sizeof dir, "%s/scratch", g_dir);
    assert_int_equal(silt_fs_mkdirs(dir), 0);
    snprintf(out, sizeof out, "%s/out.parquet", dir);
    silt_engine *e = NULL;
    assert_int_equal(silt_engine_open(&e, NULL), 0);
    assert_int_equal(silt_engine_exec(e, "CREATE TEMP TABLE input AS SELECT * FROM range(3) t(i)"), 0);
    /* not confined: any single statement is accepted */
    assert_int_equal(silt_engine_check_query(e, "CREATE TABLE x (a INT)", "q"), 0);
    assert_int_equal(silt_engine_check_query(e, "SELECT 1; SELECT 2", "q"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "q: only one statement is allowed (got 2)");
    const char *dirs[] = {dir};
    silt_confine_opts co = {.dirs = dirs, .n_dirs = 1, .hint_other = "one SELECT"};
    assert_int_equal(silt_engine_confine(e, &co), 0);
    /* user relations: views and tables from one checked query each */
    assert_int_equal(silt_engine_create_from_query(e, "doubled", false, "SELECT i * 2 AS d FROM input", "q 'a'"),
                     0);
    assert_int_equal(silt_engine_create_from_query(e, "res", true,
                                                   "SELECT CAST(sum(d) AS BIGINT) AS s FROM doubled -- end", "q"),
                     0);
    uint64_t sum = 0;
    assert_int_equal(silt_engine_query_u64(e, &sum, "SELECT s FROM res"), 0);
    assert_int_equal(sum, 6);
    assert_int_equal(silt_engine_create_from_query(e, "bad", true, "SELECT 1; DROP TABLE res", "q"),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "q: only one statement is allowed (got 2)");
    assert_int_equal(silt_engine_create_from_query(e, "bad", false, "DROP TABLE res", "q 'b'"),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "q 'b': DROP is not allowed in a query (one SELECT)");
    assert_int_equal(silt_engine_create_from_query(e, "bad", true, "", "q"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "q: no statement");
    assert_int_equal(silt_engine_check_query(e, "SELECT * FROM read_text('/etc/passwd')", "q"),
                     SILT_EINVAL);
    assert_string_equal(silt_error_last(), "q: reading files is not allowed: Cannot access file "
                                           "\"/etc/passwd\" - file system operations are disabled by "
                                           "configuration");
    /* silt's own writes into the allowed directory work, and read back */
    assert_int_equal(silt_engine_execf(e, "COPY res TO '%s' (FORMAT parquet)", out), 0);
    assert_int_equal(
        silt_engine_execf(e, "CREATE TEMP TABLE back AS SELECT * FROM read_parquet('%s')", out), 0);
    assert_int_equal(silt_engine_query_u64(e, &sum, "SELECT s FROM back"), 0);
    assert_int_equal(sum, 6);
    /* outside it, not even silt's own statements */
    assert_int_equal(silt_engine_execf(e, "COPY res TO '%s/escaped.parquet' (FORMAT parquet)", g_dir),
                     SILT_EINVAL);
    char path[4200];
    snprintf(path, sizeof path, "%s/escaped.parquet", g_dir);
    assert_false(silt_fs_exists(path));
    silt_engine_free(e);
}

static void test_sql_unsafe_file_access(void **state)
{
    (void)state;
    char csv[4096];
    snprintf(csv, sizeof csv, "%s/local.csv", g_dir);
    assert_int_equal(tu_write_file(csv, "a,b\n1,x\n", 8), 0);
    char q[4200];
    snprintf(q, sizeof q, "SELECT * FROM read_csv('%s')", csv);
    char msg[4500];
    snprintf(msg, sizeof msg,
             "sql: reading files is not allowed: Cannot access file \"%s\" - file system operations are "
             "disabled by configuration (query datasets by name, or use --unsafe-file-access)",
             csv);
    expect_sql_error(q, "csv", SILT_EINVAL, msg);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    silt_sql_opts o = {.format = "csv", .out = f, .unsafe_file_access = true};
    assert_int_equal(silt_sql(g_ws, q, &o), 0);
    fclose(f);
    assert_string_equal(text, "a,b\n1,x\n");
    free(text);
    /* the Parquet output file is the one file a confined query writes */
    char out[4200];
    snprintf(out, sizeof out, "%s/conf.parquet", g_dir);
    silt_sql_opts op = {.format = "parquet", .output = out};
    assert_int_equal(silt_sql(g_ws, "SELECT count(*) AS n FROM pop", &op), 0);
    assert_true(silt_fs_exists(out));
    assert_int_equal(silt_sql(g_ws, "SELECT count(*) AS n FROM pop", &op), 0); /* over an existing file */
    expect_sql_error("COPY pop TO 'x.csv'", "csv", SILT_EINVAL,
                     "sql: COPY is not allowed in a query (use --format/--output to write results, or "
                     "--unsafe-file-access)");
}

/* ---- the Arrow C stream (silt_query_arrow, silt_dataset_read_arrow) ---------------- */

static int64_t i64_at(const struct ArrowArray *a, int64_t i) { return ((const int64_t *)a->buffers[1])[a->offset + i]; }

static void utf8_at(const struct ArrowArray *a, int64_t i, char *out, size_t cap)
{
    const int32_t *off = a->buffers[1];
    const char *data = a->buffers[2];
    int32_t b = off[a->offset + i], e = off[a->offset + i + 1];
    snprintf(out, cap, "%.*s", (int)(e - b), data + b);
}

static void test_query_arrow(void **state)
{
    (void)state;
    struct ArrowArrayStream st;
    assert_int_equal(silt_query_arrow(&st, g_ws, "SELECT city, population FROM pop WHERE op = 0 ORDER BY \"offset\"", NULL),
                     0);
    assert_null(st.get_last_error(&st));
    struct ArrowSchema sc;
    assert_int_equal(st.get_schema(&st, &sc), 0);
    assert_string_equal(sc.format, "+s");
    assert_int_equal(sc.n_children, 2);
    assert_string_equal(sc.children[0]->name, "city");
    assert_string_equal(sc.children[0]->format, "u");
    assert_string_equal(sc.children[1]->name, "population");
    assert_string_equal(sc.children[1]->format, "l");
    sc.release(&sc);
    struct ArrowArray b;
    assert_int_equal(st.get_next(&st, &b), 0);
    assert_non_null(b.release);
    assert_int_equal(b.length, 5); /* A, B, C, D, E appended (op 0) */
    assert_int_equal(b.n_children, 2);
    st.release(&st); /* the stream first: the batch stays valid until its own release */
    assert_null(st.release);
    static const char *const cities[] = {"A", "B", "C", "D", "E"};
    static const int64_t pops[] = {100, 200, 300, 400, 500};
    for (int64_t i = 0; i < 5; i++) {
        char c[8];
        utf8_at(b.children[0], i, c, sizeof c);
        assert_string_equal(c, cities[i]);
        assert_int_equal(i64_at(b.children[1], i), pops[i]);
    }
    b.release(&b);
}

static void test_query_arrow_end_and_errors(void **state)
{
    (void)state;
    struct ArrowArrayStream st;
    assert_int_equal(silt_query_arrow(&st, g_ws, "SELECT range AS i FROM range(5000)", NULL), 0);
    int64_t rows = 0, batches = 0, sum = 0;
    for (;;) {
        struct ArrowArray b;
        assert_int_equal(st.get_next(&st, &b), 0);
        if (!b.release)
            break;
        batches++;
        rows += b.length;
        for (int64_t i = 0; i < b.length; i++)
            sum += i64_at(b.children[0], i);
        b.release(&b);
    }
    assert_int_equal(rows, 5000);
    assert_int_equal(batches, 3); /* 2048 + 2048 + 904 */
    assert_int_equal(sum, 12497500);
    struct ArrowArray again; /* after the end: the end again */
    assert_int_equal(st.get_next(&st, &again), 0);
    assert_null(again.release);
    st.release(&st);

    st.release = (void (*)(struct ArrowArrayStream *))1; /* zeroed on an error */
    assert_int_equal(silt_query_arrow(&st, g_ws, "EXPLAIN SELECT 1", NULL), SILT_EINVAL);
    assert_null(st.release);
    assert_int_equal(silt_query_arrow(&st, g_ws, "SELECT * FROM pop; SELECT 1", NULL), SILT_EINVAL);
    assert_null(st.release);
    assert_int_equal(silt_query_arrow(&st, g_ws, "SELECT nope FROM pop", NULL), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "nope"));
    assert_null(st.release);
    /* an error while reading: get_next fails with EIO and the message */
    assert_int_equal(silt_query_arrow(&st, g_ws, "SELECT CASE WHEN range = 900000 THEN error('late') ELSE range END AS v "
                                                 "FROM range(1000000)", NULL), 0);
    int err = 0;
    int64_t before = 0;
    for (int k = 0; k < 1000 && !err; k++) { /* the engine computes ahead, but not a million rows */
        struct ArrowArray b;
        err = st.get_next(&st, &b);
        if (!err && b.release) {
            before += b.length;
            b.release(&b);
        }
    }
    assert_int_equal(err, EIO);
    assert_true(before > 0 && before <= 900000);
    assert_string_equal(st.get_last_error(&st), "sql: Invalid Input Error: late");
    st.release(&st);
}

static void test_dataset_read_arrow(void **state)
{
    (void)state;
    struct ArrowArrayStream st;
    int64_t counts[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(silt_dataset_read_arrow(&st, g_ws, "pop", k == 0 ? g_blocks[0] : NULL), 0);
        struct ArrowSchema sc;
        assert_int_equal(st.get_schema(&st, &sc), 0);
        assert_string_equal(sc.children[0]->name, "offset");
        assert_string_equal(sc.children[0]->format, "L");
        sc.release(&sc);
        for (;;) {
            struct ArrowArray b;
            assert_int_equal(st.get_next(&st, &b), 0);
            if (!b.release)
                break;
            for (int64_t i = 0; i < b.length; i++) /* offset order */
                assert_int_equal(((const uint64_t *)b.children[0]->buffers[1])[i], (uint64_t)(counts[k] + i));
            counts[k] += b.length;
            b.release(&b);
        }
        st.release(&st);
    }
    assert_int_equal(counts[0], 3); /* as of the first AddData */
    assert_int_equal(counts[1], 9);
    assert_int_equal(silt_dataset_read_arrow(&st, g_ws, "nosuch", NULL), SILT_EINVAL);
    assert_null(st.release);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_view_csv),
        cmocka_unit_test(test_current_state),
        cmocka_unit_test(test_current_state_duplicates),
        cmocka_unit_test(test_formats),
        cmocka_unit_test(test_parquet_output),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_as_of),
        cmocka_unit_test(test_branch_and_dotted_name),
        cmocka_unit_test(test_tail),
        cmocka_unit_test(test_schema_get),
        cmocka_unit_test(test_vocab),
        cmocka_unit_test(test_confine_reads_only_view_files),
        cmocka_unit_test(test_confine_dirs_and_user_relations),
        cmocka_unit_test(test_sql_unsafe_file_access),
        cmocka_unit_test(test_query_arrow),
        cmocka_unit_test(test_query_arrow_end_and_errors),
        cmocka_unit_test(test_dataset_read_arrow),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
