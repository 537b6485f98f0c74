#!/usr/bin/env bash
# test_tamper.sh — what a writer or a reader does when the files under
# .silt/ were changed behind silt's back:
#  1. a stale or tampered summary (summary/head.json) is never trusted: every
#     write (`ingest`, `append`, `txn commit`) builds on the real chain, so
#     the block written is valid, with exact offsets (issue 8, item 7);
#  2. a checkpoint read back (merge state, files view) must have the size and
#     hash its block gives: a forged one fails the write cleanly, nothing is
#     written (item 8);
#  3. readers check every block against its name and every slice against
#     the size its block gives: swapped blocks and replaced slices are a
#     one-line error asking for `silt verify`, never a wrong answer (item 9).
. "$(dirname "$0")/lib.sh"

use_soft_failures

mkdir ws && cd ws && ok init
add_ds snap <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT", "name STRING"]
      merge:
        kind: Snapshot
        primaryKey: [id]
EOF
printf 'id,name\n1,a\n' >"$T_DIR/a.csv"
printf 'id,name\n1,a\n2,b\n' >"$T_DIR/b.csv"
printf 'id,name\n1,b\n' >"$T_DIR/c.csv"
ok ingest snap "$T_DIR/a.csv"
assert_eq "$OUT" "snap: 1 new record (offsets 0..0), watermark $(text_time "$(info snap 'd["watermark"]')")" "first ingest"

ds_dir() { echo "$T_DIR/ws/.silt/datasets/$(info "$1" 'd["id"][8:]')"; }
D=$(ds_dir snap)
cp -a "$D" "$T_DIR/snap.pristine"
restore() { rm -rf "$D" && cp -a "$T_DIR/snap.pristine" "$D"; }
# the state as of now: blocks, refs, checkpoints and data (not the summary)
state_sum() { echo "$(tree_sum "$D/blocks")-$(tree_sum "$D/refs")-$(tree_sum "$D/data")-$(tree_sum "$D/checkpoints")"; }
HEAD0=$(cat "$D/refs/head")
PARENT0=$("$SILT" log snap --json | jget 'd[1]["hash"]')
SEED0=$("$SILT" log snap --json | jget 'd[-1]["hash"]')
SLICE0=$("$SILT" log snap --json | jget 'd[0]["event"]["newData"]["physicalHash"]')
SLICE0_SIZE=$("$SILT" log snap --json | jget 'd[0]["event"]["newData"]["size"]')

# tamper KEY JSON: sets state.KEY (and the top-level head for KEY=head) of
# the summary of snap
tamper() {
    python3 - "$D/summary/head.json" "$1" "$2" <<'PY'
import json, sys
p, key, value = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
s = json.load(open(p))
s["state"][key] = value
if key == "head":
    s["head"] = value
open(p, "w").write(json.dumps(s))
PY
}

# =============================================================================
# 1. a tampered summary: every write builds on the real chain
# =============================================================================

# the fields the chain rules use, each pointing somewhere plausible
CASES=(
    "lastOffset|1000"
    "sequenceNumber|50"
    "lastSystemTime|\"2999-01-01T00:00:00Z\""
    "watermark|\"2999-01-01T00:00:00Z\""
    "checkpoint|{\"physicalHash\":\"$SLICE0\",\"size\":$SLICE0_SIZE}"
    "schema|\"$SEED0\""
    "head|\"$PARENT0\""
    "lastDataEvent|\"$PARENT0\""
    "datasetKind|\"Derivative\""
)
for c in "${CASES[@]}"; do
    key=${c%%|*} value=${c#*|}
    restore
    tamper "$key" "$value"
    run ingest snap "$T_DIR/b.csv"
    [ "$RC" -eq 0 ] || fail "ingest after tampering $key: exit $RC: $ERR"
    assert_eq "$(printf '%s\n' "$OUT" | sed 's/, watermark .*//')" "snap: 1 new record (offsets 1..1)" "ingest after tampering $key"
    run verify snap
    assert_eq "$OUT" "snap: ok (5 blocks)" "verify after tampering $key (ingest)"
    assert_eq "$("$SILT" log snap --json | jget '[d[0]["sequenceNumber"], d[0]["event"]["prevOffset"], d[0]["event"]["newData"]["offsetInterval"], d[0]["prevBlockHash"]]')" \
        "[4,0,{\"end\":1,\"start\":1},\"$HEAD0\"]" "exact block after tampering $key"
    assert_eq "$(info snap '[d["records"], d["lastOffset"], d["blocks"]]')" "[2,1,5]" "info after tampering $key"
    case "$(info snap 'd["watermark"]')-$(info snap 'd["lastSystemTime"]')" in
    2999*|*-2999*) fail "tampered time reached the chain ($key)" ;;
    *) pass ;;
    esac
done

# silt append (SetInfo) on a tampered sequence number / system time / head
for c in "sequenceNumber|50" "lastSystemTime|\"2999-01-01T00:00:00Z\"" "head|\"$PARENT0\""; do
    key=${c%%|*} value=${c#*|}
    restore
    tamper "$key" "$value"
    printf 'kind: SetInfo\ndescription: after tampering %s\n' "$key" >"$T_DIR/info.yaml"
    ok append snap "$T_DIR/info.yaml"
    run verify snap
    assert_eq "$OUT" "snap: ok (5 blocks)" "verify after tampering $key (append)"
    assert_eq "$("$SILT" log snap --json | jget '[d[0]["sequenceNumber"], d[0]["prevBlockHash"]]')" "[4,\"$HEAD0\"]" "append after tampering $key"
done

# silt txn commit on a files dataset whose summary lies about offsets,
# watermark and checkpoint
ok new files --files
printf 'one\n' >"$T_DIR/one.txt"
printf 'two\n' >"$T_DIR/two.txt"
ok upload files "$T_DIR/one.txt" --as one.txt --type snapshot
F=$(ds_dir files)
cp -a "$F" "$T_DIR/files.pristine"
FHEAD0=$(cat "$F/refs/head")
for c in "lastOffset|1000" "watermark|\"2999-01-01T00:00:00Z\"" "checkpoint|null" "sequenceNumber|50"; do
    key=${c%%|*} value=${c#*|}
    rm -rf "$F" && cp -a "$T_DIR/files.pristine" "$F"
    ok txn start files --type append
    rid=$OUT
    ok txn put files "$rid" "$T_DIR/two.txt" two.txt
    D=$F tamper "$key" "$value"
    ok txn commit files "$rid"
    run verify files
    assert_eq "$OUT" "files: ok ($("$SILT" --json info files | jget 'd["blocks"]') blocks)" "verify files after tampering $key"
    assert_eq "$("$SILT" log files --json | jget '[d[0]["prevBlockHash"], d[0]["event"]["prevOffset"], d[0]["event"]["newData"]["offsetInterval"]]')" \
        "[\"$FHEAD0\",0,{\"end\":1,\"start\":1}]" "txn commit after tampering $key"
    ok files files
    assert_eq "$(printf '%s\n' "$OUT" | awk '{print $1}' | grep -c txt)" "2" "view after tampering $key"
done

# =============================================================================
# 2. checkpoints read back are checked: size and hash
# =============================================================================

# a forged merge state with an extra record (another size)
restore
CP=$("$SILT" log snap --json | jget 'd[0]["event"]["newCheckpoint"]["physicalHash"]')
ok sql --unsafe-file-access "COPY (SELECT * FROM read_parquet('$D/checkpoints/$CP') UNION ALL SELECT event_time, 7, 'ghost' FROM read_parquet('$D/checkpoints/$CP')) TO '$T_DIR/forged.parquet'"
cp "$T_DIR/forged.parquet" "$D/checkpoints/$CP"
CP_SIZE=$("$SILT" log snap --json | jget 'd[0]["event"]["newCheckpoint"]["size"]')
FORGED_SIZE=$(stat -c %s "$T_DIR/forged.parquet")
before=$(state_sum)
fails 1 "silt: ingest into 'snap': merge state checkpoints/$CP has $FORGED_SIZE bytes, expected $CP_SIZE (newCheckpoint of block $HEAD0); run 'silt verify snap'" \
    ingest snap "$T_DIR/c.csv"
assert_eq "$(state_sum)" "$before" "forged checkpoint: nothing written"
# the same size, other bytes
restore
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=1; open(p,"wb").write(b)' "$D/checkpoints/$CP"
before=$(state_sum)
fails 1 "silt: ingest into 'snap': merge state checkpoints/$CP does not match its hash (newCheckpoint of block $HEAD0); run 'silt verify snap'" \
    ingest snap "$T_DIR/c.csv"
assert_eq "$(state_sum)" "$before" "damaged checkpoint: nothing written"
# a missing one
restore
rm "$D/checkpoints/$CP"
fails 1 "silt: ingest into 'snap': merge state checkpoints/$CP is missing (newCheckpoint of block $HEAD0); run 'silt verify snap'" \
    ingest snap "$T_DIR/c.csv"
restore

# the checkpoint of a files view (written by the SNAPSHOT transaction)
rm -rf "$F" && cp -a "$T_DIR/files.pristine" "$F"
FCP=$("$SILT" log files --json | jget 'd[0]["event"]["newCheckpoint"]["physicalHash"]')
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[len(b)//2]^=1; open(p,"wb").write(b)' "$F/checkpoints/$FCP"
fmsg="checkpoints/$FCP does not match its hash (newCheckpoint of block $FHEAD0); run 'silt verify files'"
fails_like 1 "$fmsg" files files
fsum="$(tree_sum "$F/blocks")-$(tree_sum "$F/refs")"
fails_like 1 "$fmsg" upload files "$T_DIR/two.txt" --as two.txt --type append
assert_eq "$(tree_sum "$F/blocks")-$(tree_sum "$F/refs")" "$fsum" "damaged view checkpoint: nothing committed"
rm -rf "$F" && cp -a "$T_DIR/files.pristine" "$F"

# =============================================================================
# 3. readers check blocks and slice sizes
# =============================================================================

ok ingest snap "$T_DIR/b.csv"
expect_sql 'SELECT count(*) AS n FROM snap' "two records" <<'EOF'
n
2
EOF
H=$(cat "$D/refs/head")
P=$("$SILT" log snap --json | jget 'd[1]["hash"]')
cp -a "$D" "$T_DIR/snap.two"
# two block files swapped
mv "$D/blocks/$H" "$T_DIR/x" && mv "$D/blocks/$P" "$D/blocks/$H" && mv "$T_DIR/x" "$D/blocks/$P"
fails 1 "silt: dataset 'snap': block $H does not match its hash (damaged or replaced); run 'silt verify snap'" \
    sql 'SELECT count(*) FROM snap'
fails_like 1 "block $H does not match its hash (damaged or replaced); run 'silt verify snap'" log snap
fails_like 1 "does not match its hash" ingest snap "$T_DIR/c.csv"
rm -f "$D/summary/head.json"
fails_like 1 "block $H does not match its hash (damaged or replaced); run 'silt verify snap'" sql 'SELECT count(*) FROM snap'
rm -rf "$D" && cp -a "$T_DIR/snap.two" "$D"
# an older block swapped with another (not named by the summary)
mv "$D/blocks/$P" "$T_DIR/x" && cp "$D/blocks/$SEED0" "$D/blocks/$P"
fails 1 "silt: block $P does not match its hash (damaged or replaced); run 'silt verify snap'" \
    sql 'SELECT count(*) FROM snap'
mv "$T_DIR/x" "$D/blocks/$P"
# a slice replaced by a file of another size
SL=$("$SILT" log snap --json | jget 'd[0]["event"]["newData"]["physicalHash"]')
SL_SIZE=$("$SILT" log snap --json | jget 'd[0]["event"]["newData"]["size"]')
cp "$D/data/$SL" "$T_DIR/slice"
{ cat "$T_DIR/slice"; printf 'tail'; } >"$D/data/$SL"
fails 1 "silt: dataset 'snap': block 4: data slice $SL has $((SL_SIZE + 4)) bytes but the block says $SL_SIZE; run 'silt verify snap'" \
    sql 'SELECT count(*) FROM snap'
fails_like 1 "data slice $SL has $((SL_SIZE + 4)) bytes but the block says $SL_SIZE" tail snap
# a slice replaced by another of the same size is read as is: only `silt
# verify` (physical and logical hashes) tells (docs/format/layout.md)
assert_eq "$SLICE0_SIZE" "$SL_SIZE" "the two slices have one size"
cp "$D/data/$SLICE0" "$D/data/$SL"
ok sql 'SELECT count(*) FROM snap'
run verify snap
assert_eq "$RC" "1" "verify catches a same-size slice replacement"
assert_contains "$ERR" "data file $SL (block 4): physical hash mismatch"
rm "$D/data/$SL"
fails_like 1 "data slice $SL is missing; run 'silt verify snap'" sql 'SELECT count(*) FROM snap'
rm -rf "$D" && cp -a "$T_DIR/snap.two" "$D"
ok verify snap

finish
