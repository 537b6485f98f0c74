#!/usr/bin/env bash
# test_derive_lineage.sh — `silt lineage NAME [--format text|dot|json]`
# (issue 16, docs/transforms.md "Lineage"): upstream edges from the
# SetTransform inputs, transitively; downstream edges from a scan of the
# workspace's derivatives, transitively; a diamond (two paths to one
# dataset) shows each edge once; a dataset without relations; errors.
source "$(dirname "$0")/lib.sh"

ok init
derivative() { # derivative NAME QUERY INPUT...
    local name=$1 q=$2
    shift 2
    {
        printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Derivative\n  metadata:\n' "$name"
        printf '  - kind: SetTransform\n    inputs:\n'
        for i in "$@"; do printf '    - datasetRef: %s\n' "$i"; done
        printf '    transform: {kind: Sql, engine: duckdb, query: "%s"}\n' "$q"
    } >"$name.yaml"
    ok add "$name.yaml"
}
for r in rates trades lonely; do
    add_ds "$r" <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read: {kind: Csv, header: true, ddlSchema: [event_time TIMESTAMP, k STRING, v BIGINT]}
      merge: {kind: Append}
EOF
done
derivative priced 'SELECT t.k, t.v * r.v AS p FROM trades t JOIN rates r USING (k)' trades rates
derivative big 'SELECT k, p FROM priced WHERE p > 10' priced
derivative small 'SELECT k, p FROM priced WHERE p <= 10' priced
derivative report 'SELECT k FROM big UNION ALL SELECT k FROM small' big small

ok lineage priced
assert_eq "$OUT" "priced (derivative)
upstream:
  rates -> priced
  trades -> priced
downstream:
  big -> report
  priced -> big
  priced -> small
  small -> report" "text: inputs, then consumers, transitively"
ok lineage report
assert_eq "$OUT" "report (derivative)
upstream:
  big -> report
  priced -> big
  priced -> small
  rates -> priced
  small -> report
  trades -> priced
downstream: none" "a diamond upstream: each edge once"
ok lineage lonely
assert_eq "$OUT" "lonely (root)
upstream: none
downstream: none" "no relations"
ok lineage big --format dot
assert_eq "$OUT" 'digraph lineage {
  "big" [shape=ellipse, style=bold];
  "priced" [shape=ellipse];
  "rates" [shape=box];
  "report" [shape=ellipse];
  "trades" [shape=box];
  "priced" -> "big";
  "rates" -> "priced";
  "trades" -> "priced";
  "big" -> "report";
}' "dot: roots as boxes, the dataset in bold"
ok lineage rates --format json
assert_eq "$OUT" '{"dataset":"rates","nodes":[{"name":"rates","kind":"root"},{"name":"big","kind":"derivative"},{"name":"priced","kind":"derivative"},{"name":"report","kind":"derivative"},{"name":"small","kind":"derivative"}],"edges":[{"from":"big","to":"report","direction":"downstream"},{"from":"priced","to":"big","direction":"downstream"},{"from":"priced","to":"small","direction":"downstream"},{"from":"rates","to":"priced","direction":"downstream"},{"from":"small","to":"report","direction":"downstream"}]}' \
    "json"
ok --json lineage lonely
assert_eq "$OUT" '{"dataset":"lonely","nodes":[{"name":"lonely","kind":"root"}],"edges":[]}' "--json"

fails 1 "silt: dataset 'ghost' not found" lineage ghost
fails 2 "silt: lineage: --format must be text, dot or json, not 'svg' (see 'silt help')" lineage big --format svg
fails 2 "silt: lineage needs NAME (see 'silt help')" lineage
done_tests
