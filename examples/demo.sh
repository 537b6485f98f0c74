#!/usr/bin/env bash
# make demo — a short end-to-end tour of silt on the bundled example manifests.
# Runs in a fresh temporary workspace; prints every command it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SILT=${SILT:-$root/build/silt}
work=$(mktemp -d "${TMPDIR:-/tmp}/silt-demo-XXXXXX")
trap 'rm -rf "$work"' EXIT
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
echo "# a new yearly snapshot arrives:"
cp "$root"/examples/data/city-populations-2022.csv "$work/examples/data/"
step pull city-populations
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
step verify --all
echo
echo "# the binary block at the head, decoded and hashed again:"
id=$("$SILT" info city-populations --json | sed -n 's/.*"id": "did:odf:\(f[0-9a-f]*\)".*/\1/p')
headfile=".silt/datasets/$id/blocks/$(cat ".silt/datasets/$id/refs/head")"
printf '\n$ silt block decode %s > head.yaml\n' "$headfile"
"$SILT" block decode "$headfile" >"$work/head.yaml"
cat "$work/head.yaml"
step block hash "$work/head.yaml"
echo "(file name: $(basename "$headfile"))"
