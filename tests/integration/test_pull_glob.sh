#!/usr/bin/env bash
# test_pull_glob.sh — `silt pull` of a FilesGlob source over a folder that
# gains files between pulls: FromPath event times, one AddData per file in
# name order, the last file name as source state (odf/etag), "up to date"
# when nothing is new, a glob that matches nothing on the first pull
# (error, exit 1, dataset unchanged) and a bad file name (error, fixed by the
# next file), and gzip-wrapped files.
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
assert_eq "$OUT" "dumps: 4 new records (offsets 0..3), watermark 2020-02-01T00:00:00Z"
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
# a file sorting before the last one is ignored (files never change once added)
printf 'id,city,population\n9,Old,1\n' >"$DROP/dump-2019-12-31.csv"
ok pull dumps
assert_eq "$OUT" "dumps: 2 new records (offsets 4..5), watermark 2020-03-01T00:00:00Z"
expect_sql 'select "offset", op, event_time, id, city, population from dumps' <<'CSV'
offset,op,event_time,id,city,population
0,0,2020-01-01T00:00:00Z,1,Vancouver,2581000
1,0,2020-01-01T00:00:00Z,2,Seattle,3433000
2,2,2020-01-01T00:00:00Z,1,Vancouver,2581000
3,3,2020-02-01T00:00:00Z,1,Vancouver,2606000
4,1,2020-01-01T00:00:00Z,2,Seattle,3433000
5,0,2020-03-01T00:00:00Z,3,Portland,650000
CSV

# a file whose name does not carry a date: clear error, nothing committed
printf 'id,city,population\n' >"$DROP/dump-latest.csv"
H0=$(head_of dumps)
fails 1 "silt: pull 'dumps': event time pattern 'dump-(\\d+-\\d+-\\d+)\\.csv' does not match 'dump-latest.csv'" pull dumps
assert_eq "$(head_of dumps)" "$H0" "unchanged after a bad file name"
rm "$DROP/dump-latest.csv"
ok pull dumps
assert_eq "$OUT" "dumps: up to date"
ok verify dumps

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
assert_eq "$OUT" "parts: 2 new records (offsets 0..1), watermark 2021-01-02T00:00:00Z"
expect_sql 'select "offset", event_time, id, name from parts' <<'CSV'
offset,event_time,id,name
0,2020-12-31T00:00:00Z,2,b
1,2021-01-02T00:00:00Z,1,a
CSV
ok pull parts
assert_eq "$OUT" "parts: up to date"
done_tests
