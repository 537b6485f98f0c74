#!/usr/bin/env bash
# test_pull_resources.sh — `silt pull` driven by Source + Flow resources
# (added with `silt add` next to a DatasetSnapshot that has no source events)
# against a real nginx on 127.0.0.1 and local folders:
#  - a Url source whose Authorization header carries a secret
#    (SILT_SECRET_* env): missing secret, wrong secret (HTTP 403), ingest,
#    caching (304 with no body -> "up to date"), Snapshot corrections, source
#    state under the Source's name;
#  - a secret in the URL query from .silt/secrets.yaml (mode 0600 enforced),
#    a failing request whose message shows the URL with the secret redacted;
#  - a FilesGlob source with a templated path and FromPath event times;
#  - targetRecordsPerSlice 3: 10 rows -> 4 AddData blocks (0..2, 3..5, 6..8,
#    9..9), and a -C/+C pair that is never split across blocks;
#  - a dataset with both a legacy SetPollingSource and a Flow: the Flow wins
#    (warning on stderr); `silt pull --all` includes flow targets;
#  - no secret value anywhere in stderr, `silt log --yaml` or the workspace
#    files (except secrets.yaml itself).
source "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || { echo "$T_NAME: nginx not installed (scripts/bootstrap.sh)" >&2; exit 1; }


TOKEN='tok-S3cr3t-4a7f'      # the header secret
WRONG='tok-Wr0ng-9c1e'       # a wrong one (also must never be shown)
QKEY='qk/Secret+9=z'         # the query secret (URL-encoded in the URL)
QKEY_ENC='qk%2FSecret%2B9%3Dz'
PIPEPAT='PIPE-S3cret-77'      # a secret rendered into a Pipe command

# ---- nginx --------------------------------------------------------------------
WWW="$T_DIR/www"
NG="$T_DIR/nginx"
mkdir -p "$WWW/private" "$WWW/q" "$NG/logs"
PORT=$(free_port)
nginx_write_conf "\$status \$body_bytes_sent \$uri" <<CONF
        location /private/ {
            if (\$http_authorization != "Bearer $TOKEN") { return 403; }
        }
        location /q/ {
            if (\$arg_key != "$QKEY_ENC") { return 401; }
        }
CONF
nginx_start
# last access log line: "STATUS BYTES URI"
last_access() { tail -n 1 "$NG/access.log"; }

# no secret in the last command's stdout/stderr
no_secret() {
    local s
    for s in "$TOKEN" "$WRONG" "$QKEY" "$QKEY_ENC" "$PIPEPAT"; do
        case "$OUT$ERR" in *"$s"*) fail "secret leaked ($1): $OUT $ERR" ;; esac
    done
    pass
}
root_ds() { printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Root\n  metadata: []\n' "$1"; }

ok init

# ---- Url source with a secret header (SILT_SECRET_* env) ---------------------------
printf 'id,name,v\n1,a,10\n2,b,20\n3,c,30\n' >"$WWW/private/rates.csv"
touch -d '2021-01-01 00:00:00 UTC' "$WWW/private/rates.csv"
{
    root_ds rates
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: rates-src
spec:
  config:
    token: SecretSet:bank#token
  ingress:
    kind: Url
    url: $BASE/private/rates.csv
    headers:
      - name: Authorization
        value: "Bearer \${{ config.token }}"
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT, name STRING, v BIGINT]
  merge:
    kind: Snapshot
    primaryKey: [id]
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: rates-flow
spec:
  target: Dataset:rates
  triggers:
    - kind: Schedule
      cron: "0 * * * *"
  tasks:
    - kind: Ingest
      source: Source:rates-src
YAML
} >rates.yaml
ok add rates.yaml
assert_eq "$(printf '%s\n' "$OUT" | sed 's/(did:odf:[0-9a-f]*, /(DID, /')" "Added rates (DID, 1 blocks)
Added source rates-src
Added flow rates-flow" "add output"
H0=$(head_of rates)
fails 1 "silt: pull 'rates': source 'rates-src': config.token: secret 'bank#token' not found: set SILT_SECRET_BANK_TOKEN or add it to $T_DIR/.silt/secrets.yaml" pull rates
SILT_SECRET_BANK_TOKEN=$WRONG fails 1 "silt: pull 'rates': GET $BASE/private/rates.csv: HTTP 403" pull rates
no_secret "HTTP 403"
assert_eq "$(head_of rates)" "$H0" "unchanged after failures"
export SILT_SECRET_BANK_TOKEN=$TOKEN
ok pull rates
no_secret "first pull"
assert_eq "$OUT" "rates: 3 new records (offsets 0..2), watermark 2021-01-01T00:00:00.000Z"
assert_eq "$(last_access)" "200 31 /private/rates.csv" "first GET"
ok pull rates
assert_eq "$OUT" "rates: up to date"
assert_eq "$(last_access)" "304 0 /private/rates.csv" "conditional GET sends no body"
run log rates -n 1 --yaml
assert_contains "$OUT" "sourceName: rates-src"
assert_contains "$OUT" "kind: odf/etag"
printf 'id,name,v\n1,a,11\n3,c,30\n4,d,40\n' >"$WWW/private/rates.csv"
touch -d '2021-02-01 00:00:00 UTC' "$WWW/private/rates.csv"
ok pull rates
assert_eq "$OUT" "rates: 4 new records (offsets 3..6), watermark 2021-02-01T00:00:00.000Z"
expect_sql 'select "offset", op, event_time, id, name, v from rates order by "offset"' <<'CSV'
offset,op,event_time,id,name,v
0,0,2021-01-01T00:00:00Z,1,a,10
1,0,2021-01-01T00:00:00Z,2,b,20
2,0,2021-01-01T00:00:00Z,3,c,30
3,2,2021-01-01T00:00:00Z,1,a,10
4,3,2021-02-01T00:00:00Z,1,a,11
5,1,2021-01-01T00:00:00Z,2,b,20
6,0,2021-02-01T00:00:00Z,4,d,40
CSV
ok pull rates
assert_eq "$OUT" "rates: up to date"
ok verify rates

# ---- secret in the URL query, from .silt/secrets.yaml (mode 0600) ---------------------
printf 'k,v\nx,1\ny,2\n' >"$WWW/q/data.csv"
touch -d '2022-03-04 05:06:07 UTC' "$WWW/q/data.csv"
{
    root_ds query
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: query-src
spec:
  config:
    key: SecretSet:api#key
    file: data.csv
  ingress:
    kind: Url
    url: "$BASE/q/\${{ config.file }}?key=\${{ config.key }}"
  read:
    kind: Csv
    header: true
    ddlSchema: [k STRING, v BIGINT]
  merge:
    kind: Ledger
    primaryKey: [k]
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: query
spec:
  target: Dataset:query
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: query-src
YAML
} >query.yaml
ok add query.yaml
# the URL-encoded form is what goes into the URL
printf 'api:\n  key: "%s"\n' "$QKEY_ENC" >.silt/secrets.yaml
chmod 644 .silt/secrets.yaml
fails 1 "silt: pull 'query': source 'query-src': $T_DIR/.silt/secrets.yaml: mode 0644 is too open: a secrets file must not be accessible by group or others (chmod 600)" pull query
chmod 600 .silt/secrets.yaml
ok pull query
no_secret "query pull"
assert_eq "$OUT" "query: 2 new records (offsets 0..1), watermark 2022-03-04T05:06:07.000Z"
assert_eq "$(last_access)" "200 12 /q/data.csv" "query GET"
expect_sql 'select "offset", op, event_time, k, v from query order by "offset"' <<'CSV'
offset,op,event_time,k,v
0,0,2022-03-04T05:06:07Z,x,1
1,0,2022-03-04T05:06:07Z,y,2
CSV
ok pull query
assert_eq "$OUT" "query: up to date"
# a failing request: the URL in the message has the secret redacted
rm "$WWW/q/data.csv"
fails 1 "silt: pull 'query': GET $BASE/q/data.csv?key=***: HTTP 404" pull query
no_secret "HTTP 404"
# the secret must also be redacted when it is given raw (env wins over the file)
SILT_SECRET_API_KEY=$QKEY fails 1 "silt: pull 'query': GET $BASE/q/data.csv?key=***: HTTP 401" pull query
no_secret "HTTP 401 raw secret"

# ---- FilesGlob source resource ---------------------------------------------------------
DROP="$T_DIR/drop"
mkdir -p "$DROP"
{
    root_ds cities
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: city-dumps
spec:
  config:
    dir: $DROP
  ingress:
    kind: FilesGlob
    path: "\${{ config.dir }}/pop-*.csv"
    eventTime:
      kind: FromPath
      pattern: 'pop-(\d+)\.csv'
      timestampFormat: '%Y'
  read:
    kind: Csv
    header: true
    ddlSchema: [city STRING, population BIGINT]
  merge:
    kind: Snapshot
    primaryKey: [city]
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: cities
spec:
  target: Dataset:cities
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: city-dumps
YAML
} >cities.yaml
ok add cities.yaml
H0=$(head_of cities)
fails 1 "silt: pull 'cities': no files match '$DROP/pop-*.csv'" pull cities
assert_eq "$(head_of cities)" "$H0" "unchanged after an empty glob"
printf 'city,population\nVancouver,2581000\nSeattle,3433000\n' >"$DROP/pop-2019.csv"
printf 'city,population\nVancouver,2606000\nSeattle,3433000\n' >"$DROP/pop-2020.csv"
ok pull cities
assert_eq "$OUT" "cities: 4 new records (offsets 0..3), watermark 2020-01-01T00:00:00.000Z"
run log cities -n 1 --yaml
assert_contains "$OUT" "sourceName: city-dumps"
assert_contains "$OUT" "value: pop-2020.csv"
ok pull cities
assert_eq "$OUT" "cities: up to date"
printf 'city,population\nVancouver,2642000\nPortland,2512000\n' >"$DROP/pop-2021.csv"
ok pull cities
assert_eq "$OUT" "cities: 4 new records (offsets 4..7), watermark 2021-01-01T00:00:00.000Z"
expect_sql 'select "offset", op, event_time, city, population from cities order by "offset"' <<'CSV'
offset,op,event_time,city,population
0,0,2019-01-01T00:00:00Z,Seattle,3433000
1,0,2019-01-01T00:00:00Z,Vancouver,2581000
2,2,2019-01-01T00:00:00Z,Vancouver,2581000
3,3,2020-01-01T00:00:00Z,Vancouver,2606000
4,0,2021-01-01T00:00:00Z,Portland,2512000
5,1,2019-01-01T00:00:00Z,Seattle,3433000
6,2,2020-01-01T00:00:00Z,Vancouver,2606000
7,3,2021-01-01T00:00:00Z,Vancouver,2642000
CSV
ok verify cities

# ---- a secret rendered into a Pipe command -----------------------------------------------
PIPED="$T_DIR/piped"
mkdir -p "$PIPED"
printf 'id\n1\n%s\n2\n' "$PIPEPAT" >"$PIPED/in.csv"
{
    root_ds piped
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: piped-src
spec:
  config:
    pat: SecretSet:pipe#pat
  ingress:
    kind: FilesGlob
    path: $PIPED/*.csv
  prepare:
    - kind: Pipe
      command: [sed, -e, "/\${{ config.pat }}/d"]
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT]
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: piped
spec:
  target: Dataset:piped
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: piped-src
YAML
} >piped.yaml
ok add piped.yaml
H0=$(head_of piped)
# an invalid regex that contains the secret: sed fails, its command line is shown redacted
SILT_SECRET_PIPE_PAT="$PIPEPAT\\(" fails_like 1 "pull 'piped': prepare step 1: pipe 'sed -e /***/d' exited with status 1: sed: " pull piped
no_secret "failing pipe"
assert_eq "$(head_of piped)" "$H0" "unchanged after a failing pipe"
export SILT_SECRET_PIPE_PAT=$PIPEPAT
ok pull piped
no_secret "pipe"
assert_contains "$OUT" "piped: 2 new records (offsets 0..1), watermark $(date -u +%Y-%m-%d)T"
expect_sql 'select "offset", id from piped order by "offset"' <<'CSV'
offset,id
0,1
1,2
CSV

# ---- targetRecordsPerSlice ------------------------------------------------------------
SPLIT="$T_DIR/split"
mkdir -p "$SPLIT"
{
    printf 'id,v\n'
    for i in $(seq 1 10); do printf '%d,%d\n' "$i" "$((i * 10))"; done
} >"$SPLIT/part-1.csv"
{
    root_ds split
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: split-src
spec:
  ingress:
    kind: FilesGlob
    path: $SPLIT/part-*.csv
    eventTime:
      kind: FromSystemTime
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT, v BIGINT]
  merge:
    kind: Snapshot
    primaryKey: [id]
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: split
spec:
  target: Dataset:split
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: split-src
      targetRecordsPerSlice: 3
YAML
} >split.yaml
ok add split.yaml
ok pull split --json
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys;d=json.load(sys.stdin)[0];print(d["records"],d["blocks"],d["firstOffset"],d["lastOffset"])')" "10 4 0 9" "split json"
# offset intervals of the AddData blocks, oldest first
intervals() {
    run log split --json
    printf '%s' "$OUT" | python3 -c '
import json,sys
d=json.load(sys.stdin)
blocks=d["blocks"] if isinstance(d,dict) else d
out=[]
for b in reversed(blocks):
    ev=b.get("content",b)["event"] if "event" in b.get("content",b) else b["event"]
    if ev.get("kind")=="AddData" and ev.get("newData"):
        oi=ev["newData"]["offsetInterval"]
        out.append("%d..%d"%(oi["start"],oi["end"]))
print(" ".join(out))'
}
assert_eq "$(intervals)" "0..2 3..5 6..8 9..9" "4 AddData blocks"
run log split -n 1 --yaml
assert_contains "$OUT" "sourceName: split-src"
assert_contains "$OUT" "value: part-1.csv"
# corrections of ids 1..3 and one new id: -C/+C pairs stay in one block
{
    printf 'id,v\n'
    for i in $(seq 1 10); do
        if [ "$i" -le 3 ]; then printf '%d,%d\n' "$i" "$((i * 10 + 1))"; else printf '%d,%d\n' "$i" "$((i * 10))"; fi
    done
    printf '11,110\n'
} >"$SPLIT/part-2.csv"
ok pull split
assert_eq "$OUT" "split: 7 new records (offsets 10..16), watermark $(text_time "$(run log split -n 1 --yaml; printf '%s\n' "$OUT" | sed -n 's/^ *newWatermark: *//p' | tr -d "'\"")")"
assert_eq "$(intervals)" "0..2 3..5 6..8 9..9 10..13 14..16" "pairs never split"
expect_sql 'select "offset", op, id, v from split where "offset" >= 10 order by "offset"' <<'CSV'
offset,op,id,v
10,2,1,10
11,3,1,11
12,2,2,20
13,3,2,21
14,2,3,30
15,3,3,31
16,0,11,110
CSV
ok verify split

# ---- legacy SetPollingSource and a Flow on one dataset: the Flow wins --------------------
printf 'id\n7\n' >"$SPLIT/legacy.csv"
{
    cat <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: both
  kind: Root
  metadata:
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $SPLIT/legacy.csv
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT]
      merge:
        kind: Append
YAML
} >both.yaml
ok add both.yaml
cat >both-flow.yaml <<YAML
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: both
spec:
  target: Dataset:both
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: split-src
YAML
ok add both-flow.yaml
ok pull both
assert_eq "$ERR" "silt: warning: pull 'both': flow 'both' (source 'split-src') supersedes the SetPollingSource of the dataset's chain" "flow wins warning"
assert_eq "$OUT" "both: 17 new records (offsets 0..16), watermark $(text_time "$(run info both --json; printf '%s' "$OUT" | python3 -c 'import json,sys;print(json.load(sys.stdin)["watermark"])')")" "flow ingested both part files"
expect_sql 'select count(*) as n, max(id) as m from "both"' <<'CSV'
n,m
17,11
CSV

# ---- pull --all includes flow targets -----------------------------------------------------
printf 'k,v\nx,1\ny,2\nz,3\n' >"$WWW/q/data.csv"
touch -d '2022-05-01 00:00:00 UTC' "$WWW/q/data.csv"
printf 'city,population\nVancouver,2642000\nPortland,2600000\n' >"$DROP/pop-2022.csv"
ok pull --all
no_secret "pull --all"
assert_eq "$OUT" "both: up to date
cities: 2 new records (offsets 8..9), watermark 2022-01-01T00:00:00.000Z
piped: up to date
query: 1 new record (offsets 2..2), watermark 2022-05-01T00:00:00.000Z
rates: up to date
split: up to date" "pull --all"

# ---- no secret anywhere in the workspace or the logs ----------------------------------------
for ds in rates query cities split both piped; do
    run log "$ds" --yaml
    no_secret "log $ds"
    run log "$ds" --json
    no_secret "log --json $ds"
done
# (control: the search does find the secret where it is meant to be)
assert_eq "$(grep -rlaF -- "$QKEY_ENC" .silt)" ".silt/secrets.yaml" "grep control"
for s in "$TOKEN" "$WRONG" "$QKEY" "$QKEY_ENC" "$PIPEPAT"; do
    if grep -rlaF --exclude=secrets.yaml -- "$s" .silt >/dev/null; then
        fail "secret '$s' stored in: $(grep -rlaF --exclude=secrets.yaml -- "$s" .silt)"
    fi
    pass
done
ok verify --all

done_tests
