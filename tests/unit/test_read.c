/* test_read.c — unit tests for src/engine/read.{h,c} and read_shp.c: every
 * ReadStep format and option, schema coercion, and each error class with its
 * exact message. Shapefiles are generated here with shapelib's writer API and
 * zipped with libarchive, so no binary fixtures are committed. */
#include "testutil.h"

#include <archive.h>
#include <archive_entry.h>
#include <shapefil.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/read.h"
#include "engine/schema.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

static silt_engine *E;
static char *TMP;
static silt_arena *A;

static int setup(void **state)
{
    (void)state;
    TMP = tu_mkdtemp();
    A = silt_arena_new();
    silt_engine_opts o = {.threads = 2};
    return TMP && A && silt_engine_open(&E, &o) == 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    silt_engine_free(E);
    silt_arena_free(A);
    tu_rmrf(TMP);
    free(TMP);
    return 0;
}

/* ------------------------------------------------------------------ helpers */

/* Writes `n` bytes (strlen when n == 0) to TMP/name; returns a path that stays
 * valid for the test run (arena). */
static const char *W(const char *name, const char *data, size_t n)
{
    char *p = silt_arena_printf(A, "%s/%s", TMP, name);
    assert_non_null(p);
    assert_int_equal(tu_write_file(p, data, n ? n : strlen(data)), 0);
    return p;
}

static const char *TP(const char *name) { return silt_arena_printf(A, "%s/%s", TMP, name); }

static int dump_row(void *ctx, size_t ncols, const char *const *names, const char *const *vals)
{
    silt_buf *b = ctx;
    for (size_t i = 0; i < ncols; i++)
        silt_buf_printf(b, "%s%s", i ? "|" : "", vals[i] ? vals[i] : "NULL");
    silt_buf_putc(b, '\n');
    return 0;
}

/* All rows of `t` in rowid order as "a|b\n…" (values cast to VARCHAR). */
static char *dump(const char *t)
{
    silt_buf b = SILT_BUF_INIT, q = SILT_BUF_INIT;
    silt_buf_printf(&q, "SELECT COLUMNS(*)::VARCHAR FROM \"%s\" ORDER BY rowid", t);
    int rc = silt_engine_query_rows(E, q.data, dump_row, &b);
    if (rc)
        fprintf(stderr, "dump: %s\n", silt_error_last());
    assert_int_equal(rc, 0);
    silt_buf_free(&q);
    char *s = silt_arena_strdup(A, b.data ? b.data : "");
    silt_buf_free(&b);
    return s;
}

/* "name TYPE, …" of table `t`. */
static char *types(const char *t)
{
    char *s = NULL, q[256];
    snprintf(q, sizeof q, "SELECT string_agg(name || ' ' || type, ', ' ORDER BY cid) FROM pragma_table_info('%s')", t);
    assert_int_equal(silt_engine_query_text(E, &s, q), 0);
    char *r = silt_arena_strdup(A, s ? s : "");
    free(s);
    return r;
}

static bool table_exists(const char *t)
{
    uint64_t n = 99;
    char q[256];
    snprintf(q, sizeof q, "SELECT count(*) FROM duckdb_tables() WHERE table_name = '%s'", t);
    assert_int_equal(silt_engine_query_u64(E, &n, q), 0);
    return n > 0;
}

static uint64_t count_tables(void)
{
    uint64_t n = 0;
    assert_int_equal(silt_engine_query_u64(E, &n, "SELECT count(*) FROM duckdb_tables()"), 0);
    return n;
}

static odf_union step(uint8_t type, void *v)
{
    odf_union u = {type, v};
    return u;
}

static int read1(uint8_t type, void *v, const char *path, const char *table)
{
    odf_union u = step(type, v);
    const char *files[] = {path};
    int rc = silt_read_files(E, &u, files, NULL, 1, table);
    if (rc)
        fprintf(stderr, "read1: %s\n", silt_error_last());
    return rc;
}

/* read1 that must fail with `code` and exactly `msg`; checks no table left. */
static void read_fails(uint8_t type, void *v, const char *path, const char *display, int code, const char *msg)
{
    odf_union u = step(type, v);
    const char *files[] = {path};
    const char *names[] = {display};
    uint64_t before = count_tables();
    int rc = silt_read_files(E, &u, files, display ? names : NULL, 1, "bad");
    if (rc != code || strcmp(silt_error_last(), msg))
        fprintf(stderr, "got %d '%s'\nwant %d '%s'\n", rc, silt_error_last(), code, msg);
    assert_int_equal(rc, code);
    assert_string_equal(silt_error_last(), msg);
    assert_false(table_exists("bad"));
    assert_int_equal(count_tables(), before);
}

static odf_strvec ddl(size_t n, const char **items)
{
    odf_strvec v = {(char **)items, n, true};
    return v;
}

/* -------------------------------------------------------------------- CSV */

static void test_csv_defaults(void **state)
{
    (void)state;
    odf_ReadStepCsv c = {0};
    /* no header: Spark names, everything VARCHAR, "" is NULL, ODF escape '\' */
    const char *p = W("d.csv", "A,1000\n\"B, \\\"b\\\"\",\n\"multi\nline\",3\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
    assert_string_equal(types("t"), "_c0 VARCHAR, _c1 VARCHAR");
    assert_string_equal(dump("t"), "A|1000\nB, \"b\"|NULL\nmulti\nline|3\n");
}

static void test_csv_header_infer(void **state)
{
    (void)state;
    odf_ReadStepCsv c = {.has_header = true, .header = true, .has_infer_schema = true, .infer_schema = true};
    const char *p = W("i.csv",
                      "i,d,b,day,ts,s,e,n\r\n"
                      "1,1.5,true,2020-01-02,2020-01-02 03:04:05,x,,007\r\n"
                      "-2,2,FALSE,2020-01-03,2020-01-02T03:04:05+02:00,y,,1e3\r\n",
                      0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
    assert_string_equal(types("t"), "i BIGINT, d DOUBLE, b BOOLEAN, day DATE, ts TIMESTAMP, s VARCHAR, e VARCHAR, "
                                    "n DOUBLE");
    assert_string_equal(dump("t"), "1|1.5|true|2020-01-02|2020-01-02 03:04:05|x|NULL|7.0\n"
                                   "-2|2.0|false|2020-01-03|2020-01-02 01:04:05|y|NULL|1000.0\n");

    /* header without inference: VARCHAR; empty and duplicate names */
    odf_ReadStepCsv h = {.has_header = true, .header = true};
    p = W("h.csv", "a,,A,b\n1,2,3,4\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &h, p, "t"), 0);
    assert_string_equal(types("t"), "a VARCHAR, _c1 VARCHAR, A2 VARCHAR, b VARCHAR");
    assert_string_equal(dump("t"), "1|2|3|4\n");

    /* header only: zero rows */
    p = W("ho.csv", "x,y\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &h, p, "t"), 0);
    assert_string_equal(types("t"), "x VARCHAR, y VARCHAR");
    assert_string_equal(dump("t"), "");
}

static void test_csv_dialect(void **state)
{
    (void)state;
    /* separator, custom quote and escape, nullValue */
    odf_ReadStepCsv c = {.separator = ";", .quote = "'", .escape = "#", .null_value = "NA"};
    const char *p = W("s.csv", "'a;b';'it#'s'\nNA;''\n\"x\";y\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
    assert_string_equal(dump("t"), "a;b|it's\nNULL|\n\"x\"|y\n"); /* '' is an empty string */

    /* quote "" turns quoting off; tab separator */
    odf_ReadStepCsv nq = {.separator = "\t", .quote = ""};
    p = W("nq.tsv", "\"a\t\"b\"\n1\t\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &nq, p, "t"), 0);
    assert_string_equal(dump("t"), "\"a|\"b\"\n1|NULL\n");

    /* RFC 4180 doubling with escape = quote */
    odf_ReadStepCsv rfc = {.escape = "\""};
    p = W("rfc.csv", "\"say \"\"hi\"\"\",2\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &rfc, p, "t"), 0);
    assert_string_equal(dump("t"), "say \"hi\"|2\n");
}

static void test_csv_encodings(void **state)
{
    (void)state;
    odf_ReadStepCsv l1 = {.has_header = true, .header = true, .separator = ";", .encoding = "latin1"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &l1, tu_fixture("read/latin1.csv"), "t"), 0);
    assert_string_equal(dump("t"), "café|München\n");
    odf_ReadStepCsv iso = {.encoding = "ISO-8859-1"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &iso, W("iso.csv", "\xe9t\xe9\n", 0), "t"), 0);
    assert_string_equal(dump("t"), "été\n");
    odf_ReadStepCsv w = {.encoding = "windows-1252"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &w, W("w.csv", "\x80 5,\x93q\x94\n", 0), "t"), 0);
    assert_string_equal(dump("t"), "€ 5|“q”\n");
    odf_ReadStepCsv u16 = {.encoding = "utf-16", .has_header = true, .header = true};
    static const char u16le[] = "\xff\xfe" "a\0,\0b\0\n\0\xe9\0,\0" "1\0\n\0";
    assert_int_equal(read1(ODF_ReadStep_Csv, &u16, W("u16.csv", u16le, sizeof u16le - 1), "t"), 0);
    assert_string_equal(types("t"), "a VARCHAR, b VARCHAR");
    assert_string_equal(dump("t"), "é|1\n");
    odf_ReadStepCsv u8 = {.encoding = "UTF-8"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &u8, W("bom.csv", "\xef\xbb\xbfx,y\n", 0), "t"), 0);
    assert_string_equal(dump("t"), "x|y\n");

    /* transcoding streams in chunks: a file larger than the buffers */
    silt_buf big = SILT_BUF_INIT;
    for (int i = 0; i < 30000; i++)
        silt_buf_printf(&big, "\xe9\xe8,%d\n", i);
    odf_ReadStepCsv l1b = {.encoding = "latin1"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &l1b, W("big.csv", big.data, big.len), "t"), 0);
    silt_buf_free(&big);
    char *agg = NULL;
    assert_int_equal(silt_engine_query_text(E, &agg, "SELECT count(*) || ' ' || count(DISTINCT _c0) || ' ' || "
                                                     "max(_c0) || ' ' || max(_c1::INT) FROM t"), 0);
    assert_string_equal(agg, "30000 1 éè 29999");
    free(agg);

    /* errors: undecodable bytes, unknown encoding, invalid UTF-8 without encoding */
    odf_ReadStepCsv bad16 = {.encoding = "utf-16le"};
    read_fails(ODF_ReadStep_Csv, &bad16, W("odd.csv", "a\0b", 3), "odd.csv", SILT_EINVAL,
               "odd.csv: invalid UTF-16LE byte sequence at byte offset 2");
    odf_ReadStepCsv unk = {.encoding = "klingon-8"};
    read_fails(ODF_ReadStep_Csv, &unk, tu_fixture("read/cities.csv"), NULL, SILT_EUNSUPPORTED,
               "Csv.encoding: unsupported encoding 'klingon-8'");
    odf_ReadStepCsv plain = {0};
    read_fails(ODF_ReadStep_Csv, &plain, W("l1.csv", "ok\ncaf\xe9\n", 0), "l1.csv", SILT_EINVAL,
               "l1.csv: line 2: invalid UTF-8 (set the encoding option)");
}

static void test_csv_schema(void **state)
{
    (void)state;
    const char *cols[] = {"city STRING", "population BIGINT", "area DECIMAL(6,2)"};
    odf_ReadStepCsv c = {.has_header = true, .header = true, .ddl_schema = ddl(3, cols)};
    const char *p = W("ok.csv", "City,Pop,Area\nVancouver, 2581000 ,114.97\nSeattle,,217\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
    assert_string_equal(types("t"), "city VARCHAR, population BIGINT, area DECIMAL(6,2)");
    assert_string_equal(dump("t"), "Vancouver|2581000|114.97\nSeattle|NULL|217.00\n");

    /* the first value that does not convert: file, row, line, column */
    read_fails(ODF_ReadStep_Csv, &c, tu_fixture("read/cities.csv"), "data.csv", SILT_EINVAL,
               "data.csv: row 3 (line 4), column 'population': cannot convert 'n/a' to BIGINT");
    /* lines count multi-line quoted values and skipped empty lines */
    p = W("ml.csv", "h1,h2,h3\n\"a\nb\",1,2\n\nc,2,3\nd,x,4\n", 0);
    read_fails(ODF_ReadStep_Csv, &c, p, NULL, SILT_EINVAL,
               silt_arena_printf(A, "%s: row 3 (line 6), column 'population': cannot convert 'x' to BIGINT", p));
    /* field count must match the schema */
    read_fails(ODF_ReadStep_Csv, &c, W("n.csv", "a,b\n", 0), "n.csv", SILT_EINVAL,
               "n.csv: line 1: expected 3 fields (as in the schema), found 2");

    /* DataSchema (preferred over ddlSchema), no header, Date/Timestamp */
    odf_DataSchema *s = NULL;
    const char *sc[] = {"d DATE", "ts TIMESTAMP", "ok BOOLEAN", "v DOUBLE"};
    odf_strvec sv = ddl(4, sc);
    assert_int_equal(silt_schema_from_ddl(A, &sv, &s), 0);
    odf_ReadStepCsv c2 = {.schema = s};
    p = W("dt.csv", "2020-01-02,2020-01-02T03:04:05.123Z,true,1e-3\n2021-12-31,2021-01-01 00:00:00,F,-0\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c2, p, "t"), 0);
    assert_string_equal(types("t"), "d DATE, ts TIMESTAMP_MS, ok BOOLEAN, v DOUBLE");
    assert_string_equal(dump("t"), "2020-01-02|2020-01-02 03:04:05.123|true|0.001\n"
                                   "2021-12-31|2021-01-01 00:00:00|false|-0.0\n");
    p = W("dt2.csv", "2020-01-02,2020-01-02,true,1\n2020-13-01,2020-01-02,true,1\n", 0);
    read_fails(ODF_ReadStep_Csv, &c2, p, "dt2.csv", SILT_EINVAL,
               "dt2.csv: row 2 (line 2), column 'd': cannot convert '2020-13-01' to DATE");
}

static void test_csv_date_formats(void **state)
{
    (void)state;
    const char *sc[] = {"d DATE", "ts TIMESTAMP"};
    odf_ReadStepCsv j = {.ddl_schema = ddl(2, sc), .date_format = "dd/MM/yyyy", .timestamp_format = "yyyy-MM-dd'T'HH:mm:ss.SSS"};
    const char *p = W("f.csv", "02/01/2020,2020-01-02T03:04:05.678\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &j, p, "t"), 0);
    assert_string_equal(dump("t"), "2020-01-02|2020-01-02 03:04:05.678\n");
    odf_ReadStepCsv st = {.ddl_schema = ddl(2, sc), .date_format = "%Y%m%d", .timestamp_format = "%d.%m.%Y %H:%M %z"};
    p = W("g.csv", "20200102,02.01.2020 03:04 +0100\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &st, p, "t"), 0);
    assert_string_equal(dump("t"), "2020-01-02|2020-01-02 02:04:00\n");
    read_fails(ODF_ReadStep_Csv, &j, W("h.csv", "2020-01-02,2020-01-02T03:04:05.678\n", 0), "h.csv", SILT_EINVAL,
               "h.csv: row 1 (line 1), column 'd': cannot convert '2020-01-02' to DATE");
    /* inferSchema honours the formats */
    odf_ReadStepCsv inf = {.has_infer_schema = true, .infer_schema = true, .date_format = "MM/dd/yy"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &inf, W("k.csv", "12/31/99,x\n", 0), "t"), 0);
    assert_string_equal(types("t"), "_c0 DATE, _c1 VARCHAR");
    assert_string_equal(dump("t"), "1999-12-31|x\n");

    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_read_translate_datefmt(&b, "EEE, d MMM yyyy HH:mm:ss Z", "x"), 0);
    assert_string_equal(b.data, "%a, %-d %b %Y %H:%M:%S %z");
    silt_buf_clear(&b);
    assert_int_equal(silt_read_translate_datefmt(&b, "yy-M-d h:m:s a 'o''clock'", "x"), 0);
    assert_string_equal(b.data, "%y-%-m-%-d %-I:%-M:%-S %p o'clock");
    silt_buf_clear(&b);
    assert_int_equal(silt_read_translate_datefmt(&b, "rfc3339", "x"), 0);
    assert_int_equal(b.len, 0);
    assert_int_equal(silt_read_translate_datefmt(&b, "yyyy-QQ", "Csv.dateFormat"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "Csv.dateFormat 'yyyy-QQ': unsupported pattern letter 'Q'");
    assert_int_equal(silt_read_translate_datefmt(&b, "%Y-%Q", "Csv.dateFormat"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "Csv.dateFormat '%Y-%Q': unsupported specifier '%Q'");
    assert_int_equal(silt_read_translate_datefmt(&b, "yyyy 'T", "Csv.timestampFormat"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "Csv.timestampFormat 'yyyy 'T': unterminated quoted literal");
    silt_buf_free(&b);
}

static void test_csv_errors(void **state)
{
    (void)state;
    odf_ReadStepCsv c = {0};
    read_fails(ODF_ReadStep_Csv, &c, W("r.csv", "a,b\n1,2\n3\n", 0), "r.csv", SILT_EINVAL,
               "r.csv: line 3: expected 2 fields, found 1");
    read_fails(ODF_ReadStep_Csv, &c, W("r2.csv", "a,b\n1,2,3\n", 0), "r2.csv", SILT_EINVAL,
               "r2.csv: line 2: expected 2 fields, found 3");
    read_fails(ODF_ReadStep_Csv, &c, W("q.csv", "a,b\n\"x\"\"y\",1\n", 0), "q.csv", SILT_EINVAL,
               "q.csv: line 2: unterminated quoted value or stray quote character");
    read_fails(ODF_ReadStep_Csv, &c, W("e.csv", "", 0), "e.csv", SILT_EINVAL, "e.csv: file is empty");
    read_fails(ODF_ReadStep_Csv, &c, W("e2.csv", "\n\r\n", 0), "-", SILT_EINVAL, "-: file is empty");
    read_fails(ODF_ReadStep_Csv, &c, TP("missing.csv"), "missing.csv", SILT_ENOTFOUND,
               "missing.csv: No such file or directory");
    read_fails(ODF_ReadStep_Csv, &c, TMP, "dir", SILT_EINVAL, "dir: is a directory, not a file");

    /* invalid options are rejected before any file is touched */
    const char *f = tu_fixture("read/cities.csv");
    odf_ReadStepCsv o1 = {.separator = ";;"};
    read_fails(ODF_ReadStep_Csv, &o1, f, NULL, SILT_EINVAL, "Csv.separator must be a single character, got ';;'");
    odf_ReadStepCsv o2 = {.separator = ""};
    read_fails(ODF_ReadStep_Csv, &o2, f, NULL, SILT_EINVAL, "Csv.separator must be a single character, got ''");
    odf_ReadStepCsv o3 = {.quote = "\n"};
    read_fails(ODF_ReadStep_Csv, &o3, f, NULL, SILT_EINVAL,
               "Csv.quote must be a single ASCII character other than a line break, got '\\x0a'");
    odf_ReadStepCsv o4 = {.escape = "\xc3\xa9"};
    read_fails(ODF_ReadStep_Csv, &o4, f, NULL, SILT_EINVAL, "Csv.escape must be a single character, got '\xc3\xa9'");
    odf_ReadStepCsv o5 = {.separator = "'", .quote = "'"};
    read_fails(ODF_ReadStep_Csv, &o5, f, NULL, SILT_EINVAL, "Csv.separator and Csv.quote must differ, both are '''");
    odf_ReadStepCsv o6 = {.null_value = "a\nb"};
    read_fails(ODF_ReadStep_Csv, &o6, f, NULL, SILT_EINVAL, "Csv.nullValue must not contain a line break, got 'a\\x0ab'");
    odf_ReadStepCsv o7 = {.encoding = "utf8'; DROP TABLE x; --"};
    read_fails(ODF_ReadStep_Csv, &o7, f, NULL, SILT_EINVAL, "Csv.encoding: invalid encoding 'utf8'; DROP TABLE x; --'");
    odf_ReadStepCsv o8 = {.timestamp_format = ""};
    read_fails(ODF_ReadStep_Csv, &o8, f, NULL, SILT_EINVAL, "Csv.timestampFormat must not be empty");
    const char *bad_ddl[] = {"a BLARG"};
    odf_ReadStepCsv o9 = {.ddl_schema = ddl(1, bad_ddl)};
    read_fails(ODF_ReadStep_Csv, &o9, f, NULL, SILT_EINVAL, "ddlSchema[0] 'a BLARG': unknown type 'BLARG'");
    /* values with quotes reach DuckDB safely */
    odf_ReadStepCsv o11 = {.separator = ";", .null_value = "a;b"};
    read_fails(ODF_ReadStep_Csv, &o11, f, NULL, SILT_EINVAL, "Csv.nullValue must not contain the separator character ';'");
    odf_ReadStepCsv o12 = {.null_value = "\\N"};
    read_fails(ODF_ReadStep_Csv, &o12, f, NULL, SILT_EINVAL, "Csv.nullValue must not contain the escape character '\\'");
    odf_ReadStepCsv o13 = {.null_value = "\\N", .escape = ""};
    assert_int_equal(read1(ODF_ReadStep_Csv, &o13, W("bn.csv", "\\N,1\n", 0), "t"), 0);
    assert_string_equal(dump("t"), "NULL|1\n");
    odf_ReadStepCsv o10 = {.separator = ";", .null_value = "x' OR '1'='1"};
    assert_int_equal(read1(ODF_ReadStep_Csv, &o10, W("sq.csv", "a;x' OR '1'='1\n", 0), "t"), 0);
    assert_string_equal(dump("t"), "a|NULL\n");
}

/* ------------------------------------------------------------------- JSON */

static void test_json(void **state)
{
    (void)state;
    odf_ReadStepJson j = {.sub_path = "data.rows"};
    assert_int_equal(read1(ODF_ReadStep_Json, &j, tu_fixture("read/nested.json"), "t"), 0);
    assert_string_equal(types("t"), "id BIGINT, name VARCHAR, tags VARCHAR[], score DOUBLE, ok BOOLEAN");
    assert_string_equal(dump("t"), "1|A|[x, y]|0.5|true\n2|B|[]|100.0|false\n");

    odf_ReadStepJson root = {0};
    assert_int_equal(read1(ODF_ReadStep_Json, &root, W("r.json", " [{\"a\": 1, \"b\": null}, {\"b\": \"x\", \"a\": 2}]", 0), "t"), 0);
    assert_string_equal(types("t"), "a BIGINT, b VARCHAR");
    assert_string_equal(dump("t"), "1|NULL\n2|x\n");

    /* schema: by name, missing keys are NULL, extra keys dropped */
    const char *sc[] = {"b STRING", "a INT", "c DATE"};
    odf_ReadStepJson js = {.ddl_schema = ddl(3, sc), .date_format = "yyyy/MM/dd"};
    assert_int_equal(read1(ODF_ReadStep_Json, &js, W("s.json", "[{\"a\": 1, \"z\": 0, \"c\": \"2020/01/02\"}, {\"b\": 5}]", 0), "t"), 0);
    assert_string_equal(types("t"), "b VARCHAR, a INTEGER, c DATE");
    assert_string_equal(dump("t"), "NULL|1|2020-01-02\n5|NULL|NULL\n");
    read_fails(ODF_ReadStep_Json, &js, W("s2.json", "[{\"a\": 1}, {\"a\": 2.5}, {\"a\": \"x\"}]", 0), "s2.json",
               SILT_EINVAL, "s2.json: row 3, column 'a': cannot convert 'x' to INTEGER");
    /* empty array with a schema: zero rows, typed */
    assert_int_equal(read1(ODF_ReadStep_Json, &js, W("e.json", "[]", 0), "t"), 0);
    assert_string_equal(types("t"), "b VARCHAR, a INTEGER, c DATE");
    assert_string_equal(dump("t"), "");
    /* encoding */
    odf_ReadStepJson l1 = {.encoding = "latin1"};
    assert_int_equal(read1(ODF_ReadStep_Json, &l1, W("l1.json", "[{\"n\": \"\xe9\"}]", 0), "t"), 0);
    assert_string_equal(dump("t"), "é\n");

    read_fails(ODF_ReadStep_Json, &root, W("bad.json", "[{\"a\": 1},\n {\"a\": }]", 0), "bad.json", SILT_EINVAL,
               "bad.json: invalid JSON at line 2, column 8: unexpected token near '}'");
    read_fails(ODF_ReadStep_Json, &root, W("e2.json", "  \n", 0), "e2.json", SILT_EINVAL, "e2.json: file is empty");
    read_fails(ODF_ReadStep_Json, &root, W("e3.json", "[]", 0), "e3.json", SILT_EINVAL,
               "e3.json: no records to read and no schema to define the columns");
    read_fails(ODF_ReadStep_Json, &root, W("o.json", "{\"a\": []}", 0), "o.json", SILT_EINVAL,
               "o.json: expected an array of objects at the root, got an object (set subPath?)");
    read_fails(ODF_ReadStep_Json, &root, W("n.json", "[{\"a\": 1}, 2]", 0), "n.json", SILT_EINVAL,
               "n.json: record 2 is a number, not an object");
    read_fails(ODF_ReadStep_Json, &j, W("m.json", "{\"data\": {\"row\": []}}", 0), "m.json", SILT_EINVAL,
               "m.json: subPath 'data.rows' not found");
    read_fails(ODF_ReadStep_Json, &j, W("m2.json", "{\"data\": {\"rows\": {}}}", 0), "m2.json", SILT_EINVAL,
               "m2.json: subPath 'data.rows' is an object, not an array of objects");
    read_fails(ODF_ReadStep_Json, &j, W("m3.json", "{\"data\": 5}", 0), "m3.json", SILT_EINVAL,
               "m3.json: subPath 'data.rows' not found (data.rows is not inside an object)");
    read_fails(ODF_ReadStep_Json, &root, tu_fixture("read/cities.csv"), "cities.csv", SILT_EINVAL,
               "cities.csv: invalid JSON at line 1, column 4: invalid token near 'city'");
}

static void test_ndjson(void **state)
{
    (void)state;
    odf_ReadStepNdJson n = {0};
    const char *p = W("a.ndjson", "{\"a\": 1, \"s\": {\"x\": true}}\n\n{\"a\": 2, \"b\": \"q\"}\n", 0);
    assert_int_equal(read1(ODF_ReadStep_NdJson, &n, p, "t"), 0);
    assert_string_equal(types("t"), "a BIGINT, s STRUCT(x BOOLEAN), b VARCHAR");
    assert_string_equal(dump("t"), "1|{'x': true}|NULL\n2|NULL|q\n");

    const char *sc[] = {"a BIGINT", "t TIMESTAMP"};
    odf_ReadStepNdJson s = {.ddl_schema = ddl(2, sc)};
    read_fails(ODF_ReadStep_NdJson, &s, tu_fixture("read/mixed.ndjson"), "mixed.ndjson", SILT_EINVAL,
               "mixed.ndjson: row 3 (line 3), column 'a': cannot convert 'x' to BIGINT");
    const char *sc2[] = {"t TIMESTAMP"};
    odf_ReadStepNdJson s2 = {.ddl_schema = ddl(1, sc2)};
    assert_int_equal(read1(ODF_ReadStep_NdJson, &s2, tu_fixture("read/mixed.ndjson"), "t"), 0);
    assert_string_equal(types("t"), "t TIMESTAMP_MS");
    assert_string_equal(dump("t"), "2020-01-02 03:04:05\n2020-01-02 22:00:00\nNULL\n");

    read_fails(ODF_ReadStep_NdJson, &n, W("b.ndjson", "{\"a\": 1}\n\n{\"a\" 2}\n", 0), "b.ndjson", SILT_EINVAL,
               "b.ndjson: line 3: invalid JSON: ':' expected near '2'");
    read_fails(ODF_ReadStep_NdJson, &n, W("c.ndjson", "{\"a\": 1}\n[1]\n", 0), "c.ndjson", SILT_EINVAL,
               "c.ndjson: line 2: expected a JSON object");
    read_fails(ODF_ReadStep_NdJson, &n, W("d.ndjson", "", 0), "d.ndjson", SILT_EINVAL, "d.ndjson: file is empty");
}

/* ---------------------------------------------------------------- GeoJSON */

static void test_geojson(void **state)
{
    (void)state;
    odf_ReadStepGeoJson g = {0};
    assert_int_equal(read1(ODF_ReadStep_GeoJson, &g, tu_fixture("read/zones.geojson"), "t"), 0);
    assert_string_equal(types("t"), "id BIGINT, zipcode VARCHAR, name VARCHAR, geometry VARCHAR");
    assert_string_equal(dump("t"),
                        "0|00101|A|{\"coordinates\":[[[0.0,0.0],[10.0,0.0],[10.0,10.0],[0.0,10.0],[0.0,0.0]]],\"type\":\"Polygon\"}\n"
                        "1|00202|B|{\"coordinates\":[1.5,-2.25],\"type\":\"Point\"}\n");
    const char *sc[] = {"id INT", "geometry STRING"};
    odf_ReadStepGeoJson gs = {.ddl_schema = ddl(2, sc)};
    assert_int_equal(read1(ODF_ReadStep_GeoJson, &gs, tu_fixture("read/zones.geojson"), "t"), 0);
    assert_string_equal(types("t"), "id INTEGER, geometry VARCHAR");
    assert_string_equal(dump("t"),
                        "0|{\"coordinates\":[[[0.0,0.0],[10.0,0.0],[10.0,10.0],[0.0,10.0],[0.0,0.0]]],\"type\":\"Polygon\"}\n"
                        "1|{\"coordinates\":[1.5,-2.25],\"type\":\"Point\"}\n");

    odf_ReadStepNdGeoJson nd = {0};
    assert_int_equal(read1(ODF_ReadStep_NdGeoJson, &nd, tu_fixture("read/zones.ndgeojson"), "t"), 0);
    assert_string_equal(types("t"), "id BIGINT, name VARCHAR, geometry VARCHAR");
    assert_string_equal(dump("t"), "0|A|{\"coordinates\":[0.1,2],\"type\":\"Point\"}\n1|B|NULL\n");

    read_fails(ODF_ReadStep_GeoJson, &g, W("f.geojson", "{\"type\": \"Feature\", \"geometry\": null}", 0), "f.geojson",
               SILT_EINVAL, "f.geojson: expected a GeoJSON FeatureCollection, got type 'Feature'");
    read_fails(ODF_ReadStep_GeoJson, &g, W("a.geojson", "[1]", 0), "a.geojson", SILT_EINVAL,
               "a.geojson: expected a GeoJSON FeatureCollection, got an array");
    read_fails(ODF_ReadStep_GeoJson, &g, W("nf.geojson", "{\"type\": \"FeatureCollection\"}", 0), "nf.geojson",
               SILT_EINVAL, "nf.geojson: FeatureCollection has no 'features' array");
    read_fails(ODF_ReadStep_GeoJson, &g,
               W("p.geojson", "{\"type\": \"FeatureCollection\", \"features\": [{\"properties\": 3}]}", 0), "p.geojson",
               SILT_EINVAL, "p.geojson: feature 1: 'properties' is a number, not an object");
    read_fails(ODF_ReadStep_NdGeoJson, &nd, W("b.ndgeojson", "{\"type\": \"Feature\"}\n5\n", 0), "b.ndgeojson",
               SILT_EINVAL, "b.ndgeojson: line 2 is a number, not a Feature object");
    read_fails(ODF_ReadStep_GeoJson, &g, W("e.geojson", "{\"type\": \"FeatureCollection\", \"features\": []}", 0),
               "e.geojson", SILT_EINVAL, "e.geojson: no records to read and no schema to define the columns");
}

static void test_json_number(void **state)
{
    (void)state;
    struct { double v; const char *s; } cases[] = {
        {0.0, "0.0"}, {0.1, "0.1"}, {-2.25, "-2.25"}, {10, "10.0"}, {1e21, "1e21"}, {1.5e-7, "1.5e-7"},
        {123456789.125, "123456789.125"}, {1.0 / 3, "0.3333333333333333"}, {NAN, "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        silt_buf b = SILT_BUF_INIT;
        assert_int_equal(silt_read_json_number(&b, cases[i].v), 0);
        assert_string_equal(b.data, cases[i].s);
        silt_buf_free(&b);
    }
}

/* ---------------------------------------------------------------- Parquet */

static void test_parquet(void **state)
{
    (void)state;
    const char *p = TP("p.parquet");
    assert_int_equal(silt_engine_execf(E, "COPY (SELECT * FROM (VALUES (1, 'x', DATE '2020-01-02'), (2, NULL, NULL)) "
                                          "v(id, s, d)) TO '%s' (FORMAT parquet)", p), 0);
    odf_ReadStepParquet q = {0};
    assert_int_equal(read1(ODF_ReadStep_Parquet, &q, p, "t"), 0);
    assert_string_equal(types("t"), "id INTEGER, s VARCHAR, d DATE");
    assert_string_equal(dump("t"), "1|x|2020-01-02\n2|NULL|NULL\n");
    const char *sc[] = {"D TIMESTAMP", "id BIGINT"};
    odf_ReadStepParquet qs = {.ddl_schema = ddl(2, sc)};
    assert_int_equal(read1(ODF_ReadStep_Parquet, &qs, p, "t"), 0);
    assert_string_equal(types("t"), "D TIMESTAMP_MS, id BIGINT");
    assert_string_equal(dump("t"), "2020-01-02 00:00:00|1\nNULL|2\n");
    const char *sc2[] = {"s INT"};
    odf_ReadStepParquet q2 = {.ddl_schema = ddl(1, sc2)};
    read_fails(ODF_ReadStep_Parquet, &q2, p, "p.parquet", SILT_EINVAL,
               "p.parquet: row 1, column 's': cannot convert 'x' to INTEGER");
    const char *sc3[] = {"nope INT"};
    odf_ReadStepParquet q3 = {.ddl_schema = ddl(1, sc3)};
    read_fails(ODF_ReadStep_Parquet, &q3, p, "p.parquet", SILT_EINVAL,
               "p.parquet: column 'nope' of the schema not found in the file");
    read_fails(ODF_ReadStep_Parquet, &q, tu_fixture("read/cities.csv"), "cities.csv", SILT_EINVAL,
               "cities.csv: not a Parquet file");
}

/* -------------------------------------------------------------- Shapefile */

static void make_points(const char *base)
{
    SHPHandle h = SHPCreate(base, SHPT_POINT);
    DBFHandle d = DBFCreate(base);
    assert_non_null(h);
    assert_non_null(d);
    assert_int_equal(DBFAddField(d, "ID", FTInteger, 9, 0), 0);
    assert_int_equal(DBFAddField(d, "VAL", FTDouble, 10, 2), 1);
    assert_int_equal(DBFAddField(d, "NAME", FTString, 16, 0), 2);
    assert_int_equal(DBFAddField(d, "OK", FTLogical, 1, 0), 3);
    assert_int_equal(DBFAddField(d, "DAY", FTDate, 8, 0), 4);
    double xs[] = {1.5, -3}, ys[] = {2, 4.25};
    for (int i = 0; i < 2; i++) {
        SHPObject *o = SHPCreateSimpleObject(SHPT_POINT, 1, &xs[i], &ys[i], NULL);
        assert_int_equal(SHPWriteObject(h, -1, o), i);
        SHPDestroyObject(o);
    }
    DBFWriteIntegerAttribute(d, 0, 0, 7);
    DBFWriteDoubleAttribute(d, 0, 1, 2.5);
    DBFWriteStringAttribute(d, 0, 2, "Kyiv");
    DBFWriteLogicalAttribute(d, 0, 3, 'T');
    DBFWriteAttributeDirectly(d, 0, 4, (void *)"20200102");
    DBFWriteIntegerAttribute(d, 1, 0, -1);
    DBFWriteNULLAttribute(d, 1, 1);
    DBFWriteStringAttribute(d, 1, 2, "L'viv \"x\"");
    DBFWriteLogicalAttribute(d, 1, 3, 'F');
    DBFWriteNULLAttribute(d, 1, 4);
    SHPClose(h);
    DBFClose(d);
}

static void make_shapes(const char *base, int type)
{
    SHPHandle h = SHPCreate(base, type);
    DBFHandle d = DBFCreate(base);
    assert_int_equal(DBFAddField(d, "K", FTString, 4, 0), 0);
    /* record 0: one part (outer CW square + CCW hole for polygons) */
    double x0[] = {0, 0, 10, 10, 0, 2, 4, 4, 2, 2}, y0[] = {0, 10, 10, 0, 0, 2, 2, 4, 4, 2};
    int parts0[] = {0, 5};
    /* record 1: two CW squares */
    double x1[] = {0, 0, 1, 1, 0, 5, 5, 6, 6, 5}, y1[] = {0, 1, 1, 0, 0, 5, 6, 6, 5, 5};
    int parts1[] = {0, 5};
    SHPObject *o;
    if (type == SHPT_MULTIPOINT) {
        o = SHPCreateSimpleObject(type, 3, x0, y0, NULL);
        SHPWriteObject(h, -1, o);
        SHPDestroyObject(o);
    } else {
        int n0 = type == SHPT_ARC ? 1 : 2;
        o = SHPCreateObject(type, -1, n0, parts0, NULL, type == SHPT_ARC ? 5 : 10, x0, y0, NULL, NULL);
        SHPWriteObject(h, -1, o);
        SHPDestroyObject(o);
    }
    o = SHPCreateObject(type == SHPT_MULTIPOINT ? SHPT_MULTIPOINT : type, -1, 2, parts1, NULL, 10, x1, y1, NULL, NULL);
    if (type == SHPT_MULTIPOINT) {
        SHPDestroyObject(o);
        o = SHPCreateObject(SHPT_NULL, -1, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL);
    }
    SHPWriteObject(h, -1, o);
    SHPDestroyObject(o);
    DBFWriteStringAttribute(d, 0, 0, "a");
    DBFWriteStringAttribute(d, 1, 0, "b");
    SHPClose(h);
    DBFClose(d);
}

static void zip_files(const char *zip, const char *const *src, const char *const *names, size_t n)
{
    struct archive *a = archive_write_new();
    assert_int_equal(archive_write_set_format_zip(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, zip), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *data = tu_read_file(src[i], &len);
        assert_non_null(data);
        struct archive_entry *e = archive_entry_new();
        archive_entry_set_pathname(e, names[i]);
        archive_entry_set_size(e, (la_int64_t)len);
        archive_entry_set_filetype(e, AE_IFREG);
        archive_entry_set_perm(e, 0644);
        assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
        assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
        archive_entry_free(e);
        free(data);
    }
    archive_write_close(a);
    archive_write_free(a);
}

static void test_shapefile(void **state)
{
    (void)state;
    make_points(TP("pts"));
    odf_ReadStepEsriShapefile s = {0};
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &s, TP("pts.shp"), "t"), 0);
    assert_string_equal(types("t"), "ID BIGINT, VAL DOUBLE, NAME VARCHAR, OK BOOLEAN, DAY DATE, geometry VARCHAR");
    assert_string_equal(dump("t"), "7|2.5|Kyiv|true|2020-01-02|{\"coordinates\":[1.5,2.0],\"type\":\"Point\"}\n"
                                   "-1|NULL|L'viv \"x\"|false|NULL|{\"coordinates\":[-3.0,4.25],\"type\":\"Point\"}\n");

    make_shapes(TP("poly"), SHPT_POLYGON);
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &s, TP("poly.shp"), "t"), 0);
    assert_string_equal(dump("t"),
                        "a|{\"coordinates\":[[[0.0,0.0],[0.0,10.0],[10.0,10.0],[10.0,0.0],[0.0,0.0]],"
                        "[[2.0,2.0],[4.0,2.0],[4.0,4.0],[2.0,4.0],[2.0,2.0]]],\"type\":\"Polygon\"}\n"
                        "b|{\"coordinates\":[[[[0.0,0.0],[0.0,1.0],[1.0,1.0],[1.0,0.0],[0.0,0.0]]],"
                        "[[[5.0,5.0],[5.0,6.0],[6.0,6.0],[6.0,5.0],[5.0,5.0]]]],\"type\":\"MultiPolygon\"}\n");
    make_shapes(TP("line"), SHPT_ARC);
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &s, TP("line.shp"), "t"), 0);
    assert_string_equal(dump("t"),
                        "a|{\"coordinates\":[[0.0,0.0],[0.0,10.0],[10.0,10.0],[10.0,0.0],[0.0,0.0]],\"type\":\"LineString\"}\n"
                        "b|{\"coordinates\":[[[0.0,0.0],[0.0,1.0],[1.0,1.0],[1.0,0.0],[0.0,0.0]],"
                        "[[5.0,5.0],[5.0,6.0],[6.0,6.0],[6.0,5.0],[5.0,5.0]]],\"type\":\"MultiLineString\"}\n");
    make_shapes(TP("mpt"), SHPT_MULTIPOINT);
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &s, TP("mpt.shp"), "t"), 0);
    assert_string_equal(dump("t"), "a|{\"coordinates\":[[0.0,0.0],[0.0,10.0],[10.0,10.0]],\"type\":\"MultiPoint\"}\nb|NULL\n");

    /* schema coercion */
    const char *sc[] = {"NAME STRING", "ID INT", "DAY STRING"};
    odf_ReadStepEsriShapefile ss = {.ddl_schema = ddl(3, sc)};
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &ss, TP("pts.shp"), "t"), 0);
    assert_string_equal(types("t"), "NAME VARCHAR, ID INTEGER, DAY VARCHAR");
    assert_string_equal(dump("t"), "Kyiv|7|2020-01-02\nL'viv \"x\"|-1|NULL\n");

    /* archives */
    const char *src[] = {TP("pts.shp"), TP("pts.shx"), TP("pts.dbf"), TP("line.shp"), TP("line.shx"), TP("line.dbf")};
    const char *names[] = {"a/pts.shp", "a/pts.shx", "a/pts.dbf", "b/line.shp", "b/line.shx", "b/line.dbf"};
    zip_files(TP("one.zip"), src, names, 3);
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &s, TP("one.zip"), "t"), 0);
    assert_string_equal(types("t"), "ID BIGINT, VAL DOUBLE, NAME VARCHAR, OK BOOLEAN, DAY DATE, geometry VARCHAR");
    zip_files(TP("two.zip"), src, names, 6);
    read_fails(ODF_ReadStep_EsriShapefile, &s, TP("two.zip"), "two.zip", SILT_EINVAL,
               "two.zip: the archive contains several .shp files (a/pts.shp, b/line.shp); set subPath to choose one");
    odf_ReadStepEsriShapefile g1 = {.sub_path = "b/*.shp"};
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &g1, TP("two.zip"), "t"), 0);
    assert_string_equal(types("t"), "K VARCHAR, geometry VARCHAR");
    odf_ReadStepEsriShapefile g2 = {.sub_path = "a/pts.shp"};
    assert_int_equal(read1(ODF_ReadStep_EsriShapefile, &g2, TP("two.zip"), "t"), 0);
    assert_string_equal(dump("t"), "7|2.5|Kyiv|true|2020-01-02|{\"coordinates\":[1.5,2.0],\"type\":\"Point\"}\n"
                                   "-1|NULL|L'viv \"x\"|false|NULL|{\"coordinates\":[-3.0,4.25],\"type\":\"Point\"}\n");
    odf_ReadStepEsriShapefile g3 = {.sub_path = "*.shp"};
    read_fails(ODF_ReadStep_EsriShapefile, &g3, TP("two.zip"), "two.zip", SILT_EINVAL,
               "two.zip: no .shp file in the archive matches subPath '*.shp' (found: a/pts.shp, b/line.shp)");
    odf_ReadStepEsriShapefile g4 = {.sub_path = "*/*.shp"};
    read_fails(ODF_ReadStep_EsriShapefile, &g4, TP("two.zip"), "two.zip", SILT_EINVAL,
               "two.zip: several .shp files match subPath '*/*.shp': a/pts.shp, b/line.shp");
    const char *dsrc[] = {TP("pts.dbf")};
    const char *dname[] = {"pts.dbf"};
    zip_files(TP("none.zip"), dsrc, dname, 1);
    read_fails(ODF_ReadStep_EsriShapefile, &s, TP("none.zip"), "none.zip", SILT_EINVAL,
               "none.zip: the archive does not contain any .shp file");
    read_fails(ODF_ReadStep_EsriShapefile, &s, tu_fixture("read/cities.csv"), "cities.csv", SILT_EINVAL,
               "cities.csv: not a shapefile (.shp) or a ZIP archive");
    read_fails(ODF_ReadStep_EsriShapefile, &s, W("nosh.shp", "\0\0\x27\x0a", 4), "nosh.shp", SILT_EINVAL,
               "nosh.shp: cannot open the shapefile (missing .shx or corrupt .shp)");
}

/* ------------------------------------------------------- files and tables */

static void test_multi_file(void **state)
{
    (void)state;
    odf_ReadStepCsv c = {.has_header = true, .header = true, .has_infer_schema = true, .infer_schema = true};
    odf_union u = step(ODF_ReadStep_Csv, &c);
    const char *files[] = {W("m1.csv", "a,b\n1,x\n2,y\n", 0), W("m2.csv", "b,a\nz,3\n", 0), W("m3.csv", "a\n4\n", 0)};
    assert_int_equal(silt_read_files(E, &u, files, NULL, 3, "multi"), 0);
    assert_string_equal(types("multi"), "a BIGINT, b VARCHAR");
    assert_string_equal(dump("multi"), "1|x\n2|y\n3|z\n4|NULL\n");
    /* replaced by a second read; the old table disappears on error */
    assert_int_equal(silt_read_files(E, &u, files + 2, NULL, 1, "multi"), 0);
    assert_string_equal(dump("multi"), "4\n");
    const char *bad[] = {files[0], W("m4.csv", "a,b\n1\n", 0)};
    const char *shown_names[] = {"first", "second"};
    uint64_t before = count_tables();
    assert_int_equal(silt_read_files(E, &u, bad, shown_names, 2, "multi"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "second: line 2: expected 2 fields, found 1");
    assert_false(table_exists("multi"));
    assert_int_equal(count_tables(), before - 1);
    /* many files keep their order */
    const char *many[12];
    for (int i = 0; i < 12; i++) {
        char nm[32], body[64];
        snprintf(nm, sizeof nm, "many%d.csv", i);
        snprintf(body, sizeof body, "a\n%d\n%d\n", 2 * i, 2 * i + 1);
        many[i] = W(nm, body, 0);
    }
    assert_int_equal(silt_read_files(E, &u, many, NULL, 12, "many"), 0);
    char *agg = NULL;
    assert_int_equal(silt_engine_query_text(E, &agg, "SELECT string_agg(a::VARCHAR, ',' ORDER BY rowid) FROM many"), 0);
    assert_string_equal(agg, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23");
    free(agg);

    assert_int_equal(silt_read_files(E, &u, files, NULL, 0, "x"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "read: no input files");
    odf_union none = {0, NULL};
    assert_int_equal(silt_read_files(E, &none, files, NULL, 1, "x"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "ReadStep has no value");
    odf_union weird = {99, &c};
    assert_int_equal(silt_read_files(E, &weird, files, NULL, 1, "x"), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "unknown ReadStep kind 99");
}

static void test_formats(void **state)
{
    (void)state;
    static const struct { const char *name; uint8_t type; } f[] = {
        {"csv", ODF_ReadStep_Csv}, {"json", ODF_ReadStep_Json}, {"ndjson", ODF_ReadStep_NdJson},
        {"geojson", ODF_ReadStep_GeoJson}, {"ndgeojson", ODF_ReadStep_NdGeoJson}, {"parquet", ODF_ReadStep_Parquet},
        {"shp", ODF_ReadStep_EsriShapefile},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        odf_union u;
        assert_int_equal(silt_read_step_for_format(A, f[i].name, &u), 0);
        assert_int_equal(u.type, f[i].type);
        assert_non_null(u.value);
    }
    odf_union u;
    assert_int_equal(silt_read_step_for_format(A, "csv", &u), 0);
    const odf_ReadStepCsv *c = u.value;
    assert_true(c->has_header && c->header && c->has_infer_schema && c->infer_schema);
    assert_null(c->separator);
    /* --format csv reads a headed file with types */
    const char *files[] = {tu_fixture("read/cities.csv")};
    assert_int_equal(silt_read_files(E, &u, files, NULL, 1, "t"), 0);
    assert_string_equal(types("t"), "city VARCHAR, population VARCHAR, area DOUBLE");
    assert_string_equal(dump("t"), "Vancouver|2581000|114.97\nSeattle|3433000|217.0\nNowhere|n/a|1.0\n");
    assert_int_equal(silt_read_step_for_format(A, "xml", &u), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "unknown format 'xml'");
    assert_int_equal(u.type, 0);
}

/* ------------------------------------------- fast path vs slow path */

/* Reads `files` with the slow path into "ref" and with the fast path (verify
 * mode: the library also compares with its own slow re-read) into "fst";
 * both must agree on the code, the message or the table (types, rows in
 * rowid order). Returns whether the fast path served the read. */
static bool both_paths(uint8_t type, void *v, const char *const *files, size_t n)
{
    odf_union u = step(type, v);
    silt_read_set_mode(SILT_READ_SLOW);
    int rs = silt_read_files(E, &u, files, NULL, n, "ref");
    char *ms = silt_arena_strdup(A, silt_error_last());
    silt_read_set_mode(SILT_READ_VERIFY);
    int rf = silt_read_files(E, &u, files, NULL, n, "fst");
    bool fast = silt_read_last_was_fast();
    silt_read_set_mode(SILT_READ_AUTO);
    if (rs != rf || (rs && strcmp(ms, silt_error_last())))
        fprintf(stderr, "%s: slow %d '%s', fast %d '%s'\n", files[0], rs, ms, rf, silt_error_last());
    assert_int_equal(rf, rs);
    if (rs) {
        assert_string_equal(silt_error_last(), ms);
        assert_false(table_exists("fst"));
        return false;
    }
    assert_string_equal(types("fst"), types("ref"));
    assert_string_equal(dump("fst"), dump("ref"));
    uint64_t d = 99;
    assert_int_equal(silt_engine_query_u64(E, &d, "SELECT count(*) FROM ((SELECT rowid, * FROM fst EXCEPT ALL SELECT "
                                                  "rowid, * FROM ref) UNION ALL (SELECT rowid, * FROM ref EXCEPT ALL "
                                                  "SELECT rowid, * FROM fst))"), 0);
    assert_int_equal(d, 0);
    return fast;
}

static bool both1(uint8_t type, void *v, const char *path)
{
    const char *files[] = {path};
    return both_paths(type, v, files, 1);
}

static void test_fast_path_used(void **state)
{
    (void)state;
    /* the benchmark's shape: typed CSV with a schema, one native scan */
    const char *sc[] = {"id BIGINT", "day DATE", "name STRING", "city STRING", "n BIGINT", "x DOUBLE", "y DOUBLE"};
    odf_ReadStepCsv c = {.has_header = true, .header = true, .ddl_schema = ddl(7, sc)};
    const char *p = W("fp.csv", "id,day,name,city,n,x,y\n1,2020-01-02,a,\"b, c\",7,1.5,-2\n2,,\"\",x,,nan,1e3\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(types("t"), "id BIGINT, day DATE, name VARCHAR, city VARCHAR, n BIGINT, x DOUBLE, y DOUBLE");
    assert_string_equal(dump("t"), "1|2020-01-02|a|b, c|7|1.5|-2.0\n2|NULL|NULL|x|NULL|nan|1000.0\n");
    /* several files: file order, then row order */
    const char *files[] = {p, W("fp2.csv", "id,day,name,city,n,x,y\n3,2021-01-01,q,r,1,0,0\n", 0), p};
    odf_union u = step(ODF_ReadStep_Csv, &c);
    assert_int_equal(silt_read_files(E, &u, files, NULL, 3, "t"), 0);
    assert_true(silt_read_last_was_fast());
    char *agg = NULL;
    assert_int_equal(silt_engine_query_text(E, &agg, "SELECT string_agg(id::VARCHAR, ',' ORDER BY rowid) FROM t"), 0);
    assert_string_equal(agg, "1,2,3,1,2");
    free(agg);
    /* a value DuckDB's typed reader rejects but the slow path accepts
     * (whitespace-only number = NULL): fallback, same result */
    const char *sc2[] = {"a BIGINT", "b STRING"};
    odf_ReadStepCsv c2 = {.ddl_schema = ddl(2, sc2)};
    assert_int_equal(read1(ODF_ReadStep_Csv, &c2, W("ws.csv", "1,x\n   ,y\n", 0), "t"), 0);
    assert_false(silt_read_last_was_fast());
    assert_string_equal(dump("t"), "1|x\nNULL|y\n");
    /* inferSchema=false without a schema: VARCHAR in one scan */
    odf_ReadStepCsv h = {.has_header = true, .header = true};
    assert_int_equal(read1(ODF_ReadStep_Csv, &h, W("hv.csv", "a,,A\n1,,3\n", 0), "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(types("t"), "a VARCHAR, _c1 VARCHAR, A2 VARCHAR");
    assert_string_equal(dump("t"), "1|NULL|3\n");
    /* inferSchema: the types come from a sample (the first 20480 rows), so
     * the typed fast path reads the file */
    odf_ReadStepCsv inf = {.has_infer_schema = true, .infer_schema = true};
    assert_int_equal(read1(ODF_ReadStep_Csv, &inf, W("inf.csv", "1,x,2020-01-02,1.5,true\n", 0), "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(types("t"), "_c0 BIGINT, _c1 VARCHAR, _c2 DATE, _c3 DOUBLE, _c4 BOOLEAN");
    /* a later row that does not fit the sample's type: an error naming the
     * row and column and saying what to do (fast and slow path alike) */
    silt_buf big = SILT_BUF_INIT;
    assert_int_equal(silt_buf_puts(&big, "n,s\n"), 0);
    for (int i = 0; i < 20480; i++)
        assert_int_equal(silt_buf_printf(&big, "%d,a\n", i), 0);
    assert_int_equal(silt_buf_puts(&big, "1.5,b\n"), 0);
    odf_ReadStepCsv infh = {.has_infer_schema = true, .infer_schema = true, .has_header = true, .header = true};
    const char *misfit = "big.csv: row 20481 (line 20482), column 'n': '1.5' is not a BIGINT value (inferSchema "
                         "chose BIGINT from the first 20480 rows: declare the types instead, with ddlSchema or "
                         "`silt new NAME --push-source csv --schema 'name TYPE, ...'`)";
    read_fails(ODF_ReadStep_Csv, &infh, W("big.csv", big.data, big.len), "big.csv", SILT_EINVAL, misfit);
    /* within the sample every row counts: 1.5 in row 20480 makes it DOUBLE */
    big.len -= strlen("1.5,b\n") + strlen("20479,a\n");
    assert_int_equal(silt_buf_puts(&big, "1.5,b\n"), 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &infh, W("big2.csv", big.data, big.len), "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(types("t"), "n DOUBLE, s VARCHAR");
    /* a later text value in a DOUBLE column */
    assert_int_equal(silt_buf_puts(&big, "n/a,c\n"), 0);
    read_fails(ODF_ReadStep_Csv, &infh, W("big3.csv", big.data, big.len), "big3.csv", SILT_EINVAL,
               "big3.csv: row 20481 (line 20482), column 'n': 'n/a' is not a DOUBLE value (inferSchema chose DOUBLE "
               "from the first 20480 rows: declare the types instead, with ddlSchema or `silt new NAME "
               "--push-source csv --schema 'name TYPE, ...'`)");
    silt_buf_free(&big);
    /* errors keep their exact slow-path message */
    read_fails(ODF_ReadStep_Csv, &c, W("bad.csv", "id,day,name,city,n,x,y\n1,2020-01-02,a,b,7,1.5,2\n2,2020-01-02,a,b,zz,1,2\n", 0),
               "bad.csv", SILT_EINVAL, "bad.csv: row 2 (line 3), column 'n': cannot convert 'zz' to BIGINT");
    read_fails(ODF_ReadStep_Csv, &c, W("rag.csv", "id,day,name,city,n,x,y\n1,2020-01-02,a,b,7,1.5,2\n2,2020-01-02,a,b,7,1\n", 0), "rag.csv",
               SILT_EINVAL, "rag.csv: line 3: expected 7 fields, found 6");
    /* Parquet and JSON with a schema */
    const char *pq = TP("fp.parquet");
    assert_int_equal(silt_engine_execf(E, "COPY (SELECT range AS id, range::VARCHAR AS S FROM range(3)) TO '%s' "
                                          "(FORMAT parquet)", pq), 0);
    odf_ReadStepParquet q = {0};
    assert_int_equal(read1(ODF_ReadStep_Parquet, &q, pq, "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(types("t"), "id BIGINT, S VARCHAR");
    const char *psc[] = {"s INT", "id STRING"};
    odf_ReadStepParquet qs = {.ddl_schema = ddl(2, psc)};
    assert_int_equal(read1(ODF_ReadStep_Parquet, &qs, pq, "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(types("t"), "s INTEGER, id VARCHAR");
    assert_string_equal(dump("t"), "0|0\n1|1\n2|2\n");
    const char *jsc[] = {"t TIMESTAMP", "a STRING"};
    odf_ReadStepNdJson nj = {.ddl_schema = ddl(2, jsc)};
    assert_int_equal(read1(ODF_ReadStep_NdJson, &nj, tu_fixture("read/mixed.ndjson"), "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(dump("t"), "2020-01-02 03:04:05|1\n2020-01-02 22:00:00|2\nNULL|x\n");
}

/* Every fixture, and a battery of edge values per type and dialect, read by
 * both paths: same table or same error. */
static void test_fast_vs_slow(void **state)
{
    (void)state;
    /* fixtures */
    const char *csc[] = {"city STRING", "population BIGINT", "area DECIMAL(6,2)"};
    odf_ReadStepCsv cities = {.has_header = true, .header = true, .ddl_schema = ddl(3, csc)};
    assert_false(both1(ODF_ReadStep_Csv, &cities, tu_fixture("read/cities.csv")));
    const char *csc2[] = {"city STRING", "population STRING", "area DOUBLE"};
    odf_ReadStepCsv cities2 = {.has_header = true, .header = true, .ddl_schema = ddl(3, csc2)};
    assert_true(both1(ODF_ReadStep_Csv, &cities2, tu_fixture("read/cities.csv")));
    odf_ReadStepCsv cv = {.has_header = true, .header = true};
    assert_true(both1(ODF_ReadStep_Csv, &cv, tu_fixture("read/cities.csv")));
    const char *lsc[] = {"name STRING", "city STRING"};
    odf_ReadStepCsv l1 = {.has_header = true, .header = true, .separator = ";", .encoding = "latin1",
                          .ddl_schema = ddl(2, lsc)};
    assert_true(both1(ODF_ReadStep_Csv, &l1, tu_fixture("read/latin1.csv")));
    const char *msc[] = {"a BIGINT", "t TIMESTAMP"};
    odf_ReadStepNdJson m = {.ddl_schema = ddl(2, msc)};
    assert_false(both1(ODF_ReadStep_NdJson, &m, tu_fixture("read/mixed.ndjson")));
    const char *msc2[] = {"t TIMESTAMP", "a DOUBLE", "zz STRING"};
    odf_ReadStepNdJson m2 = {.ddl_schema = ddl(3, msc2)};
    assert_false(both1(ODF_ReadStep_NdJson, &m2, tu_fixture("read/mixed.ndjson")));
    const char *jsc[] = {"id INT", "tags ARRAY<STRING>", "score DECIMAL(5,1)", "ok BOOLEAN", "name STRING"};
    odf_ReadStepJson j = {.sub_path = "data.rows", .ddl_schema = ddl(5, jsc)};
    assert_true(both1(ODF_ReadStep_Json, &j, tu_fixture("read/nested.json")));

    /* one value per file, every target type: where DuckDB's typed CSV
     * reader accepts a value it must agree with the slow path */
    static const struct { const char *type; const char *vals[24]; } bat[] = {
        {"BIGINT", {"12", " 12 ", "+5", "1.5", "2.5", "-2.5", "1e3", "0x10", "1_000", "\"\"", "\" 7\"", "", "   ",
                    "9223372036854775808", "-0", "007", "\"1,5\"", "abc", "NA", "\"NA\"", "1.", NULL}},
        {"INT", {"2147483648", "1.5", " 3 ", "-2147483648", NULL}},
        {"TINYINT", {"300", "-128", "127.4", NULL}},
        {"UINT64", {"-1", "-0", "18446744073709551615", NULL}},
        {"DOUBLE", {"1.5", " 2 ", "1e-3", "-0", "nan", "NaN", "inf", "-Infinity", "0x10", "1_0", ".5", "5.", "1e400",
                    "\"3.25\"", "abc", "+1", "", "\"\"", NULL}},
        {"FLOAT", {"1.1", "1e39", "3.4028235e38", "0.1", NULL}},
        {"DECIMAL(6,2)", {"114.97", "217", " 1.005 ", "1.015", "1e2", "-0.004", "99999.99", "1_0", "x", NULL}},
        {"BOOLEAN", {"true", "false", "TRUE", "F", "T", "t", "f", "1", "0", "yes", "no", " true ", "on", "y", "2",
                     "", NULL}},
        {"DATE", {"2020-01-02", " 2020-01-02 ", "2020-1-2", "2020/01/02", "20200102", "2020-01-02 03:04:05",
                  "2020-01-02T00:00:00Z", "2020-02-30", "-2020-01-02", "2020-01-02 (BC)", "infinity", "02/01/2020",
                  "2020-01-02x", "epoch", "", NULL}},
        {"TIMESTAMP", {"2020-01-02 03:04:05", "2020-01-02T03:04:05.123Z", "2020-01-02T03:04:05+02:00",
                       "2020-01-02 03:04:05+0530", "2020-01-02 03:04:05 +02", "2020-01-02", " 2020-01-02 03:04:05 ",
                       "2020-01-02 03:04:05.1234567", "2020-01-02 03:04:05 Europe/Berlin", "2020-01-02 03:04:05 UTC",
                       "2020-01-02T03:04:05z", "infinity", "2020-01-02 03:04:05-00:30:15", NULL}},
        {"STRING", {"", "\"\"", " a ", "NA", "\"NA\"", "\"x\\\"y\"", NULL}},
        {"TIME", {"03:04:05", " 03:04 ", "25:00:00", NULL}},
    };
    int nfast = 0, nfile = 0;
    for (size_t b = 0; b < sizeof bat / sizeof bat[0]; b++) {
        const char *sc[] = {silt_arena_printf(A, "v %s", bat[b].type), "k STRING"};
        odf_ReadStepCsv plain = {.has_header = true, .header = true, .ddl_schema = ddl(2, sc)};
        odf_ReadStepCsv na = {.has_header = true, .header = true, .null_value = "NA", .ddl_schema = ddl(2, sc)};
        for (size_t i = 0; bat[b].vals[i]; i++) {
            const char *body = silt_arena_printf(A, "v,k\n%s,a\n", bat[b].vals[i]);
            const char *p = W(silt_arena_printf(A, "bat%zu_%zu.csv", b, i), body, 0);
            nfast += both1(ODF_ReadStep_Csv, &plain, p);
            nfast += both1(ODF_ReadStep_Csv, &na, p);
            nfile += 2;
        }
    }
    assert_true(nfast > nfile / 2);

    /* dialect edge cases on a mixed schema */
    const char *dsc[] = {"a BIGINT", "s STRING", "d DATE", "b BOOLEAN", "x DOUBLE"};
    odf_ReadStepCsv d1 = {.ddl_schema = ddl(5, dsc)};
    odf_ReadStepCsv d2 = {.ddl_schema = ddl(5, dsc), .null_value = "NA", .separator = ";", .quote = "'", .escape = "#"};
    odf_ReadStepCsv d3 = {.ddl_schema = ddl(5, dsc), .escape = "\"", .has_header = true, .header = true};
    odf_ReadStepCsv d4 = {.ddl_schema = ddl(5, dsc), .quote = "", .separator = "\t"};
    odf_ReadStepCsv d5 = {.ddl_schema = ddl(5, dsc), .date_format = "dd/MM/yyyy"};
    static const char *bodies[] = {
        "1,a,2020-01-02,true,1.5\n2,,,,\n",                       /* empty fields */
        "\357\273\2771,a,2020-01-02,true,1.5\r\n2,b,2020-01-03,false,2\r\n", /* BOM + CRLF */
        "1,a,2020-01-02,true,1.5\n\n2,b,2020-01-03,false,2\n",    /* blank line */
        "1,a,2020-01-02,true,1.5,\n",                             /* trailing delimiter */
        "1,\"a\nb\",2020-01-02,true,1.5\n",                       /* multi-line quoted */
        "1,\"q\\\"q\",2020-01-02,true,1.5\n",                     /* escaped quote */
        "1,\"say \"\"hi\"\"\",2020-01-02,true,1.5\n",             /* doubled quote */
        "NA;NA;NA;NA;NA\n1;'NA';'';'t';'1'\n2;'it#'s';2020-01-02;f;-0\n", /* nullValue, quoted */
        "1\ta\"b\t2020-01-02\tTRUE\t1\n",
        "1,a,02/01/2020,true,1\n",
        "1,a,2020-01-02,true,1\n2,b,2020-01-02,true\n",           /* ragged */
        "1,\"unterminated,2020-01-02,true,1\n",
        "1,a,2020-01-02,true,1\n\"x\"\"y\",b,2020-01-02,true,1\n",
        "\n\r\n",                                                  /* blank only */
        "1,caf\xe9,2020-01-02,true,1\n",                          /* invalid UTF-8 */
    };
    odf_ReadStepCsv *dl[] = {&d1, &d2, &d3, &d4, &d5};
    for (size_t b = 0; b < sizeof bodies / sizeof bodies[0]; b++) {
        const char *p = W(silt_arena_printf(A, "dia%zu.csv", b), bodies[b], 0);
        for (size_t k = 0; k < sizeof dl / sizeof dl[0]; k++)
            both1(ODF_ReadStep_Csv, dl[k], p);
    }
    /* the first body is served by the fast path with the default dialect */
    assert_true(both1(ODF_ReadStep_Csv, &d1, TP("dia0.csv")));

    /* date/timestamp formats: Java patterns, strftime, %z offsets to UTC */
    const char *tsc[] = {"d DATE", "ts TIMESTAMP", "tz TIMESTAMP(UTC)"};
    (void)tsc;
    const char *fsc[] = {"d DATE", "ts TIMESTAMP"};
    odf_ReadStepCsv f1 = {.ddl_schema = ddl(2, fsc), .date_format = "dd/MM/yyyy",
                          .timestamp_format = "yyyy-MM-dd'T'HH:mm:ss.SSS"};
    odf_ReadStepCsv f2 = {.ddl_schema = ddl(2, fsc), .date_format = "%Y%m%d", .timestamp_format = "%d.%m.%Y %H:%M %z"};
    odf_ReadStepCsv f3 = {.ddl_schema = ddl(2, fsc)};
    static const char *fb[] = {
        "02/01/2020,2020-01-02T03:04:05.678\n", "20200102,02.01.2020 03:04 +0100\n",
        "2020-01-02,2020-01-02T03:04:05+02:00\n2020-01-03,2020-01-02 03:04:05\n", " 02/01/2020 ,x\n", ",\n",
    };
    odf_ReadStepCsv *fl[] = {&f1, &f2, &f3};
    for (size_t b = 0; b < sizeof fb / sizeof fb[0]; b++) {
        const char *p = W(silt_arena_printf(A, "fmt%zu.csv", b), fb[b], 0);
        for (size_t k = 0; k < sizeof fl / sizeof fl[0]; k++)
            both1(ODF_ReadStep_Csv, fl[k], p);
    }
    assert_true(both1(ODF_ReadStep_Csv, &f2, TP("fmt1.csv")));
    assert_true(both1(ODF_ReadStep_Csv, &f3, TP("fmt2.csv")));

    /* several files, schema'd: order and errors in the second file */
    const char *mf[] = {TP("dia0.csv"), TP("dia2.csv"), TP("dia0.csv")};
    assert_true(both_paths(ODF_ReadStep_Csv, &d1, mf, 3));
    const char *mf2[] = {TP("dia0.csv"), TP("dia10.csv")};
    assert_false(both_paths(ODF_ReadStep_Csv, &d1, mf2, 2));

    /* JSON: numbers, strings, nested values and missing keys into types */
    const char *nsc[] = {"i INT", "f DOUBLE", "s STRING", "b BOOLEAN", "l ARRAY<BIGINT>", "d DATE", "t TIMESTAMP"};
    odf_ReadStepNdJson nd = {.ddl_schema = ddl(7, nsc)};
    odf_ReadStepNdJson ndf = {.ddl_schema = ddl(7, nsc), .date_format = "dd/MM/yyyy"};
    static const char *jb[] = {
        "{\"i\": 1, \"f\": 1.5, \"s\": \"x\", \"b\": true, \"l\": [1, 2], \"d\": \"2020-01-02\", \"t\": \"2020-01-02T03:04:05+01:00\"}\n",
        "{\"i\": 2.5, \"f\": \"3\", \"s\": 5, \"b\": \"false\", \"l\": \"[3]\", \"d\": null}\n\n{\"zz\": 1}\n",
        "{\"i\": \"x\"}\n", "{\"s\": {\"a\": [1]}}\n", "\n  \n", "{\"d\": \"02/01/2020\"}\n", "{\"i\": 1}\n[1]\n",
    };
    for (size_t b = 0; b < sizeof jb / sizeof jb[0]; b++) {
        const char *p = W(silt_arena_printf(A, "j%zu.ndjson", b), jb[b], 0);
        both1(ODF_ReadStep_NdJson, &nd, p);
        both1(ODF_ReadStep_NdJson, &ndf, p);
    }
    assert_true(both1(ODF_ReadStep_NdJson, &nd, TP("j0.ndjson")));
    assert_true(both1(ODF_ReadStep_NdJson, &nd, TP("j1.ndjson")));

    /* Parquet: stored types cast to the schema */
    const char *pq = TP("vs.parquet");
    assert_int_equal(silt_engine_execf(E, "COPY (SELECT * FROM (VALUES (1, 'x', DATE '2020-01-02', 2.5), "
                                          "(2, NULL, NULL, -1.5)) v(id, s, d, f)) TO '%s' (FORMAT parquet)", pq), 0);
    const char *psc[] = {"D TIMESTAMP", "id STRING", "f BIGINT"};
    odf_ReadStepParquet qs = {.ddl_schema = ddl(3, psc)};
    assert_true(both1(ODF_ReadStep_Parquet, &qs, pq));
    const char *psc2[] = {"s INT"};
    odf_ReadStepParquet qs2 = {.ddl_schema = ddl(1, psc2)};
    assert_false(both1(ODF_ReadStep_Parquet, &qs2, pq));
    odf_ReadStepParquet q0 = {0};
    assert_true(both1(ODF_ReadStep_Parquet, &q0, pq));
}

/* ------------------------------------------------- record counts (cross-check) */

static silt_csv_stats scan(const char *data, const odf_ReadStepCsv *c)
{
    silt_csv_stats st, ref;
    assert_int_equal(silt_read_csv_scan_mem(data, strlen(data), c, &st), 0);
    assert_int_equal(silt_read_csv_scan_mem_scalar(data, strlen(data), c, &ref), 0);
    assert_memory_equal(&st, &ref, sizeof st);
    return st;
}

/* The 64-byte block decoder against the byte-at-a-time state machine on
 * random text made of the special characters, for every dialect. */
static void test_csv_count_blocks(void **state)
{
    (void)state;
    odf_ReadStepCsv dialects[5] = {[1].escape = "\"", [2].escape = "", [3].quote = "", [4].quote = "'", [4].escape = "'"};
    static const char alpha[] = "a,\"\\\r\n'a";
    uint64_t x = 88172645463325252ULL;
    char *buf = malloc(5000);
    assert_non_null(buf);
    for (int round = 0; round < 3000; round++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t len = (size_t)(x % 4000);
        unsigned bias = (unsigned)(x >> 40) % 4; /* 0: mostly 'a' (long plain runs) */
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = (bias == 0 && x % 8) ? 'a' : alpha[x % (sizeof alpha - 1)];
        }
        if (round % 7 == 0 && len >= 3)
            memcpy(buf, "\xEF\xBB\xBF", 3);
        odf_ReadStepCsv *d = &dialects[round % 5];
        silt_csv_stats a, b;
        assert_int_equal(silt_read_csv_scan_mem(buf, len, d, &a), 0);
        assert_int_equal(silt_read_csv_scan_mem_scalar(buf, len, d, &b), 0);
        if (memcmp(&a, &b, sizeof a))
            fprintf(stderr, "round %d: blocks %llu/%llu/%llu/%llu/%llu, scalar %llu/%llu/%llu/%llu/%llu\n", round,
                    (unsigned long long)a.records, (unsigned long long)a.empty, (unsigned long long)a.leading_empty,
                    (unsigned long long)a.max_len, (unsigned long long)a.max_line, (unsigned long long)b.records,
                    (unsigned long long)b.empty, (unsigned long long)b.leading_empty, (unsigned long long)b.max_len,
                    (unsigned long long)b.max_line);
        assert_memory_equal(&a, &b, sizeof a);
    }
    free(buf);
}

#define ASSERT_STATS(st, rec, emp, lead, mlen, mline)                                                                  \
    do {                                                                                                               \
        assert_int_equal((st).records, rec);                                                                           \
        assert_int_equal((st).empty, emp);                                                                             \
        assert_int_equal((st).leading_empty, lead);                                                                    \
        assert_int_equal((st).max_len, mlen);                                                                          \
        assert_int_equal((st).max_line, mline);                                                                        \
    } while (0)

static void test_csv_count(void **state)
{
    (void)state;
    odf_ReadStepCsv d = {0};
    silt_csv_stats st = scan("", &d);
    ASSERT_STATS(st, 0, 0, 0, 0, 0);
    assert_int_equal(silt_read_csv_rows(&st, true, 2), 0);
    st = scan("a,b\n1,2\n", &d);
    ASSERT_STATS(st, 2, 0, 0, 3, 1);
    assert_int_equal(silt_read_csv_rows(&st, true, 2), 1);
    assert_int_equal(silt_read_csv_rows(&st, false, 2), 2);
    /* no line break after the last record; only a header */
    st = scan("a,b\n1,2\n3,45", &d);
    ASSERT_STATS(st, 3, 0, 0, 4, 3);
    st = scan("a,b", &d);
    assert_int_equal(silt_read_csv_rows(&st, true, 2), 0);
    /* CRLF and CR line breaks: one record each, an empty line in between */
    st = scan("a,b\r\n1,2\r\n\r\n3,4", &d);
    ASSERT_STATS(st, 3, 1, 0, 3, 1);
    st = scan("a\r1\r\r22\r", &d);
    ASSERT_STATS(st, 3, 1, 0, 2, 4);
    assert_int_equal(silt_read_csv_rows(&st, true, 1), 3); /* 1, NULL, 22 */
    /* line breaks inside quotes are data; the line count goes on */
    st = scan("a,b\n\"x\ny\",1\n\"p\r\nqq\",2\nz,3\n", &d);
    ASSERT_STATS(st, 4, 0, 0, 9, 4);
    /* a doubled quote and an escaped quote keep the value quoted */
    st = scan("a\n\"x\"\"\ny\"\n\"pp\\\"\nq\"\n", &d);
    ASSERT_STATS(st, 3, 0, 0, 8, 4);
    /* without an escape character \" ends the value: the next line break counts */
    odf_ReadStepCsv noesc = {.escape = ""};
    st = scan("a\n\"p\\\"\nq\"\n", &noesc);
    ASSERT_STATS(st, 3, 0, 0, 4, 2);
    /* escape = quote: "" is the escaped quote */
    odf_ReadStepCsv qq = {.escape = "\""};
    st = scan("a\n\"x\"\"\ny\"\n", &qq);
    ASSERT_STATS(st, 2, 0, 0, 7, 2);
    /* an escaped escape before the closing quote */
    st = scan("a\n\"x\\\\\"\nb\n", &d);
    ASSERT_STATS(st, 3, 0, 0, 5, 2);
    /* quoting off, or another quote character */
    odf_ReadStepCsv noq = {.quote = ""};
    st = scan("a\n\"x\ny\"\n", &noq);
    ASSERT_STATS(st, 3, 0, 0, 2, 2);
    odf_ReadStepCsv sq = {.quote = "'"};
    st = scan("a\n'x\ny'\n\"z\n", &sq);
    ASSERT_STATS(st, 3, 0, 0, 5, 2);
    /* an unterminated quote runs to the end of the file */
    st = scan("a\n\"x\ny\n", &d);
    ASSERT_STATS(st, 2, 0, 0, 5, 2);
    /* empty lines: before the header (skipped), between and after records;
     * with one column they are NULL rows */
    st = scan("\n\r\na,b\n\n1,2\n\n", &d);
    ASSERT_STATS(st, 2, 2, 2, 3, 3);
    assert_int_equal(silt_read_csv_rows(&st, true, 2), 1);
    assert_int_equal(silt_read_csv_rows(&st, true, 1), 3);
    assert_int_equal(silt_read_csv_rows(&st, false, 2), 2);
    assert_int_equal(silt_read_csv_rows(&st, false, 1), 6);
    /* a BOM is not data; whitespace is */
    st = scan("\xEF\xBB\xBF\na\n \n", &d);
    ASSERT_STATS(st, 2, 0, 1, 1, 2);

    /* the file scanner agrees across its 1 MiB read chunks: a CRLF, a
     * doubled quote and an escape split by the chunk boundary */
    size_t big = (1u << 20) * 3 + 100;
    char *buf = malloc(big + 1);
    assert_non_null(buf);
    memset(buf, 'x', big);
    memcpy(buf, "a,b\n", 4);
    size_t cut[] = {(1u << 20) - 1, 2 * (1u << 20) - 1, 3 * (1u << 20) - 1};
    memcpy(buf + cut[0], "\r\n", 2);
    memcpy(buf + cut[1] - 2, ",\"\"\"\n", 5); /* open, then "" split by the boundary, a quoted LF */
    memcpy(buf + cut[2], "\\\"\"\n", 4);     /* escape | quote across the boundary, close, LF */
    buf[big - 1] = '\n';
    buf[big] = '\0';
    silt_csv_stats sm, sf;
    assert_int_equal(silt_read_csv_scan_mem(buf, big, &d, &sm), 0);
    const char *p = TP("chunks.csv");
    assert_int_equal(tu_write_file(p, buf, big), 0);
    assert_int_equal(silt_read_csv_scan(p, &d, "chunks.csv", &sf), 0);
    assert_memory_equal(&sm, &sf, sizeof sm);
    ASSERT_STATS(sm, 4, 0, 0, cut[2] + 3 - cut[0] - 2, 3);
    free(buf);
    assert_int_equal(silt_read_csv_scan(TP("nope.csv"), &d, "nope.csv", &sf), SILT_ENOTFOUND);
    assert_string_equal(silt_error_last(), "nope.csv: No such file or directory");
}

static void test_ndjson_count(void **state)
{
    (void)state;
    uint64_t n = 99;
    assert_int_equal(silt_read_ndjson_count_mem("", 0, &n), 0);
    assert_int_equal(n, 0);
    const char *t = "\xEF\xBB\xBF{\"a\":1}\n\n  \t \n{}\r\n\r\n{\"a\":2}";
    assert_int_equal(silt_read_ndjson_count_mem(t, strlen(t), &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(silt_read_ndjson_count(W("c.ndjson", t, 0), "c.ndjson", &n), 0);
    assert_int_equal(n, 3);
    assert_int_equal(silt_read_ndjson_count_mem(" \n\t", 3, &n), 0);
    assert_int_equal(n, 0);
}

/* The header is the first record: empty lines before it are skipped (DuckDB
 * would take the first physical line), whether a schema names the columns
 * or the header does, and line numbers stay physical. */
static void test_csv_leading_empty_lines(void **state)
{
    (void)state;
    odf_ReadStepCsv h = {.has_header = true, .header = true};
    const char *p = W("lead.csv", "\n\na,b\n1,2\n\n3,4\n", 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &h, p, "t"), 0);
    assert_string_equal(types("t"), "a VARCHAR, b VARCHAR");
    assert_string_equal(dump("t"), "1|2\n3|4\n");
    const char *sc[] = {"a BIGINT", "b BIGINT"};
    odf_ReadStepCsv hs = {.has_header = true, .header = true, .ddl_schema = ddl(2, sc)};
    assert_int_equal(read1(ODF_ReadStep_Csv, &hs, p, "t"), 0);
    assert_true(silt_read_last_was_fast());
    assert_string_equal(dump("t"), "1|2\n3|4\n");
    read_fails(ODF_ReadStep_Csv, &hs, W("lead2.csv", "\n\na,b\n1,2\nx,4\n", 0), "lead2.csv", SILT_EINVAL,
               "lead2.csv: row 2 (line 5), column 'a': cannot convert 'x' to BIGINT");
    /* one column: the empty lines after the header are NULL rows */
    const char *sc1[] = {"a BIGINT"};
    odf_ReadStepCsv h1 = {.has_header = true, .header = true, .ddl_schema = ddl(1, sc1)};
    assert_int_equal(read1(ODF_ReadStep_Csv, &h1, W("lead1.csv", "\n\na\n1\n\n2\n", 0), "t"), 0);
    assert_string_equal(dump("t"), "1\nNULL\n2\n");
    silt_read_set_mode(SILT_READ_SLOW);
    assert_int_equal(read1(ODF_ReadStep_Csv, &h1, TP("lead1.csv"), "t"), 0);
    assert_string_equal(dump("t"), "1\nNULL\n2\n");
    read_fails(ODF_ReadStep_Csv, &h1, W("lead3.csv", "\n\na\n1\n\nx\n", 0), "lead3.csv", SILT_EINVAL,
               "lead3.csv: row 3 (line 6), column 'a': cannot convert 'x' to BIGINT");
    silt_read_set_mode(SILT_READ_AUTO);
}

/* Writes "id,name\n1,a\n2,<len x 'x'>\n3,c\n" after `pad` rows "p<i>,<pad>"
 * (so the long line starts further into the file). */
static const char *long_line_csv(const char *name, size_t len, size_t pad)
{
    const char *p = TP(name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs("id,name\n1,a\n", f);
    for (size_t i = 0; i < pad; i++)
        fprintf(f, "%zu,padding-padding\n", 100 + i);
    fputs("2,", f);
    char blk[65536];
    memset(blk, 'x', sizeof blk);
    for (size_t left = len; left;) {
        size_t n = left < sizeof blk ? left : sizeof blk;
        assert_int_equal(fwrite(blk, 1, n, f), n);
        left -= n;
    }
    fputs("\n3,c\n", f);
    assert_int_equal(fclose(f), 0);
    return p;
}

static void expect_long_rows(size_t len, size_t pad)
{
    char q[200];
    uint64_t n = 0;
    assert_int_equal(silt_engine_query_u64(E, &n, "SELECT count(*) FROM t"), 0);
    assert_int_equal(n, 3 + pad);
    snprintf(q, sizeof q, "SELECT length(name) FROM t WHERE id::VARCHAR = '2'");
    assert_int_equal(silt_engine_query_u64(E, &n, q), 0);
    assert_int_equal(n, len);
    char *s = NULL;
    assert_int_equal(silt_engine_query_text(E, &s, "SELECT string_agg(id::VARCHAR || ':' || CASE WHEN id::VARCHAR = '2' "
                                                   "THEN 'long' ELSE name END, ',' ORDER BY rowid) FROM t "
                                                   "WHERE id::VARCHAR IN ('1', '2', '3')"), 0);
    assert_string_equal(s, "1:a,2:long,3:c");
    free(s);
}

/* Lines longer than DuckDB's default max_line_size (2,000,000 bytes) are read
 * whole, wherever they lie; DuckDB 1.4 with store_rejects drops a line that
 * spans a whole buffer (>= 32,000,000 bytes), or a long one crossing a buffer
 * boundary, without a rejects entry. */
static void test_csv_long_lines(void **state)
{
    (void)state;
    const char *sc[] = {"id BIGINT", "name STRING"};
    odf_ReadStepCsv c = {.has_header = true, .header = true, .ddl_schema = ddl(2, sc)};
    odf_ReadStepCsv v = {.has_header = true, .header = true};
    const char *p33 = long_line_csv("l33.csv", 33000000, 0);
    /* the upstream behaviour this works around */
    uint64_t n = 0;
    char q[512];
    snprintf(q, sizeof q, "SELECT count(*) FROM read_csv('%s', auto_detect=false, header=true, strict_mode=true, "
                          "columns={'id': 'VARCHAR', 'name': 'VARCHAR'}, store_rejects=true)", p33);
    assert_int_equal(silt_engine_query_u64(E, &n, q), 0);
    assert_int_equal(n, 2);
    assert_int_equal(silt_engine_query_u64(E, &n, "SELECT count(*) FROM reject_errors"), 0);
    assert_int_equal(n, 0);
    assert_int_equal(silt_engine_exec(E, "DROP TABLE reject_errors; DROP TABLE reject_scans"), 0);

    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p33, "t"), 0);
    assert_true(silt_read_last_was_fast());
    expect_long_rows(33000000, 0);
    silt_read_set_mode(SILT_READ_SLOW);
    assert_int_equal(read1(ODF_ReadStep_Csv, &c, p33, "t"), 0);
    expect_long_rows(33000000, 0);
    assert_int_equal(read1(ODF_ReadStep_Csv, &v, p33, "t"), 0);
    expect_long_rows(33000000, 0);
    silt_read_set_mode(SILT_READ_AUTO);
    unlink(p33);
    /* 2 MB and 31 MB lines (a clean DuckDB error before), and a 10 MB line
     * starting 23 MB into the file, across DuckDB's first buffer boundary */
    static const struct { size_t len, pad; } cases[] = {{2000001, 0}, {31000000, 0}, {10000000, 1400000}};
    for (size_t i = 0; i < 3; i++) {
        const char *p = long_line_csv("l.csv", cases[i].len, cases[i].pad);
        assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
        expect_long_rows(cases[i].len, cases[i].pad);
        silt_read_set_mode(SILT_READ_SLOW);
        assert_int_equal(read1(ODF_ReadStep_Csv, &c, p, "t"), 0);
        expect_long_rows(cases[i].len, cases[i].pad);
        silt_read_set_mode(SILT_READ_AUTO);
        unlink(p);
    }
    /* past the limit: an error naming the line, before DuckDB reads it (a
     * sparse file: the record is NUL bytes) */
    const char *ph = TP("huge.csv");
    FILE *f = fopen(ph, "wb");
    assert_non_null(f);
    fputs("id,name\n1,a\n2,", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(truncate(ph, 12 + (off_t)SILT_READ_CSV_MAX_RECORD + 1), 0);
    f = fopen(ph, "ab");
    assert_non_null(f);
    fputs("\n3,c\n", f);
    assert_int_equal(fclose(f), 0);
    read_fails(ODF_ReadStep_Csv, &c, ph, "huge.csv", SILT_EINVAL,
               "huge.csv: line 3: a record of 268435457 bytes is longer than the limit of 268435456 bytes");
    unlink(ph);
}

/* The rows the reader produced must be the records of the file: a Parquet
 * footer claiming 5 rows over row groups holding 3 is refused. */
static void test_row_count_crosscheck(void **state)
{
    (void)state;
    const char *p = TP("tamper.parquet");
    assert_int_equal(silt_engine_execf(E, "COPY (SELECT * FROM (VALUES (1, 'x'), (2, 'y'), (3, 'z')) v(id, s)) "
                                          "TO '%s' (FORMAT parquet)", p), 0);
    size_t len = 0;
    unsigned char *b = (unsigned char *)tu_read_file(p, &len);
    assert_non_null(b);
    uint32_t flen = (uint32_t)b[len - 8] | (uint32_t)b[len - 7] << 8 | (uint32_t)b[len - 6] << 16 |
                    (uint32_t)b[len - 5] << 24;
    /* FileMetaData.num_rows: field 3 (i64, header 0x16) right after the
     * schema list's last STOP byte; zigzag(3) = 6 becomes zigzag(5) = 10 */
    size_t start = len - 8 - flen, hits = 0, at = 0;
    for (size_t i = start; i + 2 < len - 8; i++)
        if (b[i] == 0x00 && b[i + 1] == 0x16 && b[i + 2] == 0x06)
            hits++, at = i + 2;
    assert_int_equal(hits, 1);
    b[at] = 0x0a;
    assert_int_equal(tu_write_file(p, b, len), 0);
    free(b);
    uint64_t n = 0;
    char q[300];
    snprintf(q, sizeof q, "SELECT count(*) FROM (SELECT * FROM read_parquet('%s'))", p);
    assert_int_equal(silt_engine_query_u64(E, &n, q), 0);
    assert_int_equal(n, 3);
    odf_ReadStepParquet pq = {0};
    read_fails(ODF_ReadStep_Parquet, &pq, p, "tamper.parquet", SILT_EINTERNAL,
               "tamper.parquet: row count cross-check failed: the reader produced 3 rows, the file has 5 records");
    silt_read_set_mode(SILT_READ_SLOW);
    read_fails(ODF_ReadStep_Parquet, &pq, p, "tamper.parquet", SILT_EINTERNAL,
               "tamper.parquet: row count cross-check failed: the reader produced 3 rows, the file has 5 records");
    silt_read_set_mode(SILT_READ_AUTO);
}

/* --format F into a source reading another format keeps the declared schema
 * (CSV then without a header); the source's own format keeps everything. */
static void test_read_step_transcode(void **state)
{
    (void)state;
    const char *sc[] = {"city STRING", "population BIGINT"};
    odf_ReadStepNdJson nd = {.ddl_schema = ddl(2, sc), .date_format = "yyyy-MM-dd"};
    odf_union base = step(ODF_ReadStep_NdJson, &nd), out;
    assert_int_equal(silt_read_step_transcode(A, &base, "csv", &out), 0);
    assert_int_equal(out.type, ODF_ReadStep_Csv);
    const odf_ReadStepCsv *c = out.value;
    assert_true(c->has_header && !c->header && !c->infer_schema);
    assert_true(c->ddl_schema.present && c->ddl_schema.n == 2 && c->ddl_schema.items == nd.ddl_schema.items);
    assert_null(c->schema);
    assert_null(c->date_format); /* options of the source's format stay there */
    assert_int_equal(read1(out.type, out.value, W("tc.csv", "Berlin,3645000\nParis,2161000\n", 0), "t"), 0);
    assert_string_equal(types("t"), "city VARCHAR, population BIGINT");
    assert_string_equal(dump("t"), "Berlin|3645000\nParis|2161000\n");
    /* the source's own format: the very same step */
    assert_int_equal(silt_read_step_transcode(A, &base, "ndjson", &out), 0);
    assert_int_equal(out.type, ODF_ReadStep_NdJson);
    assert_ptr_equal(out.value, &nd);
    /* a structured schema is shared as is; JSON columns are matched by name */
    odf_DataSchema *ds = NULL;
    assert_int_equal(silt_schema_from_ddl(A, &nd.ddl_schema, &ds), 0);
    odf_ReadStepCsv cs = {.has_header = true, .header = true, .separator = ";", .schema = ds};
    odf_union cbase = step(ODF_ReadStep_Csv, &cs);
    assert_int_equal(silt_read_step_transcode(A, &cbase, "ndjson", &out), 0);
    assert_int_equal(out.type, ODF_ReadStep_NdJson);
    assert_ptr_equal(((const odf_ReadStepNdJson *)out.value)->schema, ds);
    assert_int_equal(read1(out.type, out.value,
                           W("tc.ndjson", "{\"population\": \"7\", \"x\": 1, \"city\": \"Bonn\"}\n", 0), "t"), 0);
    assert_string_equal(types("t"), "city VARCHAR, population BIGINT");
    assert_string_equal(dump("t"), "Bonn|7\n");
    assert_int_equal(silt_read_step_transcode(A, &cbase, "parquet", &out), 0);
    assert_ptr_equal(((const odf_ReadStepParquet *)out.value)->schema, ds);
    /* no declared schema: the format's default (CSV: header, inferSchema) */
    odf_ReadStepJson j = {.sub_path = "rows"};
    odf_union jbase = step(ODF_ReadStep_Json, &j);
    assert_int_equal(silt_read_step_transcode(A, &jbase, "csv", &out), 0);
    c = out.value;
    assert_true(c->header && c->infer_schema && !c->schema && !c->ddl_schema.present);
    assert_int_equal(silt_read_step_transcode(A, &jbase, "xml", &out), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "unknown format 'xml'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_defaults),   cmocka_unit_test(test_csv_header_infer),
        cmocka_unit_test(test_csv_dialect),    cmocka_unit_test(test_csv_encodings),
        cmocka_unit_test(test_csv_schema),     cmocka_unit_test(test_csv_date_formats),
        cmocka_unit_test(test_csv_errors),     cmocka_unit_test(test_json),
        cmocka_unit_test(test_ndjson),         cmocka_unit_test(test_geojson),
        cmocka_unit_test(test_json_number),    cmocka_unit_test(test_parquet),
        cmocka_unit_test(test_shapefile),      cmocka_unit_test(test_multi_file),
        cmocka_unit_test(test_formats),        cmocka_unit_test(test_fast_path_used),
        cmocka_unit_test(test_fast_vs_slow),   cmocka_unit_test(test_csv_count),
        cmocka_unit_test(test_csv_count_blocks),
        cmocka_unit_test(test_ndjson_count),   cmocka_unit_test(test_csv_leading_empty_lines),
        cmocka_unit_test(test_csv_long_lines), cmocka_unit_test(test_row_count_crosscheck),
        cmocka_unit_test(test_read_step_transcode),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
