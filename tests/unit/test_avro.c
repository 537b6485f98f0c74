/* test_avro.c — unit tests for src/engine/avro.h: the container header
 * parser, the writer-schema parser, the Avro -> ODF mapping of `silt schema
 * infer` (every type and logical type), the resolution rules against a
 * dataset schema with their exact messages, and silt_read_avro's
 * confinement rule (through a real engine). */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/avro.h"
#include "engine/engine.h"
#include "engine/schema.h"
#include "odf/desc.h"
#include "odf/yaml.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

static silt_arena *A;

static int setup(void **state)
{
    (void)state;
    A = silt_arena_new();
    return A ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    silt_arena_free(A);
    A = NULL;
    return 0;
}

/* The ODF description of the schema inferred from Avro record fields `fields`. */
static char *infer(const char *fields, int *rc)
{
    char json[4096];
    snprintf(json, sizeof json, "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"n\",\"fields\":[%s]}", fields);
    silt_avro_node *w = NULL;
    odf_DataSchema *s = NULL;
    *rc = silt_avro_schema_parse(A, json, strlen(json), &w);
    if (!*rc)
        *rc = silt_avro_to_odf(A, w, &s);
    if (*rc)
        return NULL;
    silt_buf b = SILT_BUF_INIT;
    silt_schema_describe(&b, s);
    return silt_buf_detach(&b);
}

static void assert_infer(const char *fields, const char *want)
{
    int rc;
    char *got = infer(fields, &rc);
    if (rc)
        fail_msg("infer %s: %s", fields, silt_error_last());
    assert_string_equal(got, want);
    free(got);
}

static void test_infer_every_type(void **state)
{
    (void)state;
    assert_infer("{\"name\":\"b\",\"type\":\"boolean\"},{\"name\":\"i\",\"type\":\"int\"},"
                 "{\"name\":\"l\",\"type\":\"long\"},{\"name\":\"f\",\"type\":\"float\"},"
                 "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"s\",\"type\":\"string\"},"
                 "{\"name\":\"y\",\"type\":\"bytes\"},{\"name\":\"z\",\"type\":\"null\"}",
                 "b: Bool, i: Int32, l: Int64, f: Float32, d: Float64, s: String, y: Binary, z: Null");
    assert_infer("{\"name\":\"x\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":16}},"
                 "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
                 "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"E\"}},"
                 "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":[\"null\",\"F\"]}}",
                 "x: Binary(16), e: String, a: List<String>, m: Map<String, Option<Binary(16)>>");
    assert_infer("{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"In\",\"fields\":"
                 "[{\"name\":\"p\",\"type\":[\"long\",\"null\"]}]}},{\"name\":\"q\",\"type\":[\"null\",\"n.In\"]}",
                 "r: Struct<p: Option<Int64>>, q: Option<Struct<p: Option<Int64>>>");
    assert_infer("{\"name\":\"d1\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":9,\"scale\":3}},"
                 "{\"name\":\"d2\",\"type\":{\"type\":\"fixed\",\"name\":\"D\",\"size\":12,\"logicalType\":\"decimal\","
                 "\"precision\":28}},"
                 "{\"name\":\"dt\",\"type\":{\"type\":\"int\",\"logicalType\":\"date\"}},"
                 "{\"name\":\"t1\",\"type\":{\"type\":\"int\",\"logicalType\":\"time-millis\"}},"
                 "{\"name\":\"t2\",\"type\":{\"type\":\"long\",\"logicalType\":\"time-micros\"}},"
                 "{\"name\":\"s1\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}},"
                 "{\"name\":\"s2\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}},"
                 "{\"name\":\"u\",\"type\":{\"type\":\"string\",\"logicalType\":\"uuid\"}}",
                 "d1: Decimal(9, 3), d2: Decimal(28, 0), dt: Date, t1: Time(Millisecond), t2: Time(Microsecond), "
                 "s1: Timestamp(Millisecond, UTC), s2: Timestamp(Microsecond, UTC), u: String");
    /* invalid logical types are ignored (the underlying type is read) */
    assert_infer("{\"name\":\"a\",\"type\":{\"type\":\"string\",\"logicalType\":\"date\"}},"
                 "{\"name\":\"b\",\"type\":{\"type\":\"long\",\"logicalType\":\"local-timestamp-millis\"}},"
                 "{\"name\":\"c\",\"type\":{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":0}}",
                 "a: String, b: Int64, c: Binary");
}

static void assert_infer_fails(const char *fields, int code, const char *msg)
{
    int rc;
    char *got = infer(fields, &rc);
    free(got);
    assert_int_equal(rc, code);
    assert_string_equal(silt_error_last(), msg);
}

static void test_infer_refusals(void **state)
{
    (void)state;
    assert_infer_fails("{\"name\":\"u\",\"type\":[\"int\",\"string\"]}", SILT_EUNSUPPORTED,
                       "field 'u': unsupported union [int, string] (only a union of null and one other type maps to "
                       "a dataset type)");
    assert_infer_fails("{\"name\":\"r\",\"type\":{\"type\":\"record\",\"name\":\"I\",\"fields\":"
                       "[{\"name\":\"u\",\"type\":[\"null\",\"int\",\"long\"]}]}}",
                       SILT_EUNSUPPORTED,
                       "field 'r.u': unsupported union [null, int, long] (only a union of null and one other type "
                       "maps to a dataset type)");
    assert_infer_fails("{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"L\",\"fields\":"
                       "[{\"name\":\"next\",\"type\":[\"null\",\"L\"]}]}}",
                       SILT_EUNSUPPORTED,
                       "field 'n.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next.next': nested "
                       "deeper than 32 levels (a recursive record?)");
    assert_infer_fails("{\"name\":\"x\",\"type\":\"Nope\"}", SILT_ECORRUPT, "Avro schema: unknown type 'Nope'");
    assert_infer_fails("{\"name\":\"x\",\"type\":\"int\"},{\"name\":\"x\",\"type\":\"long\"}", SILT_ECORRUPT,
                       "Avro schema: record 'n.R' has two fields 'x'");
    silt_avro_node *w;
    assert_int_equal(silt_avro_schema_parse(A, "\"long\"", 6, &w), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "Avro schema: the top-level type is not a record");
    assert_int_equal(silt_avro_schema_parse(A, "{", 1, &w), SILT_ECORRUPT);
}

/* resolution of writer field type `wtype` against dataset field type `ryaml` */
static int resolve(const char *wtype, const char *ryaml)
{
    char json[2048], yaml[2048];
    snprintf(json, sizeof json, "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"v\",\"type\":%s}]}", wtype);
    snprintf(yaml, sizeof yaml, "fields:\n  - name: v\n    type: %s\n", ryaml);
    silt_avro_node *w = NULL;
    void *r = NULL;
    silt_avro_plan *p = NULL;
    int rc = silt_avro_schema_parse(A, json, strlen(json), &w);
    assert_int_equal(rc, 0);
    rc = odf_yaml_parse(A, yaml, strlen(yaml), "schema", &odf_desc_DataSchema, &r);
    if (rc)
        fail_msg("%s: %s", ryaml, silt_error_last());
    return silt_avro_resolve(A, w, r, &p);
}

static void ok_resolve(const char *w, const char *r)
{
    if (resolve(w, r))
        fail_msg("%s -> %s: %s", w, r, silt_error_last());
}

static void bad_resolve(const char *w, const char *r, int code, const char *msg)
{
    assert_int_equal(resolve(w, r), code);
    assert_string_equal(silt_error_last(), msg);
}

static void test_resolve_rules(void **state)
{
    (void)state;
    /* promotions of the Avro specification */
    ok_resolve("\"int\"", "{kind: Int64}");
    ok_resolve("\"int\"", "{kind: Float32}");
    ok_resolve("\"long\"", "{kind: Float64}");
    ok_resolve("\"float\"", "{kind: Float64}");
    ok_resolve("\"bytes\"", "{kind: String}");
    ok_resolve("\"string\"", "{kind: Binary}");
    ok_resolve("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}", "{kind: String}");
    ok_resolve("{\"type\":\"fixed\",\"name\":\"F\",\"size\":4}", "{kind: Binary, fixedLength: 4}");
    /* Option: a nullable union, a plain writer type, or null itself */
    ok_resolve("[\"null\",\"long\"]", "{kind: Option, inner: {kind: Int64}}");
    ok_resolve("\"long\"", "{kind: Option, inner: {kind: Int64}}");
    ok_resolve("\"null\"", "{kind: Option, inner: {kind: String}}");
    /* logical types: decimal with the same scale and no smaller precision; any timestamp unit */
    ok_resolve("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":5,\"scale\":2}",
               "{kind: Decimal, precision: 38, scale: 2}");
    ok_resolve("{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}", "{kind: Timestamp, unit: Nanosecond}");
    ok_resolve("{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}",
               "{kind: Timestamp, unit: Second, timezone: Europe/Paris}");
    ok_resolve("{\"type\":\"int\",\"logicalType\":\"time-millis\"}", "{kind: Time, unit: Microsecond}");
    /* nested: arrays, maps, records by field name (writer extras skipped, absent Option fields null) */
    ok_resolve("{\"type\":\"array\",\"items\":\"int\"}", "{kind: List, itemType: {kind: Int64}}");
    ok_resolve("{\"type\":\"map\",\"values\":\"int\"}", "{kind: Map, keyType: {kind: String}, valueType: {kind: Int32}}");
    ok_resolve("{\"type\":\"record\",\"name\":\"I\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},{\"name\":\"b\","
               "\"type\":\"string\"}]}",
               "{kind: Struct, fields: [{name: b, type: {kind: String}}, {name: c, type: {kind: Option, inner: {kind: "
               "Int8}}}]}");

    bad_resolve("\"long\"", "{kind: Int32}", SILT_EINVAL,
                "field 'v': the file's type long does not resolve to the schema's Int32");
    bad_resolve("\"double\"", "{kind: Float32}", SILT_EINVAL,
                "field 'v': the file's type double does not resolve to the schema's Float32");
    bad_resolve("\"int\"", "{kind: Int16}", SILT_EINVAL,
                "field 'v': the file's type int does not resolve to the schema's Int16");
    bad_resolve("[\"null\",\"long\"]", "{kind: Int64}", SILT_EINVAL,
                "field 'v': the file's type [null, long] does not resolve to the schema's Int64: the file's type is "
                "nullable, the schema's is not Option");
    bad_resolve("[\"string\",\"long\"]", "{kind: Option, inner: {kind: Int64}}", SILT_EUNSUPPORTED,
                "field 'v': unsupported union [string, long] (only a union of null and one other type maps to a "
                "dataset type)");
    bad_resolve("{\"type\":\"fixed\",\"name\":\"F\",\"size\":4}", "{kind: Binary, fixedLength: 8}", SILT_EINVAL,
                "field 'v': the file's type fixed F does not resolve to the schema's Binary(8)");
    bad_resolve("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":5,\"scale\":2}",
                "{kind: Decimal, precision: 10, scale: 3}", SILT_EINVAL,
                "field 'v': the file's type decimal does not resolve to the schema's Decimal(10, 3)");
    bad_resolve("{\"type\":\"long\",\"logicalType\":\"time-micros\"}", "{kind: Time, unit: Nanosecond}", SILT_EINVAL,
                "field 'v': the file's type time-micros does not resolve to the schema's Time(Nanosecond)");
    bad_resolve("\"long\"", "{kind: Timestamp}", SILT_EINVAL,
                "field 'v': the file's type long does not resolve to the schema's Timestamp(Millisecond, UTC)");
    bad_resolve("{\"type\":\"map\",\"values\":\"int\"}", "{kind: Map, keyType: {kind: Int32}, valueType: {kind: Int32}}",
                SILT_EINVAL,
                "field 'v': the file's type map does not resolve to the schema's Map<Int32, Int32>: Avro map keys are "
                "strings");
    bad_resolve("{\"type\":\"record\",\"name\":\"I\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}",
                "{kind: Struct, fields: [{name: a, type: {kind: String}}]}", SILT_EINVAL,
                "field 'v.a': the file's type int does not resolve to the schema's String");
    bad_resolve("{\"type\":\"record\",\"name\":\"I\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}",
                "{kind: Struct, fields: [{name: b, type: {kind: Int32}}]}", SILT_EINVAL,
                "field 'v.b': missing in the file's writer schema (only an Option field may be absent)");
}

/* A container header: magic, {avro.codec, avro.schema}, end of map, sync. */
static size_t header(uint8_t *buf, const char *codec, const char *schema)
{
    size_t n = 0, cl = strlen(codec), sl = strlen(schema);
    memcpy(buf, "Obj\x01", 4);
    n = 4;
    buf[n++] = 4; /* 2 entries, zig-zag */
    buf[n++] = 20;
    memcpy(buf + n, "avro.codec", 10);
    n += 10;
    buf[n++] = (uint8_t)(2 * cl);
    memcpy(buf + n, codec, cl);
    n += cl;
    buf[n++] = 22;
    memcpy(buf + n, "avro.schema", 11);
    n += 11;
    buf[n++] = (uint8_t)((2 * sl) & 0x7f) | 0x80;
    buf[n++] = (uint8_t)((2 * sl) >> 7);
    memcpy(buf + n, schema, sl);
    n += sl;
    buf[n++] = 0;
    memset(buf + n, 0xab, 16);
    return n + 16;
}

static void test_header(void **state)
{
    (void)state;
    const char *schema = "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"}]}";
    uint8_t buf[512];
    size_t n = header(buf, "deflate", schema);
    silt_avro_header h;
    assert_int_equal(silt_avro_header_parse(A, buf, n, &h), 0);
    assert_string_equal(h.codec, "deflate");
    assert_string_equal(h.schema, schema);
    assert_int_equal(h.header_len, n);
    for (size_t cut = 0; cut < n; cut++) {
        assert_int_equal(silt_avro_header_parse(A, buf, cut, &h), SILT_ECORRUPT);
        assert_non_null(strstr(silt_error_last(), "not an Avro object container file ("));
    }
    assert_int_equal(silt_avro_header_parse(A, (const uint8_t *)"PAR1xxxx", 8, &h), SILT_ECORRUPT);
    assert_string_equal(silt_error_last(), "not an Avro object container file (no 'Obj\\x01' magic)");
    assert_true(silt_avro_codec_supported("null") && silt_avro_codec_supported("deflate") &&
                silt_avro_codec_supported("snappy") && silt_avro_codec_supported("lzma"));
    assert_false(silt_avro_codec_supported("bzip2") || silt_avro_codec_supported("xz") ||
                 silt_avro_codec_supported("zstandard"));
}

/* silt_read_avro on a confined engine reads only the files it allowed. */
static void test_confinement(void **state)
{
    (void)state;
    char *dir = tu_mkdtemp();
    char allowed[512], other[512], sql[2048];
    snprintf(allowed, sizeof allowed, "%s/a.avro", dir);
    snprintf(other, sizeof other, "%s/b.avro", dir);
    assert_int_equal(tu_write_file(allowed, "x", 1), 0);
    assert_int_equal(tu_write_file(other, "x", 1), 0);
    silt_engine *e;
    assert_int_equal(silt_engine_open(&e, NULL), 0);
    const char *files[] = {allowed};
    silt_confine_opts o = {.files = files, .n_files = 1};
    assert_int_equal(silt_engine_confine(e, &o), 0);
    uint64_t n;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM silt_read_avro('%s', '{\"fields\":[]}')", other);
    assert_int_equal(silt_engine_query_u64(e, &n, sql), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "reading files is not allowed: " SILT_AVRO_REFUSAL);
    /* the allowed file is opened (and refused as not Avro: it is one byte) */
    snprintf(sql, sizeof sql, "SELECT count(*) FROM silt_read_avro('%s', '{\"fields\":[]}')", allowed);
    assert_int_equal(silt_engine_query_u64(e, &n, sql), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "not an Avro object container file (no 'Obj\\x01' magic)"));
    silt_engine_free(e);
    tu_rmrf(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_infer_every_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_infer_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_header, setup, teardown),
        cmocka_unit_test(test_confinement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
