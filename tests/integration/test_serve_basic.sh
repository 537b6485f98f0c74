#!/usr/bin/env bash
# silt serve, the process and the HTTP core: the listening line, port 0, the
# request log, error envelopes of both families (Foundry under /api/, kamu's
# {"message"} elsewhere), raw-path decoding and its refusals, 404/405, CORS
# (preflight and on errors), bad options, and the graceful stop.
source "$(dirname "$0")/lib.sh"

ok init

# --- options that cannot work: one line, exit 2 (usage) or 1 (cannot start) ------
fails_like 2 "--max-upload 'lots': expected a size such as 1048576, 64K, 512M or 2G" serve --max-upload lots
fails_like 2 "--listen needs a value" serve --listen
fails_like 2 "serve: unexpected argument 'extra'" serve extra
fails_like 1 "--listen 'localhost': expected HOST:PORT (e.g. 127.0.0.1:8080)" serve --listen localhost
fails_like 1 "--listen '127.0.0.1:99999': the port must be a number 0..65535" serve --listen 127.0.0.1:99999
fails_like 1 "--listen 'example.org:80': Name or service not known (give a numeric address, e.g. 127.0.0.1 or [::1])" \
    serve --listen example.org:80
ok serve --help
assert_contains "$OUT" "silt serve [--listen HOST:PORT]"
assert_contains "$OUT" "SILT_ADMIN_TOKEN"
assert_contains "$OUT" "Example:"
mkdir -p empty
fails_like 1 "$T_DIR/empty: not a silt workspace (run \`silt init\`)" serve --listen 127.0.0.1:0 --workspace "$T_DIR/empty"

# --- start on a free port: exactly one stdout line --------------------------------
serve_start --allow-origin http://app.example
case "$BASE" in http://127.0.0.1:[0-9]*) pass ;; *) fail "bad address '$BASE'" ;; esac
PORT=${BASE##*:}
[ "$PORT" != 0 ] && pass
# a second server on the same port cannot start
fails_like 1 "cannot listen on 127.0.0.1:$PORT: Address already in use" serve --listen "127.0.0.1:$PORT"

expect_http 200 GET /health
assert_eq "$HTTP_BODY" '{"status":"ok","version":"0.1.0"}' "health body"
assert_contains "$HTTP_HEADERS" "Content-Type: application/json"
# no token needed for /health
TOKEN=none expect_http 200 GET /health

# --- unknown routes: 404 in the family's envelope --------------------------------
expect_http 404 GET /api/v2/nothing/here
assert_eq "$(jget "d['errorCode'],d['errorName'],d['parameters'],d['message']" <<<"$HTTP_BODY")" \
    '["NOT_FOUND","RouteNotFound",{},"no route for GET /api/v2/nothing/here"]' "foundry 404 envelope"
jget "d['errorInstanceId']" <<<"$HTTP_BODY" | grep -Eq '^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$' \
    || fail "errorInstanceId is not a UUID: $HTTP_BODY"
pass
I1=$(jget "d['errorInstanceId']" <<<"$HTTP_BODY")
http GET /api/v2/nothing/here
[ "$(jget "d['errorInstanceId']" <<<"$HTTP_BODY")" != "$I1" ] || fail "errorInstanceId repeats"
pass
assert_contains "$HTTP_HEADERS" "Content-Type: application/json"
expect_http 404 GET /nothing
assert_eq "$HTTP_BODY" '{"message":"no route for GET /nothing"}' "plain 404"
expect_http 404 GET /odf
assert_eq "$HTTP_BODY" '{"message":"no route for GET /odf"}' "odf 404"

# --- wrong method: 405 with Allow ---------------------------------------------------
expect_http 405 POST /health
assert_eq "$HTTP_BODY" '{"message":"POST is not allowed on /health (allowed: GET, HEAD)"}' "405 body"
assert_contains "$HTTP_HEADERS" "Allow: GET, HEAD"
expect_http 405 PATCH /health
# HEAD is answered like GET, without a body
HSTAT=$(curl -s -o "$T_DIR/head.out" -w '%{http_code}' -I "$BASE/health")
assert_eq "$HSTAT" 200 "HEAD status"
grep -qi '^Content-Length: 33' "$T_DIR/head.out" || fail "HEAD Content-Length: $(cat "$T_DIR/head.out")"
pass

# --- raw-path decoding: '.' / '..' segments, bad escapes, NUL, invalid UTF-8 ----------
for p in '/api/v2/datasets/%2e%2e/files' '/api/v2/datasets/x/files/%2E' '/api/v2/datasets/x/files/a%zz' \
         '/api/v2/datasets/x/files/a%00b' '/api/v2/datasets/x/files/%ff%fe'; do
    expect_http 400 GET "$p" --path-as-is
    assert_eq "$(jget "d['errorCode'],d['errorName']" <<<"$HTTP_BODY")" '["INVALID_ARGUMENT","InvalidRequestTarget"]' "$p"
done
expect_http 400 GET '/odf/%2e%2e/refs/head' --path-as-is
assert_eq "$HTTP_BODY" \
    '{"message":"malformed request target: bad %-escape, '"'.'"' or '"'..'"' segment, NUL byte or invalid UTF-8"}' "odf 400"
expect_http 400 GET '/health?x=%' --path-as-is

# --- CORS: preflight, and the headers on every response (errors included) -----------
http OPTIONS /api/v2/datasets -H 'Origin: http://app.example' -H 'Access-Control-Request-Method: POST' \
    -H 'Access-Control-Request-Headers: authorization,content-type,fetch-user-agent'
assert_eq "$HTTP_STATUS" 204 "preflight status"
assert_contains "$HTTP_HEADERS" "Access-Control-Allow-Origin: http://app.example"
assert_contains "$HTTP_HEADERS" "Access-Control-Allow-Headers: authorization, content-type, fetch-user-agent, odf-event-time"
assert_contains "$HTTP_HEADERS" "Access-Control-Allow-Methods: GET, HEAD, POST, PUT, DELETE, OPTIONS"
expect_http 404 GET /api/v2/nothing -H 'Origin: http://app.example'
assert_contains "$HTTP_HEADERS" "Access-Control-Allow-Origin: http://app.example"
assert_contains "$HTTP_HEADERS" "Vary: Origin"
# another origin gets no CORS grant
expect_http 200 GET /health -H 'Origin: http://evil.example'
case "$HTTP_HEADERS" in *Access-Control-Allow-Origin*) fail "CORS granted to another origin" ;; esac
pass

# --- the request log: one line per request, no query string --------------------------
expect_http 200 GET '/health?token=s3cr3t'
sleep 0.2
grep -Eq '^GET /health 200 33 [0-9]+\.[0-9]ms -$' "$SERVE_LOG" || fail "log line: $(cat "$SERVE_LOG")"
pass
grep -q s3cr3t "$SERVE_LOG" && fail "query string logged"
pass
grep -Eq '^POST /health 405 ' "$SERVE_LOG" || fail "405 not logged"
pass

# --- hostile clients: oversized headers, slow and cut-off uploads --------------------------
# request line + header lines: 16 KiB and 100 fields, else 431 in the family's envelope.
# raw_req PATH SIZE [FIELDS] [EXTRA HEADER LINE]: a request of exactly SIZE bytes of request
# line and header lines (Host, FIELDS-2 small fields, then X-Big filling up); prints the
# status line, the Content-Type, the Access-Control-Allow-Origin and the body
raw_req() {
    python3 - "$BASE" "$@" <<'PY'
import socket, sys
host, port = sys.argv[1][len("http://"):].split(":")
path, size = sys.argv[2].encode(), int(sys.argv[3])
fields = int(sys.argv[4]) if len(sys.argv) > 4 else 2
extra = [sys.argv[5].encode() + b"\r\n"] if len(sys.argv) > 5 else []
lines = [b"GET " + path + b" HTTP/1.1\r\n", b"Host: x\r\n"] + extra
lines += [b"X-F%03d: v\r\n" % i for i in range(fields - 2 - len(extra))]
used = sum(len(l) for l in lines)
lines.append(b"X-Big: " + b"a" * (size - used - 9) + b"\r\n")
req = b"".join(lines)
assert len(req) == size
s = socket.create_connection((host, int(port)))
s.sendall(req + b"\r\n")
data = b""
while b"\r\n\r\n" not in data:
    d = s.recv(65536)
    if not d:
        break
    data += d
head, _, body = data.partition(b"\r\n\r\n")
hl = head.split(b"\r\n")
n = [int(l.split(b":")[1]) for l in hl if l.lower().startswith(b"content-length:")]
while n and len(body) < n[0]:
    d = s.recv(65536)
    if not d:
        break
    body += d
get = lambda k: ([l.split(b": ", 1)[1].decode() for l in hl if l.lower().startswith(k + b":")] or ["-"])[0]
print(hl[0].decode())
print(get(b"content-type"))
print(get(b"access-control-allow-origin"))
print(body.decode(errors="replace"))
PY
}
OUT=$(raw_req /health 16384)
assert_eq "$OUT" $'HTTP/1.1 200 OK\napplication/json\n-\n{"status":"ok","version":"0.1.0"}' "headers at the limit"
OUT=$(raw_req /health 16385)
assert_eq "$OUT" $'HTTP/1.1 431 Request Header Fields Too Large\napplication/json\n-\n{"message":"request line and headers of 16385 bytes in 2 fields exceed the limit of 16384 bytes and 100 fields"}' \
    "431 plain envelope"
grep -Eq '^GET /health 431 [0-9]+ [0-9]+\.[0-9]ms -$' "$SERVE_LOG" || fail "431 not logged: $(cat "$SERVE_LOG")"
pass
OUT=$(raw_req /health 2000 100)
assert_eq "$OUT" $'HTTP/1.1 200 OK\napplication/json\n-\n{"status":"ok","version":"0.1.0"}' "100 fields"
OUT=$(raw_req /health 2000 101)
assert_eq "$OUT" $'HTTP/1.1 431 Request Header Fields Too Large\napplication/json\n-\n{"message":"request line and headers of 2000 bytes in 101 fields exceed the limit of 16384 bytes and 100 fields"}' \
    "431 for 101 fields"
OUT=$(raw_req /api/v2/datasets/nothing 30000 2 'Origin: http://app.example')
{
    read -r line1
    read -r ctype
    read -r origin
    read -r body
} <<<"$OUT"
assert_eq "$line1 $ctype $origin" "HTTP/1.1 431 Request Header Fields Too Large application/json http://app.example" \
    "431 under /api/, with CORS"
assert_eq "$(jget "d['errorCode'],d['errorName'],d['parameters'],d['message']" <<<"$body")" \
    '["INVALID_ARGUMENT","RequestHeaderFieldsTooLarge",{"fields":3,"maxFields":100,"maxSizeBytes":16384,"sizeBytes":30000},"request line and headers of 30000 bytes in 3 fields exceed the limit of 16384 bytes and 100 fields"]' \
    "431 Foundry envelope"
# at the limit, a dataset route still answers (the response fits the connection's memory)
ok new hdr
OUT=$(raw_req /api/v2/datasets/hdr 16384 3 "Authorization: Bearer $ADMIN")
assert_eq "$(head -2 <<<"$OUT")" $'HTTP/1.1 200 OK\napplication/json' "dataset route at the header limit"
assert_eq "$(tail -1 <<<"$OUT" | jget "d['name']")" "hdr" "dataset answer at the header limit"
# beyond libmicrohttpd's per-connection memory (32 KiB) it answers with its own 431 page
STATUS=$(python3 - "$BASE" <<'PY'
import socket, sys
host, port = sys.argv[1][len("http://"):].split(":")
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200000 + b"\r\n\r\n")
print(s.recv(4096).split(b"\r\n")[0].decode())
PY
)
assert_eq "$STATUS" "HTTP/1.1 431 Request Header Fields Too Large" "header beyond the hard limit"
# an upload cut off half-way leaves nothing visible and no scratch body
ok new --files up
python3 - "$BASE" "$ADMIN" <<'PY'
import socket, sys, time
host, port = sys.argv[1][len("http://"):].split(":")
s = socket.create_connection((host, int(port)))
s.sendall(("POST /api/v2/datasets/up/files/cut.bin/upload HTTP/1.1\r\nHost: x\r\n"
           "Authorization: Bearer %s\r\nContent-Type: application/octet-stream\r\n"
           "Content-Length: 1000000\r\n\r\n" % sys.argv[2]).encode())
s.sendall(b"x" * 300000)
time.sleep(0.3)
s.close()
PY
sleep 0.3
ok --json files up
assert_eq "$OUT" "[]" "nothing visible after a cut-off upload"
ok --json txn list up
assert_eq "$OUT" "[]" "no transaction from a cut-off upload"
assert_eq "$(find .silt/tmp -name body | wc -l)" 0 "scratch body of the cut-off upload"
grep -Eq '^POST /api/v2/datasets/up/files/cut.bin/upload 0 0 [0-9.]+ms admin \(aborted\)$' "$SERVE_LOG" \
    || fail "cut-off upload not logged as aborted: $(tail -3 "$SERVE_LOG")"
pass
# the server and the CLI side by side: a commit by the CLI is in the next answer
# (views are cached per head block, so a new head is a new view)
expect_http 200 GET /api/v2/datasets/up/files
assert_eq "$HTTP_BODY" '{"data":[]}' "empty view over HTTP"
printf 'x' >side.txt
ok upload up side.txt
expect_http 200 GET /api/v2/datasets/up/files
assert_eq "$(jget "[f['path'] for f in d['data']]" <<<"$HTTP_BODY")" '["side.txt"]' "CLI commit seen by the server"
expect_http 200 GET /api/v2/datasets/up/files/side.txt/content
assert_eq "$HTTP_BODY" x "content"
ok branch create up b2
printf 'y' >side2.txt
ok upload up@b2 side2.txt
expect_http 200 GET "/api/v2/datasets/up/files?branchName=b2"
assert_eq "$(jget "[f['path'] for f in d['data']]" <<<"$HTTP_BODY")" '["side.txt","side2.txt"]' "branch view"
expect_http 200 GET /api/v2/datasets/up/files
assert_eq "$(jget "[f['path'] for f in d['data']]" <<<"$HTTP_BODY")" '["side.txt"]' "master view unchanged"
# the per-process caches (workspace, name/RID -> directory, chain state per
# head) never hide a change the CLI makes while the server runs
expect_http 200 GET /api/v2/datasets/up
RID=$(jget "d['rid']" <<<"$HTTP_BODY")
expect_http 200 GET "/api/v2/datasets/$RID"
assert_eq "$(jget "d['name']" <<<"$HTTP_BODY")" up "name by RID"
printf 'z' >side3.txt
ok upload up side3.txt
expect_http 200 GET "/api/v2/datasets/$RID/files"
assert_eq "$(jget "[f['path'] for f in d['data']]" <<<"$HTTP_BODY")" '["side.txt","side3.txt"]' "CLI commit seen by RID"
ok rename up up-renamed
expect_http 200 GET "/api/v2/datasets/$RID"
assert_eq "$(jget "d['name']" <<<"$HTTP_BODY")" up-renamed "rename seen by RID"
expect_http 404 GET /api/v2/datasets/up
assert_eq "$(jget "d['errorName']" <<<"$HTTP_BODY")" DatasetNotFound "old name after a rename"
expect_http 200 GET /api/v2/datasets/up-renamed
assert_eq "$(jget "d['rid']" <<<"$HTTP_BODY")" "$RID" "new name after a rename"
expect_http 200 GET "/api/v2/datasets/up-renamed/files?branchName=b2"
assert_eq "$(jget "[f['path'] for f in d['data']]" <<<"$HTTP_BODY")" '["side.txt","side2.txt"]' "branch after a rename"
ok new up --files
expect_http 200 GET /api/v2/datasets/up
NEW_RID=$(jget "d['rid']" <<<"$HTTP_BODY")
[ "$NEW_RID" != "$RID" ] || fail "the re-created name answers with the old RID"
pass
expect_http 200 GET /api/v2/datasets/up/files
assert_eq "$HTTP_BODY" '{"data":[]}' "the re-created dataset is empty"
ok delete up-renamed
expect_http 404 GET "/api/v2/datasets/$RID"
assert_eq "$(jget "d['errorName']" <<<"$HTTP_BODY")" DatasetNotFound "RID after a delete"
expect_http 404 GET "/api/v2/datasets/$RID/files/side.txt/content"
expect_http 404 GET /api/v2/datasets/up-renamed
ok delete up
expect_http 404 GET /api/v2/datasets/up
expect_http 404 GET "/api/v2/datasets/$NEW_RID"
# the caches validated by stat (a dataset's name, its layout check) keep only files
# unchanged for 2 s (coarse file times): let them settle, then change them by the CLI
ok new settled --files
ok upload settled side.txt
sleep 2.5
expect_http 200 GET /api/v2/datasets/settled
RID=$(jget "d['rid']" <<<"$HTTP_BODY")
expect_http 200 GET "/api/v2/datasets/$RID/files/side.txt/content"
# a settled head (refs/head, stat-validated) moved by a CLI commit
printf 'w' >side4.txt
ok upload settled side4.txt
expect_http 200 GET "/api/v2/datasets/$RID/files/side4.txt/content"
assert_eq "$HTTP_BODY" w "CLI commit on a settled head"
sleep 2.5
expect_http 200 GET "/api/v2/datasets/$RID/files/side4.txt/content"
printf 'v' >side4.txt
ok upload settled side4.txt
expect_http 200 GET "/api/v2/datasets/$RID/files/side4.txt/content"
assert_eq "$HTTP_BODY" v "second CLI commit on a settled head"
ok rename settled settled2
expect_http 200 GET "/api/v2/datasets/$RID"
assert_eq "$(jget "d['name']" <<<"$HTTP_BODY")" settled2 "rename of a settled name seen by RID"
expect_http 404 GET /api/v2/datasets/settled
sleep 2.5
expect_http 200 GET "/api/v2/datasets/$RID"
assert_eq "$(jget "d['name']" <<<"$HTTP_BODY")" settled2 "settled new name"
DSDIR=$(dirname "$(grep -lx settled2 .silt/datasets/*/info/alias)")
DSDIR=${DSDIR%/info}
mv "$DSDIR/blocks" "$DSDIR/blocks.real"
ln -s blocks.real "$DSDIR/blocks"
expect_http 500 GET "/api/v2/datasets/$RID"
assert_eq "$(jget "d['message']" <<<"$HTTP_BODY")" \
    "$T_DIR/$DSDIR/blocks: is a symbolic link; silt does not follow symbolic links inside a dataset (replace it with a real directory)" \
    "a symbolic link put into a settled dataset is refused at once"
rm "$DSDIR/blocks"
mv "$DSDIR/blocks.real" "$DSDIR/blocks"
expect_http 200 GET "/api/v2/datasets/$RID/files/side.txt/content"
assert_eq "$HTTP_BODY" x "content after the link is gone"
# info/ records (here the parentFolderRid of info/foundry.json) are stat-validated
# too: a record replaced, created or removed is seen by the next request
folder() { expect_http 200 GET "/api/v2/datasets/$RID"; jget "d['parentFolderRid']" <<<"$HTTP_BODY"; }
assert_eq "$(folder)" ri.silt.main.folder.root "no folder recorded"
printf '{"parentFolderRid": "ri.test.folder.one"}' >fj && mv fj "$DSDIR/info/foundry.json"
assert_eq "$(folder)" ri.test.folder.one "a record created"
sleep 2.5
assert_eq "$(folder)" ri.test.folder.one "a settled record"
printf '{"parentFolderRid": "ri.test.folder.two"}' >fj && mv fj "$DSDIR/info/foundry.json"
assert_eq "$(folder)" ri.test.folder.two "a settled record replaced"
sleep 2.5
assert_eq "$(folder)" ri.test.folder.two "the replacement settled"
rm "$DSDIR/info/foundry.json"
assert_eq "$(folder)" ri.silt.main.folder.root "a settled record removed"
ok delete settled2
expect_http 404 GET "/api/v2/datasets/$RID"
# the workspace itself moved away, then replaced by another one: the cached
# workspace (validated by one stat of .silt/datasets) never hides either
ok new ws-old --files
expect_http 200 GET /api/v2/datasets/ws-old
mv .silt .silt.away
expect_http 500 GET /api/v2/datasets/ws-old
assert_eq "$(jget "d['message']" <<<"$HTTP_BODY")" "$T_DIR/.silt: no such directory" "workspace moved away"
ok init
ok new ws-new --files
expect_http 404 GET /api/v2/datasets/ws-old
expect_http 200 GET /api/v2/datasets/ws-new
rm -rf .silt
mv .silt.away .silt
expect_http 200 GET /api/v2/datasets/ws-old
expect_http 404 GET /api/v2/datasets/ws-new
serve_stop
# a client that sends nothing is disconnected after --connection-timeout
serve_start --connection-timeout 1
python3 - "$BASE" <<'PY' || fail "an idle connection was not closed after the timeout"
import socket, sys, time
host, port = sys.argv[1][len("http://"):].split(":")
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")   # headers never finished
s.settimeout(5)
t = time.time()
assert s.recv(100) == b""                            # closed by the server
assert 0.5 < time.time() - t < 4, time.time() - t
PY
pass
expect_http 200 GET /health

# --- graceful stop: exit 0, a log line, the port is free again ----------------------
serve_stop
grep -q '^silt serve: SIGTERM received, stopping$' "$SERVE_LOG" || fail "no stop line: $(cat "$SERVE_LOG")"
grep -q '^silt serve: stopped$' "$SERVE_LOG" || fail "not stopped cleanly"
pass
# SIGINT too, with a keep-alive connection open
serve_start
python3 - "$BASE" <<'PY' &
import socket, sys, time
host, port = sys.argv[1][len("http://"):].split(":")
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
s.recv(4096)
time.sleep(3)
PY
IDLE=$!
sleep 0.3
kill -INT "$SERVE_PID"
START=$(date +%s%N)
wait "$SERVE_PID" || fail "silt serve exited with $? after SIGINT"
END=$(date +%s%N)
[ $(((END - START) / 1000000)) -lt 5000 ] || fail "stop took $(((END - START) / 1000000)) ms"
pass
grep -q '^silt serve: SIGINT received, stopping$' "$SERVE_LOG" || fail "no SIGINT line"
pass
wait "$IDLE" 2>/dev/null || true

done_tests
