#!/usr/bin/env bash
# make demo — a short end-to-end tour of silt on the bundled example manifests.
# Runs in a fresh temporary workspace; prints every command it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SILT=${SILT:-$root/build/silt}
work=$(mktemp -d "${TMPDIR:-/tmp}/silt-demo-XXXXXX")
SERVE_PID=
DEMO_IMAGE=
MQTT_PID=
trap '[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null; [ -n "$MQTT_PID" ] && kill "$MQTT_PID" 2>/dev/null; [ -n "$DEMO_IMAGE" ] && podman rmi -f "$DEMO_IMAGE" >/dev/null 2>&1; rm -rf "$work"' EXIT
cd "$work"

step() {
    printf '\n$ silt %s\n' "$*"
    "$SILT" "$@"
}

echo "# silt demo in $work"
step init
step add "$root/examples/city-populations.yaml" "$root/examples/sensor-readings.yaml" "$root/examples/hottest-days.yaml"
step list
step info city-populations
step log city-populations
step log city-populations -n 1 --yaml
cat >"$work/info.yaml" <<'YAML'
kind: SetInfo
description: Population of large cities (updated description).
keywords:
- demographics
YAML
step append city-populations "$work/info.yaml"
step log city-populations -n 2
echo
echo "# polling ingestion: city-populations reads a folder of yearly snapshots"
echo "# (examples/data/city-populations-YYYY.csv, event time from the file name)"
mkdir -p "$work/examples/data"
cp "$root"/examples/data/city-populations-2020.csv "$root"/examples/data/city-populations-2021.csv \
    "$work/examples/data/"
step pull city-populations
step pull city-populations
echo
echo "# a derivative: country-populations sums city-populations per country (SQL, keyed by country);"
echo "# a pull runs the query and commits the change of its result as a changelog"
step add "$root/examples/country-populations-derive.yaml"
step pull country-populations
step pull country-populations
echo "# a new yearly snapshot arrives:"
cp "$root"/examples/data/city-populations-2022.csv "$work/examples/data/"
step pull city-populations
step pull country-populations
step sql 'SELECT "offset", op, event_time, country, population, cities FROM "country-populations" ORDER BY "offset"'
step sql 'SELECT country, population, cities FROM "country-populations:current" ORDER BY country'
step lineage country-populations
step log city-populations -n 4
step log city-populations -n 1 --yaml
step sql 'SELECT "offset", op, event_time, country, city, population FROM "city-populations" ORDER BY "offset"'
step sql 'SELECT country, city, population FROM "city-populations:current" ORDER BY country, city'
echo
echo "# the same source as Source + Flow resources (see docs/ingestion.md)"
step add "$root/examples/city-populations-flow.yaml"
step sources
step flows
step pull city-populations-flow
step sql 'SELECT country, city, population FROM "city-populations-flow:current" ORDER BY country, city'
echo
echo "# a container source: podman runs localhost/silt-demo-fetch:1 (built here from busybox,"
echo "# never pulled); its stdout is the data, the ETag it writes is the source state"
if command -v podman >/dev/null && command -v busybox >/dev/null; then
    img_root="$work/image"
    mkdir -p "$img_root/bin"
    cp "$(command -v busybox)" "$img_root/bin/busybox"
    for c in sh echo printf cat; do ln -s busybox "$img_root/bin/$c"; done
    cat >"$img_root/bin/fetch" <<'SH'
#!/bin/sh
# nothing new since the ETag the last pull recorded: no data, the same ETag
if [ "$ODF_ETAG" = readings-2024-01-01 ]; then echo "$ODF_ETAG" >"$ODF_NEW_ETAG_PATH"; exit 0; fi
echo "station,reading_time,temp_c"
echo "$STATION,2024-01-01T06:00:00Z,-1.5"
echo "$STATION,2024-01-01T12:00:00Z,4.0"
echo "$STATION,2024-01-01T18:00:00Z,2.25"
echo "readings-2024-01-01" >"$ODF_NEW_ETAG_PATH"
SH
    chmod +x "$img_root/bin/fetch"
    tar -C "$img_root" -cf "$work/image.tar" .
    podman import --quiet --change 'ENV=PATH=/bin' "$work/image.tar" localhost/silt-demo-fetch:1 >/dev/null
    DEMO_IMAGE=localhost/silt-demo-fetch:1
    step add "$root/examples/station-readings.yaml"
    DEMO_STATION=harbour step pull station-readings
    DEMO_STATION=harbour step pull station-readings
    step sql 'SELECT "offset", op, station, reading_time, temp_c FROM "station-readings" ORDER BY "offset"'
else
    echo "(skipped: podman or busybox is not installed — scripts/bootstrap.sh installs them)"
fi
echo
echo "# an MQTT source: a local mosquitto on a free port; silt subscribes with a persistent"
echo "# session, so what is published between two pulls is queued for it by the broker"
MOSQUITTO=$(command -v mosquitto || command -v /usr/sbin/mosquitto || true)
if [ -n "$MOSQUITTO" ] && command -v mosquitto_pub >/dev/null; then
    mq_port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
    printf 'listener %s 127.0.0.1\nallow_anonymous true\nuser %s\n' "$mq_port" "$(id -un)" >"$work/mosquitto.conf"
    "$MOSQUITTO" -c "$work/mosquitto.conf" >"$work/mosquitto.log" 2>&1 &
    MQTT_PID=$!
    for _ in $(seq 100); do mosquitto_pub -p "$mq_port" -t demo/ping -m x 2>/dev/null && break; sleep 0.05; done
    sed "s/port: 18830/port: $mq_port/" "$root/examples/sensor-mqtt.yaml" >"$work/sensor-mqtt.yaml"
    step add "$work/sensor-mqtt.yaml"
    SILT_MQTT_IDLE_MS=300 step pull sensor-mqtt
    for m in '{"sensor":"a","t":21.5}' '{"sensor":"b","t":19.0}' $'{"sensor":"a","t":21.75}\n{"sensor":"c","t":-3.5}'; do
        printf "\n\$ mosquitto_pub -t sensors/%s/temp -q 1 -m '%s'\n" "${m:11:1}" "$m"
        mosquitto_pub -p "$mq_port" -t "sensors/${m:11:1}/temp" -q 1 -m "$m"
    done
    SILT_MQTT_IDLE_MS=300 step pull sensor-mqtt
    step sql 'SELECT "offset", sensor, t FROM "sensor-mqtt" ORDER BY "offset"'
    kill "$MQTT_PID"
    wait "$MQTT_PID" 2>/dev/null || true
    MQTT_PID=
else
    echo "(skipped: mosquitto is not installed — scripts/bootstrap.sh installs it)"
fi
step verify --all
echo
echo "# the binary block at the head, decoded and hashed again:"
id=$("$SILT" info city-populations --json | sed -n 's/.*"id": *"did:odf:\(f[0-9a-f]*\)".*/\1/p')
headfile=".silt/datasets/$id/blocks/$(cat ".silt/datasets/$id/refs/head")"
printf '\n$ silt block decode %s > head.yaml\n' "$headfile"
"$SILT" block decode "$headfile" >"$work/head.yaml"
cat "$work/head.yaml"
step block hash "$work/head.yaml"
echo "(file name: $(basename "$headfile"))"

echo
echo "# the node: silt serve on a free port, a file uploaded and read through the Foundry API with curl"
step new --files raw
SECRET=$("$SILT" token create demo --write)
echo "(token 'demo' created; its secret is in \$SECRET)"
printf '\n$ silt serve --listen 127.0.0.1:0 &\n'
"$SILT" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q '^listening on ' "$work/serve.out" && break; sleep 0.05; done
cat "$work/serve.out"
BASE=$(sed -n 's/^listening on //p' "$work/serve.out")
RID=$("$SILT" --json info raw | sed -n 's/.*"rid": *"\([^"]*\)".*/\1/p')
echo "# the web UI of this server: $BASE/ui/ (sign in with the demo token: $SECRET)"
printf 'city,population\nA,100\nB,200\n' >"$work/cities.csv"
printf '\n$ curl -X POST --data-binary @cities.csv "$BASE/api/v2/datasets/%s/files/dir%%2Fcities.csv/upload"\n' "$RID"
curl -sS -H "Authorization: Bearer $SECRET" -H 'Content-Type: application/octet-stream' \
    --data-binary @"$work/cities.csv" "$BASE/api/v2/datasets/$RID/files/dir%2Fcities.csv/upload"
echo
printf '\n$ curl "$BASE/api/v2/datasets/%s/files?branchName=master"\n' "$RID"
curl -sS -H "Authorization: Bearer $SECRET" "$BASE/api/v2/datasets/$RID/files?branchName=master"
echo
printf '\n$ curl "$BASE/api/v2/datasets/%s/files/dir%%2Fcities.csv/content"\n' "$RID"
curl -sS -H "Authorization: Bearer $SECRET" "$BASE/api/v2/datasets/$RID/files/dir%2Fcities.csv/content"
printf '\n$ curl "$BASE/odf/city-populations/refs/head"\n'
curl -sS -H "Authorization: Bearer $SECRET" "$BASE/odf/city-populations/refs/head"
echo
step files raw
if [ -n "${SILT_DEMO_KEEP_SERVER:-}" ]; then
    echo "# SILT_DEMO_KEEP_SERVER is set: the server stays up at $BASE/ui/ until you press Enter"
    read -r _
fi
printf '\n$ kill %s   # SIGTERM: a graceful stop\n' "$SERVE_PID"
kill "$SERVE_PID"
wait "$SERVE_PID"
SERVE_PID=
echo "# the server's request log:"
cat "$work/serve.log"
