#!/usr/bin/env bash
# test_read_table.sh — `silt read-table` (silt_table_stream, readTable of
# `silt serve`): Arrow IPC streams decoded by npm apache-arrow (an
# independent reader, tests/node/arrow_decode.mjs) with exact types and
# values, CSV equal to `silt sql --format csv`, for ledger datasets (system
# columns, ops, offsets), files datasets with CSV and Parquet tabular
# schemas, every type, NULLs, empty tables, columns, row limits, transaction
# views, a table of many batches, and bad input (exit 1, one line, nothing
# changed).
source "$(dirname "$0")/lib.sh"

DECODE="$SILT_SOURCE_DIR/tests/node/arrow_decode.mjs"
# decode FILE [--sum COL]: apache-arrow's reading of an Arrow IPC stream
decode() { node_run "$DECODE" "$@"; }

ok init

# ---- a ledger dataset: system columns, ops, offsets -------------------------------
add_ds pop <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT", "event_time DATE"]
      merge:
        kind: Snapshot
        primaryKey: [city]
Y
printf 'city,population,event_time\nA,100,2020-01-01\nB,200,2020-01-01\n' >s1.csv
printf 'city,population,event_time\nA,110,2020-01-02\nC,300,2020-01-02\n' >s2.csv
ok ingest pop s1.csv
ok ingest pop s2.csv
ok sql 'SELECT DISTINCT epoch_ms(system_time) FROM pop ORDER BY 1' --format csv
ST1=$(printf '%s\n' "$OUT" | sed -n 2p)
ST2=$(printf '%s\n' "$OUT" | sed -n 3p)
ST2=${ST2:-$ST1}
ok read-table pop --output pop.arrows
assert_eq "$OUT" "" "--output: nothing on stdout"
assert_eq "$(head -c 4 pop.arrows | od -An -tx1 | tr -d ' ')" "ffffffff" "starts with the continuation marker"
assert_eq "$(tail -c 8 pop.arrows | od -An -tx1 | tr -d ' ')" "ffffffff00000000" "ends with end-of-stream"
assert_eq "$(decode pop.arrows)" 'offset: Uint64
op: Uint8
system_time: Timestamp<MILLISECOND, UTC>
event_time: Date32<DAY>
city: Utf8
population: Int64
["0",0,"'$ST1'",18262,"A","100"]
["1",0,"'$ST1'",18262,"B","200"]
["2",2,"'$ST2'",18262,"A","100"]
["3",3,"'$ST2'",18263,"A","110"]
["4",1,"'$ST2'",18262,"B","200"]
["5",0,"'$ST2'",18263,"C","300"]
rows=6 batches=2' "ledger: system columns, ops, offsets, timestamps"
"$SILT" read-table pop >stdout.arrows
cmp -s stdout.arrows pop.arrows || fail "stdout and --output differ"
pass

# CSV: exactly what silt sql prints
ok read-table pop --format csv
CSV=$OUT
ok sql 'SELECT * FROM pop' --format csv
assert_eq "$CSV" "$OUT" "csv = silt sql --format csv"
assert_eq "$(printf '%s\n' "$CSV" | head -2 | cut -d, -f1,2,4-)" 'offset,op,event_time,city,population
0,0,2020-01-01,A,100' "csv rows"

# columns: subset and order; row limit
ok read-table pop --columns population,offset,city --row-limit 2 --output sub.arrows
assert_eq "$(decode sub.arrows)" 'population: Int64
offset: Uint64
city: Utf8
["100","0","A"]
["200","1","B"]
rows=2 batches=1' "columns in the given order, rowLimit"
ok read-table pop --columns city --row-limit 1 --format csv
assert_eq "$OUT" 'city
A' "csv columns and limit"
ok read-table pop --row-limit 0 --output zero.arrows
assert_eq "$(decode zero.arrows | tail -1)" 'rows=0 batches=0' "rowLimit 0: schema and end only"

# ---- a files dataset with a CSV tabular schema, transaction views -------------------
ok new f --files
cat >f.yaml <<'Y'
fieldSchemaList:
  - {name: id, type: LONG}
  - {name: name, type: STRING}
  - {name: day, type: DATE}
format: csv
csvOptions: {separator: ";", header: true, nullValue: NA}
Y
printf 'id;name;day\n1;a;2024-01-01\n2;NA;NA\n' >p1.csv
printf 'id;name;day\n3;c;2024-03-01\n' >p2.csv
ok schema set f f.yaml
ok read-table f --output empty.arrows
assert_eq "$(decode empty.arrows)" 'id: Int64
name: Utf8
day: Date32<DAY>
rows=0 batches=0' "empty files view: schema and end-of-stream only"
ok upload f p1.csv
T1=$OUT
ok upload f p2.csv
T2=$OUT
ok read-table f --output f.arrows
assert_eq "$(decode f.arrows)" 'id: Int64
name: Utf8
day: Date32<DAY>
["1","a",19723]
["2",null,null]
["3","c",19783]
rows=3 batches=2' "files dataset through its CSV schema (one batch per file here)"
ok read-table f --end "$T1" --format csv
assert_eq "$OUT" 'id,name,day
1,a,2024-01-01
2,,' "--end: the view as of a transaction"
ok read-table f --start "$T2" --end "$T2" --format csv
assert_eq "$OUT" 'id,name,day
3,c,2024-03-01' "--start/--end: the range view"
ok read-table f --start "$T2" --format csv
assert_eq "$OUT" 'id,name,day
3,c,2024-03-01' "--start only: start..latest"

# ---- every type (a Parquet file with an ODF schema), NULLs in every type ------------
ok sql "COPY (SELECT * FROM (VALUES (-8::TINYINT, -16::SMALLINT, -32::INTEGER, -9007199254740993::BIGINT,
  255::UTINYINT, 65535::USMALLINT, 4294967295::UINTEGER, 18446744073709551615::UBIGINT, 1.5::FLOAT, -2.25::DOUBLE,
  true, 'héllo, \"x\"', '\\x00\\xFF'::BLOB, DATE '2024-02-29', TIME '12:34:56.789012',
  TIMESTAMP_MS '2024-01-02 03:04:05.678', TIMESTAMP '2024-01-02 03:04:05.678901',
  TIMESTAMP_NS '2024-01-02 03:04:05.678901234', TIMESTAMPTZ '2024-01-02 03:04:05.678901+00',
  12345678.91::DECIMAL(10,2), -0.5::DECIMAL(38,10), [1, NULL, 3], {'a': 7, 'b': 'x'}, MAP {'k1': 1, 'k2': NULL}, NULL::INTEGER),
  (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL))
  t(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, b, s, bin, d, t, ts_ms, ts_us, ts_ns, tstz, dec, dec38, l, st, m, nul))
  TO 'all.parquet' (FORMAT parquet)" --unsafe-file-access
cat >all.yaml <<'Y'
fields:
  - {name: i8, type: {kind: Int8}}
  - {name: i16, type: {kind: Int16}}
  - {name: i32, type: {kind: Int32}}
  - {name: i64, type: {kind: Int64}}
  - {name: u8, type: {kind: UInt8}}
  - {name: u16, type: {kind: UInt16}}
  - {name: u32, type: {kind: UInt32}}
  - {name: u64, type: {kind: UInt64}}
  - {name: f32, type: {kind: Float32}}
  - {name: f64, type: {kind: Float64}}
  - {name: b, type: {kind: Bool}}
  - {name: s, type: {kind: String}}
  - {name: bin, type: {kind: Binary}}
  - {name: d, type: {kind: Date}}
  - {name: t, type: {kind: Time, unit: Microsecond}}
  - {name: ts_ms, type: {kind: Timestamp, unit: Millisecond, timezone: UTC}}
  - {name: ts_us, type: {kind: Timestamp, unit: Microsecond}}
  - {name: ts_ns, type: {kind: Timestamp, unit: Nanosecond, timezone: UTC}}
  - {name: tstz, type: {kind: Timestamp, unit: Microsecond, timezone: Europe/Berlin}}
  - {name: dec, type: {kind: Decimal, precision: 10, scale: 2}}
  - {name: dec38, type: {kind: Decimal, precision: 38, scale: 10}}
  - {name: l, type: {kind: List, itemType: {kind: Int32}}}
  - {name: st, type: {kind: Struct, fields: [{name: a, type: {kind: Int32}}, {name: b, type: {kind: String}}]}}
  - {name: m, type: {kind: Map, keyType: {kind: String}, valueType: {kind: Int32}}}
  - {name: nul, type: {kind: Null}}
format: parquet
Y
ok new all --files
ok upload all all.parquet
ok schema set all all.yaml
ok read-table all --output all.arrows
assert_eq "$(decode all.arrows)" 'i8: Int8
i16: Int16
i32: Int32
i64: Int64
u8: Uint8
u16: Uint16
u32: Uint32
u64: Uint64
f32: Float32
f64: Float64
b: Bool
s: Utf8
bin: Binary
d: Date32<DAY>
t: Time64<MICROSECOND>
ts_ms: Timestamp<MILLISECOND, UTC>
ts_us: Timestamp<MICROSECOND, UTC>
ts_ns: Timestamp<NANOSECOND, UTC>
tstz: Timestamp<MICROSECOND, UTC>
dec: Decimal[10e+2]
dec38: Decimal[38e+10]
l: List<Int32>
st: Struct<{a:Int32, b:Utf8}>
m: Map<{key:Utf8, value:Int32}>
nul: Int32
[-8,-16,-32,"-9007199254740993",255,65535,4294967295,"18446744073709551615",1.5,-2.25,true,"héllo, \"x\"","00ff",19782,"45296789012","1704164645678","1704164645678901","1704164645678901234","1704164645678901","12345678.91","-0.5000000000",[1,null,3],{"a":7,"b":"x"},{"k1":1,"k2":null},null]
[null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null,null]
rows=2 batches=1' "every type, and NULL in every type"
ok read-table all --format csv
CSV=$OUT
ok sql 'SELECT * FROM "all"' --format csv
assert_eq "$CSV" "$OUT" "every type: csv = silt sql --format csv"

# the rest: Time(ns) (DuckDB's Arrow export has no TIME_NS: microseconds),
# fixed-size lists, Duration, Timestamp(s), Float16
ok sql "COPY (SELECT * FROM (VALUES ('12:00:00.000001001'::TIME_NS, [1, 2]::INTEGER[2],
  INTERVAL '1 month 2 days 3 seconds', TIMESTAMP_S '2024-01-01 00:00:01', 1.5::FLOAT),
  (NULL, NULL, NULL, NULL, NULL)) t(tns, fl, dur, tss, h)) TO 'more.parquet' (FORMAT parquet)" --unsafe-file-access
cat >more.yaml <<'Y'
fields:
  - {name: tns, type: {kind: Time, unit: Nanosecond}}
  - {name: fl, type: {kind: List, itemType: {kind: Int32}, fixedLength: 2}}
  - {name: dur, type: {kind: Duration, unit: Microsecond}}
  - {name: tss, type: {kind: Timestamp, unit: Second, timezone: UTC}}
  - {name: h, type: {kind: Float16}}
format: parquet
Y
ok new more --files
ok upload more more.parquet
ok schema set more more.yaml
ok read-table more --output more.arrows
# the interval is (months, days, nanoseconds) = (1, 2, 3e9): int32 words 1, 2, 3000000000 (low, as int32), 0
assert_eq "$(decode more.arrows)" 'tns: Time64<MICROSECOND>
fl: FixedSizeList[2]<Int32>
dur: Interval<MONTH_DAY_NANO>
tss: Timestamp<SECOND, UTC>
h: Float32
["43200000001",[1,2],[1,2,-1294967296,0],"1704067201",1.5]
[null,null,null,null,null]
rows=2 batches=1' "Time(ns), fixed-size list, Duration, Timestamp(s), Float16"

# ---- a table of many batches -----------------------------------------------------------
add_ds big <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["n BIGINT", "s STRING"]
      merge:
        kind: Append
Y
{ echo n,s; seq 1 150000 | awk '{print $1 ",r" $1}'; } >big.csv
ok ingest big big.csv
ok read-table big --output big.arrows
SUM=$(decode big.arrows --sum n)
assert_eq "${SUM% batches=*}" "rows=150000" "150000 rows"
assert_eq "${SUM##* }" "sum=11250075000" "checksum of column n"
BATCHES=${SUM#* batches=}
BATCHES=${BATCHES%% *}
[ "$BATCHES" -ge 74 ] || fail "150000 rows in batches of at most 2048 rows: expected >= 74 batches, got $BATCHES"
pass
ok read-table big --columns offset --row-limit 100001 --output big3.arrows
assert_eq "$(decode big3.arrows --sum offset | cut -d' ' -f1,3)" "rows=100001 sum=5000050000" "rowLimit over many batches"

# ---- bad input: one line, exit 1, nothing changed ----------------------------------------
unchanged_after 1 "silt: column 'nope' is not in the schema of pop" read-table pop --columns city,nope
unchanged_after 1 "silt: column 'city' is given twice" read-table pop --columns city,city
ok new raw --files
ok upload raw p1.csv
unchanged_after 1 "silt: dataset 'raw' has no tabular schema" read-table raw
unchanged_after 1 "silt: transaction ri.silt.main.transaction.00000000-0000-4000-8000-000000000000 is not committed on branch master of f" \
    read-table f --end ri.silt.main.transaction.00000000-0000-4000-8000-000000000000
unchanged_after 1 "silt: transaction rids apply only to files datasets (pop is a ledger)" read-table pop --end "$T1"
fails_like 1 "not found" read-table nosuch
rm -f none.arrows
fails 1 "silt: column 'x' is not in the schema of f" read-table f --columns x --output none.arrows
[ ! -e none.arrows ] || fail "a failed read-table left its output file"
pass
fails_like 2 "unknown format 'parquet'" read-table pop --format parquet
fails_like 2 "--row-limit needs a non-negative number" read-table pop --row-limit -1
fails_like 2 "read-table needs exactly one NAME" read-table

done_tests
