#!/usr/bin/env bash
# test_branches.sh — branches of a files dataset through the CLI, including
# the branch example: a branch created from a parent whose later SNAPSHOT
# does not affect the branch's view.
. "$(dirname "$0")/lib.sh"

ok init
ok new files1 --files
printf 'a' >A; printf 'b' >B; printf 'c' >C; printf 'e' >E
ok upload files1 A --type snapshot; T1=$OUT
ok upload files1 B --type append; T2=$OUT
ok branch create files1 dev
ok branch create files1 old --at "$T1"
fails 1 "silt: branch dev of files1 already exists" branch create files1 dev
ok upload files1 C --type snapshot; T3=$OUT
names() { "$SILT" files "$1" | cut -f1,4 | tr '\t\n' ': '; }
assert_eq "$(names files1)" "C:$T3 " "master after SNAPSHOT"
assert_eq "$(names files1@dev)" "A:$T1 B:$T2 " "the parent's SNAPSHOT does not affect dev"
assert_eq "$(names files1@old)" "A:$T1 " "branch --at T1"
ok upload files1@dev E --type append; T4=$OUT
assert_eq "$(names files1@dev)" "A:$T1 B:$T2 E:$T4 " "dev continues on the parent's transactions"
assert_eq "$(names files1)" "C:$T3 "
fails 1 "silt: transaction $T4 is not committed on branch master of files1" files files1 --at "$T4"
ok txn list files1@dev
assert_eq "$(printf '%s\n' "$OUT" | cut -d' ' -f1 | tr '\n' ' ')" "$T1 $T2 $T4 "
# one OPEN transaction per branch, independently
ok txn start files1@dev --type update; TD=$OUT
ok txn start files1 --type update; TM=$OUT
ok branch list files1
assert_eq "$(printf '%s\n' "$OUT" | cut -f1,3,4 | tr '\t\n' ', ')" "master,5,$TM dev,5,$TD old,3 "
fails 1 "silt: branch master of files1 cannot be deleted" branch delete files1 master
fails 1 "silt: branch dev of files1 has an open transaction $TD; commit or abort it first" branch delete files1 dev
ok txn abort files1 "$TD"
ok txn abort files1 "$TM"
ok branch delete files1 dev
fails 1 "silt: dataset 'files1' has no branch 'dev'" files files1@dev
ok branch create files1 dev --from old
assert_eq "$(names files1@dev)" "A:$T1 "
ok branch list files1 --json
assert_eq "$(printf '%s' "$OUT" | python3 -c 'import json,sys; print([b["name"] for b in json.load(sys.stdin)])')" "['master', 'dev', 'old']"
# NAME@BRANCH works for the chain commands too
ok log files1@old
ok verify --all
done_tests
