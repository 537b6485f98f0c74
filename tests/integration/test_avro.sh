#!/usr/bin/env bash
# test_avro.sh — Avro object container files in files datasets (issue 13):
# every type and logical type, every codec of Apache Avro C (null, deflate,
# snappy, lzma), cross-checked value by value with python3-avro reading the
# same files; Avro schema resolution (promotions, absent Option fields) and
# its refusals; upload -> schema infer -> schema set; read-table; bad files
# (corrupt block, truncated, not Avro, unsupported codec, unsupported union);
# silt_read_avro in confined queries reads no file outside the view.
source "$(dirname "$0")/lib.sh"
GEN="/usr/bin/python3 $SILT_SOURCE_DIR/tests/tools/avro_fixtures.py"

$GEN types .
$GEN recodec types.avro snappy types_snappy.avro
$GEN recodec types.avro lzma types_lzma.avro
$GEN bad .
$GEN simple simple.avro 3000

ok init
ok new t --files
ok upload t types.avro types_deflate.avro types_snappy.avro types_lzma.avro

# ---- upload -> infer -> set -------------------------------------------------
ok schema infer t
printf '%s\n' "$OUT" >inferred.yaml
assert_eq "$(grep -c '^- name:' inferred.yaml)" "25" "one field per Avro field"
assert_eq "$(tail -n 1 inferred.yaml)" "format: avro"
ok schema set t inferred.yaml
ok schema t
assert_eq "$OUT" "b: Bool
i: Int32
l: Int64
f: Float32
d: Float64
s: String
by: Binary
fx: Binary(4)
e: String
arr: List<Int64>
m: Map<String, Int32>
rec: Struct<x: Int32, y: Option<String>>
recs: List<Struct<x: Int32, y: Option<String>>>
am: Map<String, List<String>>
on: Option<Int64>
os: Option<String>
orec: Option<Struct<x: Int32, y: Option<String>>>
dec: Decimal(10, 2)
decf: Decimal(18, 4)
dt: Date
tms: Time(Millisecond)
tus: Time(Microsecond)
tsms: Timestamp(Millisecond, UTC)
tsus: Timestamp(Microsecond, UTC)
u: String
format: avro"

# ---- every value, against python3-avro as the independent reader -----------
CANON="SELECT b, i, l, CAST(f AS DOUBLE), d, s, hex(\"by\"), hex(fx), e, coalesce(array_to_string(arr, '|'), ''),
  coalesce(array_to_string(list_transform(map_entries(m), lambda x: x.key || '=' || x.value), '|'), ''),
  rec.x, coalesce(rec.y, 'NULL'),
  coalesce(array_to_string(list_transform(recs, lambda r: r.x || ':' || coalesce(r.y, 'NULL')), '|'), ''),
  coalesce(array_to_string(list_transform(map_entries(am),
                                          lambda x: x.key || '=' || coalesce(array_to_string(x.value, '/'), '')), '|'), ''),
  coalesce(\"on\"::VARCHAR, 'NULL'), coalesce(os, 'NULL'),
  CASE WHEN orec IS NULL THEN 'NULL' ELSE orec.x || ':' || coalesce(orec.y, 'NULL') END,
  dec::VARCHAR, decf::VARCHAR, dt::VARCHAR,
  (extract(hour FROM tms) * 60 + extract(minute FROM tms)) * 60000000 + extract(microseconds FROM tms),
  (extract(hour FROM tus) * 60 + extract(minute FROM tus)) * 60000000 + extract(microseconds FROM tus),
  epoch_ms(tsms), epoch_us(tsus), u FROM t"
ok sql "$CANON" --format csv
printf '%s\n' "$OUT" | tail -n +2 | LC_ALL=C sort >silt.txt
for f in types.avro types_deflate.avro types.avro types.avro; do $GEN dump $f; done | LC_ALL=C sort >python.txt
assert_eq "$(wc -l <silt.txt)" "12" "3 rows x 4 codecs"
assert_eq "$(cat silt.txt)" "$(cat python.txt)" "silt's values = python3-avro's values"
# and the exact first row, as the specification of the mapping
assert_eq "$($GEN dump types.avro | sed -n 1p)" "true,1,10,1.5,3.141592653589793,one,0001FF,61626364,RED,1|2|3,a=1|b=2,7,why,1:NULL,k=p/q,42,str,8:NULL,12.34,-98765.4321,2024-02-29,45296789000,86399999999,1704164645678,1704164645678901,123e4567-e89b-12d3-a456-426614174000"
expect_sql 'SELECT tsms, tsus, tms, dec, "by", fx FROM t WHERE i = -2147483648 LIMIT 1' <<'X'
tsms,tsus,tms,dec,by,fx
1969-12-31T23:59:59.999Z,1960-06-15T00:00:00.000001Z,00:00:00,-0.05,"",AAAAAA==
X
# each codec gives the same rows
for c in "" _deflate _snappy _lzma; do
    ok new "c${c#_}" --files
    ok upload "c${c#_}" "types$c.avro"
    ok schema set "c${c#_}" inferred.yaml
    ok sql "SELECT count(*) AS n, sum(l % 1000) AS s, string_agg(e, '/' ORDER BY e) AS e FROM \"c${c#_}\"" --format csv
    assert_eq "$OUT" "n,s,e
3,9,BLUE/GREEN/RED" "codec ${c:-null}"
done

# read-table (what readTable of silt serve sends) reads the Avro files too
ok read-table c --format csv --columns i,e,dec
assert_eq "$(printf '%s\n' "$OUT" | LC_ALL=C sort)" "-2147483648,BLUE,-0.05
1,RED,12.34
2147483647,GREEN,99999999.99
i,e,dec"

# ---- schema resolution --------------------------------------------------------
cat >promote.yaml <<'Y'
fields:
  - {name: i, type: {kind: Int64}}
  - {name: l, type: {kind: Float64}}
  - {name: f, type: {kind: Float64}}
  - {name: by, type: {kind: Binary}}
  - {name: s, type: {kind: Binary}}
  - {name: dec, type: {kind: Decimal, precision: 20, scale: 2}}
  - {name: tsms, type: {kind: Timestamp, unit: Microsecond, timezone: UTC}}
  - {name: tsus, type: {kind: Timestamp, unit: Millisecond}}
  - {name: absent, type: {kind: Option, inner: {kind: Struct, fields: [{name: z, type: {kind: Int32}}]}}}
  - {name: rec, type: {kind: Struct, fields: [{name: y, type: {kind: Option, inner: {kind: String}}}]}}
format: avro
Y
ok new p --files
ok upload p types.avro
ok schema set p promote.yaml
expect_sql "SELECT * FROM p ORDER BY i" <<'X'
i,l,f,by,s,dec,tsms,tsus,absent,rec
-2147483648,-9.223372036854776e+18,-0.25,"",w7xuw69jw7hkw6kg4pyT,-0.05,1969-12-31T23:59:59.999Z,1960-06-15T00:00:00Z,,"{""y"":null}"
1,10.0,1.5,AAH/,b25l,12.34,2024-01-02T03:04:05.678Z,2024-01-02T03:04:05.678Z,,"{""y"":""why""}"
2147483647,9.223372036854776e+18,3.0000000054977558e+38,eA==,"",99999999.99,2262-04-11T23:47:16.854Z,0001-01-01T00:00:00Z,,"{""y"":""""}"
X

# ---- refusals: one line naming the file and the field, exit 1, nothing changed
cat >nonopt.yaml <<'Y'
fields:
  - {name: id, type: {kind: Int64}}
  - {name: n, type: {kind: Int64}}
format: avro
Y
ok new bad --files
ok upload bad nullable.avro
ok schema set bad nonopt.yaml
unchanged_after 1 "silt: dataset 'bad': file 'nullable.avro' does not conform to the schema (format avro): field 'n': the file's type [null, long] does not resolve to the schema's Int64: the file's type is nullable, the schema's is not Option" sql 'SELECT * FROM bad'
ok new str --files
ok upload str strings.avro
ok schema set str nonopt.yaml
unchanged_after 1 "silt: dataset 'str': file 'strings.avro' does not conform to the schema (format avro): field 'n': the file's type string does not resolve to the schema's Int64" sql 'SELECT * FROM str'
cat >missing.yaml <<'Y'
fields:
  - {name: id, type: {kind: Int64}}
  - {name: gone, type: {kind: Int64}}
format: avro
Y
ok schema set str missing.yaml
unchanged_after 1 "silt: dataset 'str': file 'strings.avro' does not conform to the schema (format avro): field 'gone': missing in the file's writer schema (only an Option field may be absent)" read-table str --format csv
ok new un --files
ok upload un union.avro
unchanged_after 1 "silt: schema infer un: file 'union.avro': field 'v': unsupported union [int, string] (only a union of null and one other type maps to a dataset type)" schema infer un
ok schema set un nonopt.yaml
unchanged_after 1 "silt: dataset 'un': file 'union.avro' does not conform to the schema (format avro): field 'n': missing in the file's writer schema (only an Option field may be absent)" sql 'SELECT * FROM un'
cat >union.yaml <<'Y'
fields:
  - {name: v, type: {kind: Option, inner: {kind: Int32}}}
format: avro
Y
ok schema set un union.yaml
unchanged_after 1 "silt: dataset 'un': file 'union.avro' does not conform to the schema (format avro): field 'v': unsupported union [int, string] (only a union of null and one other type maps to a dataset type)" sql 'SELECT * FROM un'

# bad files: a corrupt block, a truncated file, a file that is not Avro, a codec
# Apache Avro C does not have
size=$(stat -c %s simple.avro)
python3 - "$size" <<'P'
import sys
n = int(sys.argv[1])
b = bytearray(open("simple.avro", "rb").read())
for k in range(n // 2, n // 2 + 64):
    b[k] ^= 0x5A
open("corrupt.avro", "wb").write(b)
open("truncated.avro", "wb").write(b"".join([open("simple.avro", "rb").read()[: n - 100]]))
P
echo 'id,name' >notavro.avro
cat >simple.yaml <<'Y'
fields:
  - {name: id, type: {kind: Int64}}
  - {name: name, type: {kind: String}}
  - {name: score, type: {kind: Float64}}
format: avro
Y
ok new s --files
ok upload s simple.avro
ok schema set s simple.yaml
expect_sql "SELECT count(*) AS n, sum(id) AS ids, max(name) AS name, sum(score) AS score FROM s" <<'X'
n,ids,name,score
3000,4498500,n999,1124625.0
X
for f in corrupt truncated notavro bzip2; do
    ok new "b$f" --files
    ok upload "b$f" "$f.avro"
    ok schema set "b$f" simple.yaml
done
unchanged_after 1 "silt: dataset 'bcorrupt': file 'corrupt.avro' does not conform to the schema (format avro): record 1432: cannot read the block: Cannot read string value: Cannot allocate buffer for string value" sql 'SELECT count(*) FROM bcorrupt'
unchanged_after 1 "silt: dataset 'btruncated': file 'truncated.avro' does not conform to the schema (format avro): cannot open the Avro file: Cannot read file block: Cannot read 13072 bytes from file" sql 'SELECT count(*) FROM btruncated'
unchanged_after 1 "silt: dataset 'bnotavro': file 'notavro.avro' does not conform to the schema (format avro): not an Avro object container file (no 'Obj\\x01' magic)" sql 'SELECT count(*) FROM bnotavro'
unchanged_after 1 "silt: dataset 'bbzip2': file 'bzip2.avro' does not conform to the schema (format avro): codec 'bzip2' is not supported (Apache Avro C reads null, deflate, snappy and lzma)" sql 'SELECT count(*) FROM bbzip2'
sed 's/format: avro/format: orc/' simple.yaml >orc.yaml
unchanged_after 1 "silt: schema file orc.yaml: unknown format 'orc' (use parquet, csv, json or avro)" schema set s orc.yaml

# ---- confinement: silt_read_avro reads only the files of the query's views ---
unchanged_after 1 "silt: sql: reading files is not allowed: silt_read_avro may only read the files of the datasets of the query (query datasets by name, or use --unsafe-file-access)" sql "SELECT * FROM silt_read_avro('/etc/passwd', '{}')"
unchanged_after 1 "silt: sql: reading files is not allowed: silt_read_avro may only read the files of the datasets of the query (query datasets by name, or use --unsafe-file-access)" sql "SELECT count(*) FROM s, silt_read_avro('$T_DIR/simple.avro', '{\"fields\":[{\"name\":\"id\",\"type\":{\"kind\":\"Int64\"}}]}')"
ok sql "SELECT count(*) FROM silt_read_avro('$T_DIR/simple.avro', '{\"fields\":[{\"name\":\"id\",\"type\":{\"kind\":\"Int64\"}}]}')" --unsafe-file-access --format csv
assert_eq "$OUT" "count_star()
3000" "--unsafe-file-access: any file"

# ---- schema infer of Parquet, CSV and JSON files, and its refusals -----------
printf 'id;name;amount\n1;a;1.5\n2;b;2.25\n' >p1.csv
ok new ic --files
ok upload ic p1.csv
ok schema infer ic
printf '%s\n' "$OUT" >ic.yaml
assert_eq "$OUT" "fields:
- name: id
  type:
    kind: Option
    inner:
      kind: Int64
- name: name
  type:
    kind: Option
    inner:
      kind: String
- name: amount
  type:
    kind: Option
    inner:
      kind: Float64
format: csv
csvOptions:
  separator: \";\"
  header: true"
ok schema set ic ic.yaml
expect_sql "SELECT * FROM ic ORDER BY id" <<'X'
id,name,amount
1,a,1.5
2,b,2.25
X
ok sql "COPY (SELECT 1::BIGINT AS id, [1, 2]::INT[] AS l) TO 'a.parquet' (FORMAT parquet)" --unsafe-file-access
ok new iq --files
ok upload iq a.parquet
ok schema infer iq
printf '%s\n' "$OUT" >iq.yaml
assert_eq "$(tail -n 8 iq.yaml)" "    kind: Option
    inner:
      kind: List
      itemType:
        kind: Option
        inner:
          kind: Int32
format: parquet" "Parquet: the footer's types"
ok schema set iq iq.yaml
expect_sql "SELECT * FROM iq" <<'X'
id,l
1,"[1,2]"
X
printf '{"a": 1}\n' >j.json
ok new ij --files
ok upload ij j.json
ok schema infer ij
assert_eq "$OUT" "fields:
- name: a
  type:
    kind: Option
    inner:
      kind: Int64
format: json"
ok upload iq p1.csv
unchanged_after 1 "silt: schema infer iq: file 'p1.csv' is csv but 'a.parquet' is parquet: a schema has one format" schema infer iq
ok new i2 --files
ok upload i2 simple.avro
ok upload i2 strings.avro --as other.avro
unchanged_after 1 "silt: schema infer i2: file 'simple.avro' has another schema than 'other.avro'" schema infer i2
echo x >blob.bin
ok upload ij blob.bin
unchanged_after 1 "silt: schema infer ij: file 'blob.bin': cannot tell its format (Avro and Parquet by their magic bytes, CSV and JSON by the extension)" schema infer ij
ok new none --files
unchanged_after 1 "silt: dataset 'none' has no data files to infer a schema from" schema infer none
fails 2 "silt: schema infer needs NAME[@BRANCH] [--at RID] (see 'silt help')" schema infer
# --at: the view as of a transaction
ok new ia --files
ok upload ia j.json
TA=$OUT
ok upload ia blob.bin
ok schema infer ia --at "$TA"
assert_eq "$(tail -n 1 <<<"$OUT")" "format: json"

# ---- streaming: a file larger than the memory limit, read with bounded memory
# (8M rows, 177 MB uncompressed, 64 MB engine memory limit; peak RSS measured
# with getrusage of the child)
"$SILT_BUILD_DIR/bench/avro_gen" big.avro 0 8000000 null
ok new big --files
ok upload big big.avro
rm big.avro
cat >big.yaml <<'Y'
fields:
  - {name: id, type: {kind: Int64}}
  - {name: cat, type: {kind: Int32}}
  - {name: name, type: {kind: String}}
  - {name: score, type: {kind: Float64}}
format: avro
Y
ok schema set big big.yaml
rss=$(SILT_MEMORY_LIMIT=64MB python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(r.returncode, r.stdout.replace("\n", "|"), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' \
    "$SILT" sql 'SELECT count(*) AS n, sum(id) AS s, max(name) AS m FROM big' --format csv)
read -r rc_big out_big mb_big <<<"$rss"
assert_eq "$rc_big $out_big" "0 n,s,m|8000000,31999996000000,name-999|" "8M rows read"
[ "$mb_big" -lt 160 ] || fail "peak RSS ${mb_big} MB reading a 177 MB Avro file with a 64 MB memory limit (expected < 160 MB)"
pass

done_tests
