#!/usr/bin/env bash
# S3 faults against a radosgw of our own (a second gateway on the fixture's
# cluster, so stopping it disturbs no other test): a stopped gateway is one
# clean error naming the operation and the attempts; a gateway killed in the
# middle of a multipart upload leaves no object visible and the upload
# succeeds once it is back; a request retried with backoff succeeds when the
# gateway restarts meanwhile.
. "$(dirname "$0")/lib.sh"
: "${SILT_RGW_DIR:?needs the radosgw fixture (ctest fixture s3)}"
: "${STORE_CONFORMANCE:?}"
RGW=$SILT_SOURCE_DIR/tests/integration/radosgw.sh
GW=f$$
bash "$RGW" gw-start "$SILT_RGW_DIR" "$GW"
stop_gw() { bash "$RGW" gw-stop "$SILT_RGW_DIR" "$GW"; }
trap 'stop_gw; rm -f "$SILT_RGW_DIR/env.$GW"; cleanup' EXIT
set -a
. "$SILT_RGW_DIR/env.$GW"
set +a
export S3_BUCKET="silt-faults-$$" S3_PART_SIZE=$((5 << 20)) S3_MULTIPART_THRESHOLD=$((5 << 20))

tool() {
    set +e
    "$STORE_CONFORMANCE" "$@" >"$T_DIR/.out" 2>"$T_DIR/.err"
    RC=$?
    set -e
    OUT=$(cat "$T_DIR/.out")
    ERR=$(cat "$T_DIR/.err")
}
one_line() { [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "not one line: $ERR"; pass; }
s3head() {
    curl -s -o /dev/null -w '%{http_code}' -I --aws-sigv4 "aws:amz:$S3_REGION:s3" \
        --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
        "$S3_ENDPOINT/$S3_BUCKET/$1"
}

python3 -c 'import os,random; r=random.Random(7); open("big.bin","wb").write(r.randbytes(150 << 20))'
KEY=ds/f/data/$(python3 -c 'import hashlib; print("f1620" + hashlib.sha3_256(open("big.bin","rb").read()).hexdigest())')
tool put s3 ds/f 'a block' # creates the bucket
assert_eq "$RC" 0 "first put: $ERR"

# ---- gateway down: a clean error after the configured attempts ------------------
stop_gw
S3_MAX_RETRIES=-1 tool put s3 ds/f 'another block'
assert_eq "$RC" 1 "gateway down: exit"
one_line
case $ERR in
"silt: s3: PUT $S3_BUCKET: "*"connect to server (after 1 attempt)") pass ;;
*) fail "gateway down, no retries: $ERR" ;;
esac
S3_MAX_RETRIES=2 S3_RETRY_BASE_MS=50 tool put s3 ds/f 'another block'
case $ERR in
"silt: s3: PUT $S3_BUCKET: "*"connect to server (after 3 attempts)") pass ;;
*) fail "gateway down, 2 retries: $ERR" ;;
esac

# ---- a server that accepts and never answers: the stall timeout ---------------
SINK=$(free_port)
python3 -c 'import socket,sys,time
s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8); print("up", flush=True)
c=[]
while True: c.append(s.accept()[0])' "$SINK" >sink.out &
T_PIDS+=($!)
for _ in $(seq 1 50); do grep -q up sink.out && break; sleep 0.1; done
start=$(date +%s)
S3_ENDPOINT=http://127.0.0.1:$SINK S3_MAX_RETRIES=-1 S3_STALL_TIMEOUT_S=1 tool put s3 ds/f 'stalled block'
took=$(($(date +%s) - start))
assert_eq "$RC" 1 "stalled server: exit"
one_line
case $ERR in
"silt: s3: PUT $S3_BUCKET: Operation too slow."*"(after 1 attempt)") pass ;;
*) fail "stalled server: $ERR" ;;
esac
[ "$took" -le 4 ] || fail "the stall timeout of 1 s took ${took} s"
pass

# ---- killed in the middle of a multipart upload ---------------------------------
bash "$RGW" gw-start "$SILT_RGW_DIR" "$GW"
LOG=$SILT_RGW_DIR/log/client.rgw.$GW.log
S3_MAX_RETRIES=-1 "$STORE_CONFORMANCE" put-file s3 ds/f big.bin >put.out 2>put.err &
PUT=$!
for _ in $(seq 1 200); do
    grep -q 'partNumber=3' "$LOG" 2>/dev/null && break
    sleep 0.05
done
grep -q 'partNumber=3' "$LOG" || fail "the upload did not reach part 3"
kill -9 "$(cat "$SILT_RGW_DIR/pids.rgw.$GW")"
set +e
wait "$PUT"
RC=$?
set -e
assert_eq "$RC" 1 "killed mid-upload: exit"
ERR=$(cat put.err)
one_line
case $ERR in
"silt: s3: PUT $S3_BUCKET/$KEY: "*"(after 1 attempt)") pass ;;
*) fail "killed mid-upload: $ERR" ;;
esac
bash "$RGW" gw-start "$SILT_RGW_DIR" "$GW"
assert_eq "$(s3head "$KEY")" "404" "no object visible after the interrupted upload"
tool put-file s3 ds/f big.bin
assert_eq "$RC:$OUT" "0:ok" "upload after the restart: $ERR"
tool get-file s3 ds/f big.bin big.back
assert_eq "$RC:$OUT" "0:ok" "download: $ERR"
cmp -s big.bin big.back || fail "downloaded bytes differ"
pass

# ---- stopped, retried with backoff, restarted meanwhile: succeeds ---------------
stop_gw
S3_MAX_RETRIES=8 S3_RETRY_BASE_MS=400 "$STORE_CONFORMANCE" put s3 ds/f 'retried block' >retry.out 2>retry.err &
PUT=$!
sleep 1
bash "$RGW" gw-start "$SILT_RGW_DIR" "$GW"
set +e
wait "$PUT"
RC=$?
set -e
assert_eq "$RC:$(cat retry.out)" "0:ok" "retry across a restart: $(cat retry.err)"
KEY2=ds/f/blocks/$(printf 'retried block' | python3 -c 'import hashlib,sys; print("f1620" + hashlib.sha3_256(sys.stdin.buffer.read()).hexdigest())')
assert_eq "$(s3head "$KEY2")" "200" "retried object stored"

done_tests
