#!/usr/bin/env bash
# test_s3_transfer.sh — push and pull through an S3 repository on real Ceph
# radosgw (docs/remote.md): s3+http://host:port/bucket/prefix and
# s3://bucket/prefix with $AWS_ENDPOINT_URL; first push creates the bucket,
# the objects land in the ODF layout under prefix/<name>/ (read back with
# curl's own SigV4, not silt), clone (same DID, verifies), incremental pull
# of only the new objects, a dataset the bucket lacks, wrong and missing
# credentials (one line, no secret, nothing written), a corrupted object in
# the bucket refused, divergence naming both heads.
# Needs the ctest fixture s3 (tests/integration/radosgw.sh).
source "$(dirname "$0")/lib.sh"
: "${SILT_RGW_DIR:?needs the radosgw fixture (ctest fixture s3)}"
set -a
. "$SILT_RGW_DIR/env"
set +a
export AWS_REGION=$S3_REGION
BUCKET="silt-xfer-$$"
U="s3+http://127.0.0.1:$RGW_PORT/$BUCKET/repo"

# s3get KEY / s3put KEY FILE: the bucket through curl's SigV4 (independent of silt)
s3get() {
    curl -sf --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3_ENDPOINT/$BUCKET/$1"
}
s3put() {
    curl -sf -X PUT --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --data-binary "@$2" "$S3_ENDPOINT/$BUCKET/$1" >/dev/null
}

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
mkdir a b c d

# ---- a: push to a bucket that does not exist yet ------------------------------
cd a
ok init
ok new sales
ok append sales ../src.yaml
ok ingest sales ../d1.csv
H1=$(head_of sales)
ID=$(info sales 'd["id"]')
ok push sales "$U/sales"
assert_eq "$OUT" "sales: pushed to $U/sales: 4 blocks, 1 objects ($(cat .silt/datasets/*/data/* | wc -c) bytes), 0 already present, head $H1" "first push"
ok push sales "$U/sales"
assert_eq "$OUT" "sales: $U/sales is up to date" "push again"
assert_eq "$(s3get repo/sales/refs/head)" "$H1" "refs/head in the bucket (read by curl)"
s3get "repo/sales/blocks/$H1" >head.block || fail "head block not in the bucket"
assert_eq "$(cmp -s head.block ".silt/datasets/${ID#did:odf:}/blocks/$H1" && echo same)" "same" "head block bytes in the bucket"
cd ..

# ---- b: clone through a named repository, then an incremental pull -------------
cd b
ok init
ok repo add s3r "$U"
assert_eq "$(grep -c 'KEY\|secret' .silt/repos.yaml || true)" "0" "no credentials in repos.yaml"
ok pull s3r/sales
assert_eq "$OUT" "sales: cloned from s3r/sales: 4 blocks, 1 objects ($(cat ../a/.silt/datasets/*/data/* | wc -c) bytes), head $H1" "clone"
assert_eq "$(info sales 'd["id"]')" "$ID" "same DID"
ok verify sales
assert_eq "$OUT" "sales: ok (4 blocks)" "clone verifies"
cd ../a
ok ingest sales ../d2.csv
H2=$(head_of sales)
ok push sales "$U/sales"
cd ../b
ok pull sales
assert_contains "$OUT" "sales: 1 new blocks from s3r/sales, 1 objects (" "incremental pull fetches only the new slice"
assert_contains "$OUT" "head $H2" "incremental pull head"
expect_sql 'SELECT city, n FROM sales ORDER BY n' <<'R'
city,n
A,1
B,2
C,3
R
fails 1 "silt: pull s3r/gone: dataset 'gone' not found in $U" pull s3r/gone
cd ..

# ---- c: the s3:// form with the endpoint from AWS_ENDPOINT_URL ------------------
cd c
ok init
export AWS_ENDPOINT_URL=$S3_ENDPOINT
ok pull "s3://$BUCKET/repo/sales" --as copy
assert_contains "$OUT" "copy: cloned from s3://$BUCKET/repo/sales: 5 blocks, 2 objects" "clone by s3:// URL"
ok verify copy
unset AWS_ENDPOINT_URL
# credentials: wrong secret, missing key — one line, no secret, nothing written
before=$(tree_sum .silt)
AWS_SECRET_ACCESS_KEY=wrong-secret-value fails 1 "silt: pull $U/sales: s3: GET $BUCKET: HTTP 403 SignatureDoesNotMatch" \
    pull "$U/sales" --as x
assert_eq "$(printf '%s' "$ERR" | grep -c wrong-secret-value || true)" "0" "the secret is not in the message"
key=$AWS_ACCESS_KEY_ID
unset AWS_ACCESS_KEY_ID
fails 1 "silt: pull $U/sales: s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" pull "$U/sales" --as x
export AWS_ACCESS_KEY_ID=$key
assert_eq "$(tree_sum .silt)" "$before" "failed pulls leave the workspace as it was"
cd ..

# ---- a corrupted object in the bucket is refused ---------------------------------
cd a
SLICE=$(ls .silt/datasets/*/data/ | head -1)
cp ".silt/datasets/${ID#did:odf:}/data/$SLICE" bad.bin
python3 -c 'import sys;p=sys.argv[1];b=bytearray(open(p,"rb").read());b[len(b)//2]^=1;open(p,"wb").write(b)' bad.bin
s3put "repo/sales/data/$SLICE" bad.bin || fail "could not corrupt the object"
cd ../d
ok init
fails 1 "silt: data/$SLICE from $U/sales does not match its hash; nothing was committed" pull "$U/sales" --jobs 1
ok list
assert_eq "$OUT" "" "no dataset after the refused clone"
cd ../a
s3put "repo/sales/data/$SLICE" ".silt/datasets/${ID#did:odf:}/data/$SLICE" || fail "could not restore the object"
cd ..

# ---- divergence: both sides moved ------------------------------------------------
cd b
ok ingest sales ../d3.csv
HB=$(head_of sales)
cd ../a
ok ingest sales ../d3.csv
HA=$(head_of sales)
ok push sales "$U/sales"
cd ../b
fails_like 1 "diverged" push sales s3r/sales
assert_contains "$ERR" "$HB" "divergence names the local head"
assert_contains "$ERR" "$HA" "divergence names the remote head"
assert_eq "$(s3get repo/sales/refs/head)" "$HA" "the bucket's head is unchanged"
done_tests
