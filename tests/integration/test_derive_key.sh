#!/usr/bin/env bash
# test_derive_key.sh — the changelog of a full-recompute derivative by its
# declared primary key (issue 16, docs/transforms.md "Changelog by key"):
# a derivative whose manifest declares `silt.dev/primaryKey` in the extra
# attributes of a SetDataSchema without fields commits +A for new keys, a
# -C/+C pair for a key whose row changed, -R for a key that is gone, nothing
# for an unchanged key; its later SetDataSchema carries the key over;
# `:current` equals the query over the inputs' current state after inserts,
# updates and retractions in the input; a stateless query with a key is
# recomputed too; the changelog replays in `silt verify`; a key column that
# is not in the result, a key value with two rows and a malformed
# declaration fail the pull (one line, exit 1, nothing written).
source "$(dirname "$0")/lib.sh"

ok init

# keyed NAME 'KEY JSON' QUERY: a derivative of pop declaring KEY
keyed() {
    cat >"$1.yaml" <<EOF
kind: DatasetSnapshot
version: 1
content:
  name: $1
  kind: Derivative
  metadata:
  - kind: SetTransform
    inputs:
    - datasetRef: pop
      alias: p
    transform:
      kind: Sql
      engine: duckdb
      query: $3
  - kind: SetDataSchema
    schema:
      fields: []
      extra: {"silt.dev/primaryKey": $2}
EOF
    ok add "$1.yaml"
}
log_get() { "$SILT" log "$1" --json | jget "$2"; }

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
Q='SELECT country, CAST(sum(population) AS BIGINT) AS total, count(*) AS cities FROM p GROUP BY country'
keyed totals '["country"]' "$Q"
keyed bigcities '["city"]' 'SELECT city, population FROM p WHERE population > 6'

same_as_query() { # LABEL
    local direct
    run sql "$(printf '%s' "$Q" | sed 's/FROM p/FROM "pop:current"/') ORDER BY country" --format csv
    direct=$OUT
    run sql 'SELECT country, total, cities FROM "totals:current" ORDER BY country' --format csv
    assert_eq "$OUT" "$direct" "$1: totals:current = the query over pop:current"
}

printf 'city,country,population\na,x,10\nb,x,20\nc,y,5\nd,z,1\n' >p1.csv
ok ingest pop p1.csv --event-time 2024-01-01T00:00:00Z
ok pull totals
assert_eq "$OUT" "totals: 3 new records (offsets 0..2), watermark 2024-01-01T00:00:00.000Z, read 4 input records (full)" \
    "first run: +A per key"
expect_sql 'SELECT "offset", op, event_time, country, total, cities FROM totals' "first run" <<'EOF'
offset,op,event_time,country,total,cities
0,0,2024-01-01T00:00:00Z,x,30,2
1,0,2024-01-01T00:00:00Z,y,5,1
2,0,2024-01-01T00:00:00Z,z,1,1
EOF
assert_eq "$(log_get totals "[[f['name'] for f in b['event']['schema']['fields']] for b in d if b['event']['kind']=='SetDataSchema']")" \
    '[["offset","op","system_time","event_time","country","total","cities"],[]]' \
    "the declaration has no fields; the first run writes the schema of the result (newest first)"
assert_eq "$(log_get totals "[b['event']['schema']['extra'] for b in d if b['event']['kind']=='SetDataSchema']")" \
    '[{"silt.dev/primaryKey":["country"]},{"silt.dev/primaryKey":["country"]}]' "the key carries over to the written schema"
same_as_query "after the first batch"
ok pull bigcities
assert_eq "$OUT" "bigcities: 2 new records (offsets 0..1), watermark 2024-01-01T00:00:00.000Z, read 4 input records (full)" \
    "a stateless query with a key is recomputed over the current state"

# ---- errors at pull: one line, exit 1, nothing written ------------------------------

keyed badkey '["nope"]' 'SELECT country FROM p GROUP BY country'
unchanged_after 1 "silt: pull 'badkey': primary key column 'nope' is not a data column of the result" pull badkey
keyed dupkey '["country"]' 'SELECT country, city FROM p'
unchanged_after 1 "silt: pull 'dupkey': the result has 1 primary key value with more than one row (key: country)" pull dupkey
keyed badattr '"country"' 'SELECT country FROM p GROUP BY country'
unchanged_after 1 "silt: pull 'badattr': silt.dev/primaryKey must be a non-empty list of column names" pull badattr
keyed etkey '["event_time"]' 'SELECT country, max(event_time) AS event_time FROM p GROUP BY country'
unchanged_after 1 "silt: pull 'etkey': primary key column 'event_time' is not a data column of the result" pull etkey
for d in badkey dupkey badattr etkey; do ok delete "$d"; done

# ---- an update, an insert and a retraction ------------------------------------------

# a: 10 -> 15 (x changes), d retracted (z is gone), e new (w is new), y unchanged
printf 'city,country,population\na,x,15\nb,x,20\nc,y,5\ne,w,3\n' >p2.csv
ok ingest pop p2.csv --event-time 2024-02-01T00:00:00Z
ok pull totals
assert_eq "$OUT" "totals: 4 new records (offsets 3..6), watermark 2024-02-01T00:00:00.000Z, read 4 input records (full)" \
    "second run"
expect_sql 'SELECT "offset", op, event_time, country, total, cities FROM totals WHERE "offset" >= 3' \
    "-R for the gone key, -C/+C for the changed one, +A for the new one, nothing for y" <<'EOF'
offset,op,event_time,country,total,cities
3,1,2024-01-01T00:00:00Z,z,1,1
4,2,2024-01-01T00:00:00Z,x,30,2
5,3,2024-02-01T00:00:00Z,x,35,2
6,0,2024-02-01T00:00:00Z,w,3,1
EOF
same_as_query "after an update, an insert and a retraction"
ok pull bigcities
# x retracted entirely (a, b gone), c corrected (y changes), w unchanged
printf 'city,country,population\nc,y,8\ne,w,3\n' >p3.csv
ok ingest pop p3.csv --event-time 2024-03-01T00:00:00Z
ok pull totals
expect_sql 'SELECT "offset", op, event_time, country, total, cities FROM totals WHERE "offset" >= 7' "third run" <<'EOF'
offset,op,event_time,country,total,cities
7,1,2024-02-01T00:00:00Z,x,35,2
8,2,2024-01-01T00:00:00Z,y,5,1
9,3,2024-03-01T00:00:00Z,y,8,1
EOF
same_as_query "after the retraction of a whole group"
ok pull bigcities
expect_sql 'SELECT "offset", op, city, population FROM bigcities' "bigcities: by city" <<'EOF'
offset,op,city,population
0,0,a,10
1,0,b,20
2,2,a,10
3,3,a,15
4,1,b,20
5,1,a,15
6,0,c,8
EOF
expect_sql 'SELECT city, population FROM "bigcities:current" ORDER BY city' "bigcities:current" <<'EOF'
city,population
c,8
EOF
ok verify totals bigcities
assert_eq "$OUT" "totals: ok (7 blocks)
bigcities: ok (7 blocks)" "the keyed changelogs replay"

done_tests
