#!/usr/bin/env bash
# test_cli_ux.sh — what a first-time user meets (issue 9, items 7, 8, 10):
# dataset names of the ODF grammar, all-or-nothing `delete` with its
# confirmation on a terminal, `add --replace`, `init --exists-ok`, a first
# ingest without YAML (`new --push-source`), and what `info`, `log --detail`
# and `files` say about a dataset.
. "$(dirname "$0")/lib.sh"

use_soft_failures

PTY="python3 $SILT_SOURCE_DIR/tests/tools/pty_confirm.py"
RULE="a name is letters and digits, with single '-' or '.' between them (the ODF DatasetName grammar, e.g. 'sales', 'city-populations', 'com.example.sales'), at most 100 characters"

# =============================================================================
# init --exists-ok
# =============================================================================
ok init
assert_eq "$OUT" "Initialized silt workspace in ./.silt" "init"
fails 1 "silt: ./.silt: workspace already exists" init
ok init --exists-ok
assert_eq "$OUT" "silt workspace already exists in ./.silt" "init --exists-ok on a workspace"
ok --json init --exists-ok
assert_eq "$OUT" '{"workspace":"./.silt","created":false}' "init --exists-ok --json"
mkdir fresh
ok init --exists-ok fresh
assert_eq "$OUT" "Initialized silt workspace in fresh/.silt" "init --exists-ok on a new directory"
# a file named .silt is not a workspace, --exists-ok or not
mkdir notws && : >notws/.silt
fails 1 "silt: notws/.silt: workspace already exists" init --exists-ok notws

# =============================================================================
# dataset names: ODF DatasetName = Hostname (Subdomain ("." Subdomain)*,
# Subdomain = [a-zA-Z0-9]+ ("-" [a-zA-Z0-9]+)*), at most 100 characters
# =============================================================================
for n in a Z9 sales city-populations com.example.sales a-b-c.d-e 2024 x.y.z A1-b2.C3; do
    ok new "$n"
    assert_eq "$OUT" "Created $n ($(info "$n" 'd["id"]'))" "new $n"
done
LONG=$(printf 'a%.0s' $(seq 100))
ok new "$LONG"
before=$(ws_snapshot)
for n in a_b my_data a..b a. .a a--b a-.b a.-b b- 'a b' 'é' "${LONG}b"; do
    fails 1 "silt: invalid dataset name '$n': $RULE" new "$n"
done
ws_compare "$before" "refused names"
# the same rule for rename and manifests
fails 1 "silt: invalid dataset name 'x_y': $RULE" rename a x_y
printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: bad_name\n  kind: Root\n  metadata: []\n' >bad.yaml
fails 1 "silt: bad.yaml:1: content.name: invalid dataset name 'bad_name': $RULE" add bad.yaml
ws_compare "$before" "refused rename / manifest"
fails 1 "silt: invalid dataset reference 'a/b': $RULE" info a/b
# a dataset named under the old rule ('_') still opens, renames, deletes
ok new old-style
id=$(info old-style 'd["id"]')
printf 'old_style' >".silt/datasets/${id#did:odf:}/info/alias"
ok info old_style
assert_contains "$OUT" "Name:          old_style"
ok rename old_style new-style
ok delete new-style

# =============================================================================
# delete: all or nothing; a confirmation on a terminal unless -y
# =============================================================================
ok new d1
ok new d2
before=$(ws_snapshot)
fails 1 "silt: dataset 'missing' not found; nothing deleted" delete d1 missing d2
ws_compare "$before" "delete d1 missing d2"
fails 1 "silt: delete: 'd1@dev' names a branch; give the dataset name; nothing deleted" delete d2 d1@dev
ws_compare "$before" "delete of a branch"
fails 2 "silt: delete: unknown option '--force' (see 'silt help')" delete --force d1
# not on a terminal: no question (scripts keep working)
ok new d3
ok delete d3 </dev/null
assert_eq "$OUT" "Deleted d3" "delete without a terminal"
# on a terminal: asked; anything but y/yes keeps the datasets
run_pty() {
    set +e
    OUT=$($PTY "$@")
    RC=$?
    set -e
}
run_pty '[y/N] ' n "$SILT" delete d1 d2
assert_eq "$RC" "1" "declined delete exits 1"
assert_eq "$OUT" "Delete 2 datasets (d1, d2)? [y/N] n
silt: not confirmed; nothing deleted" "declined delete"
ws_compare "$before" "declined delete"
run_pty '[y/N] ' '' "$SILT" delete d1
assert_eq "$RC/$OUT" "1/Delete 1 dataset (d1)? [y/N] 
silt: not confirmed; nothing deleted" "empty answer is no"
ws_compare "$before" "delete answered with Enter"
# a missing name fails before the question
run_pty '' '' "$SILT" delete d1 nope
assert_eq "$RC/$OUT" "1/silt: dataset 'nope' not found; nothing deleted" "no question for a failing delete"
run_pty '[y/N] ' y "$SILT" delete d1 d2
assert_eq "$RC/$OUT" "0/Delete 2 datasets (d1, d2)? [y/N] y
Deleted d1
Deleted d2" "confirmed delete"
fails_like 1 "dataset 'd1' not found" info d1
fails_like 1 "dataset 'd2' not found" info d2
ok new d4
ok new d5
run_pty '' '' "$SILT" delete -y d4
assert_eq "$RC/$OUT" "0/Deleted d4" "delete -y on a terminal"
run_pty '' '' "$SILT" delete d5 --yes
assert_eq "$RC/$OUT" "0/Deleted d5" "delete --yes on a terminal"

# =============================================================================
# add --replace
# =============================================================================
snap() { # snap NAME DESCRIPTION: a manifest with a SetInfo
    printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Root\n  metadata:\n    - kind: SetInfo\n      description: %s\n' "$1" "$2"
}
snap rep "first" >rep.yaml
ok add rep.yaml
old_id=$(info rep 'd["id"]')
fails 1 "silt: rep.yaml:1: dataset 'rep' already exists" add rep.yaml
snap rep "second" >rep2.yaml
ok add --replace rep2.yaml
new_id=$(info rep 'd["id"]')
assert_eq "$OUT" "Added rep ($new_id, 2 blocks)" "add --replace output"
[ "$old_id" != "$new_id" ] || fail "add --replace keeps the old id"
[ ! -d ".silt/datasets/${old_id#did:odf:}" ] || fail "the replaced dataset is still there"
assert_eq "$("$SILT" log rep --json | jget 'd[0]["event"]["description"]')" "second" "replaced content"
# a replacement that fails keeps the old dataset exactly as it was
printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: rep\n  kind: Root\n  metadata:\n    - kind: SetVocab\n      eventTimeColumn: t\n    - kind: AddData\n      prevOffset: 7\n' >rep3.yaml
before=$(ws_snapshot)
run add --replace rep3.yaml
assert_eq "$RC" "1" "failed replacement exits 1"
ws_compare "$before" "failed add --replace"
assert_eq "$(info rep 'd["id"]')" "$new_id" "old dataset kept"
# --replace of a name that is free just adds it
snap rep-new "x" >rn.yaml
ok add --replace rn.yaml
assert_contains "$OUT" "Added rep-new ("

# =============================================================================
# new --push-source: a first ingest without YAML
# =============================================================================
cat >people.csv <<'CSV'
id,name,amount
1,ann,1.5
2,bob,2
CSV
export SILT_FAKE_SYSTEM_TIME=2024-01-02T03:04:05Z
ok new people --push-source csv
assert_eq "$OUT" "Created people ($(info people 'd["id"]')) with push source 'default' (csv, append)" "new --push-source csv"
assert_eq "$("$SILT" log people --json | jget 'd[0]["event"]')" '{"kind":"AddPushSource","merge":{"kind":"Append"},"read":{"header":true,"inferSchema":true,"kind":"Csv"},"sourceName":"default"}' "AddPushSource of new --push-source csv"
ok ingest people people.csv
assert_eq "$OUT" "people: 2 new records (offsets 0..1), watermark 2024-01-02T03:04:05.000Z" "first ingest"
expect_sql 'SELECT "offset", id, name, amount FROM people' "rows of the first ingest" <<'CSV'
offset,id,name,amount
0,1,ann,1.5
1,2,bob,2.0
CSV
ok schema people
assert_eq "$(printf '%s\n' "$OUT" | tail -n 3)" "id: Option<Int64>
name: Option<String>
amount: Option<Float64>" "inferred schema"
# ledger with a declared schema (ddlSchema), split at top-level commas
ok new ledg --push-source csv --merge ledger --key id --schema 'id BIGINT, name STRING, amount DECIMAL(10,2), tags ARRAY<STRING>'
assert_eq "$OUT" "Created ledg ($(info ledg 'd["id"]')) with push source 'default' (csv, ledger)" "new --merge ledger"
assert_eq "$("$SILT" log ledg --json | jget 'd[0]["event"]')" '{"kind":"AddPushSource","merge":{"kind":"Ledger","primaryKey":["id"]},"read":{"ddlSchema":["id BIGINT","name STRING","amount DECIMAL(10,2)","tags ARRAY<STRING>"],"header":true,"kind":"Csv"},"sourceName":"default"}' "AddPushSource with schema and key"
printf 'id,name,amount,tags\n1,ann,1.5,\n' >l.csv
ok ingest ledg l.csv
expect_sql 'SELECT "offset", id, name, amount FROM ledg' "ledger ingest with the declared types" <<'CSV'
offset,id,name,amount
0,1,ann,1.50
CSV
ok new snap --push-source ndjson --merge snapshot --key country --key city
assert_eq "$("$SILT" log snap --json | jget 'd[0]["event"]')" '{"kind":"AddPushSource","merge":{"kind":"Snapshot","primaryKey":["country","city"]},"read":{"kind":"NdJson"},"sourceName":"default"}' "snapshot with two keys"
printf '{"country":"fr","city":"paris","n":1}\n' >s.ndjson
ok ingest snap s.ndjson
expect_sql 'SELECT "offset", op, country, city, n FROM snap' "snapshot ingest" <<'CSV'
offset,op,country,city,n
0,0,fr,paris,1
CSV
for f in json:Json geojson:GeoJson ndgeojson:NdGeoJson parquet:Parquet; do
    ok new "fmt-${f%%:*}" --push-source "${f%%:*}"
    assert_eq "$("$SILT" log "fmt-${f%%:*}" --json | jget 'd[0]["event"]["read"]')" "{\"kind\":\"${f#*:}\"}" "ReadStep of --push-source ${f%%:*}"
done
ok sql "SELECT 1 AS k" --format parquet --output k.parquet
ok ingest fmt-parquet k.parquet
assert_eq "$OUT" "fmt-parquet: 1 new record (offsets 0..0), watermark 2024-01-02T03:04:05.000Z" "parquet push source"
# bad options: usage errors (exit 2) or one-line errors (exit 1), nothing created
before=$(ws_snapshot)
fails 2 "silt: new: --merge ledger needs --key COLUMN (the primary key; repeat for several) (see 'silt help')" new x1 --push-source csv --merge ledger
fails 2 "silt: new: --merge snapshot needs --key COLUMN (the primary key; repeat for several) (see 'silt help')" new x1 --push-source csv --merge snapshot
fails 2 "silt: new: --key is for --merge ledger or snapshot (see 'silt help')" new x1 --push-source csv --key id
fails 2 "silt: new: --key is for --merge ledger or snapshot (see 'silt help')" new x1 --push-source csv --merge append --key id
fails 2 "silt: new: --merge, --key and --schema describe a push source: give --push-source FORMAT (see 'silt help')" new x1 --merge ledger --key id
fails 2 "silt: new: unknown --push-source format 'xml' (csv, json, ndjson, geojson, ndgeojson, parquet) (see 'silt help')" new x1 --push-source xml
fails 2 "silt: new: unknown --merge 'upsert' (append, ledger, snapshot) (see 'silt help')" new x1 --push-source csv --merge upsert --key id
fails 2 "silt: new: --push-source needs a value (see 'silt help')" new x1 --push-source
fails 2 "silt: new: --push-source is for root datasets (not --files or --derivative) (see 'silt help')" new x1 --files --push-source csv
fails 1 "silt: --schema: ddlSchema[1] 'b BLARG': unknown type 'BLARG'" new x1 --push-source csv --schema 'a INT, b BLARG'
fails 1 "silt: --schema 'a INT,, b INT': empty column definition (write 'name TYPE, …')" new x1 --push-source csv --schema 'a INT,, b INT'
fails 1 "silt: dataset 'people' already exists" new people --push-source csv
fails 1 "silt: invalid dataset name 'x_1': $RULE" new x_1 --push-source csv
ws_compare "$before" "refused new --push-source"
# ingest into a dataset without a push source says how to get one
ok new bare
before=$(ws_snapshot)
fails 1 "silt: dataset 'bare' has no push source: add one with \`silt append bare source.yaml\` (kind: AddPushSource), or create a dataset with one: \`silt new NAME --push-source csv\`; Parquet (--format parquet) needs none" ingest bare people.csv
fails 1 "silt: dataset 'bare' has no push source: add one with \`silt append bare source.yaml\` (kind: AddPushSource), or create a dataset with one: \`silt new NAME --push-source ndjson\`; Parquet (--format parquet) needs none" ingest bare s.ndjson
ws_compare "$before" "ingest without a push source"
# inferSchema types columns from the first 20480 rows; a later row that
# does not fit is an error naming it (nothing committed)
python3 -c "
print('n,s')
for i in range(20480): print('%d,a' % i)
print('2.5,b')" >late.csv
ok new late --push-source csv
before=$(ws_snapshot)
fails 1 "silt: ingest into 'late': late.csv: row 20481 (line 20482), column 'n': '2.5' is not a BIGINT value (inferSchema chose BIGINT from the first 20480 rows: declare the types instead, with ddlSchema or \`silt new NAME --push-source csv --schema 'name TYPE, ...'\`)" ingest late late.csv
ws_compare "$before" "misfit after the inferSchema sample"
ok new late2 --push-source csv --schema 'n DOUBLE, s STRING'
ok ingest late2 late.csv
assert_eq "$OUT" "late2: 20481 new records (offsets 0..20480), watermark 2024-01-02T03:04:05.000Z" "declared schema reads it"
unset SILT_FAKE_SYSTEM_TIME

# =============================================================================
# info: description, keywords, licence, schema, sources, branches, size
# =============================================================================
export SILT_FAKE_SYSTEM_TIME=2024-02-03T04:05:06Z
ok new shop --push-source csv --merge ledger --key id --schema 'id BIGINT, item STRING'
ok info shop
SHOP_ID=$(info shop 'd["id"]')
SHOP_RID=$(info shop 'd["rid"]')
H=$(info shop 'd["head"]')
assert_eq "$OUT" "Name:          shop
ID:            $SHOP_ID
RID:           $SHOP_RID
Branch:        master
Kind:          Root
Head:          $H
Blocks:        2
Records:       0
Watermark:     -
Last update:   2024-02-03T04:05:06.000Z
Size:          0 bytes of data
Description:   -
Keywords:      -
License:       -
Schema:        -
Sources:
  push 'default': read Csv, merge Ledger (primary key: id)
Branches:
  master           $H  2 blocks" "info of a new push dataset"
printf 'kind: SetInfo\ndescription: Items sold\nkeywords: [retail, daily]\n' >info.yaml
printf 'kind: SetLicense\nshortName: CC-BY-4.0\nname: Creative Commons Attribution 4.0\nspdxId: CC-BY-4.0\nwebsiteUrl: https://creativecommons.org/licenses/by/4.0/\n' >lic.yaml
ok append shop info.yaml lic.yaml
printf 'id,item\n1,pen\n2,ink\n' >shop.csv
ok ingest shop shop.csv
SIZE=$(info shop 'd["dataSize"]')
H=$(info shop 'd["head"]')
ok info shop
assert_eq "$(printf '%s\n' "$OUT" | sed -n '7,$p')" "Blocks:        6
Records:       2
Last offset:   1
Watermark:     2024-02-03T04:05:06.000Z
Last update:   2024-02-03T04:05:06.000Z
Size:          $SIZE bytes of data
Description:   Items sold
Keywords:      retail, daily
License:       CC-BY-4.0 (Creative Commons Attribution 4.0) https://creativecommons.org/licenses/by/4.0/
Schema:
  offset: UInt64
  op: UInt8
  system_time: Timestamp(Millisecond, UTC)
  event_time: Timestamp(Millisecond, UTC)
  id: Option<Int64>
  item: Option<String>
Sources:
  push 'default': read Csv, merge Ledger (primary key: id)
Branches:
  master           $H  6 blocks" "info after SetInfo, SetLicense and an ingest"
[ "$SIZE" -gt 0 ] || fail "dataSize $SIZE"
# --json: the same keys
assert_eq "$(info shop '[d[k] for k in ("description","keywords","license")]')" '["Items sold",["retail","daily"],{"name":"Creative Commons Attribution 4.0","shortName":"CC-BY-4.0","spdxId":"CC-BY-4.0","websiteUrl":"https://creativecommons.org/licenses/by/4.0/"}]' "info --json: description, keywords, license"
assert_eq "$(info shop 'd["sources"]')" '[{"kind":"push","location":null,"merge":{"kind":"Ledger","primaryKey":["id"]},"name":"default","read":"Csv"}]' "info --json: sources"
assert_eq "$(info shop 'd["branches"]')" "[{\"blocks\":6,\"head\":\"$H\",\"name\":\"master\"}]" "info --json: branches"
assert_eq "$(info shop '[f["name"] for f in d["schema"]["fields"]]')" '["offset","op","system_time","event_time","id","item"]' "info --json: schema"
assert_eq "$(info shop '[d["rid"], d["id"], d["dataSize"]]')" "[\"$SHOP_RID\",\"$SHOP_ID\",$SIZE]" "info --json: rid, id, size"
# a newer SetInfo wins; a disabled push source is not listed
printf 'kind: SetInfo\ndescription: Items sold per day\n' >info2.yaml
ok append shop info2.yaml
assert_eq "$(info shop '[d["description"], d["keywords"]]')" '["Items sold per day",[]]' "newest SetInfo"
printf 'kind: DisablePushSource\nsourceName: default\n' >dis.yaml
ok append shop dis.yaml
assert_eq "$(info shop 'd["sources"]')" '[]' "disabled push source"
ok info shop
assert_contains "$OUT" "Sources:       -
Branches:"
# polling sources and Flow resources
cp -r "$SILT_SOURCE_DIR/examples" ex
ok delete city-populations
ok add ex/city-populations.yaml ex/city-populations-flow.yaml
ok info city-populations
assert_contains "$OUT" "Sources:
  polling: FilesGlob examples/data/city-populations-*.csv, read Csv, merge Snapshot (primary key: country, city)
Branches:"
ok info city-populations-flow
assert_contains "$OUT" "Sources:
  flow 'city-populations-flow' (source 'city-populations-files'): FilesGlob \${{ config.folder }}/city-populations-*.csv, merge Snapshot
Branches:"
# branches of a files dataset
ok new --files docs
printf 'x' >x.txt
ok upload docs x.txt
ok branch create docs dev
ok info docs
assert_contains "$OUT" "Branches:
  master           $(info docs 'd["head"]')  $(info docs 'd["blocks"]') blocks
  dev              $(info docs 'd["head"]')  $(info docs 'd["blocks"]') blocks"

# =============================================================================
# log --detail: per block its main fields
# =============================================================================
ok log shop --detail
DATA=$("$SILT" log shop --json | jget '[b for b in d if b["event"]["kind"]=="AddData"][0]["event"]')
PH=$(printf '%s' "$DATA" | jget 'd["newData"]["physicalHash"]')
LH=$(printf '%s' "$DATA" | jget 'd["newData"]["logicalHash"]')
CH=$(printf '%s' "$DATA" | jget 'd["newCheckpoint"]["physicalHash"]')
CS=$(printf '%s' "$DATA" | jget 'd["newCheckpoint"]["size"]')
assert_eq "$(printf '%s\n' "$OUT" | sed -E 's/^ *([0-9]+)  [^ ]+  [^ ]+  /\1 /')" "7 DisablePushSource
        sourceName:   default
6 SetInfo
        description:  Items sold per day
5 AddData
        records:      2 (offsets 0..1)
        data:         $PH ($SIZE bytes)
        logical hash: $LH
        checkpoint:   $CH ($CS bytes)
        watermark:    2024-02-03T04:05:06.000Z
        source state: -
4 SetDataSchema
        fields:       offset, op, system_time, event_time, id, item
3 SetLicense
        shortName:    CC-BY-4.0
        name:         Creative Commons Attribution 4.0
        spdxId:       CC-BY-4.0
        websiteUrl:   https://creativecommons.org/licenses/by/4.0/
2 SetInfo
        description:  Items sold
        keywords:     retail, daily
1 AddPushSource
        source:       default
        read:         Csv
        merge:        Ledger (primary key: id)
0 Seed
        datasetId:    $SHOP_ID
        datasetKind:  Root" "log --detail"
ok log city-populations --detail -n 1
assert_eq "$(printf '%s\n' "$OUT" | tail -n +2)" "        shortName:    CC0
        name:         Creative Commons Zero v1.0 Universal
        spdxId:       CC0-1.0
        websiteUrl:   https://creativecommons.org/publicdomain/zero/1.0/" "log --detail -n 1"
fails 2 "silt: log: --detail is for the text listing (--yaml and --json show every field) (see 'silt help')" log shop --detail --yaml

# =============================================================================
# files: a header and "(no files)" on a terminal; fields only in a pipe
# =============================================================================
ok new --files empty
set +e
OUT=$($PTY '' '' "$SILT" files empty)
RC=$?
set -e
assert_eq "$RC/$OUT" "0/(no files)" "files of an empty view on a terminal"
ok files empty
assert_eq "$OUT" "" "files of an empty view in a pipe"
T=$("$SILT" files docs | cut -f4)
TM=$("$SILT" files docs | cut -f5)
HX=$("$SILT" files docs | cut -f3)
set +e
OUT=$($PTY '' '' "$SILT" files docs)
set -e
assert_eq "$OUT" "PATH   SIZE  CONTENT HASH                                                           TRANSACTION                                                    TIME
x.txt     1  $HX  $T  $TM" "files on a terminal"
ok files docs
assert_eq "$OUT" "x.txt	1	$HX	$T	$TM" "files in a pipe"
unset SILT_FAKE_SYSTEM_TIME

finish
