#!/usr/bin/env bash
# bench_push.sh — push ingest over HTTP (make bench; figures only, nothing
# asserted): 16 concurrent wrk connections POST small JSON records, BATCH
# per request (bench/push.lua), to POST /odf/{ds}/ingest of `silt serve`
#   1. into a buffered RestEndpoint source: records/s acknowledged (202),
#      then `silt pull` flushes the buffer: records/s ingested, and the
#      dataset must hold every acknowledged record;
#   2. into an AddPushSource (synchronous: one AddData per request, 200):
#      records/s committed.
# Acknowledged records are counted from the server's request log (wrk
# does not count the requests in flight when it stops).
# The synchronous path loses commit races under 16 writers: its 409s are
# reported (non-2xx) and not counted.
#   bench_push.sh SILT [SECONDS] [BATCH]
set -euo pipefail
SILT=$1
SECS=${2:-5}
export BATCH=${3:-1000}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/push"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
PIDS=()
trap 'for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done' EXIT
pin0=() pin1=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin0=(taskset -c 0) pin1=(taskset -c 1); fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do python3 -c "import socket;socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null && return; sleep 0.05; done; }
TOKEN=bench-token
rate() { python3 -c "print('%.0f' % ($1 / $2))"; }

"$SILT" init >/dev/null
cat >res.yaml <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: buffered
  kind: Root
  metadata: []
---
kind: DatasetSnapshot
version: 1
content:
  name: direct
  kind: Root
  metadata:
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
        ddlSchema: ["id BIGINT", "device STRING", "value DOUBLE"]
      merge:
        kind: Append
---
$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: buffered-src
spec:
  ingress:
    kind: RestEndpoint
    buffer:
      kind: Memory
      bufferSize: 1000000000
      overflowPolicy: Reject
  read:
    kind: NdJson
    ddlSchema: ["id BIGINT", "device STRING", "value DOUBLE"]
  merge:
    kind: Append
---
$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: buffered
spec:
  target: Dataset:buffered
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: Source:buffered-src
YAML
"$SILT" add res.yaml >/dev/null

PORT=$(free_port)
SILT_ADMIN_TOKEN=$TOKEN "${pin0[@]}" "$SILT" serve --listen "127.0.0.1:$PORT" >serve.out 2>serve.log &
SPID=$!
PIDS+=("$SPID")
wait_port "$PORT"

# push DATASET STATUS -> records acknowledged with STATUS during the run
push() {
    local before after
    before=$(grep -c "^POST /odf/$1/ingest $2 " serve.log || true)
    "${pin1[@]}" wrk -t2 -c16 -d"${SECS}s" -s "$root/bench/push.lua" -H "Authorization: Bearer $TOKEN" \
        "http://127.0.0.1:$PORT/odf/$1/ingest" >"wrk-$1.txt"
    sleep 1 # requests in flight at the end finish
    if grep -q 'Non-2xx' "wrk-$1.txt"; then echo "bench_push: non-2xx answers: $(grep Non-2xx "wrk-$1.txt")" >&2; fi
    after=$(grep -c "^POST /odf/$1/ingest $2 " serve.log || true)
    echo $(((after - before) * BATCH))
}

acked=$(push buffered 202)
t0=$(date +%s.%N)
"$SILT" pull buffered >/dev/null
t1=$(date +%s.%N)
flush=$(python3 -c "print($t1 - $t0)")
have=$("$SILT" sql 'SELECT count(*) FROM buffered' --format csv | tail -1)
[ "$have" = "$acked" ] || echo "bench_push: the dataset holds $have records, $acked were acknowledged" >&2
synced=$(push direct 200)
kill "$SPID"
wait "$SPID" 2>/dev/null || true

echo "### Push ingest over HTTP ($(date -u +%Y-%m-%d), $(nproc) cores; 16 connections, $BATCH records per request, ${SECS} s)"
echo
echo "| path | records | records/s |"
echo "|---|---:|---:|"
echo "| RestEndpoint with buffer: acknowledged (202) | $acked | $(rate "$acked" "$SECS") |"
echo "| … flushed by \`silt pull\` (one AddData, $(printf '%.2f' "$flush") s) | $have | $(rate "$have" "$flush") |"
echo "| AddPushSource, synchronous (one AddData per request, 200) | $synced | $(rate "$synced" "$SECS") |"
