#!/usr/bin/env bash
# test_sql_confine.sh — queries of users run confined (issue 8, item 16):
# `silt sql` and the preprocess queries of a manifest (`silt ingest`,
# `silt pull`) are exactly one read-only statement, and the engine reads no
# file but the slices of the datasets the query names (DuckDB's external
# access off, allowed paths, extensions off, configuration locked).
#
# Every attack fails with exit 1 and one exact line on stderr, prints
# nothing, and leaves the workspace as it was (tree_sum of .silt: no block,
# refs/head unchanged, no file written anywhere it aims at). The positive
# cases show what still works confined — dataset views, branches,
# "name:current", --as-of, files-dataset views, CTEs, subqueries, DESCRIBE,
# EXPLAIN, Parquet output, tail, preprocess over a checkpointed merge — and
# that --unsafe-file-access really lifts the confinement.
#
# A failing check is reported and the script goes on; it exits 1 if any
# check failed.
source "$(dirname "$0")/lib.sh"

use_soft_failures

FILES_HINT='(query datasets by name, or use --unsafe-file-access)'
WRITE_HINT='(use --format/--output to write results, or --unsafe-file-access)'
OTHER_HINT='(only SELECT queries are allowed, or use --unsafe-file-access)'
PRE_HINT='(a preprocess query is one SELECT over its input)'
PRE_FILES_HINT='(a preprocess query reads only its input)'
DISABLED='file system operations are disabled by configuration'
TARGET="/tmp/silt-confine-$$"
rm -rf "$TARGET" "$TARGET".*
trap 'rm -rf "$TARGET" "$TARGET".*; cleanup' EXIT

# refused EXACT_STDERR QUERY [ARGS...]: `silt sql` fails with exit 1 and
# exactly this line, prints nothing, and changes nothing in .silt
refused() {
    local msg=$1 before
    shift
    before=$(tree_sum .silt)
    fails 1 "$msg" sql "$@"
    assert_eq "$OUT" "" "'silt sql $1' printed something"
    assert_eq "$(tree_sum .silt)" "$before" "'silt sql $1' changed the workspace"
}

# no_target: nothing was written at any of the paths the attacks aim at
no_target() {
    local f
    for f in "$TARGET" "$TARGET".*; do
        [ ! -e "$f" ] || fail "$1: $f was written"
    done
    pass
}

ok init
printf 'ca.bank:\n  apiKey: tOkSeCr3t-2024\n' >.silt/secrets.yaml
chmod 600 .silt/secrets.yaml

add_ds pop <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT", "event_time DATE"]
      merge:
        kind: Snapshot
        primaryKey: [city]
EOF
printf 'city,population,event_time\nA,100,2020-01-01\nB,200,2020-01-01\n' >s1.csv
printf 'city,population,event_time\nA,110,2020-01-02\nB,200,2020-01-01\nC,300,2020-01-02\n' >s2.csv
ok ingest pop s1.csv
H1=$(head_of pop)
ok ingest pop s2.csv
add_ds other <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["k STRING"]
      merge:
        kind: Append
EOF
printf 'k\nhidden\n' >o.csv
ok ingest other o.csv
POP_DIR="$T_DIR/.silt/datasets/$(info pop 'd["id"]' | sed 's/^did:odf://')"
OTHER_DIR="$T_DIR/.silt/datasets/$(info other 'd["id"]' | sed 's/^did:odf://')"
POP_SLICE=$(ls "$POP_DIR"/data/* | sed -n 1p)
OTHER_SLICE=$(ls "$OTHER_DIR"/data/*)
ok sql "COPY (SELECT 'outside' AS s) TO '$T_DIR/outside.parquet' (FORMAT parquet)" --unsafe-file-access
printf 'a,b\n1,x\n2,y\n' >local.csv
HEAD_BEFORE=$(cat "$POP_DIR/refs/head")

# ---- reading files -------------------------------------------------------------
refused "silt: sql: reading files is not allowed: Cannot access file \"/etc/passwd\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM read_csv('/etc/passwd')"
refused "silt: sql: reading files is not allowed: Cannot access file \".silt/secrets.yaml\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM read_text('.silt/secrets.yaml')"
refused "silt: sql: reading files is not allowed: Cannot access file \"$T_DIR/.silt/secrets.yaml\" - $DISABLED $FILES_HINT" \
    "SELECT content FROM read_text('$T_DIR/.silt/secrets.yaml')" --format csv
refused "silt: sql: reading files is not allowed: Cannot access file \"/etc/passwd\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM read_blob('/etc/passwd')"
refused "silt: sql: reading files is not allowed: Cannot access file \"$T_DIR/outside.parquet\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM read_parquet('$T_DIR/outside.parquet')"
refused "silt: sql: reading files is not allowed: Cannot access file \"/*\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM glob('/*')"
refused "silt: sql: reading files is not allowed: Cannot access file \"$T_DIR/.silt/tmp/*\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM glob('$T_DIR/.silt/tmp/*')"
refused "silt: sql: reading files is not allowed: Cannot access file \"$T_DIR/local.csv\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM pop, read_csv('$T_DIR/local.csv')"
# a slice of a dataset the query does not name is not readable, even next to one it does
refused "silt: sql: reading files is not allowed: Cannot access file \"$OTHER_SLICE\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM read_parquet('$OTHER_SLICE')"
refused "silt: sql: reading files is not allowed: Cannot access file \"$OTHER_SLICE\" - $DISABLED $FILES_HINT" \
    "SELECT count(*) FROM pop UNION ALL SELECT count(*) FROM read_parquet('$OTHER_SLICE')"
# paths as table names (replacement scans) are not files any more
refused 'silt: sql: Catalog Error: Table with name /etc/passwd does not exist!' \
    "SELECT * FROM query_table('/etc/passwd')"
refused 'silt: sql: Catalog Error: Table with name /etc/passwd does not exist!' "SELECT * FROM '/etc/passwd'"
refused "silt: sql: reading files is not allowed: Cannot access file \"/etc/passwd\" - $DISABLED $FILES_HINT" \
    "SELECT * FROM read_csv('/etc/passwd')" --format parquet --output "$TARGET.parquet"
no_target "reading files"

# ---- writing files, attaching, extensions, settings, other statements -----------
refused "silt: sql: COPY is not allowed in a query $WRITE_HINT" "COPY (SELECT 1) TO '$TARGET'"
refused "silt: sql: COPY is not allowed in a query $WRITE_HINT" \
    "COPY (SELECT * FROM pop) TO '$POP_DIR/refs/head' (FORMAT csv)"
refused "silt: sql: COPY is not allowed in a query $WRITE_HINT" \
    "COPY (SELECT * FROM pop) TO '$POP_SLICE' (FORMAT parquet)"
refused "silt: sql: COPY is not allowed in a query $WRITE_HINT" "EXPLAIN ANALYZE COPY (SELECT 1) TO '$TARGET'"
refused "silt: sql: EXPORT is not allowed in a query $WRITE_HINT" "EXPORT DATABASE '$TARGET.d'"
refused "silt: sql: IMPORT is not allowed in a query $OTHER_HINT" "IMPORT DATABASE '$TARGET.d'"
refused "silt: sql: ATTACH is not allowed in a query $OTHER_HINT" "ATTACH '$TARGET.db' AS x"
refused "silt: sql: ATTACH is not allowed in a query $OTHER_HINT" "ATTACH ':memory:' AS m"
refused "silt: sql: DETACH is not allowed in a query $OTHER_HINT" "DETACH memory"
refused "silt: sql: INSTALL is not allowed in a query $OTHER_HINT" "INSTALL httpfs"
refused "silt: sql: FORCE INSTALL is not allowed in a query $OTHER_HINT" "FORCE INSTALL httpfs"
refused "silt: sql: LOAD is not allowed in a query $OTHER_HINT" "LOAD httpfs"
refused "silt: sql: SET is not allowed in a query $OTHER_HINT" "SET enable_external_access = true"
refused "silt: sql: RESET is not allowed in a query $OTHER_HINT" "RESET lock_configuration"
refused "silt: sql: PRAGMA is not allowed in a query $OTHER_HINT" "PRAGMA threads = 1"
refused "silt: sql: CREATE is not allowed in a query $OTHER_HINT" "CREATE TABLE t AS SELECT 1"
refused "silt: sql: CREATE is not allowed in a query $OTHER_HINT" "CREATE MACRO m(x) AS x"
refused "silt: sql: CALL is not allowed in a query $OTHER_HINT" "CALL pragma_version()"
refused "silt: sql: DROP is not allowed in a query $OTHER_HINT" 'DROP VIEW pop'
refused "silt: sql: EXPLAIN is only allowed as EXPLAIN [ANALYZE] SELECT … $OTHER_HINT" \
    "EXPLAIN CREATE TABLE t (a INT)"
refused 'silt: sql: Parser Error: Expected a single SELECT statement' \
    "SELECT * FROM query('COPY (SELECT 1) TO ''$TARGET''')"
# exactly one statement, whatever the first one is
refused 'silt: sql: only one statement is allowed (got 2)' 'SELECT 1; SELECT 2'
refused 'silt: sql: only one statement is allowed (got 2)' \
    "SET enable_external_access = true; SELECT * FROM read_csv('/etc/passwd')"
refused 'silt: sql: only one statement is allowed (got 2)' "SELECT 1; COPY (SELECT 1) TO '$TARGET'"
no_target "writing files"
assert_eq "$(cat "$POP_DIR/refs/head")" "$HEAD_BEFORE" "refs/head unchanged"
ok verify pop

# ---- what still works ---------------------------------------------------------------
expect_sql 'SELECT city, population FROM "pop:current" ORDER BY city' "current state" <<'EOF'
city,population
A,110
B,200
C,300
EOF
expect_sql "SELECT city FROM current_state('pop') WHERE population > 150 ORDER BY city" "current_state()" <<'EOF'
city
B
C
EOF
expect_sql 'WITH c AS (SELECT city, population FROM pop WHERE op = 0)
            SELECT city, (SELECT count(*) FROM other) AS n FROM c
            WHERE population = (SELECT max(population) FROM c)' "CTE and subqueries over two datasets" <<'EOF'
city,n
C,1
EOF
run sql 'SELECT city, population FROM pop ORDER BY "offset"' --format csv --as-of "pop=$H1"
assert_eq "$OUT" 'city,population
A,100
B,200' "--as-of"
ok branch create pop dev
expect_sql 'SELECT count(*) AS n FROM "pop@dev"' "name@branch" <<'EOF'
n
5
EOF
expect_sql 'SELECT column_name, column_type FROM (DESCRIBE pop) WHERE column_name = '"'city'" "DESCRIBE" <<'EOF'
column_name,column_type
city,VARCHAR
EOF
ok sql 'EXPLAIN SELECT * FROM pop' --format csv
assert_contains "$OUT" "physical_plan" "EXPLAIN"
ok sql 'EXPLAIN ANALYZE SELECT count(*) FROM pop' --format csv
assert_contains "$OUT" "analyzed_plan" "EXPLAIN ANALYZE"
# the slices of a named dataset are what its view reads: by path too
ok sql "SELECT count(*) AS n FROM read_parquet('$POP_SLICE')" --format csv --unsafe-file-access
SLICE_ROWS=$OUT
ok sql "SELECT count(*) AS n FROM read_parquet('$POP_SLICE') WHERE EXISTS (SELECT 1 FROM pop)" --format csv
assert_eq "$OUT" "$SLICE_ROWS" "a slice of a named dataset is readable by its path"
# Parquet output: the one file DuckDB may write, also over an existing one
ok sql 'SELECT city FROM "pop:current" ORDER BY city' --format parquet --output "$T_DIR/cur.parquet"
ok sql 'SELECT city FROM "pop:current" ORDER BY city' --format parquet --output "$T_DIR/cur.parquet"
ok sql "SELECT string_agg(city, ' ') AS c FROM read_parquet('$T_DIR/cur.parquet')" --format csv --unsafe-file-access
assert_eq "$OUT" 'c
A B C' "parquet output"
ok tail pop -n 1 --format csv
assert_eq "$(printf '%s\n' "$OUT" | cut -d, -f1,2,5,6)" 'offset,op,city,population
4,0,C,300' "tail is confined and works"
ok tail pop -n 2 --format parquet --output "$T_DIR/tail.parquet"
ok sql "SELECT count(*) AS n FROM read_parquet('$T_DIR/tail.parquet')" --format csv --unsafe-file-access
assert_eq "$OUT" 'n
2' "tail to parquet"
# a files dataset with a tabular schema
ok new f --files
ok upload f local.csv
cat >f.yaml <<'Y'
fieldSchemaList:
  - name: a
    type: LONG
  - name: b
    type: STRING
format: csv
csvOptions:
  header: true
Y
ok schema set f f.yaml
expect_sql 'SELECT a, b FROM f ORDER BY a' "files dataset view" <<'EOF'
a,b
1,x
2,y
EOF
# --unsafe-file-access: any statement, any file (local exploration)
ok sql "SELECT a, b FROM read_csv('$T_DIR/local.csv') ORDER BY a" --format csv --unsafe-file-access
assert_eq "$OUT" 'a,b
1,x
2,y' "--unsafe-file-access reads a local file"
ok sql "COPY (SELECT 1 AS one) TO '$TARGET.csv'" --unsafe-file-access
assert_eq "$(cat "$TARGET.csv")" 'one
1' "--unsafe-file-access writes with COPY"
rm -f "$TARGET.csv"
fails 1 'silt: sql: only one statement is allowed (got 2)' sql 'SELECT 1; SELECT 2' --unsafe-file-access
fails 2 "silt: tail: unknown option '--unsafe-file-access' (see 'silt help')" tail pop --unsafe-file-access

# ---- preprocess queries of a manifest ------------------------------------------------
# push NAME MERGE: a dataset whose push source preprocesses with the
# preprocess block on stdin (indented for `preprocess:`)
push() {
    local name=$1 merge=$2
    {
        printf '    - kind: AddPushSource\n      sourceName: default\n      read:\n        kind: Csv\n'
        printf '        header: true\n      preprocess:\n        kind: Sql\n        engine: duckdb\n'
        cat
        printf '      merge:\n%s\n' "$merge"
    } | add_ds "$name"
}
APPEND='        kind: Append'
printf 'id,v\n1,a\n2,b\n' >in.csv

# bad_pre NAME EXACT_STDERR [CMD...]: ingest (or CMD) fails with exit 1 and
# exactly this line; the workspace is unchanged (no block, no file)
bad_pre() {
    local name=$1 msg=$2 before
    shift 2
    before=$(tree_sum .silt)
    if [ $# -eq 0 ]; then set -- ingest "$name" in.csv; fi
    fails 1 "$msg" "$@"
    assert_eq "$(tree_sum .silt)" "$before" "'silt $*' changed the workspace"
    assert_eq "$(info "$name" 'd["records"]')" "0" "no records in $name"
}

push p-two "$APPEND" <<EOF
        queries:
          - query: "SELECT 1; COPY (SELECT 1) TO '$TARGET'"
EOF
bad_pre p-two "silt: ingest into 'p-two': preprocess query: only one statement is allowed (got 2)"
push p-passwd "$APPEND" <<'EOF'
        query: "SELECT * FROM read_csv('/etc/passwd')"
EOF
bad_pre p-passwd "silt: ingest into 'p-passwd': preprocess query: reading files is not allowed: Cannot access file \"/etc/passwd\" - $DISABLED $PRE_FILES_HINT"
push p-secret "$APPEND" <<'EOF'
        query: "SELECT content AS v FROM read_text('.silt/secrets.yaml')"
EOF
bad_pre p-secret "silt: ingest into 'p-secret': preprocess query: reading files is not allowed: Cannot access file \".silt/secrets.yaml\" - $DISABLED $PRE_FILES_HINT"
push p-slice "$APPEND" <<EOF
        query: "SELECT * FROM read_parquet('$POP_SLICE')"
EOF
bad_pre p-slice "silt: ingest into 'p-slice': preprocess query: reading files is not allowed: Cannot access file \"$POP_SLICE\" - $DISABLED $PRE_FILES_HINT"
push p-tmp "$APPEND" <<EOF
        query: "SELECT * FROM glob('$T_DIR/.silt/tmp/*')"
EOF
bad_pre p-tmp "silt: ingest into 'p-tmp': preprocess query: reading files is not allowed: Cannot access file \"$T_DIR/.silt/tmp/*\" - $DISABLED $PRE_FILES_HINT"
push p-copy "$APPEND" <<EOF
        queries:
          - alias: x
            query: "COPY (SELECT 1) TO '$TARGET'"
          - query: SELECT * FROM x
EOF
bad_pre p-copy "silt: ingest into 'p-copy': preprocess query 'x': COPY is not allowed in a query $PRE_HINT"
push p-head "$APPEND" <<EOF
        query: "COPY (SELECT 1) TO '$POP_DIR/refs/head'"
EOF
bad_pre p-head "silt: ingest into 'p-head': preprocess query: COPY is not allowed in a query $PRE_HINT"
push p-attach "$APPEND" <<EOF
        queries:
          - alias: a
            query: SELECT * FROM input
          - query: "ATTACH '$TARGET.db' AS x"
EOF
bad_pre p-attach "silt: ingest into 'p-attach': preprocess query: ATTACH is not allowed in a query $PRE_HINT"
push p-set "$APPEND" <<'EOF'
        query: SET enable_external_access = true
EOF
bad_pre p-set "silt: ingest into 'p-set': preprocess query: SET is not allowed in a query $PRE_HINT"
push p-install "$APPEND" <<'EOF'
        query: INSTALL httpfs
EOF
bad_pre p-install "silt: ingest into 'p-install': preprocess query: INSTALL is not allowed in a query $PRE_HINT"
push p-explain "$APPEND" <<'EOF'
        query: EXPLAIN SELECT * FROM input
EOF
bad_pre p-explain "silt: ingest into 'p-explain': preprocess query: EXPLAIN is not allowed in a query $PRE_HINT"
no_target "preprocess"
assert_eq "$(cat "$POP_DIR/refs/head")" "$HEAD_BEFORE" "refs/head unchanged by preprocess attacks"

# ... and through `silt pull` of a polling source
mkdir -p drop
printf 'id,v\n1,a\n' >drop/d1.csv
cat >pull.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: p-pull
  kind: Root
  metadata:
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $T_DIR/drop/d*.csv
      read:
        kind: Csv
        header: true
      preprocess:
        kind: Sql
        engine: duckdb
        query: "SELECT * FROM input, read_csv('/etc/passwd')"
      merge:
        kind: Append
YAML
ok add pull.yaml
bad_pre p-pull "silt: ingest into 'p-pull': preprocess query: reading files is not allowed: Cannot access file \"/etc/passwd\" - $DISABLED $PRE_FILES_HINT" pull p-pull

# a confined preprocess over a merge with a checkpoint (read at its path)
push p-ok '        kind: Snapshot
        primaryKey: [id]' <<'EOF'
        queries:
          - alias: up
            query: SELECT CAST(id AS BIGINT) AS id, upper(v) AS v FROM input
          - query: WITH w AS (SELECT * FROM up) SELECT * FROM w WHERE id > 0
EOF
ok ingest p-ok in.csv
printf 'id,v\n1,a\n3,c\n' >in2.csv
ok ingest p-ok in2.csv
expect_sql 'SELECT "offset", op, id, v FROM "p-ok"' "preprocess with a checkpoint" <<'EOF'
offset,op,id,v
0,0,1,A
1,0,2,B
2,1,2,B
3,0,3,C
EOF
assert_eq "$(find .silt/tmp -type f | wc -l)" "0" "no scratch file left in .silt/tmp"
ok verify --all

finish
