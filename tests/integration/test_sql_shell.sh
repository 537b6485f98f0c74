#!/usr/bin/env bash
# test_sql_shell.sh — `silt sql` without a query: the interactive shell on a
# terminal (driven through a pseudo-terminal by tests/tools/pty_run.py: dot
# commands, modes, multi-line statements, errors, history), scripts on a
# pipe (every statement runs, the first error stops with its number),
# SHOW TABLES.
source "$(dirname "$0")/lib.sh"

PTY="python3 $SILT_SOURCE_DIR/tests/tools/pty_run.py"
export SILT_HISTORY="$T_DIR/history"
ok init
add_ds cities <<'EOF'
    - kind: SetDataSchema
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
              kind: Timestamp
              unit: Millisecond
              timezone: UTC
          - name: city
            type:
              kind: String
EOF
ok new docs --files

# ---- SHOW TABLES: the datasets, not DuckDB's tables ------------------------------------
ok sql 'SHOW TABLES'
assert_eq "$OUT" "name   | kind
-------+------
cities | Root
docs   | Files" "SHOW TABLES"
ok sql 'show /* all */ tables;' --format csv
assert_eq "$OUT" "name,kind
cities,Root
docs,Files" "SHOW TABLES, any case, comments and ';'"

# ---- scripts on stdin ------------------------------------------------------------------------
# script TEXT ARGS...: `silt sql ARGS` with TEXT on stdin (a pipe)
script() {
    set +e
    printf '%s' "$1" | "$SILT" sql "${@:2}" >"$T_DIR/s.out" 2>"$T_DIR/s.err"
    echo $? >"$T_DIR/s.rc"
    set -e
}
script "SELECT 1 AS a;
-- a comment; with a semicolon
SELECT 'x;y' AS b, \$\$p;q\$\$ AS c;
SELECT count(*) AS n FROM cities"
assert_eq "$(cat "$T_DIR/s.rc")" 0 "script: exit 0"
assert_eq "$(cat "$T_DIR/s.out")" "a
-
1

b   | c
----+----
x;y | p;q

n
-
0" "script: every statement runs, tables separated by an empty line"
script "SELECT 1 AS a; SELECT 2 AS b;" - --format csv
assert_eq "$(cat "$T_DIR/s.out")" "a
1
b
2" "script with '-' and csv"
script "SELECT 1 AS a; SELECT nope; SELECT 3 AS c" --format csv
assert_eq "$(cat "$T_DIR/s.rc")" 1 "script error: exit 1"
assert_eq "$(cat "$T_DIR/s.out")" "a
1" "script error: the statements before it ran, none after"
assert_eq "$(cat "$T_DIR/s.err")" 'silt: statement 2: sql: Binder Error: Referenced column "nope" was not found because the FROM clause is missing' "script error names the statement"
# confinement holds for every statement of a script
script "SELECT 1 AS a; COPY cities TO 'x.csv'"
assert_eq "$(cat "$T_DIR/s.err")" "silt: statement 2: sql: COPY is not allowed in a query (use --format/--output to write results, or --unsafe-file-access)" "script: each statement confined"
[ ! -e x.csv ] || fail "COPY in a script wrote a file"
pass
script "SELECT 1 AS a; SELECT * FROM read_csv('/etc/passwd')"
assert_contains "$(cat "$T_DIR/s.err")" "silt: statement 2: sql: reading files is not allowed" "script: no file reads"
script "  -- nothing
"
assert_eq "$(cat "$T_DIR/s.rc") $(cat "$T_DIR/s.err")" "1 silt: sql: no statement" "empty script"
script "SELECT 1 AS a; SELECT 2 AS b" --format parquet --output "$T_DIR/two.parquet"
assert_eq "$(cat "$T_DIR/s.err")" "silt: sql: format parquet needs a script of one statement (got 2)" "parquet script"
script "SELECT 1 AS a; SELECT 2 AS b" --format ndjson --output "$T_DIR/two.ndjson"
assert_eq "$(cat "$T_DIR/two.ndjson")" '{"a":1}
{"b":2}' "script --output: all results in one file"
script "SELECT 1 AS a; SELECT nope" --format ndjson --output "$T_DIR/bad.ndjson"
[ ! -e "$T_DIR/bad.ndjson" ] || fail "a failed script left its output file"
pass
# a QUERY argument stays one statement
fails 1 "silt: sql: only one statement is allowed (got 2)" sql 'SELECT 1; SELECT 2'

# ---- the shell ----------------------------------------------------------------------------------
shell() { (cd "$T_DIR" && $PTY -- "$SILT" sql "$@"); }
got=$(printf '%s\n' .help .tables '.schema cities' '.mode csv' 'SELECT 1 AS a,' '  2 AS b;' \
    'SELECT nope;' 'SELECT 4 AS d; SELECT 5 AS e;' '.mode' '.mode xml' '.schema' '.schema nope' '.frob' \
    "SELECT 'it''s' AS s" ';' .quit | shell)
assert_eq "$got" "silt> .help
.help             this text
.tables           the datasets (SHOW TABLES)
.schema NAME      the schema of a dataset
.mode [MODE]      output format: table, csv, json or ndjson (no MODE: the current one)
.quit, .exit      leave the shell (also Ctrl-D)
Statements end with ';' and may span lines.
silt> .tables
name   | kind
-------+------
cities | Root
docs   | Files
silt> .schema cities
offset: UInt64
op: UInt8
system_time: Timestamp(Millisecond, UTC)
event_time: Timestamp(Millisecond, UTC)
city: String
silt> .mode csv
silt> SELECT 1 AS a,
   ...>   2 AS b;
a,b
1,2
silt> SELECT nope;
silt: sql: Binder Error: Referenced column \"nope\" was not found because the FROM clause is missing
silt> SELECT 4 AS d; SELECT 5 AS e;
d
4
e
5
silt> .mode
csv
silt> .mode xml
silt: .mode: unknown mode 'xml' (use table, csv, json or ndjson)
silt> .schema
silt: .schema needs a dataset NAME
silt> .schema nope
silt: dataset 'nope' not found
silt> .frob
silt: unknown command '.frob' (try .help)
silt> SELECT 'it''s' AS s
   ...> ;
s
it's
silt> .quit" "shell session"

# history: written to \$SILT_HISTORY (libedit's format: spaces as \\040), one entry
# per statement (lines joined), read again by the next shell (Ctrl-P recalls it)
assert_eq "$(sed -n '1p;6p' "$SILT_HISTORY")" '_HiStOrY_V2_
SELECT\0401\040AS\040a,\040\040\0402\040AS\040b;' "history file"
got=$(printf '%s\n' "SELECT 7 AS seven;" '<EOF>' | shell --format json)
assert_eq "$got" 'silt> SELECT 7 AS seven;
[
{"seven":7}
]
silt> ^D' "--format json in the shell, Ctrl-D ends it"
got=$(printf '%s\n' '<C-P>' '.exit' | shell --format csv)
assert_eq "$got" 'silt> SELECT 7 AS seven;
seven
7
silt> .exit' "history recalled in a new shell"
set +e
got=$(cd "$T_DIR" && $PTY -- "$SILT" sql --output x.csv </dev/null)
rc=$?
set -e
assert_eq "$rc $got" "2 silt: sql: --output needs a QUERY or a script on stdin (the shell prints results) (see 'silt help')" \
    "no --output for the shell"
done_tests
