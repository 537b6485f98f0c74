#!/usr/bin/env bash
# test_avro_serve.sh — Avro over silt serve (issue 13): putSchema with
# dataframeReader AVRO sets a schema of format avro, readTable (CSV and
# ARROW) reads the view's Avro files with it, the same bytes as
# `silt read-table`; a file that does not resolve is a Foundry error
# envelope; dataframeReader DATASOURCE stays refused.
source "$(dirname "$0")/lib.sh"
GEN="/usr/bin/python3 $SILT_SOURCE_DIR/tests/tools/avro_fixtures.py"

$GEN simple a.avro 5
$GEN bad .
ok init
ok new f --files
ok upload f a.avro
FRID=$(info f "d['rid']")
ok new g --files
ok upload g strings.avro
GRID=$(info g "d['rid']")

serve_start

BODY='{"dataframeReader":"AVRO","schema":{"fieldSchemaList":[{"name":"id","type":"LONG","nullable":true},{"name":"name","type":"STRING","nullable":true},{"name":"score","type":"DOUBLE","nullable":true}]}}'
expect_http 200 PUT "/api/v2/datasets/$FRID/putSchema?preview=true" -H 'Content-Type: application/json' -d "$BODY"
assert_contains "$HTTP_BODY" '"fieldSchemaList":[{"name":"id","nullable":true,"type":"LONG"}'
ok schema f
assert_eq "$OUT" "id: Option<Int64>
name: Option<String>
score: Option<Float64>
format: avro"

expect_http 200 GET "/api/v2/datasets/$FRID/readTable?format=CSV&preview=true"
assert_eq "$HTTP_BODY" "id,name,score
0,n0,0.0
1,n1,0.25
2,n2,0.5
3,n3,0.75
4,n4,1.0"
ok read-table f --output cli.arrows
expect_http 200 GET "/api/v2/datasets/$FRID/readTable?format=ARROW&preview=true" -H 'Accept: application/octet-stream'
cmp -s cli.arrows "$T_DIR/.hbody" || fail "readTable ARROW bytes differ from silt read-table"
pass

# a file whose writer schema does not resolve: an error envelope naming the file and field
BODY2='{"dataframeReader":"AVRO","schema":{"fieldSchemaList":[{"name":"n","type":"LONG","nullable":true}]}}'
expect_http 200 PUT "/api/v2/datasets/$GRID/putSchema?preview=true" -H 'Content-Type: application/json' -d "$BODY2"
http GET "/api/v2/datasets/$GRID/readTable?format=CSV&preview=true"
[ "$HTTP_STATUS" -ge 400 ] || fail "readTable of a non-resolving file: status $HTTP_STATUS"
pass
assert_contains "$HTTP_BODY" "file 'strings.avro' does not conform to the schema (format avro): field 'n': the file's type string does not resolve to the schema's Int64"

# DATASOURCE is still not a reader silt has
expect_http 400 PUT "/api/v2/datasets/$FRID/putSchema?preview=true" -H 'Content-Type: application/json' \
    -d '{"dataframeReader":"DATASOURCE","schema":{"fieldSchemaList":[{"name":"id","type":"LONG"}]}}'
assert_contains "$HTTP_BODY" '"errorType":"UNSUPPORTED_DATAFRAME_READER"'

done_tests
