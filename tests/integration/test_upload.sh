#!/usr/bin/env bash
# test_upload.sh — `silt upload` and `silt txn put` of many files: a tree of
# 84 files in nested folders (seven distinct base names) uploaded by
# directory, by a glob list and with --base keeps every relative path; the
# listing (path, size, content hash) is checked against an independent
# computation (Python's hashlib). Bad inputs — two inputs for one logical
# path, a path outside the base, an absolute path, a symbolic link inside a
# tree, a directory with --as, an empty directory, a missing file — fail
# with one line and exit 1, and leave every file of .silt/ as it was.
. "$(dirname "$0")/lib.sh"

ok init
# the tree: region{1..4}/year{2021..2023}/f{1..7}.csv, every file different
for r in 1 2 3 4; do
    for y in 2021 2022 2023; do
        mkdir -p "tree/region$r/year$y"
        for f in 1 2 3 4 5 6 7; do
            python3 -c 'import sys; r,y,f=sys.argv[1:]; print("region,year,n"); [print(f"{r},{y},{i}") for i in range(int(f)*int(r))]' \
                "$r" "$y" "$f" >"tree/region$r/year$y/f$f.csv"
        done
    done
done
assert_eq "$(find tree -type f | wc -l)" "84" "84 files in the tree"

# expected PREFIX ROOT: "path<TAB>size<TAB>multihash" of every file under
# ROOT, the path being PREFIX + the path relative to ROOT, sorted by path
expected() {
    python3 - "$1" "$2" <<'PY'
import hashlib, os, sys
prefix, root = sys.argv[1], sys.argv[2]
rows = []
for d, _, names in os.walk(root):
    for n in names:
        p = os.path.join(d, n)
        b = open(p, "rb").read()
        rows.append((prefix + os.path.relpath(p, root), len(b), "f1620" + hashlib.sha3_256(b).hexdigest()))
for r in sorted(rows):
    print("%s\t%d\t%s" % r)
PY
}
listing() { "$SILT" files "$1" | cut -f1-3; }
EXP_TREE=$(expected tree/ tree)
EXP_BASE=$(expected "" tree)

# ---- by a glob list ---------------------------------------------------------------
ok new byglob --files
ok upload byglob tree/*/*/*.csv # before issue 8: 7 files, the base names
assert_eq "$(listing byglob)" "$EXP_TREE" "upload of a glob list keeps every relative path"

# ---- by directory -----------------------------------------------------------------
ok new bydir --files
ok --json upload bydir tree
assert_eq "$(printf '%s' "$OUT" | jget 'd["files"]')" "84" "upload reports 84 files"
assert_eq "$(listing bydir)" "$EXP_TREE" "upload of a directory keeps every relative path"
ok cat bydir tree/region3/year2022/f5.csv
assert_eq "$OUT" "$(cat tree/region3/year2022/f5.csv)" "cat of a nested file"

ok new mixed --files
ok upload mixed tree/region1 ./tree/region2/ tree/region3/year2021/f1.csv tree/region3/../region4
assert_eq "$(listing mixed | cut -f1 | sort -u | wc -l)" "64" "directories, files and '..' mixed"
assert_eq "$(listing mixed | grep -c '^tree/region4/')" "21" "tree/region3/../region4 is tree/region4"

# ---- with --base ------------------------------------------------------------------
ok new bybase --files
ok upload bybase tree --base tree --type snapshot
assert_eq "$(listing bybase)" "$EXP_BASE" "upload --base DIR: paths relative to DIR"
ok new byabs --files
ok upload byabs "$T_DIR/tree" --base "$T_DIR/tree"
assert_eq "$(listing byabs)" "$EXP_BASE" "absolute inputs with an absolute base"
mkdir work
(cd work && "$SILT" upload byabs ../tree/region1 --base .. >/dev/null) || fail "upload from a subdirectory with --base .."
pass
assert_eq "$(listing byabs | grep -c '^tree/region1/')" "21" "--base .. names ../tree as tree"

# ---- a multi-file txn put ---------------------------------------------------------
ok new byput --files
ok txn start byput --type snapshot; RID=$OUT
ok txn put byput "$RID" tree/region1 tree/region2 tree/region3 tree/region4 --base tree
ok txn commit byput "$RID"
assert_eq "$(listing byput)" "$EXP_BASE" "txn put FILE... --base DIR"
# the one-file forms still work: LOCAL_FILE LOGICAL_PATH and --as
ok txn start byput --type update; RID=$OUT
ok txn put byput "$RID" tree/region1/year2021/f1.csv one.csv
ok txn put byput "$RID" tree/region1/year2021/f2.csv --as two.csv
ok txn put byput "$RID" tree/region1/year2021/f3.csv
ok txn commit byput "$RID"
assert_eq "$(listing byput | cut -f1 | grep -E '^(one|two)\.csv$|^tree/' | tr '\n' ' ')" \
    "one.csv tree/region1/year2021/f3.csv two.csv " "one-file forms of txn put"

# ---- bad inputs: exit 1, one line, nothing written -----------------------------------
BEFORE_LIST=$(listing bybase)
BEFORE_TXNS=$("$SILT" txn list bybase)
unchanged() { # the dataset as before, and no transaction record added
    assert_eq "$(listing bybase)" "$BEFORE_LIST" "$1: view unchanged"
    assert_eq "$("$SILT" txn list bybase)" "$BEFORE_TXNS" "$1: no transaction added"
}
unchanged_after 1 "silt: inputs 'tree/region1/year2021/f1.csv' and './tree/region1/year2021/f1.csv' both map to logical path 'tree/region1/year2021/f1.csv'" \
    upload bybase tree ./tree/region1/year2021/f1.csv
unchanged collision
unchanged_after 1 "silt: inputs 'tree/region1/year2021/f1.csv' and 'tree/region2/../region1/year2021/f1.csv' both map to logical path 'region1/year2021/f1.csv'" \
    upload bybase tree/region1 tree/region2/../region1 --base tree
unchanged "collision of two directories"
mkdir -p other/region1/year2021
printf 'other\n' >other/region1/year2021/f1.csv
unchanged_after 1 "silt: input 'other/region1' is outside the base directory 'tree': give a base directory that contains it (--base DIR) or the logical path (--as PATH)" \
    upload bybase tree/region1 other/region1 --base tree
unchanged "outside --base"
(cd work && unchanged_after 1 "silt: input '../tree/region1' is outside the base directory '.': give a base directory that contains it (--base DIR) or the logical path (--as PATH)" \
    upload bybase ../tree/region1)
unchanged "../"
unchanged_after 1 "silt: input '$T_DIR/tree' is an absolute path: logical paths are relative; give a base directory (--base DIR) or the logical path (--as PATH)" \
    upload bybase "$T_DIR/tree"
ln -s ../year2022/f1.csv tree/region2/year2021/link.csv
unchanged_after 1 "silt: 'tree/region2/year2021/link.csv' is a symbolic link inside directory 'tree/region2/year2021': links in a tree are not followed (name its target as an input of its own, or remove it)" \
    upload bybase tree --base tree
unchanged "symlink in the tree"
ok new linked --files
ok upload linked tree/region2/year2021/link.csv # named explicitly: followed
assert_eq "$(listing linked | cut -f1,2)" "tree/region2/year2021/link.csv	$(wc -c <tree/region2/year2022/f1.csv)" "a named link is followed"
rm tree/region2/year2021/link.csv
unchanged_after 1 "silt: input 'tree/region1' is a directory: a logical path given with --as names one file (use --base DIR for a directory)" \
    upload bybase tree/region1 --as x
mkdir -p empty/sub
unchanged_after 1 "silt: nothing to upload: 'empty' contains no regular file" upload bybase empty
unchanged_after 1 "silt: input 'nosuch.csv': No such file or directory" upload bybase tree nosuch.csv
unchanged "bad inputs"
unchanged_after 2 "silt: upload: --as needs exactly one FILE (see 'silt help')" upload bybase tree/region1 tree/region2 --as x
unchanged_after 2 "silt: upload: give either --as or --base (see 'silt help')" upload bybase tree --as x --base tree
# txn put: the same rules, the transaction stays as it was
ok txn start bybase --type update; RID=$OUT
BEFORE_TXNS=$("$SILT" txn list bybase)
unchanged_after 1 "silt: inputs 'tree/region1/year2021/f1.csv' and './tree/region1/year2021/f1.csv' both map to logical path 'tree/region1/year2021/f1.csv'" \
    txn put bybase "$RID" tree ./tree/region1/year2021/f1.csv --base .
unchanged_after 1 "silt: input '../x' is outside the base directory '.': give a base directory that contains it (--base DIR) or the logical path (--as PATH)" \
    txn put bybase "$RID" ../x
ok txn commit bybase "$RID"
assert_eq "$(listing bybase)" "$BEFORE_LIST" "an empty UPDATE after the failed puts"
ok verify --all
done_tests
