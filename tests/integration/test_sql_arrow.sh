#!/usr/bin/env bash
# `silt sql --format arrow` (and `tail --format arrow`): an Arrow IPC stream
# from the same writer as readTable (src/engine/arrow_stream.c), decoded by
# npm apache-arrow (an independent reader, tests/node/arrow_decode.mjs) and
# compared with --format csv of the same query; to a file and to stdout; a
# result of many batches; and the refusals (not a SELECT, a terminal, the shell).
source "$(dirname "$0")/lib.sh"

DECODE="$SILT_SOURCE_DIR/tests/node/arrow_decode.mjs"
decode() { node_run "$DECODE" "$@"; }

ok init
add_ds pop <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT", "share DOUBLE", "event_time DATE"]
      merge:
        kind: Snapshot
        primaryKey: [city]
Y
printf 'city,population,share,event_time\nA,100,0.5,2020-01-01\nB,200,,2020-01-01\n' >s1.csv
printf 'city,population,share,event_time\nA,110,0.25,2020-01-02\nC,300,1.5,2020-01-02\n' >s2.csv
ok ingest pop s1.csv
ok ingest pop s2.csv

Q='SELECT "offset", op, city, population, share, event_time FROM pop ORDER BY "offset"'
ok sql "$Q" --format arrow --output pop.arrows
assert_eq "$OUT" "" "--output: nothing on stdout"
decode pop.arrows >dec.txt || fail "apache-arrow could not read the stream"
assert_eq "$(sed -n 1,6p dec.txt)" "offset: Uint64
op: Uint8
city: Utf8
population: Int64
share: Float64
event_time: Date32<DAY>" "Arrow schema"
# the rows as CSV, with the decoder's JSON forms (64-bit ints as strings, dates as days since 1970)
ok sql "$Q" --format csv
WANT=$(printf '%s\n' "$OUT" | python3 -c '
import csv, datetime, json, sys
rows = list(csv.reader(sys.stdin))[1:]
for off, op, city, pop, share, et in rows:
    days = (datetime.date.fromisoformat(et) - datetime.date(1970, 1, 1)).days
    print(json.dumps([off, int(op), city, pop, float(share) if share else None, days], separators=(",", ":")))
print("rows=%d batches=1" % len(rows))')
assert_eq "$(sed -n '7,$p' dec.txt)" "$WANT" "Arrow rows = CSV rows"

# stdout (redirected) carries the same bytes; tail too
"$SILT" sql "$Q" --format arrow >stdout.arrows || fail "sql --format arrow to stdout failed"
cmp -s stdout.arrows pop.arrows || fail "stdout stream differs from --output"
pass
ok tail pop -n 2 --format arrow --output tail.arrows
assert_eq "$(decode tail.arrows | tail -1)" "rows=2 batches=1" "tail --format arrow"

# many batches: one RecordBatch per engine chunk of 2048 rows
ok sql 'SELECT range AS i FROM range(5000)' --format arrow --output big.arrows
assert_eq "$(decode big.arrows --sum i)" "rows=5000 batches=3 sum=12497500" "5000 rows in 3 batches"

# refusals: one line, exit 1 or 2, no file left
fails 1 "silt: sql: format arrow needs a SELECT query" sql 'EXPLAIN SELECT 1' --format arrow --output no.arrows
[ -e no.arrows ] && fail "a refused export left a file"
pass
fails 1 "silt: sql: Binder Error: Referenced column \"nope\" not found in FROM clause!" \
    sql 'SELECT nope FROM pop' --format arrow --output no.arrows
[ -e no.arrows ] && fail "a failed export left a file"
pass
script -qec "$SILT sql 'SELECT 1' --format arrow" /dev/null >tty.txt 2>&1 && fail "binary to a terminal was accepted"
assert_contains "$(tr -d '\r' <tty.txt)" "silt: sql: --format arrow is binary: give --output FILE or redirect stdout"
fails 2 "silt: sql: unknown format 'xml' (use table, csv, json, ndjson, parquet or arrow) (see 'silt help')" \
    sql 'SELECT 1' --format xml
done_tests
