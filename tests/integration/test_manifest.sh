#!/usr/bin/env bash
# `silt add` of DatasetSnapshot manifests, `silt block hash|decode` against the
# ODF golden vectors, `silt append`, and rejection of bad input: one-line
# error naming the file and field, exit 1, workspace unchanged.
. "$(dirname "$0")/lib.sh"

# --- golden vectors: block hash ------------------------------------------------
for y in "$SILT_FIXTURES"/odf-golden/case*.yaml; do
    h="f1620$(cat "${y%.yaml}.hash" | tr -d '\n')"
    ok block hash "$y"
    assert_eq "$OUT" "$h" "block hash of $(basename "$y")"
done
# the shared fixtures (if present beside the checkout) must match too
if [ -d "$SILT_SOURCE_DIR/../shared/fixtures/odf-golden" ]; then
    for y in "$SILT_SOURCE_DIR"/../shared/fixtures/odf-golden/case*.yaml; do
        ok block hash "$y"
        assert_eq "$OUT" "f1620$(cat "${y%.yaml}.hash" | tr -d '\n')" "shared $(basename "$y")"
    done
fi

mkdir ws && cd ws && ok init

# --- add manifests ----------------------------------------------------------------
ok add "$SILT_SOURCE_DIR/examples/city-populations.yaml" "$SILT_SOURCE_DIR/examples/sensor-readings.yaml"
assert_contains "$OUT" "Added city-populations"
assert_contains "$OUT" "Added sensor-readings"
ok log city-populations
# Seed + SetPollingSource + SetInfo + SetLicense, newest first
assert_eq "$(echo "$OUT" | awk '{print $1":"$4}' | tr '\n' ' ')" "3:SetLicense 2:SetInfo 1:SetPollingSource 0:Seed " "log of city-populations"
ok add "$SILT_SOURCE_DIR/examples/hottest-days.yaml"
ok info hottest-days --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["kind"], d["blocks"])')" "Derivative 3" "derivative"

# every stored block decodes to YAML whose hash is the file name
id=$(SILT_WORKSPACE=. "$SILT" info city-populations --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
dsdir=".silt/datasets/${id#did:odf:}"
for b in "$dsdir"/blocks/*; do
    ok block decode "$b"
    printf '%s' "$OUT" >"$T_DIR/decoded.yaml"
    ok block hash "$T_DIR/decoded.yaml"
    assert_eq "$OUT" "$(basename "$b")" "decode+hash round trip of $(basename "$b")"
done
# log --yaml output of the newest block equals block decode of the head file
ok log city-populations -n 1 --yaml
assert_contains "$OUT" "kind: SetLicense"
assert_contains "$OUT" "spdxId: CC0-1.0"

# several documents in one file, one of them invalid: the valid one is added, the
# invalid one leaves nothing behind
cat >"$T_DIR/multi.yaml" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: doc-one
  kind: Root
  metadata:
  - kind: SetInfo
    description: first
---
kind: DatasetSnapshot
version: 1
content:
  name: doc-two
  kind: Root
  metadata:
  - kind: SetInfo
    description: second
  - kind: SetLicense
    shortName: 42
    spdxId: [not, a, string]
YAML
run add "$T_DIR/multi.yaml"
[ "$RC" -eq 1 ] || fail "add of an invalid document must exit 1"
assert_contains "$ERR" "multi.yaml"
assert_contains "$ERR" "spdxId"
# the whole file is parsed before anything is created: nothing of it exists
ok list
case "$OUT" in *doc-one* | *doc-two*) fail "no dataset of multi.yaml may exist" ;; *) pass ;; esac
# a chain-rule failure in the second document leaves the first one created
cat >"$T_DIR/multi2.yaml" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: doc-three
  kind: Root
  metadata:
  - kind: SetInfo
    description: third
---
kind: DatasetSnapshot
version: 1
content:
  name: doc-four
  kind: Root
  metadata:
  - kind: DisablePollingSource
YAML
fails_like 1 "DisablePollingSource" add "$T_DIR/multi2.yaml"
ok list
assert_contains "$OUT" "doc-three"
case "$OUT" in *doc-four*) fail "doc-four must not exist" ;; *) pass ;; esac
[ -z "$(ls -A .silt/tmp 2>/dev/null)" ] || fail "staging leftovers in .silt/tmp"

# --- append events ---------------------------------------------------------------
cat >"$T_DIR/info.yaml" <<'YAML'
kind: SetInfo
description: Updated description
YAML
ok append city-populations "$T_DIR/info.yaml"
assert_contains "$OUT" "Appended 1 block"
# the same event again is a no-op and is rejected
fails_like 1 "no-op" append city-populations "$T_DIR/info.yaml"

# --- bad input leaves the workspace unchanged --------------------------------------
before=$(tree_sum .silt)
bad() { # bad NAME 'expected substring' <<< yaml
    cat >"$T_DIR/$1"
    fails_like 1 "$2" add "$T_DIR/$1"
    assert_eq "$(tree_sum .silt)" "$before" "workspace changed by $1"
}
bad malformed.yaml "malformed.yaml" <<'YAML'
kind: DatasetSnapshot
version: 1
content: {name: x, kind: Root, metadata: [
YAML
bad unknown-kind.yaml "unknown kind 'SetFoo'" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: x
  kind: Root
  metadata:
  - kind: SetFoo
YAML
bad wrong-type.yaml "content.metadata[0].keywords" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: x
  kind: Root
  metadata:
  - kind: SetInfo
    keywords: 12
YAML
bad wrong-envelope.yaml "wrong-envelope.yaml" <<'YAML'
kind: MetadataBlock
version: 3
content:
  systemTime: 2020-01-01T12:00:00Z
  sequenceNumber: 0
  event:
    kind: SetInfo
YAML
bad bad-version.yaml "version" <<'YAML'
kind: DatasetSnapshot
version: 7
content:
  name: x
  kind: Root
  metadata: []
YAML
bad bad-hash.yaml "prevCheckpoint" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: x
  kind: Root
  metadata:
  - kind: AddData
    prevCheckpoint: f1620zzzz
YAML
cat >"$T_DIR/bad-did.yaml" <<'YAML'
kind: MetadataBlock
version: 3
content:
  systemTime: 2020-01-01T12:00:00Z
  sequenceNumber: 0
  event:
    kind: Seed
    datasetId: did:odf:fzz
    datasetKind: Root
YAML
fails_like 1 "content.event.datasetId" block hash "$T_DIR/bad-did.yaml"
bad seed-in-manifest.yaml "Seed" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: x
  kind: Root
  metadata:
  - kind: Seed
    datasetId: did:odf:fed01abababababababababababababababababababababababababababababababab
    datasetKind: Root
YAML
bad push-and-poll.yaml "push" <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: x
  kind: Root
  metadata:
  - kind: AddPushSource
    sourceName: a
    read:
      kind: NdJson
    merge:
      kind: Append
  - kind: SetPollingSource
    fetch:
      kind: Url
      url: http://127.0.0.1:1/x.csv
    read:
      kind: Csv
    merge:
      kind: Append
YAML
fails_like 1 "nothing.yaml" add "$T_DIR/nothing.yaml"
assert_eq "$(tree_sum .silt)" "$before" "workspace changed by a missing file"

# block hash / decode of broken files
printf 'garbage' >"$T_DIR/garbage.bin"
fails_like 1 "garbage.bin" block decode "$T_DIR/garbage.bin"
head -c 40 "$(ls "$dsdir"/blocks/* | head -1)" >"$T_DIR/truncated.bin"
fails_like 1 "truncated.bin" block decode "$T_DIR/truncated.bin"
fails_like 1 "malformed.yaml" block hash "$T_DIR/malformed.yaml"

ok verify --all
done_tests
