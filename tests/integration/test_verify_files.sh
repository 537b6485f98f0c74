#!/usr/bin/env bash
# test_verify_files.sh — what `silt verify` and `silt cat` check of files
# datasets and branches (issue 8, items 12–15 and 20):
#  - every linked file object is hashed; bytes replaced by others of the
#    same size fail verify, and `cat` prints nothing of them;
#  - every branch is verified (shared objects once), reported per branch;
#  - gc holds the roots lock: a branch created while gc runs waits, and is
#    refused at a transaction whose files gc purged; a forged purge record
#    entry does not hide a deleted file;
#  - a symlinked object directory is refused, and gc deletes nothing
#    outside the dataset;
#  - transaction records are checked against the chains.
source "$(dirname "$0")/lib.sh"
use_soft_failures

ok init
ds_dir() { printf '%s/.silt/datasets/%s' "$T_DIR" "$(info "$1" 'd["id"]' | sed 's/^did:odf://')"; }

# ---- item 12: file objects are hashed; cat never prints damaged bytes ------
ok new docs --files
printf 'alpha\n' >a.txt
printf 'bravo\n' >b.txt
head -c 3000000 /dev/urandom >big.bin # below the 8 MiB in-memory limit of cat
head -c 9000000 /dev/urandom >huge.bin # above the 8 MiB in-memory limit: hashed, then streamed
ok upload docs a.txt b.txt big.bin huge.bin --type snapshot
T1=$OUT
ok verify docs
assert_eq "$OUT" "docs: ok (3 blocks)"
D=$(ds_dir docs)
HA=$("$SILT" --json files docs | jget '[f["contentHash"] for f in d if f["path"]=="a.txt"][0]')
HH=$("$SILT" --json files docs | jget '[f["contentHash"] for f in d if f["path"]=="huge.bin"][0]')
cmp <("$SILT" cat docs huge.bin) huge.bin && pass || fail "cat of a 9 MB file differs"
# same size, other bytes
chmod u+w "$D/data/$HA"
printf 'ALPHA\n' >"$D/data/$HA"
run verify docs
assert_eq "$RC" 1
assert_eq "$OUT" "docs: INVALID (1 problem)"
HA2=$(printf 'ALPHA\n' | python3 -c 'import hashlib,sys; print("f1620"+hashlib.sha3_256(sys.stdin.buffer.read()).hexdigest())')
assert_eq "$ERR" "silt: docs: file object $HA ('a.txt', transaction $T1): content hash mismatch: the bytes hash to $HA2"
fails 1 "silt: file 'a.txt': object $HA is damaged: its bytes hash to $HA2 (run 'silt verify docs')" cat docs a.txt
assert_eq "$OUT" "" "cat printed bytes of a damaged object"
# a damaged large object: nothing printed either
python3 - "$D/data/$HH" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(8_500_000); b = f.read(1); f.seek(8_500_000); f.write(bytes([b[0] ^ 1]))
EOF
run cat docs huge.bin
assert_eq "$RC" 1
assert_eq "$(printf '%s' "$OUT" | wc -c | tr -d ' ')" 0 "cat printed bytes of a damaged large object"
assert_contains "$ERR" "silt: file 'huge.bin': object $HH is damaged: its bytes hash to f1620"
printf 'alpha\n' >"$D/data/$HA"
cp huge.bin "$D/data/$HH"
ok verify docs

# ---- item 13: every branch, reported per branch --------------------------------
ok branch create docs review
printf 'charlie\n' >c.txt
ok upload docs@review c.txt
HC=$("$SILT" --json files docs@review | jget '[f["contentHash"] for f in d if f["path"]=="c.txt"][0]')
ok verify docs
assert_eq "$OUT" "docs: ok (3 blocks)
docs@review: ok (4 blocks)"
ok verify docs@review
assert_eq "$OUT" "docs@review: ok (4 blocks)"
# an object only the branch has: master stays valid, the branch does not
mv "$D/data/$HC" c.saved
run verify docs
assert_eq "$RC" 1
assert_eq "$OUT" "docs: ok (3 blocks)
docs@review: INVALID (1 problem)"
assert_eq "$ERR" "silt: docs@review: file 'c.txt' of the latest view: object $HC is missing (not purged by retention)"
run verify --all
assert_eq "$RC" 1
assert_eq "$OUT" "docs: ok (3 blocks)
docs@review: INVALID (1 problem)"
run --json verify docs
assert_eq "$(printf '%s' "$OUT" | jget '[(e["branch"], e["valid"], e["blocks"], len(e["problems"])) for e in d]')" '[["master",true,3,0],["review",false,4,1]]'
mv c.saved "$D/data/$HC"
# a block only the branch has: deleted
BH=$(head_of docs@review)
mv "$D/blocks/$BH" block.saved
run verify docs
assert_eq "$RC" 1
assert_eq "$(printf '%s\n' "$OUT" | sed -n 1p)" "docs: ok (3 blocks)"
assert_contains "$(printf '%s\n' "$OUT" | sed -n 2p)" "docs@review: INVALID"
assert_contains "$ERR" "silt: docs@review: "
mv block.saved "$D/blocks/$BH"
# a shared object: reported once, counted for both branches
mv "$D/data/$HA" a.saved
run verify docs
assert_eq "$OUT" "docs: INVALID (1 problem)
docs@review: INVALID (1 problem)"
assert_eq "$(printf '%s\n' "$ERR" | grep -c "object $HA is missing")" 2 "each latest view names its missing file"
mv a.saved "$D/data/$HA"
ok verify docs

# ---- item 14: gc holds the roots lock; branch create waits and checks the view -
ok new ex --files
printf a >A; printf b >B
ok upload ex A --type snapshot; E1=$OUT
ok upload ex B --type snapshot; E2=$OUT
ok retention set ex --keep-days 0
E=$(ds_dir ex)
# hold the retention lock so that gc waits with the roots lock already taken
flock "$E/info/retention.lock" sleep 3 &
HOLD=$!
sleep 0.3
"$SILT" gc ex >gc.out 2>gc.err &
GC=$!
for _ in $(seq 50); do flock -n -s "$E/info/roots.lock" true || break; sleep 0.05; done
flock -n -s "$E/info/roots.lock" true && fail "gc does not hold the roots lock" || pass
run branch create ex old --at "$E1" # waits for gc, then sees the purge
wait "$GC" && pass || fail "gc failed: $(cat gc.err)"
wait "$HOLD" || true
assert_eq "$RC" 1
assert_eq "$ERR" "silt: cannot branch at transaction $E1 of ex: its view has files purged by retention ('A', transaction $E1); branch at a later transaction"
assert_contains "$(cat gc.out)" "ex: purged 1 transaction, deleted 1 object (1 bytes)"
fails 1 "silt: dataset 'ex' has no branch 'old'" files ex@old
ok verify ex
# a put waits for a running gc: nothing is staged while gc decides what to delete
ok txn start ex --type update; EP=$OUT
printf 'fresh' >fresh.txt
HF=$(python3 -c 'import hashlib; print("f1620"+hashlib.sha3_256(b"fresh").hexdigest())')
flock "$E/txn/lock-master" sleep 3 & # gc waits on the branch lock, holding the others
HOLD=$!
sleep 0.3
"$SILT" gc ex >gc.out 2>gc.err &
GC=$!
for _ in $(seq 50); do flock -n -s "$E/txn/objects.lock" true || break; sleep 0.05; done
"$SILT" txn put ex "$EP" fresh.txt >put.out 2>put.err &
PUT=$!
sleep 1
[ -e "$E/data/$HF" ] && fail "a put stored its object while gc was running" || pass
wait "$GC" && pass || fail "gc failed: $(cat gc.err)"
wait "$PUT" && pass || fail "put failed: $(cat put.err)"
wait "$HOLD" || true
[ -e "$E/data/$HF" ] && pass || fail "the put did not store its object after gc"
ok txn commit ex "$EP"
ok cat ex fresh.txt
assert_eq "$OUT" "fresh"
# a forged purge entry does not hide a deleted file of the latest view
HB=$("$SILT" --json files ex | jget 'd[0]["contentHash"]')
python3 - "$E/info/purged.json" "$HB" "$E2" <<'EOF'
import json, sys
p, h, rid = sys.argv[1:]
d = json.load(open(p))
d["objects"][h] = rid
d["transactions"][rid] = {"purged": "2030-01-01T00:00:00Z"}
json.dump(d, open(p, "w"))
EOF
mv "$E/data/$HB" B.saved
run verify ex
assert_eq "$RC" 1
assert_eq "$ERR" "silt: ex: file 'B' of the latest view: object $HB is missing; the purge record says transaction $E2 purged it, but retention never purges a file of a latest view"
fails 1 "silt: file 'B': object $HB is missing (run 'silt verify ex')" cat ex B
mv B.saved "$E/data/$HB"
# a forged entry for a file of an older view that the policy retains
ok new ex2 --files
ok upload ex2 A --type snapshot; F1=$OUT
ok upload ex2 B --type snapshot; F2=$OUT
ok retention set ex2 --keep-days 30
X=$(ds_dir ex2)
HA=$("$SILT" --json files ex2 --at "$F1" | jget 'd[0]["contentHash"]')
sleep 1 # the purge comes after the commits
NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)
forge_purge() { # forge_purge RID KEEP_DAYS: a purge record entry for object $HA
    python3 -c 'import json,sys
p,h,rid,now,keep=sys.argv[1:]
json.dump({"objects":{h:rid},"transactions":{rid:{"purged":now,"policies":{"policies":[{"branch":None,"keepDays":int(keep)}]}}}},open(p,"w"))' \
        "$X/info/purged.json" "$HA" "$1" "$NOW" "$2"
}
forge_purge "$F1" 30
rm "$X/data/$HA"
run verify ex2
assert_eq "$RC" 1
assert_eq "$ERR" "silt: ex2: purge record: transaction $F1 is recorded as purged at $NOW, but the retention policies recorded with the purge retain its files then (object $HA is missing)"
# the same record, as retention with keep 0 days would have made it, is accepted
forge_purge "$F1" 0
ok verify ex2
# ... and one naming a transaction that did not write the file
python3 - "$X/info/purged.json" "$HA" "$F2" <<'EOF'
import json, sys
p, h, rid = sys.argv[1:]
json.dump({"objects": {h: rid}, "transactions": {rid: {"purged": "2099-01-01T00:00:00Z"}}}, open(p, "w"))
EOF
run verify ex2
assert_eq "$ERR" "silt: ex2: file object $HA ('A'): missing; the purge record says transaction $F2 purged it, but that transaction did not write it"
forge_purge "$F1" 0
ok verify ex2

# ---- item 15: symlinked object directories ----------------------------------------
ok new led --files
ok upload led a.txt
L=$(ds_dir led)
mkdir outside
H0=f1620aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
printf 'precious' >"outside/$H0"
cp "$L"/data/* outside/
mv "$L/data" data.real
ln -s "$T_DIR/outside" "$L/data"
fails 1 "silt: $L/data: is a symbolic link; silt does not follow symbolic links inside a dataset (replace it with a real directory)" files led
SILT_GC_GRACE_SECONDS=0 run gc led
assert_eq "$RC" 1
assert_eq "$ERR" "silt: gc led: $L/data: is a symbolic link; silt does not follow symbolic links inside a dataset (replace it with a real directory)"
assert_eq "$(cat "outside/$H0")" "precious" "gc deleted a file outside the workspace"
SILT_GC_GRACE_SECONDS=0 run gc
assert_eq "$(cat "outside/$H0")" "precious" "gc of the workspace deleted a file outside it"
rm "$L/data"
mv data.real "$L/data"
ok verify led

# ---- item 20: transaction records are checked against the chains ------------------
R=$(ls "$D/txn" | grep -E '^ri\.silt\.main\.transaction\.[0-9a-f-]+$' | sed -n 1p)
cp "$D/txn/$R" rec.saved
python3 - "$D/txn/$R" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["status"] = "ABORTED"; json.dump(d, open(sys.argv[1], "w"))
EOF
run verify docs
assert_eq "$RC" 1
assert_contains "$ERR" "transaction $R is ABORTED, but it was committed in block "
cp rec.saved "$D/txn/$R"
python3 - "$D/txn/$R" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); d["type"] = "APPEND" if d["type"] != "APPEND" else "UPDATE"; json.dump(d, open(sys.argv[1], "w"))
EOF
run verify docs
assert_contains "$ERR" "transaction $R: its record says "
assert_contains "$ERR" ", but it was committed as "
rm "$D/txn/$R"
run verify docs
assert_eq "$RC" 1
assert_contains "$ERR" "transaction $R (committed in block "
assert_contains "$ERR" ") has no record in txn/"
cp rec.saved "$D/txn/$R"
printf 'not json' >"$D/txn/$R"
run verify docs
assert_eq "$ERR" "silt: docs: txn/$R: invalid JSON: '[' or '{' expected near 'not'"
cp rec.saved "$D/txn/$R"
ok verify --all
finish
