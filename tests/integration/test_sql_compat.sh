#!/usr/bin/env bash
# test_sql_compat.sh — SQL of kamu's other engines run on DuckDB through the
# compatibility layer (issue 16, docs/transforms.md "SQL of other engines"):
# a root dataset whose preprocess is `engine: datafusion` (to_timestamp of a
# string, with a list of chrono formats, date_trunc of a string,
# to_timestamp_millis, make_date, arrow_cast, and the column `offset`, which
# plain DuckDB cannot parse unquoted) and one whose preprocess is
# `engine: spark` (backticks, "…" strings, to_date / to_timestamp with Java
# patterns, unix_timestamp, from_unixtime, date_format; NULL for unparsable
# input, as non-ANSI Spark gives), pulled: exact rows and types; the warning
# `silt add` prints for a non-DuckDB engine, exactly; a value DataFusion
# rejects (to_timestamp('garbage')): the pull fails with one line, exit 1,
# the workspace unchanged; a derivative whose SetTransform is
# `engine: datafusion`, pulled; the stored blocks keep the engine and the SQL
# as written (the rewrite is never stored); errors of the rewrite (an
# unknown arrow_cast type, an unsupported pattern letter in a literal) at
# `silt add` / `silt append`: one line, exit 1, nothing written.
source "$(dirname "$0")/lib.sh"

ok init
IN="$T_DIR/in"
mkdir -p "$IN"
WARN="its SQL runs on DuckDB through silt's compatibility layer (docs/transforms.md)"
# ev NAME KIND EXPR: EXPR over the event of the dataset's first KIND block (e)
ev() {
    "$SILT" log "$1" --json | jget "[b['event'] for b in d if b['event']['kind']=='$2'][0]$3"
}

# ---- DataFusion preprocess ----------------------------------------------------------
cat >"$IN/df.csv" <<'EOF'
ts,local,ms,y,m,d,offset,v
2024-03-15T10:30:45Z,15/03/2024 10:30,1710498645123,2024,3,15,7,300
2024-03-15 23:59:59.5,2024-03-16 08:00,0,2024,12,31,8,-2
EOF
DF_QUERY="SELECT to_timestamp(ts) AS event_time,
       to_timestamp(local, '%d/%m/%Y %H:%M', '%Y-%m-%d %H:%M') AS parsed,
       date_trunc('hour', ts) AS hour,
       to_timestamp_millis(ms) AS at_ms,
       make_date(y, m, d) AS day,
       arrow_cast(v, 'Int16') AS v16,
       offset AS pos
FROM input"
# df_source NAME FILE: a root dataset NAME reading FILE with the DataFusion preprocess
df_source() {
    add_ds "$1" <<EOF
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $2
      read:
        kind: Csv
        header: true
        ddlSchema: [ts STRING, local STRING, ms BIGINT, y BIGINT, m BIGINT, d BIGINT, offset BIGINT, v BIGINT]
      preprocess:
        kind: Sql
        engine: datafusion
        query: |
$(printf '%s\n' "$DF_QUERY" | sed 's/^/          /')
      merge:
        kind: Append
EOF
}
df_source df "$IN/df.csv"
assert_eq "$ERR" "silt: warning: engine 'datafusion' of df: $WARN" "the add-time warning"
ok pull df
assert_eq "$OUT" "df: 2 new records (offsets 0..1), watermark 2024-03-15T23:59:59.500Z"
expect_sql 'SELECT "offset", event_time, parsed, hour, at_ms, day, v16, pos FROM df ORDER BY "offset"' \
    "datafusion preprocess" <<'EOF'
offset,event_time,parsed,hour,at_ms,day,v16,pos
0,2024-03-15T10:30:45Z,2024-03-15T10:30:00Z,2024-03-15T10:00:00Z,2024-03-15T10:30:45.123Z,2024-03-15,300,7
1,2024-03-15T23:59:59.500Z,2024-03-16T08:00:00Z,2024-03-15T23:00:00Z,1970-01-01T00:00:00Z,2024-12-31,-2,8
EOF
expect_sql "SELECT column_name, column_type FROM (DESCRIBE df) WHERE column_name IN ('parsed', 'day', 'v16', 'pos')" \
    "datafusion preprocess: types (arrow_cast Int16 is SMALLINT)" <<'EOF'
column_name,column_type
parsed,TIMESTAMP WITH TIME ZONE
day,DATE
v16,SMALLINT
pos,BIGINT
EOF
assert_eq "$(ev df SetPollingSource "['preprocess']['engine']")" "datafusion" "the engine is stored as written"
assert_eq "$(ev df SetPollingSource "['preprocess']['query']")" "$DF_QUERY" "the preprocess query is stored as written"

# a value DataFusion rejects fails the pull (DataFusion: "Error parsing
# timestamp"); nothing is written, and the error names the value
printf 'ts,local,ms,y,m,d,offset,v\ngarbage,15/03/2024 10:30,0,2024,3,15,9,1\n' >"$IN/bad.csv"
df_source dfbad "$IN/bad.csv"
unchanged_after 1 "silt: ingest into 'dfbad': preprocess query: Conversion Error: invalid timestamp field format: \"garbage\", expected format is (YYYY-MM-DD HH:MM:SS[.US][±HH[:MM[:SS]]| ZONE]) when casting from source column ts" \
    pull dfbad
assert_eq "$(info dfbad 'd["blocks"], d["records"]')" "[2,0]" "no block, no records after the failed pull"
# none of the formats matches: an error too (not a NULL)
printf 'ts,local,ms,y,m,d,offset,v\n2024-01-01T00:00:00Z,15-03-2024,0,2024,3,15,9,1\n' >"$IN/nofmt.csv"
df_source dfnofmt "$IN/nofmt.csv"
unchanged_after_like 1 "preprocess query: Invalid Input Error: Could not parse string \"15-03-2024\" according to format specifier" \
    pull dfnofmt

# ---- Spark preprocess ----------------------------------------------------------------
cat >"$IN/spark.csv" <<'EOF'
id,day,stamp,epoch,when
1,15.03.2024,2024-03-15 10:30:45,1710498645,2024-03-15 10:30:45
2,31.12.2023,not a time,0,2023-12-31 23:59:59
3,29.02.2024,2024-02-29 00:00:00,86400,bad
EOF
SPARK_QUERY='SELECT `id`, to_date(`day`, '"'dd.MM.yyyy'"') AS `event_time`,
       to_date(`when`, "dd.MM.yyyy") AS no_date,
       unix_timestamp(stamp) AS secs,
       unix_timestamp(`when`, '"'yyyy-MM-dd HH:mm:ss'"') AS secs2,
       from_unixtime(epoch) AS iso,
       from_unixtime(epoch, '"'dd/MM/yyyy HH:mm'"') AS fmt,
       date_format(to_timestamp(`when`), "EEE, d MMM yyyy") AS pretty
FROM input'
add_ds sp <<EOF
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $IN/spark.csv
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, day STRING, stamp STRING, epoch BIGINT, when STRING]
      preprocess:
        kind: Sql
        engine: spark
        query: |
$(printf '%s\n' "$SPARK_QUERY" | sed 's/^/          /')
      merge:
        kind: Append
EOF
assert_eq "$ERR" "silt: warning: engine 'spark' of sp: $WARN" "the add-time warning (spark)"
ok pull sp
assert_eq "$OUT" "sp: 3 new records (offsets 0..2), watermark 2024-03-15T00:00:00.000Z"
# row 2: 'not a time' → NULL secs; row 3: 'bad' → NULL secs2, pretty; no_date
# is NULL throughout ('2024-03-15 10:30:45' is not dd.MM.yyyy)
expect_sql 'SELECT "offset", event_time, id, no_date, secs, secs2, iso, fmt, pretty FROM sp ORDER BY "offset"' \
    "spark preprocess" <<'EOF'
offset,event_time,id,no_date,secs,secs2,iso,fmt,pretty
0,2024-03-15,1,,1710498645,1710498645,2024-03-15 10:30:45,15/03/2024 10:30,"Fri, 15 Mar 2024"
1,2023-12-31,2,,,1704067199,1970-01-01 00:00:00,01/01/1970 00:00,"Sun, 31 Dec 2023"
2,2024-02-29,3,,1709164800,,1970-01-02 00:00:00,02/01/1970 00:00,
EOF
expect_sql "SELECT count(*) AS nulls FROM sp WHERE no_date IS NULL AND (secs IS NULL OR secs2 IS NULL OR pretty IS NULL OR id = 1)" \
    "spark: unparsable input is NULL, not an empty string" <<'EOF'
nulls
3
EOF
assert_eq "$(ev sp SetPollingSource "['preprocess']['query']")" "$SPARK_QUERY" "the spark query is stored as written (backticks, \"…\" strings)"

# ---- a derivative with engine datafusion ---------------------------------------------
DV_QUERY="SELECT event_time, pos, offset AS src, date_trunc('month', to_timestamp_seconds(event_time)) AS month FROM df"
cat >dv.yaml <<EOF
kind: DatasetSnapshot
version: 1
content:
  name: dv
  kind: Derivative
  metadata:
  - kind: SetTransform
    inputs:
    - datasetRef: df
    transform:
      kind: Sql
      engine: datafusion
      query: "$DV_QUERY"
EOF
ok add dv.yaml
assert_eq "$ERR" "silt: warning: engine 'datafusion' of dv: $WARN" "the add-time warning (derivative)"
ok pull dv
assert_eq "$OUT" "dv: 2 new records (offsets 0..1), watermark 2024-03-15T23:59:59.500Z, read 2 input records (incremental)"
expect_sql 'SELECT "offset", event_time, pos, src, month FROM dv ORDER BY "offset"' "datafusion transform" <<'EOF'
offset,event_time,pos,src,month
0,2024-03-15T10:30:45Z,7,0,2024-03-01T00:00:00Z
1,2024-03-15T23:59:59.500Z,8,1,2024-03-01T00:00:00Z
EOF
assert_eq "$(ev dv SetTransform "['transform']")" \
    "{\"engine\":\"datafusion\",\"kind\":\"Sql\",\"queries\":[{\"query\":\"$DV_QUERY\"}]}" \
    "the transform is stored as written"
ok verify dv

# ---- the rewrite's errors at add / append time: one line, exit 1, nothing written -----
cat >badcast.yaml <<'EOF'
kind: DatasetSnapshot
version: 1
content:
  name: badcast
  kind: Root
  metadata:
  - kind: AddPushSource
    sourceName: default
    read: {kind: Csv, header: true, ddlSchema: [v BIGINT]}
    preprocess: {kind: Sql, engine: datafusion, query: "SELECT arrow_cast(v, 'Int128') AS v FROM input"}
    merge: {kind: Append}
EOF
unchanged_after 1 "silt: badcast.yaml:1: dataset 'badcast': content.metadata[0] (AddPushSource): preprocess query: arrow_cast: unsupported Arrow type 'Int128'" \
    add badcast.yaml
sed -e 's/name: dv$/name: badpat/' -e 's/engine: datafusion/engine: spark/' \
    -e "s/query: .*/queries: [{alias: s, query: 'SELECT event_time FROM df'}, {query: 'SELECT date_format(event_time, \"yyyy QQ\") AS q FROM s'}]/" \
    dv.yaml >badpat.yaml
unchanged_after 1 "silt: badpat.yaml:1: dataset 'badpat': content.metadata[0] (SetTransform): transform query: date_format: unsupported pattern letter 'QQ' (quarter) in 'yyyy QQ'" \
    add badpat.yaml
cat >settr.yaml <<'EOF'
kind: SetTransform
inputs:
- datasetRef: df
transform: {kind: Sql, engine: datafusion, query: "SELECT event_time, to_timestamp(local, '%d.%m.%Y %C') AS t FROM df"}
EOF
unchanged_after 1 "silt: settr.yaml: event 1 (SetTransform): transform query: to_timestamp: unsupported chrono specifier '%C' in '%d.%m.%Y %C'" \
    append dv settr.yaml

# a DuckDB dataset gets no warning
add_ds plain <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read: {kind: Csv, header: true, ddlSchema: [a BIGINT]}
      preprocess: {kind: Sql, engine: duckdb, query: SELECT a FROM input}
      merge: {kind: Append}
EOF
assert_eq "$ERR" "" "no warning for engine duckdb"

done_tests
