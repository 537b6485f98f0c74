#!/usr/bin/env bash
# bench_transfer.sh — `silt pull` (a clone) of a dataset from a silt node
# (`silt serve` on 127.0.0.1) with --jobs 1 and --jobs 8, against curl
# fetching the same objects in parallel (xargs -P8 over their URLs) in the
# same run; figures only, nothing asserted (docs/performance.md, "Transfer").
#
# Fixture (quick to build): SLICES slices of ~SLICE_MB MB of Parquet
# (incompressible rows, ingested from CSV) plus small SetInfo blocks
# appended in one `silt append` call, up to BLOCKS blocks in all.
#   bench_transfer.sh SILT [BLOCKS] [SLICES] [SLICE_MB] [OTHER_SILT...]
# OTHER_SILT (optional): other binaries pulled the same way with --jobs 8
# (e.g. one that re-reads each download to hash it) for side-by-side
# figures. Every figure is the best of REPS (default 2) runs: the machine
# may be shared.
set -euo pipefail
SILT=$1
BLOCKS=${2:-1000}
SLICES=${3:-8}
SLICE_MB=${4:-25}
shift $(($# < 4 ? $# : 4))
OTHERS=("$@")
REPS=${REPS:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/transfer"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
PIDS=()
trap 'for p in "${PIDS[@]:-}"; do kill "$p" 2>/dev/null || true; done' EXIT
now() { date +%s.%N; }
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }
mbs() { python3 -c "print('%.1f' % ($1 / 1e6 / $2))"; }

# ---- fixture ------------------------------------------------------------------
t0=$(now)
mkdir node && cd node && "$SILT" init >/dev/null
"$SILT" new big >/dev/null
cat >src.yaml <<'Y'
kind: AddPushSource
sourceName: default
read: {kind: Csv, header: true, ddlSchema: ["id BIGINT", "s STRING"]}
merge: {kind: Append}
Y
"$SILT" append big src.yaml >/dev/null
rows=$((SLICE_MB * 1000000 / 52))
for k in $(seq "$SLICES"); do
    python3 - "$k" "$rows" >d.csv <<'P'
import os, sys
k, n = int(sys.argv[1]), int(sys.argv[2])
w = sys.stdout.write
w("id,s\n")
r = os.urandom(n * 24).hex()
for i in range(n):
    w(f"{k * 100000000 + i},{r[i * 48:(i + 1) * 48]}\n")
P
    "$SILT" ingest big d.csv >/dev/null
done
rm d.csv
have=$(ls .silt/datasets/*/blocks | wc -l)
mkdir ev
for i in $(seq $((BLOCKS - have))); do printf 'kind: SetInfo\ndescription: "block %d"\n' "$i" >"ev/$(printf %05d "$i").yaml"; done
[ "$BLOCKS" -gt "$have" ] && "$SILT" append big ev/*.yaml >/dev/null
rm -rf ev
DS=$(echo .silt/datasets/*/)
NBLK=$(ls "$DS/blocks" | wc -l)
NOBJ=$(ls "$DS/data" | wc -l)
BYTES=$(cat "$DS"/data/* "$DS"/blocks/* | wc -c)
echo "fixture: $NBLK blocks, $NOBJ data objects, $BYTES bytes, built in $(python3 -c "print('%.0f' % ($(now) - $t0))") s"
SILT_ADMIN_TOKEN=bench "$SILT" serve --listen 127.0.0.1:0 >serve.out 2>serve.log &
PIDS+=($!)
for _ in $(seq 100); do grep -q '^listening on ' serve.out && break; sleep 0.05; done
BASE=$(sed -n 's/^listening on //p' serve.out)
cd ..

# ---- runs ---------------------------------------------------------------------
best() { # CMD... -> the least seconds of REPS runs
    local r t m=""
    for r in $(seq "$REPS"); do
        t=$("$@")
        m=$(python3 -c "print(min(x for x in [$t${m:+, $m}]))")
    done
    echo "$m"
}
pull_once() { # BIN JOBS -> seconds
    rm -rf ws && mkdir ws && (cd ws && "$1" init >/dev/null)
    local a b
    a=$(now)
    (cd ws && SILT_TOKEN=bench "$1" pull "$BASE/odf/big" --jobs "$2" >/dev/null)
    b=$(now)
    python3 -c "print($b - $a)"
}
pull() { best pull_once "$@"; }
curl_once() { # -> seconds: every block and data object, 8 in parallel
    rm -rf dl && mkdir dl
    local a b
    a=$(now)
    (cd dl && xargs -P8 -n16 curl -sS -f --remote-name-all -H 'Authorization: Bearer bench' <../urls >/dev/null)
    b=$(now)
    python3 -c "print($b - $a)"
}
(cd "node/$DS" && ls blocks | sed "s|^|$BASE/odf/big/blocks/|" && ls data | sed "s|^|$BASE/odf/big/data/|") >urls
j1=$(pull "$SILT" 1)
j8=$(pull "$SILT" 8)
c8=$(best curl_once)
printf '%-28s %8s %8s\n' "run" "seconds" "MB/s"
printf '%-28s %8.2f %8s\n' "silt pull --jobs 1" "$j1" "$(mbs "$BYTES" "$j1")"
printf '%-28s %8.2f %8s\n' "silt pull --jobs 8" "$j8" "$(mbs "$BYTES" "$j8")"
printf '%-28s %8.2f %8s\n' "curl, xargs -P8" "$c8" "$(mbs "$BYTES" "$c8")"
for o in "${OTHERS[@]}"; do
    o8=$(pull "$o" 8)
    printf '%-28s %8.2f %8s   (time vs SILT: %s)\n' "$(basename "$o") --jobs 8" "$o8" "$(mbs "$BYTES" "$o8")" "$(ratio "$o8" "$j8")"
done
echo "jobs 1 / jobs 8 time: $(ratio "$j1" "$j8"); silt --jobs 8 / curl time: $(ratio "$j8" "$c8")"
