#!/usr/bin/env bash
# test_mqtt.sh — MQTT push sources against a real mosquitto broker
# (docs/ingestion.md "Mqtt"): QoS 0/1/2 messages, two topic filters with
# wildcards, username/password from a template (a bad password and an
# unreachable broker are one-line errors with nothing committed), `silt
# pull` draining the persistent session (messages published while silt was
# not connected arrive), a payload with several records, a payload that
# does not parse (acknowledged, dropped with a warning, never wedges the
# buffer), a legacy SetPollingSource with `fetch: {kind: Mqtt}`, `silt
# serve` subscribing with a flush by `silt pull` while it runs, `silt
# sources` counts, a broker restart (reconnect, nothing lost),
# and the password in no block and no log.
source "$(dirname "$0")/lib.sh"
source "$SILT_SOURCE_DIR/tests/integration/mqtt_lib.sh"

use_soft_failures
mqtt_start
ok init
export MQTT_PASSWORD=$MQ_PASS SILT_MQTT_IDLE_MS=400
source_yaml() { # NAME PORT
    cat <<YAML
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
    kind: Mqtt
    host: 127.0.0.1
    port: $2
    username: silt
    password: \${{ env.MQTT_PASSWORD }}
    topics:
      - path: dev/+/temp
        qos: AtLeastOnce
      - path: q2/#
        qos: ExactlyOnce
      - path: q0
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
source_yaml ev "$MQ_PORT" >ev.yaml
ok add ev.yaml
rows() { expect_sql "SELECT \"offset\", op, id, v FROM ev ORDER BY \"offset\"" "${1:-rows of ev}"; }

# ---- the first pull creates the persistent session: nothing yet ------------
ok pull ev
assert_eq "$OUT" "ev: up to date" "first pull"

# ---- published while silt is not connected: drained by the next pull -------
mqtt_pub dev/a/temp 1 '{"id":1,"v":"qos1"}'
mqtt_pub q2/x/y 2 '{"id":2,"v":"qos2"}'
mqtt_pub dev/b/temp 1 $'{"id":3,"v":"two"}\n{"id":4,"v":"records"}'
mqtt_pub dev/a/other 1 '{"id":99,"v":"not subscribed"}'
mqtt_pub q2 2 'not json'
mqtt_pub q2/z 2 '{"id":5,"v":"after the bad one"}'
ok pull ev
assert_contains "$OUT" "ev: 5 new records (offsets 0..4)" "drain"
assert_eq "$ERR" "silt: warning: mqtt: source 'ev-src': dropped a message on topic 'q2' (its payload does not parse: message: line 1: invalid JSON: invalid token near 'not')" "bad payload warning"
rows <<'CSV'
offset,op,id,v
0,0,1,qos1
1,0,2,qos2
2,0,3,two
3,0,4,records
4,0,5,after the bad one
CSV
ok pull ev
assert_eq "$OUT" "ev: up to date" "nothing new"

# ---- QoS 0 reaches a connected subscriber only: the server -----------------
serve_start
for _ in $(seq 50); do grep -q "subscribing" "$SERVE_LOG" && break; sleep 0.1; done
sleep 0.5
mqtt_pub q0 0 '{"id":6,"v":"qos0"}'
mqtt_pub dev/c/temp 1 '{"id":7,"v":"served"}'
for _ in $(seq 50); do
    "$SILT" sources | grep -q 'ev-src: 2 records buffered (MQTT)' && break
    sleep 0.1
done
ok sources
assert_contains "$OUT" "ev-src: 2 records buffered (MQTT)" "silt sources while serving"
ok pull ev # flushes while the server holds the session
assert_contains "$OUT" "ev: 2 new records (offsets 5..6)" "flush while serving"

# ---- broker restart: the server reconnects, nothing is lost ---------------
mqtt_stop
sleep 0.3
mqtt_start
for _ in $(seq 100); do grep -q "reconnecting" "$SERVE_LOG" && break; sleep 0.1; done
sleep 2
mqtt_pub q2/r 2 '{"id":8,"v":"after restart"}'
for _ in $(seq 50); do
    "$SILT" sources | grep -q 'ev-src: 1 record buffered (MQTT)' && break
    sleep 0.1
done
serve_stop
ok pull ev
assert_contains "$OUT" "ev: 1 new record (offsets 7..7)" "after the broker restart"
rows "rows after serving" <<'CSV'
offset,op,id,v
0,0,1,qos1
1,0,2,qos2
2,0,3,two
3,0,4,records
4,0,5,after the bad one
5,0,6,qos0
6,0,7,served
7,0,8,after restart
CSV
grep -q "the broker closed the connection; reconnecting in 500 ms" "$SERVE_LOG" || fail "no reconnect logged: $(cat "$SERVE_LOG")"
pass

# ---- a legacy SetPollingSource fetching Mqtt --------------------------------
add_ds legacy <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Mqtt
        host: 127.0.0.1
        port: $MQ_PORT
        username: silt
        password: \${{ env.MQTT_PASSWORD }}
        topics:
          - path: legacy/t
            qos: ExactlyOnce
      read:
        kind: NdJson
        ddlSchema: ["id BIGINT"]
      merge:
        kind: Append
YAML
ok pull legacy
assert_eq "$OUT" "legacy: up to date" "legacy: the first pull creates the session"
mqtt_pub legacy/t 2 '{"id":41}'
mqtt_pub legacy/t 2 '{"id":42}'
ok pull legacy
assert_contains "$OUT" "legacy: 2 new records (offsets 0..1)" "legacy drain"
expect_sql 'SELECT "offset", id FROM legacy ORDER BY "offset"' "rows of legacy" <<'CSV'
offset,id
0,41
1,42
CSV

# ---- errors: bad password, broker down — one line, nothing committed --------
before=$(ws_snapshot)
MQTT_PASSWORD=wrong fails 1 "silt: pull 'ev': source 'ev-src': mqtt: 127.0.0.1:$MQ_PORT: the broker refused the connection: not authorized" pull ev
ws_compare "$before" "bad password"
mqtt_stop
fails 1 "silt: pull 'ev': source 'ev-src': mqtt: cannot connect to 127.0.0.1:$MQ_PORT: Connection refused" pull ev
ws_compare "$before" "broker down"

# ---- secrets: the password is in no block, state or log --------------------
if grep -rqF "$MQ_PASS" .silt "$SERVE_LOG" 2>/dev/null; then fail "the password leaked: $(grep -rlF "$MQ_PASS" .silt "$SERVE_LOG")"; fi
pass
ok verify ev
finish
