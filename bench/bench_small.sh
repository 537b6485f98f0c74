#!/usr/bin/env bash
# bench_small.sh — the cost of small commands (issue 12: target < 20 ms
# each, hyperfine --warmup 3): wall and user time (mean of RUNS) and
# valgrind callgrind instruction counts (repeatable on a noisy machine) of
# `silt --version`, `list` over 100 datasets, `info`, `log -n 10`, `schema`
# and `files` of a files dataset holding 100,000 files, beside two floors
# measured in the same run: an empty C program, and the same program linked
# against every shared library silt loads at start-up (the dynamic loader's
# share). With BEFORE (another silt binary, e.g. a build of main) every
# command is measured with both binaries, on the same workspace, in the same
# run. Figures only.
#   bench_small.sh SILT [RUNS] [BEFORE]
set -euo pipefail
SILT=$(realpath "$1")
RUNS=${2:-30}
BEFORE=${3:+$(realpath "$3")}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/small"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
command -v hyperfine >/dev/null || { echo "bench_small: hyperfine is not installed (scripts/bootstrap.sh)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "bench_small: valgrind is not installed" >&2; exit 1; }

# ---- floors -------------------------------------------------------------------
echo 'int main(void) { return 0; }' >empty.c
cc -O2 empty.c -o empty
# every library silt needs at start-up, by path, kept even though unused
libs=$(ldd "$SILT" | awk '/=> \// {print $3}' | grep -v -E '/(libc|libm|ld-linux[^/]*)\.so' | tr '\n' ' ')
# shellcheck disable=SC2086
cc -O2 empty.c -o empty_libs -Wl,--no-as-needed $libs
nlibs=$(ldd "$SILT" | grep -c '=>')

# ---- a workspace: 100 datasets, one of 12 blocks, one of 100,000 files --------
"$SILT" init >/dev/null
cat >m.yaml <<'Y'
kind: DatasetSnapshot
version: 1
content:
  name: pop
  kind: Root
  metadata:
  - kind: AddPushSource
    sourceName: default
    read: {kind: Csv, header: true, ddlSchema: ["city STRING", "population BIGINT"]}
    merge: {kind: Append}
Y
"$SILT" add m.yaml >/dev/null
for i in $(seq 1 10); do
    printf 'city,population\nA%d,%d\nB%d,%d\n' "$i" "$i" "$i" "$((i + 1))" >p.csv
    "$SILT" ingest pop p.csv >/dev/null
done
for i in $(seq -w 1 98); do "$SILT" new "d$i" >/dev/null; done
"$SILT" new raw --files >/dev/null
# 100 directories of 1,000 files, all of the same two bytes: the store keeps
# one object (the upload writes one instead of 100,000), and the view
# (what `files` reads and prints) still has 100,000 entries
python3 - <<'P'
import os
for d in range(100):
    os.makedirs(f"up/d{d:02d}")
    for i in range(1000):
        with open(f"up/d{d:02d}/f{i:04d}.txt", "w") as f:
            f.write("x\n")
P
"$SILT" -q upload raw up --base up >/dev/null
rm -rf up
ndatasets=$("$SILT" list | tail -n +2 | wc -l)
nfiles=$("$SILT" files raw | wc -l)
nblocks=$("$SILT" list | awk '$1 == "pop" {print $3}')

cmds=("--version" "list" "info pop" "log pop -n 10" "schema pop" "info raw" "files raw")
# callgrind COMMAND... -> instructions (Ir) of the whole process
ir() { valgrind --tool=callgrind --callgrind-out-file=cg.out "$@" >/dev/null 2>cg.err; awk '/^summary:|^totals:/ {print $2; exit}' cg.out; }
wall() { hyperfine -N -w 3 -r "$RUNS" --export-json h.json "$1" >/dev/null 2>&1; python3 -c 'import json; r=json.load(open("h.json"))["results"][0]; print("%.1f %.1f" % (r["mean"]*1e3, r["user"]*1e3))'; }
# row LABEL COMMAND...: "| wall | user | instructions" of COMMAND
row() { local w u; read -r w u <<<"$(wall "$*")"; printf '| %s | %s | %s ' "$w" "$u" "$(ir "$@")"; }

echo "workspace: $ndatasets datasets; pop has $nblocks blocks; raw has $nfiles files"
if [ -n "$BEFORE" ]; then
    echo "| command | before: wall ms (mean of $RUNS) | user ms | instructions | now: wall ms | user ms | instructions |"
    echo "|---|---|---|---|---|---|---|"
else
    echo "| command | wall ms (mean of $RUNS) | user ms | instructions (callgrind) |"
    echo "|---|---|---|---|"
fi
pad() { [ -n "$BEFORE" ] && printf '| | | '; echo '|'; }
printf '| empty C program '; row ./empty; pad
printf "| empty C program + silt's %s shared libraries " "$nlibs"; row ./empty_libs; pad
for c in "${cmds[@]}"; do
    printf '| `silt %s` ' "$c"
    # shellcheck disable=SC2086
    [ -n "$BEFORE" ] && row "$BEFORE" $c
    # shellcheck disable=SC2086
    row "$SILT" $c
    echo '|'
done
