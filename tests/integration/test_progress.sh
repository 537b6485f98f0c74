#!/usr/bin/env bash
# test_progress.sh — the progress line and Ctrl-C, driven through a
# pseudo-terminal (tests/tools/pty_progress.py gives silt a terminal as
# stderr and records what it shows):
#  - pull on a terminal draws "pull NAME: i/n files, records, bytes, rate,
#    ETA [file]" lines (\r … ESC[K), at most ten a second, and erases the
#    line at the end; stdout is the same as without a terminal;
#  - -q / --quiet: nothing on the terminal but warnings; stderr redirected
#    to a file: not one byte of progress;
#  - verify, gc and upload show theirs (SILT_PROGRESS_INTERVAL_MS=0 draws at
#    every report, so operations shorter than 100 ms show one too);
#  - Ctrl-C (SIGINT) in the middle of a pull over many files: exit 130, one
#    line saying how many files were ingested (blocks, head) and which file
#    was not committed; the dataset verifies and holds exactly those files;
#    the next pull ingests the rest;
#  - Ctrl-C during an ingest or an upload: exit 130, nothing committed, the
#    workspace as before;
#  - sql and tail writing a result (csv, json, ndjson, table; to a pipe or
#    --output FILE) draw "sql: N rows, BYTES, RATE, Ts elapsed" ("tail
#    NAME: …") after every chunk of 2048 rows, BYTES being exactly what was
#    written so far, and erase it; -q and a redirected stderr: nothing;
#    Ctrl-C: exit 130, one line with the rows written (those rows are on
#    stdout; an --output file is removed), the workspace as before.
source "$(dirname "$0")/lib.sh"

PTY=(python3 "$SILT_SOURCE_DIR/tests/tools/pty_progress.py")
export SILT_FAKE_SYSTEM_TIME=2024-05-01T00:00:00Z

# pty OUTFILE ARGS...: runs pty_progress.py ARGS (its options, --, the
# command) with the terminal's bytes in OUTFILE, stdout in $T_DIR/.out;
# sets RC and OUT
pty() {
    local tty=$1
    shift
    set +e
    "${PTY[@]}" --tty-out "$tty" "$@" >"$T_DIR/.out"
    RC=$?
    set -e
    OUT=$(cat "$T_DIR/.out")
}
# lines_of FILE: the terminal bytes split at \r and \n, one line each,
# without the erase-to-end-of-line sequences (ESC [ K)
lines_of() { tr '\r' '\n' <"$1" | sed -e 's/\x1b\[K//g' -e '/^$/d'; }
# has_line FILE ERE: some line of the terminal output matches ERE
has_line() {
    lines_of "$1" >"$T_DIR/.lines"
    grep -Eq "$2" "$T_DIR/.lines" || fail "no line matching '$2' in: $(cat "$T_DIR/.lines")"
    pass
}

ok init
DROP="$T_DIR/drop"
mkdir -p "$DROP"
for i in $(seq 1 20); do
    n=$(printf '%04d' "$i")
    printf 'id,v\n%d,a\n%d,b\n' "$i" "$((i + 100))" >"$DROP/f-$n.csv"
done
TOTAL_BYTES=$(cat "$DROP"/f-*.csv | wc -c)
glob_ds() {
    add_ds "$1" <<YAML
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $DROP/f-*.csv
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, v STRING]
      merge:
        kind: Append
YAML
}
for d in many quiet plain intr; do glob_ds "$d"; done

# ---- pull on a terminal ------------------------------------------------------
t0=$(date +%s%N)
pty tty.bin -- "$SILT" pull many
t1=$(date +%s%N)
assert_eq "$RC" "0" "pull on a terminal"
assert_eq "$OUT" "many: 40 new records (offsets 0..39), watermark 2024-05-01T00:00:00.000Z"
L=$(lines_of tty.bin)
assert_contains "$L" "pull many: "
has_line tty.bin "^pull many: [0-9]+/20 files, [0-9]+ records, [0-9]+ B of $TOTAL_BYTES B, [0-9.]+ [KMG]?i?B/s, ETA [0-9]+s \[f-00[0-9][0-9]\.csv\]$"
# the line is erased at the end: the last bytes are \r ESC [ K
assert_eq "$(tail -c 4 tty.bin | od -An -c | tr -s ' ')" ' \r 033 [ K' "progress line erased"
# at most ten draws a second (the first after 100 ms)
draws=$(($(grep -o $'\e\[K' tty.bin | wc -l) - 1))
elapsed_ms=$(((t1 - t0) / 1000000))
[ "$draws" -ge 1 ] && [ "$draws" -le $((elapsed_ms / 100 + 1)) ] ||
    fail "$draws draws in $elapsed_ms ms"
pass

# ---- stderr not a terminal: not one byte of progress --------------------------
set +e
"$SILT" pull plain >plain.out 2>plain.err
RC=$?
set -e
assert_eq "$RC" "0"
assert_eq "$(cat plain.out)" "plain: 40 new records (offsets 0..39), watermark 2024-05-01T00:00:00.000Z"
assert_eq "$(wc -c <plain.err)" "0" "stderr redirected: empty"

# ---- -q: nothing on the terminal, warnings still there -------------------------
pty tty.bin -- "$SILT" -q pull quiet
assert_eq "$RC" "0"
assert_eq "$OUT" "quiet: 40 new records (offsets 0..39), watermark 2024-05-01T00:00:00.000Z"
assert_eq "$(wc -c <tty.bin)" "0" "-q: the terminal stays empty"
printf 'id,v\n0,z\n' >"$DROP/f-0000.csv"
pty tty.bin -- "$SILT" --quiet pull quiet
assert_eq "$RC" "0"
assert_eq "$OUT" "quiet: up to date"
assert_eq "$(cat tty.bin)" "silt: warning: pull 'quiet': file 'f-0000.csv' sorts before the last ingested 'f-0020.csv' and will not be read; rename it or reset the source"$'\r' "-q keeps warnings"
rm "$DROP/f-0000.csv"

# ---- verify, gc, upload ---------------------------------------------------------
export SILT_PROGRESS_INTERVAL_MS=0
pty tty.bin -- "$SILT" verify many
assert_eq "$RC" "0"
assert_eq "$OUT" "many: ok (23 blocks)"
assert_contains "$(lines_of tty.bin)" "verify many: 23/23 blocks, "
pty tty.bin -- "$SILT" -q verify many
assert_eq "$(wc -c <tty.bin)" "0" "verify -q"
pty tty.bin -- "$SILT" gc many
assert_eq "$RC" "0"
assert_eq "$OUT" "many: purged 0 transactions, deleted 0 objects (0 bytes), 0 leftovers"
has_line tty.bin '^gc many: [0-9]+ objects, '
ok new raw --files
mkdir -p up
for i in $(seq 1 30); do printf 'file %d\n' "$i" >"up/u$(printf '%02d' "$i").txt"; done
UP_BYTES=$(cat up/*.txt | wc -c)
pty tty.bin -- "$SILT" upload raw up/
assert_eq "$RC" "0"
has_line tty.bin "^upload raw: 30/30 files, $UP_BYTES B of $UP_BYTES B, "
assert_eq "$(tail -c 4 tty.bin | od -An -c | tr -s ' ')" ' \r 033 [ K' "upload line erased"

# ---- Ctrl-C in the middle of a pull ----------------------------------------------
pty tty.bin --interrupt-on 'pull intr: 3/20 files' -- "$SILT" pull intr
assert_eq "$RC" "130" "exit code after Ctrl-C"
assert_eq "$OUT" "" "no result line"
SUMMARY=$(lines_of tty.bin | grep '^silt: ' || true)
re="^silt: interrupted: pull 'intr': ([0-9]+) of 20 files ingested \(([0-9]+) blocks, head (f1620[0-9a-f]{64})\); nothing of 'f-([0-9]{4})\.csv' was committed\$"
[[ "$SUMMARY" =~ $re ]] || fail "summary line: '$SUMMARY'"
pass
K=${BASH_REMATCH[1]}
BLOCKS=${BASH_REMATCH[2]}
H=${BASH_REMATCH[3]}
NEXT=$((10#${BASH_REMATCH[4]}))
[ "$K" -ge 3 ] && [ "$K" -lt 20 ] || fail "interrupted after $K files"
pass
assert_eq "$BLOCKS" "$K" "one block per ingested file"
assert_eq "$NEXT" "$((K + 1))" "the file not committed is the next one"
ok verify intr
assert_eq "$(head_of intr)" "$H" "the head reported is the dataset's"
run log intr -n 1 --yaml
assert_contains "$OUT" "value: f-$(printf '%04d' "$K").csv"
expect_sql 'select count(*) as n, max(id) as last from intr' <<CSV
n,last
$((2 * K)),$((K + 100))
CSV
ok pull intr
assert_eq "$OUT" "intr: $((40 - 2 * K)) new records (offsets $((2 * K))..39), watermark 2024-05-01T00:00:00.000Z"
expect_sql 'select count(*) as n, count(distinct id) as ids from intr' <<'CSV'
n,ids
40,40
CSV

# ---- Ctrl-C during an ingest: nothing committed -------------------------------------
add_ds big <<'YAML'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, v STRING]
      merge:
        kind: Append
YAML
seq 1 300000 | awk 'BEGIN { print "id,v" } { print $1 ",x" $1 }' >big.csv
before=$(ws_snapshot)
pty tty.bin --interrupt-on 'ingest big: 0/1 files' -- "$SILT" ingest big big.csv
assert_eq "$RC" "130"
assert_eq "$OUT" ""
assert_eq "$(lines_of tty.bin | grep '^silt: ')" "silt: interrupted: ingest 'big': 0 of 1 files ingested (no block committed); nothing of 'big.csv' was committed"
ws_compare "$before" "an interrupted ingest"
ok verify big

# ---- Ctrl-C during an upload: rolled back -----------------------------------------------
mkdir -p up2
for i in $(seq 1 30); do printf 'other %d\n' "$i" >"up2/v$(printf '%02d' "$i").txt"; done
before=$(ws_snapshot)
pty tty.bin --interrupt-on 'upload raw: 3/30 files' -- "$SILT" upload raw up2/
assert_eq "$RC" "130"
assert_eq "$OUT" ""
assert_eq "$(lines_of tty.bin | grep '^silt: ')" "silt: interrupted: upload to 'raw': 0 of 30 files committed; the upload was rolled back, nothing of it was committed"
ws_compare "$before" "an interrupted upload"
ok verify raw
# ---- sql / tail output ---------------------------------------------------------------
# kib N: N bytes as the progress line shows them
kib() { awk -v b="$1" 'BEGIN { if (b < 1024) printf "%d B", b; else printf "%.1f KiB", b / 1024 }'; }
# expect_rows FILE PREFIX OUTFILE SKIP N...: the progress lines of FILE are
# exactly "PREFIX: N rows, <bytes of the first N rows of OUTFILE after SKIP
# header lines>, RATE, Ts elapsed" for each N, in order
expect_rows() {
    local tty=$1 prefix=$2 outf=$3 skip=$4 want="" n
    shift 4
    for n in "$@"; do
        want+="$prefix: $n rows, $(kib "$(head -n $((n + skip)) "$outf" | wc -c)"), RATE, Ts elapsed"$'\n'
    done
    got=$(lines_of "$tty" | sed -E 's/, [0-9.]+ [KMG]?i?B\/s, [0-9]+s elapsed$/, RATE, Ts elapsed/')
    assert_eq "$got" "${want%$'\n'}" "progress lines of $prefix"
    assert_eq "$(tail -c 4 "$tty" | od -An -c | tr -s ' ')" ' \r 033 [ K' "$prefix: line erased"
}
Q="SELECT range AS i, 'v' || range AS s FROM range(5000)"
pty tty.bin -- "$SILT" sql "$Q" --format csv
assert_eq "$RC" "0"
"$SILT" sql "$Q" --format csv >plain.csv 2>plain.err
assert_eq "$OUT" "$(cat plain.csv)" "csv on stdout as without a terminal"
assert_eq "$(wc -c <plain.err)" "0" "sql, stderr redirected: no progress"
expect_rows tty.bin sql plain.csv 1 2048 4096 5000
pty tty.bin -- "$SILT" sql "$Q" --format ndjson --output q.ndjson
assert_eq "$RC" "0"
assert_eq "$OUT" ""
expect_rows tty.bin sql q.ndjson 0 2048 4096 5000
# json: "[\n{…},\n…"; the first N rows are N+1 lines without the ",\n" of the last
pty tty.bin -- "$SILT" sql "$Q" --format json
"$SILT" sql "$Q" --format json >q.json
assert_eq "$OUT" "$(cat q.json)"
want=""
for n in 2048 4096 5000; do
    want+="sql: $n rows, $(kib $(($(head -n $((n + 1)) q.json | wc -c) - 2))), RATE, Ts elapsed"$'\n'
done
assert_eq "$(lines_of tty.bin | sed -E 's/, [0-9.]+ [KMG]?i?B\/s, [0-9]+s elapsed$/, RATE, Ts elapsed/')" "${want%$'\n'}" "json progress"
# --json: one compact line; the bytes are those of "[" and the first N objects
pty tty.bin -- "$SILT" --json sql "$Q"
assert_eq "$RC" "0"
want=$(printf '%s' "$OUT" | python3 -c '
import json, subprocess, sys
rows = json.loads(sys.stdin.read())
for n in (2048, 4096, 5000):
    b = 1 + len(",".join(json.dumps(r, separators=(",", ":")) for r in rows[:n]))
    print("sql: %d rows, %s, RATE, Ts elapsed" % (n, subprocess.run(["awk", "-v", "b=%d" % b, "BEGIN { printf \"%.1f KiB\", b / 1024 }"], capture_output=True, text=True).stdout))
')
assert_eq "$(lines_of tty.bin | sed -E 's/, [0-9.]+ [KMG]?i?B\/s, [0-9]+s elapsed$/, RATE, Ts elapsed/')" "$want" "--json progress"
# table: the rows rendered (their values' bytes); erased before the first line
pty tty.bin -- "$SILT" sql "SELECT range AS i FROM range(5000)"
assert_eq "$RC" "0"
assert_eq "$(printf '%s\n' "$OUT" | sed -n '3p;$p' | tr '\n' ' ')" "   0 4999 " "table rows"
rendered() { seq 0 $(($1 - 1)) | tr -d '\n' | wc -c; }
assert_eq "$(lines_of tty.bin | sed -E 's/, [0-9.]+ [KMG]?i?B\/s, [0-9]+s elapsed$//' | tr '\n' '|')" \
    "sql: 2048 rows, $(kib "$(rendered 2048)")|sql: 4096 rows, $(kib "$(rendered 4096)")|sql: 5000 rows, $(kib "$(rendered 5000)")|" "table progress"
assert_eq "$(tail -c 4 tty.bin | od -An -c | tr -s ' ')" ' \r 033 [ K' "table: line erased"
# -q: nothing
pty tty.bin -- "$SILT" -q sql "$Q" --format csv
assert_eq "$RC" "0"
assert_eq "$(wc -c <tty.bin)" "0" "sql -q: the terminal stays empty"
# tail
add_ds events <<'YAML'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, v STRING]
      merge:
        kind: Append
YAML
seq 1 5000 | awk 'BEGIN { print "id,v" } { print $1 ",e" $1 }' >events.csv
ok ingest events events.csv
pty tty.bin -- "$SILT" tail events -n 5000 --format csv
assert_eq "$RC" "0"
"$SILT" tail events -n 5000 --format csv >tail.csv 2>tail.err
assert_eq "$OUT" "$(cat tail.csv)"
assert_eq "$(wc -c <tail.err)" "0" "tail, stderr redirected: no progress"
expect_rows tty.bin "tail events" tail.csv 1 2048 4096 5000
pty tty.bin -- "$SILT" --quiet tail events -n 5000 --format csv
assert_eq "$(wc -c <tty.bin)" "0" "tail -q: the terminal stays empty"

# Ctrl-C while writing: the rows written so far are on stdout, one line says
# how many; an --output file is removed
BIG="SELECT range AS i, repeat('x', 20) AS s FROM range(3000000)"
before=$(ws_snapshot)
pty tty.bin --interrupt-on 'sql: 8192 rows' -- "$SILT" sql "$BIG" --format csv
assert_eq "$RC" "130" "sql: exit code after Ctrl-C"
SUMMARY=$(lines_of tty.bin | grep '^silt: ' || true)
re='^silt: interrupted: sql: ([0-9]+) rows written to stdout$'
[[ "$SUMMARY" =~ $re ]] || fail "summary line: '$SUMMARY'"
pass
N=${BASH_REMATCH[1]}
[ "$N" -ge 8192 ] && [ "$N" -lt 3000000 ] && [ $((N % 2048)) -eq 0 ] || fail "interrupted after $N rows"
pass
assert_eq "$(printf '%s\n' "$OUT" | wc -l)" "$((N + 1))" "the header and the $N rows are on stdout"
assert_eq "$(printf '%s\n' "$OUT" | tail -n 1)" "$((N - 1)),xxxxxxxxxxxxxxxxxxxx" "the last row written is whole"
pty tty.bin --interrupt-on 'sql: 8192 rows' -- "$SILT" sql "$BIG" --format ndjson --output big.ndjson
assert_eq "$RC" "130"
SUMMARY=$(lines_of tty.bin | grep '^silt: ' || true)
re="^silt: interrupted: sql: ([0-9]+) rows written; 'big.ndjson' was removed\$"
[[ "$SUMMARY" =~ $re ]] || fail "summary line: '$SUMMARY'"
pass
[ ! -e big.ndjson ] || fail "big.ndjson left behind"
pass
ws_compare "$before" "an interrupted sql"
seq 1 300000 | awk 'BEGIN { print "id,v" } { print $1 ",e" $1 }' >events2.csv
ok ingest events events2.csv
before=$(ws_snapshot)
pty tty.bin --interrupt-on 'tail events: [0-9]{5,} rows' -- "$SILT" tail events -n 305000 --format csv
assert_eq "$RC" "130" "tail: exit code after Ctrl-C"
SUMMARY=$(lines_of tty.bin | grep '^silt: ' || true)
re="^silt: interrupted: tail 'events': ([0-9]+) rows written to stdout\$"
[[ "$SUMMARY" =~ $re ]] || fail "summary line: '$SUMMARY'"
pass
assert_eq "$(printf '%s\n' "$OUT" | wc -l)" "$((BASH_REMATCH[1] + 1))" "tail: the rows written are on stdout"
ws_compare "$before" "an interrupted tail"
# Parquet: DuckDB writes the file in one statement, so the line shows the
# file's size as it grows (every 200 ms) and no row count; the last update is
# erased; Ctrl-C interrupts the statement and removes the file
PQ="SELECT range AS i, repeat('x', 20) || range AS s FROM range(5000000)"
pty tty.bin -- "$SILT" sql "$PQ" --format parquet --output pq.parquet
assert_eq "$RC" "0" "parquet export"
got=$(lines_of tty.bin | sed -E 's/, [0-9.]+ [KMG]?i?B\/s, [0-9]+s elapsed$/, RATE, Ts elapsed/')
[ -n "$got" ] || fail "parquet: no progress line"
pass
assert_eq "$(printf '%s\n' "$got" | grep -cvE '^sql: [0-9.]+ (B|KiB|MiB), RATE, Ts elapsed$' || true)" "0" \
    "parquet progress lines: 'sql: SIZE, RATE, Ts elapsed' ($got)"
sizes=$(printf '%s\n' "$got" | sed -E 's/^sql: ([0-9.]+) (B|KiB|MiB),.*/\1 \2/' |
    awk '{ m = $2 == "MiB" ? 1048576 : $2 == "KiB" ? 1024 : 1; print int($1 * m) }')
assert_eq "$(printf '%s\n' "$sizes" | sort -n -c 2>&1 && echo sorted)" "sorted" "the size only grows"
assert_eq "$(tail -c 4 tty.bin | od -An -c | tr -s ' ')" ' \r 033 [ K' "parquet: line erased"
ok sql --unsafe-file-access "SELECT count(*) AS n, max(i) AS m FROM 'pq.parquet'" --format csv
assert_eq "$OUT" "n,m
5000000,4999999" "the parquet file is whole"
"$SILT" sql "$PQ" --format parquet --output pq2.parquet 2>pq.err
assert_eq "$(wc -c <pq.err)" "0" "parquet, stderr redirected: no progress"
pty tty.bin -- "$SILT" -q sql "$PQ" --format parquet --output pq3.parquet
assert_eq "$(wc -c <tty.bin)" "0" "parquet -q: the terminal stays empty"
before=$(ws_snapshot)
pty tty.bin --interrupt-on 'sql: [0-9.]+ (KiB|MiB)' -- "$SILT" sql "$PQ" --format parquet --output pq4.parquet
assert_eq "$RC" "130" "parquet: exit code after Ctrl-C"
assert_eq "$(lines_of tty.bin | grep '^silt: ' || true)" "silt: interrupted: sql: 'pq4.parquet' was removed" \
    "parquet: the Ctrl-C line"
[ ! -e pq4.parquet ] || fail "pq4.parquet left behind"
pass
ws_compare "$before" "an interrupted parquet export"
# Ctrl-C while DuckDB still computes the result (no row yet, "running" after
# 1 s): the query itself is interrupted; an existing --output file is left
LONG="SELECT sum(range * 7 % 13) AS s FROM range(3000000000)"
pty tty.bin --interrupt-on 'sql: running' -- "$SILT" sql "$LONG" --format csv
assert_eq "$RC" "130" "sql: Ctrl-C while computing"
assert_eq "$(lines_of tty.bin | grep -c '^sql: running, [0-9]s elapsed$')" "$(lines_of tty.bin | grep -vc '^silt: ')" \
    "only 'sql: running, Ns elapsed' lines while computing"
assert_eq "$(lines_of tty.bin | grep '^silt: ' || true)" "silt: interrupted: sql: 0 rows written to stdout" \
    "the Ctrl-C line while computing"
assert_eq "$OUT" "" "nothing on stdout"
printf 'old\n' >keep.csv
pty tty.bin --interrupt-on 'sql: running' -- "$SILT" sql "$LONG" --format csv --output keep.csv
assert_eq "$RC" "130"
assert_eq "$(lines_of tty.bin | grep '^silt: ' || true)" "silt: interrupted: sql: 0 rows written; 'keep.csv' was left as it was"
assert_eq "$(cat keep.csv)" "old" "the output file is untouched"
done_tests
