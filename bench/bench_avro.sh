#!/usr/bin/env bash
# bench_avro.sh — `silt sql` aggregate over an N-row Avro view (files
# dataset, format avro, 10 files, snappy) vs the same rows as Parquet
# (10 files written by silt from the Avro view); wall time of each (best
# of RUNS), peak RSS, and the ratio (make bench; figures only, nothing
# asserted).
#   bench_avro.sh SILT AVRO_GEN [ROWS] [RUNS]
set -euo pipefail
SILT=$1
GEN=$2
ROWS=${3:-10000000}
RUNS=${4:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/avro"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
FILES=10
per=$((ROWS / FILES))
"$SILT" -q init >/dev/null
"$SILT" -q new av --files >/dev/null
"$SILT" -q new pq --files >/dev/null
for k in $(seq 0 $((FILES - 1))); do
    "$GEN" "part-$k.avro" $((k * per)) "$per" snappy
done
"$SILT" -q upload av part-*.avro >/dev/null
cat >avro.yaml <<'Y'
fields:
  - {name: id, type: {kind: Int64}}
  - {name: cat, type: {kind: Int32}}
  - {name: name, type: {kind: String}}
  - {name: score, type: {kind: Float64}}
format: avro
Y
sed 's/format: avro/format: parquet/' avro.yaml >parquet.yaml
"$SILT" -q schema set av avro.yaml >/dev/null
"$SILT" -q schema set pq parquet.yaml >/dev/null
S='{"fields":[{"name":"id","type":{"kind":"Int64"}},{"name":"cat","type":{"kind":"Int32"}},{"name":"name","type":{"kind":"String"}},{"name":"score","type":{"kind":"Float64"}}]}'
for k in $(seq 0 $((FILES - 1))); do
    "$SILT" -q sql "COPY (SELECT * FROM silt_read_avro('$out/part-$k.avro', '$S')) TO 'part-$k.parquet' (FORMAT parquet)" \
        --unsafe-file-access >/dev/null
done
"$SILT" -q upload pq part-*.parquet >/dev/null
Q='SELECT cat, count(*) AS n, sum(score) AS s, max(name) AS m FROM %s GROUP BY cat ORDER BY cat'
best() { # "best wall seconds, peak RSS MB" of RUNS runs of silt sql over dataset $1
    local b="" t m=0
    for _ in $(seq "$RUNS"); do
        read -r t k < <( { /usr/bin/time -f '%e %M' "$SILT" -q sql "$(printf "$Q" "$1")" --format csv >"$1.csv"; } 2>&1)
        b=$(python3 -c "print(min(float('$t'), float('${b:-$t}')))")
        m=$(( k / 1024 > m ? k / 1024 : m ))
    done
    echo "$b $m"
}
read -r ta ma < <(best av)
read -r tp mp < <(best pq)
cmp -s av.csv pq.csv || { echo "bench_avro: the Avro and Parquet views differ" >&2; exit 1; }
asz=$(du -cb part-*.avro | tail -1 | cut -f1)
psz=$(du -cb part-*.parquet | tail -1 | cut -f1)
echo "## Avro files ($(date -u +%Y-%m-%d), $(nproc) cores, $ROWS rows in $FILES files)"
echo
echo "| view | files (MB) | silt sql GROUP BY (s) | rows/s | peak RSS (MB) |"
echo "|---|---|---|---|---|"
python3 - "$ROWS" "$ta" "$tp" "$asz" "$psz" "$ma" "$mp" <<'P'
import sys
rows, ta, tp, asz, psz = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
ma, mp = sys.argv[6], sys.argv[7]
print(f"| Avro (snappy, silt_read_avro) | {asz / 1e6:.0f} | {ta:.2f} | {rows / ta / 1e6:.1f} M | {ma} |")
print(f"| Parquet (read_parquet) | {psz / 1e6:.0f} | {tp:.2f} | {rows / tp / 1e6:.1f} M | {mp} |")
print(f"\nAvro / Parquet time ratio: {ta / tp:.1f}x")
P
