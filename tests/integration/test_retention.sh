#!/usr/bin/env bash
# test_retention.sh — retention policies, marks, unmark and gc through the
# CLI, on the spec's worked example; purged objects and verify.
source "$(dirname "$0")/lib.sh"

ok init
ok new ex --files
printf a >A; printf b >B; printf c >C; printf "a'" >A2; printf d >D
ok upload ex A B --type snapshot; T1=$OUT
ok upload ex C --type append; T2=$OUT
ok upload ex A2 --as A --type update; T3=$OUT
ok txn start ex --type delete; T4=$OUT
ok txn rm ex "$T4" B
ok txn commit ex "$T4"

ok retention show ex
assert_eq "$OUT" "no retention policy (every view is retained)"
ok retention mark ex
assert_eq "$OUT" "no marked transactions"

ok retention set ex --keep-days 0
assert_eq "$OUT" "retention of ex: keeps the views of the last 0 days"
ok retention set ex --keep-days 3 --branch dev
assert_eq "$OUT" "retention of ex: branch dev keeps the views of the last 3 days"
ok retention show ex
assert_eq "$OUT" "default: keep 0 days
branch dev: keep 3 days"
ok --json retention show ex
assert_eq "$(printf '%s' "$OUT" | tr -d ' \n')" '{"name":"ex","policies":[{"branch":null,"keepDays":0},{"branch":"dev","keepDays":3}]}'
fails 2 "silt: retention set needs --keep-days N (a non-negative number of days) (see 'silt help')" retention set ex --keep-days -1

# the latest view {A', C} retains T2 and T3; T1 (A, B) is marked
ok retention mark ex
assert_contains "$OUT" "$T1 master "
assert_contains "$OUT" " 2 files 2 bytes"
assert_eq "$(printf '%s\n' "$OUT" | wc -l | tr -d ' ')" 1
ok retention marks ex
assert_contains "$OUT" "$T1"

# a fifth SNAPSHOT {D}: T2 and T3 fall out of every retained view too
ok upload ex D --type snapshot; T5=$OUT
ok retention mark ex
assert_eq "$(printf '%s\n' "$OUT" | awk '{print $1}' | tr '\n' ' ')" "$T1 $T2 $T3 "
ok retention unmark ex "$T2"
assert_eq "$OUT" "unmarked 1 transaction"
fails 1 "silt: transaction $T2 is not marked in ex" retention unmark ex "$T2"

ok gc ex --dry-run
assert_contains "$OUT" "ex: would purge 2 transactions, would delete 3 objects (4 bytes), 0 leftovers"
ok gc ex
assert_contains "$OUT" "ex: purged 2 transactions, deleted 3 objects (4 bytes), 0 leftovers"
assert_contains "$OUT" "(file 'A' of transaction $T3, purged by retention)"
ok retention marks ex
assert_eq "$OUT" "no marked transactions"

# the latest view and the held transaction are intact, verify passes
ok cat ex D
assert_eq "$OUT" "d"
ok cat ex C --at "$T2"
assert_eq "$OUT" "c"
ok verify ex
assert_eq "$OUT" "ex: ok (7 blocks)"
ok verify --all

# the older view still lists the purged file, marked as such; its bytes are gone
ok files ex --at "$T3"
assert_contains "$(printf '%s\n' "$OUT" | grep '^A	')" "	$T3	"
assert_contains "$(printf '%s\n' "$OUT" | grep '^A	')" "	purged by retention"
assert_contains "$(printf '%s\n' "$OUT" | grep '^C	')" "	$T2	"
case "$(printf '%s\n' "$OUT" | grep '^C	')" in *purged*) fail "C (held transaction) must not be purged" ;; *) pass ;; esac
ok files ex --at "$T3" --json
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(" ".join(f["path"]+"="+f["status"] for f in json.load(sys.stdin)))')" "A=purged B=purged C=ok"
fails 1 "silt: file 'A' was purged by retention (transaction $T3)" cat ex A --at "$T3"

# an object removed without a purge record is corruption
DS=$(dirname "$(dirname "$(grep -lx ex .silt/datasets/*/info/alias)")")
ok files ex --json
H=$(printf '%s' "$OUT" | grep -o 'f1620[0-9a-f]*' | sed -n 1p)
rm "$DS/data/$H"
run verify ex
assert_eq "$RC" 1
assert_eq "$ERR" "silt: ex: file 'D' of the latest view: object $H is missing (not purged by retention)"
assert_eq "$OUT" "ex: INVALID (1 problem)"

# leftovers of crashed writes go after the grace period only
ok new led
touch "$DS/data/.tmp-123-deadbeef.parquet"
ok gc ex
assert_contains "$OUT" "0 leftovers"
SILT_GC_GRACE_SECONDS=0 ok gc ex
assert_contains "$OUT" "(leftover of a crashed write)"
done_tests
