#!/usr/bin/env bash
# test_serve_ui.sh — the web UI's routes of `silt serve` (docs/ui.md,
# docs/server.md "Catalog routes"): the embedded static files at /ui/
# (bytes as in ui/ and the npm cache's uPlot, Content-Type, ETag and 304,
# the Content-Security-Policy, no token needed, SPA fallback, `/` redirect,
# HEAD, 405) and silt's catalog routes the UI reads (/odf/whoami,
# /odf/datasets, /odf/{ds}/summary, /odf/{ds}/history[/{hash}]) compared
# with the CLI's --json output, with paging, bad arguments and a token
# restricted to some datasets. The browser side is tests/ui/test_ui.sh.
source "$(dirname "$0")/lib.sh"

use_soft_failures

UI="$SILT_SOURCE_DIR/ui"
UPLOT="${SILT_NPM_CACHE:-$HOME/.cache/silt/npm}/node_modules/uplot/dist"
ok init
add_ds cities <<'EOF2'
    - kind: SetInfo
      description: Cities
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT"]
      merge:
        kind: Ledger
        primaryKey: [city]
EOF2
printf 'city,population\nA,1\nB,2\n' >a.csv
ok ingest cities a.csv --event-time 2020-01-01T00:00:00Z
printf 'city,population\nA,3\n' >b.csv
ok ingest cities b.csv --event-time 2021-01-01T00:00:00Z
ok new --files raw
mkdir -p in/d && printf 'hello\n' >in/d/x.txt && printf 'a,b\n1,2\n' >in/y.csv
ok upload raw in/d/x.txt in/y.csv --base in
ok new other
RO=$("$SILT" token create ro --dataset 'cit*' --dataset raw --expires-days 10 2>/dev/null)

serve_start

header() { printf '%s\n' "$HTTP_HEADERS" | tr -d '\r' | sed -n "s/^$1: //Ip"; }
body() { assert_eq "$HTTP_BODY" "$1" "$2"; }
etag_of() { printf '"%s"' "$(sha256sum "$1" | cut -c1-16)"; }
CSP="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

# ---- static files ------------------------------------------------------------------
# asset URLPATH FILE TYPE: GET without a token gives exactly FILE, TYPE, its ETag, the CSP
asset() {
    TOKEN=none expect_http 200 GET "$1"
    cmp -s "$T_DIR/.hbody" "$2" && pass || fail "GET $1: body differs from $2"
    assert_eq "$(header Content-Type)" "$3" "GET $1: Content-Type"
    assert_eq "$(header ETag)" "$(etag_of "$2")" "GET $1: ETag"
    assert_eq "$(header Content-Security-Policy)" "$CSP" "GET $1: CSP"
    assert_eq "$(header Cache-Control)" "no-cache" "GET $1: Cache-Control"
    assert_eq "$(header X-Content-Type-Options)" "nosniff" "GET $1: nosniff"
    assert_eq "$(header Content-Length)" "$(stat -c %s "$2")" "GET $1: Content-Length"
}
asset /ui/ "$UI/index.html" "text/html; charset=utf-8"
asset /ui "$UI/index.html" "text/html; charset=utf-8"
asset /ui/index.html "$UI/index.html" "text/html; charset=utf-8"
asset /ui/app.js "$UI/app.js" "text/javascript; charset=utf-8"
asset /ui/api.js "$UI/api.js" "text/javascript; charset=utf-8"
asset /ui/app.css "$UI/app.css" "text/css; charset=utf-8"
asset /ui/favicon.svg "$UI/favicon.svg" "image/svg+xml"
asset /ui/vendor/uPlot.iife.min.js "$UPLOT/uPlot.iife.min.js" "text/javascript; charset=utf-8"
asset /ui/vendor/uPlot.min.css "$UPLOT/uPlot.min.css" "text/css; charset=utf-8"
for f in "$UI"/*; do
    [ "$(basename "$f")" = index.html ] && continue
    TOKEN=none http GET "/ui/$(basename "$f")"
    cmp -s "$T_DIR/.hbody" "$f" && pass || fail "GET /ui/$(basename "$f"): not the file of ui/"
done
# SPA fallback: any other path under /ui/ is index.html
asset /ui/datasets/cities/history "$UI/index.html" "text/html; charset=utf-8"
asset /ui/signin "$UI/index.html" "text/html; charset=utf-8"
asset "/ui/no/such/file.js" "$UI/index.html" "text/html; charset=utf-8"
# a token is not needed, and a wrong one does not matter
TOKEN=wrong expect_http 200 GET /ui/app.js

# ETag and 304
E=$(etag_of "$UI/app.js")
: >"$T_DIR/.hbody" # curl leaves the file alone when no body comes
TOKEN=none expect_http 304 GET /ui/app.js -H "If-None-Match: $E"
body "" "304 has no body"
assert_eq "$(header ETag)" "$E" "304 carries the ETag"
TOKEN=none expect_http 304 GET /ui/app.js -H "If-None-Match: W/$E"
TOKEN=none expect_http 304 GET /ui/app.js -H "If-None-Match: \"0000000000000000\", $E"
TOKEN=none expect_http 304 GET /ui/app.js -H "If-None-Match: *"
TOKEN=none expect_http 200 GET /ui/app.js -H 'If-None-Match: "0000000000000000"'
TOKEN=none expect_http 200 GET /ui/app.js -H "If-None-Match: $(etag_of "$UI/index.html")"

# HEAD, other methods, `/`
TOKEN=none expect_http 200 HEAD /ui/app.css -I
assert_eq "$(header Content-Type)" "text/css; charset=utf-8" "HEAD: Content-Type"
TOKEN=none expect_http 405 POST /ui/app.js -d x
assert_eq "$(header Allow)" "GET, HEAD" "405 Allow"
body '{"message":"POST is not allowed on /ui/app.js (allowed: GET, HEAD)"}' "405 body"
: >"$T_DIR/.hbody"
TOKEN=none expect_http 302 GET /
assert_eq "$(header Location)" "/ui/" "/ redirects to /ui/"
body "" "redirect body"
TOKEN=none expect_http 405 DELETE /
TOKEN=none expect_http 200 GET /health
TOKEN=none expect_http 404 GET /nothing
body '{"message":"no route for GET /nothing"}' "unknown route still 404"

# ---- /odf/whoami -------------------------------------------------------------------
TOKEN=none expect_http 401 GET /odf/whoami
expect_http 200 GET /odf/whoami
body '{"name":"admin","scope":"admin","datasets":[],"expires":null}' "whoami admin"
EXP=$("$SILT" --json token list | jget 'd[0]["expires"]')
TOKEN=$RO expect_http 200 GET /odf/whoami
body '{"name":"ro","scope":"read","datasets":["cit*","raw"],"expires":"'"$EXP"'"}' "whoami restricted"

# ---- /odf/datasets and /odf/{ds}/summary: as silt --json list / files ---------------
python3 - "$SILT" >expected.json <<'PY'
import json, subprocess, sys
silt = sys.argv[1]
def js(*a):
    p = subprocess.run([silt, "--json", *a], capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else None
out = []
for d in sorted(js("list"), key=lambda d: d["name"]):
    f = js("files", d["name"])
    out.append({"name": d["name"], "id": d["id"], "rid": d["rid"], "kind": "Files" if f is not None else d["kind"],
                "head": d["head"], "blocks": d["blocks"],
                "sizeBytes": sum(x["size"] for x in f) if f is not None else d["dataSize"],
                "records": None if f is not None else d["records"], "files": len(f) if f is not None else None,
                "watermark": d["watermark"], "lastUpdated": d["lastSystemTime"]})
print(json.dumps(out, separators=(",", ":")))
PY
ALL=$(cat expected.json)
entry() { jget "[x for x in d if x[\"name\"]==\"$1\"][0]" <expected.json; }
canon() { jget 'd'; }
expect_http 200 GET /odf/datasets
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(printf '{"data":%s}' "$ALL" | canon)" "datasets = silt list"
expect_http 200 GET '/odf/datasets?pageSize=2'
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(jget '{"data":d[:2],"nextPageToken":d[1]["name"]}' <expected.json)" "datasets page 1"
TOK=$(printf '%s' "$HTTP_BODY" | jget 'd["nextPageToken"]')
expect_http 200 GET "/odf/datasets?pageSize=2&pageToken=$TOK"
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(jget '{"data":d[2:]}' <expected.json)" "datasets last page"
expect_http 400 GET '/odf/datasets?pageSize=0'
body '{"message":"invalid pageSize '"'"'0'"'"': expected 1..10000"}' "pageSize 0"
expect_http 400 GET '/odf/datasets?pageSize=10001'
expect_http 400 GET '/odf/datasets?pageSize=x'
expect_http 405 POST /odf/datasets -d '{}'
TOKEN=$RO expect_http 200 GET /odf/datasets
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(jget '{"data":[x for x in d if x["name"] in ("cities","raw")]}' <expected.json)" \
    "restricted token: only its datasets"
expect_http 200 GET /odf/raw/summary
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(entry raw)" "summary of a files dataset"
expect_http 200 GET /odf/cities/summary
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(entry cities)" "summary of a ledger"
TOKEN=$RO expect_http 404 GET /odf/other/summary
body '{"message":"dataset '"'"'other'"'"' not found"}' "hidden = absent"
expect_http 404 GET /odf/nope/summary
body '{"message":"dataset '"'"'nope'"'"' not found"}' "absent"

# ---- /odf/{ds}/history: as silt --json log --------------------------------------------
"$SILT" --json log cities >log.json
expect_http 200 GET /odf/cities/history
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(jget '{"data":d}' <log.json)" "history = silt log"
expect_http 200 GET '/odf/cities/history?pageSize=2'
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(jget '{"data":d[:2],"nextPageToken":str(d[1]["sequenceNumber"])}' <log.json)" "history page 1"
TOK=$(printf '%s' "$HTTP_BODY" | jget 'd["nextPageToken"]')
expect_http 200 GET "/odf/cities/history?pageSize=2&pageToken=$TOK"
assert_eq "$(printf '%s' "$HTTP_BODY" | canon)" "$(jget '{"data":d[2:4],"nextPageToken":str(d[3]["sequenceNumber"])}' <log.json)" "history page 2"
N=$(jget 'len(d)' <log.json)
expect_http 200 GET "/odf/cities/history?pageSize=1000&pageToken=$TOK"
assert_eq "$(printf '%s' "$HTTP_BODY" | jget 'len(d["data"]), "nextPageToken" in d')" "[$((N - 2)),false]" "history: the rest, no token"
expect_http 400 GET '/odf/cities/history?pageToken=x'
body '{"message":"invalid pageToken '"'"'x'"'"': expected a token from nextPageToken"}' "bad history token"
expect_http 400 GET '/odf/cities/history?pageSize=1001'
TOKEN=$RO expect_http 404 GET /odf/other/history

HEAD=$(head_of cities)
expect_http 200 GET "/odf/cities/history/$HEAD"
assert_eq "$(header Content-Type)" "application/yaml; charset=utf-8" "block YAML type"
assert_eq "$HTTP_BODY" "$("$SILT" log cities -n 1 --yaml | sed 1d)" "block YAML = silt log --yaml"
SEED=$(jget 'd[-1]["hash"]' <log.json)
expect_http 200 GET "/odf/cities/history/$SEED"
assert_eq "$HTTP_BODY" "$("$SILT" log cities --yaml | awk -v h="# block $SEED" '$0==h{p=1;next} /^# block/{p=0} p')" "seed block YAML"
expect_http 404 GET "/odf/cities/history/f1620$(printf '0%.0s' $(seq 64))"
body '{"message":"block '"'"'f1620'"$(printf '0%.0s' $(seq 64))"''"'"' is not in the chain of dataset '"'"'cities'"'"'"}' "unknown block"

# the ODF routes behind the catalog table still answer
expect_http 200 GET /odf/info
expect_http 200 GET /odf/cities/refs/head
body "$HEAD" "refs/head"
expect_http 404 GET /odf/cities/nothing
body '{"message":"no route for GET /odf/cities/nothing"}' "unknown /odf/ route"
expect_http 405 POST /odf/cities/history -d x

serve_stop
finish
