#!/usr/bin/env bash
# test_cli_json.sh — the machine-readable contract of `silt --json`
# (docs/cli.md): every command answers with one JSON document on stdout,
# one compact line (one layout), whose keys are exactly the documented ones; the key set is one rule (a
# dataset is "name"/"id"/"rid", a transaction "rid", a reference to a
# transaction "transactionRid"); with --json an error is one line
# {"error":{"code","message"}} on stderr with the usual exit code; `ingest
# --format` is a deprecated alias of --input-format.
. "$(dirname "$0")/lib.sh"

# compact: $OUT is one JSON document on one line in the compact layout
# (no space after ',' and ':', no indentation; docs/cli.md, "one layout")
compact() {
    assert_eq "$(printf '%s\n' "$OUT" | wc -l)" "1" "'silt --json $*': one line"
    printf '%s' "$OUT" | python3 -c 'import json,sys
s=sys.stdin.read()
c=json.dumps(json.loads(s),separators=(",",":"),ensure_ascii=False)
sys.exit(0 if s==c else "not compact: "+s[:200])' || fail "'silt --json $*': not the compact layout"
    pass
}
# keys CMD...: runs `silt --json CMD...`, which must succeed and answer one
# compact line, and sets KEYS to the sorted keys of the document (of its
# first element for an array)
keys() {
    ok --json "$@"
    compact "$@"
    KEYS=$(printf '%s' "$OUT" | python3 -c 'import json,sys
d=json.load(sys.stdin)
if isinstance(d,list): d=d[0]
print(",".join(sorted(d)))')
}
# expect_keys 'k1,k2' CMD...: keys of `silt --json CMD...` are exactly these
expect_keys() {
    local want
    want=$(printf '%s\n' "$1" | tr ',' '\n' | LC_ALL=C sort | paste -sd, -)
    shift
    keys "$@"
    assert_eq "$KEYS" "$want" "--json $* keys"
}
# jerr CODE NAME 'message' CMD...: exit CODE, stderr is exactly one JSON
# error line with that code name and message, stdout empty
jerr() {
    local code=$1 name=$2 msg=$3
    shift 3
    run --json "$@"
    [ "$RC" -eq "$code" ] || fail "'silt --json $*': expected exit $code, got $RC ($ERR)"
    assert_eq "$(printf '%s\n' "$ERR" | wc -l)" "1" "'silt --json $*': one stderr line"
    assert_eq "$(printf '%s' "$ERR" | python3 -c 'import json,sys
e=json.load(sys.stdin)
assert list(e)==["error"] and sorted(e["error"])==["code","message"], e
print(e["error"]["code"]+"|"+e["error"]["message"])')" "$name|$msg" "'silt --json $*' error"
    assert_eq "$OUT" "" "'silt --json $*': nothing on stdout"
}

DS='id,name,rid'

# ---- workspace and datasets ---------------------------------------------------
expect_keys 'created,workspace' init
assert_eq "$(printf '%s' "$OUT" | jget 'd["created"]')" "true" "init created"
expect_keys 'created,workspace' init --exists-ok
assert_eq "$(printf '%s' "$OUT" | jget 'd["created"]')" "false" "init --exists-ok"
expect_keys "head,$DS,kind" new alpha
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"], d["kind"], d["id"][:8], d["rid"][:21]]')" \
    '["alpha","Root","did:odf:","ri.silt.main.dataset."]' "new --json values"
ALPHA_ID=$(printf '%s' "$OUT" | jget 'd["id"]')
ALPHA_RID=$(printf '%s' "$OUT" | jget 'd["rid"]')
expect_keys "head,$DS,kind" new raw --files
assert_eq "$(printf '%s' "$OUT" | jget 'd["kind"]')" "Files" "new --files kind"
expect_keys "head,$DS,kind" new sales --push-source csv
expect_keys 'blocks,branch,dataSize,hasPollingSource,hasSchema,head,id,kind,lastOffset,lastSystemTime,name,pushSources,records,rid,watermark' list
expect_keys 'blocks,branch,branches,dataSize,description,hasPollingSource,hasSchema,head,id,keywords,kind,lastOffset,lastSystemTime,license,name,pushSources,records,remote,rid,schema,sources,watermark' info alpha
expect_keys "$DS,previousName" rename alpha beta
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"], d["id"], d["rid"], d["previousName"]]')" \
    "[\"beta\",\"$ALPHA_ID\",\"$ALPHA_RID\",\"alpha\"]" "rename --json: same id and rid"
ok new gamma
expect_keys 'deleted' delete beta gamma beta
assert_eq "$(printf '%s' "$OUT" | jget '[[e["name"], sorted(e)] for e in d["deleted"]]')" \
    '[["beta",["id","name","rid"]],["gamma",["id","name","rid"]]]' "delete --json: each once"
assert_eq "$(printf '%s' "$OUT" | jget 'd["deleted"][0]["id"]')" "$ALPHA_ID" "delete --json id"

cat >people.yaml <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: people
  kind: Root
  metadata:
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, name STRING]
      merge:
        kind: Append
YAML
expect_keys "blocks,head,$DS" add people.yaml

# ---- data -----------------------------------------------------------------------
printf 'id,name\n1,ann\n2,bob\n' >p1.csv
expect_keys "firstOffset,head,$DS,lastOffset,records,schemaChanged,upToDate,watermark" ingest people p1.csv
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"], d["records"], d["firstOffset"], d["lastOffset"], d["upToDate"]]')" \
    '["people",2,0,1,false]' "ingest --json values"
printf '{"id":3,"name":"cy"}\n' >p2.ndjson
expect_keys "firstOffset,head,$DS,lastOffset,records,schemaChanged,upToDate,watermark" ingest people p2.ndjson --input-format ndjson
# --format still works for one release, with a warning on stderr
ok ingest people p2.ndjson --format ndjson
assert_eq "$ERR" "silt: warning: --format is deprecated for ingest; use --input-format" "ingest --format warns"
assert_contains "$OUT" "people: 1 new record (offsets 3..3), watermark "
ok new snap --push-source csv --merge snapshot --key id
ok ingest snap p1.csv
expect_keys "firstOffset,head,$DS,lastOffset,records,schemaChanged,upToDate,watermark" ingest snap p1.csv
assert_eq "$(printf '%s' "$OUT" | jget '[d["upToDate"], d["firstOffset"], d["head"]]')" '[true,null,null]' "ingest --json up to date"
ok ingest people p1.csv --input-format csv
assert_eq "$ERR" "" "--input-format: no warning"

expect_keys 'id,name' sql 'SELECT DISTINCT id, name FROM people ORDER BY id'
assert_eq "$(printf '%s' "$OUT" | jget 'd')" '[{"id":1,"name":"ann"},{"id":2,"name":"bob"},{"id":3,"name":"cy"}]' "sql --json rows"
keys tail people -n 1
assert_eq "$KEYS" "event_time,id,name,offset,op,system_time" "tail --json keys"
keys schema people
expect_keys 'event,hash,prevBlockHash,sequenceNumber,systemTime' log people -n 1
cat >info.yaml <<'YAML'
kind: SetInfo
description: people we know
YAML
expect_keys "appended,file,head,$DS" append people info.yaml
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"], d["appended"], d["file"]]')" '["people",1,"info.yaml"]' "append --json values"
keys verify people
assert_eq "$(printf '%s' "$OUT" | jget '[d[0]["name"], d[0]["valid"]]')" '["people",true]' "verify --json"
Y=$(ls "$SILT_FIXTURES"/odf-golden/case*.yaml | sed -n 1p)
expect_keys 'hash' block hash "$Y"
assert_eq "$(printf '%s' "$OUT" | jget 'd["hash"]')" "f1620$(tr -d '\n' <"${Y%.yaml}.hash")" "block hash --json"
ok --json sources
assert_eq "$OUT" "[]" "sources --json (none)"
ok --json flows
assert_eq "$OUT" "[]" "flows --json (none)"

# pull: a FilesGlob source over a folder
mkdir drop && printf 'id,city\n1,Rome\n' >drop/d-2020-01-01.csv
cat >glob.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: dumps
  kind: Root
  metadata:
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $PWD/drop/d-*.csv
        eventTime:
          kind: FromPath
          pattern: 'd-(\d+-\d+-\d+)\.csv'
          timestampFormat: '%Y-%m-%d'
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, city STRING]
      merge:
        kind: Append
YAML
ok add glob.yaml
expect_keys "blocks,error,firstOffset,head,$DS,lastOffset,records,uncacheable,upToDate,watermark" pull dumps
assert_eq "$(printf '%s' "$OUT" | jget '[d[0]["name"], d[0]["records"], d[0]["blocks"], d[0]["error"]]')" \
    '["dumps",1,1,null]' "pull --json values"

# ---- files datasets ---------------------------------------------------------------
mkdir data && echo one >data/a.txt && echo two >data/b.txt
expect_keys 'dataset,rid,status,type' txn start raw --type snapshot
RID=$(printf '%s' "$OUT" | jget 'd["rid"]')
assert_eq "$(printf '%s' "$OUT" | jget '[d["status"], d["type"], d["dataset"]["name"], sorted(d["dataset"])]')" \
    '["OPEN","SNAPSHOT","raw",["id","name","rid"]]' "txn start --json"
expect_keys 'dataset,files,rid' txn put raw "$RID" data/
assert_eq "$(printf '%s' "$OUT" | jget 'd["files"]')" "2" "txn put --json files"
expect_keys 'block,dataset,rid,status' txn commit raw "$RID"
assert_eq "$(printf '%s' "$OUT" | jget '[d["rid"], d["status"]]')" "[\"$RID\",\"COMMITTED\"]" "txn commit --json"
ok txn start raw --type delete
DEL=$OUT
expect_keys 'dataset,removed,rid,status' txn rm raw "$DEL" data/a.txt
assert_eq "$(printf '%s' "$OUT" | jget '[d["removed"], d["status"]]')" '["data/a.txt","OPEN"]' "txn rm --json"
expect_keys 'dataset,rid,status' txn abort raw "$DEL"
assert_eq "$(printf '%s' "$OUT" | jget 'd["status"]')" "ABORTED" "txn abort --json"
expect_keys 'abandoned,block,branch,closed,created,rid,status,type' txn list raw
ok --json txn recover raw
assert_eq "$OUT" "[]" "txn recover --json (nothing abandoned)"
echo three >c.txt
expect_keys 'block,dataset,files,rid,status,type' upload raw c.txt
UP=$(printf '%s' "$OUT" | jget 'd["rid"]')
keys schema raw  # the schema of a files dataset's entries: one compact line too
# a file entry REFERS to its transaction: transactionRid
expect_keys 'contentHash,contentType,path,size,status,time,transactionRid,transactionType' files raw
assert_eq "$(printf '%s' "$OUT" | jget '[[f["path"], f["transactionRid"]] for f in d]')" \
    "[[\"c.txt\",\"$UP\"],[\"data/a.txt\",\"$RID\"],[\"data/b.txt\",\"$RID\"]]" "files --json transactionRid"
expect_keys 'dataset,name,status' branch create raw dev
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"], d["status"], d["dataset"]["name"]]')" '["dev","CREATED","raw"]' "branch create --json"
expect_keys 'blocks,head,name,openTransactionRid' branch list raw
expect_keys 'dataset,name,status' branch delete raw dev
assert_eq "$(printf '%s' "$OUT" | jget '[d["name"], d["status"]]')" '["dev","DELETED"]' "branch delete --json"
printf 'fieldSchemaList:\n  - {name: line, type: STRING}\n' >schema.yaml
expect_keys 'dataset,file,schemaSet' schema set raw schema.yaml
assert_eq "$(printf '%s' "$OUT" | jget 'sorted(d["dataset"])')" '["id","name","rid"]' "schema set --json dataset"
expect_keys 'branch,keepDays,name' retention set raw --keep-days 30
expect_keys 'name,policies' retention show raw
expect_keys 'marks,name' retention marks raw
expect_keys 'name,unmarked' retention unmark raw --all
keys gc --dry-run
expect_keys 'created,datasets,expires,name,scope,secret' token create ci
expect_keys 'created,datasets,expires,lastUsed,name,scope' token list
expect_keys 'name,revoked' token revoke ci

# ---- errors with --json ---------------------------------------------------------------
before=$(ws_snapshot)
jerr 1 NOT_FOUND "dataset 'nope' not found" info nope
jerr 1 EXISTS "dataset 'people' already exists" new people
jerr 1 CONFLICT "TransactionNotOpen: transaction $RID is COMMITTED" txn commit raw "$RID"
jerr 2 USAGE "unknown command 'frobnicate'" frobnicate
jerr 2 USAGE "new needs a NAME" new
jerr 2 USAGE "--workspace needs a directory" --workspace
jerr 1 NOT_FOUND "dataset 'nope' not found; nothing deleted" delete people nope
ws_compare "$before" "failed --json commands"
# without --json the same errors stay text
fails 1 "silt: dataset 'nope' not found" info nope
fails 2 "silt: unknown command 'frobnicate' (see 'silt help')" frobnicate

# ---- text output: every time in one precision (RFC 3339 UTC, milliseconds, Z) ---------
# times_ms CMD...: `silt CMD...` succeeds, shows at least one time, and every
# time it shows is YYYY-MM-DDTHH:MM:SS.mmmZ
times_ms() {
    ok "$@"
    local all bad
    all=$(printf '%s\n' "$OUT" | grep -oE '[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z' || true)
    [ -n "$all" ] || fail "'silt $*' shows no time: $OUT"
    bad=$(printf '%s\n' "$all" | grep -vE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$' || true)
    [ -z "$bad" ] || fail "'silt $*' shows times not in milliseconds: $bad"
    pass
}
export SILT_FAKE_SYSTEM_TIME=2024-05-01T00:00:00Z
ok new clock --push-source csv --schema 'id BIGINT'
printf 'id\n1\n' >clock.csv
ok ingest clock clock.csv --event-time 2024-04-01T10:20:30Z
assert_eq "$OUT" "clock: 1 new record (offsets 0..0), watermark 2024-04-01T10:20:30.000Z" "ingest: the watermark in ms"
ok pull dumps --set-watermark 2030-01-01T00:00:00Z
assert_eq "$OUT" "dumps: watermark set to 2030-01-01T00:00:00.000Z" "pull --set-watermark: in ms"
times_ms log clock
assert_contains "$OUT" "  2024-05-01T00:00:00.000Z  f1620"
times_ms log clock -n 1 --detail
assert_contains "$OUT" "        watermark:    2024-04-01T10:20:30.000Z"
times_ms log dumps -n 1 --detail
assert_contains "$OUT" "2030-01-01T00:00:00.000Z"
times_ms info clock
times_ms list
times_ms txn list raw
ok token create clk
times_ms token list
unset SILT_FAKE_SYSTEM_TIME

done_tests
