#!/usr/bin/env bash
# bench_serve.sh — silt serve side by side with its baselines, in one run
# (make bench; figures only, nothing asserted):
#   1. GET /api/v2/datasets/{rid} and GET …/files/{path}/content of a 4 KiB
#      file vs a bare libmicrohttpd server answering a static body (wrk,
#      keep-alive, 64 connections; req/s, p50/p99, ratio);
#   2. uploads with auto-commit, 4 KiB bodies, 8 concurrent clients on 8
#      branches (commits/s) vs `silt upload` in a loop;
#   3. readTable of an N-row dataset as Arrow (MB/s, server peak RSS) vs
#      `silt sql … --format parquet` of the same rows.
# The server runs on core 0 and wrk on core 1 when taskset is available.
#   bench_serve.sh SILT BARE_HTTP [ROWS] [SECONDS]
set -euo pipefail
SILT=$1
BARE=$2
ROWS=${3:-10000000}
SECS=${4:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/serve"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
PIDS=()
trap 'for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done' EXIT
pin0=() pin1=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then pin0=(taskset -c 0) pin1=(taskset -c 1); fi
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do python3 -c "import socket;socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null && return; sleep 0.05; done; }
TOKEN=bench-token

# wrk_run URL [wrk args…] -> "req/s p50 p99"
wrk_run() {
    local url=$1
    shift
    "${pin1[@]}" wrk -t2 -c64 -d"${SECS}s" --latency -H "Authorization: Bearer $TOKEN" "$@" "$url" >wrk.txt
    local rps p50 p99
    rps=$(awk '/Requests\/sec/ {print $2}' wrk.txt)
    p50=$(awk '$1 == "50%" {print $2}' wrk.txt)
    p99=$(awk '$1 == "99%" {print $2}' wrk.txt)
    if grep -q 'Non-2xx' wrk.txt; then echo "bench_serve: non-2xx answers: $(grep Non-2xx wrk.txt)" >&2; fi
    echo "$rps $p50 $p99"
}
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }

# ---- workspace ------------------------------------------------------------------
"$SILT" init >/dev/null
"$SILT" new bench --files >/dev/null
head -c 4096 /dev/urandom >f.bin
"$SILT" upload bench f.bin >/dev/null
for b in 1 2 3 4 5 6 7 8; do "$SILT" branch create bench "b$b" >/dev/null; done
RID=$("$SILT" --json info bench | python3 -c 'import json,sys;print(json.load(sys.stdin)["rid"])')
STORED=$("$SILT" token create bench-read --read 2>/dev/null) # a token of tokens.json: one stat + SHA-256 per request

start_silt() {
    PORT=$(free_port)
    SILT_ADMIN_TOKEN=$TOKEN "${pin0[@]}" "$SILT" serve --listen "127.0.0.1:$PORT" >serve.out 2>serve.log &
    SPID=$!
    PIDS+=("$SPID")
    wait_port "$PORT"
}

echo "## silt serve ($(date -u +%Y-%m-%d), $(nproc) cores, wrk -t2 -c64 -d${SECS}s)"
echo
echo "| workload | req/s | p50 | p99 | vs bare MHD (thread per connection) | vs bare MHD (epoll, 2 threads) |"
echo "|---|---|---|---|---|---|"
# bare_run MODE -> "req/s p50 p99" of a fresh bare server
bare_run() {
    local port bp
    port=$(free_port)
    "${pin0[@]}" "$BARE" "$port" "$1" >/dev/null &
    bp=$!
    PIDS+=("$bp")
    wait_port "$port"
    wrk_run "http://127.0.0.1:$port/api/v2/datasets/x"
    kill "$bp"
    wait "$bp" 2>/dev/null || true
}
# the machine may be shared: the bare server runs before and after silt, and
# the ratios are taken against the mean of both runs of each mode
read -r bt1_rps bt_50 bt_99 < <(bare_run thread)
read -r bp1_rps bp_50 bp_99 < <(bare_run pool)
start_silt
read -r s_rps s_50 s_99 < <(wrk_run "http://127.0.0.1:$PORT/api/v2/datasets/$RID")
read -r c_rps c_50 c_99 < <(wrk_run "http://127.0.0.1:$PORT/api/v2/datasets/$RID/files/f.bin/content")
read -r h_rps h_50 h_99 < <(wrk_run "http://127.0.0.1:$PORT/health")
read -r t_rps t_50 t_99 < <(TOKEN=$STORED wrk_run "http://127.0.0.1:$PORT/api/v2/datasets/$RID")
read -r bt2_rps _ _ < <(bare_run thread)
read -r bp2_rps _ _ < <(bare_run pool)
bt_rps=$(python3 -c "print('%.2f' % (($bt1_rps + $bt2_rps) / 2))")
bp_rps=$(python3 -c "print('%.2f' % (($bp1_rps + $bp2_rps) / 2))")
echo "| bare MHD, static 190-byte JSON (thread per connection; runs: $bt1_rps, $bt2_rps) | $bt_rps | $bt_50 | $bt_99 | 1.00 | $(ratio "$bt_rps" "$bp_rps") |"
echo "| bare MHD, static 190-byte JSON (epoll, 2 threads; runs: $bp1_rps, $bp2_rps) | $bp_rps | $bp_50 | $bp_99 | $(ratio "$bp_rps" "$bt_rps") | 1.00 |"
echo "| silt: GET /api/v2/datasets/{rid} | $s_rps | $s_50 | $s_99 | $(ratio "$s_rps" "$bt_rps") | $(ratio "$s_rps" "$bp_rps") |"
echo "| silt: GET …/files/f.bin/content (4 KiB) | $c_rps | $c_50 | $c_99 | $(ratio "$c_rps" "$bt_rps") | $(ratio "$c_rps" "$bp_rps") |"
echo "| silt: GET /health (no dataset, no token) | $h_rps | $h_50 | $h_99 | $(ratio "$h_rps" "$bt_rps") | $(ratio "$h_rps" "$bp_rps") |"
echo "| silt: GET /api/v2/datasets/{rid}, a stored token (\`silt token create\`) | $t_rps | $t_50 | $t_99 | $(ratio "$t_rps" "$bt_rps") | $(ratio "$t_rps" "$bp_rps") |"

# ---- uploads with auto-commit: 8 clients on 8 branches ---------------------------------
cat >upload.lua <<'LUA'
local counter = 0
local threads = {}
function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end
function init(args)
  n = 0
  body = string.rep("x", 4096)
  wrk.headers["Content-Type"] = "application/octet-stream"  -- kept with -H's Authorization
end
function request()
  n = n + 1
  local path = string.format("/api/v2/datasets/bench/files/t%d-%d.bin/upload?branchName=b%d", id, n, id)
  return wrk.format("POST", path, nil, body)
end
LUA
"${pin1[@]}" wrk -t8 -c8 -d"${SECS}s" -s upload.lua -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT" >wrk.txt
u_rps=$(awk '/Requests\/sec/ {print $2}' wrk.txt)
u_err=$(awk '/Non-2xx/ {print $NF}' wrk.txt)
kill "$SPID"
wait "$SPID" 2>/dev/null || true
N=40
t0=$(date +%s.%N)
for i in $(seq $N); do "$SILT" upload "bench@b1" f.bin --as "cli-$i.bin" >/dev/null; done
t1=$(date +%s.%N)
cli_rps=$(python3 -c "print('%.1f' % ($N / ($t1 - $t0)))")
"$SILT" verify bench >/dev/null || echo "bench_serve: verify failed after the upload run" >&2
echo
echo "| uploads, 4 KiB, auto-commit | commits/s | errors |"
echo "|---|---|---|"
echo "| silt serve, 8 clients × 8 branches (wrk) | $u_rps | ${u_err:-0} |"
echo "| \`silt upload\` in a loop (one process per commit) | $cli_rps | 0 |"
echo "| ratio server / CLI | $(ratio "$u_rps" "$cli_rps") | |"

# ---- readTable of ROWS rows as Arrow ----------------------------------------------------------
python3 - "$ROWS" >big.csv <<'PY'
import sys
n = int(sys.argv[1])
w = sys.stdout.write
w("id,city,value\n")
chunk = []
for i in range(n):
    chunk.append("%d,c%d,%d.5\n" % (i, i % 1000, i))
    if len(chunk) == 100000:
        w("".join(chunk)); chunk = []
w("".join(chunk))
PY
cat >src.yaml <<'Y'
kind: AddPushSource
sourceName: default
read:
  kind: Csv
  header: true
  ddlSchema: ["id BIGINT", "city STRING", "value DOUBLE"]
merge:
  kind: Append
Y
"$SILT" new big >/dev/null
"$SILT" append big src.yaml >/dev/null
"$SILT" ingest big big.csv >/dev/null
rm -f big.csv
start_silt
t0=$(date +%s.%N)
curl -sS -o big.arrows -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/api/v2/datasets/big/readTable?format=ARROW"
t1=$(date +%s.%N)
RSS=$(awk '/VmHWM/ {print $2}' "/proc/$SPID/status")
kill "$SPID"
wait "$SPID" 2>/dev/null || true
BYTES=$(stat -c %s big.arrows)
t2=$(date +%s.%N)
"$SILT" sql 'SELECT * FROM big' --format parquet --output big.parquet
t3=$(date +%s.%N)
rt=$(python3 -c "print('%.2f' % ($t1 - $t0))")
pq=$(python3 -c "print('%.2f' % ($t3 - $t2))")
echo
echo "| readTable, $ROWS rows (offset, op, system_time, event_time, id, city, value) | seconds | MB/s of Arrow | server peak RSS |"
echo "|---|---|---|---|"
echo "| GET …/readTable?format=ARROW ($(python3 -c "print('%.0f' % ($BYTES / 1e6))") MB) | $rt | $(python3 -c "print('%.0f' % ($BYTES / 1e6 / ($t1 - $t0)))") | $((RSS / 1024)) MiB |"
echo "| \`silt sql 'SELECT * FROM big' --format parquet\` | $pq | | |"
echo "| ratio readTable / sql parquet | $(ratio "$rt" "$pq") | | |"
rm -f big.arrows big.parquet
