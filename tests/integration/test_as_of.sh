#!/usr/bin/env bash
# --as-of REF on every reading command (sql, tail, schema, files, cat, log):
# a block hash or a unique prefix, a sequence number, an RFC 3339 time or a
# transaction rid; --at stays as an alias; bad references fail with one line.
# An 8-character prefix ("f1620" + 3 hex digits: 12 bits) shared by two
# blocks is ambiguous for every command, changes nothing, and a longer
# prefix that is unique resolves to its block.
source "$(dirname "$0")/lib.sh"

ok init
SILT_FAKE_SYSTEM_TIME=2030-01-01T00:00:00Z ok new pop --push-source csv --schema 'city STRING, n BIGINT'
printf 'city,n\nA,1\n' >a.csv
printf 'city,n\nB,2\n' >b.csv
printf 'city,n\nC,3\n' >c.csv
SILT_FAKE_SYSTEM_TIME=2030-01-02T00:00:00Z ok ingest pop a.csv
SILT_FAKE_SYSTEM_TIME=2030-01-03T00:00:00Z ok ingest pop b.csv
SILT_FAKE_SYSTEM_TIME=2030-01-04T00:00:00Z ok ingest pop c.csv
ok --json log pop
NB=$(jget "len(d)" <<<"$OUT")
H_LAST=$(jget "d[0]['hash']" <<<"$OUT")
H_B=$(jget "d[1]['hash']" <<<"$OUT")    # the ingest of b.csv
SEQ_B=$(jget "d[1]['sequenceNumber']" <<<"$OUT")
[ "$NB" -ge 4 ] || fail "expected at least 4 blocks, got $NB"
pass

# ---- tail: every form of REF gives the records as of the b.csv ingest -------------------
for ref in "$H_B" "${H_B:0:12}" "$SEQ_B" 2030-01-03T12:00:00Z 2030-01-03T00:00:00Z; do
    ok tail pop --as-of "$ref" --format csv
    assert_eq "$(printf '%s\n' "$OUT" | cut -d, -f5,6)" $'city,n\nA,1\nB,2' "tail --as-of $ref"
done
ok tail pop --at "$SEQ_B" --format csv
assert_eq "$(printf '%s\n' "$OUT" | cut -d, -f5,6)" $'city,n\nA,1\nB,2' "tail --at (alias)"
ok tail pop --format csv
assert_eq "$(printf '%s\n' "$OUT" | wc -l)" 4 "tail without --as-of: all three"

# ---- sql NAME=REF ------------------------------------------------------------------------------
ok sql 'SELECT count(*) AS n FROM pop' --as-of "pop=$SEQ_B" --format csv
assert_eq "$OUT" $'n\n2' "sql --as-of NAME=SEQ"
ok sql 'SELECT count(*) AS n FROM pop' --as-of "pop=2030-01-02T06:00:00Z" --format csv
assert_eq "$OUT" $'n\n1' "sql --as-of NAME=TIME"
ok sql 'SELECT count(*) AS n FROM pop' --as-of "$H_B" --format csv
assert_eq "$OUT" $'n\n2' "sql --as-of BLOCK (bare, full hash)"

# ---- log: starts at the block ---------------------------------------------------------------------
ok --json log pop --as-of "$SEQ_B"
assert_eq "$(jget "d[0]['hash']" <<<"$OUT")" "$H_B" "log --as-of: first block"
assert_eq "$(jget "len(d)" <<<"$OUT")" "$((NB - 1))" "log --as-of: the rest of the chain"
ok --json log pop --as-of "$SEQ_B" -n 1
assert_eq "$(jget "len(d)" <<<"$OUT")" 1 "log --as-of -n 1"

# ---- schema: the seed has none, later blocks have it ----------------------------------------------
fails_like 1 "dataset 'pop' has no schema" schema pop --as-of 0
ok schema pop --as-of "$SEQ_B"
assert_contains "$OUT" "city: "

# ---- bad references ----------------------------------------------------------------------------------
fails_like 1 "--as-of '999': no block of pop matches" tail pop --as-of 999
fails_like 1 "--as-of '2020-01-01T00:00:00Z': no block of pop matches (the dataset is newer than that time)" \
    tail pop --as-of 2020-01-01T00:00:00Z
fails_like 1 "--as-of 'f1620ab': a block hash prefix needs at least 8 characters" tail pop --as-of f1620ab
fails_like 1 "--as-of 'f1620ffffffffff': no block of pop matches" tail pop --as-of f1620ffffffffff
fails_like 1 "transaction ri.silt.main.transaction.00000000-0000-4000-8000-000000000000 is not committed on branch master of pop" \
    log pop --as-of ri.silt.main.transaction.00000000-0000-4000-8000-000000000000
fails_like 2 "tail: give --as-of once" tail pop --as-of 1 --as-of 2

# ---- files datasets: files, cat, schema by rid, time, sequence ----------------------------------------
SILT_FAKE_SYSTEM_TIME=2030-02-01T00:00:00Z ok new docs --files
printf 'one' >x.txt
SILT_FAKE_SYSTEM_TIME=2030-02-02T00:00:00Z ok upload docs x.txt
T1=$OUT
printf 'two' >x.txt
SILT_FAKE_SYSTEM_TIME=2030-02-03T00:00:00Z ok upload docs x.txt
for ref in "$T1" 2030-02-02T12:00:00Z; do
    ok cat docs x.txt --as-of "$ref"
    assert_eq "$OUT" one "cat --as-of $ref"
done
ok cat docs x.txt --at "$T1"
assert_eq "$OUT" one "cat --at RID (alias)"
ok cat docs x.txt
assert_eq "$OUT" two "cat: latest"
ok --json files docs --as-of 2030-02-02T12:00:00Z
assert_eq "$(jget "d[0]['size']" <<<"$OUT")" 3 "files --as-of time"
fails_like 1 "--as-of '2030-02-01T12:00:00Z': no transaction was committed at or before block" \
    files docs --as-of 2030-02-01T12:00:00Z

# ---- an ambiguous prefix -------------------------------------------------------------------------------
# Blocks are made with SetInfo events (silt append, 100 blocks a call) until
# two blocks of the dataset share their first 8 characters: 12 bits, so
# expected after ~80 blocks; the chance of none in 1,500 is below 1e-100.
# collide NAME: sets P (a prefix of 8 characters shared by two blocks of
# NAME), H (the newer of them), LONG (the shortest prefix of H no other
# block has) and SEQ_H (its sequence number)
collide() {
    local name=$1 made=0 i
    while [ "$made" -lt 1500 ]; do
        for i in $(seq 1 100); do printf 'kind: SetInfo\ndescription: "%s %d"\n' "$name" $((made + i)) >"info-$i.yaml"; done
        ok append "$name" info-*.yaml
        made=$((made + 100))
        ok --json log "$name"
        read -r P H LONG SEQ_H < <(python3 -c '
import json, sys
d = json.load(sys.stdin)
seen = {}
for b in d:  # newest first
    p = b["hash"][:8]
    if p in seen:
        h = seen[p]
        n = 9
        while sum(1 for o in d if o["hash"].startswith(h["hash"][:n])) > 1:
            n += 1
        print(p, h["hash"], h["hash"][:n], h["sequenceNumber"])
        break
    seen[p] = b
' <<<"$OUT") || true  # no collision yet: read finds no line (exit 1), P stays empty
        [ -n "${P:-}" ] && return 0
    done
    fail "no two of $made blocks of $name share 8 characters"
}
SILT_FAKE_SYSTEM_TIME=2030-03-01T00:00:00Z ok new amb --push-source csv --schema 'city STRING, n BIGINT'
SILT_FAKE_SYSTEM_TIME=2030-03-02T00:00:00Z ok ingest amb a.csv
P=""
collide amb
[ "${#P}" -eq 8 ] && [ "${#LONG}" -ge 9 ] && [ "${H:0:8}" = "$P" ] || fail "collide: '$P' '$H' '$LONG'"
pass
SILT_FAKE_SYSTEM_TIME=2030-03-03T00:00:00Z ok ingest amb b.csv
MSG="silt: --as-of '$P' is ambiguous in amb: it is a prefix of several blocks (give more characters)"
before=$(ws_snapshot)
fails 1 "$MSG" tail amb --as-of "$P"
fails 1 "$MSG" log amb --as-of "$P"
fails 1 "$MSG" schema amb --as-of "$P"
fails 1 "$MSG" sql 'SELECT count(*) FROM amb' --as-of "amb=$P"
ws_compare "$before" "ambiguous --as-of"
# with --json: the error object
run --json tail amb --as-of "$P"
assert_eq "$RC" 1
assert_eq "$ERR" "{\"error\":{\"code\":\"INVALID\",\"message\":\"--as-of '$P' is ambiguous in amb: it is a prefix of several blocks (give more characters)\"}}"
# the longer prefix is that block (only the a.csv row before the b.csv ingest)
ok --json log amb --as-of "$LONG" -n 1
assert_eq "$(jget "d[0]['hash']" <<<"$OUT")" "$H" "log --as-of a unique longer prefix"
ok tail amb --as-of "$LONG" --format csv
assert_eq "$(printf '%s\n' "$OUT" | cut -d, -f5,6)" $'city,n\nA,1' "tail --as-of the longer prefix"
ok sql 'SELECT count(*) AS n FROM amb' --as-of "amb=$LONG" --format csv
assert_eq "$OUT" $'n\n1' "sql --as-of NAME=the longer prefix"
ok schema amb --as-of "$LONG"
assert_contains "$OUT" "city: "
# a files dataset: files, cat, schema, log
SILT_FAKE_SYSTEM_TIME=2030-04-01T00:00:00Z ok new famb --files
printf 'one' >x.txt
SILT_FAKE_SYSTEM_TIME=2030-04-02T00:00:00Z ok upload famb x.txt
P=""
collide famb
printf 'two' >x.txt
SILT_FAKE_SYSTEM_TIME=2030-04-03T00:00:00Z ok upload famb x.txt
MSG="silt: --as-of '$P' is ambiguous in famb: it is a prefix of several blocks (give more characters)"
before=$(ws_snapshot)
fails 1 "$MSG" files famb --as-of "$P"
fails 1 "$MSG" cat famb x.txt --as-of "$P"
fails 1 "$MSG" schema famb --as-of "$P"
fails 1 "$MSG" log famb --as-of "$P"
ws_compare "$before" "ambiguous --as-of (files)"
ok cat famb x.txt --as-of "$LONG"
assert_eq "$OUT" one "cat --as-of the longer prefix: the first upload"
ok --json log famb --as-of "$LONG" -n 1
assert_eq "$(jget "d[0]['hash']" <<<"$OUT")" "$H" "files: log --as-of the longer prefix"
done_tests
