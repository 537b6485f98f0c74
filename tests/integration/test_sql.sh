#!/usr/bin/env bash
# test_sql.sh — `silt sql`, `silt tail`, `silt schema` through the CLI:
# output formats, usage errors (exit 2), failures (exit 1, one line), and,
# on data pushed with `silt ingest`, the dataset views, the current state,
# tail and schema.
source "$(dirname "$0")/lib.sh"

ok init

# ---- formats on plain queries --------------------------------------------
ok sql "SELECT 1 AS a, 'x,y' AS b, NULL AS c, TIMESTAMPTZ '2020-01-01 10:00:00.5+00' AS t"
assert_eq "$OUT" "a | b   | c    | t
--+-----+------+-------------------------
1 | x,y | NULL | 2020-01-01T10:00:00.500Z" "table format"

ok sql "SELECT 1 AS a, 'x,y' AS b, NULL AS c, '' AS d" --format csv
assert_eq "$OUT" 'a,b,c,d
1,"x,y",,""' "csv format"

ok sql "SELECT * FROM (VALUES (1, [1,2]), (2, NULL)) t(n, l)" --format json
assert_eq "$OUT" '[
{"n":1,"l":[1,2]},
{"n":2,"l":null}
]' "json format"

ok sql "SELECT * FROM (VALUES (1, 'a'), (2, 'b')) t(n, s)" --format=ndjson
assert_eq "$OUT" '{"n":1,"s":"a"}
{"n":2,"s":"b"}' "ndjson format"

ok --json sql "SELECT 1 AS a"
assert_eq "$OUT" '[{"a":1}]' "--json: the rows as one compact line"
ok --json sql "SELECT range AS a FROM range(3)" --output j.json
assert_eq "$OUT" "" "--json --output: nothing on stdout"
assert_eq "$(cat j.json)" '[{"a":0},{"a":1},{"a":2}]' "--json --output: the same line in the file"
assert_eq "$(tail -c 1 j.json | od -An -c | tr -d ' ')" '\n' "ends with a newline"
ok --json sql "SELECT 1 AS a" --format json
assert_eq "$OUT" '[
{"a":1}
]' "--format json stays the data format (one row a line)"
printf 'SELECT 1 AS a; SELECT 2 AS b;' | "$SILT" --json sql - >"$T_DIR/script.out"
assert_eq "$(cat "$T_DIR/script.out")" '[{"a":1}]
[{"b":2}]' "--json script: one line per statement"

ok sql "SELECT DATE '2020-02-03' AS d, TIMESTAMP_NS '2020-01-01 00:00:00.123456789' AS ns" --format csv
assert_eq "$OUT" 'd,ns
2020-02-03,2020-01-01T00:00:00.123456789Z' "dates and timestamps"

echo "SELECT 42 AS answer;" | "$SILT" sql - --format csv >"$T_DIR/stdin.out"
assert_eq "$(cat "$T_DIR/stdin.out")" 'answer
42' "query from stdin"

ok sql "SELECT 7 AS x UNION ALL SELECT 8" --format parquet --output "$T_DIR/o.parquet"
[ -s "$T_DIR/o.parquet" ] || fail "parquet output missing"
ok sql "SELECT sum(x) AS s FROM read_parquet('$T_DIR/o.parquet')" --format csv --unsafe-file-access
assert_eq "$OUT" 's
15' "parquet output round trip"

# ---- an embedded NUL byte: the whole value in every format -------------------
# (compared byte for byte: $(...) would drop the NUL bytes). The table shows a
# NUL byte as U+2400 (one column wide), CSV keeps the byte (the field is
# quoted), JSON and NDJSON escape it as \u0000; Parquet keeps the bytes.
NULQ="SELECT 'a' || chr(0) || 'b' AS z, chr(0) AS e, 2 AS n"
# expect_bytes FORMAT LABEL: `silt sql "$NULQ"` must print exactly the
# printf format on stdin
expect_bytes() {
    # shellcheck disable=SC2059
    printf "$(cat)" >"$T_DIR/nul.want"
    "$SILT" sql "$NULQ" --format "$1" >"$T_DIR/nul.got" 2>"$T_DIR/nul.err" ||
        fail "$2: silt sql failed: $(cat "$T_DIR/nul.err")"
    cmp -s "$T_DIR/nul.got" "$T_DIR/nul.want" || fail "$2: expected
$(od -c "$T_DIR/nul.want")
got
$(od -c "$T_DIR/nul.got")"
    pass
}
expect_bytes table "NUL in table format" <<'EOF'
z   | e | n\n----+---+--\na\342\220\200b | \342\220\200 | 2\n
EOF
expect_bytes csv "NUL in csv format" <<'EOF'
z,e,n\n"a\000b","\000",2\n
EOF
expect_bytes json "NUL in json format" <<'EOF'
[\n{"z":"a\\u0000b","e":"\\u0000","n":2}\n]\n
EOF
expect_bytes ndjson "NUL in ndjson format" <<'EOF'
{"z":"a\\u0000b","e":"\\u0000","n":2}\n
EOF
ok sql "$NULQ" --format parquet --output "$T_DIR/nul.parquet"
ok new nul
ok ingest nul "$T_DIR/nul.parquet" --input-format parquet
expect_sql 'SELECT length(z) AS len, hex(z) AS z, hex(e) AS e, n FROM nul' "NUL bytes kept in parquet" <<'CSV'
len,z,e,n
3,610062,00,2
CSV
# nested values are printed in the table and CSV formats too, as JSON text
# (every type in every format: test_sql_output.sh)
ok sql "SELECT [1, 2] AS l, {'a': 'x'} AS s" --format csv
assert_eq "$OUT" 'l,s
"[1,2]","{""a"":""x""}"' "nested values in csv"

ok sql "SELECT 1 AS one" --format csv --output "$T_DIR/o.csv"
assert_eq "$OUT" "" "nothing on stdout with --output"
assert_eq "$(cat "$T_DIR/o.csv")" 'one
1' "csv to a file"

# ---- usage errors (exit 2) and failures (exit 1) ---------------------------
fails 2 "silt: sql: --format parquet needs --output FILE (see 'silt help')" sql "SELECT 1" --format parquet
fails 2 "silt: sql: unknown format 'xml' (use table, csv, json, ndjson, parquet or arrow) (see 'silt help')" \
    sql "SELECT 1" --format xml
# no QUERY: a script from stdin (empty here; the shell on a terminal: test_sql_shell.sh)
fails 1 "silt: sql: no statement" sql </dev/null
fails 2 "silt: sql: unknown option '--bogus' (see 'silt help')" sql "SELECT 1" --bogus
fails 1 'silt: sql: Parser Error: syntax error at or near "SELEC"' sql "SELEC 1"
fails 1 "silt: sql: Catalog Error: Table with name nosuch does not exist!" sql "SELECT * FROM nosuch"
fails 1 "silt: sql: only one statement is allowed (got 2)" sql "SELECT 1; SELECT 2"
fails 1 "silt: dataset 'nope' not found" tail nope
fails 1 "silt: dataset 'nope' not found" schema nope
fails 2 "silt: tail: -n needs a non-negative number, got 'x' (see 'silt help')" tail nope -n x
fails 2 "silt: schema: unknown option '--xml' (see 'silt help')" schema nope --xml
fails 1 "silt: as-of: 'zzz' is not a block hash (multihash f1620…)" sql "SELECT 1" --as-of zzz

ok new void
fails 1 "silt: dataset 'void' has no data" sql "SELECT * FROM void"
fails 1 "silt: dataset 'void' has no data" tail void
fails 1 "silt: dataset 'void' has no schema" schema void
ok sql "SELECT 'void' AS s" --format csv
assert_eq "$OUT" 's
void' "a string equal to a dataset name needs no view"

# ---- data pushed through ingest ----------------------------------------------
cat >pop.yaml <<'EOF'
kind: DatasetSnapshot
version: 1
content:
  name: ca.pop
  kind: Root
  metadata:
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema:
          - "city STRING"
          - "population BIGINT"
          - "event_time DATE"
      merge:
        kind: Snapshot
        primaryKey:
          - city
EOF
printf 'city,population,event_time\nA,100,2020-01-01\nB,200,2020-01-01\nC,300,2020-01-01\n' >s1.csv
printf 'city,population,event_time\nA,110,2020-01-02\nC,300,2020-01-01\nD,400,2020-01-02\n' >s2.csv
ok add pop.yaml
ok ingest ca.pop s1.csv --input-format csv
FIRST_HEAD=$(info ca.pop 'd["head"]')
ok ingest ca.pop s2.csv --input-format csv

ok sql 'SELECT count(*) AS n, min("offset") AS lo, max("offset") AS hi FROM "ca.pop"' --format csv
assert_eq "$OUT" 'n,lo,hi
7,0,6' "all records: 3 appends, a correction pair, a retraction, an append"
ok sql 'SELECT op, count(*) AS n FROM "ca.pop" GROUP BY op ORDER BY op' --format csv
assert_eq "$OUT" 'op,n
0,4
1,1
2,1
3,1' "changelog operations"
ok sql 'SELECT city, population, event_time FROM "ca.pop:current" ORDER BY city' --format csv
assert_eq "$OUT" 'city,population,event_time
A,110,2020-01-02
C,300,2020-01-01
D,400,2020-01-02' "current state"
ok sql "SELECT city FROM current_state('ca.pop') ORDER BY city" --format csv
assert_eq "$OUT" 'city
A
C
D' "current_state() macro"

ok sql 'SELECT city, population FROM "ca.pop" ORDER BY city' --format csv --as-of "ca.pop=$FIRST_HEAD"
assert_eq "$OUT" 'city,population
A,100
B,200
C,300' "as of the first ingest (NAME=BLOCK)"
ok sql 'SELECT count(*) AS n FROM "ca.pop:current"' --format csv --as-of "$FIRST_HEAD"
assert_eq "$OUT" 'n
3' "as of the first ingest (bare BLOCK)"

ok tail ca.pop -n 2 --format csv
assert_eq "$(printf '%s\n' "$OUT" | wc -l)" "3" "tail -n 2: header + 2 rows"
assert_eq "$(printf '%s\n' "$OUT" | tail -n 2 | cut -d, -f1 | tr '\n' ' ')" "5 6 " "tail: newest offsets in order"
ok tail ca.pop
assert_eq "$(printf '%s\n' "$OUT" | wc -l)" "9" "tail default: header, separator, 7 rows"

ok schema ca.pop
assert_contains "$OUT" "offset: " "schema lists the offset column"
assert_contains "$OUT" "city: Option<String>" "schema lists city"
ok schema ca.pop --yaml
assert_contains "$OUT" "fields:" "schema --yaml"
ok schema ca.pop --json
assert_contains "$OUT" '"fields"' "schema --json"

done_tests
