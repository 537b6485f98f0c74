#!/usr/bin/env bash
# test_templates.sh — `${{ env.NAME }}` and `${{ env.A || env.B || 'default' }}`
# templates in the fields of legacy SetPollingSource events (Url, FilesGlob,
# Pipe commands) and of Source resources (beside `${{ config.NAME }}`),
# expanded at pull time from silt's environment:
#  - kamu's own example (url: file://${{ env.data_dir || env.workspace_dir }}/
#    ${{ env.data_file || 'data.csv' }}): each alternative of the chain, the
#    literal default, and the missing-variable error naming the whole chain;
#  - environment values are redacted from messages and sealed in source
#    states (never stored): a FilesGlob over file names that hold one;
#  - bad expressions: one-line error, exit 1, nothing committed;
#  - the templates stay unrendered in the chain and in the resources.
source "$(dirname "$0")/lib.sh"

ok init
unset data_dir workspace_dir data_file

# ---- legacy Url: kamu's example ------------------------------------------------------------
add_ds kamu <<'YAML'
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: file://${{ env.data_dir || env.workspace_dir }}/${{ env.data_file || 'data.csv' }}
      read:
        kind: Csv
        header: true
        ddlSchema: [city STRING, population BIGINT]
      merge:
        kind: Snapshot
        primaryKey: [city]
YAML
mkdir ws dd
printf 'city,population\nA,1000\nB,2000\nC,3000\n' >ws/data.csv
touch -d '2020-01-01 00:00:00 UTC' ws/data.csv
printf 'city,population\nA,1000\nB,2500\n' >dd/other.csv
touch -d '2021-01-01 00:00:00 UTC' dd/other.csv
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'kamu': missing values for variable(s): 'env.data_dir || env.workspace_dir' in fetch.url" pull kamu
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "a missing variable commits nothing"
# the second alternative, the literal default
workspace_dir="$T_DIR/ws" ok pull kamu
assert_eq "$OUT" "kamu: 3 new records (offsets 0..2), watermark 2020-01-01T00:00:00.000Z"
# the first alternative wins over the second; data_file replaces the default
data_dir="$T_DIR/dd" workspace_dir="$T_DIR/ws" data_file=other.csv ok pull kamu
assert_eq "$OUT" "kamu: 3 new records (offsets 3..5), watermark 2021-01-01T00:00:00.000Z"
expect_sql 'select "offset", op, city, population from kamu order by "offset"' <<'CSV'
offset,op,city,population
0,0,A,1000
1,0,B,2000
2,0,C,3000
3,2,B,2000
4,3,B,2500
5,1,C,3000
CSV
# environment values are redacted from messages (both parts of the URL come from it)
SUM=$(tree_sum .silt/datasets)
data_dir="$T_DIR/dd" data_file=nope.csv fails 1 "silt: pull 'kamu': fetch file://***/***: No such file or directory" pull kamu
assert_eq "$(tree_sum .silt/datasets)" "$SUM"
# the chain keeps the template, not a value
run log kamu --yaml
assert_contains "$OUT" "url: file://\${{ env.data_dir || env.workspace_dir }}/\${{ env.data_file || 'data.csv' }}"
assert_eq "$(grep -rlaF -- "$T_DIR/dd" .silt || true)" "" "no environment value stored"

# ---- legacy FilesGlob + Pipe: sealed state, numbers, several templates --------------------------
export TT_TOKEN=tk9Q2z TT_DROP="$T_DIR/drop"
mkdir drop
printf 'id,v\n1,aa\n2,ab\n' >"drop/${TT_TOKEN}-1.csv"
printf 'id,v\n3,ba\n' >"drop/${TT_TOKEN}-2.csv"
add_ds tok <<'YAML'
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: "${{ env.TT_DROP }}/${{ env.TT_TOKEN }}-*.csv"
      prepare:
      - kind: Pipe
        command: [sed, -e, "s/a/${{ env.TT_TO || 'X' }}/g", -e, "s/^${{ env.TT_ID || 3 }},/30,/"]
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, v STRING]
      merge:
        kind: Append
YAML
ok pull tok
assert_eq "$OUT" "tok: 3 new records (offsets 0..2), watermark $(text_time "$(info tok 'd["watermark"]')")"
expect_sql 'select id, v from tok order by "offset"' <<'CSV'
id,v
1,XX
2,Xb
30,bX
CSV
run --json log tok -n 1
assert_eq "$(printf '%s' "$OUT" | jget 'd[0]["event"]["newSourceState"]["value"]')" 'silt:sealed:${env.TT_TOKEN}-2.csv' \
    "a state holding an environment value is sealed"
assert_eq "$(grep -rlaF -- "$TT_TOKEN" .silt || true)" "" "the value is nowhere under .silt"
ok pull tok
assert_eq "$OUT" "tok: up to date"
printf 'id,v\n4,ca\n' >"drop/${TT_TOKEN}-3.csv"
TT_TO=Y ok pull tok
assert_eq "$OUT" "tok: 1 new record (offsets 3..3), watermark $(text_time "$(info tok 'd["watermark"]')")"
expect_sql 'select id, v from tok where "offset" = 3' <<'CSV'
id,v
4,cY
CSV
# without the token the path cannot be rendered: an error, nothing changes
SUM=$(tree_sum .silt/datasets)
env -u TT_TOKEN "$SILT" pull tok >/dev/null 2>"$T_DIR/err" && fail "pull without TT_TOKEN succeeded"
assert_eq "$(cat "$T_DIR/err")" "silt: pull 'tok': missing values for variable(s): 'env.TT_TOKEN' in fetch.path"
assert_eq "$(tree_sum .silt/datasets)" "$SUM"

# ---- Source resource: env beside config --------------------------------------------------------
mkdir src2
printf 'id,v\n7,seven\n' >src2/a.csv
cat >res.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: res
  kind: Root
  metadata: []
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: res-src
spec:
  config:
    dir: $T_DIR/nowhere
  ingress:
    kind: FilesGlob
    path: "\${{ env.TT_SRC || config.dir }}/\${{ env.TT_GLOB || '*.csv' }}"
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT, v STRING]
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: res
spec:
  target: Dataset:res
  triggers:
  - kind: Schedule
    cron: "0 0 * * *"
  tasks:
  - kind: Ingest
    source: Source:res-src
YAML
ok add res.yaml
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'res': no files match '$T_DIR/nowhere/*.csv'" pull res
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "config.dir is the fallback"
TT_SRC="$T_DIR/src2" ok pull res
assert_eq "$OUT" "res: 1 new record (offsets 0..0), watermark $(text_time "$(info res 'd["watermark"]')")"
expect_sql 'select id, v from res' <<'CSV'
id,v
7,seven
CSV
ok sources
assert_contains "$OUT" "\${{ env.TT_SRC || config.dir }}/\${{ env.TT_GLOB || '*.csv' }}" "sources shows the template"

# ---- bad expressions: exit 1, one line, nothing committed -----------------------------------------
bad_ds() {
    add_ds "$1" <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Url
        url: "$2"
      read:
        kind: Csv
        ddlSchema: [a STRING]
      merge:
        kind: Append
YAML
}
bad_ds bad1 'file:///x/${{ env.A | env.B }}'
bad_ds bad2 'file:///x/${{ env.TT_UNSET || unquoted }}'
bad_ds bad3 'file:///x/${{ env.TT_UNSET || '"'"'open }}'
bad_ds bad4 'file:///x/${{ config.k }}'
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'bad1': invalid template expression 'env.A | env.B' in fetch.url: expected config.NAME, env.NAME, 'text' or a number" pull bad1
fails 1 "silt: pull 'bad2': invalid template expression 'unquoted' in fetch.url: expected config.NAME, env.NAME, 'text' or a number" pull bad2
fails 1 "silt: pull 'bad3': unterminated template expression in fetch.url" pull bad3
fails 1 "silt: pull 'bad4': unknown config key 'k' in fetch.url" pull bad4
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "bad expressions commit nothing"
ok verify --all

done_tests
