#!/usr/bin/env bash
# The permission matrix of silt serve: no token / malformed / unknown /
# revoked / expired / read / write / admin / dataset-restricted tokens ×
# every route class (ODF read, ODF write, Foundry read, Foundry write, the
# admin routes of /admin/v1/ and their GETs): 401
# and 403 with the right envelope and error name, nothing changed by a
# refused request, and hidden datasets answered exactly like absent ones.
source "$(dirname "$0")/lib.sh"

ok init
add_ds pub <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["a BIGINT"]
      merge:
        kind: Append
Y
add_ds priv <<'Y'
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
ok ingest pub one.csv
ok ingest priv one.csv
ok new pubfiles --files
ok upload pubfiles one.csv
PF_T1=$OUT
ok new privfiles --files
ok upload privfiles one.csv
PUB_RID=$(info pub "d['rid']")
PRIV_RID=$(info priv "d['rid']")
PF_RID=$(info pubfiles "d['rid']")
PRF_RID=$(info privfiles "d['rid']")

ok token create reader --read
READ=$OUT
ok token create writer --write
WRITE=$OUT
ok token create boss --admin
BOSS=$OUT
ok token create pubonly --write --dataset 'pub*'
PUBONLY=$OUT
ok token create pubadmin --admin --dataset 'pub*'
PUBADMIN=$OUT
ok token create gone --write
GONE=$OUT
ok token revoke gone
ok token create shortlived --write --expires-days 1
SHORT=$OUT

serve_start

ferr() { jget "[d['errorCode'],d['errorName']]" <<<"$HTTP_BODY"; }
msg() { jget "d['message']" <<<"$HTTP_BODY"; }

# ---- 401: no token, malformed header, unknown / revoked secrets ---------------------
for p in "/api/v2/datasets/$PUB_RID" "/odf/pub/refs/head" "/admin/v1/datasets/pub/retention"; do
    TOKEN=none expect_http 401 GET "$p"
    assert_contains "$HTTP_HEADERS" "WWW-Authenticate: Bearer"
    case $p in
    /api/* | /admin/*) assert_eq "$(ferr)" '["UNAUTHORIZED","MissingCredentials"]' "no token: $p" ;;
    *) assert_eq "$(msg)" "authentication required: send 'Authorization: Bearer <token>'" "no token: $p" ;;
    esac
    TOKEN=none expect_http 401 GET "$p" -H 'Authorization: Basic dXNlcjpwdw=='
    assert_eq "$(msg)" "malformed Authorization header: expected 'Bearer <token>'" "basic auth: $p"
    TOKEN=none expect_http 401 GET "$p" -H 'Authorization: Bearer'
    for bad in "silt_nottherightsecretnottherightsecretnottheri" "$GONE" "${READ%?}x" "$READ$READ"; do
        TOKEN=$bad expect_http 401 GET "$p"
        assert_eq "$(msg)" "invalid or expired token" "bad token on $p"
    done
done
# /health needs none
TOKEN=none expect_http 200 GET /health

# ---- read token: every GET, no write ----------------------------------------------------
SNAP=$(ws_snapshot "$T_DIR/.silt/datasets")  # tokens.json records last use; the datasets must not change
TOKEN=$READ expect_http 200 GET "/api/v2/datasets/$PUB_RID"
TOKEN=$READ expect_http 200 GET "/api/v2/datasets/$PF_RID/files"
TOKEN=$READ expect_http 200 GET "/api/v2/datasets/$PUB_RID/readTable?format=CSV"
TOKEN=$READ expect_http 200 GET "/odf/pub/refs/head"
TOKEN=$READ expect_http 200 GET "/odf/pub/tail"
TOKEN=$READ expect_http 200 GET "/odf/pub/metadata"
TOKEN=$READ expect_http 200 GET "/odf/query?query=SELECT%201"
TOKEN=$READ expect_http 200 GET "/odf/info"
TOKEN=$READ expect_http 200 GET "/admin/v1/datasets/pub/retention"
TOKEN=$READ expect_http 200 GET "/admin/v1/datasets/$PF_RID/retention/marks"
# write routes: 403 with the Foundry name of the operation, or ApiUsageDenied + missingScope
check_denied() { # NAME METHOD PATH [curl args]
    local name=$1
    shift
    TOKEN=$READ expect_http 403 "$@"
    case $2 in
    /api/*)
        assert_eq "$(ferr)" "[\"PERMISSION_DENIED\",\"$name\"]" "read token: $1 $2"
        assert_eq "$(msg)" "the token 'reader' may not do this (needs api:datasets-write)" "403 message"
        ;;
    *) assert_eq "$(msg)" "the token 'reader' lacks the scope api:datasets-write" "odf 403: $2" ;;
    esac
}
J=(-H 'Content-Type: application/json')
check_denied CreateDatasetPermissionDenied POST /api/v2/datasets "${J[@]}" \
    -d '{"name":"x","parentFolderRid":"ri.compass.main.folder.00000000-0000-0000-0000-000000000000"}'
check_denied CreateTransactionPermissionDenied POST "/api/v2/datasets/$PF_RID/transactions" "${J[@]}" -d '{"transactionType":"APPEND"}'
check_denied UploadFilePermissionDenied POST "/api/v2/datasets/$PF_RID/files/x.csv/upload" \
    -H 'Content-Type: application/octet-stream' --data-binary 'a\n1\n'
check_denied CreateBranchPermissionDenied POST "/api/v2/datasets/$PF_RID/branches" "${J[@]}" -d '{"name":"dev"}'
check_denied DeleteBranchPermissionDenied DELETE "/api/v2/datasets/$PF_RID/branches/master"
check_denied DeleteFilePermissionDenied DELETE "/api/v2/datasets/$PF_RID/files/one.csv"
check_denied PutDatasetSchemaPermissionDenied PUT "/api/v2/datasets/$PF_RID/putSchema" "${J[@]}" \
    -d '{"schema":{"fieldSchemaList":[{"name":"a","type":"LONG","nullable":true}]}}'
check_denied CommitTransactionPermissionDenied POST "/api/v2/datasets/$PF_RID/transactions/ri.silt.main.transaction.00000000-0000-4000-8000-000000000000/commit"
check_denied AbortTransactionPermissionDenied POST "/api/v2/datasets/$PF_RID/transactions/ri.silt.main.transaction.00000000-0000-4000-8000-000000000000/abort"
TOKEN=$READ expect_http 403 POST /odf/pub/ingest -H 'Content-Type: text/csv' --data-binary $'a\n2\n'
assert_eq "$(jget "d" <<<"$HTTP_BODY")" '{"message":"the token '"'"'reader'"'"' lacks the scope api:datasets-write"}' "odf ingest 403"
# the push routes of the Simple Transfer Protocol (docs/server.md) need write scope too
X0=f16200000000000000000000000000000000000000000000000000000000000000000
for kind in blocks data checkpoints; do
    TOKEN=$READ expect_http 403 PUT "/odf/pub/$kind/$X0" --data-binary 'x'
done
TOKEN=$READ expect_http 403 PUT /odf/pub/refs/head -H "If-Match: $X0" --data-binary "$X0"
TOKEN=$READ expect_http 200 POST /api/v2/datasets/getSchemaBatch "${J[@]}" -d '[]'
# the 403s changed nothing
assert_eq "$(ws_snapshot "$T_DIR/.silt/datasets")" "$SNAP" "refused requests changed nothing"

# ---- write and admin tokens: the same write routes succeed ---------------------------------
for tok in "$WRITE" "$BOSS"; do
    TOKEN=$tok expect_http 200 POST /odf/pub/ingest -H 'Content-Type: text/csv' --data-binary $'a\n2\n'
    TOKEN=$tok expect_http 200 POST "/api/v2/datasets/$PF_RID/files/w-${tok:5:6}.csv/upload" \
        -H 'Content-Type: application/octet-stream' --data-binary 'x'
done
ok sql 'SELECT count(*) AS n FROM pub' --format csv
assert_eq "$OUT" $'n\n3' "two ingests landed"
# an expired token: the server's clock two days later
FIRST_LOG=$SERVE_LOG
serve_stop
SILT_FAKE_SYSTEM_TIME=$(date -u -d '+2 days' +%Y-%m-%dT%H:%M:%SZ) serve_start
TOKEN=$SHORT expect_http 401 GET "/odf/pub/refs/head"
assert_eq "$(msg)" "invalid or expired token" "expired"
TOKEN=$WRITE expect_http 200 GET "/odf/pub/refs/head"
serve_stop
serve_start

# ---- a dataset-restricted token: hidden datasets are exactly like absent ones -------------
absent_body() { # PATH: the body for a dataset that does not exist, with the name replaced
    local p=$1
    TOKEN=$BOSS http GET "$p"
    printf '%s %s' "$HTTP_STATUS" "$(jget "[d.get('errorCode'),d.get('errorName'),d.get('message')]" <<<"$HTTP_BODY")"
}
TOKEN=$PUBONLY expect_http 200 GET "/odf/pub/refs/head"
TOKEN=$PUBONLY expect_http 200 GET "/api/v2/datasets/$PF_RID"
for tmpl in "/odf/%s/refs/head" "/odf/%s/tail" "/odf/%s/metadata"; do
    p=$(printf "$tmpl" priv)
    TOKEN=$PUBONLY http GET "$p"
    got="$HTTP_STATUS $(jget "[d.get('errorCode'),d.get('errorName'),d.get('message')]" <<<"$HTTP_BODY")"
    want=$(absent_body "$(printf "$tmpl" priv-does-not-exist)")
    assert_eq "$got" "${want//priv-does-not-exist/priv}" "hidden = absent: $p"
done
for tmpl in "/api/v2/datasets/%s" "/api/v2/datasets/%s/files" "/api/v2/datasets/%s/readTable?format=CSV"; do
    p=$(printf "$tmpl" "$PRF_RID")
    TOKEN=$PUBONLY http GET "$p"
    got="$HTTP_STATUS $(jget "[d.get('errorCode'),d.get('errorName'),d.get('message')]" <<<"$HTTP_BODY")"
    want=$(absent_body "$(printf "$tmpl" ri.silt.main.dataset.00000000-0000-8000-8000-000000000000)")
    assert_eq "$got" "${want//ri.silt.main.dataset.00000000-0000-8000-8000-000000000000/$PRF_RID}" "hidden = absent: $p"
done
# by name too, and writes to a hidden dataset are 404, not 403
TOKEN=$PUBONLY expect_http 404 GET "/api/v2/datasets/privfiles"
TOKEN=$PUBONLY expect_http 404 POST /odf/priv/ingest -H 'Content-Type: text/csv' --data-binary $'a\n5\n'
TOKEN=$PUBONLY expect_http 404 PUT "/odf/priv/data/$X0" --data-binary 'x'
TOKEN=$PUBONLY expect_http 404 PUT /odf/priv/refs/head -H "If-Match: $X0" --data-binary "$X0"
TOKEN=$PUBONLY expect_http 404 POST "/api/v2/datasets/$PRF_RID/files/z.csv/upload" \
    -H 'Content-Type: application/octet-stream' --data-binary 'x'
# /odf/info lists only what the token sees; a query over a hidden dataset fails like an unknown table
TOKEN=$PUBONLY expect_http 200 GET /odf/info
assert_eq "$(jget "[x['name'] for x in d['datasets']]" <<<"$HTTP_BODY")" '["pub","pubfiles"]' "info of a restricted token"
TOKEN=$PUBONLY http GET "/odf/query?query=SELECT%20*%20FROM%20priv"
HIDDEN="$HTTP_STATUS $(msg)"
TOKEN=$PUBONLY http GET "/odf/query?query=SELECT%20*%20FROM%20nosuch"
ABSENT="$HTTP_STATUS $(msg)"
assert_eq "$HIDDEN" "${ABSENT//nosuch/priv}" "query: hidden = unknown table"
ok sql 'SELECT count(*) AS n FROM priv' --format csv
assert_eq "$OUT" $'n\n1' "nothing ingested into the hidden dataset"

# ---- admin routes (/admin/v1/): admin only; the GETs are read routes ------------------------
ok new pubdel --files
ok new privdel --files
ok retention set pubfiles --keep-days 0
ok upload pubfiles one.csv --type snapshot # PF_T1's view is retained no more: a mark to unmark
ADMIN_ROUTES=(
    "DeleteDatasetPermissionDenied|DELETE|/admin/v1/datasets/%s|||204"
    "PutRetentionPolicyPermissionDenied|PUT|/admin/v1/datasets/%s/retention|{\"keepDays\": 0, \"branch\": \"master\"}||200"
    "ApplyRetentionPermissionDenied|POST|/admin/v1/datasets/%s/retention/mark|||200"
    "UnmarkTransactionPermissionDenied|DELETE|/admin/v1/datasets/%s/retention/marks/$PF_T1|||200"
    "UnmarkTransactionPermissionDenied|DELETE|/admin/v1/datasets/%s/retention/marks|||200"
    "GarbageCollectPermissionDenied|POST|/admin/v1/gc|{\"datasets\": [\"%s\"], \"dryRun\": true}||200"
)
# one admin request: route ENTRY, dataset DS, token TOK (none = no header); sets HTTP_*
admin_req() {
    local name method tmpl body _ want p b
    IFS='|' read -r name method tmpl body _ want <<<"$1"
    p=$(printf "$tmpl" "$2")
    b=${body//%s/$2}
    if [ -n "$b" ]; then
        TOKEN=$3 http "$method" "$p" "${J[@]}" -d "$b"
    else
        TOKEN=$3 http "$method" "$p"
    fi
}
SNAP=$(ws_snapshot "$T_DIR/.silt/datasets")
for entry in "${ADMIN_ROUTES[@]}"; do
    name=${entry%%|*}
    admin_req "$entry" pubdel none
    assert_eq "$HTTP_STATUS $(ferr)" '401 ["UNAUTHORIZED","MissingCredentials"]' "no token: $entry"
    for who in reader:"$READ" writer:"$WRITE" pubonly:"$PUBONLY"; do
        admin_req "$entry" pubdel "${who#*:}"
        assert_eq "$HTTP_STATUS $(ferr) $(msg)" \
            "403 [\"PERMISSION_DENIED\",\"$name\"] the token '${who%%:*}' may not do this (needs silt:admin)" \
            "${who%%:*}: $entry"
    done
    # the pub* admin token: a priv dataset is exactly like an absent one
    admin_req "$entry" privdel "$PUBADMIN"
    got="$HTTP_STATUS $(jget "[d.get('errorCode'),d.get('errorName'),d.get('message')]" <<<"$HTTP_BODY")"
    admin_req "$entry" privdel-does-not-exist "$BOSS"
    want="$HTTP_STATUS $(jget "[d.get('errorCode'),d.get('errorName'),d.get('message')]" <<<"$HTTP_BODY")"
    assert_eq "$got" "${want//privdel-does-not-exist/privdel}" "restricted admin, hidden = absent: $entry"
    assert_eq "${got%% *}" 404 "restricted admin: 404 for $entry"
done
assert_eq "$(ws_snapshot "$T_DIR/.silt/datasets")" "$SNAP" "refused admin requests changed nothing"
# the GETs are read routes: a restricted token gets 404 for a hidden dataset, like an absent one
for sub in retention retention/marks; do
    TOKEN=$PUBONLY expect_http 200 GET "/admin/v1/datasets/pub/$sub"
    TOKEN=$PUBONLY http GET "/admin/v1/datasets/priv/$sub"
    assert_eq "$HTTP_STATUS $(ferr)" '404 ["NOT_FOUND","DatasetNotFound"]' "restricted read: $sub"
done
# admin tokens: each route succeeds (the restricted one on its own datasets)
for entry in "${ADMIN_ROUTES[@]}"; do
    want=${entry##*|}
    case $entry in
    *retention/marks/*) ds=$PF_RID ;; # the mark of PF_T1
    Delete*) ds=pubdel ;;
    *) ds=pubfiles ;;
    esac
    admin_req "$entry" "$ds" "$PUBADMIN"
    assert_eq "$HTTP_STATUS" "$want" "restricted admin token on $ds: $entry: $HTTP_BODY"
done
TOKEN=$BOSS http DELETE /admin/v1/datasets/privdel
assert_eq "$HTTP_STATUS" 204 "admin token deletes privdel"
ok --json list
assert_eq "$(jget "[x['name'] for x in d]" <<<"$OUT")" '["priv","privfiles","pub","pubfiles"]' "pubdel and privdel deleted"
ok retention show pubfiles
assert_eq "$OUT" "default: keep 0 days
branch master: keep 0 days" "the restricted admin token's policy"
ok retention marks pubfiles
assert_eq "$OUT" "no marked transactions" "the restricted admin token's unmark"

# ---- the request log names the token, never its secret -------------------------------------------
sleep 0.2
grep -Eq '^GET /odf/pub/refs/head 200 [0-9]+ [0-9.]+ms reader$' "$FIRST_LOG" || fail "token name not logged"
grep -Eq '^GET /odf/pub/refs/head 200 [0-9]+ [0-9.]+ms pubonly$' "$SERVE_LOG" || fail "token name not logged"
pass
for s in "$READ" "$WRITE" "$BOSS" "$PUBONLY"; do
    grep -qF "$s" "$FIRST_LOG" "$SERVE_LOG" && fail "a secret is in the log"
    pass
done
serve_stop
done_tests
