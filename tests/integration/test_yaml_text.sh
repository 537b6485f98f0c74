#!/usr/bin/env bash
# test_yaml_text.sh — YAML as users write it, through the CLI:
#  1. non-ASCII text (2-, 3- and 4-byte UTF-8: é, Cyrillic, CJK, emoji) in
#     keys, values, comments, block scalars (| and >) and flow collections,
#     across several `---` documents: `silt add` of DatasetSnapshot manifests
#     and Source/Flow resources in one file (exact stored values, the
#     preprocess query applied by an ingest), `silt append` of French and
#     Cyrillic SetInfo/SetLicense, `silt block hash` of a YAML block; a BOM,
#     CRLF line ends, UTF-16 refused;
#  2. the input limits (depth, size, anchors/aliases) of every YAML input:
#     exact one-line errors, exit 1, workspace unchanged; a 100,000-deep
#     manifest is refused at once (it took a minute before); inputs just
#     within the limits are accepted;
#  3. `silt block hash` of a `version: 2` block encodes version 2 (the
#     reference implementation's hashes of the golden blocks).
source "$(dirname "$0")/lib.sh"
use_soft_failures # one run lists every deviation

# ev DATASET N: event N (0 = newest) of `silt log DATASET --json`, as compact
# JSON with sorted keys and non-ASCII text as is
ev() {
    run log "$1" --json
    [ "$RC" -eq 0 ] || { fail "log $1: $ERR"; return 0; }
    printf '%s' "$OUT" | python3 -c 'import json,sys
d=json.load(sys.stdin)
print(json.dumps(d[int(sys.argv[1])]["event"], ensure_ascii=False, sort_keys=True, separators=(",",":")))' "$2"
}

ok init

# =============================================================================
# 1. non-ASCII text
# =============================================================================
cat >text.yaml <<'YAML'
# Метеоданные — données météo — 气象数据 — 🌡️
kind: DatasetSnapshot
version: 1
content:
  name: meteo
  kind: Root
  metadata:
  - kind: AddPushSource
    sourceName: capteurs
    read:
      kind: Csv
      header: true
    preprocess:
      kind: Sql
      engine: duckdb
      # seuil : un milliard — порог — 阈值 — 🔥
      query: SELECT CAST(jour AS DATE) AS event_time, ville, CAST(temperature AS BIGINT) AS temperature FROM input WHERE CAST(temperature AS BIGINT) > 1000000000
    merge:
      kind: Append
  - kind: SetInfo
    description: |
      Relevés de température — измерения — 温度 😀
      deuxième ligne : fin
    keywords: [météo, погода, 天气, "🌡️", plain]
  - kind: SetLicense
    shortName: CC-BY-4.0
    name: >-
      Creative Commons Attribution
      « International » — международная
    websiteUrl: https://creativecommons.org/licenses/by/4.0/legalcode.fr
---
# Второй документ, après du texte non-ASCII — 第二个
kind: DatasetSnapshot
version: 1
content:
  name: villes
  kind: Root
  metadata:
  - kind: SetDataSchema
    schema:
      fields:
      - name: ville
        type: {kind: String}
        extra: {"example.org/libellé": "Ville — город — 城市 🏙", "example.org/ключ": 1}
  - kind: SetInfo
    description: "Villes — города — 城市 — 🏙: fin"
---
$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: meteo-src
spec:
  # configuration — конфигурация — 配置
  config:
    ville: Zürich — Цюрих — 苏黎世 🇨🇭
    start: "2024-01-01"
  ingress:
    kind: Url
    url: https://example.org/météo/${{ config.ville }}.csv?from=${{ config.start }}
  read:
    kind: Csv
    header: true
  merge:
    kind: Append
---
# Flux — поток — 流 — 🌊
$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: meteo-flow
spec:
  target: Dataset:meteo
  triggers:
  - kind: Schedule
    cron: "*/15 * * * *"
  tasks:
  - kind: Ingest
    source: Source:meteo-src
    targetRecordsPerSlice: 1000
YAML
ok add text.yaml
assert_eq "$(printf '%s\n' "$OUT" | sed 's/(did:odf:[0-9a-f]*, /(DID, /')" "Added meteo (DID, 4 blocks)
Added villes (DID, 3 blocks)
Added source meteo-src
Added flow meteo-flow" "add output"

assert_eq "$(ev meteo 0)" '{"kind":"SetLicense","name":"Creative Commons Attribution « International » — международная","shortName":"CC-BY-4.0","websiteUrl":"https://creativecommons.org/licenses/by/4.0/legalcode.fr"}' "SetLicense after folded scalar"
assert_eq "$(ev meteo 1)" '{"description":"Relevés de température — измерения — 温度 😀\ndeuxième ligne : fin\n","keywords":["météo","погода","天气","🌡️","plain"],"kind":"SetInfo"}' "SetInfo: literal block, flow sequence"
assert_eq "$(ev meteo 2)" '{"kind":"AddPushSource","merge":{"kind":"Append"},"preprocess":{"engine":"duckdb","kind":"Sql","query":"SELECT CAST(jour AS DATE) AS event_time, ville, CAST(temperature AS BIGINT) AS temperature FROM input WHERE CAST(temperature AS BIGINT) > 1000000000"},"read":{"header":true,"kind":"Csv"},"sourceName":"capteurs"}' "preprocess query after non-ASCII comments"
assert_eq "$(ev villes 0)" '{"description":"Villes — города — 城市 — 🏙: fin","kind":"SetInfo"}' "second document"
assert_eq "$(ev villes 1)" '{"kind":"SetDataSchema","schema":{"fields":[{"extra":{"example.org/libellé":"Ville — город — 城市 🏙","example.org/ключ":1},"name":"ville","type":{"kind":"String"}}]}}' "non-ASCII keys in a flow mapping"

# the stored resources (canonical YAML)
assert_eq "$(cat .silt/resources/sources/meteo-src.yaml)" '$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: meteo-src
spec:
  config:
    start: "2024-01-01"
    ville: "Zürich — Цюрих — 苏黎世 🇨🇭"
  ingress:
    kind: Url
    url: https://example.org/météo/${{ config.ville }}.csv?from=${{ config.start }}
  read:
    kind: Csv
    header: true
  merge:
    kind: Append' "stored source"
assert_eq "$(cat .silt/resources/flows/meteo-flow.yaml)" '$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: meteo-flow
spec:
  target: Dataset:meteo
  triggers:
  - kind: Schedule
    cron: "*/15 * * * *"
  tasks:
  - kind: Ingest
    source: Source:meteo-src
    targetRecordsPerSlice: 1000' "stored flow"

# errors in a resource after non-ASCII text name the file's line: one found
# while rewriting the spec, one by the spec's descriptor
cat >bad-src.yaml <<'YAML'
# Источник — source — 源
$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: bad-src
spec:
  config:
    ville: Zürich — 苏黎世 🇨🇭
    liste: [été, 夏]
  ingress: {kind: Url, url: "https://example.org/é"}
  read: {kind: Csv}
  merge: {kind: Append}
YAML
before=$(tree_sum .silt)
fails 1 "silt: bad-src.yaml:8: spec.config.liste: expected a string (a literal or SecretSet:NAME#key)" add bad-src.yaml
sed -i 's/    liste: \[été, 夏\]/    liste: été/; s/read: {kind: Csv}/read: {kind: Csv, header: "oui — да"}/' bad-src.yaml
fails 1 "silt: bad-src.yaml:10: spec.read.header: expected a boolean (true or false), got 'oui — да'" add bad-src.yaml
assert_eq "$(tree_sum .silt)" "$before" "workspace unchanged by bad resources"

# the preprocess query is the one written: only temperatures above 10^9 pass
printf 'jour,ville,temperature\n2024-01-01,Zürich,1000000001\n2024-01-02,Москва,999999999\n2024-01-03,北京,2000000000\n2024-01-04,Lyon,1001\n' >m.csv
ok ingest meteo m.csv
expect_sql 'SELECT "offset", event_time, ville, temperature FROM meteo ORDER BY "offset"' "preprocess applied" <<'EOF'
offset,event_time,ville,temperature
0,2024-01-01,Zürich,1000000001
1,2024-01-03,北京,2000000000
EOF

# silt append: French and Cyrillic events, a bare event and an envelope, to
# a dataset made from an ASCII manifest
add_ds journal <<'EOF'
    - kind: SetInfo
      description: ascii
EOF
cat >events.yaml <<'YAML'
# Événements — события — 事件
kind: SetInfo
description: "Données de la ville — данные города"
keywords: [été, лето, 夏, "☀️"]
---
kind: MetadataEvent
version: 1
content:
  kind: SetLicense
  shortName: ОДЛ
  name: Открытая лицензия — licence ouverte
  websiteUrl: https://www.etalab.gouv.fr/licence-ouverte-open-licence/
YAML
ok append journal events.yaml
assert_contains "$OUT" "Appended 2 blocks to journal"
assert_eq "$(ev journal 0)" '{"kind":"SetLicense","name":"Открытая лицензия — licence ouverte","shortName":"ОДЛ","websiteUrl":"https://www.etalab.gouv.fr/licence-ouverte-open-licence/"}' "appended SetLicense"
assert_eq "$(ev journal 1)" '{"description":"Données de la ville — данные города","keywords":["été","лето","夏","☀️"],"kind":"SetInfo"}' "appended SetInfo"

# every stored block decodes to YAML that hashes back to its name
for ds in meteo villes journal; do
    run --json info "$ds"
    id=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' 2>/dev/null) || {
        fail "no dataset $ds"
        continue
    }
    for b in .silt/datasets/"${id#did:odf:}"/blocks/*; do
        ok block decode "$b"
        printf '%s' "$OUT" >decoded.yaml
        ok block hash decoded.yaml
        assert_eq "$OUT" "$(basename "$b")" "decode + hash of $ds block $(basename "$b")"
    done
done
ok verify --all

# silt block hash: a block written with non-ASCII comments, a block scalar
# and a flow collection hashes like the same block with every non-ASCII
# character escaped (pure ASCII: read the same by any YAML reader)
cat >blk.yaml <<'YAML'
# Блок — bloc — 块 — 🧱
kind: MetadataBlock
version: 3
content:
  systemTime: 2024-05-01T10:00:00Z
  sequenceNumber: 7
  prevBlockHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272
  event:
    kind: SetInfo
    # описание
    description: >
      Données — данные
      — 数据 😀
    keywords: {é: 1}
YAML
# keywords must be a sequence: the error names the line in spite of the text before it
fails 1 "silt: blk.yaml:14: content.event.keywords: expected a sequence of strings, got a mapping" block hash blk.yaml
sed -i 's/keywords: {é: 1}/keywords: [clé, ключ, 鍵, 🔑]/' blk.yaml
cat >blk-ascii.yaml <<'YAML'
kind: MetadataBlock
version: 3
content:
  systemTime: 2024-05-01T10:00:00Z
  sequenceNumber: 7
  prevBlockHash: f16209eb949bd8ff0bb1d827f11809aebc6bd0d5955c7f368469a913c70d196620272
  event:
    kind: SetInfo
    description: "Donn\u00e9es \u2014 \u0434\u0430\u043d\u043d\u044b\u0435 \u2014 \u6570\u636e \U0001F600\n"
    keywords: ["cl\u00e9", "\u043a\u043b\u044e\u0447", "\u9375", "\U0001F511"]
YAML
ok block hash blk-ascii.yaml
H=$OUT
ok block hash blk.yaml
assert_eq "$OUT" "$H" "block hash of non-ASCII YAML"
# a UTF-8 byte order mark and CRLF line ends change nothing
{ printf '\xef\xbb\xbf'; sed 's/$/\r/' blk.yaml; } >blk-bom.yaml
ok block hash blk-bom.yaml
assert_eq "$OUT" "$H" "block hash with BOM and CRLF"
# UTF-16 is refused with a clear message
python3 -c 'import sys; sys.stdout.buffer.write(open("blk.yaml", encoding="utf-8").read().encode("utf-16"))' >blk16.yaml
fails 1 "silt: blk16.yaml: UTF-16 or UTF-32 text is not supported: save the file as UTF-8" block hash blk16.yaml
before=$(tree_sum .silt)
fails 1 "silt: blk16.yaml: UTF-16 or UTF-32 text is not supported: save the file as UTF-8" add blk16.yaml
assert_eq "$(tree_sum .silt)" "$before" "workspace unchanged by a UTF-16 manifest"

# a BOM before a multi-document manifest
{ printf '\xef\xbb\xbf'; cat <<'YAML'; } >bom.yaml
kind: DatasetSnapshot
version: 1
content:
  name: bom
  kind: Root
  metadata:
  - kind: SetInfo
    description: Ça marche
---
kind: DatasetSnapshot
version: 1
content:
  name: bom2
  kind: Root
  metadata: []
YAML
ok add bom.yaml
assert_eq "$(ev bom 0)" '{"description":"Ça marche","kind":"SetInfo"}' "manifest with a BOM"

# =============================================================================
# 2. limits: depth 64, 32 MiB, no anchors or aliases
# =============================================================================
# snapshot NAME DEPTH: a manifest whose deepest node (the Int8) is at level DEPTH
snapshot() {
    python3 - "$1" "$2" <<'PY'
import sys
name, depth = sys.argv[1], int(sys.argv[2])
k = depth - 8  # root, content, metadata, event, schema, fields, field, type
t = "{kind: Option, inner: " * k + "Int8" + "}" * k
print(f"""# profondeur — глубина — 深度
kind: DatasetSnapshot
version: 1
content:
  name: {name}
  kind: Root
  metadata:
  - kind: SetDataSchema
    schema:
      fields:
      - name: x
        type: {t}""")
PY
}
snapshot deep64 64 >d64.yaml
ok add d64.yaml
snapshot deep65 65 >d65.yaml
before=$(tree_sum .silt)
fails 1 "silt: d65.yaml:12: nesting deeper than 64 levels" add d65.yaml
assert_eq "$(tree_sum .silt)" "$before" "workspace unchanged (depth 65)"

# 100,000 nested flow sequences (200 KB): refused at once, linear time (it
# took about a minute: libyaml's document loader is quadratic in flow depth)
python3 -c 'print("kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: deep\n  kind: Root\n  metadata: " + "[" * 100000 + "]" * 100000)' >deep.yaml
set +e
timeout 10 "$SILT" add deep.yaml >/dev/null 2>"$T_DIR/.err"
RC=$?
set -e
assert_eq "$RC" 1 "100,000-deep manifest: exit code (124 = still running after 10 s)"
assert_eq "$(cat "$T_DIR/.err")" "silt: deep.yaml:6: nesting deeper than 64 levels" "100,000-deep manifest: message"
assert_eq "$(tree_sum .silt)" "$before" "workspace unchanged (100,000 deep)"
# the same through append, block hash and schema set (10,000 deep)
python3 -c 'print("kind: SetInfo\nkeywords: " + "[" * 10000 + "]" * 10000)' >deep-ev.yaml
fails 1 "silt: deep-ev.yaml:2: nesting deeper than 64 levels" append journal deep-ev.yaml
python3 -c 'print("kind: MetadataBlock\nversion: 3\ncontent: " + "[" * 10000 + "]" * 10000)' >deep-blk.yaml
fails 1 "silt: deep-blk.yaml:3: nesting deeper than 64 levels" block hash deep-blk.yaml
ok new files --files
before=$(tree_sum .silt)
python3 -c 'print("fieldSchemaList:\n  - {name: a, type: " + "[" * 10000 + "]" * 10000 + "}")' >deep-schema.yaml
fails 1 "silt: deep-schema.yaml:2: nesting deeper than 64 levels" schema set files deep-schema.yaml
printf 'fieldSchemaList:\n  - &f {name: a, type: LONG}\n  - *f\n' >alias-schema.yaml
fails 1 "silt: alias-schema.yaml:2: YAML anchors and aliases are not supported" schema set files alias-schema.yaml
assert_eq "$(tree_sum .silt)" "$before" "workspace unchanged (append, schema set)"

# anchors and aliases
printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: al\n  kind: Root\n  metadata:\n  - &e {kind: SetInfo, description: é}\n  - *e\n' >alias.yaml
fails 1 "silt: alias.yaml:7: YAML anchors and aliases are not supported" add alias.yaml

# size: 32 MiB is accepted, one byte more is refused before reading
python3 - <<'PY'
head = "# taille — размер\nkind: DatasetSnapshot\nversion: 1\ncontent:\n  name: big\n  kind: Root\n  metadata:\n  - kind: SetInfo\n    description: \""
tail = "\"\n"
n = (32 << 20) - len(head.encode()) - len(tail)
with open("big.yaml", "w", encoding="utf-8") as f:
    f.write(head + "é" * (n // 2) + "x" * (n % 2) + tail)
PY
[ "$(wc -c <big.yaml)" -eq 33554432 ] || fail "big.yaml is not 32 MiB"
ok add big.yaml
run --json info big
assert_contains "$OUT" '"blocks":2,' "32 MiB manifest added"
printf ' ' >>big.yaml
sed -i 's/name: big$/name: big2/' big.yaml
before=$(tree_sum .silt)
fails 1 "silt: big.yaml: larger than 32 MiB, the limit for YAML/JSON input" add big.yaml
fails 1 "silt: big.yaml: larger than 32 MiB, the limit for YAML/JSON input" append journal big.yaml
fails 1 "silt: big.yaml: larger than 32 MiB, the limit for YAML/JSON input" block hash big.yaml
fails 1 "silt: big.yaml: larger than 32 MiB, the limit for YAML/JSON input" schema set files big.yaml
assert_eq "$(tree_sum .silt)" "$before" "workspace unchanged (size)"
rm -f big.yaml

# =============================================================================
# 3. block hash of a version 2 block: version 2, as the reference wrote it
# =============================================================================
for y in "$SILT_FIXTURES"/odf-golden/case*.yaml; do
    sed 's/^version: 3$/version: 2/' "$y" >v2.yaml
    ok block hash v2.yaml
    assert_eq "$OUT" "f1620$(tr -d '\n' <"${y%.yaml}.v2.hash")" "version 2 hash of $(basename "$y")"
done
sed 's/^version: 3$/version: 1/' "$SILT_FIXTURES/odf-golden/case0.yaml" >v1.yaml
fails 1 "silt: v1.yaml:2: version: unsupported MetadataBlock version '1' (supported: 2..3)" block hash v1.yaml

finish
