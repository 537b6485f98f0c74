#!/usr/bin/env bash
# test_transfer.sh — push and pull between workspaces, file:// repositories
# and a silt node (docs/remote.md): clone (same DID) and incremental pull
# (only the new objects are fetched, counted), push both directions,
# repositories (repo add/list/delete), the kamu-written fixture pulled from a
# file:// repository and verified, an independent walker
# (tests/odf_walker.py: sha3 + multibase, no silt code) over a silt-pushed
# repository, divergence naming both heads, --force listing what it drops,
# a corrupted remote object (detected, nothing committed; over HTTP too,
# where it is hashed as it is downloaded), a silt node over HTTP with tokens
# (a read token cannot push). S3 repositories: test_s3_transfer.sh.
source "$(dirname "$0")/lib.sh"

use_soft_failures
WALK="python3 $SILT_SOURCE_DIR/tests/odf_walker.py"
REPO=$T_DIR/repo
mkdir -p "$REPO" a b c
cat >src.yaml <<'Y'
kind: AddPushSource
sourceName: default
read:
  kind: Csv
  header: true
  ddlSchema: ["city STRING", "n BIGINT"]
merge:
  kind: Append
Y
printf 'city,n\nA,1\nB,2\n' >d1.csv
printf 'city,n\nC,3\n' >d2.csv
printf 'city,n\nD,4\n' >d3.csv
printf 'city,n\nE,5\n' >d4.csv
printf 'city,n\nF,6\n' >d5.csv

# ---- workspace a: a dataset with two slices, pushed to file:// -------------
cd a
ok init
ok new sales
ok append sales ../src.yaml
ok ingest sales ../d1.csv
ok ingest sales ../d2.csv
H2=$(head_of sales)
ok push sales "file://$REPO/sales"
assert_eq "$OUT" "sales: pushed to file://$REPO/sales: 5 blocks, 2 objects ($(cat .silt/datasets/*/data/* | wc -c) bytes), 0 already present, head $H2" "first push"
ok push sales "file://$REPO/sales"
assert_eq "$OUT" "sales: file://$REPO/sales is up to date" "push again"
run_walk() { WOUT=$($WALK "$1" 2>&1) || fail "walker: $WOUT"; pass; }
run_walk "$REPO/sales"
assert_eq "$WOUT" "5 2 0" "walker counts of the pushed repository"
ID=$(info sales 'd["id"]')
cd ..

# ---- workspace b: clone through a named repository ---------------------------
cd b
ok init
ok repo add r "file://$REPO"
ok repo add node http://127.0.0.1:1/odf --token-env NODE_TOKEN
ok repo list
assert_eq "$OUT" "$(printf '%-20s %-50s %s\n%-20s %-50s %s\n%-20s %-50s %s' NAME URL 'TOKEN ENV' node http://127.0.0.1:1/odf NODE_TOKEN r "file://$REPO" SILT_TOKEN)" "repo list"
assert_eq "$(grep -c 'secret\|token:' .silt/repos.yaml || true)" "0" "no secret in repos.yaml"
fails 1 "silt: repository 'r' already exists" repo add r "file://$REPO"
fails 1 "silt: invalid repository URL 'ftp://x': expected file:///path, http(s)://host[:port]/odf, s3://bucket/prefix or s3+http(s)://host[:port]/bucket/prefix" repo add x ftp://x
ok repo delete node
fails 1 "silt: repository 'node' not found" repo delete node
fails 1 "silt: unknown repository 'nope' (see silt repo list)" pull nope/sales
ok pull r/sales
assert_eq "$OUT" "sales: cloned from r/sales: 5 blocks, 2 objects ($(cat "$REPO"/sales/data/* | wc -c) bytes), head $H2" "clone"
assert_eq "$(info sales 'd["id"]')" "$ID" "same DID"
ok verify sales
expect_sql 'SELECT city, n FROM sales ORDER BY n' <<'R'
city,n
A,1
B,2
C,3
R
ok info sales
assert_contains "$OUT" "Remote:        r/sales" "info shows the remote"
ok pull sales
assert_eq "$OUT" "sales: up to date with r/sales" "pull of an up-to-date clone"
cd ..

# ---- incremental: a pushes one more slice, b fetches only it -----------------
cd a
ok ingest sales ../d3.csv
H3=$(head_of sales)
ok push sales "file://$REPO/sales"
cd ../b
NEW=$(ls "$REPO/sales/data" | while read -r h; do [ -e .silt/datasets/*/data/"$h" ] || echo "$h"; done)
assert_eq "$(printf '%s\n' "$NEW" | wc -l)" "1" "one new object in the repository"
ok pull sales
assert_eq "$OUT" "sales: 1 new blocks from r/sales, 1 objects ($(wc -c <"$REPO/sales/data/$NEW") bytes), 0 already present, head $H3" "incremental pull"
ok verify sales

# ---- the other direction: b pushes, a pulls by URL -------------------------
ok ingest sales ../d4.csv
H4=$(head_of sales)
ok push sales
assert_eq "$OUT" "sales: pushed to r/sales: 1 blocks, 1 objects ($(ls -t "$REPO"/sales/data/* | head -1 | xargs wc -c | cut -d' ' -f1) bytes), 0 already present, head $H4" "push of a clone to its remote"
cd ../a
ok pull "file://$REPO/sales"
assert_contains "$OUT" "sales: 1 new blocks from file://$REPO/sales" "pull by URL into an existing dataset"
assert_eq "$(head_of sales)" "$H4" "a at b's head"
ok verify sales
run_walk "$REPO/sales"
assert_eq "$WOUT" "7 4 0" "walker after both directions"

# ---- divergence ----------------------------------------------------------------
ok ingest sales ../d5.csv
HA=$(head_of sales)
ok push sales "file://$REPO/sales"
cd ../b
ok ingest sales ../d5.csv
HB=$(head_of sales)
[ "$HA" != "$HB" ] || fail "both sides wrote the same block"
before=$(tree_sum "$REPO")
fails 1 "silt: local dataset 'sales' (head $HB) and r/sales (head $HA) have diverged: neither head descends from the other; --force overwrites r/sales, dropping 1 blocks" push sales
assert_eq "$(tree_sum "$REPO")" "$before" "a refused push changes nothing"
fails 1 "silt: r/sales (head $HA) and local dataset 'sales' (head $HB) have diverged: neither head descends from the other; --force overwrites local dataset 'sales', dropping 1 blocks" pull sales
ok push sales --force
assert_eq "$ERR" "silt: warning: --force: r/sales (head $HA) is replaced by local dataset 'sales' (head $HB); 1 blocks are dropped
silt: warning: dropping block $HA (sequence 7) from r/sales" "--force says what is lost"
assert_eq "$(cat "$REPO/sales/refs/head")" "$HB" "forced head"
cd ../a
fails_like 1 "have diverged" pull "file://$REPO/sales"
ok pull "file://$REPO/sales" --force
assert_eq "$(head_of sales)" "$HB" "a forced to the repository's head"
ok verify sales
cd ..

# ---- a corrupted object on the remote: detected, nothing committed -----------
cp -r "$REPO/sales" "$REPO/bad"
OBJ=$(ls "$REPO/bad/data" | head -1)
python3 -c 'import sys;p=sys.argv[1];b=bytearray(open(p,"rb").read());b[len(b)//2]^=1;open(p,"wb").write(b)' "$REPO/bad/data/$OBJ"
cd c
ok init
fails 1 "silt: data/$OBJ from file://$REPO/bad does not match its hash; nothing was committed" pull "file://$REPO/bad" --jobs 1
ok list
assert_eq "$OUT" "" "no dataset after a corrupted pull"

# ---- kamu's repository layout: vessels.gps --------------------------------------
cp -r "$SILT_SOURCE_DIR/../shared/fixtures/interop/kamu-node-qwe/qwe" "$T_DIR/kamu" 2>/dev/null ||
    cp -r /work/shared/fixtures/interop/kamu-node-qwe/qwe "$T_DIR/kamu"
ok pull "file://$T_DIR/kamu/vessels.gps" --as vessels
assert_eq "$OUT" "vessels: cloned from file://$T_DIR/kamu/vessels.gps: 6 blocks, 1 objects (148978 bytes), head f16209a51c8d6c13d4bae78630cd464a88a030ae1013c7bbbc90ed76074ab54ede7be" "kamu clone"
ok verify vessels
assert_eq "$OUT" "vessels: ok (6 blocks)" "kamu dataset verifies"
assert_eq "$(info vessels 'd["id"]')" "did:odf:fed0136770e57c624a204695ea4a27ca8b77e32eb4d37d07454a99a0c8f6463f97da6" "kamu DID kept"
expect_sql 'SELECT count(*) AS n FROM vessels' <<'R'
n
4646
R
fails 1 "silt: pull file://$REPO/gone: dataset 'gone' not found in file://$REPO" pull "file://$REPO/gone"
cd ..

# ---- a silt node over HTTP, with tokens --------------------------------------------
mkdir node
cd node
ok init
RTOK=$("$SILT" token create reader --read 2>/dev/null)
WTOK=$("$SILT" token create writer --write 2>/dev/null)
serve_start
cd ../b
SILT_TOKEN=$RTOK run push sales "$BASE/odf/sales"
assert_eq "$RC" "1" "read token cannot push"
assert_contains "$ERR" "HTTP 403: the token 'reader' lacks the scope api:datasets-write" "403 names the scope"
SILT_TOKEN=none run push sales "$BASE/odf/sales"
assert_eq "$RC" "1" "a bad token cannot push"
assert_contains "$ERR" "HTTP 401" "401 without a valid token"
ok repo add node "$BASE/odf" --token-env NODE_TOKEN
NODE_TOKEN=$WTOK run push sales node/sales
assert_eq "$RC" "0" "write token pushes ($ERR)"
assert_eq "$OUT" "sales: pushed to node/sales: 8 blocks, 5 objects ($(cat .silt/datasets/*/data/* | wc -c) bytes), 0 already present, head $HB" "push to a node"
NODE_TOKEN=$WTOK ok push sales node/sales
assert_eq "$OUT" "sales: node/sales is up to date" "push to a node again"
cd ../node
ok verify sales
assert_eq "$(info sales 'd["id"]')" "$ID" "the node has the same DID"
cd ../c
SILT_TOKEN=$RTOK ok pull "$BASE/odf/sales" --as from-node --jobs 3
assert_eq "$OUT" "from-node: cloned from $BASE/odf/sales: 8 blocks, 5 objects ($(cat ../b/.silt/datasets/*/data/* | wc -c) bytes), head $HB" "clone from a node"
ok verify from-node
cd ../b
ok ingest sales ../d1.csv
HN=$(head_of sales)
NODE_TOKEN=$WTOK ok push sales node/sales
assert_contains "$OUT" "sales: pushed to node/sales: 1 blocks, 1 objects" "incremental push to a node"
cd ../c
SILT_TOKEN=$RTOK ok pull from-node
assert_contains "$OUT" "from-node: 1 new blocks from $BASE/odf/sales, 1 objects" "incremental pull from a node"
assert_eq "$(head_of from-node)" "$HN" "clone at the node's head"
ok verify from-node
# the node refuses a body that does not match its hash, and a CAS on a stale head
TOKEN=$WTOK http PUT "/odf/sales/data/$OBJ" --data-binary 'not the object'
assert_eq "$HTTP_STATUS" "400" "hash mismatch is 400"
assert_eq "$HTTP_BODY" "{\"message\":\"data/$OBJ: the body does not match its hash\"}" "400 body"
TOKEN=$WTOK http PUT "/odf/sales/refs/head" -H "If-Match: $HB" --data-binary "$HA"
assert_eq "$HTTP_STATUS" "412" "stale If-Match is 412"
TOKEN=$RTOK http PUT "/odf/sales/refs/head" -H "If-Match: $HN" --data-binary "$HA"
assert_eq "$HTTP_STATUS" "403" "read token cannot move the ref"
cd ../node
assert_eq "$(head_of sales)" "$HN" "node head unchanged by refused requests"
# an object corrupted on the node: the download is hashed as it arrives
NODE_DS=.silt/datasets/$(info sales 'd["id"]' | sed 's/^did:odf://')
NOBJ=$(ls "$NODE_DS/data" | grep '^f1620' | head -1)
cp "$NODE_DS/data/$NOBJ" ../nobj.orig
python3 -c 'import sys;p=sys.argv[1];b=bytearray(open(p,"rb").read());b[len(b)//2]^=1;open(p,"wb").write(b)' "$NODE_DS/data/$NOBJ"
cd ../c
SILT_TOKEN=$RTOK fails 1 "silt: data/$NOBJ from $BASE/odf/sales does not match its hash; nothing was committed" pull "$BASE/odf/sales" --as bad-copy --jobs 1
assert_eq "$(ls .silt/datasets/*/info/alias | xargs cat | grep -c bad-copy || true)" "0" "no dataset from a corrupted node object"
printf 'x' >>"../node/$NODE_DS/data/$NOBJ"
SILT_TOKEN=$RTOK fails_like 1 "data/$NOBJ from $BASE/odf/sales does not match its hash" pull "$BASE/odf/sales" --as bad-copy --jobs 1
cp ../nobj.orig "../node/$NODE_DS/data/$NOBJ"
cd ..
serve_stop
finish
