#!/usr/bin/env bash
# bench_small.sh — the start-up cost of small commands (issue 12: target
# < 20 ms each): hyperfine wall time (mean of RUNS) and valgrind callgrind
# instruction counts (repeatable on a noisy machine) of `silt --version`,
# `list`, `info`, `log -n 1`, `schema` on a workspace of 3 datasets, beside
# two floors measured in the same run: an empty C program, and the same
# empty program linked against every shared library silt loads (the
# dynamic loader's share). Figures only.
#   bench_small.sh SILT [RUNS]
set -euo pipefail
SILT=$1
RUNS=${2:-30}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/bench/out/small"
rm -rf "$out" && mkdir -p "$out"
cd "$out"
command -v hyperfine >/dev/null || { echo "bench_small: hyperfine is not installed (scripts/bootstrap.sh)" >&2; exit 1; }

# ---- floors -------------------------------------------------------------------
echo 'int main(void) { return 0; }' >empty.c
cc -O2 empty.c -o empty
# every library silt needs, by path, kept even though unused
libs=$(ldd "$SILT" | awk '/=> \// {print $3}' | grep -v -E '/(libc|libm|ld-linux[^/]*)\.so' | tr '\n' ' ')
# shellcheck disable=SC2086
cc -O2 empty.c -o empty_libs -Wl,--no-as-needed $libs -Wl,-rpath,"$(dirname "$(ldd "$SILT" | awk '/libduckdb/ {print $3}')")"
nlibs=$(ldd "$SILT" | grep -c '=>')

# ---- a workspace ------------------------------------------------------------------
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
printf 'city,population\nA,1\nB,2\n' >p.csv
"$SILT" ingest pop p.csv >/dev/null
"$SILT" new raw --files >/dev/null
"$SILT" new other --files >/dev/null

cmds=("--version" "list" "info pop" "log pop -n 1" "schema pop")
# callgrind COMMAND... -> instructions (Ir) of the whole process
ir() { valgrind --tool=callgrind --callgrind-out-file=cg.out "$@" >/dev/null 2>cg.err; awk '/^summary:|^totals:/ {print $2; exit}' cg.out; }
wall() { hyperfine -N -w 3 -r "$RUNS" --export-json h.json "$1" >/dev/null 2>&1; python3 -c 'import json; r=json.load(open("h.json"))["results"][0]; print("%.1f %.1f" % (r["mean"]*1e3, r["user"]*1e3))'; }

echo "| command | wall ms (mean of $RUNS) | user ms | instructions (callgrind) |"
echo "|---|---|---|---|"
read -r w u <<<"$(wall ./empty)"
echo "| empty C program | $w | $u | $(ir ./empty) |"
read -r w u <<<"$(wall ./empty_libs)"
echo "| empty C program + silt's $nlibs shared libraries | $w | $u | $(ir ./empty_libs) |"
for c in "${cmds[@]}"; do
    # shellcheck disable=SC2086
    read -r w u <<<"$(wall "$SILT $c")"
    # shellcheck disable=SC2086
    echo "| \`silt $c\` | $w | $u | $(ir "$SILT" $c) |"
done
