#!/usr/bin/env bash
# bench_derive.sh — a stateless derivative's incremental run (issue 16):
# `silt pull hot` of a filter + projection over an input that gained ROWS new
# records (the views hold only those, docs/transforms.md) against the same
# query over the same new records run directly by `silt sql`, its result
# written to Parquet by DuckDB's COPY in the same engine. Median of RUNS runs
# each; between runs the derivative is reset to before the run (`silt reset`),
# so every run consumes the same ROWS records. Figures only, nothing asserted
# (make bench). The pull also writes the slice with silt's writer, hashes it
# (logical + physical) and commits the ExecuteTransform block: the ratio is
# the price of that.
#   bench_derive.sh SILT [ROWS] [RUNS]
set -euo pipefail
SILT=$1
ROWS=${2:-1000000}
RUNS=${3:-3}
SEED=1000
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/derive"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
"$SILT" -q init >/dev/null
gen() { # gen FROM COUNT FILE: COUNT events from id FROM, as CSV
    "$SILT" -q sql --unsafe-file-access "COPY (SELECT TIMESTAMP '2020-01-01' + to_seconds(range) AS event_time,
        range AS id, 'city' || (range % 1000) AS city, (range * 7919) % 10000 * 0.01 AS value
        FROM range($1, $1 + $2)) TO '$3' (HEADER)" >/dev/null
}
gen 0 "$SEED" seed.csv
gen "$SEED" "$ROWS" new.csv
"$SILT" -q new events --push-source csv >/dev/null
"$SILT" -q ingest events seed.csv >/dev/null
Q="SELECT event_time, id, upper(city) AS city, value * 2 AS value2 FROM events WHERE value > 25"
cat >hot.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: hot
  kind: Derivative
  metadata:
  - kind: SetTransform
    inputs:
    - datasetRef: events
    transform:
      kind: Sql
      engine: duckdb
      query: $Q
YAML
"$SILT" -q add hot.yaml >/dev/null
"$SILT" -q pull hot >/dev/null
"$SILT" -q ingest events new.csv >/dev/null
before=$("$SILT" info hot | sed -n 's/^Head: *//p')
# median wall seconds of RUNS runs of "$@" (stdout discarded; after each, AFTER_EACH)
median() {
    local ts=() t
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -o "$out/.t" -f '%e' "$@" >"$out/.last"
        ts+=("$(tail -n 1 "$out/.t")")
        [ -z "${AFTER_EACH:-}" ] || eval "$AFTER_EACH"
    done
    printf '%s\n' "${ts[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"
}
direct=$(median "$SILT" -q sql --unsafe-file-access \
    "COPY ($Q AND \"offset\" >= $SEED) TO '$out/direct.parquet' (FORMAT parquet)")
AFTER_EACH='"$SILT" -q reset hot --to "$before" >/dev/null'
pull=$(median "$SILT" pull hot)
line=$(cat "$out/.last")
ratio() { python3 -c "print('%.2f' % (float('$1') / float('$2')))"; }
echo "## Derivative, incremental run ($(date -u +%Y-%m-%d), $(nproc) cores, $ROWS new input rows, median of $RUNS)"
echo
echo "| command | seconds | ratio (target <= 1.3) |"
echo "|---|---|---|"
echo "| \`silt sql\` COPY of the query over the new rows to Parquet (same engine) | $direct | 1.00 |"
echo "| \`silt pull hot\` (stateless: views over the new slices) | $pull | $(ratio "$pull" "$direct") |"
echo
echo "The pull said: $line"
