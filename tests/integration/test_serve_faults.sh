#!/usr/bin/env bash
# silt serve under SIGKILL and contention:
#  * SERVE_KILLS (default 100) rounds: clients run uploads with auto-commit,
#    explicit transactions (create, upload, commit) and push ingests while
#    the server is killed with SIGKILL at a random moment; afterwards
#    `silt verify --all` passes, every acknowledged commit and ingest is
#    present, no file of an uncommitted transaction is visible, and a
#    restarted server serves;
#  * 16 clients committing to one branch at once: each commit lands or gets
#    a clean 409, nothing is lost, the chain does not fork.
source "$(dirname "$0")/lib.sh"

ROUNDS=${SERVE_KILLS:-100}
ok init
add_ds led <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["client STRING", "n BIGINT"]
      merge:
        kind: Append
Y
ok new fd --files
ok branch create fd c
FD=$(info fd "d['rid']")
mkdir -p acks
export ADMIN=${ADMIN:-admin-secret}

# client_upload ROUND: auto-commit uploads to master; acks "path rid"
client_upload() {
    local r=$1 i=0 out
    while :; do
        i=$((i + 1))
        out=$(curl -sS --max-time 5 -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/octet-stream' \
            --data-binary "u $r $i" -w '\n%{http_code}' \
            "$BASE/api/v2/datasets/$FD/files/u-$r-$i.txt/upload?branchName=master" 2>/dev/null) || return 0
        [ "${out##*$'\n'}" = 200 ] || continue
        printf '%s %s\n' "u-$r-$i.txt" "$(jget "d['transactionRid']" <<<"${out%$'\n'*}")" >>acks/upload
    done
}
# client_txn ROUND: explicit transactions on branch c; acks the committed rid
client_txn() {
    local r=$1 i=0 out rid
    while :; do
        i=$((i + 1))
        out=$(curl -sS --max-time 5 -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/json' \
            -d '{"transactionType":"APPEND"}' -w '\n%{http_code}' \
            "$BASE/api/v2/datasets/$FD/transactions?branchName=c" 2>/dev/null) || return 0
        if [ "${out##*$'\n'}" = 409 ]; then
            # an open transaction left by a killed round: abort it
            out=$(curl -sS --max-time 5 -H "Authorization: Bearer $ADMIN" "$BASE/api/v2/datasets/$FD/branches/c" 2>/dev/null) || return 0
            rid=$(jget "d['transactionRid']" <<<"$out")
            curl -sS --max-time 5 -X POST -H "Authorization: Bearer $ADMIN" \
                "$BASE/api/v2/datasets/$FD/transactions/$rid/abort" >/dev/null 2>&1 || return 0
            continue
        fi
        [ "${out##*$'\n'}" = 200 ] || continue
        rid=$(jget "d['rid']" <<<"${out%$'\n'*}")
        local staged=0 code
        for k in 1 2; do
            code=$(curl -sS --max-time 5 -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/octet-stream' \
                --data-binary "t $r $i $k" -o /dev/null -w '%{http_code}' \
                "$BASE/api/v2/datasets/$FD/files/t-$r-$i-$k.txt/upload?transactionRid=$rid" 2>/dev/null) || return 0
            [ "$code" = 200 ] && staged=$((staged + 1))
        done
        if [ "$staged" != 2 ]; then # only whole transactions are committed
            curl -sS --max-time 5 -X POST -H "Authorization: Bearer $ADMIN" \
                "$BASE/api/v2/datasets/$FD/transactions/$rid/abort" >/dev/null 2>&1 || return 0
            continue
        fi
        out=$(curl -sS --max-time 5 -X POST -H "Authorization: Bearer $ADMIN" -w '\n%{http_code}' \
            "$BASE/api/v2/datasets/$FD/transactions/$rid/commit" 2>/dev/null) || return 0
        [ "${out##*$'\n'}" = 200 ] && printf '%s t-%s-%s\n' "$rid" "$r" "$i" >>acks/txn
    done
}
# client_ingest ROUND: push ingests; acks "client n"
client_ingest() {
    local r=$1 i=0 code
    while :; do
        i=$((i + 1))
        code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $ADMIN" \
            -H 'Content-Type: text/csv' --data-binary $'client,n\n'"r$r,$i"$'\n' "$BASE/odf/led/ingest" 2>/dev/null) || return 0
        [ "$code" = 200 ] && printf 'r%s %s\n' "$r" "$i" >>acks/ingest
    done
}

for r in $(seq "$ROUNDS"); do
    serve_start
    client_upload "$r" &
    C1=$!
    client_txn "$r" &
    C2=$!
    client_ingest "$r" &
    C3=$!
    # mostly short windows; every tenth round is long enough for an explicit
    # transaction (create, two uploads, commit: about a second under load)
    if [ $((r % 10)) = 0 ]; then sleep 3; else sleep "$(python3 -c "import random; print(random.uniform(0.05, 1.0))")"; fi
    kill -KILL "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null || true
    wait "$C1" "$C2" "$C3" 2>/dev/null || true
done
pass

# ---- afterwards: everything verifies, every acknowledged change is there --------------------------
ok verify --all
NU=$(wc -l <acks/upload 2>/dev/null || echo 0)
NT=$(wc -l <acks/txn 2>/dev/null || echo 0)
NI=$(wc -l <acks/ingest 2>/dev/null || echo 0)
[ "$NU" -gt 0 ] && [ "$NT" -gt 0 ] && [ "$NI" -gt 0 ] || fail "too few acknowledged operations: $NU uploads, $NT txns, $NI ingests"
pass
ok --json files fd
VIEW=$OUT
python3 - "$VIEW" acks/upload <<'PY' || fail "an acknowledged upload is missing from the view"
import json, sys
view = {f["path"]: f for f in json.loads(sys.argv[1])}
for line in open(sys.argv[2]):
    path, rid = line.split()
    assert path in view and view[path]["transactionRid"] == rid, (path, rid)
PY
pass
ok --json files fd@c
VIEWC=$OUT
ok --json txn list fd@c
TXNS=$OUT
python3 - "$VIEWC" "$TXNS" acks/txn <<'PY' || fail "branch c: acknowledged commit missing, or a file of an uncommitted transaction visible"
import json, sys
view = json.loads(sys.argv[1])
txns = {t["rid"]: t for t in json.loads(sys.argv[2])}
committed = {r for r, t in txns.items() if t["status"] == "COMMITTED"}
for line in open(sys.argv[3]):
    rid, prefix = line.split()
    assert rid in committed, rid
    paths = {f["path"] for f in view if f["transactionRid"] == rid}
    assert paths == {prefix + "-1.txt", prefix + "-2.txt"}, (rid, paths)
for f in view:  # nothing half-done is visible
    assert f["transactionRid"] in committed, f
    assert sum(1 for g in view if g["transactionRid"] == f["transactionRid"]) == 2, f
PY
pass
ok sql 'SELECT client, n FROM led ORDER BY client, n' --format csv
python3 - "$OUT" acks/ingest <<'PY' || fail "an acknowledged ingest is missing"
import sys
rows = set(tuple(l.split(",")) for l in sys.argv[1].splitlines()[1:])
for line in open(sys.argv[2]):
    c, n = line.split()
    assert (c, n) in rows, (c, n)
PY
pass
# no scratch body of a killed upload is left once gc swept the leftovers of dead processes
ok gc
LEFT=$(find .silt/tmp -name body 2>/dev/null | wc -l)
assert_eq "$LEFT" 0 "request bodies of killed servers left in .silt/tmp"

# ---- a restarted server serves ----------------------------------------------------------------------
serve_start
expect_http 200 GET "/api/v2/datasets/$FD"
expect_http 200 GET "/odf/led/refs/head"

# ---- 16 clients committing to one branch at once -----------------------------------------------------
ok new race --files
RACE=$(info race "d['rid']")
for k in $(seq 16); do
    (
        out=$(curl -sS -H "Authorization: Bearer $ADMIN" -H 'Content-Type: application/octet-stream' \
            --data-binary "race $k" -w '\n%{http_code}' "$BASE/api/v2/datasets/$RACE/files/r$k.txt/upload?branchName=master")
        echo "${out##*$'\n'} r$k.txt" >"acks/race.$k"
    ) &
done
wait $(jobs -p | grep -v "^$SERVE_PID\$") 2>/dev/null || true
cat acks/race.* | sort >race.txt
OKS=$(grep -c '^200 ' race.txt || true)
CONFLICTS=$(grep -c '^409 ' race.txt || true)
assert_eq "$((OKS + CONFLICTS))" 16 "every commit landed or got a clean 409: $(tr '\n' ' ' <race.txt)"
[ "$OKS" -ge 1 ] || fail "no commit landed"
pass
ok --json files race
assert_eq "$(jget "sorted(f['path'] for f in d)" <<<"$OUT")" \
    "$(grep '^200 ' race.txt | awk '{print $2}' | python3 -c 'import sys,json;print(json.dumps(sorted(l.strip() for l in sys.stdin),separators=(",",":")))')" \
    "exactly the acknowledged files are in the view"
ok --json txn list race
assert_eq "$(jget "sum(1 for t in d if t['status'] == 'COMMITTED')" <<<"$OUT")" "$OKS" "one committed transaction per 200"
ok verify race
serve_stop
done_tests
