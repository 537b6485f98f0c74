#!/usr/bin/env bash
# test_push_buffer.sh — RestEndpoint push sources with a buffer
# (docs/ingestion.md "RestEndpoint", docs/server.md "POST /odf/{ds}/ingest"):
# 202 with exact bodies; Reject -> 429, nothing lost; DropOldest -> the
# exact surviving records, drop counts in the answer, `silt sources` and
# the server log; a bad body -> 400, nothing buffered; a request larger
# than the buffer; ?sourceName=; a RestEndpoint without buffer and a legacy
# AddPushSource ingest at once (200); `silt pull` flushes (exact rows,
# offsets, ops), with the server running and stopped; a flush whose
# compaction was lost to a crash ingests nothing twice; a torn append is
# cut off.
source "$(dirname "$0")/lib.sh"

use_soft_failures

ok init
source_yaml() { # NAME POLICY|none
    cat <<YAML
---
kind: DatasetSnapshot
version: 1
content:
  name: $1
  kind: Root
  metadata: []
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: $1-src
spec:
  ingress:
    kind: RestEndpoint
YAML
    [ "$2" = none ] || printf '    buffer:\n      kind: Memory\n      bufferSize: 3\n      overflowPolicy: %s\n' "$2"
    cat <<YAML
  read:
    kind: NdJson
    ddlSchema: ["id BIGINT", "v STRING"]
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: $1
spec:
  target: Dataset:$1
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: Source:$1-src
YAML
}
{ source_yaml rej Reject; source_yaml drop DropOldest; source_yaml direct none; } >res.yaml
ok add res.yaml
add_ds legacy <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema: ["id BIGINT", "v STRING"]
      merge:
        kind: Append
Y
serve_start
body() { assert_eq "$HTTP_BODY" "$1" "$2"; }
push() { http POST "/odf/$1/ingest${3:-}" -H 'Content-Type: application/x-ndjson' --data-binary "$2"; }
ans() { # SOURCE N BUFFERED DROPPED DROPPED_TOTAL
    printf '{"source":"%s","numRecords":%s,"bufferedRecords":%s,"bufferSize":3,"droppedRecords":%s,"droppedTotal":%s}' "$@"
}
rows() { # DATASET: offset,op,id,v
    expect_sql "SELECT \"offset\", op, id, v FROM $1 ORDER BY \"offset\"" "rows of $1"
}

# ---- Reject -------------------------------------------------------------------
push rej $'{"id":1,"v":"a"}\n{"id":2,"v":"b"}\n'
assert_eq "$HTTP_STATUS" 202 "first push: $HTTP_BODY"
body "$(ans rej-src 2 2 0 0)" "first push"
push rej '{"id":3,"v":"c"}'
assert_eq "$HTTP_STATUS" 202 "second push: $HTTP_BODY"
body "$(ans rej-src 1 3 0 0)" "second push"
push rej '{"id":4,"v":"d"}'
assert_eq "$HTTP_STATUS" 429 "full buffer: $HTTP_BODY"
body '{"message":"the buffer of source '"'"'rej-src'"'"' is full (3 of 3 records); nothing of this request was accepted: retry after a flush (`silt pull rej`)","source":"rej-src","numRecords":0,"bufferedRecords":3,"bufferSize":3}' "429 body"
# a body that does not parse: 400, nothing buffered (checked by the flush below)
push rej $'{"id":5,"v":"e"}\n{"id":"x","v":"f"}\n'
assert_eq "$HTTP_STATUS" 400 "bad body: $HTTP_BODY"
assert_contains "$HTTP_BODY" '"message":"request body: '
push drop $'{"id":1}\n{"id":2}\n{"id":3}\n{"id":4}\n'
assert_eq "$HTTP_STATUS" 400 "request larger than the buffer: $HTTP_BODY"
body '{"message":"the request has 4 records; the buffer of source '"'"'drop-src'"'"' holds at most 3"}' "too large"
push rej '{"id":5,"v":"e"}' '?sourceName=nope'
assert_eq "$HTTP_STATUS" 400 "unknown sourceName: $HTTP_BODY"
body '{"message":"dataset '"'"'rej'"'"' has no push source named '"'"'nope'"'"'"}' "unknown sourceName"
push rej '{"id":5,"v":"e"}' '?sourceName=rej-src'
assert_eq "$HTTP_STATUS" 429 "sourceName, still full: $HTTP_BODY"
ok sources
assert_eq "$(printf '%s\n' "$OUT" | grep '^rej-src:')" "rej-src: 3 records buffered (bufferSize 3, Reject), 0 dropped" "sources"
ok --json sources
assert_eq "$(printf '%s' "$OUT" | jget "[s.get('buffer') for s in d]")" \
    '[null,{"bufferSize":3,"buffered":0,"dropped":0,"overflowPolicy":"DropOldest"},{"bufferSize":3,"buffered":3,"dropped":0,"overflowPolicy":"Reject"}]' "sources --json"

# flush while the server runs: one AddData with the three acknowledged records
ok pull rej
assert_eq "$OUT" "rej: 3 new records (offsets 0..2), watermark $(info rej "d['watermark']" | sed 's/Z$/.000Z/;s/\(\.[0-9][0-9][0-9]\)[0-9]*\.000Z/\1Z/')" "pull output"
rows rej <<'R'
offset,op,id,v
0,0,1,a
1,0,2,b
2,0,3,c
R
assert_eq "$("$SILT" --json log rej | jget "[b['event']['kind'] for b in d].count('AddData')")" 1 "one AddData"
assert_eq "$("$SILT" --json log rej | jget "[b['event'].get('newSourceState') for b in d if b['event']['kind']=='AddData'][0]")" \
    '{"kind":"silt/push-buffer","sourceName":"rej-src","value":"3"}' "source state"
ok pull rej
assert_eq "$OUT" "rej: up to date" "second pull"
push rej '{"id":4,"v":"d"}'
assert_eq "$HTTP_STATUS" 202 "room again: $HTTP_BODY"
body "$(ans rej-src 1 1 0 0)" "room again"

# ---- DropOldest -----------------------------------------------------------------
push drop $'{"id":1,"v":"a"}\n{"id":2,"v":"b"}\n'
body "$(ans drop-src 2 2 0 0)" "drop 1"
push drop '{"id":3,"v":"c"}'
body "$(ans drop-src 1 3 0 0)" "drop 2"
push drop $'{"id":4,"v":"d"}\n{"id":5,"v":"e"}\n'
assert_eq "$HTTP_STATUS" 202 "drop 3: $HTTP_BODY"
body "$(ans drop-src 2 3 2 2)" "drop 3"
push drop '{"id":6,"v":"f"}'
body "$(ans drop-src 1 3 1 3)" "drop 4"
assert_contains "$(cat "$SERVE_LOG")" "silt serve: push buffer of source 'drop-src' (dataset 'drop') is full: dropped the 2 oldest records (2 in all)"
assert_contains "$(cat "$SERVE_LOG")" "silt serve: push buffer of source 'drop-src' (dataset 'drop') is full: dropped the 1 oldest records (3 in all)"
ok sources
assert_eq "$(printf '%s\n' "$OUT" | grep '^drop-src:')" "drop-src: 3 records buffered (bufferSize 3, DropOldest), 3 dropped" "sources drop"

# ---- without buffer, and the legacy AddPushSource: at once (200) ----------------
push direct '{"id":7,"v":"g"}'
assert_eq "$HTTP_STATUS" 200 "unbuffered RestEndpoint: $HTTP_BODY"
assert_eq "$(jget "[d['numRecords'], d['offsetInterval']]" <<<"$HTTP_BODY")" '[1,{"end":0,"start":0}]' "unbuffered"
push legacy '{"id":8,"v":"h"}'
assert_eq "$HTTP_STATUS" 200 "AddPushSource: $HTTP_BODY"
rows direct <<'R'
offset,op,id,v
0,0,7,g
R
fails_like 1 "source 'direct-src' is a RestEndpoint source without a buffer" pull direct

# ---- flush with the server stopped ----------------------------------------------
serve_stop
ok pull drop
rows drop <<'R'
offset,op,id,v
0,0,4,d
1,0,5,e
2,0,6,f
R
ok sources
assert_eq "$(printf '%s\n' "$OUT" | grep '^drop-src:')" "drop-src: 0 records buffered (bufferSize 3, DropOldest), 3 dropped" "sources after flush"

# ---- a crash between the commit and the buffer's compaction ---------------------
WAL=$(ls .silt/buffers/*/rej-src.wal)
cp "$WAL" wal.before
ok pull rej
rows rej <<'R'
offset,op,id,v
0,0,1,a
1,0,2,b
2,0,3,c
3,0,4,d
R
cp wal.before "$WAL" # as if the flush had died right after its commit
ok pull rej
assert_eq "$OUT" "rej: up to date" "no double ingest"
ok sources
assert_eq "$(printf '%s\n' "$OUT" | grep '^rej-src:')" "rej-src: 0 records buffered (bufferSize 3, Reject), 0 dropped" "skipped records not counted"

# ---- a torn append is cut off ---------------------------------------------------
serve_start
printf 'SPF1\001\000\000\000\377' >>"$WAL" # a frame header cut short by a crash
push rej '{"id":9,"v":"i"}'
assert_eq "$HTTP_STATUS" 202 "after a torn tail: $HTTP_BODY"
body "$(ans rej-src 1 1 0 0)" "after a torn tail"
ok pull rej
rows rej <<'R'
offset,op,id,v
0,0,1,a
1,0,2,b
2,0,3,c
3,0,4,d
4,0,9,i
R
serve_stop
finish
