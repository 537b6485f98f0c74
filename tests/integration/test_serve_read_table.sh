#!/usr/bin/env bash
# GET /api/v2/datasets/{rid}/readTable over silt serve: the same bytes as
# `silt read-table` (Arrow IPC stream or CSV), decoded by npm apache-arrow
# from the HTTP body, chunked (streamed), with columns (repeated keys),
# rowLimit, branchName, transaction views, and every client error as a
# Foundry envelope before any byte.
source "$(dirname "$0")/lib.sh"

DECODE="$SILT_SOURCE_DIR/tests/node/arrow_decode.mjs"
decode() { node_run "$DECODE" "$@"; }

ok init
add_ds pop <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT"]
      merge:
        kind: Append
Y
printf 'city,population\nA,100\nB,200\nC,300\n' >s1.csv
ok ingest pop s1.csv
RID=$(info pop "d['rid']")
ok new f --files
cat >f.yaml <<'Y'
fieldSchemaList:
  - {name: id, type: LONG}
  - {name: name, type: STRING}
format: csv
csvOptions: {header: true}
Y
ok schema set f f.yaml
printf 'id,name\n1,a\n' >p1.csv
printf 'id,name\n2,b\n' >p2.csv
ok upload f p1.csv
T1=$OUT
ok upload f p2.csv
T2=$OUT
ok branch create f dev --at "$T1"
ok new nosch --files
ok upload nosch p1.csv
FRID=$(info f "d['rid']")

serve_start

# ---- ARROW: the bytes of silt read-table, streamed ---------------------------------
ok read-table pop --output cli.arrows
expect_http 200 GET "/api/v2/datasets/$RID/readTable?format=ARROW" -H 'Accept: application/octet-stream'
cp "$T_DIR/.hbody" http.arrows
cmp -s cli.arrows http.arrows || fail "readTable bytes differ from silt read-table"
pass
assert_contains "$HTTP_HEADERS" "Content-Type: application/octet-stream"
assert_contains "$HTTP_HEADERS" "Transfer-Encoding: chunked"
OUTD=$(decode http.arrows)
assert_contains "$OUTD" 'offset: Uint64'
assert_contains "$OUTD" '["2",0,'
assert_contains "$OUTD" '"C","300"]'
assert_contains "$OUTD" 'rows=3 batches=1'
# by name and by did too
expect_http 200 GET "/api/v2/datasets/pop/readTable?format=ARROW"
cmp -s cli.arrows "$T_DIR/.hbody" || fail "by name differs"
pass

# ---- columns (repeated keys, in that order), rowLimit ----------------------------------
expect_http 200 GET "/api/v2/datasets/$RID/readTable?format=ARROW&columns=population&columns=city&rowLimit=2"
cp "$T_DIR/.hbody" cols.arrows
assert_eq "$(decode cols.arrows)" 'population: Int64
city: Utf8
["100","A"]
["200","B"]
rows=2 batches=1' "columns + rowLimit"
expect_http 200 GET "/api/v2/datasets/$RID/readTable?format=CSV&columns=city"
assert_eq "$HTTP_BODY" 'city
A
B
C' "CSV"

# ---- files datasets: branch, transaction views ------------------------------------------
expect_http 200 GET "/api/v2/datasets/$FRID/readTable?format=CSV"
assert_eq "$HTTP_BODY" 'id,name
1,a
2,b' "files: latest view"
expect_http 200 GET "/api/v2/datasets/$FRID/readTable?format=CSV&branchName=dev"
assert_eq "$HTTP_BODY" 'id,name
1,a' "files: branch dev"
expect_http 200 GET "/api/v2/datasets/$FRID/readTable?format=CSV&startTransactionRid=$T2&endTransactionRid=$T2"
assert_eq "$HTTP_BODY" 'id,name
2,b' "files: one transaction"
expect_http 200 GET "/api/v2/datasets/$FRID/readTable?format=CSV&endTransactionRid=$T1"
assert_eq "$HTTP_BODY" 'id,name
1,a' "files: as of T1"

# ---- errors: envelope, status, nothing streamed ---------------------------------------------
ferr() { jget "d['errorCode'],d['errorName']" <<<"$HTTP_BODY"; }
expect_http 400 GET "/api/v2/datasets/$RID/readTable"
assert_eq "$(ferr)" '["INVALID_ARGUMENT","InvalidParameterCombination"]' "no format"
expect_http 400 GET "/api/v2/datasets/$RID/readTable?format=PARQUET"
assert_eq "$(jget "d['message']" <<<"$HTTP_BODY")" "readTable needs format=ARROW or format=CSV (got 'PARQUET')" "bad format"
expect_http 400 GET "/api/v2/datasets/$RID/readTable?format=ARROW&columns=nope"
assert_eq "$(ferr)" '["INVALID_ARGUMENT","ColumnNotFound"]' "unknown column"
assert_eq "$(jget "d['message']" <<<"$HTTP_BODY")" "column 'nope' is not in the schema of pop" "unknown column message"
expect_http 400 GET "/api/v2/datasets/$RID/readTable?format=ARROW&rowLimit=-1"
assert_eq "$(jget "d['message']" <<<"$HTTP_BODY")" "rowLimit '-1' is not a non-negative whole number" "bad rowLimit"
expect_http 404 GET "/api/v2/datasets/nosch/readTable?format=CSV"
assert_eq "$(ferr)" '["NOT_FOUND","SchemaNotFound"]' "no tabular schema"
expect_http 404 GET "/api/v2/datasets/ri.silt.main.dataset.00000000-0000-8000-8000-000000000000/readTable?format=CSV"
assert_eq "$(ferr)" '["NOT_FOUND","DatasetNotFound"]' "unknown dataset"
assert_eq "$(jget "d['parameters']" <<<"$HTTP_BODY")" '{"datasetRid":"ri.silt.main.dataset.00000000-0000-8000-8000-000000000000"}' "params"
expect_http 404 GET "/api/v2/datasets/$FRID/readTable?format=CSV&branchName=nope"
assert_eq "$(ferr)" '["NOT_FOUND","BranchNotFound"]' "unknown branch"
expect_http 404 GET "/api/v2/datasets/$FRID/readTable?format=CSV&endTransactionRid=ri.silt.main.transaction.00000000-0000-4000-8000-000000000000"
assert_eq "$(ferr)" '["NOT_FOUND","TransactionNotFound"]' "unknown transaction"
expect_http 400 GET "/api/v2/datasets/$RID/readTable?format=CSV&endTransactionRid=$T1"
assert_eq "$(ferr)" '["INVALID_ARGUMENT","InvalidParameterCombination"]' "rid on a ledger"
TOKEN=none expect_http 401 GET "/api/v2/datasets/$RID/readTable?format=CSV"

# ---- a large table streams in many batches with bounded server memory ---------------------------
python3 -c "
import sys
w=sys.stdout.write
w('city,population\n')
for i in range(300000): w('c%d,%d\n'%(i,i))" >big.csv
add_ds big <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT"]
      merge:
        kind: Append
Y
ok ingest big big.csv
expect_http 200 GET "/api/v2/datasets/big/readTable?format=ARROW&columns=population"
cp "$T_DIR/.hbody" big.arrows
assert_eq "$(decode big.arrows --sum population)" "rows=300000 batches=$(( (300000 + 2047) / 2048 )) sum=44999850000" "big: rows, batches, sum"
RSS=$(awk '/VmHWM/ {print $2}' "/proc/$SERVE_PID/status")
[ "$RSS" -lt 300000 ] || fail "server peak RSS $RSS kB while streaming"
pass

serve_stop
done_tests
