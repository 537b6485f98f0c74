#!/usr/bin/env bash
# test_txn.sh — files datasets through the CLI: transactions, views, cat,
# replaying the worked example of spec/foundry-datasets.md literally.
. "$(dirname "$0")/lib.sh"

ok init
ok new files1 --files
printf 'a-v1' >A; printf 'b-v1' >B; printf 'c-v1' >C; printf 'd-v1' >D
mh() { printf "f1620%s" "$(python3 -c 'import hashlib,sys;print(hashlib.sha3_256(open(sys.argv[1],"rb").read()).hexdigest())' "$1")"; }
HA1=$(mh A); HB=$(mh B); HC=$(mh C); HD=$(mh D)

# 1. SNAPSHOT {A, B} (start + put + commit)
ok txn start files1 --type snapshot; T1=$OUT
case "$T1" in ri.silt.main.transaction.????????-????-4???-????-????????????) pass ;; *) fail "bad rid $T1" ;; esac
unchanged_after 1 "silt: branch master of files1 already has an open transaction $T1" txn start files1 --type update
ok txn put files1 "$T1" A
ok txn put files1 "$T1" B B
unchanged_after 1 "silt: invalid logical path '../B': '..' is not allowed" txn put files1 "$T1" B ../B
unchanged_after 1 "silt: invalid logical path '/B': absolute paths are not allowed" txn put files1 "$T1" B /B
unchanged_after 1 "silt: invalid logical path 'x//B': empty path segment" txn put files1 "$T1" B x//B
ok txn commit files1 "$T1"
unchanged_after 1 "silt: TransactionNotOpen: transaction $T1 is COMMITTED" txn commit files1 "$T1"
unchanged_after 1 "silt: TransactionNotOpen: transaction $T1 is COMMITTED" txn abort files1 "$T1"
# 2. APPEND {C}
ok upload files1 C --type append; T2=$OUT
# a failed upload leaves nothing: no ABORTED transaction, no staged object
printf 'c-v2' >C2
unchanged_after_like 1 "would overwrite 'C', which is already in the view of files1" upload files1 C2 --as C --type append
# 3. UPDATE {A'}
printf 'a-v2' >A; HA2=$(mh A)
ok upload files1 A; T3=$OUT
# 4. DELETE {B}
ok txn start files1 --type delete; T4=$OUT
unchanged_after 1 "silt: transaction $T4 is a DELETE transaction: files cannot be put (use 'txn rm')" txn put files1 "$T4" A
ok txn rm files1 "$T4" B
ok txn commit files1 "$T4"

view() { "$SILT" files "$@" | cut -f1-4; }
tab=$'\t'
V4="A${tab}4${tab}${HA2}${tab}${T3}
C${tab}4${tab}${HC}${tab}${T2}"
assert_eq "$(view files1)" "$V4" "view after DELETE {B}"
ok cat files1 A; assert_eq "$OUT" "a-v2"
ok cat files1 A --at "$T2"; assert_eq "$OUT" "a-v1"
unchanged_after 1 "silt: file 'B' is not in the latest view of files1" cat files1 B
ok cat files1 B --at "$T3"; assert_eq "$OUT" "b-v1"   # DELETE keeps the bytes

# 5. SNAPSHOT {D}
ok upload files1 D --type snapshot; T5=$OUT
assert_eq "$(view files1)" "D${tab}4${tab}${HD}${tab}${T5}" "view after SNAPSHOT {D}"
# the four earlier transactions stay readable as the older view
assert_eq "$(view files1 --at "$T4")" "$V4" "older view"
assert_eq "$(view files1 --at "$T1")" "A${tab}4${tab}${HA1}${tab}${T1}
B${tab}4${tab}${HB}${tab}${T1}" "view as of T1"
# ranges
assert_eq "$(view files1 --range "$T2..$T2")" "C${tab}4${tab}${HC}${tab}${T2}" "start = end"
assert_eq "$(view files1 --range "$T1..$T4")" "$V4" "range T1..T4"
assert_eq "$(view files1 --range "$T2..$T5")" "D${tab}4${tab}${HD}${tab}${T5}" "intermediate SNAPSHOT"
unchanged_after 1 "silt: range $T3..$T2: START is after END" files files1 --range "$T3..$T2"

# --json
ok files files1 --json
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["path"], d[0]["size"], d[0]["contentType"], d[0]["transactionType"])')" "D 4 application/octet-stream SNAPSHOT"
# list
ok txn list files1
assert_eq "$(printf '%s\n' "$OUT" | awk '{print $2, $3}' | tr '\n' ' ')" "SNAPSHOT COMMITTED APPEND COMMITTED UPDATE COMMITTED DELETE COMMITTED SNAPSHOT COMMITTED " "txn list (the failed upload left no transaction)"
ok txn list files1 --json
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" "5"

# abort: staged entries ignored forever
ok txn start files1 --type update; TA=$OUT
ok txn put files1 "$TA" A zzz.txt
ok txn abort files1 "$TA"
unchanged_after 1 "silt: TransactionNotOpen: transaction $TA is ABORTED" txn commit files1 "$TA"
assert_eq "$(view files1 | cut -f1)" "D"
# upload --as
ok upload files1 A --as docs/a.txt
assert_eq "$(view files1 | cut -f1 | tr '\n' ' ')" "D docs/a.txt "

# the AddData carries the ODF conventions
ok log files1 -n 1 --yaml
assert_contains "$OUT" "opendatafabric.org/linkedObjects"
assert_contains "$OUT" "silt.dev/transaction"
ok schema files1 --yaml
assert_contains "$OUT" "ObjectLink"
assert_contains "$OUT" "silt.dev/archetype"
ok verify --all
done_tests
