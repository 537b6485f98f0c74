#!/usr/bin/env bash
# test_schema_required.sh — declared schemas are enforced end to end:
#  - a field declared without Option (ODF schema) or NOT NULL (ddlSchema)
#    stays required in the dataset's schema (`silt schema`, exact output);
#  - required columns are REQUIRED in the slice's Parquet footer (read by an
#    independent footer reader, tests/tools/parquet_repetition.py): offset,
#    op, system_time and event_time always, data columns when required;
#  - a null in a required field is an error naming the file, row and column,
#    exit 1, one line, the dataset unchanged and still verifying; also when
#    the requirement comes from the dataset's schema (another read step, a
#    preprocess query) rather than from the read step;
#  - columns added to an existing schema are Option, and a preprocessed
#    column starts as Option;
#  - files datasets write their required columns REQUIRED too;
#  - slices written by kamu (OPTIONAL offset) still read and verify, with
#    their logical hash.
source "$(dirname "$0")/lib.sh"

use_soft_failures

REP="python3 $SILT_SOURCE_DIR/tests/tools/parquet_repetition.py"

ok init

ds_dir() { echo "$T_DIR/.silt/datasets/$(info "$1" 'd["id"]' | sed 's/^did:odf://')"; }
# the slice of the newest AddData of a dataset
last_slice() { echo "$(ds_dir "$1")/data/$("$SILT" log "$1" -n 1 --json | jget 'd[0]["event"]["newData"]["physicalHash"]')"; }
# footer repetition of the newest slice must be exactly stdin
expect_reps() {
    local exp
    exp=$(cat)
    assert_eq "$($REP "$(last_slice "$1")")" "$exp" "$1: repetition types in the slice footer"
}
expect_schema() {
    local exp
    exp=$(cat)
    run schema "$1"
    assert_eq "$OUT" "$exp" "silt schema $1"
}
# everything a failed ingest must leave as it was: every file of the dataset
snapshot() {
    local d
    d=$(ds_dir "$1")
    printf '%s\n%s\n' "$(cat "$d/refs/head")" "$(tree_sum "$d")"
}
# bad DATASET EXACT_STDERR ARGS...: ingest fails, one line, nothing changed
bad() {
    local ds=$1 msg=$2 before
    shift 2
    before=$(snapshot "$ds")
    fails 1 "$msg" ingest "$ds" "$@"
    [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "'silt ingest $ds $*': stderr is not one line"
    pass
    assert_eq "$(snapshot "$ds")" "$before" "'silt ingest $ds $*' left the dataset changed"
    ok verify "$ds"
}

# ---- ODF DataSchema: plain types are required, Option is nullable -------------
add_ds odf <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        schema:
          fields:
            - {name: country, type: {kind: String}}
            - {name: city, type: {kind: String}}
            - {name: population, type: {kind: Option, inner: {kind: Int64}}}
      merge:
        kind: Snapshot
        primaryKey: [country, city]
EOF
printf 'country,city,population\nCA,Vancouver,2581000\nUS,Seattle,\n' >odf1.csv
ok ingest odf odf1.csv --event-time 2020-01-01T00:00:00Z
expect_schema odf <<'EOF'
offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)
country: String
city: String
population: Option<Int64>
EOF
expect_reps odf <<'EOF'
offset REQUIRED
op REQUIRED
system_time REQUIRED
event_time REQUIRED
country REQUIRED
city REQUIRED
population OPTIONAL
EOF
# a null in a required field: file, row and column named; nothing written
printf 'country,city,population\nCA,Vancouver,2600000\n,Seattle,3\n' >odf_null.csv
bad odf "silt: ingest into 'odf': odf_null.csv: row 2, column 'country': null, but the read schema declares it required" odf_null.csv
# several files: the row is counted within its own file
printf 'country,city,population\nCA,Toronto,1\nCA,Montreal,2\n' >odf_a.csv
printf 'country,city,population\nUS,Boston,3\nUS,,4\n' >odf_b.csv
bad odf "silt: ingest into 'odf': odf_b.csv: row 2, column 'city': null, but the read schema declares it required" odf_a.csv odf_b.csv
# the Option field takes nulls; the dataset goes on
printf 'country,city,population\nCA,Vancouver,\nUS,Seattle,3433000\n' >odf2.csv
ok ingest odf odf2.csv --event-time 2021-01-01T00:00:00Z
expect_sql 'SELECT op, country, city, population FROM odf ORDER BY "offset"' "odf history" <<'EOF'
op,country,city,population
0,CA,Vancouver,2581000
0,US,Seattle,
2,CA,Vancouver,2581000
3,CA,Vancouver,
2,US,Seattle,
3,US,Seattle,3433000
EOF
expect_reps odf <<'EOF'
offset REQUIRED
op REQUIRED
system_time REQUIRED
event_time REQUIRED
country REQUIRED
city REQUIRED
population OPTIONAL
EOF

# ---- ddlSchema: NOT NULL, nested values ----------------------------------------
add_ds ddl <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema: ["id BIGINT NOT NULL", "name STRING", "tags ARRAY<STRING> NOT NULL",
                    "pos STRUCT<x: DOUBLE, y: DOUBLE> NOT NULL", "at TIMESTAMP NOT NULL"]
      merge:
        kind: Append
EOF
cat >ddl1.ndjson <<'EOF'
{"id": 1, "name": "a", "tags": ["x", null], "pos": {"x": 1.5, "y": null}, "at": "2020-01-01T00:00:00Z"}
{"id": 2, "name": null, "tags": [], "pos": {"x": 2, "y": 3}, "at": "2020-01-02T00:00:00Z"}
EOF
ok ingest ddl ddl1.ndjson --event-time 2020-01-01T00:00:00Z
expect_schema ddl <<'EOF'
offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)
id: Int64
name: Option<String>
tags: List<Option<String>>
pos: Struct<x: Option<Float64>, y: Option<Float64>>
at: Timestamp(Millisecond, UTC)
EOF
expect_reps ddl <<'EOF'
offset REQUIRED
op REQUIRED
system_time REQUIRED
event_time REQUIRED
id REQUIRED
name OPTIONAL
tags REQUIRED
tags.list REPEATED
tags.list.element OPTIONAL
pos REQUIRED
pos.x OPTIONAL
pos.y OPTIONAL
at REQUIRED
EOF
expect_sql 'SELECT id, name, CAST(tags AS VARCHAR) AS tags, CAST(pos AS VARCHAR) AS pos, "at" FROM ddl ORDER BY id' \
    "ddl rows read back" <<'EOF'
id,name,tags,pos,at
1,a,"[x, NULL]","{'x': 1.5, 'y': NULL}",2020-01-01T00:00:00Z
2,,[],"{'x': 2.0, 'y': 3.0}",2020-01-02T00:00:00Z
EOF
printf '{"id": 3, "tags": ["q"], "at": "2020-01-03T00:00:00Z"}\n' >ddl_nopos.ndjson
bad ddl "silt: ingest into 'ddl': ddl_nopos.ndjson: row 1, column 'pos': null, but the read schema declares it required" ddl_nopos.ndjson
printf '{"id": 3, "pos": {"x": 1}, "tags": null, "at": "2020-01-03T00:00:00Z"}\n' >ddl_notags.ndjson
bad ddl "silt: ingest into 'ddl': ddl_notags.ndjson: row 1, column 'tags': null, but the read schema declares it required" ddl_notags.ndjson

# ---- evolution: added columns are Option; the dataset's schema still rules ------
add_ds evo <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT NOT NULL", "name STRING NOT NULL"]
      merge:
        kind: Append
EOF
printf 'id,name\n1,a\n' >evo1.csv
ok ingest evo evo1.csv --event-time 2020-01-01T00:00:00Z
# a new source declares one more required column: it joins the schema as Option
cat >evo_src2.yaml <<'EOF'
kind: AddPushSource
sourceName: default
read:
  kind: Csv
  header: true
  ddlSchema: ["id BIGINT NOT NULL", "name STRING NOT NULL", "extra BIGINT NOT NULL"]
merge:
  kind: Append
EOF
ok append evo evo_src2.yaml
printf 'id,name,extra\n2,b,20\n' >evo2.csv
ok ingest evo evo2.csv --event-time 2020-01-01T00:00:00Z
expect_schema evo <<'EOF'
offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)
id: Int64
name: String
extra: Option<Int64>
EOF
expect_reps evo <<'EOF'
offset REQUIRED
op REQUIRED
system_time REQUIRED
event_time REQUIRED
id REQUIRED
name REQUIRED
extra OPTIONAL
EOF
printf 'id,name,extra\n3,c,\n' >evo_noextra.csv
bad evo "silt: ingest into 'evo': evo_noextra.csv: row 1, column 'extra': null, but the read schema declares it required" evo_noextra.csv
# a source without a schema: the dataset's schema still requires 'name'
cat >evo_src3.yaml <<'EOF'
kind: AddPushSource
sourceName: default
read:
  kind: Csv
  header: true
  inferSchema: true
merge:
  kind: Append
EOF
ok append evo evo_src3.yaml
printf 'id,name,extra\n3,c,30\n4,,40\n' >evo_noname.csv
bad evo "silt: ingest into 'evo': evo_noname.csv: row 2, column 'name': null, but the dataset's schema declares it required" evo_noname.csv
# ... and after a preprocess query, the row of its result is named
cat >evo_src4.yaml <<'EOF'
kind: AddPushSource
sourceName: default
read:
  kind: Csv
  header: true
  ddlSchema: ["id BIGINT NOT NULL", "name STRING NOT NULL", "extra BIGINT"]
preprocess:
  kind: Sql
  engine: duckdb
  query: "SELECT id, CASE WHEN id > 5 THEN name END AS name, extra FROM input"
merge:
  kind: Append
EOF
ok append evo evo_src4.yaml
printf 'id,name,extra\n5,e,50\n6,f,60\n' >evo_pre.csv
bad evo "silt: ingest into 'evo': preprocess result row 1, column 'name': null, but the dataset's schema declares it required" evo_pre.csv
printf 'id,name,extra\n6,f,60\n' >evo_pre_ok.csv
ok ingest evo evo_pre_ok.csv --event-time 2020-01-01T00:00:00Z
expect_reps evo <<'EOF'
offset REQUIRED
op REQUIRED
system_time REQUIRED
event_time REQUIRED
id REQUIRED
name REQUIRED
extra OPTIONAL
EOF

# ---- a preprocessed column starts as Option (DuckDB does not say whether a query
# result can be null); the read schema is still enforced on what is read
add_ds pre <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT NOT NULL", "v BIGINT NOT NULL"]
      preprocess:
        kind: Sql
        engine: duckdb
        query: "SELECT id, v * 2 AS v2 FROM input"
      merge:
        kind: Append
EOF
printf 'id,v\n1,2\n' >pre1.csv
ok ingest pre pre1.csv --event-time 2020-01-01T00:00:00Z
expect_schema pre <<'EOF'
offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)
id: Option<Int64>
v2: Option<Int64>
EOF
printf 'id,v\n2,\n' >pre_null.csv
bad pre "silt: ingest into 'pre': pre_null.csv: row 1, column 'v': null, but the read schema declares it required" pre_null.csv

# ---- files datasets: the entry columns are REQUIRED -----------------------------
ok new files --files
printf 'hello\n' >hello.txt
ok upload files hello.txt
expect_reps files <<'EOF'
offset REQUIRED
op REQUIRED
system_time REQUIRED
event_time REQUIRED
path REQUIRED
content_hash REQUIRED
size REQUIRED
content_type OPTIONAL
transaction_rid REQUIRED
transaction_type REQUIRED
EOF

# ---- a slice written by kamu (OPTIONAL offset, event_time and data) -------------
KID=fed0136770e57c624a204695ea4a27ca8b77e32eb4d37d07454a99a0c8f6463f97da6
cp -r "$SILT_FIXTURES/interop/kamu-node-qwe/qwe/vessels.gps" "$T_DIR/.silt/datasets/$KID"
printf 'vessels.gps' >"$T_DIR/.silt/datasets/$KID/info/alias"
ok verify vessels.gps
assert_eq "$OUT" "vessels.gps: ok (6 blocks)" "kamu dataset verifies (both hashes of its slice)"
expect_sql 'SELECT count(*) AS n, min("offset") AS lo, max("offset") AS hi FROM "vessels.gps"' "kamu slice reads" <<'EOF'
n,lo,hi
4646,0,4645
EOF
assert_eq "$($REP "$T_DIR/.silt/datasets/$KID/data/f16208a51920c4c13476b55c4987a2224f35d21eda3593395a2eae010c99a7e32a3e4")" \
    "offset OPTIONAL
op REQUIRED
system_time REQUIRED
event_time OPTIONAL
vessel_name OPTIONAL
latitude OPTIONAL
longitude OPTIONAL
course_made_good OPTIONAL
speed_over_ground OPTIONAL" "kamu slice as written by kamu"

ok verify --all
finish
