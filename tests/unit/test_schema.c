/* test_schema.c — unit tests for src/engine/schema: ODF DataType -> DuckDB
 * type text, DuckDB tables -> ODF DataSchema (through a real engine), Spark
 * DDL and Foundry field lists, description and equality. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "engine/engine.h"
#include "engine/schema.h"
#include "odf/schema_rules.h"
#include "util/arena.h"
#include "util/buf.h"
#include "util/error.h"

/* ------------------------------------------------------------------ helpers */

static silt_arena *A;
static silt_engine *E;

static int setup(void **state)
{
    A = silt_arena_new();
    if (!A)
        return -1;
    return silt_engine_open(&E, NULL) ? -1 : 0;
}

static int teardown(void **state)
{
    silt_engine_free(E);
    silt_arena_free(A);
    E = NULL;
    A = NULL;
    return 0;
}

static odf_union T(uint8_t v)
{
    odf_union u = {0};
    assert_int_equal(silt_schema_type_simple(A, &u, v), 0);
    return u;
}

static odf_union OPT(odf_union inner)
{
    odf_union u = {0};
    assert_int_equal(silt_schema_type_option(A, &u, &inner), 0);
    return u;
}

static odf_union DEC(uint32_t p, int32_t s)
{
    odf_union u = T(ODF_DataType_Decimal);
    odf_DataTypeDecimal *d = u.value;
    d->precision = p;
    d->scale = s;
    return u;
}

/* unit < 0: absent */
static odf_union TS(int unit, const char *tz)
{
    odf_union u = T(ODF_DataType_Timestamp);
    odf_DataTypeTimestamp *t = u.value;
    t->has_unit = unit >= 0;
    t->unit = unit < 0 ? 0 : unit;
    t->timezone = tz ? silt_arena_strdup(A, tz) : NULL;
    return u;
}

static odf_union UNIT(uint8_t variant, int unit)
{
    odf_union u = T(variant);
    odf_DataTypeTime *t = u.value; /* Time and Duration share the layout */
    t->has_unit = unit >= 0;
    t->unit = unit < 0 ? 0 : unit;
    return u;
}

static odf_union BIN(long fixed)
{
    odf_union u = T(ODF_DataType_Binary);
    odf_DataTypeBinary *b = u.value;
    b->has_fixed_length = fixed >= 0;
    b->fixed_length = fixed < 0 ? 0 : (uint64_t)fixed;
    return u;
}

static odf_union LIST(odf_union item, long fixed)
{
    odf_union u = T(ODF_DataType_List);
    odf_DataTypeList *l = u.value;
    l->item_type = item;
    l->has_fixed_length = fixed >= 0;
    l->fixed_length = fixed < 0 ? 0 : (uint64_t)fixed;
    return u;
}

static odf_union MAP(odf_union k, odf_union v)
{
    odf_union u = T(ODF_DataType_Map);
    odf_DataTypeMap *m = u.value;
    m->key_type = k;
    m->value_type = v;
    return u;
}

static odf_DataField *FIELD(const char *name, odf_union t)
{
    odf_DataField *f = silt_arena_alloc(A, sizeof *f);
    assert_non_null(f);
    f->name = silt_arena_strdup(A, name);
    f->type = t;
    return f;
}

/* Struct of n fields given as name/type pairs. */
static odf_union STRUCT2(const char *n1, odf_union t1, const char *n2, odf_union t2)
{
    odf_union u = T(ODF_DataType_Struct);
    odf_DataTypeStruct *s = u.value;
    s->fields.n = n2 ? 2 : 1;
    s->fields.present = true;
    s->fields.items = silt_arena_alloc(A, 2 * sizeof(void *));
    s->fields.items[0] = FIELD(n1, t1);
    if (n2)
        s->fields.items[1] = FIELD(n2, t2);
    return u;
}

static odf_DataSchema *SCHEMA(size_t n, odf_DataField **fields)
{
    odf_DataSchema *s = silt_arena_alloc(A, sizeof *s);
    s->fields.items = (void **)fields;
    s->fields.n = n;
    s->fields.present = true;
    return s;
}

static void assert_duck(odf_union t, const char *expect)
{
    silt_buf b = SILT_BUF_INIT;
    int rc = silt_schema_type_to_duckdb(&b, &t);
    if (rc)
        fail_msg("%s: %s", expect, silt_error_last());
    assert_string_equal(b.data, expect);
    silt_buf_free(&b);
}

static void assert_duck_err(odf_union t, int code, const char *msg)
{
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_schema_type_to_duckdb(&b, &t), code);
    assert_string_equal(silt_error_last(), msg);
    silt_buf_free(&b);
}

static void assert_describe(const odf_DataSchema *s, const char *expect)
{
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_schema_describe(&b, s), 0);
    assert_string_equal(b.data ? b.data : "", expect);
    silt_buf_free(&b);
}

static odf_DataField *field_at(const odf_DataSchema *s, size_t i)
{
    assert_true(i < s->fields.n);
    return s->fields.items[i];
}

/* ------------------------------------------------------- ODF -> DuckDB text */

static void test_to_duckdb_scalars(void **state)
{
    assert_duck(T(ODF_DataType_Bool), "BOOLEAN");
    assert_duck(T(ODF_DataType_Int8), "TINYINT");
    assert_duck(T(ODF_DataType_Int16), "SMALLINT");
    assert_duck(T(ODF_DataType_Int32), "INTEGER");
    assert_duck(T(ODF_DataType_Int64), "BIGINT");
    assert_duck(T(ODF_DataType_UInt8), "UTINYINT");
    assert_duck(T(ODF_DataType_UInt16), "USMALLINT");
    assert_duck(T(ODF_DataType_UInt32), "UINTEGER");
    assert_duck(T(ODF_DataType_UInt64), "UBIGINT");
    assert_duck(T(ODF_DataType_Float16), "FLOAT");
    assert_duck(T(ODF_DataType_Float32), "FLOAT");
    assert_duck(T(ODF_DataType_Float64), "DOUBLE");
    assert_duck(DEC(10, 2), "DECIMAL(10,2)");
    assert_duck(DEC(38, 0), "DECIMAL(38,0)");
    assert_duck(DEC(1, 1), "DECIMAL(1,1)");
    assert_duck(T(ODF_DataType_String), "VARCHAR");
    assert_duck(BIN(-1), "BLOB");
    assert_duck(BIN(16), "BLOB");
    assert_duck(T(ODF_DataType_Date), "DATE");
    assert_duck(UNIT(ODF_DataType_Time, -1), "TIME");
    assert_duck(UNIT(ODF_DataType_Time, ODF_TimeUnit_Millisecond), "TIME");
    assert_duck(UNIT(ODF_DataType_Time, ODF_TimeUnit_Microsecond), "TIME");
    assert_duck(UNIT(ODF_DataType_Time, ODF_TimeUnit_Nanosecond), "TIME_NS");
    assert_duck(UNIT(ODF_DataType_Duration, -1), "INTERVAL");
    assert_duck(UNIT(ODF_DataType_Duration, ODF_TimeUnit_Second), "INTERVAL");
    assert_duck(T(ODF_DataType_Null), "INTEGER");
}

static void test_to_duckdb_timestamps(void **state)
{
    assert_duck(TS(-1, NULL), "TIMESTAMP_MS"); /* ODF defaults: Millisecond, UTC */
    assert_duck(TS(ODF_TimeUnit_Second, "UTC"), "TIMESTAMP_S");
    assert_duck(TS(ODF_TimeUnit_Millisecond, "UTC"), "TIMESTAMP_MS");
    assert_duck(TS(ODF_TimeUnit_Microsecond, NULL), "TIMESTAMP");
    assert_duck(TS(ODF_TimeUnit_Nanosecond, "+00:00"), "TIMESTAMP_NS");
    assert_duck(TS(ODF_TimeUnit_Millisecond, "Etc/UTC"), "TIMESTAMP_MS");
    assert_duck(TS(ODF_TimeUnit_Millisecond, "Z"), "TIMESTAMP_MS");
    assert_duck(TS(ODF_TimeUnit_Millisecond, "America/New_York"), "TIMESTAMPTZ");
    assert_duck(TS(ODF_TimeUnit_Nanosecond, "+07:30"), "TIMESTAMPTZ");
}

static void test_to_duckdb_nested(void **state)
{
    /* Option is transparent at every level */
    assert_duck(OPT(T(ODF_DataType_Int64)), "BIGINT");
    assert_duck(LIST(OPT(T(ODF_DataType_String)), -1), "VARCHAR[]");
    assert_duck(LIST(T(ODF_DataType_Int32), 3), "INTEGER[3]");
    assert_duck(LIST(LIST(T(ODF_DataType_Float64), -1), -1), "DOUBLE[][]");
    assert_duck(MAP(T(ODF_DataType_String), OPT(DEC(12, 4))), "MAP(VARCHAR, DECIMAL(12,4))");
    assert_duck(STRUCT2("a", OPT(T(ODF_DataType_Int32)), "we\"ird name", LIST(TS(-1, NULL), -1)),
                "STRUCT(\"a\" INTEGER, \"we\"\"ird name\" TIMESTAMP_MS[])");
    assert_duck(OPT(LIST(OPT(STRUCT2("x", MAP(T(ODF_DataType_Int8), T(ODF_DataType_Bool)), NULL, T(0))), -1)),
                "STRUCT(\"x\" MAP(TINYINT, BOOLEAN))[]");
}

static void test_to_duckdb_errors(void **state)
{
    assert_duck_err(DEC(39, 2), SILT_EUNSUPPORTED, "data type: Decimal precision 39 is outside 1..38");
    assert_duck_err(DEC(0, 0), SILT_EUNSUPPORTED, "data type: Decimal precision 0 is outside 1..38");
    assert_duck_err(DEC(5, 6), SILT_EUNSUPPORTED, "data type: Decimal scale 6 is outside 0..5");
    assert_duck_err(DEC(5, -2), SILT_EUNSUPPORTED, "data type: Decimal scale -2 is outside 0..5");
    odf_union empty = T(ODF_DataType_Struct);
    assert_duck_err(empty, SILT_EUNSUPPORTED, "data type: DuckDB has no STRUCT without fields");
    odf_union none = {0};
    assert_duck_err(none, SILT_EINVAL, "data type: missing or unknown data type (variant 0)");
    odf_union bad = {.type = 99, .value = A};
    assert_duck_err(bad, SILT_EINVAL, "data type: missing or unknown data type (variant 99)");
    assert_duck_err(TS(7, NULL), SILT_EINVAL, "data type: invalid Timestamp unit 7");
    assert_duck_err(UNIT(ODF_DataType_Time, 9), SILT_EINVAL, "data type: invalid Time unit 9");
    /* too deep */
    odf_union deep = T(ODF_DataType_Int32);
    for (int i = 0; i < 40; i++)
        deep = LIST(deep, -1);
    assert_duck_err(deep, SILT_EUNSUPPORTED, "data type: type nested deeper than 32 levels");
}

static void test_to_duckdb_columns(void **state)
{
    odf_DataField *f[] = {FIELD("offset", T(ODF_DataType_UInt64)), FIELD("op", T(ODF_DataType_UInt8)),
                          FIELD("system_time", TS(ODF_TimeUnit_Millisecond, "UTC")),
                          FIELD("Event \"Time\"", OPT(TS(ODF_TimeUnit_Millisecond, "UTC"))),
                          FIELD("v", OPT(DEC(9, 3)))};
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_schema_to_duckdb_columns(&b, SCHEMA(5, f)), 0);
    assert_string_equal(b.data, "\"offset\" UBIGINT, \"op\" UTINYINT, \"system_time\" TIMESTAMP_MS, "
                                "\"Event \"\"Time\"\"\" TIMESTAMP_MS, \"v\" DECIMAL(9,3)");
    silt_buf_free(&b);

    odf_DataField *g[] = {FIELD("ok", T(ODF_DataType_Int32)), FIELD("price", DEC(40, 2))};
    assert_int_equal(silt_schema_to_duckdb_columns(&b, SCHEMA(2, g)), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "schema field 'price': Decimal precision 40 is outside 1..38");
    silt_buf_free(&b);

    assert_int_equal(silt_schema_to_duckdb_columns(&b, SCHEMA(0, NULL)), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "schema: no fields");
    odf_DataField *h[] = {FIELD("", T(ODF_DataType_Int32))};
    assert_int_equal(silt_schema_to_duckdb_columns(&b, SCHEMA(1, h)), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "schema field 0: missing name");
    silt_buf_free(&b);
}

/* ------------------------------------------------------- DuckDB -> ODF */

static void test_from_table_all_types(void **state)
{
    assert_int_equal(silt_engine_exec(E,
        "CREATE TABLE t (c_bool BOOLEAN, c_i8 TINYINT, c_i16 SMALLINT, c_i32 INTEGER, c_i64 BIGINT, "
        "c_u8 UTINYINT, c_u16 USMALLINT, c_u32 UINTEGER, c_u64 UBIGINT, c_f32 FLOAT, c_f64 DOUBLE, "
        "c_dec DECIMAL(12,3), c_dec38 DECIMAL(38,10), c_huge HUGEINT, c_str VARCHAR, c_json JSON, "
        "c_enum ENUM('a','b'), c_blob BLOB, c_uuid UUID, c_date DATE, c_time TIME, c_time_ns TIME_NS, "
        "c_ts_s TIMESTAMP_S, c_ts_ms TIMESTAMP_MS, c_ts TIMESTAMP, c_ts_ns TIMESTAMP_NS, c_tstz TIMESTAMPTZ, "
        "c_iv INTERVAL, c_list INTEGER[], c_arr DOUBLE[3], c_nested STRUCT(a VARCHAR, \"b c\" TIMESTAMP_MS[])[], "
        "c_map MAP(VARCHAR, BIGINT), c_struct STRUCT(x DECIMAL(5,2), y MAP(INTEGER, VARCHAR[])))"), 0);
    const char *const req[] = {"c_i64", "c_ts_ms", "c_nested", NULL};
    odf_DataSchema *s = NULL;
    int rc = silt_schema_from_table(E, A, "t", req, &s);
    if (rc)
        fail_msg("%s", silt_error_last());
    assert_int_equal(s->fields.n, 33);
    assert_describe(s,
        "c_bool: Option<Bool>, c_i8: Option<Int8>, c_i16: Option<Int16>, c_i32: Option<Int32>, "
        "c_i64: Int64, c_u8: Option<UInt8>, c_u16: Option<UInt16>, c_u32: Option<UInt32>, "
        "c_u64: Option<UInt64>, c_f32: Option<Float32>, c_f64: Option<Float64>, "
        "c_dec: Option<Decimal(12, 3)>, c_dec38: Option<Decimal(38, 10)>, c_huge: Option<Decimal(38, 0)>, "
        "c_str: Option<String>, c_json: Option<String>, c_enum: Option<String>, c_blob: Option<Binary>, "
        "c_uuid: Option<Binary(16)>, c_date: Option<Date>, c_time: Option<Time(Microsecond)>, "
        "c_time_ns: Option<Time(Nanosecond)>, c_ts_s: Option<Timestamp(Second, UTC)>, "
        "c_ts_ms: Timestamp(Millisecond, UTC), c_ts: Option<Timestamp(Microsecond, UTC)>, "
        "c_ts_ns: Option<Timestamp(Nanosecond, UTC)>, c_tstz: Option<Timestamp(Microsecond, UTC)>, "
        "c_iv: Option<Duration(Microsecond)>, c_list: Option<List<Option<Int32>>>, "
        "c_arr: Option<List<Option<Float64>>>, "
        "c_nested: List<Option<Struct<a: Option<String>, b c: Option<List<Option<Timestamp(Millisecond, UTC)>>>>>>, "
        "c_map: Option<Map<String, Option<Int64>>>, "
        "c_struct: Option<Struct<x: Option<Decimal(5, 2)>, y: Option<Map<Int32, Option<List<Option<String>>>>>>>");

    /* exact structures, not only the rendering */
    odf_DataField *f = field_at(s, 4);
    assert_string_equal(f->name, "c_i64");
    assert_int_equal(f->type.type, ODF_DataType_Int64);
    assert_null(f->extra);
    f = field_at(s, 23);
    assert_int_equal(f->type.type, ODF_DataType_Timestamp);
    odf_DataTypeTimestamp *ts = f->type.value;
    assert_true(ts->has_unit);
    assert_int_equal(ts->unit, ODF_TimeUnit_Millisecond);
    assert_string_equal(ts->timezone, "UTC");
    f = field_at(s, 12);
    assert_int_equal(f->type.type, ODF_DataType_Option);
    odf_union *in = &((odf_DataTypeOption *)f->type.value)->inner;
    assert_int_equal(in->type, ODF_DataType_Decimal);
    assert_int_equal(((odf_DataTypeDecimal *)in->value)->precision, 38);
    assert_int_equal(((odf_DataTypeDecimal *)in->value)->scale, 10);
    f = field_at(s, 29); /* DOUBLE[3]: no fixed length after a Parquet round trip */
    in = &((odf_DataTypeOption *)f->type.value)->inner;
    assert_int_equal(in->type, ODF_DataType_List);
    assert_false(((odf_DataTypeList *)in->value)->has_fixed_length);
    f = field_at(s, 31); /* map: key plain, value Option, keysSorted absent */
    in = &((odf_DataTypeOption *)f->type.value)->inner;
    odf_DataTypeMap *m = in->value;
    assert_int_equal(m->key_type.type, ODF_DataType_String);
    assert_int_equal(m->value_type.type, ODF_DataType_Option);
    assert_false(m->has_keys_sorted);
    f = field_at(s, 18);
    in = &((odf_DataTypeOption *)f->type.value)->inner;
    assert_true(((odf_DataTypeBinary *)in->value)->has_fixed_length);
    assert_int_equal(((odf_DataTypeBinary *)in->value)->fixed_length, 16);
}

static void test_from_table_null_view_and_query(void **state)
{
    /* a view (DuckDB stores a NULL column of a view or table as INTEGER) */
    assert_int_equal(silt_engine_exec(E, "CREATE VIEW \"my view\" AS SELECT NULL AS n, 1::UBIGINT AS \"offset\", "
                                         "'x' AS s"), 0);
    const char *const req[] = {"offset", NULL};
    odf_DataSchema *s = NULL;
    assert_int_equal(silt_schema_from_table(E, A, "my view", req, &s), 0);
    assert_describe(s, "n: Option<Int32>, offset: UInt64, s: Option<String>");
    /* so does a query: Null never comes back from DuckDB */
    assert_int_equal(silt_schema_from_query(E, A, "SELECT NULL AS n, NULL::\"NULL\" AS m, 1::TINYINT AS a, "
                                                  "[1.5, 2.5] AS b", NULL, &s), 0);
    assert_describe(s, "n: Option<Int32>, m: Option<Int32>, a: Option<Int8>, b: Option<List<Option<Decimal(2, 1)>>>");
    odf_DataField *n = field_at(s, 0);
    assert_int_equal(n->type.type, ODF_DataType_Option);
    assert_int_equal(((odf_DataTypeOption *)n->type.value)->inner.type, ODF_DataType_Int32);
}

static void test_from_table_errors(void **state)
{
    odf_DataSchema *s = (odf_DataSchema *)1;
    assert_int_equal(silt_schema_from_table(E, A, "missing_table", NULL, &s), SILT_EINVAL);
    assert_null(s);
    assert_non_null(strstr(silt_error_last(), "table 'missing_table': Catalog Error: Table with name missing_table does not exist"));

    assert_int_equal(silt_engine_exec(E, "CREATE TABLE u (a INTEGER, b UNION(i INTEGER, s VARCHAR))"), 0);
    assert_int_equal(silt_schema_from_table(E, A, "u", NULL, &s), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "table 'u' column 'b': unsupported DuckDB type UNION");

    assert_int_equal(silt_engine_exec(E, "CREATE TABLE bt (flags BIT)"), 0);
    assert_int_equal(silt_schema_from_table(E, A, "bt", NULL, &s), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "table 'bt' column 'flags': unsupported DuckDB type BIT");

    assert_int_equal(silt_engine_exec(E, "CREATE TABLE tz (k INTEGER, v STRUCT(t TIMETZ)[])"), 0);
    assert_int_equal(silt_schema_from_table(E, A, "tz", NULL, &s), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "table 'tz' column 'v': unsupported DuckDB type TIME WITH TIME ZONE");

    /* TIME_NS has no C API type id: resolved at the top level only */
    assert_int_equal(silt_engine_exec(E, "CREATE TABLE tn (a INTEGER, b STRUCT(t TIME_NS))"), 0);
    assert_int_equal(silt_schema_from_table(E, A, "tn", NULL, &s), SILT_EUNSUPPORTED);
    assert_string_equal(silt_error_last(), "table 'tn' column 'b': unsupported DuckDB type STRUCT(t TIME_NS)");

    assert_int_equal(silt_engine_exec(E, "CREATE TABLE ok (a INTEGER)"), 0);
    const char *const req[] = {"a", "nope", NULL};
    assert_int_equal(silt_schema_from_table(E, A, "ok", req, &s), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "table 'ok': required column 'nope' does not exist");

    assert_int_equal(silt_schema_from_query(E, A, "SELEC 1", NULL, &s), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "query: Parser Error: syntax error at or near \"SELEC\""));
}

/* ODF -> DuckDB column list -> CREATE TABLE -> ODF gives the same schema for
 * every variant that survives a Parquet round trip unchanged. */
static void test_round_trip(void **state)
{
    odf_DataField *f[] = {
        FIELD("offset", T(ODF_DataType_UInt64)),
        FIELD("op", T(ODF_DataType_UInt8)),
        FIELD("system_time", TS(ODF_TimeUnit_Millisecond, "UTC")),
        FIELD("b", OPT(T(ODF_DataType_Bool))),
        FIELD("i8", OPT(T(ODF_DataType_Int8))),
        FIELD("i16", OPT(T(ODF_DataType_Int16))),
        FIELD("i32", OPT(T(ODF_DataType_Int32))),
        FIELD("i64", OPT(T(ODF_DataType_Int64))),
        FIELD("u16", OPT(T(ODF_DataType_UInt16))),
        FIELD("u32", OPT(T(ODF_DataType_UInt32))),
        FIELD("f32", OPT(T(ODF_DataType_Float32))),
        FIELD("f64", OPT(T(ODF_DataType_Float64))),
        FIELD("d", OPT(DEC(18, 6))),
        FIELD("s", OPT(T(ODF_DataType_String))),
        FIELD("bin", OPT(BIN(-1))),
        FIELD("date", OPT(T(ODF_DataType_Date))),
        FIELD("time", OPT(UNIT(ODF_DataType_Time, ODF_TimeUnit_Microsecond))),
        FIELD("time_ns", OPT(UNIT(ODF_DataType_Time, ODF_TimeUnit_Nanosecond))),
        FIELD("dur", OPT(UNIT(ODF_DataType_Duration, ODF_TimeUnit_Microsecond))),
        FIELD("ts_s", OPT(TS(ODF_TimeUnit_Second, "UTC"))),
        FIELD("ts_us", OPT(TS(ODF_TimeUnit_Microsecond, "UTC"))),
        FIELD("ts_ns", OPT(TS(ODF_TimeUnit_Nanosecond, "UTC"))),
        FIELD("l", OPT(LIST(OPT(T(ODF_DataType_String)), -1))),
        FIELD("m", OPT(MAP(T(ODF_DataType_String), OPT(T(ODF_DataType_Int64))))),
        FIELD("st", STRUCT2("a b", OPT(T(ODF_DataType_Int32)), "c",
                            OPT(LIST(OPT(TS(ODF_TimeUnit_Millisecond, "UTC")), -1)))),
    };
    size_t n = sizeof f / sizeof f[0];
    odf_DataSchema *want = SCHEMA(n, f);
    silt_buf cols = SILT_BUF_INIT;
    assert_int_equal(silt_schema_to_duckdb_columns(&cols, want), 0);
    assert_int_equal(silt_engine_execf(E, "CREATE TABLE rt (%s)", cols.data), 0);
    silt_buf_free(&cols);
    const char *const req[] = {"offset", "op", "system_time", "st", NULL};
    odf_DataSchema *got = NULL;
    assert_int_equal(silt_schema_from_table(E, A, "rt", req, &got), 0);
    if (!silt_schema_equal(want, got)) {
        silt_buf a = SILT_BUF_INIT, b = SILT_BUF_INIT;
        silt_schema_describe(&a, want);
        silt_schema_describe(&b, got);
        fail_msg("want %s\n got %s", a.data, b.data);
    }
    /* each field also equal by the chain's own comparison */
    for (size_t i = 0; i < n; i++)
        assert_true(odf_data_type_equal(&field_at(want, i)->type, &field_at(got, i)->type));
}

/* ------------------------------------------------------- DDL */

static odf_strvec strvec(size_t n, const char **items)
{
    odf_strvec v = {(char **)items, n, true};
    return v;
}

static void test_ddl_ok(void **state)
{
    const char *ddl[] = {
        "a STRING", "b: int", "`quoted ``name``` BIGINT", "c VARCHAR(20)", "d char(1)", "e Long",
        "f SMALLINT", "g short", "h TINYINT", "i BYTE", "j BOOLEAN", "k bool", "l FLOAT", "m REAL",
        "n DOUBLE", "o DECIMAL", "p DECIMAL(12)", "q decimal( 9 , 3 )", "r DATE", "s TIMESTAMP",
        "t BINARY", "u ARRAY<STRUCT<x: INT, `y z` ARRAY<STRING>, w: MAP<STRING, DECIMAL(5,2)>>>",
        "v  MAP<BIGINT,ARRAY<TIMESTAMP>>", "w INTEGER NOT NULL", "x TEXT",
    };
    odf_strvec v = strvec(sizeof ddl / sizeof ddl[0], ddl);
    odf_DataSchema *s = NULL;
    int rc = silt_schema_from_ddl(A, &v, &s);
    if (rc)
        fail_msg("%s", silt_error_last());
    assert_describe(s,
        "a: Option<String>, b: Option<Int32>, quoted `name`: Option<Int64>, c: Option<String>, "
        "d: Option<String>, e: Option<Int64>, f: Option<Int16>, g: Option<Int16>, h: Option<Int8>, "
        "i: Option<Int8>, j: Option<Bool>, k: Option<Bool>, l: Option<Float32>, m: Option<Float32>, "
        "n: Option<Float64>, o: Option<Decimal(10, 0)>, p: Option<Decimal(12, 0)>, q: Option<Decimal(9, 3)>, "
        "r: Option<Date>, s: Option<Timestamp(Millisecond, UTC)>, t: Option<Binary>, "
        "u: Option<List<Option<Struct<x: Option<Int32>, y z: Option<List<Option<String>>>, "
        "w: Option<Map<String, Option<Decimal(5, 2)>>>>>>>, "
        "v: Option<Map<Int64, Option<List<Option<Timestamp(Millisecond, UTC)>>>>>, w: Int32, x: Option<String>");
    assert_string_equal(field_at(s, 2)->name, "quoted `name`");
    /* the DDL timestamp carries explicit unit and timezone */
    odf_DataTypeTimestamp *ts = ((odf_DataTypeOption *)field_at(s, 19)->type.value)->inner.value;
    assert_true(ts->has_unit);
    assert_int_equal(ts->unit, ODF_TimeUnit_Millisecond);
    assert_string_equal(ts->timezone, "UTC");
    /* and converts to DuckDB */
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_schema_to_duckdb_columns(&b, s), 0);
    assert_non_null(strstr(b.data, "\"u\" STRUCT(\"x\" INTEGER, \"y z\" VARCHAR[], \"w\" MAP(VARCHAR, DECIMAL(5,2)))[]"));
    silt_buf_free(&b);
}

static void assert_ddl_err(const char *entry, const char *msg)
{
    const char *ddl[] = {"ok1 INT", "ok2 STRING", entry};
    odf_strvec v = strvec(3, ddl);
    odf_DataSchema *s = (odf_DataSchema *)1;
    assert_int_equal(silt_schema_from_ddl(A, &v, &s), SILT_EINVAL);
    assert_null(s);
    assert_string_equal(silt_error_last(), msg);
}

static void test_ddl_errors(void **state)
{
    assert_ddl_err("foo BLARG", "ddlSchema[2] 'foo BLARG': unknown type 'BLARG'");
    assert_ddl_err("", "ddlSchema[2] '': missing column name");
    assert_ddl_err("   ", "ddlSchema[2] '   ': missing column name");
    assert_ddl_err("foo", "ddlSchema[2] 'foo': missing type");
    assert_ddl_err("foo:", "ddlSchema[2] 'foo:': missing type");
    assert_ddl_err("`foo BIGINT", "ddlSchema[2] '`foo BIGINT': unterminated quoted name");
    assert_ddl_err("`` INT", "ddlSchema[2] '`` INT': empty quoted name");
    assert_ddl_err("foo INT extra", "ddlSchema[2] 'foo INT extra': unexpected 'extra'");
    assert_ddl_err("foo INT NOT", "ddlSchema[2] 'foo INT NOT': expected NULL after NOT");
    assert_ddl_err("ok1 BIGINT", "ddlSchema[2] 'ok1 BIGINT': duplicate column 'ok1'");
    assert_ddl_err("d DECIMAL(40,2)", "ddlSchema[2] 'd DECIMAL(40,2)': DECIMAL precision 40 is outside 1..38");
    assert_ddl_err("d DECIMAL(0)", "ddlSchema[2] 'd DECIMAL(0)': DECIMAL precision 0 is outside 1..38");
    assert_ddl_err("d DECIMAL(5,6)", "ddlSchema[2] 'd DECIMAL(5,6)': DECIMAL scale 6 is greater than precision 5");
    assert_ddl_err("d DECIMAL(5,-1)",
                   "ddlSchema[2] 'd DECIMAL(5,-1)': expected a number for DECIMAL scale, found '-1)'");
    assert_ddl_err("d DECIMAL(x)", "ddlSchema[2] 'd DECIMAL(x)': expected a number for DECIMAL precision, found 'x)'");
    assert_ddl_err("d DECIMAL(5,2", "ddlSchema[2] 'd DECIMAL(5,2': expected ')' after DECIMAL arguments, found 'end of entry'");
    assert_ddl_err("d DECIMAL(9999999999)", "ddlSchema[2] 'd DECIMAL(9999999999)': DECIMAL precision is too large");
    assert_ddl_err("c VARCHAR(0)", "ddlSchema[2] 'c VARCHAR(0)': length must be positive");
    assert_ddl_err("a ARRAY", "ddlSchema[2] 'a ARRAY': expected '<' after ARRAY, found 'end of entry'");
    assert_ddl_err("a ARRAY<INT", "ddlSchema[2] 'a ARRAY<INT': expected '>' after ARRAY element type, found 'end of entry'");
    assert_ddl_err("a ARRAY<>", "ddlSchema[2] 'a ARRAY<>': expected a type, found '>'");
    assert_ddl_err("a ARRAY<FOO>", "ddlSchema[2] 'a ARRAY<FOO>': unknown type 'FOO'");
    assert_ddl_err("m MAP<STRING>", "ddlSchema[2] 'm MAP<STRING>': expected ',' after MAP key type, found '>'");
    assert_ddl_err("m MAP<STRING, INT", "ddlSchema[2] 'm MAP<STRING, INT': expected '>' after MAP value type, found 'end of entry'");
    assert_ddl_err("s STRUCT<>", "ddlSchema[2] 's STRUCT<>': STRUCT needs at least one field");
    assert_ddl_err("s STRUCT<a INT b INT>",
                   "ddlSchema[2] 's STRUCT<a INT b INT>': expected ',' or '>' in STRUCT, found 'b INT>'");
    assert_ddl_err("s STRUCT<a INT, a STRING>", "ddlSchema[2] 's STRUCT<a INT, a STRING>': duplicate STRUCT field 'a'");
    assert_ddl_err("s STRUCT<a INT,>", "ddlSchema[2] 's STRUCT<a INT,>': missing STRUCT field name at '>'");
    assert_ddl_err("s STRUCT<a>", "ddlSchema[2] 's STRUCT<a>': expected a type, found '>'");

    /* nesting limit */
    char deep[400] = "x ";
    for (int i = 0; i < 40; i++)
        strcat(deep, "ARRAY<");
    strcat(deep, "INT");
    for (int i = 0; i < 40; i++)
        strcat(deep, ">");
    const char *ddl[] = {deep};
    odf_strvec v = strvec(1, ddl);
    odf_DataSchema *s;
    assert_int_equal(silt_schema_from_ddl(A, &v, &s), SILT_EINVAL);
    assert_non_null(strstr(silt_error_last(), "': type nested deeper than 32 levels"));

    odf_strvec none = strvec(0, NULL);
    assert_int_equal(silt_schema_from_ddl(A, &none, &s), SILT_EINVAL);
    assert_string_equal(silt_error_last(), "ddlSchema: no columns");
}

/* ------------------------------------------------------- Foundry */

static json_t *parse_json(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);
    if (!j)
        fail_msg("bad test JSON: %s", jerr.text);
    return j;
}

static void test_foundry_ok(void **state)
{
    json_t *j = parse_json(
        "[{\"name\":\"id\",\"type\":\"LONG\",\"nullable\":false},"
        " {\"name\":\"flag\",\"type\":\"BOOLEAN\"},"
        " {\"name\":\"b\",\"type\":\"BYTE\",\"nullable\":true},"
        " {\"name\":\"sh\",\"type\":\"SHORT\"},"
        " {\"name\":\"i\",\"type\":\"integer\"},"
        " {\"name\":\"f\",\"type\":\"FLOAT\"},"
        " {\"name\":\"d\",\"type\":\"DOUBLE\"},"
        " {\"name\":\"price\",\"type\":\"DECIMAL\",\"precision\":12,\"scale\":2,\"customMetadata\":{}},"
        " {\"name\":\"s\",\"type\":\"STRING\"},"
        " {\"name\":\"raw\",\"type\":\"BINARY\"},"
        " {\"name\":\"day\",\"type\":\"DATE\",\"nullable\":false},"
        " {\"name\":\"ts\",\"type\":\"TIMESTAMP\"},"
        " {\"name\":\"tags\",\"type\":\"ARRAY\",\"arraySubtype\":{\"type\":\"STRING\",\"nullable\":false}},"
        " {\"name\":\"attrs\",\"type\":\"MAP\",\"mapKeyType\":{\"type\":\"STRING\"},"
        "  \"mapValueType\":{\"type\":\"ARRAY\",\"arraySubtype\":{\"type\":\"DOUBLE\"}}},"
        " {\"name\":\"addr\",\"type\":\"STRUCT\",\"nullable\":false,\"subSchemas\":["
        "   {\"name\":\"zip\",\"type\":\"INTEGER\",\"nullable\":false},"
        "   {\"name\":\"geo\",\"type\":\"STRUCT\",\"subSchemas\":[{\"name\":\"lat\",\"type\":\"DOUBLE\"}]}]}]");
    odf_DataSchema *s = NULL;
    int rc = silt_schema_from_foundry_json(A, j, &s);
    json_decref(j);
    if (rc)
        fail_msg("%s", silt_error_last());
    assert_describe(s,
        "id: Int64, flag: Option<Bool>, b: Option<Int8>, sh: Option<Int16>, i: Option<Int32>, "
        "f: Option<Float32>, d: Option<Float64>, price: Option<Decimal(12, 2)>, s: Option<String>, "
        "raw: Option<Binary>, day: Date, ts: Option<Timestamp(Millisecond, UTC)>, tags: Option<List<String>>, "
        "attrs: Option<Map<String, Option<List<Option<Float64>>>>>, "
        "addr: Struct<zip: Int32, geo: Option<Struct<lat: Option<Float64>>>>");
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_schema_to_duckdb_columns(&b, s), 0);
    assert_string_equal(b.data,
        "\"id\" BIGINT, \"flag\" BOOLEAN, \"b\" TINYINT, \"sh\" SMALLINT, \"i\" INTEGER, \"f\" FLOAT, "
        "\"d\" DOUBLE, \"price\" DECIMAL(12,2), \"s\" VARCHAR, \"raw\" BLOB, \"day\" DATE, \"ts\" TIMESTAMP_MS, "
        "\"tags\" VARCHAR[], \"attrs\" MAP(VARCHAR, DOUBLE[]), "
        "\"addr\" STRUCT(\"zip\" INTEGER, \"geo\" STRUCT(\"lat\" DOUBLE))");
    silt_buf_free(&b);
}

static void assert_foundry_err(const char *text, const char *msg)
{
    json_t *j = parse_json(text);
    odf_DataSchema *s = (odf_DataSchema *)1;
    int rc = silt_schema_from_foundry_json(A, j, &s);
    json_decref(j);
    assert_int_equal(rc, SILT_EINVAL);
    assert_null(s);
    assert_string_equal(silt_error_last(), msg);
}

static void test_foundry_errors(void **state)
{
    assert_foundry_err("{}", "fields: expected an array of fields");
    assert_foundry_err("[]", "fields: no fields");
    assert_foundry_err("[1]", "fields[0]: expected an object");
    assert_foundry_err("[{\"type\":\"LONG\"}]", "fields[0]: missing 'name'");
    assert_foundry_err("[{\"name\":\"\",\"type\":\"LONG\"}]", "fields[0]: missing 'name'");
    assert_foundry_err("[{\"name\":\"a\"}]", "fields[0] 'a': missing 'type'");
    assert_foundry_err("[{\"name\":\"a\",\"type\":\"LONG\"},{\"name\":\"b\",\"type\":\"BLARG\"}]",
                       "fields[1] 'b': unknown type 'BLARG'");
    assert_foundry_err("[{\"name\":\"a\",\"type\":\"LONG\"},{\"name\":\"a\",\"type\":\"LONG\"}]",
                       "fields[1] 'a': duplicate field name");
    assert_foundry_err("[{\"name\":\"a\",\"type\":\"LONG\",\"nullable\":\"yes\"}]",
                       "fields[0] 'a': 'nullable' must be true or false");
    assert_foundry_err("[{\"name\":\"price\",\"type\":\"DECIMAL\",\"precision\":10}]",
                       "fields[0] 'price': DECIMAL needs integer 'precision' and 'scale'");
    assert_foundry_err("[{\"name\":\"price\",\"type\":\"DECIMAL\",\"precision\":39,\"scale\":2}]",
                       "fields[0] 'price': DECIMAL precision 39 is outside 1..38");
    assert_foundry_err("[{\"name\":\"price\",\"type\":\"DECIMAL\",\"precision\":5,\"scale\":7}]",
                       "fields[0] 'price': DECIMAL scale 7 is outside 0..5");
    assert_foundry_err("[{\"name\":\"tags\",\"type\":\"ARRAY\"}]", "fields[0] 'tags': missing 'arraySubtype'");
    assert_foundry_err("[{\"name\":\"tags\",\"type\":\"ARRAY\",\"arraySubtype\":{\"type\":\"X\"}}]",
                       "fields[0] 'tags'.arraySubtype: unknown type 'X'");
    assert_foundry_err("[{\"name\":\"tags\",\"type\":\"ARRAY\",\"arraySubtype\":\"STRING\"}]",
                       "fields[0] 'tags'.arraySubtype: expected an object");
    assert_foundry_err("[{\"name\":\"m\",\"type\":\"MAP\",\"mapKeyType\":{\"type\":\"STRING\"}}]",
                       "fields[0] 'm': missing 'mapValueType'");
    assert_foundry_err("[{\"name\":\"m\",\"type\":\"MAP\",\"mapValueType\":{\"type\":\"STRING\"}}]",
                       "fields[0] 'm': missing 'mapKeyType'");
    assert_foundry_err("[{\"name\":\"s\",\"type\":\"STRUCT\"}]", "fields[0] 's': STRUCT needs 'subSchemas'");
    assert_foundry_err("[{\"name\":\"s\",\"type\":\"STRUCT\",\"subSchemas\":[]}]",
                       "fields[0] 's': STRUCT needs at least one field");
    assert_foundry_err("[{\"name\":\"s\",\"type\":\"STRUCT\",\"subSchemas\":{}}]",
                       "fields[0] 's'.subSchemas: expected an array of fields");
    assert_foundry_err("[{\"name\":\"s\",\"type\":\"STRUCT\",\"subSchemas\":[{\"name\":\"x\",\"type\":\"ARRAY\","
                       "\"arraySubtype\":{\"type\":\"DECIMAL\",\"precision\":3}}]}]",
                       "fields[0] 's'.subSchemas[0] 'x'.arraySubtype: DECIMAL needs integer 'precision' and 'scale'");
}

/* ------------------------------------------------------- describe / equal */

static void test_describe_equal(void **state)
{
    odf_DataField *f[] = {FIELD("a", T(ODF_DataType_Int64)), FIELD("b", OPT(T(ODF_DataType_String))),
                          FIELD("c", OPT(LIST(BIN(4), 2))), FIELD("d", UNIT(ODF_DataType_Duration, -1)),
                          FIELD("e", TS(-1, "+07:30")), FIELD("f", T(ODF_DataType_Float16))};
    odf_DataSchema *s = SCHEMA(6, f);
    assert_describe(s, "a: Int64, b: Option<String>, c: Option<List<Binary(4); 2>>, d: Duration(Millisecond), "
                       "e: Timestamp(Millisecond, +07:30), f: Float16");
    silt_buf b = SILT_BUF_INIT;
    assert_int_equal(silt_schema_type_describe(&b, &f[1]->type), 0);
    assert_string_equal(b.data, "Option<String>");
    silt_buf_free(&b);
    assert_describe(SCHEMA(0, NULL), "");

    odf_DataField *g[] = {FIELD("a", T(ODF_DataType_Int64)), FIELD("b", OPT(T(ODF_DataType_String))),
                          FIELD("c", OPT(LIST(BIN(4), 2))), FIELD("d", UNIT(ODF_DataType_Duration, -1)),
                          FIELD("e", TS(-1, "+07:30")), FIELD("f", T(ODF_DataType_Float16))};
    odf_DataSchema *t = SCHEMA(6, g);
    g[0]->extra = silt_arena_alloc(A, sizeof(odf_ExtraAttributes)); /* extra is ignored */
    assert_true(silt_schema_equal(s, t));
    assert_true(silt_schema_equal(NULL, NULL));
    assert_false(silt_schema_equal(s, NULL));
    g[1]->type = T(ODF_DataType_String); /* not nullable any more */
    assert_false(silt_schema_equal(s, t));
    g[1]->type = OPT(T(ODF_DataType_String));
    g[2]->name = "C";
    assert_false(silt_schema_equal(s, t));
    assert_false(silt_schema_equal(s, SCHEMA(5, g)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_to_duckdb_scalars, setup, teardown),
        cmocka_unit_test_setup_teardown(test_to_duckdb_timestamps, setup, teardown),
        cmocka_unit_test_setup_teardown(test_to_duckdb_nested, setup, teardown),
        cmocka_unit_test_setup_teardown(test_to_duckdb_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_to_duckdb_columns, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_table_all_types, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_table_null_view_and_query, setup, teardown),
        cmocka_unit_test_setup_teardown(test_from_table_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ddl_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ddl_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foundry_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foundry_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_describe_equal, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
