#!/usr/bin/env bash
# `silt verify` catches tampered, truncated and missing blocks and refs that
# point nowhere; every problem is named, exit code 1; a valid chain exits 0.
. "$(dirname "$0")/lib.sh"

mkdir ws && cd ws && ok init
ok add "$SILT_SOURCE_DIR/examples/city-populations.yaml"
for i in 1 2 3 4 5; do
    printf 'kind: SetInfo\ndescription: revision %s\n' "$i" >"$T_DIR/info$i.yaml"
    ok append city-populations "$T_DIR/info$i.yaml"
done
ok verify city-populations
assert_eq "$OUT" "city-populations: ok (9 blocks)" "valid chain"
ok verify city-populations --json
assert_eq "$(echo "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin)[0]; print(d["valid"], d["blocks"], d["problems"])')" "True 9 []" "verify --json"

id=$(SILT_WORKSPACE=. "$SILT" info city-populations --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
ds=".silt/datasets/${id#did:odf:}"
head=$(cat "$ds/refs/head")
cp -a "$ds" "$T_DIR/pristine"
restore() { rm -rf "$ds" && cp -a "$T_DIR/pristine" "$ds"; }

# pick a block in the middle of the chain (sequence number 4)
mid=$(SILT_WORKSPACE=. "$SILT" log city-populations --json | python3 -c 'import json,sys; print([b["hash"] for b in json.load(sys.stdin) if b["sequenceNumber"]==4][0])')

# 1. tampered block: flip one byte
python3 - "$ds/blocks/$mid" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x01
open(p, 'wb').write(bytes(b))
PY
run verify city-populations
[ "$RC" -eq 1 ] || fail "tampered block must fail verify"
assert_contains "$OUT" "city-populations: INVALID"
assert_contains "$ERR" "$mid"
assert_contains "$ERR" "hash mismatch"
restore

# 2. truncated block
truncate -s 20 "$ds/blocks/$mid"
run verify city-populations
[ "$RC" -eq 1 ] || fail "truncated block must fail verify"
assert_contains "$ERR" "$mid"
restore

# 3. missing block
rm "$ds/blocks/$mid"
run verify city-populations
[ "$RC" -eq 1 ] || fail "missing block must fail verify"
assert_contains "$ERR" "$mid"
assert_contains "$ERR" "missing"
restore

# 4. ref pointing nowhere
printf 'f16200000000000000000000000000000000000000000000000000000000000000000' >"$ds/refs/head"
run verify city-populations
[ "$RC" -eq 1 ] || fail "dangling ref must fail verify"
assert_contains "$ERR" "f16200000000000000000000000000000000000000000000000000000000000000000"
fails_like 1 "f16200000000000000000000000000000000000000000000000000000000000000000" log city-populations
restore

# 5. garbage in the ref
printf 'not-a-hash' >"$ds/refs/head"
fails_like 1 "refs/head" log city-populations
restore

# 6. a block replaced by another valid block of the same dataset (wrong link)
cp "$ds/blocks/$head" "$ds/blocks/$mid"
run verify city-populations
[ "$RC" -eq 1 ] || fail "swapped block must fail verify"
assert_contains "$ERR" "$mid"
restore

ok verify --all
assert_eq "$OUT" "city-populations: ok (9 blocks)" "restored chain is valid"

# verify --all reports every dataset and fails if one is broken
ok add "$SILT_SOURCE_DIR/examples/sensor-readings.yaml"
truncate -s 10 "$ds/blocks/$head"
run verify --all
[ "$RC" -eq 1 ] || fail "verify --all with a broken dataset"
assert_contains "$OUT" "city-populations: INVALID"
assert_contains "$OUT" "sensor-readings: ok (4 blocks)"
done_tests
