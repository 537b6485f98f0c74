#!/usr/bin/env bash
# test_resources.sh — Source/Flow resources through the CLI: `silt add` of
# files mixing DatasetSnapshot documents and resources, `silt sources` /
# `silt flows` (exact output), invalid resources (exit 1, one line naming
# file:line and field, workspace unchanged), replacing a resource.
# Secrets (file mode, env override, redaction) are covered at the library
# level in tests/unit/test_resources.c; here the stored resources and the
# listings are checked not to contain secret values.
source "$(dirname "$0")/lib.sh"

ok init
cp "$SILT_FIXTURES/resources/bank.yaml" bank.yaml
ok add bank.yaml
assert_eq "$(printf '%s\n' "$OUT" | sed 's/(did:odf:[0-9a-f]*, /(DID, /')" "Added ca.bankofcanada (DID, 2 blocks)
Added source ca.bankofcanada
Added flow ca.bankofcanada" "add output"

ok sources
assert_eq "$OUT" "NAME                     INGRESS    MERGE      LOCATION
ca.bankofcanada          Url        Ledger     https://www.bankofcanada.ca/valet/csv?start_date=\${{ config.startDate }}" "sources"

SILT_FAKE_SYSTEM_TIME=2024-05-01T10:07:00Z ok flows
assert_eq "$OUT" "NAME                     TARGET                   SOURCE                   NEXT RUN             SCHEDULE
ca.bankofcanada          ca.bankofcanada          ca.bankofcanada          2024-05-01T10:30:00Z */30 * * * *" "flows"

SILT_FAKE_SYSTEM_TIME=2024-12-31T23:59:00Z ok flows --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d, sort_keys=True))')" \
    '[{"name": "ca.bankofcanada", "nextRun": "2025-01-01T00:00:00Z", "schedules": ["*/30 * * * *"], "source": "ca.bankofcanada", "target": "ca.bankofcanada", "targetRecordsPerSlice": 10000}]' "flows --json"

ok sources --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d, sort_keys=True))')" \
    '[{"ingress": "Url", "location": "https://www.bankofcanada.ca/valet/csv?start_date=${{ config.startDate }}", "merge": "Ledger", "name": "ca.bankofcanada", "skipped": []}]' "sources --json"

# canonical storage
assert_eq "$(cat .silt/resources/flows/ca.bankofcanada.yaml)" '$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: ca.bankofcanada
spec:
  target: Dataset:ca.bankofcanada
  triggers:
  - kind: Schedule
    cron: "*/30 * * * *"
  tasks:
  - kind: Ingest
    source: Source:ca.bankofcanada
    targetRecordsPerSlice: 10000' "stored flow"

# a second file: a new source + a flow replacing the first one (several per file)
cat >more.yaml <<'YAML'
$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: dumps
spec:
  ingress:
    kind: FilesGlob
    path: /data/dump-*.csv
    eventTime:
      kind: FromPath
      pattern: 'dump-(\d+-\d+-\d+)\.csv'
  read:
    kind: Csv
  merge:
    kind: Snapshot
    primaryKey: [id]
---
$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: ca.bankofcanada
spec:
  target: Dataset:ca.bankofcanada
  triggers:
    - kind: Schedule
      cron: "0 6 * * MON-FRI"
  tasks:
    - kind: Ingest
      source: dumps
YAML
ok add more.yaml
assert_eq "$OUT" "Added source dumps
Updated flow ca.bankofcanada" "re-add output"
ok sources
assert_eq "$OUT" "NAME                     INGRESS    MERGE      LOCATION
ca.bankofcanada          Url        Ledger     https://www.bankofcanada.ca/valet/csv?start_date=\${{ config.startDate }}
dumps                    FilesGlob  Snapshot   /data/dump-*.csv" "sources after re-add"
SILT_FAKE_SYSTEM_TIME=2024-05-04T10:07:00Z ok flows
assert_eq "$OUT" "NAME                     TARGET                   SOURCE                   NEXT RUN             SCHEDULE
ca.bankofcanada          ca.bankofcanada          dumps                    2024-05-06T06:00:00Z 0 6 * * MON-FRI" "flows after re-add"

# invalid resources: exit 1, one line naming file:line and field, nothing changed
snapshot_ws() { find .silt -type f ! -name lock -exec sha256sum {} + | sort; }
BEFORE=$(snapshot_ws)
bad() { # NAME 'expected stderr' CONTENT
    printf '%s\n' "$3" >"$1.yaml"
    fails 1 "silt: $1.yaml:$2" add "$1.yaml"
    assert_eq "$(snapshot_ws)" "$BEFORE" "workspace unchanged after $1"
}
bad unknown_field '6: spec.ingress2: unknown field '"'ingress2'"' in SourceSpec' '$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: s2
spec:
  ingress: {kind: Url, url: "http://x"}
  ingress2: 1
  read: {kind: Csv}'
bad bad_kind "5: spec.ingress.kind: unknown kind 'Ftp' for Ingress" '$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: s2
spec:
  ingress: {kind: Ftp, url: "ftp://x"}
  read: {kind: Csv}'
bad bad_cron "8: spec.triggers[0].cron: invalid cron expression '0 25 * * *': hour: value 25 out of range 0-23" '$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: f2
spec:
  target: Dataset:ca.bankofcanada
  triggers:
    - kind: Schedule
      cron: "0 25 * * *"
  tasks:
    - {kind: Ingest, source: dumps}'
bad bad_target "5: spec.target: dataset 'nope' not found (add it first or in the same file)" '$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: f2
spec:
  target: Dataset:nope
  triggers: [{kind: Schedule, cron: "@daily"}]
  tasks: [{kind: Ingest, source: dumps}]'
bad bad_source "9: spec.tasks[0].source: source 'nosuch' not found (add it first or in the same file)" '$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: f2
spec:
  target: Dataset:ca.bankofcanada
  triggers: [{kind: Schedule, cron: "@daily"}]
  tasks:
    - kind: Ingest
      source: Source:nosuch'
bad bad_schema "1: \$schema: unsupported resource type 'https://opendatafabric.org/schemas/dataset/v1alpha1/Dataset' (expected https://opendatafabric.org/schemas/source/v1alpha1/Source or https://opendatafabric.org/schemas/flow/v1alpha1/Flow)" '$schema: https://opendatafabric.org/schemas/dataset/v1alpha1/Dataset
headers:
  name: d
spec: {kind: Root}'
# a bad resource after a valid snapshot: neither is added
bad mixed_bad "13: spec.config.k: expected SecretSet:NAME#key, got 'SecretSet:nokey'" 'kind: DatasetSnapshot
version: 1
content:
  name: newds
  kind: Root
  metadata: []
---
$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: s3
spec:
  config:
    k: SecretSet:nokey
  read: {kind: Csv}'
ok list
assert_eq "$(printf '%s\n' "$OUT" | awk 'NR>1{print $1}')" "ca.bankofcanada" "no dataset from the failed file"

# secret values never reach the stored resources or listings
export SILT_SECRET_CA_BANKOFCANADA_APIKEY=topsecret-123
ok sources --json
case "$OUT" in *topsecret*) fail "secret in sources output" ;; esac
if grep -rq topsecret .silt; then fail "secret stored in the workspace"; fi
pass

echo "ok $T_NAME ($T_PASS checks)"
