#!/usr/bin/env bash
# test_ingest_transcode.sh — `silt ingest --input-format F` into a push source that
# reads another format keeps the source's declared schema (ddlSchema or
# schema): a header-less CSV into an NdJson source, NDJSON into a CSV source,
# CSV into an NdJson source with a structured schema, with exact rows and
# types; --format naming the source's own format keeps every option of its
# read step (separator, header); bad input (a field missing, a value that
# does not cast) is a one-line error with the dataset unchanged.
source "$(dirname "$0")/lib.sh"

use_soft_failures

ok init
ds_dir() { echo "$T_DIR/.silt/datasets/$("$SILT" info "$1" --json | jget 'd["id"]' | sed 's/^did:odf://')"; }
snapshot() { printf '%s\n%s\n' "$(tree_sum "$(ds_dir "$1")")" "$("$SILT" sql "SELECT * EXCLUDE (system_time, event_time) FROM \"$1\"" --format csv)"; }
# bad DS 'EXACT STDERR' ARGS...: the ingest fails, the dataset is unchanged
bad() {
    local ds=$1 msg=$2 before
    shift 2
    before=$(snapshot "$ds")
    fails 1 "$msg" ingest "$ds" "$@"
    assert_eq "$(snapshot "$ds")" "$before" "'silt ingest $ds $*' left the dataset changed"
}
DATA_SCHEMA='offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)'

# ---- an NdJson source with a legacy ddlSchema, fed a header-less CSV --------
add_ds cities <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema: ["city STRING", "population BIGINT", "area DOUBLE"]
      merge:
        kind: Ledger
        primaryKey: [city]
EOF
printf 'Berlin,3645000,891.8\nParis,2161000,105.4\n' >cities.csv
ok ingest cities cities.csv --input-format csv
ok schema cities
assert_eq "$OUT" "$DATA_SCHEMA
city: Option<String>
population: Option<Int64>
area: Option<Float64>" "CSV into an NdJson source: the declared types"
expect_sql 'SELECT "offset", op, city, population, area FROM cities ORDER BY "offset"' "header-less CSV rows" <<'EOF'
offset,op,city,population,area
0,0,Berlin,3645000,891.8
1,0,Paris,2161000,105.4
EOF
# its own format still reads with the source's step
printf '{"area": 1285.3, "city": "Rome", "population": 2873000}\n' >rome.ndjson
ok ingest cities rome.ndjson --input-format ndjson
# bad input: a field missing; a value that does not cast; a header read as data
printf 'Madrid,3223000\n' >short.csv
bad cities "silt: ingest into 'cities': short.csv: line 1: expected 3 fields (as in the schema), found 2" short.csv --input-format csv
printf 'Madrid,3223000,604.3\nLisbon,many,100.0\n' >nocast.csv
bad cities "silt: ingest into 'cities': nocast.csv: row 2 (line 2), column 'population': cannot convert 'many' to BIGINT" \
    nocast.csv --input-format csv
printf 'city,population,area\nMadrid,3223000,604.3\n' >header.csv
bad cities "silt: ingest into 'cities': header.csv: row 1 (line 1), column 'population': cannot convert 'population' to BIGINT" \
    header.csv --input-format csv
expect_sql 'SELECT city, population FROM cities ORDER BY "offset"' "cities after the failures" <<'EOF'
city,population
Berlin,3645000
Paris,2161000
Rome,2873000
EOF

# ---- a CSV source (';', header) with a ddlSchema, fed NDJSON -------------------
add_ds towns <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        separator: ";"
        ddlSchema: ["town STRING", "inhabitants INT", "founded DATE"]
      merge:
        kind: Ledger
        primaryKey: [town]
EOF
# keys in any order, an extra key ignored: columns selected and cast by name
printf '{"founded": "1237-10-28", "inhabitants": "3645000", "town": "Berlin", "mayor": "x"}\n{"town": "Bonn", "inhabitants": 336465, "founded": "0011-01-01"}\n' >towns.ndjson
ok ingest towns towns.ndjson --input-format ndjson
ok schema towns
assert_eq "$OUT" "$DATA_SCHEMA
town: Option<String>
inhabitants: Option<Int32>
founded: Option<Date>" "NDJSON into a CSV source: the declared types"
expect_sql 'SELECT "offset", town, inhabitants, founded FROM towns ORDER BY "offset"' "NDJSON into a CSV source" <<'EOF'
offset,town,inhabitants,founded
0,Berlin,3645000,1237-10-28
1,Bonn,336465,0011-01-01
EOF
# --format csv is the source's own format: its separator and header apply
printf 'town;inhabitants;founded\nKiel;247000;1242-01-01\n' >towns.csv
ok ingest towns towns.csv --input-format csv
expect_sql "SELECT town, inhabitants, founded FROM towns WHERE town = 'Kiel'" "--format of the source's own format" <<'EOF'
town,inhabitants,founded
Kiel,247000,1242-01-01
EOF
printf '{"town": "Ulm", "inhabitants": "lots", "founded": "0854-01-01"}\n' >nocast.ndjson
bad towns "silt: ingest into 'towns': nocast.ndjson: row 1 (line 1), column 'inhabitants': cannot convert 'lots' to INTEGER" \
    nocast.ndjson --input-format ndjson
printf '{"town": "Ulm", "inhabitants": 126000, "founded": "sometime"}\n' >nodate.ndjson
bad towns "silt: ingest into 'towns': nodate.ndjson: row 1 (line 1), column 'founded': cannot convert 'sometime' to DATE" \
    nodate.ndjson --input-format ndjson

# ---- an NdJson source with a structured schema, fed CSV --------------------------
add_ds rivers <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        schema:
          fields:
            - name: river
              type: {kind: Option, inner: {kind: String}}
            - name: length_km
              type: {kind: Option, inner: {kind: Float64}}
      merge:
        kind: Append
EOF
printf 'Rhine,1233.0\n"Danube, the",2850\n' >rivers.csv
ok ingest rivers rivers.csv --input-format csv
ok schema rivers
assert_eq "$OUT" "$DATA_SCHEMA
river: Option<String>
length_km: Option<Float64>" "CSV into an NdJson source with a schema"
expect_sql 'SELECT river, length_km FROM rivers ORDER BY "offset"' "CSV rows into a structured schema" <<'EOF'
river,length_km
Rhine,1233.0
"Danube, the",2850.0
EOF
printf 'Elbe,1094,extra\n' >long.csv
bad rivers "silt: ingest into 'rivers': long.csv: line 1: expected 2 fields (as in the schema), found 3" long.csv --input-format csv
ok verify --all

finish
