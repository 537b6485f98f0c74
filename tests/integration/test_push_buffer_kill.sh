#!/usr/bin/env bash
# test_push_buffer_kill.sh — a buffered RestEndpoint source under SIGKILL:
# PUSH_KILLS (default 15) rounds in which 4 clients push small requests (two
# records each) while `silt serve` is killed with SIGKILL at a random moment,
# and in every other round a `silt pull` flushing the buffer meanwhile is
# SIGKILLed too. Then a final flush, and: every record acknowledged with 202
# is in the dataset exactly once, no record is there twice, and every record
# there was sent (the unacknowledged ones that made it were in flight). The
# chain verifies. (Follows test_serve_faults.sh.)
source "$(dirname "$0")/lib.sh"

ROUNDS=${PUSH_KILLS:-15}
ok init
cat >res.yaml <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: ev
  kind: Root
  metadata: []
---
$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: ev-src
spec:
  ingress:
    kind: RestEndpoint
    buffer:
      kind: Memory
      bufferSize: 1000000
      overflowPolicy: Reject
  read:
    kind: NdJson
    ddlSchema: ["id BIGINT"]
  merge:
    kind: Append
---
$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: ev
spec:
  target: Dataset:ev
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: Source:ev-src
YAML
ok add res.yaml
export ADMIN=${ADMIN:-admin-secret}
mkdir -p acks

# client ROUND C: pushes until the server is gone; "sent" before the
# request, "acked" after a 202
client() {
    local r=$1 c=$2 i=0 a b code
    while :; do
        i=$((i + 1))
        a=$(((r * 10 + c) * 100000 + i * 2))
        b=$((a + 1))
        printf '%s\n%s\n' "$a" "$b" >>"acks/sent.$r.$c"
        code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ADMIN" \
            -H 'Content-Type: application/x-ndjson' --data-binary $'{"id":'"$a"$'}\n{"id":'"$b"'}' \
            "$BASE/odf/ev/ingest" 2>/dev/null) || return 0
        case "$code" in
        202) printf '%s\n%s\n' "$a" "$b" >>"acks/acked.$r.$c" ;;
        000) return 0 ;;
        *) echo "unexpected status $code" >>acks/errors ;;
        esac
    done
}

start=$SECONDS
for r in $(seq "$ROUNDS"); do
    serve_start
    pids=()
    for c in 1 2 3 4; do
        client "$r" "$c" &
        pids+=($!)
    done
    pull_pid=
    if [ $((r % 2)) -eq 0 ]; then
        "$SILT" pull ev >/dev/null 2>>acks/pull.log &
        pull_pid=$!
    fi
    sleep "0.$((RANDOM % 7 + 3))"
    kill -KILL "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null || true
    [ -n "$pull_pid" ] && { kill -KILL "$pull_pid" 2>/dev/null || true; wait "$pull_pid" 2>/dev/null || true; }
    for p in "${pids[@]}"; do wait "$p" || true; done
done
assert_eq "$(cat acks/errors 2>/dev/null)" "" "no answer other than 202 or a dropped connection"
ok pull ev
ok verify ev
cat acks/acked.* 2>/dev/null | sort >acked.txt
cat acks/sent.* | sort >sent.txt
"$SILT" sql 'SELECT id FROM ev' --format csv | tail -n +2 | sort >got.txt
acked=$(wc -l <acked.txt)
[ "$acked" -gt 0 ] || fail "no push was acknowledged"
pass
assert_eq "$(uniq -d got.txt | wc -l)" 0 "records ingested twice"
assert_eq "$(comm -23 acked.txt got.txt | wc -l)" 0 "acknowledged records lost"
assert_eq "$(comm -13 sent.txt got.txt | wc -l)" 0 "records in the dataset that were never sent"
ok pull ev
assert_eq "$OUT" "ev: up to date" "nothing left in the buffer"
echo "$T_NAME: $ROUNDS rounds in $((SECONDS - start)) s, $acked acknowledged records, $(wc -l <got.txt) in the dataset" >&2
done_tests
