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
step verify --all
echo
echo "# the binary block at the head, decoded and hashed again:"
id=$("$SILT" info city-populations --json | sed -n 's/.*"id": "did:odf:\(f[0-9a-f]*\)".*/\1/p')
headfile=".silt/datasets/$id/blocks/$(cat ".silt/datasets/$id/refs/head")"
step block decode "$headfile" >"$work/head.yaml"
cat "$work/head.yaml"
step block hash "$work/head.yaml"
echo "(file name: $(basename "$headfile"))"
