#!/usr/bin/env bash
# test_pull.sh — `silt pull` of Url sources against a real nginx on
# 127.0.0.1: a changing CSV with the Snapshot strategy (exact corrections and
# retractions), caching through ETag (304 with no body in the access log),
# gzip / zip wrapped inputs, a Pipe step, and faults (HTTP 500, a server that
# never answers, an archive without the requested entry, a failing pipe, an
# incompatible schema change): exit 1, dataset unchanged, next pull works.
source "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || { echo "$T_NAME: nginx not installed (scripts/bootstrap.sh)" >&2; exit 1; }


# ---- nginx --------------------------------------------------------------------
WWW="$T_DIR/www"
NG="$T_DIR/nginx"
mkdir -p "$WWW" "$NG/logs"
PORT=$(free_port)
nginx_write_conf "" <<CONF
        location /error { return 500; }
        location /moved { return 302 /snap.csv; }
CONF
nginx_start

# last access log line: "STATUS BYTES" of the last request
last_access() { tail -n 1 "$NG/access.log" | sed -E 's/.*" ([0-9]{3}) ([0-9]+) .*/\1 \2/'; }

ok init


# ---- Snapshot over a changing CSV ------------------------------------------------
printf 'id,name,v\n1,a,10\n2,b,20\n3,c,30\n' >"$WWW/snap.csv"
touch -d '2020-01-01 00:00:00 UTC' "$WWW/snap.csv"
add_ds snap <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/snap.csv
        headers:
          - name: X-Silt-Test
            value: yes
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, name STRING, v BIGINT]
      merge:
        kind: Snapshot
        primaryKey: [id]
YAML
ok pull snap
assert_eq "$OUT" "snap: 3 new records (offsets 0..2), watermark 2020-01-01T00:00:00.000Z"
assert_eq "$(last_access)" "200 31" "first GET"
ok pull snap
assert_eq "$OUT" "snap: up to date"
assert_eq "$(last_access)" "304 0" "conditional GET sends no body"
run log snap -n 1 --yaml
assert_contains "$OUT" "sourceName: odf/polling"
assert_contains "$OUT" "kind: odf/etag"
# change: 1 corrected, 2 retracted, 4 added
printf 'id,name,v\n1,a,11\n3,c,30\n4,d,40\n' >"$WWW/snap.csv"
touch -d '2020-02-01 00:00:00 UTC' "$WWW/snap.csv"
ok pull snap
assert_eq "$OUT" "snap: 4 new records (offsets 3..6), watermark 2020-02-01T00:00:00.000Z"
expect_sql 'select "offset", op, event_time, id, name, v from snap order by "offset"' <<'CSV'
offset,op,event_time,id,name,v
0,0,2020-01-01T00:00:00Z,1,a,10
1,0,2020-01-01T00:00:00Z,2,b,20
2,0,2020-01-01T00:00:00Z,3,c,30
3,2,2020-01-01T00:00:00Z,1,a,10
4,3,2020-02-01T00:00:00Z,1,a,11
5,1,2020-01-01T00:00:00Z,2,b,20
6,0,2020-02-01T00:00:00Z,4,d,40
CSV
ok pull snap
assert_eq "$OUT" "snap: up to date"
assert_eq "$(last_access)" "304 0"
# the file is touched but unchanged in content: fetched, nothing new, state moved -> one block without data
touch -d '2020-03-01 00:00:00 UTC' "$WWW/snap.csv"
ok pull snap
assert_eq "$OUT" "snap: 0 new records, watermark 2020-02-01T00:00:00.000Z"
ok pull snap --json
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys;d=json.load(sys.stdin)[0];print(d["name"],d["upToDate"],d["records"])')" "snap True 0"
ok verify snap

# ---- redirects ----------------------------------------------------------------------
add_ds moved <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/moved
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, name STRING, v BIGINT]
      merge:
        kind: Ledger
        primaryKey: [id]
YAML
ok pull moved
assert_eq "$OUT" "moved: 3 new records (offsets 0..2), watermark 2020-03-01T00:00:00.000Z"

# ---- gzip and zip ---------------------------------------------------------------------
cp "$SILT_FIXTURES/pull/data.csv.gz" "$SILT_FIXTURES/pull/multi.zip" "$WWW/"
add_ds gz <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/data.csv.gz
        eventTime:
          kind: FromSystemTime
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
ok pull gz
assert_contains "$OUT" "gz: 2 new records (offsets 0..1), watermark $(date -u +%Y-%m-%d)T"
expect_sql 'select id, name, event_time = system_time as et_is_system_time from gz' <<'CSV'
id,name,et_is_system_time
1,a,true
2,b,true
CSV
add_ds zipbadtime <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/multi.zip
        eventTime:
          kind: FromPath
          pattern: 'multi\.(zip)'
          timestampFormat: '%Y'
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
YAML
fails 1 "silt: pull 'zipbadtime': event time of 'multi.zip': cannot parse 'zip' with timestamp format '%Y'" pull zipbadtime
add_ds zipped <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/multi.zip
        eventTime:
          kind: FromMetadata
      prepare:
        - kind: Decompress
          format: Zip
          subPath: 'data/*.csv'
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, name STRING]
      merge:
        kind: Ledger
        primaryKey: [id]
YAML
ok pull zipped
assert_eq "$OUT" "zipped: 2 new records (offsets 0..1), watermark $(date -u -r "$WWW/multi.zip" +%Y-%m-%dT%H:%M:%S.000Z)"
expect_sql 'select id, name from zipped order by id' <<'CSV'
id,name
1,a
2,b
CSV

# archive without the requested entry: error lists the entries, dataset unchanged
add_ds nozip <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/multi.zip
      prepare:
        - kind: Decompress
          format: Zip
          subPath: 'data/*.parquet'
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
YAML
H0=$(head_of nozip)
fails 1 "silt: pull 'nozip': prepare step 1: archive 'multi.zip' has no entry matching 'data/*.parquet' (entries: readme.txt, data/2020-01-01.csv, data/extra.json)" pull nozip
assert_eq "$(head_of nozip)" "$H0" "dataset unchanged after a missing archive entry"

# ---- Pipe: strip a header line -------------------------------------------------------------
printf '# exported by some tool\nid,name\n7,x\n8,y\n' >"$WWW/manifest.csv"
touch -d '2020-06-01 00:00:00 UTC' "$WWW/manifest.csv"
add_ds piped <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/manifest.csv
      prepare:
        - kind: Pipe
          command: [sed, '1d']
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, name STRING]
      merge:
        kind: Snapshot
        primaryKey: [id]
YAML
ok pull piped
assert_eq "$OUT" "piped: 2 new records (offsets 0..1), watermark 2020-06-01T00:00:00.000Z"
expect_sql 'select "offset", op, id, name from piped' <<'CSV'
offset,op,id,name
0,0,7,x
1,0,8,y
CSV
# a failing pipe command
add_ds badpipe <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/manifest.csv
      prepare:
        - kind: Pipe
          command: [sed, '-e', 's/unterminated']
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
YAML
H0=$(head_of badpipe)
fails 1 "silt: pull 'badpipe': prepare step 1: pipe 'sed -e s/unterminated' exited with status 1: sed: -e expression #1, char 14: unterminated \`s' command" pull badpipe
assert_eq "$(head_of badpipe)" "$H0" "dataset unchanged after a failing pipe"

# ---- HTTP 500 ------------------------------------------------------------------------------
add_ds broken <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: http://user:hunter2@127.0.0.1:$PORT/error/data.csv
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
YAML
H0=$(head_of broken)
fails 1 "silt: pull 'broken': GET http://127.0.0.1:$PORT/error/data.csv: HTTP 500" pull broken
assert_eq "$(head_of broken)" "$H0" "dataset unchanged after HTTP 500"
assert_eq "$(last_access)" "500 $(tail -n 1 "$NG/access.log" | sed -E 's/.*" 500 ([0-9]+) .*/\1/')"

# ---- a server that accepts and never answers -------------------------------------------------
HANG_PORT=$(free_port)
python3 -c "
import socket,time
s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1);s.bind(('127.0.0.1',$HANG_PORT));s.listen(8)
conns=[]
while True:
    c,_=s.accept();conns.append(c)
" &
T_PIDS+=("$!")
sleep 0.3
add_ds hang <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: http://127.0.0.1:$HANG_PORT/data.csv
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
YAML
H0=$(head_of hang)
T0=$(date +%s)
SILT_HTTP_TIMEOUT=1 fails 1 "silt: pull 'hang': GET http://127.0.0.1:$HANG_PORT/data.csv: timed out (no data for 1 s; SILT_HTTP_TIMEOUT)" pull hang
[ $(($(date +%s) - T0)) -le 5 ] || fail "timeout took too long"
assert_eq "$(head_of hang)" "$H0" "dataset unchanged after a timeout"

# ---- incompatible schema change: clear error, unchanged, works once fixed --------------------------
printf '{"id":1,"v":10}\n{"id":2,"v":20}\n' >"$WWW/evolve.json"
touch -d '2020-01-01 00:00:00 UTC' "$WWW/evolve.json"
add_ds evolve <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: $BASE/evolve.json
      read:
        kind: NdJson
      merge:
        kind: Ledger
        primaryKey: [id]
YAML
ok pull evolve
assert_eq "$OUT" "evolve: 2 new records (offsets 0..1), watermark 2020-01-01T00:00:00.000Z"
printf '{"id":1,"v":10}\n{"id":3,"v":"three"}\n' >"$WWW/evolve.json"
touch -d '2020-01-02 00:00:00 UTC' "$WWW/evolve.json"
H0=$(head_of evolve)
run pull evolve
assert_eq "$RC" "1" "incompatible schema: exit 1"
assert_contains "$ERR" "silt: ingest into 'evolve': "
assert_contains "$ERR" "block 4 (SetDataSchema): schema.fields[5] ('v'): type changed"
assert_eq "$(head_of evolve)" "$H0" "dataset unchanged after an incompatible schema"
printf '{"id":1,"v":10}\n{"id":3,"v":30}\n' >"$WWW/evolve.json"
touch -d '2020-01-03 00:00:00 UTC' "$WWW/evolve.json"
ok pull evolve
assert_eq "$OUT" "evolve: 1 new record (offsets 2..2), watermark 2020-01-03T00:00:00.000Z"
expect_sql 'select "offset", id, v from evolve' <<'CSV'
offset,id,v
0,1,10
1,2,20
2,3,30
CSV

# ---- --set-watermark, --all, usage -------------------------------------------------------------------
ok pull snap --set-watermark 2021-01-01T00:00:00Z
assert_eq "$OUT" "snap: watermark set to 2021-01-01T00:00:00.000Z"
fails 1 "silt: --set-watermark 2020-01-01T00:00:00Z: the watermark of 'snap' is already 2021-01-01T00:00:00Z" pull snap --set-watermark 2020-01-01T00:00:00Z
ok verify snap
run pull --all
assert_eq "$RC" "1" "--all with broken sources fails"
assert_contains "$OUT" "snap: up to date"
assert_contains "$OUT" "piped: up to date"
fails 2 "silt: pull needs NAME... or --all (see 'silt help')" pull
kill "$NGINX_PID"
wait "$NGINX_PID" 2>/dev/null || true
done_tests
