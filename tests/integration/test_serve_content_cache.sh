#!/usr/bin/env bash
# silt serve keeps the bytes of small stored objects in memory
# (silt_files_read_small): a file's content is answered from there only while
# its object stats as when it was read. An object changed in place, removed,
# or replaced is read from disk again (or refused) — never the remembered bytes.
source "$(dirname "$0")/lib.sh"

ok init
ok new ex --files
head -c 4096 /dev/urandom >a.bin
head -c 70000 /dev/urandom >big.bin # above SILT_FILES_SMALL_MAX: sent from the file
ok upload ex a.bin
ok upload ex big.bin
HASH=$("$SILT" --json files ex | jget "[f['contentHash'] for f in d if f['path']=='a.bin'][0]")
OBJ=$(ls -d .silt/datasets/*/data)/$HASH
[ -f "$OBJ" ] || fail "object $OBJ not found"
pass

serve_start
C=/api/v2/datasets/ex/files/a.bin/content
sleep 2.2 # objects younger than 2 s are never cached (coarse file times)
for i in 1 2 3; do
    expect_http 200 GET "$C"
    cmp -s "$T_DIR/.hbody" a.bin || fail "content of a.bin (request $i) differs from the upload"
    pass
done
expect_http 200 GET /api/v2/datasets/ex/files/big.bin/content
cmp -s "$T_DIR/.hbody" big.bin || fail "content of big.bin differs from the upload"
pass

# changed in place (same size): the new bytes, not the cached ones
python3 - "$OBJ" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.write(b"\0" * 16)
PY
head -c 16 /dev/zero >changed.bin
tail -c +17 a.bin >>changed.bin
expect_http 200 GET "$C"
cmp -s "$T_DIR/.hbody" changed.bin || fail "an object changed in place was answered from the cache"
pass

# removed: the missing object is reported, as without the cache
rm "$OBJ"
expect_http 500 GET "$C"
assert_contains "$HTTP_BODY" "file 'a.bin': object $HASH is missing (run 'silt verify ex')"

# restored (a new inode): its bytes again
cp a.bin "$OBJ"
expect_http 200 GET "$C"
cmp -s "$T_DIR/.hbody" a.bin || fail "a restored object was not read again"
pass
serve_stop
done_tests
