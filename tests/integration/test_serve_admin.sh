#!/usr/bin/env bash
# test_serve_admin.sh — silt's own admin routes of `silt serve` under
# /admin/v1/: delete a dataset, retention policies / marks / unmark, gc.
# Every route with its exact status and JSON body, the effect checked
# through the CLI (list, files, retention show/marks, the objects on disk),
# server and CLI side by side on the same workspace, bad input refused with
# an errorName and every dataset unchanged, a dataset-restricted admin
# token (404 for what it may not see; gc without names covers only its
# datasets and never the workspace leftovers). The scopes of these routes
# are in test_serve_auth.sh.
source "$(dirname "$0")/lib.sh"

ok init
ok new ex --files
printf a >A; printf b >B; printf c >C; printf "a'" >A2; printf d >D
ok upload ex A B --type snapshot; T1=$OUT
ok upload ex C --type append; T2=$OUT
ok upload ex A2 --as A --type update; T3=$OUT
ok txn start ex --type delete; T4=$OUT
ok txn rm ex "$T4" B
ok txn commit ex "$T4"
ok new other --files
ok upload other A
ok new extra --files
EX_RID=$(info ex "d['rid']")
EX_DID=$(info ex "d['id']")
OTHER_RID=$(info other "d['rid']")
ok token create boss --admin
BOSS=$OUT
ok token create exonly --admin --dataset 'ex*'
EXONLY=$OUT

serve_start

J=(-H 'Content-Type: application/json')
A=/admin/v1/datasets
# the last response as compact JSON with sorted keys, or one field of it
body() { jget "d" <<<"$HTTP_BODY"; }
ferr() { jget "[d['errorCode'],d['errorName'],d['parameters'],d['message']]" <<<"$HTTP_BODY"; }
# cli_json ARGS...: silt --json ARGS, parsed and printed as body() prints
cli_json() { ok --json "$@"; jget "d" <<<"$OUT"; }
DS_SNAP() { ws_snapshot "$T_DIR/.silt/datasets"; }
# refused STATUS 'ferr' METHOD PATH [curl args]: an error with that envelope, nothing changed
refused() {
    local status=$1 want=$2 before
    shift 2
    before=$(DS_SNAP)
    expect_http "$status" "$@"
    assert_eq "$(ferr)" "$want" "$1 $2"
    assert_eq "$(DS_SNAP)" "$before" "$1 $2 changed nothing"
}

# ---- retention policies -----------------------------------------------------------------
expect_http 200 GET "$A/ex/retention"
assert_eq "$(body)" '{"name":"ex","policies":[]}' "no policy"
assert_eq "$(body)" "$(cli_json retention show ex)" "server = CLI (no policy)"
expect_http 200 PUT "$A/ex/retention" "${J[@]}" -d '{"keepDays": 0}'
assert_eq "$(body)" '{"branch":null,"keepDays":0,"name":"ex"}' "PUT default"
assert_eq "$(body)" "$(cli_json retention set ex --keep-days 0)" "server = CLI (set)"
# an empty branch (no transaction of its own): its 3 days retain no view of T1..T3
expect_http 200 POST "/api/v2/datasets/$EX_RID/branches" "${J[@]}" -d '{"name": "dev"}'
expect_http 200 PUT "$A/$EX_RID/retention" "${J[@]}" -d '{"keepDays": 3, "branch": "dev"}'
assert_eq "$(body)" '{"branch":"dev","keepDays":3,"name":"ex"}' "PUT branch, by RID"
expect_http 200 GET "$A/$EX_DID/retention"
assert_eq "$(body)" '{"name":"ex","policies":[{"branch":null,"keepDays":0},{"branch":"dev","keepDays":3}]}' \
    "GET by did"
assert_eq "$(body)" "$(cli_json retention show ex)" "server = CLI (two policies)"
ok retention show ex
assert_eq "$OUT" "default: keep 0 days
branch dev: keep 3 days" "the CLI sees the API's policies"
# HEAD answers like GET, without a body
LEN=$(printf '%s' '{"name":"ex","policies":[{"branch":null,"keepDays":0},{"branch":"dev","keepDays":3}]}' | wc -c)
HSTAT=$(curl -s -o "$T_DIR/head.out" -w '%{http_code}' -I -H "Authorization: Bearer $ADMIN" "$BASE$A/ex/retention")
assert_eq "$HSTAT" 200 "HEAD status"
grep -qi "^Content-Length: $LEN" "$T_DIR/head.out" || fail "HEAD Content-Length: $(cat "$T_DIR/head.out")"
pass

# bad bodies: 400/404 with a name, nothing changed
P="$A/ex/retention"
BADV='"INVALID_ARGUMENT","InvalidParameterValue"'
refused 400 '["INVALID_ARGUMENT","MissingPostBody",{},"this request needs a JSON body"]' PUT "$P" "${J[@]}"
refused 400 '["INVALID_ARGUMENT","Conjure:InvalidArgument",{},"invalid JSON body: '"'"'['"'"' or '"'"'{'"'"' expected near '"'"'keepDays'"'"' (line 1, column 8)"]' \
    PUT "$P" "${J[@]}" -d 'keepDays'
refused 400 '["INVALID_ARGUMENT","Conjure:InvalidArgument",{},"the JSON body must be an object"]' PUT "$P" "${J[@]}" -d '[1]'
refused 400 '["INVALID_ARGUMENT","UnknownParameter",{"parameter":"keep_days"},"unknown key '"'"'keep_days'"'"' in the JSON body"]' \
    PUT "$P" "${J[@]}" -d '{"keep_days": 1}'
refused 400 '["INVALID_ARGUMENT","MissingParameter",{"parameter":"keepDays"},"the JSON body needs keepDays (a number of days)"]' \
    PUT "$P" "${J[@]}" -d '{"branch": "dev"}'
for bad in '"3"' -1 1000001 1.5 true null 99999999999999999; do
    refused 400 "[$BADV,{\"parameter\":\"keepDays\"},\"keepDays must be an integer from 0 to 1000000\"]" \
        PUT "$P" "${J[@]}" -d "{\"keepDays\": $bad}"
done
refused 400 "[$BADV,{\"parameter\":\"branch\"},\"branch must be a string (a branch name) or null\"]" \
    PUT "$P" "${J[@]}" -d '{"keepDays": 1, "branch": 7}'
refused 404 "[\"NOT_FOUND\",\"BranchNotFound\",{\"branchName\":\"nosuch\",\"datasetRid\":\"$EX_RID\"},\"dataset $EX_RID has no branch 'nosuch'\"]" \
    PUT "$P" "${J[@]}" -d '{"keepDays": 1, "branch": "nosuch"}'
refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"nosuch"},"dataset nosuch not found"]' \
    PUT "$A/nosuch/retention" "${J[@]}" -d '{"keepDays": 1}'
refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"ex@dev"},"dataset ex@dev not found"]' \
    GET "$A/ex@dev/retention"
refused 405 '["INVALID_ARGUMENT","MethodNotAllowed",{},"POST is not allowed on /admin/v1/datasets/ex/retention (allowed: GET, HEAD, PUT)"]' \
    POST "$P"
refused 404 '["NOT_FOUND","RouteNotFound",{},"no route for GET /admin/v1/nosuch"]' GET /admin/v1/nosuch

# ---- marks: the spec's worked example (test_retention.sh) through the API -----------------
expect_http 200 GET "$A/ex/retention/marks"
assert_eq "$(body)" '{"marks":[],"name":"ex"}' "no marks"
SNAP=$(DS_SNAP)
expect_http 200 POST "$A/ex/retention/mark?dryRun=true"
assert_eq "$(jget "[d['name']]+[[m['rid'],m['branch'],m['files'],m['bytes']] for m in d['marks']]" <<<"$HTTP_BODY")" \
    "[\"ex\",[\"$T1\",\"master\",2,2]]" "dry-run mark"
assert_eq "$(DS_SNAP)" "$SNAP" "a dry run stores nothing"
expect_http 200 GET "$A/ex/retention/marks"
assert_eq "$(body)" '{"marks":[],"name":"ex"}' "still no marks"
refused 400 "[$BADV,{\"parameter\":\"dryRun\"},\"dryRun must be true or false, got 'yes'\"]" \
    POST "$A/ex/retention/mark?dryRun=yes"
expect_http 200 POST "$A/ex/retention/mark"
MARK=$HTTP_BODY
assert_eq "$(jget "[[m['rid'],m['branch'],m['files'],m['bytes'],sorted(m)] for m in d['marks']]" <<<"$MARK")" \
    "[[\"$T1\",\"master\",2,2,[\"branch\",\"bytes\",\"committed\",\"files\",\"marked\",\"rid\"]]]" "mark"
expect_http 200 GET "$A/ex/retention/marks"
assert_eq "$(body)" "$(jget d <<<"$MARK")" "GET marks = the marks POST mark stored"
assert_eq "$(body)" "$(cli_json retention marks ex)" "server = CLI (marks)"

# a fifth SNAPSHOT: T2 and T3 fall out too; unmark T2 through the API
ok upload ex D --type snapshot
expect_http 200 POST "$A/ex/retention/mark"
assert_eq "$(jget "[m['rid'] for m in d['marks']]" <<<"$HTTP_BODY")" "[\"$T1\",\"$T2\",\"$T3\"]" "three marks"
expect_http 200 DELETE "$A/ex/retention/marks/$T2"
assert_eq "$(body)" '{"name":"ex","unmarked":1}' "unmark one"
refused 404 "[\"NOT_FOUND\",\"TransactionNotMarked\",{\"datasetRid\":\"$EX_RID\",\"transactionRid\":\"$T2\"},\"transaction $T2 is not marked in ex\"]" \
    DELETE "$A/ex/retention/marks/$T2"
NOTXN=ri.silt.main.transaction.00000000-0000-4000-8000-000000000000
refused 404 "[\"NOT_FOUND\",\"TransactionNotFound\",{\"datasetRid\":\"$EX_RID\",\"transactionRid\":\"$NOTXN\"},\"transaction $NOTXN not found in dataset $EX_RID\"]" \
    DELETE "$A/ex/retention/marks/$NOTXN"
refused 404 "[\"NOT_FOUND\",\"TransactionNotFound\",{\"datasetRid\":\"$EX_RID\",\"transactionRid\":\"garbage\"},\"transaction garbage not found in dataset $EX_RID\"]" \
    DELETE "$A/ex/retention/marks/garbage"
ok retention marks ex
assert_eq "$(printf '%s\n' "$OUT" | awk '{print $1}' | tr '\n' ' ')" "$T1 $T3 " "the CLI sees the unmark"
# T2 is held: marking again does not mark it
expect_http 200 POST "$A/ex/retention/mark"
assert_eq "$(jget "[m['rid'] for m in d['marks']]" <<<"$HTTP_BODY")" "[\"$T1\",\"$T3\"]" "held stays unmarked"

# ---- gc ---------------------------------------------------------------------------------------
EXDIR=$(dirname "$(dirname "$(grep -lx ex .silt/datasets/*/info/alias)")")
objects() { find "$EXDIR/data" -type f ! -name '.tmp-*' | wc -l | tr -d ' '; }
N0=$(objects)
SNAP=$(DS_SNAP)
expect_http 200 POST /admin/v1/gc "${J[@]}" -d '{"datasets": ["ex"], "dryRun": true}'
assert_eq "$(jget "[[x['name'],x['dryRun'],x['transactionsPurged'],x['objectsDeleted'],x['bytesDeleted'],x['leftoversDeleted'],len(x['actions'])] for x in d['data']]" <<<"$HTTP_BODY")" \
    '[["ex",true,2,3,4,0,3]]' "gc dry run"
assert_eq "$(jget "d['data']" <<<"$HTTP_BODY")" "$(cli_json gc ex --dry-run)" "server = CLI (gc --dry-run)"
assert_eq "$(DS_SNAP)" "$SNAP" "a gc dry run changes nothing"
assert_eq "$(objects)" "$N0" "no object deleted"
expect_http 200 POST /admin/v1/gc "${J[@]}" -d "{\"datasets\": [\"$EX_RID\", \"ex\"]}"
GC=$HTTP_BODY
assert_eq "$(jget "[[x['name'],x['dryRun'],x['transactionsPurged'],x['objectsDeleted'],x['bytesDeleted'],x['leftoversDeleted']] for x in d['data']]" <<<"$GC")" \
    '[["ex",false,2,3,4,0]]' "gc (a dataset named twice is swept once)"
assert_contains "$(jget "d['data'][0]['actions']" <<<"$GC")" "(file 'A' of transaction $T3, purged by retention)"
assert_eq "$(objects)" "$((N0 - 3))" "three objects gone from disk"
ok retention marks ex
assert_eq "$OUT" "no marked transactions" "marks swept"
ok files ex --at "$T3" --json
assert_eq "$(jget "' '.join(f['path']+'='+f['status'] for f in d)" <<<"$OUT")" "A=purged B=purged C=ok" "files after gc"
ok cat ex D
assert_eq "$OUT" "d"
ok verify ex
# the CLI's gc now finds nothing more, and says so in the same shape
expect_http 200 POST /admin/v1/gc "${J[@]}" -d '{"datasets": ["ex"]}'
assert_eq "$(jget "d['data']" <<<"$HTTP_BODY")" "$(cli_json gc ex)" "server = CLI (gc, nothing left)"

# bad gc bodies and unknown names: nothing swept
ok retention set other --keep-days 0
ok upload other B --type snapshot
refused 400 "[$BADV,{\"parameter\":\"datasets\"},\"datasets must be an array of dataset names, ids or RIDs\"]" \
    POST /admin/v1/gc "${J[@]}" -d '{"datasets": "other"}'
refused 400 "[$BADV,{\"parameter\":\"datasets\"},\"datasets must be an array of dataset names, ids or RIDs\"]" \
    POST /admin/v1/gc "${J[@]}" -d '{"datasets": ["other", 1]}'
refused 400 "[$BADV,{\"parameter\":\"dryRun\"},\"dryRun must be true or false\"]" \
    POST /admin/v1/gc "${J[@]}" -d '{"dryRun": "yes"}'
refused 400 '["INVALID_ARGUMENT","UnknownParameter",{"parameter":"dry_run"},"unknown key '"'"'dry_run'"'"' in the JSON body"]' \
    POST /admin/v1/gc "${J[@]}" -d '{"dry_run": true}'
refused 400 '["INVALID_ARGUMENT","Conjure:InvalidArgument",{},"the JSON body must be an object"]' \
    POST /admin/v1/gc "${J[@]}" -d '["other"]'
refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"nosuch"},"dataset nosuch not found"]' \
    POST /admin/v1/gc "${J[@]}" -d '{"datasets": ["other", "nosuch"]}'

# a workspace leftover (an old scratch directory) and the restricted admin token
mkdir -p .silt/tmp/0123456789abcdef
touch -d '2 days ago' .silt/tmp/0123456789abcdef
TOKEN=$EXONLY refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"other"},"dataset other not found"]' \
    POST /admin/v1/gc "${J[@]}" -d '{"datasets": ["other"]}'
TOKEN=$EXONLY expect_http 200 POST /admin/v1/gc
assert_eq "$(jget "[x['name'] for x in d['data']]" <<<"$HTTP_BODY")" '["ex","extra"]' \
    "a restricted token's gc: its datasets only, no workspace entry"
[ -d .silt/tmp/0123456789abcdef ] || fail "a restricted token's gc removed a workspace leftover"
pass
ok retention marks other
assert_eq "$OUT" "no marked transactions" "other not touched by the restricted gc"
# the unrestricted admin: every dataset, then the workspace (name null)
expect_http 200 POST /admin/v1/gc "${J[@]}" -d '{"dryRun": true}'
assert_eq "$(jget "[[x['name'],x['leftoversDeleted'],x['actions']] for x in d['data'] if x['name'] is None]" <<<"$HTTP_BODY")" \
    '[[null,1,["would delete tmp/0123456789abcdef (leftover of a crashed command)"]]]' "workspace entry (dry run)"
assert_eq "$(jget "[[x['name'],x['transactionsPurged'],x['objectsDeleted']] for x in d['data'] if x['name']]" <<<"$HTTP_BODY")" \
    '[["ex",0,0],["extra",0,0],["other",1,1]]' "every dataset (dry run)"
[ -d .silt/tmp/0123456789abcdef ] || fail "a dry run removed a leftover"
pass
expect_http 200 POST /admin/v1/gc
assert_eq "$(jget "[[x['name'],x['dryRun'],x.get('transactionsPurged'),x['leftoversDeleted']] for x in d['data']]" <<<"$HTTP_BODY")" \
    '[["ex",false,0,0],["extra",false,0,0],["other",false,1,0],[null,false,null,1]]' "gc of everything (no body)"
[ -d .silt/tmp/0123456789abcdef ] && fail "the workspace leftover is still there"
pass

# ---- unmark --all --------------------------------------------------------------------------
ok upload ex A --type snapshot
expect_http 200 POST "$A/ex/retention/mark"
assert_eq "$(jget "len(d['marks'])" <<<"$HTTP_BODY")" 1 "one mark"
expect_http 200 DELETE "$A/ex/retention/marks"
assert_eq "$(body)" '{"name":"ex","unmarked":1}' "unmark all"
expect_http 200 DELETE "$A/ex/retention/marks"
assert_eq "$(body)" '{"name":"ex","unmarked":0}' "unmark all, none left"
assert_eq "$(body)" "$(cli_json retention unmark ex --all)" "server = CLI (unmark --all)"

# ---- DELETE a dataset ---------------------------------------------------------------------------
# an open transaction (a client's, or a running upload's) is a 409, the dataset stays whole
ok txn start other --type append; OPEN=$OUT
refused 409 "[\"CONFLICT\",\"DatasetHasOpenTransaction\",{\"branchName\":\"master\",\"datasetRid\":\"$OTHER_RID\",\"transactionRid\":\"$OPEN\"},\"dataset other has an open transaction $OPEN on branch 'master': commit or abort it first\"]" \
    DELETE "$A/other"
ok txn abort other "$OPEN"
# the restricted token: another dataset is not found, and stays
TOKEN=$EXONLY refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"other"},"dataset other not found"]' DELETE "$A/other"
TOKEN=$EXONLY refused 404 "[\"NOT_FOUND\",\"DatasetNotFound\",{\"datasetRid\":\"$OTHER_RID\"},\"dataset $OTHER_RID not found\"]" \
    DELETE "$A/$OTHER_RID"
refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"other@master"},"dataset other@master not found"]' \
    DELETE "$A/other@master"
refused 404 '["NOT_FOUND","DatasetNotFound",{"datasetRid":"nosuch"},"dataset nosuch not found"]' DELETE "$A/nosuch"
expect_http 204 DELETE "$A/$OTHER_RID"
assert_eq "$HTTP_BODY" "" "204 has no body"
names() { ok --json list; jget "[x['name'] for x in d]" <<<"$OUT"; }
assert_eq "$(names)" '["ex","extra"]' "other is gone (by RID)"
[ -z "$(grep -lx other .silt/datasets/*/info/alias 2>/dev/null)" ] || fail "other's directory is still there"
pass
refused 404 "[\"NOT_FOUND\",\"DatasetNotFound\",{\"datasetRid\":\"$OTHER_RID\"},\"dataset $OTHER_RID not found\"]" \
    DELETE "$A/$OTHER_RID"
TOKEN=$EXONLY expect_http 204 DELETE "$A/extra"
# a root (ODF) dataset is deleted the same way
add_ds rooted <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["a BIGINT"]
      merge:
        kind: Append
Y
printf 'a\n1\n' >one.csv
ok ingest rooted one.csv
assert_eq "$(names)" '["ex","rooted"]' "a root dataset next to ex"
expect_http 204 DELETE "$A/rooted"
expect_http 204 DELETE "$A/$EX_DID"
assert_eq "$(names)" '[]' "every dataset deleted (by name, did)"
# nothing of them is left in the workspace's trash
assert_eq "$(ls -A .silt/trash 2>/dev/null)" "" "trash is empty"
# a gc of an empty workspace: only the workspace entry
expect_http 200 POST /admin/v1/gc "${J[@]}" -d '{"datasets": [], "dryRun": true}'
assert_eq "$(body)" '{"data":[{"actions":[],"dryRun":true,"leftoversDeleted":0,"name":null}]}' "gc of no dataset"
# a malformed request target under /admin/ is answered in the Foundry envelope too
expect_http 400 DELETE '/admin/v1/datasets/%2e%2e' "${J[@]}" --path-as-is
assert_eq "$(jget "[d['errorCode'],d['errorName']]" <<<"$HTTP_BODY")" '["INVALID_ARGUMENT","InvalidRequestTarget"]' \
    "malformed /admin/ target"
serve_stop
done_tests
