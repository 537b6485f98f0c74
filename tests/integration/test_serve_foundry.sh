#!/usr/bin/env bash
# test_serve_foundry.sh — the Foundry datasets API v2 of `silt serve`:
# the contract tests with Palantir's official TypeScript client
# (tests/node/osdk_contract.mjs), then curl for what the client cannot send
# (raw slashes, HEAD, wrong methods, unknown routes, traversal, bad JSON,
# oversized bodies, missing / invalid tokens, a read token on every write
# route, a token restricted to another dataset), then the CLI must see what
# the API did (silt files / txn list / branch list / verify).
. "$(dirname "$0")/lib.sh"

ok init
serve_start --max-upload 1000

# ---- the official client ------------------------------------------------------
node_run "$SILT_SOURCE_DIR/tests/node/osdk_contract.mjs" "$BASE" "$ADMIN" >"$T_DIR/node.out" 2>&1 ||
    fail "OSDK contract tests failed: $(cat "$T_DIR/node.out")"
grep -q '^# fail 0$' "$T_DIR/node.out" || fail "OSDK contract tests: $(tail -20 "$T_DIR/node.out")"
grep -q '^# pass 8$' "$T_DIR/node.out" || fail "OSDK contract tests: expected 8 passing: $(tail -12 "$T_DIR/node.out")"
pass

RID=$(info t1 'd["rid"]')
D="/api/v2/datasets/$RID"
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
envelope() { # STATUS ERRORCODE ERRORNAME: the last response is a Foundry error envelope
    [ "$HTTP_STATUS" = "$1" ] || fail "status $HTTP_STATUS, expected $1: $HTTP_BODY"
    assert_eq "$(printf '%s' "$HTTP_BODY" | jq_ 'd["errorCode"], d["errorName"]' | tr '\n' ' ')" "$2 $3 " "envelope"
    printf '%s' "$HTTP_BODY" | jq_ 'd["errorInstanceId"]' | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' ||
        fail "errorInstanceId is not a UUID v4: $HTTP_BODY"
    assert_contains "$HTTP_HEADERS" "Content-Type: application/json"
}

# ---- raw slashes (curl, the R SDK) and the encoded form read the same file -------
expect_http 200 GET "$D/files/dir/sub%20dir/a%2Bb.csv/content"
assert_eq "$HTTP_BODY" $'a,b\n1,x'
expect_http 200 GET "$D/files/dir%2Fsub%20dir%2Fa%2Bb.csv"
assert_eq "$(printf '%s' "$HTTP_BODY" | jq_ 'd["path"], d["sizeBytes"]' | tr '\n' ' ')" "dir/sub dir/a+b.csv 8 "
expect_http 200 GET "$D/files/dir/sub%20dir/a%2Bb.csv"
assert_eq "$(printf '%s' "$HTTP_BODY" | jq_ 'd["path"]')" "dir/sub dir/a+b.csv"
# a raw-slash upload path, auto-commit, then the file is there
expect_http 200 POST "$D/files/raw/x.csv/upload" --data-binary 'r,1' -H 'Content-Type: application/octet-stream'
assert_eq "$(printf '%s' "$HTTP_BODY" | jq_ 'd["path"], d["sizeBytes"]' | tr '\n' ' ')" "raw/x.csv 3 "
expect_http 200 GET "$D/files/raw%2Fx.csv/content"
assert_eq "$HTTP_BODY" "r,1"

# ---- HEAD like GET (no body), content headers --------------------------------------
http HEAD "$D/files/raw%2Fx.csv/content" -I
assert_eq "$HTTP_STATUS" 200
assert_contains "$HTTP_HEADERS" "Content-Length: 3"
assert_contains "$HTTP_HEADERS" "Content-Type: application/octet-stream"
case "$HTTP_BODY" in *r,1*) fail "HEAD sent the body" ;; esac
http HEAD "$D" -I
assert_eq "$HTTP_STATUS" 200
http HEAD "$D/files/nope.csv/content" -I
assert_eq "$HTTP_STATUS" 404

# ---- methods, routes, traversal, bodies ---------------------------------------------
http PATCH "$D/branches"
envelope 405 INVALID_ARGUMENT MethodNotAllowed
assert_contains "$HTTP_HEADERS" "Allow: GET, HEAD, POST"
http DELETE "$D/transactions"
envelope 405 INVALID_ARGUMENT MethodNotAllowed
http GET "/api/v2/datasets/$RID/nothing-here"
envelope 404 NOT_FOUND RouteNotFound
http GET "/api/v2/nothing"
envelope 404 NOT_FOUND RouteNotFound
for p in "$D/files/%2e%2e/content" "$D/files/a/%2E%2E/b" "/api/v2/datasets/%2e%2e/files" "$D/files/../../etc/passwd"; do
    http GET "$p" --path-as-is
    envelope 400 INVALID_ARGUMENT InvalidRequestTarget
done
# an encoded slash keeps ".." inside one segment: a logical path silt refuses
http POST "$D/files/a%2F..%2Fb/upload" --data-binary 'x'
envelope 400 INVALID_ARGUMENT InvalidFilePath
assert_contains "$HTTP_BODY" '"filePath":"a/../b"'
http GET "$D/files/..%2F..%2Fetc%2Fpasswd/content"
envelope 404 NOT_FOUND FileNotFoundOnBranch
http GET "/api/v2/datasets/..%2F..%2Fx"
envelope 404 NOT_FOUND DatasetNotFound
http GET "/api/v2/datasets/t1@master"
envelope 404 NOT_FOUND DatasetNotFound
http POST /api/v2/datasets -H 'Content-Type: application/json' --data-binary '{"name": "t9", '
envelope 400 INVALID_ARGUMENT Conjure:InvalidArgument
http POST /api/v2/datasets -H 'Content-Type: application/json' --data-binary '[]'
envelope 400 INVALID_ARGUMENT Conjure:InvalidArgument
http POST /api/v2/datasets -H 'Content-Type: application/json'
envelope 400 INVALID_ARGUMENT MissingPostBody
http POST "$D/transactions" -H 'Content-Type: application/json' --data-binary '{"transactionType":"append"}'
envelope 400 INVALID_ARGUMENT InvalidTransactionType
head -c 1001 /dev/zero >"$T_DIR/big"
http POST "$D/files/big.bin/upload" --data-binary "@$T_DIR/big" -H 'Content-Type: application/octet-stream'
envelope 413 REQUEST_ENTITY_TOO_LARGE RequestEntityTooLarge
head -c 1000 /dev/zero >"$T_DIR/fits"
expect_http 200 POST "$D/files/fits.bin/upload" --data-binary "@$T_DIR/fits"
assert_contains "$HTTP_BODY" '"sizeBytes":"1000"'
http POST /api/v2/datasets -H 'Content-Type: application/json' --data-binary '{"name":"t5","parentFolderRid":"not a rid"}'
envelope 404 NOT_FOUND FolderNotFound
fails_like 1 "dataset 't5' not found" info t5

# ---- authentication -------------------------------------------------------------------
TOKEN=none http GET "$D"
envelope 401 UNAUTHORIZED MissingCredentials
TOKEN=wrong-secret http GET "$D"
envelope 401 UNAUTHORIZED InvalidCredentials
TOKEN=wrong-secret http POST "$D/transactions" --data-binary '{"transactionType":"APPEND"}'
envelope 401 UNAUTHORIZED InvalidCredentials
TOKEN=none http GET "$D" -H 'Authorization: Basic eDp5'
envelope 401 UNAUTHORIZED MissingCredentials

# ---- scopes: a read token on every write route gets the Foundry name ---------------
ok token create reader
READER=$OUT
ok token create t2writer --write --dataset t2
T2W=$OUT

X=$("$SILT" --json txn list t1 | jget 'd[0]["rid"]')
before=$(ws_snapshot "$T_DIR/.silt/datasets")
TOKEN=$READER expect_http 200 GET "$D"
TOKEN=$READER expect_http 200 GET "$D/files/raw%2Fx.csv/content"
while IFS='|' read -r m p name; do
    TOKEN=$READER http "$m" "$p" -H 'Content-Type: application/json' --data-binary '{"name":"z","transactionType":"UPDATE"}'
    envelope 403 PERMISSION_DENIED "$name"
done <<EOF2
POST|/api/v2/datasets|CreateDatasetPermissionDenied
POST|$D/transactions|CreateTransactionPermissionDenied
POST|$D/files/new.csv/upload|UploadFilePermissionDenied
POST|$D/transactions/$X/commit|CommitTransactionPermissionDenied
POST|$D/transactions/$X/abort|AbortTransactionPermissionDenied
POST|$D/branches|CreateBranchPermissionDenied
DELETE|$D/branches/dev%2Ffeature%20x|DeleteBranchPermissionDenied
DELETE|$D/files/raw%2Fx.csv|DeleteFilePermissionDenied
PUT|$D/putSchema|PutDatasetSchemaPermissionDenied
EOF2
# a token restricted to t2 does not see t1 (404, as an absent dataset)
TOKEN=$T2W http GET "$D"
envelope 404 NOT_FOUND DatasetNotFound
TOKEN=$T2W http POST "$D/transactions" --data-binary '{"transactionType":"UPDATE"}'
envelope 404 NOT_FOUND DatasetNotFound
TOKEN=$T2W http GET "/api/v2/datasets/t1/files"
envelope 404 NOT_FOUND DatasetNotFound
TOKEN=$T2W http POST /api/v2/datasets --data-binary '{"name":"t7","parentFolderRid":"ri.compass.main.folder.x"}'
envelope 403 PERMISSION_DENIED CreateDatasetPermissionDenied
TOKEN=$T2W expect_http 200 POST /api/v2/datasets/getSchemaBatch --data-binary "[{\"datasetRid\":\"$RID\"}]"
assert_eq "$HTTP_BODY" '{"data":{}}'
assert_eq "$(ws_snapshot "$T_DIR/.silt/datasets")" "$before" "datasets after the denied requests"
TOKEN=$T2W expect_http 200 GET "/api/v2/datasets/t2/files"
assert_eq "$(printf '%s' "$HTTP_BODY" | jq_ '[f["path"] for f in d["data"]]')" "['y.csv']"

# ---- the CLI sees what the API did -------------------------------------------------------
expect_http 200 GET "$D/files"
api_files=$(printf '%s' "$HTTP_BODY" | jq_ '"\n".join(f["path"] + "|" + f["sizeBytes"] + "|" + f["transactionRid"] for f in d["data"])')
ok --json files t1
cli_files=$(printf '%s' "$OUT" | jq_ '"\n".join(f["path"] + "|" + str(f["size"]) + "|" + f["transactionRid"] for f in d)')
assert_eq "$cli_files" "$api_files" "silt files t1 vs GET files"
assert_eq "$(printf '%s\n' "$api_files" | cut -d'|' -f1,2 | tr '\n' ' ')" "dir/sub dir/a+b.csv|8 fits.bin|1000 raw/x.csv|3 "
expect_http 200 GET "$D/branches/master/transactions?pageSize=50"
api_txns=$(printf '%s' "$HTTP_BODY" | jq_ '"\n".join(t["rid"] + " " + t["transactionType"] + " " + t["status"] for t in reversed(d["data"]))')
ok --json txn list t1
cli_txns=$(printf '%s' "$OUT" | jq_ '"\n".join(t["rid"] + " " + t["type"] + " " + t["status"] for t in d)')
assert_eq "$cli_txns" "$api_txns" "silt txn list t1 vs GET branches/master/transactions"
ok branch list t1
assert_eq "$(printf '%s\n' "$OUT" | cut -f1 | tr '\n' ' ')" "master dev_2Ffeature_20x "
ok files t1@dev_2Ffeature_20x
assert_eq "$(printf '%s\n' "$OUT" | cut -f1,2)" $'f.txt\t4'
expect_http 200 GET "$D/files?branchName=dev%2Ffeature+x"
assert_eq "$(printf '%s' "$HTTP_BODY" | jq_ '[f["path"] for f in d["data"]]')" "['f.txt']"
ok verify --all
assert_contains "$OUT" "t1: ok"
assert_contains "$OUT" "t1@dev_2Ffeature_20x: ok"
assert_contains "$OUT" "t2: ok"
ok schema t1
assert_eq "$OUT" $'a: Option<Int32>\nformat: parquet'

serve_stop
done_tests
