#!/usr/bin/env bash
# The Arrow C stream API from a C program: examples/arrow_sum.c (built as
# build/examples/arrow_sum) sums a column of silt_query_arrow's batches; its
# counts and sums equal `silt sql`'s aggregate of the same rows.
source "$(dirname "$0")/lib.sh"

SUM="$SILT_BUILD_DIR/examples/arrow_sum"
[ -x "$SUM" ] || fail "$SUM not built"
ok init
add_ds pop <<'Y'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["city STRING", "population BIGINT", "share DOUBLE"]
      merge:
        kind: Ledger
        primaryKey: [city]
Y
python3 -c '
print("city,population,share")
for i in range(4500):
    print("c%d,%d,%s" % (i, i * 7, "" if i % 9 == 0 else "%.2f" % (i / 4)))' >pop.csv
ok ingest pop pop.csv

GOT=$("$SUM" . 'SELECT * FROM pop' population) || fail "arrow_sum failed"
WANT=$("$SILT" sql "SELECT 'rows=' || count(*) || ' batches=3 nulls=0 sum=' || sum(population) FROM pop" --format csv | tail -1)
assert_eq "$GOT" "$WANT" "population: rows, batches (4500 rows: 2048 + 2048 + 404), sum"
# the sum as %.17g (the example's format) of the engine's own double sum
WANT=$("$SILT" sql "SELECT count(*), count(*) - count(share), sum(share) FROM pop" --format csv | tail -1 |
    python3 -c 'import sys; n, nulls, s = sys.stdin.read().strip().split(","); print("rows=%s batches=3 nulls=%s sum=%.17g" % (n, nulls, float(s)))')
assert_eq "$("$SUM" . 'SELECT * FROM pop' share)" "$WANT" "share: nulls and sum"
# errors come back through the API as one line
fails_cmd() { "$SUM" "$@" 2>&1 && return 1 || return 0; }
assert_eq "$(fails_cmd . 'EXPLAIN SELECT 1' x)" \
    "arrow_sum: sql: EXPLAIN is not allowed in a query (only SELECT queries are allowed, or use --unsafe-file-access)" "not a SELECT"
assert_eq "$(fails_cmd . 'SELECT * FROM pop' city)" "arrow_sum: column has Arrow format 'u', not a number" "a text column"
assert_eq "$(fails_cmd . "SELECT CASE WHEN range = 900000 THEN error('late') ELSE range END AS v FROM range(1000000)" v)" \
    "arrow_sum: sql: Invalid Input Error: late" "an error while reading"
done_tests
