#!/usr/bin/env bash
# `make demo` (examples/demo.sh) runs from start to end against this build:
# every step it shows succeeds, and the figures it prints are the real ones
# (it had silently broken once when --json output became compact).
source "$(dirname "$0")/lib.sh"

SILT="$SILT" TMPDIR="$T_DIR" bash "$SILT_SOURCE_DIR/examples/demo.sh" >demo.out 2>&1 ||
    fail "examples/demo.sh failed: $(tail -5 demo.out)"
pass
D=$(cat demo.out)
assert_contains "$D" "city-populations: 6 new records (offsets 0..5), watermark 2021-01-01T00:00:00.000Z"
assert_contains "$D" "city-populations: 5 new records (offsets 6..10), watermark 2022-01-01T00:00:00.000Z"
# the derivative: a per-country aggregate of city-populations, keyed by country
assert_contains "$D" "country-populations: 2 new records (offsets 0..1), watermark 2021-01-01T00:00:00.000Z, read 4 input records (full)"
assert_contains "$D" "country-populations: up to date"
assert_contains "$D" "country-populations: 4 new records (offsets 2..5), watermark 2022-01-01T00:00:00.000Z, read 3 input records (full)"
CP_LOG=$(sed -n '/^\$ silt sql SELECT "offset", op, event_time, country, population, cities FROM "country-populations"/,/^$/p' demo.out)
assert_eq "$CP_LOG" '$ silt sql SELECT "offset", op, event_time, country, population, cities FROM "country-populations" ORDER BY "offset"
offset | op | event_time           | country | population | cities
-------+----+----------------------+---------+------------+-------
     0 |  0 | 2021-01-01T00:00:00Z | CA      |    8861000 |      2
     1 |  0 | 2021-01-01T00:00:00Z | US      |    5945000 |      2
     2 |  2 | 2021-01-01T00:00:00Z | CA      |    8861000 |      2
     3 |  3 | 2022-01-01T00:00:00Z | CA      |    9014000 |      2
     4 |  2 | 2021-01-01T00:00:00Z | US      |    5945000 |      2
     5 |  3 | 2022-01-01T00:00:00Z | US      |    2512000 |      1' "the derivative's changelog: +A per country, then a -C/+C pair per changed country"
CP_CUR=$(sed -n '/^\$ silt sql SELECT country, population, cities FROM "country-populations:current"/,/^$/p' demo.out)
assert_eq "$CP_CUR" '$ silt sql SELECT country, population, cities FROM "country-populations:current" ORDER BY country
country | population | cities
--------+------------+-------
CA      |    9014000 |      2
US      |    2512000 |      1' "the derivative's current state: the 2022 snapshot per country"
assert_contains "$D" "  city-populations -> country-populations"
assert_contains "$D" "country-populations: ok (7 blocks)"
assert_contains "$D" "station-readings: 3 new records (offsets 0..2), watermark 2024-01-01T18:00:00.000Z"
assert_contains "$D" "station-readings: up to date"
assert_contains "$D" "     2 |  0 | harbour | 2024-01-01T18:00:00Z |   2.25"
assert_contains "$D" "station-readings: ok (6 blocks)"
# the MQTT source: the first pull creates the session, the second drains it
assert_contains "$D" "sensor-mqtt: up to date"
assert_contains "$D" "$ mosquitto_pub -t sensors/b/temp -q 1"
assert_contains "$D" "sensor-mqtt: 4 new records (offsets 0..3)"
assert_contains "$D" "     3 | c      |  -3.5"
assert_contains "$D" "sensor-mqtt: ok (4 blocks)"
assert_contains "$D" "(file name: "
# the block decoded from the head file hashes back to its file name
HASHED=$(sed -n '/^\$ silt block hash /{n;p}' demo.out)
NAMED=$(sed -n 's/^(file name: \(.*\))$/\1/p' demo.out)
assert_eq "$HASHED" "$NAMED" "head block hash = its file name"
assert_contains "$D" "GET /odf/city-populations/refs/head 200 69"
assert_contains "$D" "silt serve: stopped"
# nothing left behind: the demo image is removed
podman image exists localhost/silt-demo-fetch:1 && fail "the demo image was left behind"
pass
done_tests
