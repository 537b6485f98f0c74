#!/usr/bin/env bash
# test_sql_output.sh — how `silt sql` and `silt tail` print every DuckDB type
# in every output format (table, csv, json, ndjson; parquet keeps the types):
# numbers exact, times RFC 3339 / ISO 8601, UUID, BLOB (base64), BIT, ENUM,
# JSON, UNION, and nested values (LIST, ARRAY, STRUCT, MAP) as JSON with
# NULLs inside; the table cut to the terminal width only on a terminal
# (tests/tools/pty_run.py); tail's op names in the table.
source "$(dirname "$0")/lib.sh"

PTY="python3 $SILT_SOURCE_DIR/tests/tools/pty_run.py"
ok init

# expect_out LABEL SILT-ARGS...: silt must succeed and print stdin exactly
expect_out() {
    local label=$1 exp
    shift
    exp=$(cat)
    run "$@"
    [ "$RC" -eq 0 ] || fail "$label: silt $* failed (exit $RC): $ERR"
    assert_eq "$OUT" "$exp" "$label"
}

# numbers: exact integers, HUGEINT, DECIMAL with its scale, BIGNUM; floats
# shortest round trip; NaN/inf as nan/-inf in text, null in JSON
QN="SELECT (-128)::TINYINT AS i1, 32767::SMALLINT AS i2, (-2147483648)::INTEGER AS i4,
 9223372036854775807::BIGINT AS i8, 255::UTINYINT AS u1, 18446744073709551615::UBIGINT AS u8,
 '-170141183460469231731687303715884105728'::HUGEINT AS h,
 '340282366920938463463374607431768211455'::UHUGEINT AS uh, 12.300::DECIMAL(10,3) AS d,
 -0.05::DECIMAL(4,2) AS dn, '12345678901234567890.123456789'::DECIMAL(38,9) AS dw,
 2850.0::DOUBLE AS f8, 0.1::FLOAT AS f4, 1e20::DOUBLE AS fe, 'nan'::DOUBLE AS nan,
 '-inf'::DOUBLE AS ninf, '-123456789012345678901234567890'::BIGNUM AS big"
expect_out 'QN table' sql "$QN" --format table <<'EOF'
i1   | i2    | i4          | i8                  | u1  | u8                   | h                                        | uh                                      | d      | dn    | dw                             | f8     | f4  | fe    | nan | ninf | big
-----+-------+-------------+---------------------+-----+----------------------+------------------------------------------+-----------------------------------------+--------+-------+--------------------------------+--------+-----+-------+-----+------+--------------------------------
-128 | 32767 | -2147483648 | 9223372036854775807 | 255 | 18446744073709551615 | -170141183460469231731687303715884105728 | 340282366920938463463374607431768211455 | 12.300 | -0.05 | 12345678901234567890.123456789 | 2850.0 | 0.1 | 1e+20 | nan | -inf | -123456789012345678901234567890
EOF
expect_out 'QN csv' sql "$QN" --format csv <<'EOF'
i1,i2,i4,i8,u1,u8,h,uh,d,dn,dw,f8,f4,fe,nan,ninf,big
-128,32767,-2147483648,9223372036854775807,255,18446744073709551615,-170141183460469231731687303715884105728,340282366920938463463374607431768211455,12.300,-0.05,12345678901234567890.123456789,2850.0,0.1,1e+20,nan,-inf,-123456789012345678901234567890
EOF
expect_out 'QN json' sql "$QN" --format json <<'EOF'
[
{"i1":-128,"i2":32767,"i4":-2147483648,"i8":9223372036854775807,"u1":255,"u8":18446744073709551615,"h":-170141183460469231731687303715884105728,"uh":340282366920938463463374607431768211455,"d":12.300,"dn":-0.05,"dw":12345678901234567890.123456789,"f8":2850.0,"f4":0.1,"fe":1e+20,"nan":null,"ninf":null,"big":-123456789012345678901234567890}
]
EOF
expect_out 'QN ndjson' sql "$QN" --format ndjson <<'EOF'
{"i1":-128,"i2":32767,"i4":-2147483648,"i8":9223372036854775807,"u1":255,"u8":18446744073709551615,"h":-170141183460469231731687303715884105728,"uh":340282366920938463463374607431768211455,"d":12.300,"dn":-0.05,"dw":12345678901234567890.123456789,"f8":2850.0,"f4":0.1,"fe":1e+20,"nan":null,"ninf":null,"big":-123456789012345678901234567890}
EOF

# the shortest round trip at the edges the renderer's fast path must get
# right: subnormals (fewer digits than DBL_DIG), integers written without an
# exponent up to 1e16, 17 significant digits, single precision
QF="SELECT 5e-324::DOUBLE AS sub, 1e16::DOUBLE AS e16, 1.5e15::DOUBLE AS e15,
 123456789012345678::DOUBLE AS e17, 1/3 AS third, -2.5e-7::DOUBLE AS neg, 1e-45::FLOAT AS fsub,
 3.4028235e38::FLOAT AS fmax, 16777217::FLOAT AS f24, 1234567.0::FLOAT AS f7, 0.3::FLOAT AS f3"
expect_out 'QF csv' sql "$QF" --format csv <<'EOF'
sub,e16,e15,e17,third,neg,fsub,fmax,f24,f7,f3
5e-324,10000000000000000.0,1500000000000000.0,1.2345678901234568e+17,0.3333333333333333,-2.5e-07,1e-45,3.4028235e+38,16777216.0,1234567.0,0.3
EOF

# dates, times (shortest exact fraction), offsets, RFC 3339 timestamps of every
# precision, infinities, ISO 8601 intervals (signed parts)
QT="SELECT DATE '2020-02-29' AS d, 'infinity'::DATE AS dinf, TIME '12:34:56.789' AS t,
 TIME '01:02:03' AS t0, TIMETZ '12:00:00-05:30' AS tz, TIMESTAMP '2020-01-01 10:00:00.5' AS ts,
 TIMESTAMP_S '2020-01-01 10:00:01' AS tss, TIMESTAMP_MS '2020-01-01 10:00:00.123' AS tms,
 TIMESTAMP_NS '2020-01-01 10:00:00.123456789' AS tns,
 TIMESTAMPTZ '2020-01-01 12:00:00.000001+02' AS tstz, '-infinity'::TIMESTAMP AS tinf,
 INTERVAL '1 year 2 months 3 days 04:05:06.5' AS iv, INTERVAL '-1 month 2 days' AS ivn,
 INTERVAL '-90 minutes' AS ivm, INTERVAL 0 SECOND AS iv0"
expect_out 'QT table' sql "$QT" --format table <<'EOF'
d          | dinf     | t            | t0       | tz             | ts                       | tss                  | tms                      | tns                            | tstz                        | tinf      | iv               | ivn    | ivm       | iv0
-----------+----------+--------------+----------+----------------+--------------------------+----------------------+--------------------------+--------------------------------+-----------------------------+-----------+------------------+--------+-----------+-----
2020-02-29 | infinity | 12:34:56.789 | 01:02:03 | 12:00:00-05:30 | 2020-01-01T10:00:00.500Z | 2020-01-01T10:00:01Z | 2020-01-01T10:00:00.123Z | 2020-01-01T10:00:00.123456789Z | 2020-01-01T10:00:00.000001Z | -infinity | P1Y2M3DT4H5M6.5S | P-1M2D | PT-1H-30M | PT0S
EOF
expect_out 'QT csv' sql "$QT" --format csv <<'EOF'
d,dinf,t,t0,tz,ts,tss,tms,tns,tstz,tinf,iv,ivn,ivm,iv0
2020-02-29,infinity,12:34:56.789,01:02:03,12:00:00-05:30,2020-01-01T10:00:00.500Z,2020-01-01T10:00:01Z,2020-01-01T10:00:00.123Z,2020-01-01T10:00:00.123456789Z,2020-01-01T10:00:00.000001Z,-infinity,P1Y2M3DT4H5M6.5S,P-1M2D,PT-1H-30M,PT0S
EOF
expect_out 'QT json' sql "$QT" --format json <<'EOF'
[
{"d":"2020-02-29","dinf":"infinity","t":"12:34:56.789","t0":"01:02:03","tz":"12:00:00-05:30","ts":"2020-01-01T10:00:00.500Z","tss":"2020-01-01T10:00:01Z","tms":"2020-01-01T10:00:00.123Z","tns":"2020-01-01T10:00:00.123456789Z","tstz":"2020-01-01T10:00:00.000001Z","tinf":"-infinity","iv":"P1Y2M3DT4H5M6.5S","ivn":"P-1M2D","ivm":"PT-1H-30M","iv0":"PT0S"}
]
EOF
expect_out 'QT ndjson' sql "$QT" --format ndjson <<'EOF'
{"d":"2020-02-29","dinf":"infinity","t":"12:34:56.789","t0":"01:02:03","tz":"12:00:00-05:30","ts":"2020-01-01T10:00:00.500Z","tss":"2020-01-01T10:00:01Z","tms":"2020-01-01T10:00:00.123Z","tns":"2020-01-01T10:00:00.123456789Z","tstz":"2020-01-01T10:00:00.000001Z","tinf":"-infinity","iv":"P1Y2M3DT4H5M6.5S","ivn":"P-1M2D","ivm":"PT-1H-30M","iv0":"PT0S"}
EOF

# strings, UUID, BLOB (base64), BIT, ENUM, JSON (embedded in JSON), UNION
QO="SELECT true AS b, 'say \"hi\", ok' AS s, '' AS e, uuid '550e8400-e29b-41d4-a716-446655440000' AS u,
 '\\xAA\\x00b'::BLOB AS bl, '10110'::BIT AS bit, 'sad'::ENUM('happy','sad') AS en,
 '{\"k\": [1, null]}'::JSON AS j, union_value(num := 2)::UNION(num INTEGER, str VARCHAR) AS un"
expect_out 'QO table' sql "$QO" --format table <<'EOF'
b    | s            | e | u                                    | bl   | bit   | en  | j                | un
-----+--------------+---+--------------------------------------+------+-------+-----+------------------+----------
true | say "hi", ok |   | 550e8400-e29b-41d4-a716-446655440000 | qgBi | 10110 | sad | {"k": [1, null]} | {"num":2}
EOF
expect_out 'QO csv' sql "$QO" --format csv <<'EOF'
b,s,e,u,bl,bit,en,j,un
true,"say ""hi"", ok","",550e8400-e29b-41d4-a716-446655440000,qgBi,10110,sad,"{""k"": [1, null]}","{""num"":2}"
EOF
expect_out 'QO json' sql "$QO" --format json <<'EOF'
[
{"b":true,"s":"say \"hi\", ok","e":"","u":"550e8400-e29b-41d4-a716-446655440000","bl":"qgBi","bit":"10110","en":"sad","j":{"k": [1, null]},"un":{"num":2}}
]
EOF
expect_out 'QO ndjson' sql "$QO" --format ndjson <<'EOF'
{"b":true,"s":"say \"hi\", ok","e":"","u":"550e8400-e29b-41d4-a716-446655440000","bl":"qgBi","bit":"10110","en":"sad","j":{"k": [1, null]},"un":{"num":2}}
EOF

# nested values with NULLs inside, MAP with string / other keys, ARRAY, and
# scalars inside nested values rendered as at the top level (quoted)
QL="SELECT [1, NULL, 3] AS l, [['a'], [], NULL] AS ll, {'a': 1, 'b': NULL, 'c': ['x', 'y']} AS s,
 MAP {'k1': 1, 'k2': NULL} AS ms, MAP {1: 'one', 2: NULL} AS mi, [1, 2]::INTEGER[2] AS arr,
 [{'t': TIMESTAMP '2020-01-01 00:00:00', 'iv': INTERVAL 1 DAY}] AS ls,
 {'u': uuid '550e8400-e29b-41d4-a716-446655440000', 'b': '\\x01'::BLOB, 'd': 1.50::DECIMAL(3,2),
  'f': 'nan'::DOUBLE} AS so, NULL::INTEGER[] AS nl, []::VARCHAR[] AS el"
expect_out 'QL table' sql "$QL" --format table <<'EOF'
l          | ll              | s                              | ms                 | mi                                               | arr   | ls                                        | so                                                                        | nl   | el
-----------+-----------------+--------------------------------+--------------------+--------------------------------------------------+-------+-------------------------------------------+---------------------------------------------------------------------------+------+---
[1,null,3] | [["a"],[],null] | {"a":1,"b":null,"c":["x","y"]} | {"k1":1,"k2":null} | [{"key":1,"value":"one"},{"key":2,"value":null}] | [1,2] | [{"t":"2020-01-01T00:00:00Z","iv":"P1D"}] | {"u":"550e8400-e29b-41d4-a716-446655440000","b":"AQ==","d":1.50,"f":null} | NULL | []
EOF
expect_out 'QL csv' sql "$QL" --format csv <<'EOF'
l,ll,s,ms,mi,arr,ls,so,nl,el
"[1,null,3]","[[""a""],[],null]","{""a"":1,""b"":null,""c"":[""x"",""y""]}","{""k1"":1,""k2"":null}","[{""key"":1,""value"":""one""},{""key"":2,""value"":null}]","[1,2]","[{""t"":""2020-01-01T00:00:00Z"",""iv"":""P1D""}]","{""u"":""550e8400-e29b-41d4-a716-446655440000"",""b"":""AQ=="",""d"":1.50,""f"":null}",,[]
EOF
expect_out 'QL json' sql "$QL" --format json <<'EOF'
[
{"l":[1,null,3],"ll":[["a"],[],null],"s":{"a":1,"b":null,"c":["x","y"]},"ms":{"k1":1,"k2":null},"mi":[{"key":1,"value":"one"},{"key":2,"value":null}],"arr":[1,2],"ls":[{"t":"2020-01-01T00:00:00Z","iv":"P1D"}],"so":{"u":"550e8400-e29b-41d4-a716-446655440000","b":"AQ==","d":1.50,"f":null},"nl":null,"el":[]}
]
EOF
expect_out 'QL ndjson' sql "$QL" --format ndjson <<'EOF'
{"l":[1,null,3],"ll":[["a"],[],null],"s":{"a":1,"b":null,"c":["x","y"]},"ms":{"k1":1,"k2":null},"mi":[{"key":1,"value":"one"},{"key":2,"value":null}],"arr":[1,2],"ls":[{"t":"2020-01-01T00:00:00Z","iv":"P1D"}],"so":{"u":"550e8400-e29b-41d4-a716-446655440000","b":"AQ==","d":1.50,"f":null},"nl":null,"el":[]}
EOF


# every JSON line is valid JSON (Python's parser), whatever the types
for q in "$QN" "$QT" "$QO" "$QL"; do
    "$SILT" sql "$q" --format ndjson | python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]' ||
        fail "ndjson is not valid JSON: $q"
    pass
done

# parquet keeps the nested types: read back, they print the same
ok sql "$QL" --format parquet --output "$T_DIR/nested.parquet"
expect_out "parquet round trip of nested values" sql "SELECT * EXCLUDE (so) FROM read_parquet('$T_DIR/nested.parquet')" \
    --format csv --unsafe-file-access <<'EOF'
l,ll,s,ms,mi,arr,ls,nl,el
"[1,null,3]","[[""a""],[],null]","{""a"":1,""b"":null,""c"":[""x"",""y""]}","{""k1"":1,""k2"":null}","[{""key"":1,""value"":""one""},{""key"":2,""value"":null}]","[1,2]","[{""t"":""2020-01-01T00:00:00Z"",""iv"":""P1D""}]",,[]
EOF

# ---- the table on a terminal: cut to its width with "…"; whole otherwise ----------
WIDE="SELECT 1 AS n, repeat('x', 60) AS long, [repeat('y', 30), 'z'] AS list"
expect_out "not a terminal: nothing is cut" sql "$WIDE" <<'EOF'
n | long                                                         | list
--+--------------------------------------------------------------+---------------------------------------
1 | xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx | ["yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy","z"]
EOF
# 40 columns: 1 + 2 * 3 separators leaves 33 for the two wide columns: 17 + 16
got=$(cd "$T_DIR" && $PTY --cols 40 -- "$SILT" sql "$WIDE")
assert_eq "$got" "n | long              | list
--+-------------------+-----------------
1 | xxxxxxxxxxxxxxxx… | [\"yyyyyyyyyyyyy…" "terminal of 40 columns: values cut with …"
widest=$(printf '%s\n' "$got" | python3 -c 'import sys; print(max(len(l) for l in sys.stdin.read().splitlines()))')
[ "$widest" -eq 40 ] || fail "the widest line has $widest code points, not 40"
pass
got=$(cd "$T_DIR" && $PTY --cols 40 -- "$SILT" sql "$WIDE" --format csv)
assert_eq "$got" "n,long,list
1,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,\"[\"\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"\",\"\"z\"\"]\"" \
    "csv on a terminal: never cut"

# ---- tail of nested NDJSON: nested values, op names in the table, numbers in JSON
export SILT_FAKE_SYSTEM_TIME=2020-01-01T00:00:00Z # system times are never before the head's
add_ds nest <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: NdJson
      merge:
        kind: Snapshot
        primaryKey: [id]
EOF
printf '{"id": 1, "tags": ["a", "b"], "geo": {"lat": 1.5, "lon": null}}\n{"id": 2, "tags": [], "geo": {"lat": 2, "lon": 3}}\n' >n1.ndjson
printf '{"id": 1, "tags": ["a", null], "geo": {"lat": 1.5, "lon": 4}}\n' >n2.ndjson
ok ingest nest n1.ndjson
SILT_FAKE_SYSTEM_TIME=2020-01-02T00:00:00Z
ok ingest nest n2.ndjson
unset SILT_FAKE_SYSTEM_TIME
expect_out "tail: table with op names and nested values" tail nest <<'EOF'
offset | op | system_time          | event_time           | id | tags       | geo
-------+----+----------------------+----------------------+----+------------+-----------------------
     0 | +A | 2020-01-01T00:00:00Z | 2020-01-01T00:00:00Z |  1 | ["a","b"]  | {"lat":1.5,"lon":null}
     1 | +A | 2020-01-01T00:00:00Z | 2020-01-01T00:00:00Z |  2 | []         | {"lat":2.0,"lon":3}
     2 | -C | 2020-01-02T00:00:00Z | 2020-01-01T00:00:00Z |  1 | ["a","b"]  | {"lat":1.5,"lon":null}
     3 | +C | 2020-01-02T00:00:00Z | 2020-01-02T00:00:00Z |  1 | ["a",null] | {"lat":1.5,"lon":4}
     4 | -R | 2020-01-02T00:00:00Z | 2020-01-01T00:00:00Z |  2 | []         | {"lat":2.0,"lon":3}
EOF
expect_out "tail: json keeps the op numbers" tail nest -n 2 --format ndjson <<'EOF'
{"offset":3,"op":3,"system_time":"2020-01-02T00:00:00Z","event_time":"2020-01-02T00:00:00Z","id":1,"tags":["a",null],"geo":{"lat":1.5,"lon":4}}
{"offset":4,"op":1,"system_time":"2020-01-02T00:00:00Z","event_time":"2020-01-01T00:00:00Z","id":2,"tags":[],"geo":{"lat":2.0,"lon":3}}
EOF
expect_out "tail: csv keeps the op numbers" tail nest -n 1 --format csv <<'EOF'
offset,op,system_time,event_time,id,tags,geo
4,1,2020-01-02T00:00:00Z,2020-01-01T00:00:00Z,2,[],"{""lat"":2.0,""lon"":3}"
EOF
expect_out "sql: an op column is a number" sql 'SELECT op, tags FROM nest WHERE "offset" = 4' <<'EOF'
op | tags
---+-----
 1 | []
EOF
expect_out "nested values queried" sql "SELECT id, tags[1] AS first, geo.lat FROM \"nest:current\" ORDER BY id" --format csv <<'EOF'
id,first,lat
1,a,1.5
EOF

# ---- empty datasets: zero rows with their columns -------------------------------------
add_ds empty <<'EOF'
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
expect_out "empty dataset: a header, no rows (table)" sql 'SELECT * FROM empty' <<'EOF'
offset | op | system_time | event_time | city
-------+----+-------------+------------+-----
EOF
expect_out "empty dataset: csv header" sql 'SELECT city FROM empty' --format csv <<'EOF'
city
EOF
expect_out "empty dataset: json" sql 'SELECT * FROM empty' --format json <<'EOF'
[]
EOF
expect_out "empty dataset: tail" tail empty --format csv <<'EOF'
offset,op,system_time,event_time,city
EOF
ok new files --files
cat >fs.yaml <<'EOF'
fieldSchemaList:
  - name: id
    type: LONG
  - name: tags
    type: STRING
format: csv
EOF
ok schema set files fs.yaml
expect_out "files dataset with a schema and no files: a header" sql 'SELECT * FROM files' --format csv <<'EOF'
id,tags
EOF
ok new void
fails 1 "silt: dataset 'void' has no data" sql 'SELECT * FROM void'

done_tests
