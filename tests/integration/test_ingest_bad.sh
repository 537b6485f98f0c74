#!/usr/bin/env bash
# test_ingest_bad.sh — push ingest of bad input through the CLI: wrong types,
# ragged CSV rows, invalid JSON, empty files, files in the wrong format,
# schema changes that remove or retype a column, invalid changelogs, missing
# files, and standard input. Every failure must be a one-line error on stderr
# naming the file (and row/line/column where there is one), exit code 1, the
# whole workspace unchanged (every file of .silt/, see lib.sh
# unchanged_after), the previous data intact, and `silt verify` still
# passing.
#
# A failing check is reported and the script goes on; it exits 1 if any
# check failed.
source "$(dirname "$0")/lib.sh"

use_soft_failures

declare -A DS_DIRS
ds_dir() {
    local id
    if [ -z "${DS_DIRS[$1]:-}" ]; then
        id=$(info "$1" 'd["id"]')
        DS_DIRS[$1]="$T_DIR/.silt/datasets/${id#did:odf:}"
    fi
    echo "${DS_DIRS[$1]}"
}

# bad DATASET EXACT_STDERR ARGS...: the ingest fails with exit 1 and exactly
# this one-line message; not one file of the workspace changed (lib.sh
# unchanged_after: every file of .silt/ hashed before and after, so no
# block, no slice, no checkpoint, no summary, no leftover temporary file);
# the dataset still verifies
bad() {
    local ds=$1 msg=$2
    shift 2
    unchanged_after 1 "$msg" ingest "$ds" "$@"
    [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "'silt ingest $ds $*': stderr is not one line"
    pass
    ok verify "$ds"
}
# bad_like DATASET SUBSTRING ARGS...: as bad, for messages checked by substring
bad_like() {
    local ds=$1 msg=$2
    shift 2
    unchanged_after_like 1 "$msg" ingest "$ds" "$@"
    BAD_ERR=$ERR
    ok verify "$ds"
}

ok init

# ---- a CSV source with a schema (Ledger) --------------------------------------
add_ds csv <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT", "name STRING", "event_time TIMESTAMP"]
      merge:
        kind: Ledger
        primaryKey: [id]
EOF
printf 'id,name,event_time\n1,a,2020-01-01T00:00:00Z\n' >good.csv
ok ingest csv good.csv
BASE_ROWS='id,name,event_time
1,a,2020-01-01T00:00:00Z'

# wrong types: file, row, line and column named
printf 'id,name,event_time\n2,b,2020-01-01T00:00:00Z\nx3,c,2020-01-01T00:00:00Z\n' >wrongtype.csv
bad csv "silt: ingest into 'csv': wrongtype.csv: row 2 (line 3), column 'id': cannot convert 'x3' to BIGINT" wrongtype.csv
printf 'id,name,event_time\n2,b,yesterday\n' >wrongtime.csv
bad_like csv "wrongtime.csv: row 1 (line 2), column 'event_time': cannot convert 'yesterday' to TIMESTAMP" wrongtime.csv
# a quoted field spanning lines shifts the line number, not the row number
printf 'id,name,event_time\n2,"two\nlines",2020-01-01T00:00:00Z\nbad,c,2020-01-01T00:00:00Z\n' >multiline.csv
bad csv "silt: ingest into 'csv': multiline.csv: row 2 (line 4), column 'id': cannot convert 'bad' to BIGINT" multiline.csv

# ragged rows
printf 'id,name,event_time\n2,b,2020-01-01T00:00:00Z\n3,c\n' >short.csv
bad csv "silt: ingest into 'csv': short.csv: line 3: expected 3 fields, found 2" short.csv
printf 'id,name,event_time\n2,b,2020-01-01T00:00:00Z,extra\n' >long.csv
bad csv "silt: ingest into 'csv': long.csv: line 2: expected 3 fields, found 4" long.csv

# empty file; missing file; a file in the wrong format
: >empty.csv
bad csv "silt: ingest into 'csv': empty.csv: file is empty" empty.csv
bad csv "silt: ingest into 'csv': nosuch.csv: No such file or directory" nosuch.csv
bad csv "silt: ingest into 'csv': good.csv: not a Parquet file" good.csv --input-format parquet
# one bad file among good ones: nothing of the batch is committed
printf 'id,name,event_time\n7,g,2020-01-01T00:00:00Z\n' >good2.csv
bad csv "silt: ingest into 'csv': short.csv: line 3: expected 3 fields, found 2" good2.csv short.csv

# NULL / duplicate primary keys
printf 'id,name,event_time\n2,b,2020-01-01T00:00:00Z\n,c,2020-01-01T00:00:00Z\n' >nullkey.csv
bad csv "silt: ingest into 'csv': NULL primary key column 'id' in row 2" nullkey.csv
printf 'id,name,event_time\n2,b,2020-01-01T00:00:00Z\n2,c,2020-01-01T00:00:00Z\n' >dupkey.csv
bad csv "silt: ingest into 'csv': duplicate primary key (id='2') with different values" dupkey.csv

ok sql 'SELECT id, name, event_time FROM csv' --format csv
assert_eq "$OUT" "$BASE_ROWS" "previous data intact after every failure"

# standard input: '-' works, and names the input '-' in errors
printf 'id,name,event_time\n5,e,2020-01-02T00:00:00Z\n' >stdin.csv
run ingest csv - <stdin.csv
assert_eq "$RC:$OUT" "0:csv: 1 new record (offsets 1..1), watermark 2020-01-02T00:00:00.000Z" "ingest from stdin '-'"
run ingest csv <stdin.csv
assert_eq "$RC:$OUT" "0:csv: up to date" "ingest from stdin without '-' (already seen)"
BEFORE=$(ws_snapshot)
printf 'id,name,event_time\nzz,e,2020-01-02T00:00:00Z\n' | {
    run ingest csv -
    assert_eq "$RC:$ERR" "1:silt: ingest into 'csv': -: row 1 (line 2), column 'id': cannot convert 'zz' to BIGINT" \
        "bad stdin names '-'"
}
run ingest csv - </dev/null
assert_eq "$RC:$ERR" "1:silt: ingest into 'csv': -: file is empty" "empty stdin"
ws_compare "$BEFORE" "failed stdin ingests"
ok sql 'SELECT id, name FROM csv' --format csv
assert_eq "$OUT" "id,name
1,a
5,e" "data after the stdin ingests"

# ---- JSON sources ---------------------------------------------------------------
add_ds nd <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema: ["n BIGINT", "s STRING"]
      merge:
        kind: Append
EOF
printf '{"n": 1, "s": "a"}\n' >good.ndjson
ok ingest nd good.ndjson --event-time 2020-01-01T00:00:00Z
printf '{"n": 2, "s": "b"}\n{"n": 3, "s": "c",\n' >broken.ndjson
bad nd "silt: ingest into 'nd': broken.ndjson: line 2: invalid JSON: string or '}' expected near end of file" broken.ndjson
printf '{"n": 2}\n\n{"n": "three"}\n' >wrongtype.ndjson
bad nd "silt: ingest into 'nd': wrongtype.ndjson: row 2 (line 3), column 'n': cannot convert 'three' to BIGINT" wrongtype.ndjson
printf '\n  \n' >blank.ndjson
bad nd "silt: ingest into 'nd': blank.ndjson: file is empty" blank.ndjson
bad nd "silt: ingest into 'nd': good.csv: line 1: invalid JSON: invalid token near 'id'" good.csv
python3 -c 'import zipfile; zipfile.ZipFile("x.zip","w").writestr("a.txt","x")'
bad_like nd "x.zip: line 1: invalid JSON" x.zip
printf '[{"n": 1}, {"n": 2}' >broken.json
bad nd "silt: ingest into 'nd': broken.json: invalid JSON at line 1, column 19: ']' expected near end of file" broken.json --input-format json
printf '{"items": [{"n": 1}]}' >obj.json
bad nd "silt: ingest into 'nd': obj.json: expected an array of objects at the root, got an object (set subPath?)" obj.json --input-format json
printf '{"type": "Feature", "properties": {}}' >notfc.geojson
bad nd "silt: ingest into 'nd': notfc.geojson: expected a GeoJSON FeatureCollection, got type 'Feature'" notfc.geojson --input-format geojson
ok sql 'SELECT n, s FROM nd' --format csv
assert_eq "$OUT" "n,s
1,a" "JSON dataset intact"

# ---- schema changes that remove or retype a column -------------------------------
add_ds evo <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        inferSchema: true
      merge:
        kind: Append
EOF
printf 'a,b\n1,x\n' >evo1.csv
ok ingest evo evo1.csv --event-time 2020-01-01T00:00:00Z
printf 'b\ny\n' >evo_drop.csv
bad_like evo "'a'" evo_drop.csv --event-time 2020-01-01T00:00:00Z
assert_contains "$BAD_ERR" "evo_drop.csv" "schema error names the file"
printf 'a,b\nnot-a-number,y\n' >evo_retype.csv
bad_like evo "'a'" evo_retype.csv --event-time 2020-01-01T00:00:00Z
assert_contains "$BAD_ERR" "evo_retype.csv" "schema error names the file"
assert_contains "$BAD_ERR" "Int64" "retype error names the old type"
assert_contains "$BAD_ERR" "String" "retype error names the new type"
ok sql 'SELECT "offset", a, b FROM evo' --format csv
assert_eq "$OUT" 'offset,a,b
0,1,x' "no orphan slice visible after schema errors"

# a merge strategy with state: the retype fails before the merge-state
# checkpoint or the slice reaches the store
add_ds evoled <<'EOF2'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        inferSchema: true
      merge:
        kind: Ledger
        primaryKey: [k]
EOF2
printf 'k,v\n1,10\n' >evoled1.csv
ok ingest evoled evoled1.csv --event-time 2020-01-01T00:00:00Z
printf 'k,v\n2,ten\n' >evoled_retype.csv
bad "evoled" "silt: ingest into 'evoled': evoled_retype.csv: the data does not fit the dataset's schema: dataset 'evoled': block 4 (SetDataSchema): schema.fields[5] ('v'): type changed from Option<Int64> to Option<String> (existing field types may not change)" evoled_retype.csv --event-time 2020-01-01T00:00:00Z
assert_eq "$(find "$(ds_dir evoled)/data" "$(ds_dir evoled)/checkpoints" -type f | wc -l)" "2" "one slice and one checkpoint: those of the first ingest"

# ---- a declared schema with a column named like a system column ------------------
add_ds clash <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["offset BIGINT", "v STRING"]
      merge:
        kind: Append
EOF
printf 'offset,v\n1,x\n' >clash0.csv
unchanged_after 1 "silt: ingest into 'clash': input column 'offset' clashes with a system column; rename it in the schema or with a preprocess query" \
    ingest clash clash0.csv
assert_eq "$(cat "$(ds_dir clash)/refs/head")" "$(info clash 'd["head"]')" "clash: head readable"
assert_eq "$(info clash 'd["blocks"]')" "2" "clash: no block"

# ---- invalid changelogs ----------------------------------------------------------------
add_ds ch <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["op INT", "id STRING", "v BIGINT"]
      merge:
        kind: ChangelogStream
        primaryKey: [id]
EOF
printf 'op,id,v\n0,a,1\n0,b,2\n' >ch_ok.csv
ok ingest ch ch_ok.csv --event-time 2020-01-01T00:00:00Z
printf 'op,id,v\n0,c,3\n4,a,1\n' >ch_op.csv
bad ch "silt: ingest into 'ch': invalid op 4 in row 2 (expected 0..3)" ch_op.csv --event-time 2020-01-01T00:00:00Z
printf 'op,id,v\n3,a,5\n' >ch_plusc.csv
bad ch "silt: ingest into 'ch': +C in row 1 does not directly follow a -C of the same key (id='a')" ch_plusc.csv --event-time 2020-01-01T00:00:00Z
printf 'op,id,v\n2,a,1\n0,z,9\n' >ch_minusc.csv
bad ch "silt: ingest into 'ch': -C in row 1 is not directly followed by a +C of the same key (id='a')" ch_minusc.csv --event-time 2020-01-01T00:00:00Z
printf 'op,id,v\n1,nope,1\n' >ch_retract.csv
bad ch "silt: ingest into 'ch': -R in row 1 for key (id='nope') that is not present" ch_retract.csv --event-time 2020-01-01T00:00:00Z
printf 'op,id,v\n1,a,999\n' >ch_values.csv
bad ch "silt: ingest into 'ch': -R in row 1 for key (id='a') does not carry the current values" ch_values.csv --event-time 2020-01-01T00:00:00Z
# a retraction/correction whose values match but whose event time does not:
# the message says the event time must be the retracted record's, exactly
printf 'op,id,v\n1,a,1\n' >ch_late.csv
bad ch "silt: ingest into 'ch': -R in row 1 for key (id='a'): event_time 2020-01-02T00:00:00Z must equal the retracted record's event time exactly (2020-01-01T00:00:00Z)" ch_late.csv --event-time 2020-01-02T00:00:00Z
printf 'op,id,v\n2,b,2\n3,b,5\n' >ch_late_c.csv
bad ch "silt: ingest into 'ch': -C in row 1 for key (id='b'): event_time 2020-01-01T00:00:00.001Z must equal the corrected record's event time exactly (2020-01-01T00:00:00Z)" ch_late_c.csv --event-time 2020-01-01T00:00:00.001Z
printf 'op,id,v\n0,a,7\n' >ch_again.csv
bad ch "silt: ingest into 'ch': +A in row 1 for key (id='a') that is already present" ch_again.csv --event-time 2020-01-01T00:00:00Z
ok sql 'SELECT id, v FROM "ch:current" ORDER BY id' --format csv
assert_eq "$OUT" "id,v
a,1
b,2" "changelog current state intact"

# within one batch (event times from the data): the -R follows the +A of
# the same batch
add_ds ch2 <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["op INT", "id STRING", "v BIGINT", "event_time TIMESTAMP"]
      merge:
        kind: ChangelogStream
        primaryKey: [id]
EOF
printf 'op,id,v,event_time\n0,a,1,2020-01-01T00:00:00Z\n' >ch2_ok.csv
ok ingest ch2 ch2_ok.csv
printf 'op,id,v,event_time\n0,c,3,2020-01-05T00:00:00Z\n1,c,3,2020-01-06T00:00:00Z\n' >ch2_late.csv
bad ch2 "silt: ingest into 'ch2': -R in row 2 for key (id='c'): event_time 2020-01-06T00:00:00Z must equal the retracted record's event time exactly (2020-01-05T00:00:00Z)" ch2_late.csv
# values and event time both differ: the generic message
printf 'op,id,v,event_time\n1,a,2,2020-01-06T00:00:00Z\n' >ch2_both.csv
bad ch2 "silt: ingest into 'ch2': -R in row 1 for key (id='a') does not carry the current values" ch2_both.csv

# usage errors: exit 2
unchanged_after 2 "silt: ingest needs a NAME (see 'silt help')" ingest
unchanged_after 2 "silt: ingest: unknown option '--bogus' (see 'silt help')" ingest csv good.csv --bogus
unchanged_after 1 "silt: unknown format 'xml'" ingest csv good.csv --input-format xml
unchanged_after 1 "silt: --event-time 'soon': not an RFC 3339 time" ingest csv good.csv --event-time soon

ok verify --all
finish
