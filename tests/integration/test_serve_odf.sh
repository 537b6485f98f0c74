#!/usr/bin/env bash
# test_serve_odf.sh — the ODF node routes of `silt serve` under /odf/
# (docs/server.md "ODF node routes"): the Simple Transfer Protocol read side
# checked by an independent walker (curl + SHA3-256 in Python) that rebuilds
# the dataset in a fresh workspace which `silt verify` accepts and which
# answers the same rows; HEAD vs GET; push ingest of every media type into a
# CSV push source (its schema kept), 415, bad event time, bad data (400,
# nothing committed); tail and metadata shapes; /odf/query with pinned
# heads, every confinement escape, the timeout and the memory limit;
# /odf/info; 401 / 404 / 405 envelopes. Exact bodies throughout (system
# times are fixed with SILT_FAKE_SYSTEM_TIME).
source "$(dirname "$0")/lib.sh"

use_soft_failures

export SILT_FAKE_SYSTEM_TIME=2024-03-01T12:00:00Z
ST=2024-03-01T12:00:00Z
ok init
add_ds cities <<'EOF'
    - kind: SetInfo
      description: Cities of the test
      keywords: [geo, test]
    - kind: SetLicense
      shortName: CC0
      name: Creative Commons Zero
      websiteUrl: https://creativecommons.org/publicdomain/zero/1.0/
    - kind: SetAttachments
      attachments:
        kind: Embedded
        items:
          - path: README.md
            content: "# Cities"
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT"]
      merge:
        kind: Ledger
        primaryKey: [city]
EOF
printf 'city,population\nA,1\nB,2\n' >a.csv
ok ingest cities a.csv --event-time 2020-01-01T00:00:00Z
ID=$(info cities 'd["id"]')
HEAD0=$(head_of cities)

SILT_QUERY_TIMEOUT_MS=1500 SILT_QUERY_MEMORY_LIMIT=64M serve_start

# body EXPECTED LABEL: the last response's body must be exactly EXPECTED
body() { assert_eq "$HTTP_BODY" "$1" "$2"; }
# ctype EXPECTED: the last response's Content-Type
ctype() { assert_eq "$(printf '%s\n' "$HTTP_HEADERS" | tr -d '\r' | sed -n 's/^Content-Type: //Ip')" "$1" "content type"; }
header() { printf '%s\n' "$HTTP_HEADERS" | tr -d '\r' | sed -n "s/^$1: //Ip"; }
# head_raw PATH: a raw HEAD request (HTTP/1.1, Connection: close) read to
# the end of the connection; prints "STATUS CONTENT-LENGTH BODY-BYTES"
head_raw() {
    python3 - "$BASE" "$1" "$ADMIN" <<'PY'
import socket, sys, urllib.parse
u = urllib.parse.urlsplit(sys.argv[1])
s = socket.create_connection((u.hostname, u.port))
s.sendall(("HEAD %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n" % (sys.argv[2], sys.argv[3])).encode())
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
head, _, body = data.partition(b"\r\n\r\n")
lines = head.decode().split("\r\n")
cl = [l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("content-length:")]
print(lines[0].split()[1], cl[0] if cl else "-", len(body))
PY
}

# ---- auth, routes, methods -----------------------------------------------------
TOKEN=none expect_http 401 GET /odf/info
body '{"message":"authentication required: send '"'"'Authorization: Bearer <token>'"'"'"}' "no token"
TOKEN=wrong expect_http 401 GET /odf/cities/refs/head
body '{"message":"invalid or expired token"}' "wrong token"
expect_http 405 POST /odf/cities/tail
body '{"message":"POST is not allowed on /odf/cities/tail (allowed: GET, HEAD)"}' "405"
expect_http 405 GET /odf/cities/ingest
expect_http 404 GET /odf/cities/nothing
body '{"message":"no route for GET /odf/cities/nothing"}' "404 route"

# ---- /odf/info --------------------------------------------------------------------
expect_http 200 GET /odf/info
body '{"version":"0.1.0","datasets":[{"name":"cities","id":"'"$ID"'","kind":"Root"}]}' "info"
ctype application/json

# ---- Simple Transfer Protocol: refs/head, objects, HEAD -------------------------------
expect_http 200 GET /odf/cities/refs/head
body "$HEAD0" "refs/head"
ctype text/plain
assert_eq "$(wc -c <"$T_DIR/.hbody")" 69 "refs/head has no trailing newline"
expect_http 200 GET "/odf/$ID/refs/head"
body "$HEAD0" "refs/head by did"
assert_eq "$(head_raw /odf/cities/refs/head)" "200 69 0" "HEAD refs/head: status, Content-Length, no body"

DS_DIR="$T_DIR/.silt/datasets/${ID#did:odf:}"
expect_http 200 GET "/odf/cities/blocks/$HEAD0"
ctype application/octet-stream
cmp -s "$T_DIR/.hbody" "$DS_DIR/blocks/$HEAD0" && pass || fail "block bytes differ from the stored file"
SIZE=$(stat -c %s "$DS_DIR/blocks/$HEAD0")
assert_eq "$(header Content-Length)" "$SIZE" "GET block Content-Length"
assert_eq "$(head_raw "/odf/cities/blocks/$HEAD0")" "200 $SIZE 0" "HEAD block: status, Content-Length, no body"
expect_http 200 HEAD "/odf/cities/blocks/$HEAD0" -I
ctype application/octet-stream

ABSENT=f1620$(printf '0%.0s' $(seq 64))
expect_http 404 GET "/odf/cities/blocks/$ABSENT"
body '{"message":"blocks/'"$ABSENT"' not found in dataset '"'"'cities'"'"'"}' "absent block"
assert_eq "$(head_raw "/odf/cities/data/$ABSENT")" "404 $(printf '{"message":"data/%s not found in dataset '"'"'cities'"'"'"}' "$ABSENT" | wc -c) 0" "HEAD absent data object"
expect_http 404 GET "/odf/cities/checkpoints/$ABSENT"
body '{"message":"checkpoints/'"$ABSENT"' not found in dataset '"'"'cities'"'"'"}' "absent checkpoint"
expect_http 404 GET "/odf/nosuch/refs/head"
body '{"message":"dataset '"'"'nosuch'"'"' not found"}' "unknown dataset"
expect_http 404 GET "/odf/nosuch/blocks/$HEAD0"
body '{"message":"dataset '"'"'nosuch'"'"' not found"}' "unknown dataset, block"
expect_http 404 GET "/odf/cities@master/refs/head"
body '{"message":"dataset '"'"'cities@master'"'"' not found"}' "a branch ref is not a dataset"
UPPER=$(printf '%s' "$HEAD0" | tr a-f A-F | sed 's/^F1620/f1620/')
for bad in "$UPPER" f1620 "${HEAD0}00" "..%2F..%2Fetc%2Fpasswd" "%2Fetc%2Fpasswd" "f1620${HEAD0#f1620}x"; do
    expect_http 400 GET "/odf/cities/blocks/$bad"
    case "$HTTP_BODY" in
    '{"message":"invalid object hash '*"': expected f1620 and 64 lowercase hex digits\"}") pass ;;
    *) fail "bad hash '$bad': $HTTP_BODY" ;;
    esac
done
expect_http 400 GET "/odf/cities/data/%2e%2e"
body '{"message":"malformed request target: bad %-escape, '"'"'.'"'"' or '"'"'..'"'"' segment, NUL byte or invalid UTF-8"}' "%2e%2e"

# ---- the independent walker ---------------------------------------------------------
# walk NAME DEST: fetches refs/head, then every block back along
# prevBlockHash (each block's SHA3-256 multihash must be its name), and every
# data / checkpoint object the blocks name (hash checked too), into DEST in
# the ODF layout.
walk() {
    local name=$1 dest=$2 h prev
    mkdir -p "$dest/blocks" "$dest/data" "$dest/checkpoints" "$dest/refs/branches" "$dest/info"
    http GET "/odf/$name/refs/head"
    [ "$HTTP_STATUS" = 200 ] || fail "walk: refs/head $HTTP_STATUS"
    printf '%s' "$HTTP_BODY" >"$dest/refs/head"
    printf '%s' "$name" >"$dest/info/alias"
    h=$HTTP_BODY
    WALKED=0
    while [ -n "$h" ]; do
        fetch_object "$name" blocks "$h" "$dest"
        WALKED=$((WALKED + 1))
        "$SILT" block decode "$dest/blocks/$h" >"$T_DIR/.blk.yaml" || fail "walk: block $h does not decode"
        for obj in $(sed -n 's/^ *physicalHash: *//p' "$T_DIR/.blk.yaml"); do
            if grep -q "newCheckpoint:" "$T_DIR/.blk.yaml" && [[ "$(grep -A3 "newCheckpoint:" "$T_DIR/.blk.yaml")" == *"$obj"* ]]; then
                fetch_object "$name" checkpoints "$obj" "$dest"
            else
                fetch_object "$name" data "$obj" "$dest"
            fi
        done
        prev=$(sed -n 's/^ *prevBlockHash: *//p' "$T_DIR/.blk.yaml" | sed -n 1p)
        h=$prev
    done
}
fetch_object() {
    local name=$1 kind=$2 h=$3 dest=$4
    curl -sS -f -H "Authorization: Bearer $ADMIN" -o "$dest/$kind/$h" "$BASE/odf/$name/$kind/$h" ||
        fail "walk: GET $kind/$h failed"
    local got
    got=$(python3 -c 'import hashlib,sys; print("f1620"+hashlib.sha3_256(open(sys.argv[1],"rb").read()).hexdigest())' "$dest/$kind/$h")
    assert_eq "$got" "$h" "walk: $kind/$h hashes to its name"
}

# a second slice and a checkpoint-free chain of 6 blocks
printf 'city,population\nC,3\n' >c.csv
ok ingest cities c.csv --event-time 2020-01-02T00:00:00Z
mkdir -p "$T_DIR/copy"
(cd "$T_DIR/copy" && "$SILT" init >/dev/null)
COPY_DS="$T_DIR/copy/.silt/datasets/${ID#did:odf:}"
walk cities "$COPY_DS"
assert_eq "$WALKED" "$(info cities 'd["blocks"]')" "walker fetched every block"
ls "$COPY_DS/data" | sort >"$T_DIR/copy.data"
ls "$DS_DIR/data" | sort >"$T_DIR/orig.data"
cmp -s "$T_DIR/copy.data" "$T_DIR/orig.data" && pass || fail "walker fetched other data objects: $(cat "$T_DIR/copy.data")"
(cd "$T_DIR/copy" && "$SILT" verify cities >"$T_DIR/.v" 2>&1) && pass || fail "silt verify of the copy: $(cat "$T_DIR/.v")"
Q='SELECT "offset", op, system_time, event_time, city, population FROM cities ORDER BY "offset"'
assert_eq "$(cd "$T_DIR/copy" && "$SILT" sql "$Q" --format csv)" "$("$SILT" sql "$Q" --format csv)" "the copy answers the same rows"
assert_eq "$(cd "$T_DIR/copy" && "$SILT" info cities --json | jget 'd["head"]')" "$(head_of cities)" "the copy's head"

# ---- POST /odf/{ds}/ingest -----------------------------------------------------------
ds_state() { printf '%s\n%s\n' "$(tree_sum "$DS_DIR/blocks")" "$(cat "$DS_DIR/refs/head")"; }
# ingest_ok MEDIA FILE: 200 with the new offsets
ingest() { http POST "/odf/cities/ingest$3" -H "Content-Type: $1" --data-binary "@$2" "${@:4}"; }
SCHEMA_BEFORE=$("$SILT" schema cities)

printf 'city,population\nD,4\n' >d.csv
ingest text/csv d.csv '' -H 'odf-event-time: 2021-01-01T00:00:00Z'
assert_eq "$HTTP_STATUS" 200 "ingest text/csv: $HTTP_BODY"
body '{"upToDate":false,"numRecords":1,"offsetInterval":{"start":3,"end":3},"head":"'"$(head_of cities)"'","watermark":"2021-01-01T00:00:00Z"}' "ingest text/csv"
printf '[{"city": "E", "population": 5}]' >e.json
ingest application/json e.json '' -H 'odf-event-time: 2021-01-02T00:00:00Z'
body '{"upToDate":false,"numRecords":1,"offsetInterval":{"start":4,"end":4},"head":"'"$(head_of cities)"'","watermark":"2021-01-02T00:00:00Z"}' "ingest application/json"
printf '{"city": "F", "population": 6}\n{"city": "G", "population": 7}\n' >fg.ndjson
ingest 'application/x-ndjson; charset=utf-8' fg.ndjson '?sourceName=default' -H 'odf-event-time: 2021-01-03T00:00:00Z'
body '{"upToDate":false,"numRecords":2,"offsetInterval":{"start":5,"end":6},"head":"'"$(head_of cities)"'","watermark":"2021-01-03T00:00:00Z"}' "ingest application/x-ndjson"
printf '{"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {"city": "H", "population": 8}, "geometry": null}]}' >h.geojson
ingest application/geo+json h.geojson '' -H 'odf-event-time: 2021-01-04T00:00:00Z'
body '{"upToDate":false,"numRecords":1,"offsetInterval":{"start":7,"end":7},"head":"'"$(head_of cities)"'","watermark":"2021-01-04T00:00:00Z"}' "ingest application/geo+json"
printf '{"type": "Feature", "properties": {"city": "I", "population": 9}, "geometry": null}\n' >i.ndgeojson
ingest application/x-ndgeojson i.ndgeojson '' -H 'odf-event-time: 2021-01-05T00:00:00Z'
body '{"upToDate":false,"numRecords":1,"offsetInterval":{"start":8,"end":8},"head":"'"$(head_of cities)"'","watermark":"2021-01-05T00:00:00Z"}' "ingest application/x-ndgeojson"
ok sql "SELECT 'J' AS city, CAST(10 AS BIGINT) AS population" --format parquet --output "$T_DIR/j.parquet"
ingest application/vnd.apache.parquet j.parquet '' -H 'odf-event-time: 2021-01-06T00:00:00Z'
body '{"upToDate":false,"numRecords":1,"offsetInterval":{"start":9,"end":9},"head":"'"$(head_of cities)"'","watermark":"2021-01-06T00:00:00Z"}' "ingest application/vnd.apache.parquet"
# no Content-Type: the source's own read step (CSV with a header)
printf 'city,population\nK,11\n' >k.csv
http POST /odf/cities/ingest -H 'Content-Type:' --data-binary @k.csv -H 'odf-event-time: 2021-01-07T00:00:00Z'
body '{"upToDate":false,"numRecords":1,"offsetInterval":{"start":10,"end":10},"head":"'"$(head_of cities)"'","watermark":"2021-01-07T00:00:00Z"}' "ingest without Content-Type"
# nothing new
ingest text/csv k.csv '' -H 'odf-event-time: 2021-01-07T00:00:00Z'
body '{"upToDate":true}' "ingest of records already there"
assert_eq "$("$SILT" schema cities)" "$SCHEMA_BEFORE" "every media type kept the source's schema"
expect_sql 'SELECT "offset", event_time, city, population FROM cities ORDER BY "offset"' "rows after the HTTP ingests" <<'EOF'
offset,event_time,city,population
0,2020-01-01T00:00:00Z,A,1
1,2020-01-01T00:00:00Z,B,2
2,2020-01-02T00:00:00Z,C,3
3,2021-01-01T00:00:00Z,D,4
4,2021-01-02T00:00:00Z,E,5
5,2021-01-03T00:00:00Z,F,6
6,2021-01-03T00:00:00Z,G,7
7,2021-01-04T00:00:00Z,H,8
8,2021-01-05T00:00:00Z,I,9
9,2021-01-06T00:00:00Z,J,10
10,2021-01-07T00:00:00Z,K,11
EOF

# refusals: nothing committed
BEFORE=$(ds_state)
WS_BEFORE=$(ws_snapshot)
ingest text/plain k.csv ''
assert_eq "$HTTP_STATUS" 415 "text/plain"
body '{"message":"unsupported media type '"'"'text/plain'"'"' (use one of text/csv, application/json, application/x-ndjson, application/geo+json, application/x-ndgeojson, application/vnd.apache.parquet)"}' "415"
http POST /odf/cities/ingest --data-binary @k.csv
assert_eq "$HTTP_STATUS" 415 "curl's default form type is not a data format"
ingest text/csv k.csv '' -H 'odf-event-time: yesterday'
assert_eq "$HTTP_STATUS" 400 "bad odf-event-time"
body '{"message":"odf-event-time: not an RFC 3339 time: '"'"'yesterday'"'"'"}' "bad odf-event-time"
ingest text/csv k.csv '?sourceName=nosuch'
assert_eq "$HTTP_STATUS" 400 "unknown sourceName: $HTTP_BODY"
case "$HTTP_BODY" in *nosuch*) pass ;; *) fail "unknown sourceName message: $HTTP_BODY" ;; esac
printf 'city,population\nL,12\nM,many\n' >bad.csv
ingest text/csv bad.csv ''
assert_eq "$HTTP_STATUS" 400 "bad data"
body '{"message":"ingest into '"'"'cities'"'"': request body: row 2 (line 3), column '"'"'population'"'"': cannot convert '"'"'many'"'"' to BIGINT"}' "bad data names row and column"
printf '{"city": "N", "population": "lots"}\n' >bad.ndjson
ingest application/x-ndjson bad.ndjson ''
assert_eq "$HTTP_STATUS" 400 "bad ndjson: $HTTP_BODY"
expect_http 404 POST /odf/nosuch/ingest -H 'Content-Type: text/csv' --data-binary @k.csv
body '{"message":"dataset '"'"'nosuch'"'"' not found"}' "ingest into an unknown dataset"
assert_eq "$(ds_state)" "$BEFORE" "refused ingests left the chain as it was"
ws_compare "$WS_BEFORE" "refused ingests"
HEAD1=$(head_of cities)

# ---- GET /odf/{ds}/tail ----------------------------------------------------------------
row() { printf '{"offset":%s,"op":0,"system_time":"%s","event_time":"%s","city":"%s","population":%s}' "$1" "$ST" "$2" "$3" "$4"; }
expect_http 200 GET '/odf/cities/tail?limit=2'
body '{"dataFormat":"JsonAoS","data":['"$(row 9 2021-01-06T00:00:00Z J 10),$(row 10 2021-01-07T00:00:00Z K 11)"']}' "tail limit=2"
ctype application/json
expect_http 200 GET '/odf/cities/tail?limit=2&skip=1'
body '{"dataFormat":"JsonAoS","data":['"$(row 8 2021-01-05T00:00:00Z I 9),$(row 9 2021-01-06T00:00:00Z J 10)"']}' "tail skip=1"
expect_http 200 GET '/odf/cities/tail?limit=5&skip=9'
body '{"dataFormat":"JsonAoS","data":['"$(row 0 2020-01-01T00:00:00Z A 1),$(row 1 2020-01-01T00:00:00Z B 2)"']}' "tail skip past most"
expect_http 200 GET '/odf/cities/tail?skip=11'
body '{"dataFormat":"JsonAoS","data":[]}' "tail skip everything"
expect_http 200 GET '/odf/cities/tail?limit=2&dataFormat=JsonSoA'
body '{"dataFormat":"JsonSoA","data":{"offset":[9,10],"op":[0,0],"system_time":["'"$ST"'","'"$ST"'"],"event_time":["2021-01-06T00:00:00Z","2021-01-07T00:00:00Z"],"city":["J","K"],"population":[10,11]}}' "tail JsonSoA"
expect_http 200 GET '/odf/cities/tail?limit=1&dataFormat=json-aoa'
body '{"dataFormat":"JsonAoA","data":[[10,0,"'"$ST"'","2021-01-07T00:00:00Z","K",11]]}' "tail JsonAoA (alias)"
expect_http 200 GET '/odf/cities/tail'
assert_eq "$(printf '%s' "$HTTP_BODY" | jget 'len(d["data"])')" 11 "tail default limit 100 returns every record"
expect_http 400 GET '/odf/cities/tail?dataFormat=Csv'
body '{"message":"dataFormat '"'"'Csv'"'"': expected JsonAoS, JsonSoA or JsonAoA"}' "tail bad dataFormat"
expect_http 400 GET '/odf/cities/tail?limit=-1'
body '{"message":"limit '"'"'-1'"'"': expected a count 0..100000000"}' "tail bad limit"
expect_http 404 GET '/odf/nosuch/tail'

# ---- GET /odf/{ds}/metadata --------------------------------------------------------------
expect_http 200 GET /odf/cities/metadata
body '{"output":{"seed":{"datasetId":"'"$ID"'","datasetKind":"Root"}}}' "metadata default: seed"
expect_http 200 GET '/odf/cities/metadata?include=info,license,attachments,vocab,refs'
body '{"output":{"attachments":{"kind":"Embedded","items":[{"path":"README.md","content":"# Cities"}]},"license":{"shortName":"CC0","name":"Creative Commons Zero","websiteUrl":"https://creativecommons.org/publicdomain/zero/1.0/"},"info":{"description":"Cities of the test","keywords":["geo","test"]},"vocab":{"offsetColumn":"offset","operationTypeColumn":"op","systemTimeColumn":"system_time","eventTimeColumn":"event_time"},"refs":[{"name":"head","blockHash":"'"$HEAD1"'"}]}}' "metadata info,license,attachments,vocab,refs"
expect_http 200 GET '/odf/cities/metadata?include=schema'
body '{"output":{"schema":'"$("$SILT" schema cities --json | python3 -c 'import json,sys;print(json.dumps(json.load(sys.stdin),separators=(",",":")))')"',"schemaFormat":"OdfJson"}}' "metadata schema"
expect_http 400 GET '/odf/cities/metadata?include=seed,owner'
body '{"message":"include '"'"'owner'"'"': expected a comma-separated set of attachments, info, license, refs, schema, seed, vocab"}' "metadata bad include"
expect_http 404 GET /odf/nosuch/metadata

# ---- /odf/query ------------------------------------------------------------------------
input() { printf '{"query":%s,"queryDialect":"SqlDuckDb","dataFormat":"%s","skip":%s,"limit":%s,"datasets":[%s]}' "$1" "$2" "$3" "$4" "$5"; }
DSE='{"alias":"cities","blockHash":"'"$HEAD1"'","id":"'"$ID"'"}'
QS='SELECT city, population FROM cities ORDER BY "offset" DESC'
QJ=$(python3 -c 'import json,sys;print(json.dumps(sys.argv[1]))' "$QS")
expect_http 200 GET /odf/query -G --data-urlencode "query=$QS" --data-urlencode limit=2
body '{"input":'"$(input "$QJ" JsonAoS 0 2 "$DSE")"',"output":{"dataFormat":"JsonAoS","data":[{"city":"K","population":11},{"city":"J","population":10}]}}' "GET query"
ctype application/json
expect_http 200 GET /odf/query -G --data-urlencode "query=$QS" --data-urlencode limit=2 --data-urlencode skip=9 --data-urlencode format=JsonSoA
body '{"input":'"$(input "$QJ" JsonSoA 9 2 "$DSE")"',"output":{"dataFormat":"JsonSoA","data":{"city":["B","A"],"population":[2,1]}}}' "GET query skip, JsonSoA"
# pinned heads: a new ingest does not change the pinned answer
printf 'city,population\nZ,26\n' >z.csv
ok ingest cities z.csv --event-time 2022-01-01T00:00:00Z
HEAD2=$(head_of cities)
Q2='SELECT count(*) AS n, max(population) AS top FROM cities'
Q2J=$(python3 -c 'import json,sys;print(json.dumps(sys.argv[1]))' "$Q2")
expect_http 200 POST /odf/query -H 'Content-Type: application/json' \
    -d '{"query":'"$Q2J"',"dataFormat":"JsonAoA","datasets":[{"alias":"cities","blockHash":"'"$HEAD1"'"}]}'
body '{"input":'"$(input "$Q2J" JsonAoA 0 100 "$DSE")"',"output":{"dataFormat":"JsonAoA","data":[[11,11]]}}' "POST query pinned at HEAD1"
expect_http 200 POST /odf/query -H 'Content-Type: application/json' -d '{"query":'"$Q2J"'}'
body '{"input":'"$(input "$Q2J" JsonAoS 0 100 '{"alias":"cities","blockHash":"'"$HEAD2"'","id":"'"$ID"'"}')"',"output":{"dataFormat":"JsonAoS","data":[{"n":12,"top":26}]}}' "POST query at the head echoes it"
# the echoed input reproduces the answer
ECHO=$(printf '%s' "$HTTP_BODY" | jget 'd["input"]')
expect_http 200 POST /odf/query -H 'Content-Type: application/json' -d "$ECHO"
body '{"input":'"$(input "$Q2J" JsonAoS 0 100 '{"alias":"cities","blockHash":"'"$HEAD2"'","id":"'"$ID"'"}')"',"output":{"dataFormat":"JsonAoS","data":[{"n":12,"top":26}]}}' "the echoed input reproduces the query"
expect_http 200 POST /odf/query -H 'Content-Type: application/json' -d '{"query":"SELECT 1 AS one","include":["Input"]}'
body '{"input":'"$(input '"SELECT 1 AS one"' JsonAoS 0 100 '')"',"output":{"dataFormat":"JsonAoS","data":[{"one":1}]}}' "a query over no dataset"

# bad requests
qerr() { # STATUS 'MESSAGE' CURL-ARGS…: a /odf/query refusal with an exact message
    local st=$1 msg=$2
    shift 2
    http "$@"
    assert_eq "$HTTP_STATUS" "$st" "query status for $*: $HTTP_BODY"
    body "$(python3 -c 'import json,sys;print(json.dumps({"message":sys.argv[1]},separators=(",",":"),ensure_ascii=False))' "$msg")" "query refusal $*"
}
post() { qerr "$1" "$2" POST /odf/query -H 'Content-Type: application/json' -d "$3"; }
getq() { qerr "$1" "$2" GET /odf/query -G --data-urlencode "query=$3"; }
post 400 'invalid JSON body: '"'"'['"'"' or '"'"'{'"'"' expected near '"'"'nope'"'"'' 'nope'
post 400 'the body must be a JSON object {query, …}' '["SELECT 1"]'
post 400 'query: missing' '{}'
post 400 "unknown field 'sql' (query, queryDialect, dataFormat, include, skip, limit, datasets)" '{"query":"SELECT 1","sql":"x"}'
post 400 "queryDialect 'SqlDataFusion' is not supported (silt runs SqlDuckDb)" '{"query":"SELECT 1","queryDialect":"SqlDataFusion"}'
post 400 "dataFormat 'Csv': expected JsonAoS, JsonSoA or JsonAoA" '{"query":"SELECT 1","dataFormat":"Csv"}'
post 400 'limit: expected a non-negative integer within bounds' '{"query":"SELECT 1","limit":-5}'
post 400 "include 'Proof': only Input is supported (and always included)" '{"query":"SELECT 1","include":["Proof"]}'
post 400 'datasets: every entry needs an alias' '{"query":"SELECT 1","datasets":[{"blockHash":"x"}]}'
post 400 "datasets: 'cities' has id $ID, not did:odf:other" '{"query":"SELECT 1 FROM cities","datasets":[{"alias":"cities","id":"did:odf:other"}]}'
post 400 "as-of 'nosuch=$HEAD1': the query does not use dataset 'nosuch'" '{"query":"SELECT 1","datasets":[{"alias":"nosuch","blockHash":"'"$HEAD1"'"}]}'
qerr 400 'query: missing (GET /odf/query?query=SELECT…)' GET /odf/query
getq 400 'sql: Parser Error: syntax error at or near "SELEC"' 'SELEC 1'
getq 400 'sql: Catalog Error: Table with name nosuch does not exist!' 'SELECT * FROM nosuch'
# confinement: every escape over HTTP
getq 400 'sql: reading files is not allowed: Cannot access file "/etc/passwd" - file system operations are disabled by configuration (query datasets by name)' "SELECT * FROM read_csv('/etc/passwd')"
getq 400 'sql: reading files is not allowed: Cannot access file "/etc/passwd" - file system operations are disabled by configuration (query datasets by name)' "SELECT * FROM read_text('/etc/passwd')"
getq 400 'sql: reading files is not allowed: Cannot access file "/*" - file system operations are disabled by configuration (query datasets by name)' "SELECT * FROM glob('/*')"
getq 400 'sql: reading files is not allowed: Cannot access file "'"$DS_DIR"'/info/alias" - file system operations are disabled by configuration (query datasets by name)' "SELECT * FROM read_csv('$DS_DIR/info/alias')"
getq 400 'sql: COPY is not allowed in a query (queries are read-only)' "COPY (SELECT * FROM cities) TO '$T_DIR/leak.csv'"
getq 400 'sql: EXPORT is not allowed in a query (queries are read-only)' "EXPORT DATABASE '$T_DIR/leak'"
getq 400 'sql: ATTACH is not allowed in a query (only SELECT queries are allowed)' "ATTACH '$T_DIR/x.db' AS x"
getq 400 'sql: INSTALL is not allowed in a query (only SELECT queries are allowed)' 'INSTALL httpfs'
getq 400 'sql: LOAD is not allowed in a query (only SELECT queries are allowed)' 'LOAD httpfs'
getq 400 'sql: SET is not allowed in a query (only SELECT queries are allowed)' "SET memory_limit = '100GB'"
getq 400 'sql: CREATE is not allowed in a query (only SELECT queries are allowed)' 'CREATE TABLE t AS SELECT 1'
getq 400 'sql: only one statement is allowed (got 2)' 'SELECT 1; SELECT 2'
getq 400 'sql: Catalog Error: Scalar Function with name getenv does not exist!' "SELECT getenv('HOME')"
[ ! -e "$T_DIR/leak.csv" ] && [ ! -e "$T_DIR/leak" ] && [ ! -e "$T_DIR/x.db" ] && pass || fail "an escape wrote a file"
# the limits (SILT_QUERY_TIMEOUT_MS=1500, SILT_QUERY_MEMORY_LIMIT=64M)
START=$(date +%s%N)
getq 400 'sql: query timed out after 1500 ms' 'SELECT count(*) FROM range(100000000) a, range(100000000) b'
ELAPSED=$((($(date +%s%N) - START) / 1000000))
[ "$ELAPSED" -lt 6000 ] && pass || fail "the timed-out query took $ELAPSED ms"
http GET /odf/query -G --data-urlencode 'query=SELECT list(i) AS l FROM range(50000000) t(i)'
assert_eq "$HTTP_STATUS" 400 "memory limit status: $HTTP_BODY"
case "$HTTP_BODY" in
'{"message":"sql: query exceeded the memory limit of 64 MiB: Out of Memory Error: '*) pass ;;
*) fail "memory limit message: $HTTP_BODY" ;;
esac
# the server still answers after both
expect_http 200 GET /odf/query -G --data-urlencode 'query=SELECT 2 AS two'

serve_stop
finish
