#!/usr/bin/env bash
# test_secrets.sh — no secret value of a Source's `config` ever reaches the
# workspace, the chain or the output, with a secret in every field that can
# hold a `${{ config.x }}` template, and source states that contain a secret
# still work as cursors (they are stored sealed: "silt:sealed:" + the value
# with each secret replaced by "${KEY}"):
#  - Url (real nginx): a secret in a path segment of `url`, in the query,
#    in a request header name and in a header value; the server echoes the
#    query secret back in its ETag — the state is sealed, the next pull
#    still sends the real If-None-Match (304, up to date), a new ETag after
#    a server change is fetched and sealed again;
#  - FilesGlob: a secret in the directory part and in the file-name part of
#    `path` (the last file name is the state), a secret in a Pipe command:
#    restarts (every command is a new process) ingest only new files, a
#    file sorting before the last one is never read, failures name the file
#    with the secret redacted; a state standing for a config key the source
#    no longer defines is a clear error that changes nothing;
#  - Container (image, command, args, env): its image is not available
#    locally, and the error names it redacted; Mqtt (password) and EvmLogs
#    (nodeUrl) sources: not pulled (unsupported / push); no secret in the
#    messages or in `silt sources`;
#  - after every command: no secret (raw or URL-encoded) in its stdout or
#    stderr, in `silt log --yaml` / `--json` of every dataset, in `silt
#    sources` / `silt flows`, or in any file (content or name) under .silt/
#    except secrets.yaml.
source "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || { echo "$T_NAME: nginx not installed (scripts/bootstrap.sh)" >&2; exit 1; }

SEG='pAth5egS3c'          # a path segment of the URL
QKEY='qK3y-Echo9'         # the query key, echoed back in the ETag
HNAME='Hn4mE7q'           # part of a request header name
HTOK='hdr/T0k+8e=2f'      # a header value (its URL-encoded form differs)
HTOK_ENC='hdr%2FT0k%2B8e%3D2f'
DIRSEC='dIrS3cret'        # the directory part of a FilesGlob path
FTOK='tOkSeCr3t'          # the file-name part of a FilesGlob path
PIPESEC='PiPeS3cr3t'      # an argument of a Pipe command
CIMG='cImgS3c'            # Container image tag
CARG='cArgS3c'            # Container args
CENV='cEnvS3c'            # Container env value
CCMD='cCmdS3c'            # Container command
MQPW='mQpwS3c'            # Mqtt password
EVMK='eVmKeyS3c'          # EvmLogs node URL
SECRETS=("$SEG" "$QKEY" "$HNAME" "$HTOK" "$HTOK_ENC" "$DIRSEC" "$FTOK" "$PIPESEC" "$CIMG" "$CARG" "$CENV"
    "$CCMD" "$MQPW" "$EVMK")
HNAME_LC=$(printf '%s' "$HNAME" | tr 'A-Z' 'a-z')

# ---- nginx: /SEG/ needs the header name and value and the key; ETag "VER-KEY" --------
WWW="$T_DIR/www"
NG="$T_DIR/nginx"
mkdir -p "$WWW/$SEG" "$NG/logs"
PORT=$(free_port)
nginx_conf() { # VER
    nginx_write_conf "\$status \$body_bytes_sent" <<CONF
        location /$SEG/ {
            etag off;
            if (\$http_authorization != "Bearer $HTOK") { return 403; }
            if (\$http_x_$HNAME_LC != "on") { return 401; }
            if (\$arg_key != "$QKEY") { return 401; }
            if (\$http_if_none_match = "\"$1-\$arg_key\"") { return 304; }
            add_header ETag "\"$1-\$arg_key\"";
        }
CONF
}
nginx_conf v1
nginx_start
last_access() { tail -n 1 "$NG/access.log"; }

# ---- the leak check ----------------------------------------------------------------
DATASETS=()
leaks_in() { # LABEL TEXT
    local s
    for s in "${SECRETS[@]}"; do
        case "$2" in *"$s"*) fail "secret '$s' leaked ($1): $2" ;; esac
    done
}
# no secret in the last command's output, in any dataset's log, in the
# resource listings or anywhere under .silt (file contents and names)
check_clean() {
    local label=$1 out=$OUT err=$ERR rc=$RC s ds
    leaks_in "$label: output" "$out$err"
    for ds in "${DATASETS[@]}"; do
        leaks_in "$label: log $ds" "$("$SILT" log "$ds" --yaml 2>&1)"
        leaks_in "$label: log --json $ds" "$("$SILT" log "$ds" --json 2>&1)"
    done
    leaks_in "$label: sources" "$("$SILT" sources 2>&1)"
    leaks_in "$label: flows" "$("$SILT" flows 2>&1)"
    for s in "${SECRETS[@]}"; do
        if grep -rlaF --exclude=secrets.yaml -- "$s" .silt >/dev/null; then
            fail "$label: secret '$s' stored in: $(grep -rlaF --exclude=secrets.yaml -- "$s" .silt)"
        fi
        if [ -n "$(find .silt -name "*$s*")" ]; then
            fail "$label: secret '$s' in a file name: $(find .silt -name "*$s*")"
        fi
    done
    OUT=$out ERR=$err RC=$rc
    pass
}
# the newSourceState value of the dataset's head block
state_of() { "$SILT" log "$1" -n 1 --json | jget 'd[0]["event"]["newSourceState"]["value"] if isinstance(d,list) else d["blocks"][0]["event"]["newSourceState"]["value"]'; }
root_ds() { printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Root\n  metadata: []\n' "$1"; }
flow() { # NAME SOURCE
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: $1
spec:
  target: Dataset:$1
  triggers:
    - kind: Schedule
      cron: "0 6 * * *"
  tasks:
    - kind: Ingest
      source: Source:$2
YAML
}

ok init
# two secrets from .silt/secrets.yaml, the others from the environment
printf 'web:\n  hname: %s\n  tok: "%s"\n' "$HNAME" "$HTOK" >.silt/secrets.yaml
chmod 600 .silt/secrets.yaml
export SILT_SECRET_WEB_SEG=$SEG SILT_SECRET_WEB_QKEY=$QKEY SILT_SECRET_DROP_DIR=$DIRSEC
export SILT_SECRET_DROP_FTOK=$FTOK SILT_SECRET_DROP_PIPE=$PIPESEC
export SILT_SECRET_C_IMG=$CIMG SILT_SECRET_C_ARG=$CARG SILT_SECRET_C_ENV=$CENV SILT_SECRET_C_CMD=$CCMD
export SILT_SECRET_MQ_PW=$MQPW SILT_SECRET_EVM_KEY=$EVMK

# ---- Url: secrets in url path and query, header name and value; the ETag echoes one ----
printf 'id,v\n1,10\n2,20\n3,30\n' >"$WWW/$SEG/data.csv"
touch -d '2021-01-01 00:00:00 UTC' "$WWW/$SEG/data.csv"
{
    root_ds web
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: web-src
spec:
  config:
    seg: SecretSet:web#seg
    qkey: SecretSet:web#qkey
    hname: SecretSet:web#hname
    tok: SecretSet:web#tok
  ingress:
    kind: Url
    url: "$BASE/\${{ config.seg }}/data.csv?key=\${{ config.qkey }}"
    headers:
      - name: "X-\${{ config.hname }}"
        value: "on"
      - name: Authorization
        value: "Bearer \${{ config.tok }}"
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT, v BIGINT]
  merge:
    kind: Snapshot
    primaryKey: [id]
YAML
    flow web web-src
} >web.yaml
ok add web.yaml
DATASETS+=(web)
check_clean "add web"
ok pull web
check_clean "pull web 1"
assert_eq "$OUT" "web: 3 new records (offsets 0..2), watermark 2021-01-01T00:00:00.000Z"
assert_eq "$(last_access)" "200 20" "first GET"
assert_eq "$(state_of web)" 'silt:sealed:"v1-${qkey}"' "the echoed ETag is stored sealed"
# the next pull sends the real ETag back: 304, nothing fetched
ok pull web
check_clean "pull web 2"
assert_eq "$OUT" "web: up to date"
assert_eq "$(last_access)" "304 0" "If-None-Match carries the unsealed ETag"
# the server changes: a new ETag, sealed again; then up to date again
printf 'id,v\n1,11\n2,20\n3,30\n' >"$WWW/$SEG/data.csv"
touch -d '2021-02-01 00:00:00 UTC' "$WWW/$SEG/data.csv"
nginx_conf v2
kill -HUP "$NGINX_PID"
# the reload is graceful: an old worker may still take a connection for a
# while, so wait for three answers in a row from the new configuration
seen=0
for _ in $(seq 100); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $HTOK" -H "X-$HNAME: on" \
        -H "If-None-Match: \"v2-$QKEY\"" "$BASE/$SEG/data.csv?key=$QKEY") || true
    if [ "$code" = 304 ]; then seen=$((seen + 1)); else seen=0; fi
    [ "$seen" = 3 ] && break
    sleep 0.1
done
[ "$seen" = 3 ] || fail "nginx did not take the v2 configuration"
pass
ok pull web
check_clean "pull web 3"
assert_eq "$OUT" "web: 2 new records (offsets 3..4), watermark 2021-02-01T00:00:00.000Z"
assert_eq "$(last_access)" "200 20" "GET after the ETag changed"
assert_eq "$(state_of web)" 'silt:sealed:"v2-${qkey}"' "the new ETag is stored sealed"
ok pull web
check_clean "pull web 4"
assert_eq "$OUT" "web: up to date"
assert_eq "$(last_access)" "304 0" "conditional again"
expect_sql 'select "offset", op, id, v from web order by "offset"' <<'CSV'
offset,op,id,v
0,0,1,10
1,0,2,20
2,0,3,30
3,2,1,10
4,3,1,11
CSV
# a failing request (a wrong key): the URL is shown redacted
SILT_SECRET_WEB_QKEY=wrong fails 1 "silt: pull 'web': GET $BASE/***/data.csv?key=***: HTTP 401" pull web
check_clean "pull web 401"

# ---- FilesGlob: secrets in the directory and file-name parts, and in a Pipe ----------
IN="$T_DIR/in-$DIRSEC"
mkdir -p "$IN"
printf 'city,population\nVancouver,2581000\n%s,0\nSeattle,3433000\n' "$PIPESEC" >"$IN/$FTOK-2019.csv"
printf 'city,population\nVancouver,2606000\nSeattle,3433000\n' >"$IN/$FTOK-2020.csv"
drop_src() { # CONFIG-LINES PATH
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: drop-src
spec:
  config:
$1
  ingress:
    kind: FilesGlob
    path: "$2"
    eventTime:
      kind: FromPath
      pattern: '-(\d+)\.csv'
      timestampFormat: '%Y'
  prepare:
    - kind: Pipe
      command: [sed, -e, "/\${{ config.pipe }}/d"]
  read:
    kind: Csv
    header: true
    ddlSchema: [city STRING, population BIGINT]
  merge:
    kind: Snapshot
    primaryKey: [city]
YAML
}
DROP_CFG='    dir: SecretSet:drop#dir
    ftok: SecretSet:drop#ftok
    pipe: SecretSet:drop#pipe'
DROP_PATH="$T_DIR/in-\${{ config.dir }}/\${{ config.ftok }}-*.csv"
{
    root_ds drop
    drop_src "$DROP_CFG" "$DROP_PATH"
    flow drop drop-src
} >drop.yaml
ok add drop.yaml
DATASETS+=(drop)
check_clean "add drop"
ok pull drop
check_clean "pull drop 1"
assert_eq "$OUT" "drop: 4 new records (offsets 0..3), watermark 2020-01-01T00:00:00.000Z"
assert_eq "$(state_of drop)" 'silt:sealed:${ftok}-2020.csv' "the file name is stored sealed"
ok pull drop
check_clean "pull drop 2"
assert_eq "$OUT" "drop: up to date"
# a file that sorts before the last one is never read; a new one is
printf 'city,population\nOld,1\n' >"$IN/$FTOK-2018.csv"
printf 'city,population\nVancouver,2642000\nPortland,2512000\n' >"$IN/$FTOK-2021.csv"
ok pull drop
check_clean "pull drop 3"
assert_eq "$OUT" "drop: 4 new records (offsets 4..7), watermark 2021-01-01T00:00:00.000Z"
assert_eq "$ERR" "silt: warning: pull 'drop': file '***-2018.csv' sorts before the last ingested '***-2020.csv' and will not be read; rename it or reset the source" "the warning is redacted"
assert_eq "$(state_of drop)" 'silt:sealed:${ftok}-2021.csv' "state after the third pull"
rm "$IN/$FTOK-2018.csv"
expect_sql 'select "offset", op, event_time, city, population from drop order by "offset"' <<'CSV'
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
# failures name the file with the secret redacted, and change nothing
printf 'city,population\nX,not-a-number\n' >"$IN/$FTOK-2022.csv"
SUM=$(tree_sum .silt)
fails 1 "silt: ingest into 'drop': ***-2022.csv: row 1 (line 2), column 'population': cannot convert 'not-a-number' to BIGINT" pull drop
check_clean "bad file"
assert_eq "$(tree_sum .silt)" "$SUM" "a failing file changes nothing"
rm "$IN/$FTOK-2022.csv"
# a name without an event time is skipped: the warning and the note of
# `silt sources` name it redacted, and nothing of it is committed
printf 'city,population\nX,1\n' >"$IN/$FTOK-x.csv"
H0=$(head_of drop)
ok pull drop
check_clean "bad event time"
assert_eq "$OUT" "drop: up to date"
assert_eq "$ERR" "silt: warning: pull 'drop': skipping '***-x.csv': event time pattern '-(\\d+)\\.csv' does not match '***-x.csv'"
assert_eq "$(head_of drop)" "$H0" "a bad event time commits nothing"
rm "$IN/$FTOK-x.csv"
# a state standing for a config key the source no longer defines
{
    drop_src '    dir: SecretSet:drop#dir
    pipe: SecretSet:drop#pipe' "$T_DIR/in-\${{ config.dir }}/*.csv"
} >drop-changed.yaml
ok add drop-changed.yaml
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'drop': source state: the stored state stands for config.ftok, which the source no longer defines (restore config.ftok, or start the source afresh under a new name)" pull drop
check_clean "unsealable state"
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "an unsealable state changes nothing"
{
    drop_src "$DROP_CFG" "$DROP_PATH"
} >drop-restored.yaml
ok add drop-restored.yaml
ok pull drop
check_clean "restored"
assert_eq "$OUT" "drop: up to date"
ok verify drop

# ---- Container, Mqtt, EvmLogs: templated fields, not pulled, not shown -------------
{
    root_ds ctr
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: ctr-src
spec:
  config:
    img: SecretSet:c#img
    arg: SecretSet:c#arg
    env: SecretSet:c#env
    cmd: SecretSet:c#cmd
  ingress:
    kind: Container
    image: "ghcr.io/x/fetch:\${{ config.img }}"
    command: ["/fetch-\${{ config.cmd }}"]
    args: ["--key=\${{ config.arg }}"]
    env:
      - name: TOKEN
        value: "\${{ config.env }}"
  read:
    kind: Csv
    header: true
    ddlSchema: [a BIGINT]
  merge:
    kind: Append
YAML
    flow ctr ctr-src
    echo ---
    root_ds mq
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: mq-src
spec:
  config:
    pw: SecretSet:mq#pw
  ingress:
    kind: Mqtt
    host: mqtt.example.com
    port: 1883
    username: u
    password: "\${{ config.pw }}"
    topics:
      - path: a/b
        qos: AtMostOnce
  read:
    kind: NdJson
    ddlSchema: ["a BIGINT"]
  merge:
    kind: Append
YAML
    flow mq mq-src
    echo ---
    root_ds evm
    cat <<YAML
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: evm-src
spec:
  config:
    key: SecretSet:evm#key
  ingress:
    kind: EvmLogs
    chainId: 1
    nodeUrl: "wss://mainnet.example.com/v3/\${{ config.key }}"
  read:
    kind: NdJson
    ddlSchema: ["a BIGINT"]
  merge:
    kind: Append
YAML
    flow evm evm-src
} >others.yaml
ok add others.yaml
DATASETS+=(ctr mq evm)
check_clean "add others"
fails 1 "silt: pull 'ctr': container image 'ghcr.io/x/fetch:***' is not available locally (silt never pulls images: build it, or bring it in with podman pull / podman load / podman import)" pull ctr
check_clean "pull ctr"
fails_like 1 "pull 'mq': source 'mq-src': mqtt: cannot connect to mqtt.example.com:1883: " pull mq
check_clean "pull mq"
fails 1 'silt: pull '"'"'evm'"'"': an EVM logs source needs `read: {kind: Parquet}` (the fetched logs are a Parquet file, as in kamu)' pull evm
check_clean "pull evm"
ok sources
assert_contains "$OUT" 'ghcr.io/x/fetch:${{ config.img }}' "sources shows the template, not the value"

# ---- every source at once ---------------------------------------------------------------
run --json pull --all
check_clean "pull --all"
assert_eq "$RC" 1 "pull --all fails for the unsupported sources"
ok verify --all
check_clean "verify --all"
# (control: the search finds a secret where it is meant to be)
assert_eq "$(grep -rlaF -- "$HTOK" .silt)" ".silt/secrets.yaml" "grep control"

done_tests
