#!/usr/bin/env bash
# test_derive_reset.sh — `silt reset NAME[@BRANCH] --to BLOCK [--force]`
# (issue 16, docs/transforms.md "Resetting a dataset"): the head moves back
# to a block named by sequence number, full hash or unique prefix; a reset
# of an input whose dropped blocks a derivative consumed is refused naming
# the derivative (exit 1, nothing changed) until the derivative is reset
# first or --force is given; a derivative reset re-runs from its remaining
# ExecuteTransform; a pull of a derivative whose input was reset under it
# fails naming the input; a branch is reset without touching master; bad
# targets and usage errors.
source "$(dirname "$0")/lib.sh"

ok init
log_get() { "$SILT" log "$1" --json | jget "$2"; }
block_hash() { log_get "$1" "[b['hash'] for b in d if b['sequenceNumber']==$2][0]"; }

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
cat >warm.yaml <<'EOF'
kind: DatasetSnapshot
version: 1
content:
  name: warm
  kind: Derivative
  metadata:
  - kind: SetTransform
    inputs:
    - datasetRef: readings
    transform: {kind: Sql, engine: duckdb, query: 'SELECT event_time, city, temp FROM readings WHERE temp > 15'}
EOF
ok add warm.yaml
printf 'event_time,city,temp\n2024-01-01T00:00:00Z,a,10\n2024-01-01T01:00:00Z,b,20\n' >b1.csv
printf 'event_time,city,temp\n2024-01-02T00:00:00Z,c,30\n' >b2.csv
ok ingest readings b1.csv
ok pull warm
ok ingest readings b2.csv
ok pull warm
R3=$(block_hash readings 3)
R4=$(block_hash readings 4)

# ---- bad targets and usage: nothing changes ------------------------------------------

unchanged_after 1 "silt: reset 'readings': no block 9 (the head is block 4)" reset readings --to 9
unchanged_after 1 "silt: reset 'readings': block prefix 'f162' names 5 blocks; give more of the hash" reset readings --to f162
unchanged_after 1 "silt: reset 'readings': no block 'f1620abc' in the chain" reset readings --to f1620abc
unchanged_after 1 "silt: reset 'readings': 'head~1' is neither a block hash, a hash prefix nor a sequence number" \
    reset readings --to 'head~1'
unchanged_after 1 "silt: dataset 'ghost' not found" reset ghost --to 1
unchanged_after 2 "silt: reset needs NAME[@BRANCH] --to BLOCK (see 'silt help')" reset readings
unchanged_after 2 "silt: reset: unknown option '--hard' (see 'silt help')" reset readings --to 3 --hard
ok reset readings --to 4
assert_eq "$OUT" "readings: already at block 4 ($R4)" "the head itself: nothing to do"

# ---- a consumed block is not dropped without --force ---------------------------------

unchanged_after 1 "silt: reset 'readings': derivative 'warm' has consumed blocks after block 3 (its block 4); reset it first, or give --force" \
    reset readings --to 3
W3=$(block_hash warm 3)
ok reset warm --to "${W3:0:20}"
assert_eq "$OUT" "warm: head moved back to block 3 ($W3), 1 block dropped" "a derivative by a hash prefix"
ok reset readings --to "$R3"
assert_eq "$OUT" "readings: head moved back to block 3 ($R3), 1 block dropped" "the input by its full hash, once nothing consumed the dropped block"
assert_eq "$(head_of readings)" "$R3" "the head is the block"
expect_sql 'SELECT city, temp FROM readings ORDER BY "offset"' "the input's data is the one up to the block" <<'EOF'
city,temp
a,10
b,20
EOF
# the pipeline continues from there: another batch, the derivative runs from its block 3
printf 'event_time,city,temp\n2024-01-03T00:00:00Z,d,40\n2024-01-03T01:00:00Z,e,5\n' >b3.csv
ok ingest readings b3.csv
ok pull warm
assert_eq "$OUT" "warm: 1 new record (offsets 1..1), watermark 2024-01-03T01:00:00.000Z, read 2 input records (incremental)" \
    "the derivative continues from its remaining run"
expect_sql 'SELECT "offset", city, temp FROM warm' "the derivative's records after the reset" <<'EOF'
offset,city,temp
0,b,20
1,d,40
EOF
ok verify readings warm
assert_eq "$OUT" "readings: ok (5 blocks)
warm: ok (5 blocks)" "both verify (the derivative by replay)"

# ---- --force: the derivative is left pointing at dropped blocks ----------------------

H=$(head_of warm)
ok reset readings --to 3 --force
assert_eq "$OUT" "readings: head moved back to block 3 ($R3), 1 block dropped" "--force"
unchanged_after 1 "silt: pull 'warm': input 'readings': block $(log_get warm "[b['event']['queryInputs'][0]['newBlockHash'] for b in d if b['sequenceNumber']==4][0]"), consumed by the last run, is no longer in its chain (its history was reset); reset this dataset to before that run" \
    pull warm
assert_eq "$(head_of warm)" "$H" "the derivative is unchanged"
ok reset warm --to 3
ok pull warm
assert_eq "$OUT" "warm: up to date" "reset to the run that read the input's head: nothing new"

# ---- a branch: master is not touched ---------------------------------------------------

ok ingest readings b2.csv
R4=$(head_of readings)
ok branch create readings dev
ok reset readings@dev --to 3
assert_eq "$OUT" "readings@dev: head moved back to block 3 ($R3), 1 block dropped" "a branch is reset"
assert_eq "$(head_of readings)" "$R4" "master keeps its head"
ok --json reset readings --to 4
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"],d["ref"],d["fromSequence"],d["toSequence"],d["head"]]')" \
    "[\"readings\",\"readings\",4,4,\"$R4\"]" "--json"

done_tests
