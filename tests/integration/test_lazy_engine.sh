#!/usr/bin/env bash
# test_lazy_engine.sh — libduckdb is loaded only by commands that query
# (issue 12): silt does not link it (no DT_NEEDED entry), commands that only
# read the chain and the summary (list, info, log, schema, branch list,
# token list, --version) never map it, a query maps it from the build's
# DuckDB directory (the RUNPATH), and a library that cannot be used is a
# one-line error, exit 1, the dataset unchanged. Which objects the process
# loads is what glibc's loader reports (LD_DEBUG=files, into a file per
# process); the query is the positive control that the report works.
source "$(dirname "$0")/lib.sh"

readelf -d "$SILT" | grep -q 'NEEDED.*libduckdb' && fail "silt links libduckdb at load time: $(readelf -d "$SILT" | grep NEEDED)"
pass

ok init
add_ds pop <<'Y'
  - kind: AddPushSource
    sourceName: default
    read: {kind: Csv, header: true, ddlSchema: ["city STRING", "population BIGINT"]}
    merge: {kind: Append}
Y
printf 'city,population\nA,1\nB,2\n' >p.csv
ok ingest pop p.csv
ok new raw --files
mkdir up && echo a >up/a.txt && echo b >up/b.txt
ok upload raw up --base up

# loaded CMD...: the objects silt loads for CMD (file= lines of LD_DEBUG=files)
loaded() {
    rm -rf ld && mkdir ld
    LD_DEBUG=files LD_DEBUG_OUTPUT="$T_DIR/ld/ld" "$SILT" "$@" >/dev/null 2>"$T_DIR/ld.err" \
        || fail "'silt $*' failed: $(cat "$T_DIR/ld.err")"
    cat ld/ld.* | sed -n 's/^ *[0-9]*:[[:space:]]*file=\([^ ]*\) .*/\1/p'
}

# the control: a query loads it, dynamically, from the build's DuckDB
L=$(loaded sql 'SELECT 1 AS x' --format csv)
assert_contains "$L" "libduckdb.so"
assert_contains "$(cat ld/ld.*)" "file=libduckdb.so [0];  dynamically loaded by $SILT"
assert_contains "$(loaded list)" "libyaml"

for c in "list" "info pop" "log pop -n 10" "schema pop" "info raw" "log raw" "branch list raw" \
         "token list" "--version"; do
    # shellcheck disable=SC2086
    L=$(loaded $c)
    grep -q libduckdb <<<"$L" && fail "'silt $c' loads libduckdb"
    pass
done

# a libduckdb without DuckDB's functions, found first through LD_LIBRARY_PATH
mkdir fake
echo 'int silt_not_duckdb;' >fake/f.c
cc -shared -fPIC -Wl,-soname,libduckdb.so -o fake/libduckdb.so fake/f.c
export LD_LIBRARY_PATH="$T_DIR/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
before=$(tree_sum .silt)
fails_like 1 "the DuckDB library $T_DIR/fake/libduckdb.so has no function duckdb_" sql 'SELECT 1'
fails_like 1 "the DuckDB library $T_DIR/fake/libduckdb.so has no function duckdb_" ingest pop p.csv
assert_eq "$(tree_sum .silt)" "$before" "workspace after the failed ingest"
# a file that is not a library at all
echo 'not a shared object' >fake/libduckdb.so
fails_like 1 "cannot load the DuckDB library libduckdb.so: $T_DIR/fake/libduckdb.so: " sql 'SELECT 1'
fails_like 1 "(silt needs it for queries: install it in the lib directory beside silt's bin, or name its directory in LD_LIBRARY_PATH)" sql 'SELECT 1'
assert_eq "$(tree_sum .silt)" "$before" "workspace after the failed query"
# commands that do not query still work
ok list
assert_contains "$OUT" "pop"
ok log pop -n 1

done_tests
