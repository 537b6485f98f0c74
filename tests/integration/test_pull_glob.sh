#!/usr/bin/env bash
# test_pull_glob.sh — `silt pull` of a FilesGlob source over a folder that
# gains files between pulls: FromPath event times, one AddData per file in
# name order, the last file name as source state (odf/etag), "up to date"
# when nothing is new, a glob that matches nothing on the first pull
# (error, exit 1, dataset unchanged); files it does not read: a name the
# FromPath pattern does not match (skipped with a warning, the later files
# ingested, noted by `silt sources`), a file added late that sorts before
# the last ingested one (warned about), a 0-byte file (no records: an AddData
# with only the source state); a first pull of only unreadable names; an
# invalid pattern (an error); the Flow form (ByEventTime, `sources --json`);
# gzip-wrapped files.
source "$(dirname "$0")/lib.sh"

ok init
DROP="$T_DIR/drop"
mkdir -p "$DROP"
cat >glob.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: dumps
  kind: Root
  metadata:
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $DROP/dump-*.csv
        eventTime:
          kind: FromPath
          pattern: 'dump-(\d+-\d+-\d+)\.csv'
          timestampFormat: '%Y-%m-%d'
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, city STRING, population BIGINT]
      merge:
        kind: Snapshot
        primaryKey: [id]
YAML
ok add glob.yaml
H0=$(head_of dumps)
fails 1 "silt: pull 'dumps': no files match '$DROP/dump-*.csv'" pull dumps
assert_eq "$(head_of dumps)" "$H0" "unchanged after an empty glob"

printf 'id,city,population\n1,Vancouver,2581000\n2,Seattle,3433000\n' >"$DROP/dump-2020-01-01.csv"
printf 'id,city,population\n1,Vancouver,2606000\n2,Seattle,3433000\n' >"$DROP/dump-2020-02-01.csv"
ok pull dumps
assert_eq "$OUT" "dumps: 4 new records (offsets 0..3), watermark 2020-02-01T00:00:00.000Z"
run log dumps
assert_eq "$(printf '%s\n' "$OUT" | grep -c ' AddData$')" "2" "one AddData per file"
run log dumps -n 1 --yaml
assert_contains "$OUT" "sourceName: odf/polling"
assert_contains "$OUT" "kind: odf/etag"
assert_contains "$OUT" "value: dump-2020-02-01.csv"
ok pull dumps
assert_eq "$OUT" "dumps: up to date"

# a new file: only it is read
printf 'id,city,population\n1,Vancouver,2606000\n3,Portland,650000\n' >"$DROP/dump-2020-03-01.csv"
# a file sorting before the last one is never read (files never change once
# added): the pull says so, and the already ingested ones are not mentioned
printf 'id,city,population\n9,Old,1\n' >"$DROP/dump-2019-12-31.csv"
ok pull dumps
assert_eq "$OUT" "dumps: 2 new records (offsets 4..5), watermark 2020-03-01T00:00:00.000Z"
assert_eq "$ERR" "silt: warning: pull 'dumps': file 'dump-2019-12-31.csv' sorts before the last ingested 'dump-2020-02-01.csv' and will not be read; rename it or reset the source"
expect_sql 'select "offset", op, event_time, id, city, population from dumps' <<'CSV'
offset,op,event_time,id,city,population
0,0,2020-01-01T00:00:00Z,1,Vancouver,2581000
1,0,2020-01-01T00:00:00Z,2,Seattle,3433000
2,2,2020-01-01T00:00:00Z,1,Vancouver,2581000
3,3,2020-02-01T00:00:00Z,1,Vancouver,2606000
4,1,2020-01-01T00:00:00Z,2,Seattle,3433000
5,0,2020-03-01T00:00:00Z,3,Portland,650000
CSV
ok sources
assert_eq "$OUT" "dumps (source odf/polling): 1 file skipped: dump-2019-12-31.csv (sorts before the last ingested 'dump-2020-02-01.csv')"

# a file whose name does not carry a date is skipped with a warning naming it
# and the pattern; the later files are ingested; a 0-byte file gives no
# records but the source moves past it (an AddData with only the state)
printf 'id,city,population\n7,Nowhere,1\n' >"$DROP/dump-latest.csv"
: >"$DROP/dump-2020-03-15.csv"
printf 'id,city,population\n1,Vancouver,2606000\n3,Portland,652000\n' >"$DROP/dump-2020-04-01.csv"
H0=$(head_of dumps)
ok pull dumps
assert_eq "$OUT" "dumps: 2 new records (offsets 6..7), watermark 2020-04-01T00:00:00.000Z"
assert_eq "$ERR" "silt: warning: pull 'dumps': skipping 'dump-latest.csv': event time pattern 'dump-(\\d+-\\d+-\\d+)\\.csv' does not match 'dump-latest.csv'
silt: warning: pull 'dumps': file 'dump-2019-12-31.csv' sorts before the last ingested 'dump-2020-03-01.csv' and will not be read; rename it or reset the source"
run log dumps -n 2 --yaml
assert_eq "$(printf '%s\n' "$OUT" | grep -c 'newData:')" "1" "the 0-byte file's AddData has no data"
assert_contains "$OUT" "value: dump-2020-03-15.csv"
assert_contains "$OUT" "value: dump-2020-04-01.csv"
run log dumps -n 3
assert_eq "$(printf '%s\n' "$OUT" | grep -c ' AddData$')" "3"
assert_eq "$(printf '%s\n' "$OUT" | tail -1 | awk '{print $3}')" "$H0" "two blocks: the 0-byte file, the next file"
run log dumps --yaml
assert_eq "$(printf '%s\n' "$OUT" | grep -c 'dump-latest.csv')" "0" "nothing committed for the skipped file"
expect_sql 'select "offset", op, event_time, id, city, population from dumps where "offset" >= 6' <<'CSV'
offset,op,event_time,id,city,population
6,2,2020-03-01T00:00:00Z,3,Portland,650000
7,3,2020-04-01T00:00:00Z,3,Portland,652000
CSV
ok sources
assert_eq "$OUT" "dumps (source odf/polling): 2 files skipped: dump-latest.csv (event time pattern 'dump-(\\d+-\\d+-\\d+)\\.csv' does not match 'dump-latest.csv'), dump-2019-12-31.csv (sorts before the last ingested 'dump-2020-03-01.csv')"
# nothing new: the same warnings, no block
H1=$(head_of dumps)
ok pull dumps
assert_eq "$OUT" "dumps: up to date"
assert_eq "$(printf '%s\n' "$ERR" | wc -l)" "2"
assert_eq "$(head_of dumps)" "$H1" "no block when only skipped files remain"
# once they are gone: silent, and the note disappears
rm "$DROP/dump-latest.csv" "$DROP/dump-2019-12-31.csv"
ok pull dumps
assert_eq "$OUT" "dumps: up to date"
assert_eq "$ERR" ""
ok sources
assert_eq "$OUT" ""
ok verify dumps

# a first pull that finds only names the pattern rejects: warnings, no block
SOLO="$T_DIR/solo"
mkdir -p "$SOLO"
printf 'id\n1\n' >"$SOLO/dump-x.csv"
sed -e 's/name: dumps/name: solo/' -e "s#$DROP/#$SOLO/#" glob.yaml >solo.yaml
ok add solo.yaml
H0=$(head_of solo)
ok pull solo
assert_eq "$OUT" "solo: up to date"
assert_eq "$ERR" "silt: warning: pull 'solo': skipping 'dump-x.csv': event time pattern 'dump-(\\d+-\\d+-\\d+)\\.csv' does not match 'dump-x.csv'"
assert_eq "$(head_of solo)" "$H0" "solo unchanged"
# an invalid pattern concerns the source: an error, nothing committed
sed -e 's/name: dumps/name: badpat/' -e "s#pattern: .*#pattern: 'dump-.*'#" glob.yaml >badpat.yaml
ok add badpat.yaml
H0=$(head_of badpat)
fails 1 "silt: pull 'badpat': FilesGlob '$DROP/dump-*.csv': event time pattern 'dump-.*' has no group 1 holding the time" pull badpat
assert_eq "$(head_of badpat)" "$H0" "badpat unchanged"

# the Flow form, ordered by event time: the skipped file is noted under its
# Source resource (also with --json), the others are read in time order
CF="$T_DIR/cf"
mkdir -p "$CF"
printf 'id\n1\n' >"$CF/c-02.01.2021.csv"
printf 'id\n2\n' >"$CF/c-31.12.2020.csv"
printf 'id\n3\n' >"$CF/c-soon.csv"
cat >cf.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: cf
  kind: Root
  metadata:
  - kind: SetInfo
    description: flow form
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: cf-src
spec:
  ingress:
    kind: FilesGlob
    path: $CF/c-*.csv
    order: ByEventTime
    eventTime:
      kind: FromPath
      pattern: 'c-(.*)\.csv'
      timestampFormat: 'dd.MM.yyyy'
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT]
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: cf
spec:
  target: Dataset:cf
  triggers:
  - kind: Schedule
    cron: "0 6 * * *"
  tasks:
  - kind: Ingest
    source: Source:cf-src
YAML
ok add cf.yaml
ok pull cf
assert_eq "$OUT" "cf: 2 new records (offsets 0..1), watermark 2021-01-02T00:00:00.000Z"
assert_eq "$ERR" "silt: warning: pull 'cf': skipping 'c-soon.csv': event time of 'c-soon.csv': cannot parse 'soon' with timestamp format 'dd.MM.yyyy'"
expect_sql 'select "offset", event_time, id from cf' <<'CSV'
offset,event_time,id
0,2020-12-31T00:00:00Z,2
1,2021-01-02T00:00:00Z,1
CSV
run --json sources
assert_eq "$(printf '%s' "$OUT" | jget '[s["skipped"] for s in d if s["name"] == "cf-src"][0]')" \
    '[{"dataset":"cf","file":"c-soon.csv","reason":"event time of '"'"'c-soon.csv'"'"': cannot parse '"'"'soon'"'"' with timestamp format '"'"'dd.MM.yyyy'"'"'"}]'
run sources
assert_contains "$OUT" "cf (source cf-src): 1 file skipped: c-soon.csv (event time of 'c-soon.csv': cannot parse 'soon' with timestamp format 'dd.MM.yyyy')"

# gzip-wrapped files, ordered by event time
GZ="$T_DIR/gz"
mkdir -p "$GZ"
printf 'id,name\n1,a\n' | gzip -n >"$GZ/part_02.01.2021.csv.gz"
printf 'id,name\n2,b\n' | gzip -n >"$GZ/part_31.12.2020.csv.gz"
cat >gz.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: parts
  kind: Root
  metadata:
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $GZ/part_*.csv.gz
        order: ByEventTime
        eventTime:
          kind: FromPath
          pattern: 'part_(.*)\.csv\.gz'
          timestampFormat: 'dd.MM.yyyy'
      prepare:
        - kind: Decompress
          format: Gzip
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, name STRING]
      merge:
        kind: Append
YAML
ok add gz.yaml
ok pull parts
assert_eq "$OUT" "parts: 2 new records (offsets 0..1), watermark 2021-01-02T00:00:00.000Z"
expect_sql 'select "offset", event_time, id, name from parts' <<'CSV'
offset,event_time,id,name
0,2020-12-31T00:00:00Z,2,b
1,2021-01-02T00:00:00Z,1,a
CSV
ok pull parts
assert_eq "$OUT" "parts: up to date"
done_tests
