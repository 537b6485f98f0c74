#!/usr/bin/env bash
# test_derive_verify.sh — replay verification of derivatives (issue 16,
# docs/transforms.md "Verifying a derivative"): `silt verify` runs every
# ExecuteTransform again from its recorded queryInputs and compares the
# logical hash of the result with newData.logicalHash — a stateless and a
# changelog (full recompute) derivative verify ok, and so do they after a
# change of their SetTransform; a non-deterministic query (random(), now())
# is a problem naming the block; a tampered input data file and an input
# whose history was rewritten are problems naming the block of the
# derivative (as well as the input's own problems); `--no-replay` checks
# hashes and chain rules only.
source "$(dirname "$0")/lib.sh"

ok init

derivative() { # derivative NAME: a derivative manifest whose SetTransform fields are on stdin
    {
        printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Derivative\n  metadata:\n' "$1"
        printf '  - kind: SetTransform\n'
        cat
    } >"$1.yaml"
    ok add "$1.yaml"
}
log_get() { "$SILT" log "$1" --json | jget "$2"; }
block_hash() { log_get "$1" "[b['hash'] for b in d if b['sequenceNumber']==$2][0]"; }
ds_dir() { echo "$T_DIR/.silt/datasets/$(info "$1" 'd["id"]' | sed 's/^did:odf://')"; }
et_field() { log_get "$1" "[b['event'] for b in d if b['sequenceNumber']==$2][0]$3"; }

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
derivative warm <<'EOF'
    inputs:
    - datasetRef: readings
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT event_time, city, temp * 2 AS t2 FROM readings WHERE temp > 15
EOF
derivative percity <<'EOF'
    inputs:
    - datasetRef: readings
      alias: r
    transform:
      kind: Sql
      engine: duckdb
      query: SELECT city, CAST(max(temp) AS BIGINT) AS hottest FROM r GROUP BY city
EOF
derivative noisy <<'EOF'
    inputs:
    - datasetRef: readings
    transform: {kind: Sql, engine: duckdb, query: 'SELECT city, random() AS r FROM readings'}
EOF
derivative stamped <<'EOF'
    inputs:
    - datasetRef: readings
    transform: {kind: Sql, engine: duckdb, query: 'SELECT city, CAST(now() AS VARCHAR) AS t FROM readings'}
EOF

printf 'event_time,city,temp\n2024-01-01T00:00:00Z,a,10\n2024-01-01T01:00:00Z,b,20\n2024-01-02T00:00:00Z,a,30\n' >b1.csv
ok ingest readings b1.csv
ok pull --all
printf 'event_time,city,temp\n2024-01-03T00:00:00Z,c,50\n2024-01-03T01:00:00Z,b,25\n' >b2.csv
ok ingest readings b2.csv
ok pull --all

# ---- deterministic queries replay to the recorded hashes ---------------------------

ok verify warm percity
assert_eq "$OUT" "warm: ok (5 blocks)
percity: ok (5 blocks)" "stateless and changelog derivatives replay to their hashes"
expect_sql 'SELECT "offset", op, city, hottest FROM percity' "percity: a changelog was replayed" <<'EOF'
offset,op,city,hottest
0,0,a,30
1,0,b,20
2,1,b,20
3,0,b,25
4,0,c,50
EOF

# a new SetTransform: each ExecuteTransform replays with the one in force at it
cat >t2.yaml <<'EOF'
kind: SetTransform
inputs:
- datasetRef: readings
transform: {kind: Sql, engine: duckdb, query: 'SELECT event_time, city, temp * 3 AS t2 FROM readings WHERE temp > 15'}
EOF
ok append warm t2.yaml
printf 'event_time,city,temp\n2024-01-04T00:00:00Z,d,40\n' >b3.csv
ok ingest readings b3.csv
ok pull warm
expect_sql 'SELECT "offset", city, t2 FROM warm WHERE "offset" >= 3' "the new transform ran" <<'EOF'
offset,city,t2
3,b,50
4,d,120
EOF
ok verify warm
assert_eq "$OUT" "warm: ok (7 blocks)" "replay with the SetTransform in force at each block"

# ---- non-deterministic queries ---------------------------------------------------

for ds in noisy stamped; do
    H=$(block_hash "$ds" 3)
    WANT=$(et_field "$ds" 3 "['newData']['logicalHash']")
    run verify "$ds"
    assert_eq "$RC,$OUT" "1,$ds: INVALID (2 problems)" "$ds: both runs are problems"
    line=$(printf '%s\n' "$ERR" | head -1)
    [[ "$line" =~ ^"silt: $ds: block 3 ($H): ExecuteTransform replay: the result's logical hash "f[0-9a-f]{74}" is not newData.logicalHash $WANT (the query is not deterministic, or its inputs changed)"$ ]] ||
        fail "$ds: the first problem names block 3 and both hashes, got: $line"
    pass
    assert_eq "$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" "2" "$ds: one line per block"
    assert_contains "$ERR" "silt: $ds: block 4 ($(block_hash "$ds" 4)): ExecuteTransform replay: the result's logical hash" \
        "$ds: the second run is named too"
    ok verify "$ds" --no-replay
    assert_eq "$OUT" "$ds: ok (5 blocks)" "$ds: --no-replay checks hashes and chain rules only"
done
ok delete noisy
ok delete stamped

# ---- a tampered input data file -------------------------------------------------

RD=$(ds_dir readings)
F1=$RD/data/$(et_field readings 3 "['newData']['physicalHash']")
F2=$RD/data/$(et_field readings 4 "['newData']['physicalHash']")
cp "$F1" "$T_DIR/keep.parquet"
cp "$F2" "$F1" # a valid slice, but not the one the blocks name
run verify readings
assert_eq "$RC" "1" "the input itself fails verification"
run verify warm percity
S1=$(et_field readings 3 "['newData']['physicalHash']")
tamper_line() { echo "silt: $1: block $2 ($(block_hash "$1" "$2")): ExecuteTransform replay: dataset 'readings': block 3: data slice $S1 has $(stat -c %s "$F1") bytes but the block says $(et_field readings 3 "['newData']['size']"); run 'silt verify readings'"; }
assert_eq "$RC,$OUT" "1,warm: INVALID (3 problems)
percity: INVALID (2 problems)" "the derivatives fail by replay: every run that read the slice"
assert_eq "$ERR" "$(tamper_line warm 3)
$(tamper_line warm 4)
$(tamper_line warm 6)
$(tamper_line percity 3)
$(tamper_line percity 4)" "each problem names the derivative's block and the input's damaged slice"
ok verify warm percity --no-replay
assert_eq "$OUT" "warm: ok (7 blocks)
percity: ok (5 blocks)" "--no-replay: the derivatives' own hashes are fine"
cp "$T_DIR/keep.parquet" "$F1"
ok verify readings warm percity

# ---- an input whose history was rewritten -----------------------------------------

R_OLD=$(block_hash readings 3)
printf '%s' "$R_OLD" >"$RD/refs/head" # as a reset or a pull of a rewritten chain leaves it
printf 'event_time,city,temp\n2024-01-05T00:00:00Z,e,60\n' >b4.csv
ok ingest readings b4.csv
ok verify readings
run verify percity
assert_eq "$RC,$OUT" "1,percity: INVALID (1 problem)" "the derivative consumed blocks no longer in its input's history"
assert_eq "$ERR" "silt: percity: block 4 ($(block_hash percity 4)): ExecuteTransform replay: block $(et_field percity 4 "['queryInputs'][0]['newBlockHash']") is not in the chain of dataset 'readings'" \
    "the problem names the block and the input block that is gone"

done_tests
