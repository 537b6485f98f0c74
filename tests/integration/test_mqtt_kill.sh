#!/usr/bin/env bash
# test_mqtt_kill.sh — an MQTT source under SIGKILL (docs/ingestion.md
# "Mqtt"): two publishers (mosquitto_pub, the independent peer) send
# uniquely numbered messages, one topic at QoS 1 (AtLeastOnce), one at QoS 2
# (ExactlyOnce), to a real mosquitto broker (persistence on) while `silt
# serve` — subscribed with its persistent session — is killed with SIGKILL
# at a random moment, MQTT_KILLS (default 12, at most 15) times; every
# other round a `silt pull` flushes the buffer while the server runs. Then
# a final `silt pull` drains the session and flushes. Every published
# message must be in the dataset exactly once: QoS 2 by the protocol (the
# packet id recorded with the message before PUBREC), QoS 1 thanks to the
# redelivery dedupe. Prints lost/duplicated counts (must be 0/0).
source "$(dirname "$0")/lib.sh"
source "$SILT_SOURCE_DIR/tests/integration/mqtt_lib.sh"

ROUNDS=${MQTT_KILLS:-12}
[ "$ROUNDS" -le 15 ] || ROUNDS=15
N=${MQTT_KILL_MESSAGES:-1500}
mqtt_start
ok init
export MQTT_PASSWORD=$MQ_PASS
cat >res.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: ev
  kind: Root
  metadata: []
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: ev-src
spec:
  ingress:
    kind: Mqtt
    host: 127.0.0.1
    port: $MQ_PORT
    username: silt
    password: \${{ env.MQTT_PASSWORD }}
    topics:
      - path: k/q1
        qos: AtLeastOnce
      - path: k/q2
        qos: ExactlyOnce
  read:
    kind: NdJson
    ddlSchema: ["id BIGINT", "q INT"]
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
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
export SILT_MQTT_IDLE_MS=300
ok pull ev # creates the persistent session (the broker queues for it from now on)

# publisher QOS: N messages {"id":i,"q":QOS}, a few ms apart
publisher() {
    local q=$1 i
    for ((i = 1; i <= N; i++)); do
        printf '{"id":%d,"q":%d}\n' "$i" "$q"
        ((i % 5)) || sleep 0.04
    done | mosquitto_pub -h 127.0.0.1 -p "$MQ_PORT" -u silt -P "$MQ_PASS" -t "k/q$q" -q "$q" -l
}
publisher 1 &
P1=$!
publisher 2 &
P2=$!
T_PIDS+=("$P1" "$P2")

start=$SECONDS
for ((r = 1; r <= ROUNDS; r++)); do
    serve_start
    sleep "0.$((RANDOM % 5 + 1))"
    if ((r % 2 == 0)); then
        "$SILT" pull ev >/dev/null 2>"pull.$r.err" || fail "round $r: silt pull while serving: $(cat "pull.$r.err")"
    fi
    sleep "0.$((RANDOM % 4))"
    kill -KILL "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null || true
done
wait "$P1" || fail "publisher 1 failed"
wait "$P2" || fail "publisher 2 failed"
pass
[ $((SECONDS - start)) -lt 60 ] || fail "the kill loop took $((SECONDS - start)) s"

export SILT_MQTT_IDLE_MS=2000
ok pull ev
"$SILT" sql "SELECT q, id FROM ev" --format csv | tail -n +2 | sort >got.txt
: >want.txt
for q in 1 2; do seq 1 "$N" | sed "s/^/$q,/"; done | sort >want.txt
lost=$(comm -23 want.txt <(sort -u got.txt) | wc -l)
dup=$(($(wc -l <got.txt) - $(sort -u got.txt | wc -l)))
extra=$(comm -13 want.txt <(sort -u got.txt) | wc -l)
echo "mqtt kill test: $ROUNDS kills, $((2 * N)) messages published, lost $lost, duplicated $dup"
assert_eq "$lost/$dup/$extra" "0/0/0" "lost/duplicated/unknown messages"
ok verify ev
done_tests
