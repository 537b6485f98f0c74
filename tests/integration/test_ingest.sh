#!/usr/bin/env bash
# test_ingest.sh — executable specification of push ingest through the CLI:
# every ODF read format with its options, explicit schemas, preprocess
# queries, the layout and Parquet footer of slices, event time rules,
# offsets, the AddData chain (checkpoints, watermark, schema evolution,
# "up to date"), the five merge strategies over several rounds, and the
# current state ("name:current") after each round.
#
# Every check compares exact values. A failing check is reported and the
# script goes on, so one run lists every deviation; it exits 1 if any check
# failed.
source "$(dirname "$0")/lib.sh"

use_soft_failures

FIX="$SILT_FIXTURES/ingest"

# expect_ingest 'stdout' ARGS...: ingest succeeds and prints exactly 'stdout'
expect_ingest() {
    local exp=$1
    shift
    run ingest "$@"
    if [ "$RC" -ne 0 ]; then
        fail "'silt ingest $*': expected success, got exit $RC: $ERR"
        return 0
    fi
    assert_eq "$OUT" "$exp" "stdout of 'silt ingest $*'"
}

ds_dir() {
    local id
    id=$(info "$1" 'd["id"]')
    echo "$T_DIR/.silt/datasets/${id#did:odf:}"
}
# log_get NAME EXPR: EXPR over `silt log NAME --json` (d = blocks, newest first)
log_get() { "$SILT" log "$1" --json | jget "$2"; }
# AddData events (newest first) as d
adds() { log_get "$1" "[b for b in d if b['event']['kind']=='AddData']${2:-}"; }
# slice file of the N-th newest AddData (0 = newest)
slice_file() {
    local h
    h=$(adds "$1" "[${2:-0}]['event']['newData']['physicalHash']")
    echo "$(ds_dir "$1")/data/$h"
}
# footer_types FILE: name,type,converted_type,logical_type of the leaf columns
footer_types() {
    run sql "SELECT name, type, converted_type, logical_type FROM parquet_schema('$1') WHERE type IS NOT NULL" --format csv --unsafe-file-access
    printf '%s\n' "$OUT" | tail -n +2
}
footer_encodings() {
    run sql "SELECT path_in_schema, encodings FROM parquet_metadata('$1') ORDER BY column_id" --format csv --unsafe-file-access
    echo "$OUT"
}
state_sum() { echo "$(tree_sum "$(ds_dir "$1")/blocks")-$(tree_sum "$(ds_dir "$1")/refs")"; }

MS_UTC='"TimestampType(isAdjustedToUTC=1, unit=TimeUnit(MILLIS=MilliSeconds(), MICROS=<null>, NANOS=<null>))"'
SYS_COLS="offset,INT64,UINT_64,
op,INT32,UINT_8,
system_time,INT64,TIMESTAMP_MILLIS,$MS_UTC"

ok init

# =============================================================================
# 1. Read formats and their options
# =============================================================================

# ---- Csv: separator, quote, escape, header, inferSchema, nullValue, dateFormat,
# timestampFormat ---------------------------------------------------------------
add_ds csvopts <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        separator: ";"
        quote: "'"
        escape: "\\"
        header: true
        inferSchema: true
        nullValue: "NA"
        dateFormat: "dd/MM/yyyy"
        timestampFormat: "yyyy-MM-dd HH:mm:ss"
      merge:
        kind: Append
EOF
cat >opts.csv <<'EOF'
id;name;score;ok;day;at;note
1;'a;b';1.5;true;31/12/2020;2020-12-31 10:00:00;NA
2;'it\'s';NA;false;01/01/2021;2021-01-01 00:00:01;'x'
EOF
expect_ingest "csvopts: 2 new records (offsets 0..1), watermark 2021-06-01T00:00:00.000Z" \
    csvopts opts.csv --event-time 2021-06-01T00:00:00Z
expect_sql 'SELECT * EXCLUDE (system_time) FROM csvopts' "Csv options: rows" <<'EOF'
offset,op,event_time,id,name,score,ok,day,at,note
0,0,2021-06-01T00:00:00Z,1,a;b,1.5,true,2020-12-31,2020-12-31T10:00:00Z,
1,0,2021-06-01T00:00:00Z,2,it's,,false,2021-01-01,2021-01-01T00:00:01Z,x
EOF
ok schema csvopts
assert_eq "$OUT" "offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)
id: Option<Int64>
name: Option<String>
score: Option<Float64>
ok: Option<Bool>
day: Option<Date>
at: Option<Timestamp(Millisecond, UTC)>
note: Option<String>" "Csv inferSchema: types"

# header: false without a schema: Spark-style column names _c0, _c1, …; no
# inferSchema: every column is a string
add_ds csvnohdr <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: false
      merge:
        kind: Append
EOF
printf '1,x\n2,y\n' >nohdr.csv
ok ingest csvnohdr nohdr.csv --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT * EXCLUDE (system_time) FROM csvnohdr' "Csv header: false" <<'EOF'
offset,op,event_time,_c0,_c1
0,0,2020-01-01T00:00:00Z,1,x
1,0,2020-01-01T00:00:00Z,2,y
EOF
ok schema csvnohdr
assert_eq "$(printf '%s\n' "$OUT" | tail -n 2)" "_c0: Option<String>
_c1: Option<String>" "Csv without inferSchema: strings"

# encoding (latin1) + explicit DataSchema with a Date (dateFormat) and a
# timestamp with an offset (timestampFormat, strftime style), header false
add_ds csvenc <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        encoding: latin1
        header: false
        dateFormat: "yyyy/MM/dd"
        timestampFormat: "%d.%m.%Y %H:%M %z"
        schema:
          fields:
            - name: city
              type: {kind: String}
            - name: day
              type: {kind: Date}
            - name: at
              type: {kind: Timestamp, unit: Millisecond, timezone: UTC}
            - name: n
              type: {kind: Int32}
      merge:
        kind: Append
EOF
printf 'Z\xfcrich,2020/01/02,02.01.2020 13:45 +0100,7\nK\xf8benhavn,2021/12/31,31.12.2021 23:59 +0000,-3\n' >latin1.csv
ok ingest csvenc latin1.csv --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT city, day, "at", n FROM csvenc' "Csv encoding + schema + formats" <<'EOF'
city,day,at,n
Zürich,2020-01-02,2020-01-02T12:45:00Z,7
København,2021-12-31,2021-12-31T23:59:00Z,-3
EOF
ok schema csvenc
# fields declared without Option stay required in the dataset's schema
assert_eq "$(printf '%s\n' "$OUT" | tail -n 4)" "city: String
day: Date
at: Timestamp(Millisecond, UTC)
n: Int32" "Csv DataSchema coerces types"

# ---- Json (array document, optional subPath) with two named push sources ------
add_ds js <<'EOF'
    - kind: AddPushSource
      sourceName: nested
      read:
        kind: Json
        subPath: data.items
      merge:
        kind: Append
    - kind: AddPushSource
      sourceName: flat
      read:
        kind: Json
      merge:
        kind: Append
EOF
cat >nested.json <<'EOF'
{"meta": {"n": 2}, "data": {"items": [
  {"id": 1, "name": "a", "tags": ["x", "y"], "event_time": "2020-01-01T00:00:00Z"},
  {"id": 2, "name": "b", "tags": [], "event_time": "2020-01-02T00:00:00Z"}
]}}
EOF
cat >flat.json <<'EOF'
[{"id": 3, "name": "c", "tags": ["z"], "event_time": "2020-01-03T00:00:00Z"}]
EOF
fails_like 1 "dataset 'js' has 2 push sources; choose one with --source-name" ingest js nested.json
ok ingest js nested.json --source-name nested
ok ingest js flat.json --source-name flat
expect_sql 'SELECT "offset", op, event_time, id, name, to_json(tags) AS tags FROM js' "Json subPath / root array" <<'EOF'
offset,op,event_time,id,name,tags
0,0,2020-01-01T00:00:00Z,1,a,"[""x"",""y""]"
1,0,2020-01-02T00:00:00Z,2,b,[]
2,0,2020-01-03T00:00:00Z,3,c,"[""z""]"
EOF

# ---- NdJson with a legacy ddlSchema coercing strings to numbers ---------------
add_ds nd <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema:
          - "id BIGINT"
          - "label STRING"
          - "amount DECIMAL(10,2)"
          - "event_time TIMESTAMP"
      merge:
        kind: Append
EOF
cat >a.ndjson <<'EOF'
{"id": "7", "label": "seven", "amount": "1.5", "event_time": "2020-05-01T10:00:00+02:00"}

{"id": 8, "label": null, "amount": 2, "event_time": "2020-05-01T09:00:00Z"}
EOF
ok ingest nd a.ndjson
expect_sql 'SELECT "offset", event_time, id, label, amount FROM nd' "NdJson + ddlSchema" <<'EOF'
offset,event_time,id,label,amount
0,2020-05-01T08:00:00Z,7,seven,1.50
1,2020-05-01T09:00:00Z,8,,2.00
EOF
ok schema nd
assert_eq "$(printf '%s\n' "$OUT" | tail -n 3)" "id: Option<Int64>
label: Option<String>
amount: Option<Decimal(10, 2)>" "ddlSchema types"

# ---- GeoJson and NdGeoJson: a row per Feature, properties as columns, the
# geometry in its own column -----------------------------------------------------
add_ds geo <<'EOF'
    - kind: AddPushSource
      sourceName: fc
      read:
        kind: GeoJson
      merge:
        kind: Append
    - kind: AddPushSource
      sourceName: lines
      read:
        kind: NdGeoJson
      merge:
        kind: Append
EOF
cat >zones.geojson <<'EOF'
{"type": "FeatureCollection", "features": [
 {"type": "Feature", "properties": {"zone": "A", "pop": 10},
  "geometry": {"type": "Point", "coordinates": [1.5, 2]}},
 {"type": "Feature", "properties": {"zone": "B", "pop": 20},
  "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}
]}
EOF
cat >zones.ndgeojson <<'EOF'
{"type": "Feature", "properties": {"zone": "C", "pop": 30}, "geometry": {"type": "Point", "coordinates": [3, 4]}}
{"type": "Feature", "properties": {"zone": "D", "pop": null}, "geometry": null}
EOF
ok ingest geo zones.geojson --source-name fc --event-time 2020-01-01T00:00:00Z
ok ingest geo zones.ndgeojson --source-name lines --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT "offset", zone, pop, geometry FROM geo' "GeoJson / NdGeoJson" <<'EOF'
offset,zone,pop,geometry
0,A,10,"{""coordinates"":[1.5,2],""type"":""Point""}"
1,B,20,"{""coordinates"":[[0,0],[1,1]],""type"":""LineString""}"
2,C,30,"{""coordinates"":[3,4],""type"":""Point""}"
3,D,,
EOF

# ---- EsriShapefile inside a zip archive, chosen by subPath ---------------------
python3 "$FIX/mkshp.py" shapes.zip
add_ds shp <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: EsriShapefile
        subPath: b/more.shp
      merge:
        kind: Append
EOF
ok ingest shp shapes.zip --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT * EXCLUDE (system_time) FROM shp' "EsriShapefile (zip, subPath)" <<'EOF'
offset,op,event_time,NAME,POP,AREA,geometry
0,0,2020-01-01T00:00:00Z,Gamma,1,0.5,"{""coordinates"":[10.0,20.0],""type"":""Point""}"
1,0,2020-01-01T00:00:00Z,Delta,2,0.75,"{""coordinates"":[11.0,21.0],""type"":""Point""}"
2,0,2020-01-01T00:00:00Z,Zürich,3,1.0,"{""coordinates"":[12.5,22.5],""type"":""Point""}"
EOF
ok schema shp
assert_eq "$(printf '%s\n' "$OUT" | tail -n 4)" "NAME: Option<String>
POP: Option<Int64>
AREA: Option<Float64>
geometry: Option<String>" "EsriShapefile: dbf types"
# --format naming the source's own format keeps its read step (subPath too)
run ingest shp shapes.zip --input-format shp --event-time 2020-01-01T00:00:00Z
assert_eq "$RC:$OUT" "0:shp: 3 new records (offsets 3..5), watermark 2020-01-01T00:00:00.000Z" \
    "--format shp keeps the source's subPath"
expect_sql 'SELECT "offset", "NAME" FROM shp WHERE "offset" >= 3 ORDER BY "offset"' "--format shp: b/more.shp again" <<'EOF'
offset,NAME
3,Gamma
4,Delta
5,Zürich
EOF
add_ds shp-any <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: EsriShapefile
      merge:
        kind: Append
EOF
fails_like 1 "shapes.zip: the archive contains several .shp files (a/pts.shp, b/more.shp); set subPath to choose one" \
    ingest shp-any shapes.zip

# ---- Parquet; non-system timestamps normalized to ms UTC ------------------------
add_ds pq <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Parquet
      merge:
        kind: Append
EOF
ok sql "SELECT * FROM (VALUES (1, 'one', TIMESTAMPTZ '2020-01-01 00:00:00.123456+02', TIMESTAMP '2020-01-01 00:00:00.987654', DATE '2020-02-02'), (2, NULL, NULL, NULL, NULL)) t(k, s, tz, ts, d)" \
    --format parquet --output in.parquet
ok ingest pq in.parquet --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT k, s, tz, ts, d FROM pq' "Parquet read" <<'EOF'
k,s,tz,ts,d
1,one,2019-12-31T22:00:00.123Z,2020-01-01T00:00:00.987Z,2020-02-02
2,,,,
EOF
assert_eq "$(footer_types "$(slice_file pq)")" "$SYS_COLS
event_time,INT64,TIMESTAMP_MILLIS,$MS_UTC
k,INT32,INT_32,
s,BYTE_ARRAY,UTF8,
tz,INT64,TIMESTAMP_MILLIS,$MS_UTC
ts,INT64,TIMESTAMP_MILLIS,$MS_UTC
d,INT32,DATE," "Parquet: timestamps normalized to ms UTC in the slice footer"
# nanosecond and second timestamps are normalized too
add_ds pqns <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Parquet
      merge:
        kind: Append
EOF
ok sql "SELECT 1 AS k, TIMESTAMP_NS '2020-01-01 00:00:00.987654321' AS ns, TIMESTAMP_S '2020-01-01 00:00:07' AS sec" \
    --format parquet --output ns.parquet
ok ingest pqns ns.parquet --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT k, ns, sec FROM pqns' "Parquet: ns/s timestamps" <<'EOF'
k,ns,sec
1,2020-01-01T00:00:00.987Z,2020-01-01T00:00:07Z
EOF
assert_eq "$(footer_types "$(slice_file pqns)" | tail -n 2)" "ns,INT64,TIMESTAMP_MILLIS,$MS_UTC
sec,INT64,TIMESTAMP_MILLIS,$MS_UTC" "Parquet: ns/s timestamps as ms UTC in the footer"

# ---- ingest without a push source: self-describing Parquet is appended ----------
ok new plain
ok ingest plain in.parquet --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, k FROM plain' "no push source: Parquet appended" <<'EOF'
offset,op,event_time,k
0,0,2020-01-01T00:00:00Z,1
1,0,2020-01-01T00:00:00Z,2
EOF

# =============================================================================
# 2. preprocess: SQL over `input`, multi-step queries with aliases
# =============================================================================
add_ds pre <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
      preprocess:
        kind: Sql
        engine: duckdb
        query: |
          SELECT CAST(d AS DATE) AS event_time, upper(city) AS city,
                 CAST(replace(population, ',', '') AS BIGINT) AS population
          FROM input
      merge:
        kind: Append
EOF
cat >pre.csv <<'EOF'
d,city,population
2020-01-01,vancouver,"2,581,000"
2020-01-02,seattle,"3,433,000"
EOF
ok ingest pre pre.csv
expect_sql 'SELECT "offset", event_time, city, population FROM pre' "preprocess query" <<'EOF'
offset,event_time,city,population
0,2020-01-01,VANCOUVER,2581000
1,2020-01-02,SEATTLE,3433000
EOF

add_ds pre2 <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        inferSchema: true
      preprocess:
        kind: Sql
        engine: duckdb
        queries:
          - alias: doubled
            query: SELECT a, a * 2 AS b FROM input
          - alias: filtered
            query: SELECT * FROM doubled WHERE b > 2
          - query: SELECT a, b, a + b AS c FROM filtered
      merge:
        kind: Append
EOF
printf 'a\n1\n2\n3\n' >pre2.csv
ok ingest pre2 pre2.csv --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT "offset", a, b, c FROM pre2' "preprocess: multi-step queries" <<'EOF'
offset,a,b,c
0,2,4,6
1,3,6,9
EOF

# =============================================================================
# 3. Slices: columns, types and encodings
# =============================================================================
add_ds app <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        inferSchema: true
      merge:
        kind: Append
EOF
cat >app1.csv <<'EOF'
b,a,event_time
x,3,2020-01-02T00:00:00Z
y,1,2020-01-05T00:00:00Z
z,2,2020-01-01T00:00:00Z
EOF
expect_ingest "app: 3 new records (offsets 0..2), watermark 2020-01-05T00:00:00.000Z" app app1.csv
S1=$(slice_file app)
run sql "SELECT name FROM parquet_schema('$S1') WHERE type IS NOT NULL" --format csv --unsafe-file-access
assert_eq "$OUT" "name
offset
op
system_time
event_time
b
a" "slice column order: offset, op, system_time, event_time, data columns in input order"
assert_eq "$(footer_types "$S1")" "$SYS_COLS
event_time,INT64,TIMESTAMP_MILLIS,$MS_UTC
b,BYTE_ARRAY,UTF8,
a,INT64,INT_64," "slice footer types"
E=$(footer_encodings "$S1")
assert_eq "$(printf '%s\n' "$E" | sed -n 2p)" "offset,DELTA_BINARY_PACKED" "offset encoding (small slice)"
# DuckDB dictionary-encodes a column only when that pays off; a 3-row slice is
# too small (documented in docs/decisions.md): its op/system_time are delta
# encoded. The 3000-row slice below checks the dictionary encodings.
assert_eq "$(printf '%s\n' "$E" | sed -n 3p)" "op,DELTA_BINARY_PACKED" "op encoding (tiny slice)"
assert_eq "$(printf '%s\n' "$E" | sed -n 4p)" "system_time,DELTA_BINARY_PACKED" "system_time encoding (tiny slice)"

# rows keep the input order; offsets are dense from 0
expect_sql 'SELECT "offset", op, event_time, b, a FROM app' "Append keeps input order" <<'EOF'
offset,op,event_time,b,a
0,0,2020-01-02T00:00:00Z,x,3
1,0,2020-01-05T00:00:00Z,y,1
2,0,2020-01-01T00:00:00Z,z,2
EOF
SYS1=$(adds app "[0]['systemTime']")
expect_sql 'SELECT DISTINCT system_time FROM app' "system_time of the rows = systemTime of the AddData block" <<EOF
system_time
$SYS1
EOF

# a larger slice: encodings as well
{
    echo 'b,a,event_time'
    for i in $(seq 1 3000); do echo "v$((i % 5)),$i,2019-12-01T00:00:00Z"; done
} >app2.csv
expect_ingest "app: 3000 new records (offsets 3..3002), watermark 2020-01-05T00:00:00.000Z" app app2.csv
E=$(footer_encodings "$(slice_file app)")
assert_eq "$(printf '%s\n' "$E" | sed -n 2,4p)" "offset,DELTA_BINARY_PACKED
op,RLE_DICTIONARY
system_time,RLE_DICTIONARY" "system column encodings (3000 rows)"

# =============================================================================
# 4. AddData chain: offsets, checkpoints, watermark, schema evolution
# =============================================================================
A0=$(adds app "[1]['event']")
A1=$(adds app "[0]['event']")
assert_eq "$(printf '%s' "$A0" | jget "[d.get('prevOffset','none'), d['newData']['offsetInterval'], d['newWatermark'], d.get('prevCheckpoint','none'), d.get('newCheckpoint','none')]")" \
    '["none",{"end":2,"start":0},"2020-01-05T00:00:00Z","none","none"]' "first AddData (Append: no checkpoint)"
assert_eq "$(printf '%s' "$A1" | jget "[d.get('prevOffset','none'), d['newData']['offsetInterval'], d['newWatermark']]")" \
    '[2,{"end":3002,"start":3},"2020-01-05T00:00:00Z"]' "older data: watermark does not decrease"
SIZE=$(printf '%s' "$A1" | jget "d['newData']['size']")
assert_eq "$SIZE" "$(stat -c %s "$(slice_file app)")" "newData.size is the slice file size"
assert_eq "$(info app 'd["watermark"]')" "2020-01-05T00:00:00Z" "info watermark"
assert_eq "$(info app 'd["lastOffset"]')" "3002" "info lastOffset"
assert_eq "$(log_get app "[b['event']['kind'] for b in d]")" \
    '["AddData","AddData","SetDataSchema","AddPushSource","Seed"]' "SetDataSchema before the first data only"

# schema evolution: a new column -> SetDataSchema + AddData
cat >app3.csv <<'EOF'
b,a,event_time,extra
w,4,2020-02-01T00:00:00Z,true
EOF
expect_ingest "app: 1 new record (offsets 3003..3003), watermark 2020-02-01T00:00:00.000Z" app app3.csv
assert_eq "$(log_get app "[b['event']['kind'] for b in d][:2]")" '["AddData","SetDataSchema"]' \
    "schema gains a column: SetDataSchema then AddData"
assert_eq "$(log_get app "[f['name'] for f in d[1]['event']['schema']['fields']]")" \
    '["offset","op","system_time","event_time","b","a","extra"]' "evolved schema"
expect_sql 'SELECT "offset", b, a, extra FROM app WHERE "offset" IN (0, 3003) ORDER BY "offset"' "old rows read the new column as NULL" <<'EOF'
offset,b,a,extra
0,x,3,
3003,w,4,true
EOF
# a file with the same columns after the evolution: no new SetDataSchema
printf 'b,a,event_time,extra\nv,5,2020-03-01T00:00:00Z,false\n' >app4.csv
ok ingest app app4.csv
assert_eq "$(log_get app "[b['event']['kind'] for b in d][:3]")" '["AddData","AddData","SetDataSchema"]' \
    "unchanged schema: no SetDataSchema"
assert_eq "$(adds app "[0]['event']['prevOffset']")" "3003" "prevOffset chains"
assert_eq "$(adds app "[0]['event']['newData']['offsetInterval']")" '{"end":3004,"start":3004}' "offsets dense"

# dropped or retyped column: error, nothing committed
HEAD=$(info app 'd["head"]')
SUM=$(state_sum app)
printf 'b,event_time,extra\nq,2020-03-02T00:00:00Z,true\n' >drop.csv
fails_like 1 "drop.csv" ingest app drop.csv
assert_contains "$ERR" "'a'" "error names the dropped column"
assert_contains "$ERR" "removed" "error says the column was removed"
printf 'b,a,event_time,extra\nq,not-a-number,2020-03-02T00:00:00Z,true\n' >retype.csv
fails_like 1 "retype.csv" ingest app retype.csv
assert_contains "$ERR" "'a'" "error names the retyped column"
assert_contains "$ERR" "Int64" "error names the old type"
assert_contains "$ERR" "String" "error names the new type"
assert_eq "$(info app 'd["head"]')" "$HEAD" "no block after a schema error"
assert_eq "$(state_sum app)" "$SUM" "blocks/refs untouched after a schema error"

# an ingest that changes nothing: no block, "up to date"
printf 'b,a,event_time,extra\n' >empty_rows.csv
expect_ingest "app: up to date" app empty_rows.csv
assert_eq "$(info app 'd["head"]')" "$HEAD" "up to date: no block"

# =============================================================================
# 5. Event time
# =============================================================================
# a date event time column: event_time is a DATE in the slice
add_ds etdate <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["event_time DATE", "v BIGINT"]
      merge:
        kind: Append
EOF
printf 'event_time,v\n2020-03-01,1\n2020-02-01,2\n' >etdate.csv
expect_ingest "etdate: 2 new records (offsets 0..1), watermark 2020-03-01T00:00:00.000Z" etdate etdate.csv
assert_eq "$(footer_types "$(slice_file etdate)")" "$SYS_COLS
event_time,INT32,DATE,
v,INT64,INT_64," "date event time: DATE in the footer"
expect_sql 'SELECT "offset", event_time, v FROM etdate' "date event time rows" <<'EOF'
offset,event_time,v
0,2020-03-01,1
1,2020-02-01,2
EOF

# an RFC 3339 string event time column (no schema: the column is text)
add_ds etstr <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
EOF
printf 'event_time,v\n2020-03-01T12:00:00+01:00,1\n2020-03-01T11:30:00.250Z,2\n' >etstr.csv
expect_ingest "etstr: 2 new records (offsets 0..1), watermark 2020-03-01T11:30:00.250Z" etstr etstr.csv
expect_sql 'SELECT "offset", event_time, v FROM etstr' "RFC 3339 string event time" <<'EOF'
offset,event_time,v
0,2020-03-01T11:00:00Z,1
1,2020-03-01T11:30:00.250Z,2
EOF

# numeric UNIX seconds under a renamed event time column (SetVocab), plus
# input columns clashing with the system column names (no schema: '_' prefix)
add_ds etnum <<'EOF'
    - kind: SetVocab
      eventTimeColumn: ts
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
      merge:
        kind: Append
EOF
cat >etnum.ndjson <<'EOF'
{"ts": 1577836800, "offset": 5, "op": "x", "system_time": "s", "v": 1}
{"ts": 1577836801.5, "offset": 6, "op": "y", "system_time": "t", "v": 2}
EOF
expect_ingest "etnum: 2 new records (offsets 0..1), watermark 2020-01-01T00:00:01.500Z" etnum etnum.ndjson
expect_sql 'SELECT * EXCLUDE (system_time) FROM etnum' "UNIX seconds + clashing columns" <<'EOF'
offset,op,ts,_offset,_op,_system_time,v
0,0,2020-01-01T00:00:00Z,5,x,s,1
1,0,2020-01-01T00:00:01.500Z,6,y,t,2
EOF
assert_eq "$(log_get etnum "[f['name'] for f in [b for b in d if b['event']['kind']=='SetDataSchema'][0]['event']['schema']['fields']]")" \
    '["offset","op","system_time","ts","_offset","_op","_system_time","v"]' "schema with the vocab's event time column"

# every system column renamed by SetVocab
add_ds vocab <<'EOF'
    - kind: SetVocab
      offsetColumn: off
      operationTypeColumn: opx
      systemTimeColumn: sys
      eventTimeColumn: ts
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
      merge:
        kind: Append
EOF
printf '{"ts": "2020-01-01T00:00:00Z", "v": 1}\n' >vocab.ndjson
expect_ingest "vocab: 1 new record (offsets 0..0), watermark 2020-01-01T00:00:00.000Z" vocab vocab.ndjson
expect_sql 'SELECT * EXCLUDE (sys) FROM vocab' "SetVocab renames every system column" <<'EOF'
off,opx,ts,v
0,0,2020-01-01T00:00:00Z,1
EOF

# fallbacks: --event-time, else the system time; NULL event times use the fallback
add_ds etfb <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
EOF
printf 'v\n1\n' >fb1.csv
expect_ingest "etfb: 1 new record (offsets 0..0), watermark 2021-02-03T04:05:06.789Z" etfb fb1.csv --event-time 2021-02-03T04:05:06.789Z
printf 'v\n2\n' >fb2.csv
ok ingest etfb fb2.csv
SYS2=$(adds etfb "[0]['systemTime']")
expect_sql 'SELECT "offset", event_time, v FROM etfb' "fallback event times" <<EOF
offset,event_time,v
0,2021-02-03T04:05:06.789Z,1
1,$SYS2,2
EOF
assert_eq "$(info etfb 'd["watermark"]')" "$SYS2" "watermark = system time when it is the event time"

# =============================================================================
# 6. Merge strategies
# =============================================================================

# ---- Ledger (the spec's city populations) -------------------------------------
add_ds ledger <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["year INT", "country STRING", "city STRING", "population BIGINT"]
      preprocess:
        kind: Sql
        engine: duckdb
        query: SELECT make_date(year, 1, 1) AS event_time, * FROM input
      merge:
        kind: Ledger
        primaryKey: [year, country, city]
EOF
cat >l1.csv <<'EOF'
Year,Country,City,Population
2019,CA,Vancouver,2581000
2019,US,Seattle,3433000
EOF
cat >l2.csv <<'EOF'
Year,Country,City,Population
2019,CA,Vancouver,2581000
2019,US,Seattle,3433000
2020,CA,Vancouver,2606000
EOF
ok ingest ledger l1.csv
ok ingest ledger l2.csv
expect_sql 'SELECT "offset", op, event_time, year, country, city, population FROM ledger' "Ledger: only unseen keys" <<'EOF'
offset,op,event_time,year,country,city,population
0,0,2019-01-01,2019,CA,Vancouver,2581000
1,0,2019-01-01,2019,US,Seattle,3433000
2,0,2020-01-01,2020,CA,Vancouver,2606000
EOF
H=$(info ledger 'd["head"]')
expect_ingest "ledger: up to date" ledger l2.csv
assert_eq "$(info ledger 'd["head"]')" "$H" "Ledger: nothing new, no block"
# new keys ordered by event time, ties in input order; a seen key with other
# values is dropped (ledger rows are immutable); identical duplicates collapse
cat >l3.csv <<'EOF'
Year,Country,City,Population
2022,US,Seattle,1
2021,US,Seattle,2
2019,CA,Vancouver,999
2021,CA,Vancouver,3
2021,US,Seattle,2
2021,CA,Toronto,4
EOF
ok ingest ledger l3.csv
expect_sql 'SELECT "offset", op, year, country, city, population FROM ledger WHERE "offset" >= 3' "Ledger: event time order, ties in input order" <<'EOF'
offset,op,year,country,city,population
3,0,2021,US,Seattle,2
4,0,2021,CA,Vancouver,3
5,0,2021,CA,Toronto,4
6,0,2022,US,Seattle,1
EOF
expect_sql 'SELECT "offset", year, country, city FROM "ledger:current"' "Ledger current = every row" <<'EOF'
offset,year,country,city
0,2019,CA,Vancouver
1,2019,US,Seattle
2,2020,CA,Vancouver
3,2021,US,Seattle
4,2021,CA,Vancouver
5,2021,CA,Toronto
6,2022,US,Seattle
EOF
assert_eq "$(adds ledger "[0]['event']['prevCheckpoint']")" "$(adds ledger "[1]['event']['newCheckpoint']['physicalHash']")" \
    "checkpoints chain (prevCheckpoint = previous newCheckpoint)"
assert_eq "$(adds ledger "[2]['event'].get('prevCheckpoint','none')")" "none" "first checkpoint has no predecessor"
CP=$(adds ledger "[0]['event']['newCheckpoint']")
assert_eq "$(printf '%s' "$CP" | jget "d['size']")" \
    "$(stat -c %s "$(ds_dir ledger)/checkpoints/$(printf '%s' "$CP" | jget "d['physicalHash']")")" "checkpoint size"
# duplicate / NULL primary keys: an error naming the key, nothing committed
H=$(info ledger 'd["head"]')
SUM=$(state_sum ledger)
printf 'Year,Country,City,Population\n2023,CA,Vancouver,1\n2023,CA,Vancouver,2\n' >ldup.csv
fails 1 "silt: ingest into 'ledger': duplicate primary key (year='2023', country='CA', city='Vancouver') with different values" \
    ingest ledger ldup.csv
printf 'Year,Country,City,Population\n2023,CA,Vancouver,1\n2023,,Victoria,2\n' >lnull.csv
fails 1 "silt: ingest into 'ledger': NULL primary key column 'country' in row 2" ingest ledger lnull.csv
assert_eq "$(info ledger 'd["head"]')" "$H" "Ledger: no block after key errors"
assert_eq "$(state_sum ledger)" "$SUM" "Ledger: blocks/refs untouched after key errors"

# ---- Snapshot (the spec's example, literally) ---------------------------------
add_ds snap <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["country STRING", "city STRING", "population BIGINT"]
      merge:
        kind: Snapshot
        primaryKey: [country, city]
EOF
cat >s1.csv <<'EOF'
Country,City,Population
CA,Vancouver,2581000
US,Seattle,3433000
EOF
cat >s2.csv <<'EOF'
Country,City,Population
CA,Vancouver,2606000
US,Seattle,3433000
EOF
ok ingest snap s1.csv --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT event_time, country, city, population FROM "snap:current" ORDER BY country, city' "Snapshot current after round 1" <<'EOF'
event_time,country,city,population
2020-01-01T00:00:00Z,CA,Vancouver,2581000
2020-01-01T00:00:00Z,US,Seattle,3433000
EOF
expect_sql 'SELECT "offset", op, event_time, country, city, population FROM snap' "Snapshot round 1" <<'EOF'
offset,op,event_time,country,city,population
0,0,2020-01-01T00:00:00Z,CA,Vancouver,2581000
1,0,2020-01-01T00:00:00Z,US,Seattle,3433000
EOF
expect_ingest "snap: 2 new records (offsets 2..3), watermark 2021-01-01T00:00:00.000Z" snap s2.csv --event-time 2021-01-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, country, city, population FROM snap' "Snapshot round 2: -C (old event time) / +C" <<'EOF'
offset,op,event_time,country,city,population
0,0,2020-01-01T00:00:00Z,CA,Vancouver,2581000
1,0,2020-01-01T00:00:00Z,US,Seattle,3433000
2,2,2020-01-01T00:00:00Z,CA,Vancouver,2581000
3,3,2021-01-01T00:00:00Z,CA,Vancouver,2606000
EOF
expect_sql 'SELECT event_time, country, city, population FROM "snap:current" ORDER BY country, city' "Snapshot current after round 2" <<'EOF'
event_time,country,city,population
2021-01-01T00:00:00Z,CA,Vancouver,2606000
2020-01-01T00:00:00Z,US,Seattle,3433000
EOF
H=$(info snap 'd["head"]')
expect_ingest "snap: up to date" snap s2.csv --event-time 2022-01-01T00:00:00Z
assert_eq "$(info snap 'd["head"]')" "$H" "Snapshot unchanged: no block"
# round 3: Seattle vanishes (-R with old values and old event time); several
# changes in unsorted input order; NULL population (null-safe comparison)
cat >s3.csv <<'EOF'
Country,City,Population
US,Boston,
CA,Vancouver,2700000
CA,Calgary,1300000
EOF
ok ingest snap s3.csv --event-time 2023-01-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, country, city, population FROM snap WHERE "offset" >= 4' "Snapshot round 3: ordered by key, -C before +C, -R old values" <<'EOF'
offset,op,event_time,country,city,population
4,0,2023-01-01T00:00:00Z,CA,Calgary,1300000
5,2,2021-01-01T00:00:00Z,CA,Vancouver,2606000
6,3,2023-01-01T00:00:00Z,CA,Vancouver,2700000
7,0,2023-01-01T00:00:00Z,US,Boston,
8,1,2020-01-01T00:00:00Z,US,Seattle,3433000
EOF
expect_sql 'SELECT event_time, country, city, population FROM "snap:current" ORDER BY country, city' "Snapshot current after round 3" <<'EOF'
event_time,country,city,population
2023-01-01T00:00:00Z,CA,Calgary,1300000
2023-01-01T00:00:00Z,CA,Vancouver,2700000
2023-01-01T00:00:00Z,US,Boston,
EOF
# round 4: NULL stays NULL (no change), NULL -> value and value -> NULL change
cat >s4.csv <<'EOF'
Country,City,Population
US,Boston,
CA,Vancouver,
CA,Calgary,1300000
EOF
ok ingest snap s4.csv --event-time 2024-01-01T00:00:00Z
cat >s5.csv <<'EOF'
Country,City,Population
US,Boston,5
CA,Vancouver,
CA,Calgary,1300000
EOF
ok ingest snap s5.csv --event-time 2025-01-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, country, city, population FROM snap WHERE "offset" >= 9' "Snapshot: null-safe comparison" <<'EOF'
offset,op,event_time,country,city,population
9,2,2023-01-01T00:00:00Z,CA,Vancouver,2700000
10,3,2024-01-01T00:00:00Z,CA,Vancouver,
11,2,2023-01-01T00:00:00Z,US,Boston,
12,3,2025-01-01T00:00:00Z,US,Boston,5
EOF
expect_sql 'SELECT event_time, country, city, population FROM "snap:current" ORDER BY country, city' "Snapshot current after round 5" <<'EOF'
event_time,country,city,population
2023-01-01T00:00:00Z,CA,Calgary,1300000
2024-01-01T00:00:00Z,CA,Vancouver,
2025-01-01T00:00:00Z,US,Boston,5
EOF
assert_eq "$(info snap 'd["watermark"]')" "2025-01-01T00:00:00Z" "Snapshot watermark"
# duplicate keys: identical rows collapse, different rows are an error
printf 'Country,City,Population\nUS,Boston,5\nUS,Boston,5\nCA,Vancouver,\nCA,Calgary,1300000\n' >sdupsame.csv
expect_ingest "snap: up to date" snap sdupsame.csv --event-time 2026-01-01T00:00:00Z
H=$(info snap 'd["head"]')
SUM=$(state_sum snap)
printf 'Country,City,Population\nUS,Boston,5\nUS,Boston,6\n' >sdup.csv
fails 1 "silt: ingest into 'snap': duplicate primary key (country='US', city='Boston') with different values" ingest snap sdup.csv
printf 'Country,City,Population\nUS,Boston,5\n,Nowhere,6\n' >snull.csv
fails 1 "silt: ingest into 'snap': NULL primary key column 'country' in row 2" ingest snap snull.csv
assert_eq "$(info snap 'd["head"]')" "$H" "Snapshot: no block after key errors"
assert_eq "$(state_sum snap)" "$SUM" "Snapshot: blocks/refs untouched after key errors"

# ---- Snapshot with compareColumns ----------------------------------------------
add_ds snapcmp <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id STRING", "version INT", "note STRING"]
      merge:
        kind: Snapshot
        primaryKey: [id]
        compareColumns: [version]
EOF
printf 'id,version,note\na,1,first\nb,1,first\n' >c1.csv
printf 'id,version,note\na,1,edited-without-version\nb,2,second\n' >c2.csv
ok ingest snapcmp c1.csv --event-time 2020-01-01T00:00:00Z
ok ingest snapcmp c2.csv --event-time 2020-02-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, id, version, note FROM snapcmp' "Snapshot compareColumns" <<'EOF'
offset,op,event_time,id,version,note
0,0,2020-01-01T00:00:00Z,a,1,first
1,0,2020-01-01T00:00:00Z,b,1,first
2,2,2020-01-01T00:00:00Z,b,1,first
3,3,2020-02-01T00:00:00Z,b,2,second
EOF

# ---- ChangelogStream ---------------------------------------------------------------
add_ds chlog <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema: ["op INT", "event_time TIMESTAMP", "id STRING", "v BIGINT"]
      merge:
        kind: ChangelogStream
        primaryKey: [id]
EOF
cat >ch1.ndjson <<'EOF'
{"op": 0, "event_time": "2020-01-01T00:00:00Z", "id": "a", "v": 1}
{"op": 0, "event_time": "2020-01-01T00:00:00Z", "id": "b", "v": 2}
EOF
cat >ch2.ndjson <<'EOF'
{"op": 2, "event_time": "2020-01-01T00:00:00Z", "id": "a", "v": 1}
{"op": 3, "event_time": "2020-01-02T00:00:00Z", "id": "a", "v": 10}
{"op": 1, "event_time": "2020-01-01T00:00:00Z", "id": "b", "v": 2}
{"op": 0, "event_time": "2019-12-31T00:00:00Z", "id": "c", "v": 3}
EOF
ok ingest chlog ch1.ndjson
expect_sql 'SELECT id, v FROM "chlog:current" ORDER BY id' "ChangelogStream current after round 1" <<'EOF'
id,v
a,1
b,2
EOF
expect_ingest "chlog: 4 new records (offsets 2..5), watermark 2020-01-02T00:00:00.000Z" chlog ch2.ndjson
expect_sql 'SELECT "offset", op, event_time, id, v FROM chlog' "ChangelogStream passes rows through in order" <<'EOF'
offset,op,event_time,id,v
0,0,2020-01-01T00:00:00Z,a,1
1,0,2020-01-01T00:00:00Z,b,2
2,2,2020-01-01T00:00:00Z,a,1
3,3,2020-01-02T00:00:00Z,a,10
4,1,2020-01-01T00:00:00Z,b,2
5,0,2019-12-31T00:00:00Z,c,3
EOF
expect_sql 'SELECT event_time, id, v FROM "chlog:current" ORDER BY id' "ChangelogStream current after round 2" <<'EOF'
event_time,id,v
2020-01-02T00:00:00Z,a,10
2019-12-31T00:00:00Z,c,3
EOF
H=$(info chlog 'd["head"]')
SUM=$(state_sum chlog)
printf '{"op": 7, "event_time": "2020-01-03T00:00:00Z", "id": "a", "v": 1}\n' >chbad1.ndjson
fails 1 "silt: ingest into 'chlog': invalid op 7 in row 1 (expected 0..3)" ingest chlog chbad1.ndjson
cat >chbad2.ndjson <<'EOF'
{"op": 0, "event_time": "2020-01-03T00:00:00Z", "id": "d", "v": 4}
{"op": 3, "event_time": "2020-01-03T00:00:00Z", "id": "a", "v": 11}
EOF
fails 1 "silt: ingest into 'chlog': +C in row 2 does not directly follow a -C of the same key (id='a')" ingest chlog chbad2.ndjson
printf '{"op": 1, "event_time": "2020-01-01T00:00:00Z", "id": "b", "v": 2}\n' >chbad3.ndjson
fails 1 "silt: ingest into 'chlog': -R in row 1 for key (id='b') that is not present" ingest chlog chbad3.ndjson
assert_eq "$(info chlog 'd["head"]')" "$H" "ChangelogStream: no block after validation errors"
assert_eq "$(state_sum chlog)" "$SUM" "ChangelogStream: blocks/refs untouched"

# ---- UpsertStream -------------------------------------------------------------------
add_ds ups <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id STRING", "v STRING", "op INT"]
      merge:
        kind: UpsertStream
        primaryKey: [id]
EOF
cat >u1.csv <<'EOF'
id,v,op
k2,a,0
k1,b,0
k2,c,0
EOF
cat >u2.csv <<'EOF'
id,v,op
k1,b,0
k2,c,1
k9,z,1
k3,d,0
k1,e,0
EOF
cat >u3.csv <<'EOF'
id,v,op
k1,e,0
k3,d,0
EOF
ok ingest ups u1.csv --event-time 2020-01-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, id, v FROM ups' "UpsertStream round 1: last row per key wins" <<'EOF'
offset,op,event_time,id,v
0,0,2020-01-01T00:00:00Z,k1,b
1,0,2020-01-01T00:00:00Z,k2,c
EOF
expect_sql 'SELECT id, v FROM "ups:current" ORDER BY id' "UpsertStream current after round 1" <<'EOF'
id,v
k1,b
k2,c
EOF
ok ingest ups u2.csv --event-time 2020-02-01T00:00:00Z
expect_sql 'SELECT "offset", op, event_time, id, v FROM ups WHERE "offset" >= 2' "UpsertStream round 2: upserts, deletes" <<'EOF'
offset,op,event_time,id,v
2,2,2020-01-01T00:00:00Z,k1,b
3,3,2020-02-01T00:00:00Z,k1,e
4,1,2020-01-01T00:00:00Z,k2,c
5,0,2020-02-01T00:00:00Z,k3,d
EOF
expect_sql 'SELECT id, v FROM "ups:current" ORDER BY id' "UpsertStream current" <<'EOF'
id,v
k1,e
k3,d
EOF
expect_ingest "ups: up to date" ups u3.csv --event-time 2020-03-01T00:00:00Z

# ---- Append "current" is everything -------------------------------------------------
expect_sql 'SELECT count(*) AS n FROM "app:current"' "Append current" <<'EOF'
n
3005
EOF

# every dataset still verifies
ok verify --all

finish
