#!/usr/bin/env bash
# `silt verify` on data: every slice's size, physical and logical hash and
# records are checked; a modified, truncated or missing data file (or
# checkpoint) is reported by name with exit 1, every problem on its own line;
# a valid dataset exits 0. Exact messages.
. "$(dirname "$0")/lib.sh"

mkdir ws && cd ws && ok init
cat >pop.yaml <<'EOF'
kind: DatasetSnapshot
version: 1
content:
  name: pop
  kind: Root
  metadata:
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema:
          - "city STRING"
          - "population BIGINT"
          - "event_time DATE"
      merge:
        kind: Snapshot
        primaryKey:
          - city
EOF
printf 'city,population,event_time\nA,100,2020-01-01\nB,200,2020-01-01\nC,300,2020-01-01\n' >s1.csv
printf 'city,population,event_time\nA,110,2020-01-02\nC,300,2020-01-01\nD,400,2020-01-02\n' >s2.csv
ok add pop.yaml
ok ingest pop s1.csv --input-format csv
ok ingest pop s2.csv --input-format csv

ok verify pop
assert_eq "$OUT" "pop: ok (5 blocks)" "valid dataset with a correction and a retraction"
assert_eq "$ERR" "" "nothing on stderr"

id=$(SILT_WORKSPACE=. "$SILT" info pop --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
ds=".silt/datasets/${id#did:odf:}"
# field of block SEQ's event (dotted path), from `silt log --json`
field() {
    SILT_WORKSPACE=. "$SILT" log pop --json | python3 -c '
import json, sys
seq, path = int(sys.argv[1]), sys.argv[2].split(".")
v = [b for b in json.load(sys.stdin) if b["sequenceNumber"] == seq][0]["event"]
for k in path:
    v = v[k]
print(v)' "$1" "$2"
}
d3=$(field 3 newData.physicalHash)
s3=$(field 3 newData.size)
l3=$(field 3 newData.logicalHash)
d4=$(field 4 newData.physicalHash)
c4=$(field 4 newCheckpoint.physicalHash)
mh() { python3 -c 'import hashlib,sys; print("f1620" + hashlib.sha3_256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"; }
cp -a "$ds" "$T_DIR/pristine"
restore() { rm -rf "$ds" && cp -a "$T_DIR/pristine" "$ds"; }
[ "$(mh "$ds/data/$d3")" = "$d3" ] || fail "data files are named by their SHA3-256 multihash"
pass

# 1. a flipped byte in the footer (the writer's name): physical hash only
python3 - "$ds/data/$d3" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
i = b.rindex(b'DuckDB')
b[i + 1] ^= 0x20
open(p, 'wb').write(bytes(b))
PY
got=$(mh "$ds/data/$d3")
run verify pop
assert_eq "$RC" "1" "modified data file: exit 1"
assert_eq "$OUT" "pop: INVALID (1 problem)" "modified data file: summary"
assert_eq "$ERR" "silt: pop: data file $d3 (block 3): physical hash mismatch: expected $d3, got $got" \
    "modified data file: message"
restore

# 2. the same file rewritten by a plain COPY (system_time becomes MICROS):
#    another layout and another record digest
ok sql "COPY (SELECT * FROM read_parquet('$ds/data/$d3')) TO '$T_DIR/re.parquet' (FORMAT parquet)" --unsafe-file-access
cp "$T_DIR/re.parquet" "$ds/data/$d3"
got=$(mh "$ds/data/$d3")
size=$(stat -c %s "$ds/data/$d3")
run verify pop
assert_eq "$RC" "1" "rewritten data file: exit 1"
expected=""
[ "$size" != "$s3" ] && expected="silt: pop: data file $d3 (block 3): size $size but the block says $s3
"
expected="${expected}silt: pop: data file $d3 (block 3): physical hash mismatch: expected $d3, got $got"
assert_eq "$(printf '%s\n' "$ERR" | head -n -1)" "$expected" "rewritten data file: size and physical hash"
assert_contains "$(printf '%s\n' "$ERR" | tail -n 1)" \
    "silt: pop: data file $d3 (block 3): logical hash mismatch: expected $l3, got f9680c00120"
restore

# 3. truncated data file
truncate -s 500 "$ds/data/$d3"
got=$(mh "$ds/data/$d3")
run verify pop
assert_eq "$RC" "1" "truncated data file: exit 1"
assert_eq "$OUT" "pop: INVALID (4 problems)" "truncated data file: summary"
assert_eq "$ERR" "silt: pop: data file $d3 (block 3): size 500 but the block says $s3
silt: pop: data file $d3 (block 3): physical hash mismatch: expected $d3, got $got
silt: pop: data file $d3 (block 3): cannot read as Parquet: Invalid Input Error: No magic bytes found at end of file '$PWD/$ds/data/$d3'
silt: pop: retractions and corrections were not checked against the history: 1 data file could not be read" \
    "truncated data file: messages"
restore

# 4. missing data file and missing checkpoint: both reported, by name
rm "$ds/data/$d4" "$ds/checkpoints/$c4"
run verify pop
assert_eq "$RC" "1" "missing files: exit 1"
assert_eq "$ERR" "silt: pop: checkpoint file $c4 (block 4): missing
silt: pop: data file $d4 (block 4): missing
silt: pop: retractions and corrections were not checked against the history: 1 data file could not be read" \
    "missing files: messages"
run --json verify pop
assert_eq "$RC" "1" "--json: exit 1"
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["valid"], len(d["problems"]), d["problems"][1])')" \
    "False 3 data file $d4 (block 4): missing" "--json lists the problems"
restore

# 5. a slice whose records break the changelog rules, committed with
#    `silt append` (SetDataSchema + AddData) with the right hashes: a +C
#    without its -C, and a -R of a record that was never added
ok sql "COPY (SELECT CAST(o AS UBIGINT) AS \"offset\", CAST(p AS UTINYINT) AS op, TIMESTAMPTZ '2024-01-01 00:00:00+00' AS system_time, CAST(e AS DATE) AS event_time, city FROM (VALUES (0, 0, '2020-01-01', 'A'), (1, 3, '2020-01-01', 'B'), (2, 1, '2020-01-01', 'Z')) v(o, p, e, city)) TO '$T_DIR/bad.parquet' (FORMAT parquet)" --unsafe-file-access
bh=$(mh "$T_DIR/bad.parquet")
bsize=$(stat -c %s "$T_DIR/bad.parquet")
cat >schema.yaml <<'EOF'
kind: SetDataSchema
schema:
  fields:
  - name: offset
    type:
      kind: UInt64
  - name: op
    type:
      kind: UInt8
  - name: system_time
    type:
      kind: Timestamp
      unit: Millisecond
      timezone: UTC
  - name: event_time
    type:
      kind: Date
  - name: city
    type:
      kind: Option
      inner:
        kind: String
EOF
adddata() {
    printf 'kind: AddData\nnewData:\n  logicalHash: %s\n  physicalHash: %s\n  offsetInterval:\n    start: 0\n    end: 2\n  size: %s\n' \
        "$1" "$bh" "$bsize" >adddata.yaml
}
# a first dataset with a made-up logical hash tells the real one
fake=f9680c00120abababababababababababababababababababababababababababababababab
for name in probe bad; do
    ok new "$name"
    dir=".silt/datasets/$(SILT_WORKSPACE=. "$SILT" info "$name" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"][8:])')"
    cp "$T_DIR/bad.parquet" "$dir/data/$bh"
    ok append "$name" schema.yaml
    if [ "$name" = probe ]; then adddata "$fake"; else adddata "$real"; fi
    ok append "$name" adddata.yaml
    if [ "$name" = probe ]; then
        run verify probe
        assert_eq "$RC" "1" "wrong logical hash: exit 1"
        real=$(printf '%s\n' "$ERR" | sed -n "s/^silt: probe: data file $bh (block 2): logical hash mismatch: expected $fake, got \(f9680c00120[0-9a-f]\{64\}\)\$/\1/p")
        [ -n "$real" ] || fail "logical hash mismatch not reported: $ERR"
        pass
    fi
done
run verify bad
assert_eq "$RC" "1" "changelog violations: exit 1"
assert_eq "$OUT" "bad: INVALID (2 problems)" "changelog violations: summary"
assert_eq "$ERR" "silt: bad: data file $bh (block 2): row 2 (offset 1): +C does not directly follow a -C
silt: bad: data file $bh (block 2): row 3 (offset 2): -R of a record that is not present" \
    "changelog violations: messages"
ok delete probe bad

# verify --all: one broken dataset makes it fail, the others are ok
truncate -s 100 "$ds/data/$d4"
run verify --all
assert_eq "$RC" "1" "verify --all with a broken data file"
assert_eq "$OUT" "pop: INVALID (4 problems)" "verify --all summary"
restore
ok verify --all
done_tests
