#!/usr/bin/env bash
# test_files_sql.sh — tabular schemas on files datasets: `silt schema set`,
# `silt schema`, and `silt sql` over the files of a view (CSV, Parquet,
# JSON), per branch and per transaction; unstructured datasets.
source "$(dirname "$0")/lib.sh"

ok init
ok new t --files
printf 'id;name\n1;a\n2;NA\n' >p1.csv
printf 'id;name\n3;c\n' >p2.csv
printf 'id;name\nx;c\n' >bad.csv
cat >foundry.yaml <<'Y'
fieldSchemaList:
  - name: id
    type: LONG
  - name: name
    type: STRING
format: csv
csvOptions:
  separator: ";"
  header: true
  nullValue: NA
Y
ok upload t p1.csv p2.csv
T1=$OUT
fails 1 "silt: dataset 't' has no tabular schema" sql 'SELECT * FROM t'
ok schema t
assert_contains "$OUT" "content_hash: String" "without a tabular schema: the schema of the file entries"
ok schema set t foundry.yaml
assert_eq "$OUT" "schema of t set from foundry.yaml"
ok schema t
assert_eq "$OUT" "id: Option<Int64>
name: Option<String>
format: csv
csvOptions:
  separator: ';'
  header: true
  nullValue: 'NA'"
ok sql 'SELECT * FROM t ORDER BY id' --format csv
assert_eq "$OUT" "id,name
1,a
2,
3,c"

# a non-conforming file is named
ok upload t bad.csv
fails_like 1 "dataset 't': file 'bad.csv' does not conform to the schema (format csv)" sql 'SELECT count(*) FROM t'

# branches: a branch sees its own view and schema
ok branch create t dev --at "$T1"
fails 1 "silt: dataset 't@dev' has no tabular schema" sql 'SELECT * FROM "t@dev"'
cat >odf.yaml <<'Y'
fields:
  - name: id
    type:
      kind: Int32
format: parquet
Y
ok sql "COPY (SELECT 7::INTEGER AS id, 'x' AS extra) TO 'seven.parquet' (FORMAT parquet)" --unsafe-file-access 2>/dev/null || true
ok schema set t@dev odf.yaml
fails_like 1 "dataset 't@dev': file 'p1.csv' does not conform to the schema (format parquet)" sql 'SELECT * FROM "t@dev"'
ok upload t@dev --type snapshot seven.parquet
ok sql 'SELECT id FROM "t@dev"' --format csv
assert_eq "$OUT" "id
7"
ok schema t@dev
assert_eq "$OUT" "id: Int32
format: parquet"
# the schema in force at a transaction: none at T1 (set later), csv now
fails 1 "silt: dataset 't' has no tabular schema" schema t --at "$T1"
ok schema t
assert_contains "$OUT" "format: csv"

# JSON files
ok new j --files
printf '{"k": 1, "v": "one"}\n{"k": 2, "v": "two"}\n' >a.json
ok upload j a.json
printf 'fieldSchemaList:\n  - {name: k, type: INTEGER}\n  - {name: v, type: STRING}\nformat: json\n' >js.yaml
ok schema set j js.yaml
ok sql 'SELECT v FROM j ORDER BY k' --format csv
assert_eq "$OUT" "v
one
two"

# errors naming the file and field
printf 'fieldSchemaList:\n  - {name: p, type: DECIMAL}\n' >bad.yaml
fails_like 1 "schema file bad.yaml" schema set j bad.yaml
printf 'fields: []\nfieldSchemaList: []\n' >both.yaml
fails 1 "silt: schema file both.yaml: give either 'fields' (ODF DataSchema) or 'fieldSchemaList' (Foundry field types)" schema set j both.yaml
printf 'fieldSchemaList:\n  - {name: p, type: LONG}\nformat: csv\ncsvOptions: {sep: ","}\n' >opt.yaml
fails 1 "silt: schema file opt.yaml: csvOptions.sep: unknown option (use separator, header, quote, escape, nullValue, encoding, dateFormat, timestampFormat)" schema set j opt.yaml

# unstructured datasets are versioned but have no table
ok new img --files
printf '\x89PNG' >x.png
ok upload img x.png
fails 1 "silt: dataset 'img' has no tabular schema" sql 'SELECT * FROM img'
ok verify --all
done_tests
