#!/usr/bin/env bash
# test_container.sh — `silt pull` of Container sources through real podman
# with runc. The images are built here from a busybox-static rootfs and shell
# scripts (`podman import`, never pulled) and removed at the end.
#  - legacy SetPollingSource {fetch: {kind: Container}}: exact rows and
#    offsets, the ETag round trip (ODF_ETAG in, ODF_NEW_ETAG_PATH out, kept
#    as odf/etag), the same ETag again = up to date, has-more-data = one
#    AddData per batch with ODF_BATCH_SIZE records (set through env),
#    Last-Modified states, an empty output with a new state;
#  - Source/Flow ingress {kind: Container}: image/command/args/env rendered
#    from config and env templates, secrets redacted from the streamed stderr;
#  - --network none by default, host networking on request;
#  - faults: a crashing container (status + last stderr lines), a timeout
#    and Ctrl-C (killed, removed), a missing image, no podman, protocol errors, bad
#    settings, a missing template variable: exit 1, one-line error, the
#    dataset unchanged.
source "$(dirname "$0")/lib.sh"

command -v podman >/dev/null || { echo "$T_NAME: podman not installed (scripts/bootstrap.sh)" >&2; exit 1; }
BUSYBOX=$(command -v busybox) || { echo "$T_NAME: busybox-static not installed" >&2; exit 1; }

IMG="localhost/silt-test-ctr$$:1"
trap 'podman rm -f $(podman ps -aq --filter "name=silt-fetch-") >/dev/null 2>&1 || true
      podman rmi -f "$IMG" >/dev/null 2>&1 || true; cleanup' EXIT

# ---- the image ----------------------------------------------------------------------
ROOT="$T_DIR/rootfs"
mkdir -p "$ROOT/bin" "$ROOT/tmp"
cp "$BUSYBOX" "$ROOT/bin/busybox"
for c in sh cat echo printf sleep seq wc test expr touch mkdir head; do ln -s busybox "$ROOT/bin/$c"; done

# rows: three rows and ETag v1; with ODF_ETAG=v1 nothing new (same ETag, no data)
cat >"$ROOT/bin/rows" <<'SH'
#!/bin/sh
echo "fetching (prev '$ODF_ETAG', batch $ODF_BATCH_SIZE)" >&2
if [ "$ODF_ETAG" = v1 ]; then echo v1 >"$ODF_NEW_ETAG_PATH"; exit 0; fi
printf 'event_time,id,name\n2024-01-01T00:00:00Z,1,a\n2024-01-02T00:00:00Z,2,b\n2024-01-03T00:00:00Z,3,c\n'
echo v1 >"$ODF_NEW_ETAG_PATH"
SH
# paged: records 1..$TOTAL, ODF_BATCH_SIZE per run from position ODF_ETAG
cat >"$ROOT/bin/paged" <<'SH'
#!/bin/sh
pos=${ODF_ETAG:-0}
end=$(expr "$pos" + "$ODF_BATCH_SIZE")
[ "$end" -gt "$TOTAL" ] && end=$TOTAL
if [ "$end" -gt "$pos" ]; then
  echo "id,v"
  for i in $(seq $(expr "$pos" + 1) "$end"); do echo "$i,$PREFIX$i"; done
fi
echo "$end" >"$ODF_NEW_ETAG_PATH"
[ "$end" -lt "$TOTAL" ] && touch "$ODF_NEW_HAS_MORE_DATA_PATH"
exit 0
SH
# lm: a Last-Modified state; prints what it was given
cat >"$ROOT/bin/lm" <<'SH'
#!/bin/sh
echo "prev last-modified '$ODF_LAST_MODIFIED'" >&2
[ -n "$ODF_LAST_MODIFIED" ] && { echo "$ODF_LAST_MODIFIED" >"$ODF_NEW_LAST_MODIFIED_PATH"; exit 0; }
printf 'id,v\n1,x\n'
echo "2024-05-01T10:00:00Z" >"$ODF_NEW_LAST_MODIFIED_PATH"
SH
# envdump: the command line and environment it got, as one CSV row
cat >"$ROOT/bin/envdump" <<'SH'
#!/bin/sh
echo "token is $TOKEN" >&2
printf 'arg0,args,greeting,who,token,batch\n'
printf '%s,%s,%s,%s,%s,%s\n' "$0" "$*" "$GREETING" "$WHO" "$TOKEN" "$ODF_BATCH_SIZE"
SH
# net: the number of network interfaces it sees
cat >"$ROOT/bin/net" <<'SH'
#!/bin/sh
printf 'n\n%s\n' $(expr $(wc -l </proc/net/dev) - 2)
SH
cat >"$ROOT/bin/crash" <<'SH'
#!/bin/sh
echo "id,v"; echo "1,partial"
for l in one two three four; do echo "line $l" >&2; done
exit 3
SH
cat >"$ROOT/bin/hang" <<'SH'
#!/bin/sh
echo "hanging" >&2
sleep 60
SH
cat >"$ROOT/bin/badlm" <<'SH'
#!/bin/sh
printf 'id,v\n1,x\n'; echo "yesterday" >"$ODF_NEW_LAST_MODIFIED_PATH"
SH
cat >"$ROOT/bin/morenostate" <<'SH'
#!/bin/sh
printf 'id,v\n1,x\n'; touch "$ODF_NEW_HAS_MORE_DATA_PATH"
SH
cat >"$ROOT/bin/sameetag" <<'SH'
#!/bin/sh
printf 'id,v\n1,x\n'; echo "fixed" >"$ODF_NEW_ETAG_PATH"
SH
chmod +x "$ROOT"/bin/*
tar -C "$ROOT" -cf "$T_DIR/rootfs.tar" .
podman import --quiet --change 'ENV=PATH=/bin' "$T_DIR/rootfs.tar" "$IMG" >/dev/null

ok init

# legacy_ds NAME 'COMMAND' [ENV-YAML] [SCHEMA]: a root dataset with a Container SetPollingSource
legacy_ds() {
    local name=$1 cmd=$2 env=${3:-} schema=${4:-"[id BIGINT, v STRING]"}
    add_ds "$name" <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Container
        image: "$IMG"
        command: $cmd
$env
      read:
        kind: Csv
        header: true
        ddlSchema: $schema
      merge:
        kind: Append
YAML
}

# ---- rows: exact data, ETag round trip, up to date -------------------------------------
legacy_ds rows "[/bin/rows]" "" "[event_time TIMESTAMP, id BIGINT, name STRING]"
ok pull rows
assert_eq "$OUT" "rows: 3 new records (offsets 0..2), watermark 2024-01-03T00:00:00.000Z"
assert_eq "$ERR" "silt: warning: pull 'rows': container: fetching (prev '', batch 10000)" "stderr streamed, default batch"
expect_sql 'select "offset", op, event_time, id, name from rows order by "offset"' <<'CSV'
offset,op,event_time,id,name
0,0,2024-01-01T00:00:00Z,1,a
1,0,2024-01-02T00:00:00Z,2,b
2,0,2024-01-03T00:00:00Z,3,c
CSV
run --json log rows -n 1
assert_eq "$(printf '%s' "$OUT" | jget 'd[0]["event"]["newSourceState"]')" \
    '{"kind":"odf/etag","sourceName":"odf/polling","value":"v1"}' "ETag kept as odf/etag"
SUM=$(tree_sum .silt/datasets)
ok pull rows
assert_eq "$OUT" "rows: up to date"
assert_eq "$ERR" "silt: warning: pull 'rows': container: fetching (prev 'v1', batch 10000)" "ODF_ETAG passed back"
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "up to date writes nothing"
ok verify rows

# ---- paged: has-more-data, one AddData per batch ------------------------------------------
legacy_ds paged "[/bin/paged]" "        env:
          - name: ODF_BATCH_SIZE
            value: \"3\"
          - name: TOTAL
            value: \"\${{ env.CTR_TOTAL || 7 }}\"
          - name: PREFIX
            value: p"
ok --json pull paged
assert_eq "$(printf '%s' "$OUT" | jget '[d[0]["records"], d[0]["blocks"], d[0]["firstOffset"], d[0]["lastOffset"]]')" \
    "[7,3,0,6]" "7 records in 3 batches"
run --json log paged -n 3
assert_eq "$(printf '%s' "$OUT" | jget '[[b["event"]["newData"]["offsetInterval"]["start"], b["event"]["newData"]["offsetInterval"]["end"], b["event"]["newSourceState"]["value"]] for b in d]')" \
    '[[6,6,"7"],[3,5,"6"],[0,2,"3"]]' "one AddData per batch, each with its state"
expect_sql 'select "offset", id, v from paged order by "offset"' <<'CSV'
offset,id,v
0,1,p1
1,2,p2
2,3,p3
3,4,p4
4,5,p5
5,6,p6
6,7,p7
CSV
ok pull paged
assert_eq "$OUT" "paged: up to date"
export CTR_TOTAL=9
ok pull paged
assert_eq "$OUT" "paged: 2 new records (offsets 7..8), watermark $(text_time "$(info paged 'd["watermark"]')")"
unset CTR_TOTAL
expect_sql 'select id, v from paged where "offset" >= 7 order by id' <<'CSV'
id,v
8,p8
9,p9
CSV
ok verify paged

# ---- Last-Modified ------------------------------------------------------------------------
legacy_ds lm "[/bin/lm]"
ok pull lm
assert_eq "$OUT" "lm: 1 new record (offsets 0..0), watermark $(text_time "$(info lm 'd["watermark"]')")"
run --json log lm -n 1
assert_eq "$(printf '%s' "$OUT" | jget 'd[0]["event"]["newSourceState"]')" \
    '{"kind":"odf/last-modified","sourceName":"odf/polling","value":"2024-05-01T10:00:00Z"}'
ok pull lm
assert_eq "$OUT" "lm: up to date"
assert_eq "$ERR" "silt: warning: pull 'lm': container: prev last-modified '2024-05-01T10:00:00Z'"

# ---- Source + Flow: templated image, command, args, env; secrets redacted ------------------
export SILT_SECRET_CTR_TOKEN='tOk-S3cr3t'
export CTR_WHO=world
cat >flow.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: tpl
  kind: Root
  metadata: []
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: tpl-src
spec:
  config:
    tag: "1"
    token: SecretSet:ctr#token
    hello: hi
  ingress:
    kind: Container
    image: "localhost/silt-test-ctr$$:\${{ config.tag }}"
    command: ["/bin/\${{ env.CTR_SCRIPT || 'envdump' }}"]
    args: ["--x=\${{ config.hello }}", "\${{ env.CTR_UNSET || 'two' }}"]
    env:
      - name: GREETING
        value: "\${{ config.hello }} \${{ env.CTR_WHO }}"
      - name: WHO
      - name: TOKEN
        value: "\${{ config.token }}"
      - name: ODF_BATCH_SIZE
        value: "25"
  read:
    kind: Csv
    header: true
    ddlSchema: [arg0 STRING, args STRING, greeting STRING, who STRING, token STRING, batch BIGINT]
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: tpl
spec:
  target: Dataset:tpl
  triggers:
  - kind: Schedule
    cron: "0 0 * * *"
  tasks:
  - kind: Ingest
    source: Source:tpl-src
YAML
ok add flow.yaml
export WHO="from silt's env"
ok pull tpl
assert_eq "$OUT" "tpl: 1 new record (offsets 0..0), watermark $(text_time "$(info tpl 'd["watermark"]')")"
assert_eq "$ERR" "silt: warning: pull 'tpl': container: token is ***" "a secret in the container's stderr is redacted"
expect_sql 'select arg0, args, greeting, who, token, batch from tpl' <<'CSV'
arg0,args,greeting,who,token,batch
/bin/envdump,--x=hi two,hi world,from silt's env,tOk-S3cr3t,25
CSV
unset WHO
# an env entry without a value and no such variable in silt's environment
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'tpl': source 'tpl-src': missing values for variable(s): 'env.WHO' in ingress.env[1].value" pull tpl
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "nothing committed"
unset CTR_WHO
fails 1 "silt: pull 'tpl': source 'tpl-src': missing values for variable(s): 'env.CTR_WHO' in ingress.env[0].value" pull tpl
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "nothing committed"

# ---- network: none by default, host on request ------------------------------------------
legacy_ds netnone "[/bin/net]" "" "[n BIGINT]"
ok pull netnone
expect_sql 'select n from netnone' <<'CSV'
n
1
CSV
legacy_ds nethost "[/bin/net]" "        env:
          - name: SILT_CONTAINER_NETWORK
            value: host" "[n BIGINT]"
ok pull nethost
expect_sql 'select n from nethost' <<CSV
n
$(($(wc -l </proc/net/dev) - 2))
CSV

# ---- faults: exit 1, one line (after the streamed stderr), nothing committed ---------------
legacy_ds crash "[/bin/crash]"
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: warning: pull 'crash': container: line one
silt: warning: pull 'crash': container: line two
silt: warning: pull 'crash': container: line three
silt: warning: pull 'crash': container: line four
silt: pull 'crash': container '$IMG' exited with status 3: line two | line three | line four" pull crash
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "a crashing container commits nothing"

legacy_ds hang "[/bin/hang]"
SUM=$(tree_sum .silt/datasets)
START=$(date +%s)
SILT_CONTAINER_TIMEOUT=2 fails 1 "silt: warning: pull 'hang': container: hanging
silt: pull 'hang': container '$IMG' timed out after 2 s and was killed (SILT_CONTAINER_TIMEOUT)" pull hang
[ $(($(date +%s) - START)) -lt 20 ] || fail "the timeout took $(($(date +%s) - START)) s"
assert_eq "$(podman ps -a --filter name=silt-fetch- --format '{{.Names}}')" "" "the timed-out container is removed"
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "a timeout commits nothing"

# Ctrl-C while the container runs: stopped and removed at once, nothing committed, exit 130
"$SILT" pull hang >"$T_DIR/intr.out" 2>"$T_DIR/intr.err" &
PID=$!
for _ in $(seq 100); do grep -q hanging "$T_DIR/intr.err" 2>/dev/null && break; sleep 0.1; done
START=$(date +%s)
kill -INT "$PID"
set +e; wait "$PID"; RC=$?; set -e
assert_eq "$RC" 130 "Ctrl-C exit code"
assert_eq "$(tail -n 1 "$T_DIR/intr.err")" \
    "silt: interrupted: pull 'hang': 0 of 1 files ingested (no block committed); nothing of '$IMG' was committed"
[ $(($(date +%s) - START)) -lt 20 ] || fail "stopping took $(($(date +%s) - START)) s"
assert_eq "$(podman ps -a --filter name=silt-fetch- --format '{{.Names}}')" "" "the interrupted container is removed"
assert_eq "$(tree_sum .silt/datasets)" "$SUM" "an interrupted pull commits nothing"

add_ds noimg <<YAML
    - kind: SetPollingSource
      fetch:
        kind: Container
        image: localhost/silt-test-missing$$:1
      read:
        kind: Csv
        ddlSchema: [id BIGINT]
      merge:
        kind: Append
YAML
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'noimg': container image 'localhost/silt-test-missing$$:1' is not available locally (silt never pulls images: build it, or bring it in with podman pull / podman load / podman import)" pull noimg
assert_eq "$(tree_sum .silt/datasets)" "$SUM"

mkdir nopodman && ln -s "$(command -v cat)" nopodman/cat
SUM=$(tree_sum .silt/datasets)
PATH="$T_DIR/nopodman" fails 1 "silt: pull 'rows': podman is not installed (no 'podman' in PATH): install the Debian package 'podman' (apt-get install podman runc) to run Container sources" pull rows
assert_eq "$(tree_sum .silt/datasets)" "$SUM"

for case in "badlm|container '$IMG' wrote 'yesterday' to ODF_NEW_LAST_MODIFIED_PATH: not an RFC 3339 time" \
    "morenostate|container '$IMG' created ODF_NEW_HAS_MORE_DATA_PATH without writing a new ETag or Last-Modified"; do
    name=${case%%|*}
    legacy_ds "$name" "[/bin/$name]"
    SUM=$(tree_sum .silt/datasets)
    fails 1 "silt: pull '$name': ${case#*|}" pull "$name"
    assert_eq "$(tree_sum .silt/datasets)" "$SUM" "$name commits nothing"
done
legacy_ds sameetag "[/bin/sameetag]"
ok pull sameetag
assert_eq "$OUT" "sameetag: 1 new record (offsets 0..0), watermark $(text_time "$(info sameetag 'd["watermark"]')")"
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'sameetag': container '$IMG' wrote the previous source state again but also 9 bytes of data (a container with nothing new must write no data)" pull sameetag
assert_eq "$(tree_sum .silt/datasets)" "$SUM"

legacy_ds badbatch "[/bin/rows]" "        env:
          - name: ODF_BATCH_SIZE
            value: lots"
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'badbatch': fetch.env[0]: ODF_BATCH_SIZE must be a positive integer" pull badbatch
legacy_ds badnet "[/bin/rows]" "        env:
          - name: SILT_CONTAINER_NETWORK
            value: bridge"
fails 1 "silt: pull 'badnet': fetch.env[0]: SILT_CONTAINER_NETWORK must be 'none' or 'host'" pull badnet
legacy_ds missvar "[/bin/rows]" "        env:
          - name: X
            value: \"\${{ env.CTR_NOPE || env.CTR_NOPE2 }}\""
SUM=$(tree_sum .silt/datasets)
fails 1 "silt: pull 'missvar': missing values for variable(s): 'env.CTR_NOPE || env.CTR_NOPE2' in fetch.env[0].value" pull missvar
assert_eq "$(tree_sum .silt/datasets)" "$SUM"

ok verify --all
assert_eq "$(podman ps -a --filter name=silt-fetch- --format '{{.Names}}')" "" "no container left behind"
ls .silt/tmp 2>/dev/null | grep -q . && fail "temporary files left: $(ls .silt/tmp)"
pass

done_tests
