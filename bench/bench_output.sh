#!/usr/bin/env bash
# bench_output.sh — writing a query result: `silt sql … --format csv|ndjson`
# and `silt read-table --format csv` of an N-row dataset (BIGINT, VARCHAR,
# DOUBLE, TIMESTAMP, and the four system columns for read-table) against
# DuckDB's own CSV writer of the same rows in the same engine (`COPY … TO`
# through --unsafe-file-access), median of RUNS runs each, in one run
# (make bench; figures only, nothing asserted). silt renders every value
# itself (src/engine/render.c: exact decimals, RFC 3339 times, nested
# values as JSON), so the ratio is the price of that renderer.
#   bench_output.sh SILT [ROWS] [RUNS]
set -euo pipefail
SILT=$1
ROWS=${2:-1000000}
RUNS=${3:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/output"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
"$SILT" -q init >/dev/null
"$SILT" -q sql --unsafe-file-access "COPY (SELECT range AS id, 'city' || (range % 1000) AS city,
    range * 0.25 AS value, TIMESTAMP '2020-01-01' + to_seconds(range) AS t FROM range($ROWS))
    TO 'in.csv' (HEADER)" >/dev/null
"$SILT" -q new big --push-source csv >/dev/null
"$SILT" -q ingest big in.csv >/dev/null
# median wall seconds of RUNS runs of "$@" (stdout discarded)
median() {
    local ts=() t
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$out/.t" -f '%e' "$@" >/dev/null
        ts+=("$(tail -n 1 "$out/.t")")
    done
    printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
base=$(median "$SILT" -q sql --unsafe-file-access "COPY (SELECT * FROM big) TO '$out/duck.csv' (HEADER)")
csv=$(median "$SILT" -q sql 'SELECT * FROM big' --format csv)
nd=$(median "$SILT" -q sql 'SELECT * FROM big' --format ndjson)
rt=$(median "$SILT" -q read-table big --format csv)
ratio() { python3 -c "print('%.2f' % (float('$1') / float('$2')))"; }
echo "## Query output ($(date -u +%Y-%m-%d), $(nproc) cores, $ROWS rows, median of $RUNS)"
echo
echo "| command | seconds | vs DuckDB's CSV writer |"
echo "|---|---|---|"
echo "| DuckDB \`COPY (SELECT * FROM big) TO 'x.csv'\` (same engine) | $base | 1.00 |"
echo "| \`silt sql 'SELECT * FROM big' --format csv\` | $csv | $(ratio "$csv" "$base") |"
echo "| \`silt sql 'SELECT * FROM big' --format ndjson\` | $nd | $(ratio "$nd" "$base") |"
echo "| \`silt read-table big --format csv\` (with the system columns) | $rt | $(ratio "$rt" "$base") |"
