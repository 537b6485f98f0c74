#!/usr/bin/env bash
# test_derive.sh — derivative datasets (issue 16, docs/transforms.md):
# SetTransform inputs resolved at `silt add` / `silt append` (stored as DIDs
# with aliases) and every validation error (one line, exit 1, workspace
# unchanged); `silt pull` of a stateless derivative (filter + projection):
# exact rows, offsets and ops after two input batches, the second run reading
# only the new input records (the count the transform reports: the rows of
# the views its query read, which for a stateless plan hold only the new
# input records, by construction of the views over the new slices), and
# "up to date" with no block when nothing is new; an aggregation (GROUP BY)
# whose :current equals `silt sql` of the same query over the inputs after
# inserts, a correction and a retraction in a Snapshot input (-R/+A
# changelog); a stateless query over a changelog input; the ExecuteTransform
# queryInputs intervals in `silt log`; `silt verify`; `pull --recursive`
# and `--all` in dependency order; a wrong column refused at add (the query
# is bound against the inputs' schemas), and at the first pull when an input
# had no schema at add; a query error at pull time.
source "$(dirname "$0")/lib.sh"

ok init

# derivative NAME: a derivative manifest NAME.yaml whose SetTransform fields
# (indented by 4) are on stdin
derivative() {
    {
        printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Derivative\n  metadata:\n' "$1"
        printf '  - kind: SetTransform\n'
        cat
    } >"$1.yaml"
}
log_get() { "$SILT" log "$1" --json | jget "$2"; }
# the newest ExecuteTransform's field EXPR (e = the event)
et() { log_get "$1" "[b['event'] for b in d if b['event']['kind']=='ExecuteTransform'][${3:-0}]$2"; }
id_of() { info "$1" 'd["id"]'; }

add_ds readings <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: [event_time TIMESTAMP, city STRING, temp BIGINT]
      merge:
        kind: Append
EOF
READINGS=$(id_of readings)

# ---- input resolution -------------------------------------------------------------

derivative warm <<'EOF'
    inputs:
    - datasetRef: readings
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT event_time, city, temp * 2 AS t2 FROM readings WHERE temp > 15
EOF
ok add warm.yaml
ST="[b['event'] for b in d if b['event']['kind']=='SetTransform'][0]"
assert_eq "$(log_get warm "$ST['inputs']")" "[{\"alias\":\"readings\",\"datasetRef\":\"$READINGS\"}]" \
    "a name is stored as the DID, the alias defaults to the name"
assert_eq "$(log_get warm "$ST['transform']")" \
    '{"engine":"duckdb","kind":"Sql","queries":[{"query":"SELECT event_time, city, temp * 2 AS t2 FROM readings WHERE temp > 15"}]}' \
    "query is stored as a one-step queries"

derivative byid <<EOF
    inputs:
    - datasetRef: $READINGS
    - datasetRef: warm
      alias: w
    transform:
      kind: Sql
      engine: duckdb
      queries:
      - alias: both
        query: SELECT city FROM readings UNION ALL SELECT city FROM w
      - query: SELECT city, count(*) AS n FROM both GROUP BY city
EOF
ok add byid.yaml
assert_eq "$(log_get byid "$ST['inputs']")" \
    "[{\"alias\":\"readings\",\"datasetRef\":\"$READINGS\"},{\"alias\":\"w\",\"datasetRef\":\"$(id_of warm)\"}]" \
    "a did:odf: ref keeps the DID, its alias defaults to the dataset's name; an alias given is kept"

# ---- validation errors: one line, exit 1, nothing written ------------------------

bad() { # bad NAME 'message after the context' < SetTransform fields
    derivative "$1"
    unchanged_after 1 "silt: $1.yaml:1: dataset '$1': content.metadata[0] (SetTransform): $2" add "$1.yaml"
}
bad nosuch "input 'ghost': no such dataset" <<'EOF'
    inputs:
    - datasetRef: ghost
    transform: {kind: Sql, engine: duckdb, query: SELECT 1 AS x}
EOF
bad selfref "input 'selfref' is the dataset itself" <<'EOF'
    inputs:
    - datasetRef: selfref
    transform: {kind: Sql, engine: duckdb, query: SELECT 1 AS x}
EOF
bad both "give either 'query' or 'queries', not both" <<'EOF'
    inputs:
    - datasetRef: readings
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT 1 AS x
      queries:
      - query: SELECT 2 AS x
EOF
bad neither "the transform needs 'query' or 'queries'" <<'EOF'
    inputs:
    - datasetRef: readings
    transform: {kind: Sql, engine: duckdb}
EOF
bad noalias "queries[0] needs an alias (only the last step may have none)" <<'EOF'
    inputs:
    - datasetRef: readings
    transform:
      kind: Sql
      engine: duckdb
      queries:
      - query: SELECT 2 AS x
      - query: SELECT 3 AS x
EOF
bad twice "two inputs have the alias 'r'" <<'EOF'
    inputs:
    - datasetRef: readings
      alias: r
    - datasetRef: warm
      alias: r
    transform: {kind: Sql, engine: duckdb, query: SELECT 1 AS x}
EOF
bad tenant "input 'alice/readings': account/name references are not supported (this workspace is single-tenant)" <<'EOF'
    inputs:
    - datasetRef: alice/readings
    transform: {kind: Sql, engine: duckdb, query: SELECT 1 AS x}
EOF
# a cycle, by `silt append`: warm would read byid, which reads warm
cat >cycle.yaml <<'EOF'
kind: SetTransform
inputs:
- datasetRef: byid
transform: {kind: Sql, engine: duckdb, query: SELECT 1 AS x}
EOF
unchanged_after 1 "silt: cycle.yaml: event 1 (SetTransform): input 'byid' reads 'warm' (a cycle)" append warm cycle.yaml
sed 's/byid/warm/' cycle.yaml >self.yaml
unchanged_after 1 "silt: self.yaml: event 1 (SetTransform): input 'warm' is the dataset itself" append warm self.yaml
sed "s/byid/$(id_of warm)/" cycle.yaml >selfid.yaml
unchanged_after 1 "silt: selfid.yaml: event 1 (SetTransform): input '$(id_of warm)' is the dataset itself" append warm selfid.yaml
ok delete byid

# ---- a stateless derivative: filter + projection -----------------------------------

ok pull warm
assert_eq "$OUT" "warm: up to date" "an input without data: up to date"
assert_eq "$(log_get warm 'len(d)')" "2" "no block"

printf 'event_time,city,temp\n2024-01-01T00:00:00Z,a,10\n2024-01-01T01:00:00Z,b,20\n2024-01-02T00:00:00Z,a,30\n' >b1.csv
ok ingest readings b1.csv
R1=$(head_of readings)
ok pull warm
assert_eq "$OUT" "warm: 2 new records (offsets 0..1), watermark 2024-01-02T00:00:00.000Z, read 3 input records (incremental)" \
    "first run"
expect_sql 'SELECT "offset", op, event_time, city, t2 FROM warm' "stateless: first batch" <<'EOF'
offset,op,event_time,city,t2
0,0,2024-01-01T01:00:00Z,b,40
1,0,2024-01-02T00:00:00Z,a,60
EOF
assert_eq "$(et warm "['queryInputs']")" \
    "[{\"datasetId\":\"$READINGS\",\"newBlockHash\":\"$R1\",\"newOffset\":2}]" "first queryInputs"
assert_eq "$(et warm "['newData']['offsetInterval']")" '{"end":1,"start":0}' "first newData"
assert_eq "$(et warm "['newWatermark']")" "2024-01-02T00:00:00Z" "watermark = the input's"
H=$(head_of warm)
ok pull warm
assert_eq "$OUT" "warm: up to date" "nothing new"
assert_eq "$(head_of warm)" "$H" "no block when nothing is new"

printf 'event_time,city,temp\n2024-01-03T00:00:00Z,c,50\n2024-01-03T01:00:00Z,a,5\n' >b2.csv
ok ingest readings b2.csv
R2=$(head_of readings)
ok pull warm
assert_eq "$OUT" "warm: 1 new record (offsets 2..2), watermark 2024-01-03T01:00:00.000Z, read 2 input records (incremental)" \
    "second run reads only the 2 new input records"
expect_sql 'SELECT "offset", op, event_time, city, t2 FROM warm' "stateless: second batch" <<'EOF'
offset,op,event_time,city,t2
0,0,2024-01-01T01:00:00Z,b,40
1,0,2024-01-02T00:00:00Z,a,60
2,0,2024-01-03T00:00:00Z,c,100
EOF
assert_eq "$(et warm "['queryInputs']")" \
    "[{\"datasetId\":\"$READINGS\",\"newBlockHash\":\"$R2\",\"newOffset\":4,\"prevBlockHash\":\"$R1\",\"prevOffset\":2}]" \
    "second queryInputs: (prevOffset, newOffset] = (2, 4]"
assert_eq "$(et warm "['prevOffset']")" "1" "prevOffset continues the derivative's offsets"
ok verify warm
assert_eq "$OUT" "warm: ok (5 blocks)" "verify"

# UNION ALL of two inputs is stateless; UNION (distinct) is not: told from
# the plan, not the text. Only one input moving: the other's entry keeps its
# positions (no newBlockHash, no newOffset) and contributes no record.
derivative cities <<'EOF'
    inputs:
    - datasetRef: readings
    - datasetRef: warm
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT event_time, city FROM readings UNION ALL SELECT event_time, city FROM warm
EOF
ok add cities.yaml
sed -e 's/name: cities/name: dcities/' -e 's/UNION ALL/UNION/' cities.yaml >dcities.yaml
ok add dcities.yaml
ok pull cities
assert_eq "$OUT" "cities: 8 new records (offsets 0..7), watermark 2024-01-03T01:00:00.000Z, read 8 input records (incremental)" \
    "UNION ALL: incremental"
ok pull dcities
assert_eq "$OUT" "dcities: 5 new records (offsets 0..4), watermark 2024-01-03T01:00:00.000Z, read 8 input records (full)" \
    "UNION: full"
printf 'event_time,city,temp\n2024-01-04T00:00:00Z,d,1\n' >b3.csv
ok ingest readings b3.csv
R3=$(head_of readings)
W=$(head_of warm)
ok pull cities
assert_eq "$OUT" "cities: 1 new record (offsets 8..8), watermark 2024-01-03T01:00:00.000Z, read 1 input record (incremental)" \
    "one input moved: only its new record is read; the watermark is the minimum of the inputs'"
assert_eq "$(et cities "['queryInputs']")" \
    "[{\"datasetId\":\"$READINGS\",\"newBlockHash\":\"$R3\",\"newOffset\":5,\"prevBlockHash\":\"$R2\",\"prevOffset\":4},{\"datasetId\":\"$(id_of warm)\",\"prevBlockHash\":\"$W\",\"prevOffset\":2}]" \
    "queryInputs: the input that did not move keeps its positions"
ok verify cities
assert_eq "$OUT" "cities: ok (5 blocks)" "verify cities"

# ---- an aggregation: full recompute, committed as a changelog ---------------------

add_ds pop <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: [city STRING, country STRING, population BIGINT]
      merge:
        kind: Snapshot
        primaryKey: [city]
EOF
derivative totals <<'EOF'
    inputs:
    - datasetRef: pop
      alias: p
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT country, CAST(sum(population) AS BIGINT) AS total, count(*) AS cities FROM p GROUP BY country
EOF
ok add totals.yaml
# a stateless query over the same changelog input: incremental while only +A
# come, recomputed over the current state (so :current stays right) once
# the new records hold a correction or retraction
derivative big <<'EOF'
    inputs:
    - datasetRef: pop
      alias: p
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT city, population FROM p WHERE population > 6
EOF
ok add big.yaml
same_as_query() { # LABEL: totals:current = the query over pop's current state
    local direct
    run sql 'SELECT country, CAST(sum(population) AS BIGINT) AS total, count(*) AS cities FROM "pop:current" GROUP BY country ORDER BY country' --format csv
    direct=$OUT
    run sql 'SELECT country, total, cities FROM "totals:current" ORDER BY country' --format csv
    assert_eq "$OUT" "$direct" "$1: totals:current = the query over the input"
}
printf 'city,country,population\na,x,10\nb,x,20\nc,y,5\n' >p1.csv
ok ingest pop p1.csv --event-time 2024-01-01T00:00:00Z
ok pull totals
assert_eq "$OUT" "totals: 2 new records (offsets 0..1), watermark 2024-01-01T00:00:00.000Z, read 3 input records (full)" \
    "aggregation: first run"
expect_sql 'SELECT "offset", op, event_time, country, total, cities FROM totals' "aggregation: first run" <<'EOF'
offset,op,event_time,country,total,cities
0,0,2024-01-01T00:00:00Z,x,30,2
1,0,2024-01-01T00:00:00Z,y,5,1
EOF
same_as_query "after the first batch"
ok pull big
assert_eq "$OUT" "big: 2 new records (offsets 0..1), watermark 2024-01-01T00:00:00.000Z, read 3 input records (incremental)" \
    "changelog input, only +A: incremental"
# insert: d joins y; unchanged x stays
printf 'city,country,population\na,x,10\nb,x,20\nc,y,5\nd,y,7\n' >p2.csv
ok ingest pop p2.csv --event-time 2024-02-01T00:00:00Z
ok pull totals
expect_sql 'SELECT "offset", op, event_time, country, total, cities FROM totals WHERE "offset" >= 2' "aggregation: insert" <<'EOF'
offset,op,event_time,country,total,cities
2,1,2024-01-01T00:00:00Z,y,5,1
3,0,2024-02-01T00:00:00Z,y,12,2
EOF
same_as_query "after an insert"
ok pull big
assert_eq "$OUT" "big: 1 new record (offsets 2..2), watermark 2024-02-01T00:00:00.000Z, read 1 input record (incremental)" \
    "changelog input, an insert: incremental over the one new record"
# correction of a (10 -> 12) and retraction of b: x changes; y unchanged
printf 'city,country,population\na,x,12\nc,y,5\nd,y,7\n' >p3.csv
ok ingest pop p3.csv --event-time 2024-03-01T00:00:00Z
ok pull totals
expect_sql 'SELECT "offset", op, event_time, country, total, cities FROM totals WHERE "offset" >= 4' "aggregation: correction + retraction" <<'EOF'
offset,op,event_time,country,total,cities
4,1,2024-01-01T00:00:00Z,x,30,2
5,0,2024-03-01T00:00:00Z,x,12,1
EOF
same_as_query "after a correction and a retraction"
ok pull big
assert_eq "$OUT" "big: 3 new records (offsets 3..5), watermark 2024-03-01T00:00:00.000Z, read 3 input records (full)" \
    "changelog input with -C/+C/-R among the new records: recomputed over the current state"
expect_sql 'SELECT "offset", op, city, population FROM big WHERE "offset" >= 3' "big: the difference" <<'EOF'
offset,op,city,population
3,1,a,10
4,1,b,20
5,0,a,12
EOF
expect_sql 'SELECT city, population FROM "big:current" ORDER BY city' "big:current = the query over pop:current" <<'EOF'
city,population
a,12
d,7
EOF
assert_eq "$(et totals "['queryInputs'][0]['prevOffset']"),$(et totals "['queryInputs'][0]['newOffset']")" "3,6" \
    "queryInputs offsets of the third run"
ok verify totals
assert_eq "$OUT" "totals: ok (6 blocks)" "verify the changelog derivative"

# ---- a query error at pull time: nothing written ------------------------------------

# bound at add against the inputs' schemas: a wrong column is refused there
derivative broken <<'EOF'
    inputs:
    - datasetRef: readings
    transform: {kind: Sql, engine: duckdb, query: SELECT no_such_column FROM readings}
EOF
unchanged_after 1 "silt: broken.yaml:1: dataset 'broken': content.metadata[0] (SetTransform): transform query: Binder Error: Referenced column \"no_such_column\" not found in FROM clause!" \
    add broken.yaml
derivative broken <<'EOF'
    inputs:
    - datasetRef: readings
    transform:
      kind: Sql
      engine: duckdb
      queries:
      - alias: step
        query: SELECT city FROM readings
      - query: SELECT temp FROM step
EOF
unchanged_after 1 "silt: broken.yaml:1: dataset 'broken': content.metadata[0] (SetTransform): transform query: Binder Error: Referenced column \"temp\" not found in FROM clause!" \
    add broken.yaml
# an input without a schema yet: not bound at add, the error comes at the first pull
cat >later.yaml <<'EOF'
kind: DatasetSnapshot
version: 1
content:
  name: later
  kind: Root
  metadata:
  - kind: AddPushSource
    sourceName: default
    read: {kind: Csv, header: true, ddlSchema: [event_time TIMESTAMP, v BIGINT]}
    merge: {kind: Append}
EOF
ok add later.yaml
sed -e 's/name: broken/name: broken2/' -e 's/datasetRef: readings/datasetRef: later/' -e 's/FROM readings/FROM later/' broken.yaml >broken2.yaml
ok add broken2.yaml
printf 'event_time,v\n2024-01-01T00:00:00Z,1\n' >l.csv
ok ingest later l.csv
unchanged_after_like 1 "pull 'broken2': transform step 'step': Binder Error" pull broken2
assert_contains "$ERR" '"city"' "the pull names the column"
# an error only the run finds (a failing cast)
derivative broken <<'EOF'
    inputs:
    - datasetRef: readings
    transform: {kind: Sql, engine: duckdb, query: SELECT CAST(city AS INTEGER) AS n FROM readings}
EOF
ok add broken.yaml
unchanged_after_like 1 "pull 'broken': " pull broken
assert_contains "$ERR" "Conversion Error" "the run's error"
ok delete broken
ok delete broken2
ok delete later

# ---- pull --recursive / --all: inputs first, in dependency order -------------------

mkdir drop
cat >feed.yaml <<EOF
kind: DatasetSnapshot
version: 1
content:
  name: feed
  kind: Root
  metadata:
  - kind: SetPollingSource
    fetch:
      kind: FilesGlob
      path: $T_DIR/drop/*.csv
    read:
      kind: Csv
      header: true
      ddlSchema: [event_time TIMESTAMP, v BIGINT]
    merge:
      kind: Append
EOF
ok add feed.yaml
derivative stage1 <<'EOF'
    inputs:
    - datasetRef: feed
    transform: {kind: Sql, engine: duckdb, query: 'SELECT event_time, v + 1 AS v FROM feed'}
EOF
ok add stage1.yaml
derivative stage2 <<'EOF'
    inputs:
    - datasetRef: stage1
    transform: {kind: Sql, engine: duckdb, query: 'SELECT event_time, v * 10 AS v FROM stage1'}
EOF
ok add stage2.yaml
printf 'event_time,v\n2024-05-01T00:00:00Z,1\n2024-05-02T00:00:00Z,2\n' >drop/a.csv
ok pull --recursive stage2
assert_eq "$OUT" "feed: 2 new records (offsets 0..1), watermark 2024-05-02T00:00:00.000Z
stage1: 2 new records (offsets 0..1), watermark 2024-05-02T00:00:00.000Z, read 2 input records (incremental)
stage2: 2 new records (offsets 0..1), watermark 2024-05-02T00:00:00.000Z, read 2 input records (incremental)" \
    "recursive: the polled root, then each derivative after its input"
expect_sql 'SELECT "offset", v FROM stage2' "recursive result" <<'EOF'
offset,v
0,20
1,30
EOF
# a derivative without SetTransform: an error by name, left out of --all
printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: bare\n  kind: Derivative\n  metadata: []\n' >bare.yaml
ok add bare.yaml
unchanged_after 1 "silt: pull 'bare': the derivative has no SetTransform" pull bare
printf 'event_time,v\n2024-05-03T00:00:00Z,3\n' >drop/b.csv
ok pull --all
case "$OUT" in *bare*) fail "--all pulled a derivative without transform: $OUT" ;; *) pass ;; esac
order=$(printf '%s\n' "$OUT" | sed -n 's/^\(feed\|stage1\|stage2\|warm\|readings\): .*/\1/p' | tr '\n' ' ')
case "$order" in
*feed*stage1*stage2*) pass ;;
*) fail "--all: feed, stage1, stage2 in dependency order, got: $order" ;;
esac
assert_contains "$OUT" "stage2: 1 new record (offsets 2..2), watermark 2024-05-03T00:00:00.000Z, read 1 input record (incremental)" \
    "--all pulled the new record through both stages"
assert_contains "$OUT" "warm: 0 new records, watermark 2024-01-04T00:00:00.000Z, read 1 input record (incremental)" \
    "--all includes every derivative; a run with no output record still records the positions and watermark"
assert_eq "$(et warm "['queryInputs'][0]['prevOffset']"),$(et warm "['queryInputs'][0]['newOffset']"),$(et warm "['newWatermark']")" \
    "4,5,2024-01-04T00:00:00Z" "the ExecuteTransform without newData"
assert_eq "$(et warm "['newData']")" "<missing>" "no newData"
expect_sql 'SELECT "offset", v FROM stage2' "after --all" <<'EOF'
offset,v
0,20
1,30
2,40
EOF
ok verify stage2
assert_eq "$OUT" "stage2: ok (5 blocks)" "verify stage2"

done_tests
