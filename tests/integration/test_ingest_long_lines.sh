#!/usr/bin/env bash
# test_ingest_long_lines.sh — every input row is ingested or reported: CSV
# lines longer than DuckDB's default max_line_size (2,000,000 bytes) are read
# whole wherever they lie in the file (DuckDB 1.4 dropped a line of >= 32 MB,
# or a long line across one of its buffer boundaries, without a word), a
# record past silt's limit (256 MiB) is a one-line error naming the line with
# the dataset unchanged, and empty lines before a header do not shift it.
# The inputs are generated here, in the test's temp dir.
source "$(dirname "$0")/lib.sh"

use_soft_failures

ok init
add_ds long <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT", "name STRING"]
      merge:
        kind: Append
EOF
add_ds plain <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
      merge:
        kind: Append
EOF

ds_dir() { echo "$T_DIR/.silt/datasets/$("$SILT" info "$1" --json | jget 'd["id"]' | sed 's/^did:odf://')"; }
snapshot() { printf '%s\n%s\n' "$(tree_sum "$(ds_dir "$1")")" "$("$SILT" sql "SELECT count(*) FROM \"$1\"" --format csv)"; }

# long_csv FILE LEN [PAD]: "id,name", "1,a", PAD padding rows of 101 bytes, "2,<LEN x>", "3,c"
long_csv() {
    {
        printf 'id,name\n1,a\n'
        [ "${3:-0}" -gt 0 ] && seq 100000 $((99999 + $3)) | sed 's/$/,padding-padding-padding-padding-padding-padding-padding-padding-padding-padding-padding/'
        printf '2,'
        head -c "$2" /dev/zero | tr '\0' x
        printf '\n3,c\n'
    } >"$1"
}

# ingest_long DS FILE LEN PAD: ingest succeeds with every row, the long one whole
declare -A ROWS=([long]=0 [plain]=0)
ingest_long() {
    local ds=$1 f=$2 len=$3 pad=$4 before=${ROWS[$1]}
    ROWS[$ds]=$((before + 3 + pad))
    run ingest "$ds" "$f"
    [ "$RC" -eq 0 ] || fail "ingest $f: exit $RC: $ERR"
    pass
    expect_sql "SELECT id, CASE WHEN length(name) > 20 THEN 'x*' || length(name) ELSE name END AS name
                FROM \"$ds\" WHERE \"offset\" >= $before AND CAST(id AS VARCHAR) IN ('1', '2', '3') ORDER BY \"offset\"" \
        "$f: rows 1..3, the long one whole" <<EOF
id,name
1,a
2,x*$len
3,c
EOF
    expect_sql "SELECT count(*) AS n FROM \"$ds\" WHERE \"offset\" >= $before" "$f: every row" <<EOF
n
$((3 + pad))
EOF
}

# a 33,000,000-byte line between good rows (was dropped, exit 0)
long_csv l33.csv 33000000
ingest_long long l33.csv 33000000 0
ingest_long plain l33.csv 33000000 0
rm -f l33.csv
# 2 MB and 31 MB lines (were a DuckDB "Maximum line size" error)
long_csv l2.csv 2000001
ingest_long long l2.csv 2000001 0
long_csv l31.csv 31000000
ingest_long long l31.csv 31000000 0
rm -f l2.csv l31.csv
# a 10 MB line 23 MB into the file, across DuckDB's first buffer boundary
long_csv l10.csv 10000000 230000
ingest_long long l10.csv 10000000 230000
rm -f l10.csv
ok verify long

# past the limit: one-line error naming the line, nothing written (a
# sparse file: the record is NUL bytes, refused before DuckDB reads it)
printf 'id,name\n1,a\n2,' >huge.csv
truncate -s $((12 + 268435456 + 1)) huge.csv
printf '\n3,c\n' >>huge.csv
BEFORE=$(snapshot long)
fails 1 "silt: ingest into 'long': huge.csv: line 3: a record of 268435457 bytes is longer than the limit of 268435456 bytes" \
    ingest long huge.csv
assert_eq "$(snapshot long)" "$BEFORE" "a refused long record changes nothing"
rm -f huge.csv

# empty lines before the header: the header is the first record (DuckDB took
# the first physical line and ingested the header as a data row)
printf '\n\nid,name\n7,g\n8,h\n' >lead.csv
ok ingest plain lead.csv
expect_sql "SELECT id, name FROM plain WHERE name IN ('g', 'h', 'name') ORDER BY \"offset\"" "leading empty lines" <<'EOF'
id,name
7,g
8,h
EOF
printf '\n\nid,name\n9,i\nx,j\n' >lead_bad.csv
BEFORE=$(snapshot long)
fails 1 "silt: ingest into 'long': lead_bad.csv: row 2 (line 5), column 'id': cannot convert 'x' to BIGINT" \
    ingest long lead_bad.csv
assert_eq "$(snapshot long)" "$BEFORE" "a bad row after leading empty lines changes nothing"
ok verify plain

finish
