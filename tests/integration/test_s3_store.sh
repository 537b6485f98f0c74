#!/usr/bin/env bash
# S3 store backend against real Ceph radosgw (SigV4 checked by the server):
# the same conformance cases pass on localfs and on S3; the objects land in
# the localfs layout under the prefix (read back with curl only); wrong
# credentials are one line naming the SigV4 error, never the secret.
# Needs the ctest fixture s3 (tests/integration/radosgw.sh).
. "$(dirname "$0")/lib.sh"
: "${SILT_RGW_DIR:?needs the radosgw fixture (ctest fixture s3)}"
: "${STORE_CONFORMANCE:?}"
set -a
. "$SILT_RGW_DIR/env"
set +a
export S3_BUCKET="silt-store-$$"

CASES="ok put_get_stat
ok put_existing_noop
ok get_missing
ok ref_cas
ok ref_delete
ok get_to_file
ok large_object
cas rounds 10, writers 8, winners 10
ok concurrent_cas"

# tool ARGS...: store_conformance in a fresh directory; $OUT, $ERR, $RC
tool() {
    local d
    d=$(mktemp -d "$T_DIR/run-XXXXXX")
    set +e
    (cd "$d" && "$STORE_CONFORMANCE" "$@") >"$T_DIR/.out" 2>"$T_DIR/.err"
    RC=$?
    set -e
    OUT=$(cat "$T_DIR/.out")
    ERR=$(cat "$T_DIR/.err")
}

# s3get KEY: the object's bytes via curl's own SigV4 (independent of silt)
s3get() {
    curl -sf --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3_ENDPOINT/$S3_BUCKET/$1"
}
one_line() { [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "not one line: $ERR"; pass; }
mh() { printf '%s' "$1" | python3 -c 'import hashlib,sys; print("f1620" + hashlib.sha3_256(sys.stdin.buffer.read()).hexdigest())'; }

# ---- one list of cases, two backends -------------------------------------------
tool run local "$T_DIR/localds"
[ "$RC" -eq 0 ] || fail "localfs conformance: $ERR"
assert_eq "$OUT" "$CASES" "localfs cases"
tool run s3 ds/conf
[ "$RC" -eq 0 ] || fail "S3 conformance: $ERR"
assert_eq "$OUT" "$CASES" "S3 cases"

# ---- concurrent CAS from separate processes: exactly one winner per round -------
declare -A last=()
for backend in local s3; do
    where=ds/procs
    [ "$backend" = local ] && where=$T_DIR/procds
    prev=
    for round in 1 2 3 4 5; do
        for w in 1 2 3 4 5 6; do
            "$STORE_CONFORMANCE" cas "$backend" "$where" head "$prev" "r$round-w$w" >"$T_DIR/cas.$w" 2>&1 &
        done
        wait
        winners=$(grep -lx ok "$T_DIR"/cas.* | wc -l)
        losers=$(grep -lx conflict "$T_DIR"/cas.* | wc -l)
        assert_eq "$winners/$losers" "1/5" "$backend round $round: winners/losers ($(cat "$T_DIR"/cas.*))"
        w=$(grep -lx ok "$T_DIR"/cas.* | sed 's/.*cas\.//')
        prev=r$round-w$w
    done
    last[$backend]=$prev
done
assert_eq "$(cat "$T_DIR/procds/refs/head")" "${last[local]}" "localfs head is the last winner"
assert_eq "$(s3get ds/procs/refs/head)" "${last[s3]}" "S3 head is the last winner"

# ---- the layout, read back with curl -------------------------------------------
assert_eq "$(s3get "ds/conf/blocks/$(mh 'block one')")" "block one" "block object"
assert_eq "$(s3get "ds/conf/data/$(mh 'data slice')")" "data slice" "data object"
assert_eq "$(s3get "ds/conf/checkpoints/$(mh 'checkpoint bytes')")" "checkpoint bytes" "checkpoint object"
assert_eq "$(s3get ds/conf/refs/head)" "v2" "refs/head"
assert_eq "$(s3get ds/conf/refs/branches/race)" "round-10" "refs/branches/race"
assert_eq "$(cat "$T_DIR/localds/refs/head")" "v2" "localfs refs/head"
# a deleted ref is an empty object (S3 has no conditional DELETE)
assert_eq "$(s3get ds/conf/refs/branches/dev | wc -c)" "0" "tombstone of a deleted ref"
# the multipart object is one object of the whole size
listed=$(s3get "?list-type=2&prefix=ds%2Fconf%2Fdata%2F" | grep -o '<Size>20971520</Size>' | head -1)
assert_eq "$listed" "<Size>20971520</Size>" "20 MB object listed with its size"
assert_eq "$(s3get "?uploads=" | grep -c '<Upload>' || true)" "0" "no multipart upload left open"

# ---- ListObjectsV2, paged ----------------------------------------------------------
tool list s3 ds/conf/ 1000
[ "$RC" -eq 0 ] || fail "list: $ERR"
one_page=$OUT
assert_eq "$(printf '%s\n' "$one_page" | wc -l)" "7" "7 objects under ds/conf/ (no probe keys left): $one_page"
tool list s3 ds/conf/ 2
assert_eq "$OUT" "$one_page" "4 pages of 2 give the same listing"
assert_eq "$(printf '%s\n' "$one_page" | cut -d' ' -f1)" \
    "$(s3get "?list-type=2&prefix=ds%2Fconf%2F" | grep -o '<Key>[^<]*</Key>' | sed 's/<[^>]*>//g')" "keys as curl lists them"
assert_eq "$(printf '%s\n' "$one_page" | grep -c "^ds/conf/data/f1620[0-9a-f]\{64\} 20971520$")" "1" "the large object's size"
assert_eq "$(printf '%s\n' "$one_page" | grep -c "^ds/conf/refs/branches/dev 0$")" "1" "the tombstone's size"
tool list s3 nothing/here/ 2
assert_eq "$RC:$OUT" "0:" "empty listing"

# ---- credentials -----------------------------------------------------------------
AWS_SECRET_ACCESS_KEY=wrong-secret-do-not-print tool put s3 ds/conf 'some block'
assert_eq "$RC" 1 "wrong secret: exit code"
assert_eq "$ERR" "silt: s3: PUT $S3_BUCKET: HTTP 403 SignatureDoesNotMatch" "wrong secret: message"
assert_eq "$(printf '%s' "$ERR$OUT" | grep -c 'wrong-secret' || true)" "0" "secret not shown"
AWS_ACCESS_KEY_ID=NOSUCHKEY0000 tool put s3 ds/conf 'some block'
assert_eq "$RC" 1 "unknown key: exit code"
assert_eq "$ERR" "silt: s3: PUT $S3_BUCKET: HTTP 403 InvalidAccessKeyId" "unknown key: message"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$STORE_CONFORMANCE" put s3 ds/conf x >/dev/null 2>"$T_DIR/.err" && fail "no credentials accepted"
assert_eq "$(cat "$T_DIR/.err")" "silt: s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" "no credentials"
S3_ENDPOINT=ftp://127.0.0.1 tool put s3 ds/conf x
assert_eq "$ERR" "silt: s3: endpoint must be an http:// or https:// URL" "bad endpoint"
tool put s3 ../up x
assert_eq "$ERR" "silt: s3: invalid key prefix '../up'" "bad prefix"
assert_eq "$(s3get "ds/conf/blocks/$(mh 'some block')" || echo missing)" "missing" "nothing written by the failed calls"

done_tests
