#!/usr/bin/env bash
# test_derive_examples.sh — derivative pipelines over real data (issue 16,
# "Real-world check"; docs/transforms.md "Example pipelines"): the input data
# of kamu's examples (/work/shared/fixtures/kamu-examples, data files only)
# fed to root datasets in two or three batches each, and four derivatives
# written for silt (manifests and SQL of our own): a top-2 leaderboard over a
# Ledger of match scores (keyed by place: -C/+C when the leader changes), a
# join of USD transactions with monthly CAD rates, an as-of join of orders
# and shipments (orders not fully shipped within 2 days), and a running
# portfolio value (an as-of join of daily closes with the position built up
# by the trades). After every batch each derivative is pulled and its
# `:current` must equal the same query run directly by `silt sql` over the
# inputs' `:current`; the small ones also against exact rows; `silt verify`
# replays every run at the end.
source "$(dirname "$0")/lib.sh"

FIX=$SILT_SOURCE_DIR/../shared/fixtures/kamu-examples
[ -d "$FIX" ] || FIX=/work/shared/fixtures/kamu-examples
[ -f "$FIX/leaderboard/data/1.ndjson" ] || fail "no kamu-examples fixture at $FIX"

ok init

# root NAME KIND 'DDL' 'PREPROCESS' 'KEY': a push-source root dataset
# (a Ledger on KEY, or Append when KEY is empty)
root() {
    local merge="{kind: Append}"
    [ -n "$5" ] && merge="{kind: Ledger, primaryKey: [$5]}"
    add_ds "$1" <<YAML
    - kind: AddPushSource
      sourceName: default
      read: {kind: $2, $( [ "$2" = Csv ] && printf 'header: true, ')ddlSchema: [$3]}
      preprocess: {kind: Sql, engine: duckdb, query: "$4"}
      merge: $merge
YAML
}

# derive NAME 'INPUTS' 'KEY' < QUERY: a derivative of the space-separated
# INPUTS (each its own alias); the query names an input as @NAME. KEY, when
# given, is declared as silt.dev/primaryKey.
declare -A QUERY
derive() {
    local q in
    q=$(cat)
    QUERY[$1]=$q
    {
        printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Derivative\n  metadata:\n' "$1"
        printf '  - kind: SetTransform\n    inputs:\n'
        for in in $2; do printf '    - datasetRef: %s\n' "$in"; done
        printf '    transform:\n      kind: Sql\n      engine: duckdb\n      query: |\n'
        printf '%s\n' "$q" | sed 's/@\([a-z_]*\)/\1/g; s/^/        /'
        if [ -n "$3" ]; then
            printf '  - kind: SetDataSchema\n    schema:\n      fields: []\n      extra: {"silt.dev/primaryKey": [%s]}\n' "$3"
        fi
    } >"$1.yaml"
    ok add "$1.yaml"
}

# same NAME 'COLUMNS' LABEL: pull NAME; its :current must equal its query run
# directly over the inputs' :current (as multisets of COLUMNS), and not be empty
same() {
    local direct
    ok pull "$1"
    run sql "SELECT $2 FROM ($(printf '%s' "${QUERY[$1]}" | sed 's/@\([a-z_]*\)/"\1:current"/g')) ORDER BY ALL" --format csv
    [ "$RC" -eq 0 ] || fail "$3: the direct query failed: $ERR"
    direct=$OUT
    [ "$(printf '%s\n' "$direct" | wc -l)" -gt 1 ] || fail "$3: the direct query has no rows"
    run sql "SELECT $2 FROM \"$1:current\" ORDER BY ALL" --format csv
    assert_eq "$OUT" "$direct" "$3: $1:current = its query over the inputs"
}

# batch FILE FROM TO: lines FROM..TO of a CSV file after its header, as a file
batch() {
    local out=$T_DIR/$(basename "$1").$2
    { head -1 "$1"; tail -n +2 "$1" | sed -n "$2,$3p"; } >"$out"
    printf '%s' "$out"
}
# dates FILE FROM TO OUT: the CSV rows whose first column (a date) is in [FROM, TO), as file OUT
dates() {
    { head -1 "$1"; tail -n +2 "$1" | awk -F, -v a="$2" -v b="$3" '$1 >= a && $1 < b'; } >"$T_DIR/$4"
    printf '%s' "$T_DIR/$4"
}

# ---- a top-2 leaderboard over a Ledger of scores -----------------------------------

root scores NdJson 'match_time DATE, match_id BIGINT, player_id STRING, score BIGINT' \
    'SELECT CAST(match_time AS TIMESTAMP) AS event_time, match_id, player_id, score FROM input' \
    'match_id, player_id'
derive leaderboard scores place <<'SQL'
SELECT place, player_id, total FROM (
  SELECT player_id, CAST(sum(score) AS BIGINT) AS total,
         row_number() OVER (ORDER BY sum(score) DESC, player_id) AS place
  FROM @scores GROUP BY player_id) WHERE place <= 2
SQL
LB='SELECT "offset", op, event_time, place, player_id, total FROM leaderboard ORDER BY "offset"'
ok ingest scores "$FIX/leaderboard/data/1.ndjson"
same leaderboard 'place, player_id, total' "scores batch 1"
expect_sql "$LB" "leaderboard after match 1" <<'CSV'
offset,op,event_time,place,player_id,total
0,0,2000-01-01T00:00:00Z,1,Alice,100
1,0,2000-01-01T00:00:00Z,2,Bob,80
CSV
ok ingest scores "$FIX/leaderboard/data/2.ndjson"
same leaderboard 'place, player_id, total' "scores batch 2"
ok ingest scores "$FIX/leaderboard/data/3.ndjson"
# a match already recorded, sent again: the Ledger drops it, the leaderboard is up to date
ok ingest scores "$FIX/leaderboard/data/3.ndjson"
same leaderboard 'place, player_id, total' "scores batch 3"
expect_sql "$LB" "leaderboard after match 3: a -C/+C pair per place whose row changed" <<'CSV'
offset,op,event_time,place,player_id,total
0,0,2000-01-01T00:00:00Z,1,Alice,100
1,0,2000-01-01T00:00:00Z,2,Bob,80
2,2,2000-01-01T00:00:00Z,1,Alice,100
3,3,2000-01-02T00:00:00Z,1,Alice,170
4,2,2000-01-01T00:00:00Z,2,Bob,80
5,3,2000-01-02T00:00:00Z,2,Charlie,90
6,2,2000-01-02T00:00:00Z,1,Alice,170
7,3,2000-01-03T00:00:00Z,1,Charlie,200
8,2,2000-01-02T00:00:00Z,2,Charlie,90
9,3,2000-01-03T00:00:00Z,2,Alice,170
CSV
ok pull leaderboard
assert_eq "$OUT" "leaderboard: up to date" "a pull with no new input is up to date"

# ---- transactions in USD joined with monthly USD->CAD rates ------------------------

TX=$FIX/currency_conversion/data/transactions.csv
root transactions Csv 'event_time DATE, symbol STRING, quantity BIGINT, price DOUBLE, settlement DOUBLE, currency STRING' \
    'SELECT CAST(event_time AS TIMESTAMP) AS event_time, symbol, quantity, price, settlement, currency FROM input' ''
# our own rates, one a month (2017-01 .. 2019-12): 1.25 + 0.005 * (month number mod 13)
printf 'month,cad_per_usd\n' >"$T_DIR/rates.csv"
for y in 2017 2018 2019; do for m in $(seq 1 12); do
    printf '%s-%02d-01,%s\n' "$y" "$m" "$(awk -v i=$(((y - 2017) * 12 + m)) 'BEGIN{printf "%.3f", 1.25 + 0.005 * (i % 13)}')"
done; done >>"$T_DIR/rates.csv"
root rates Csv 'month DATE, cad_per_usd DOUBLE' \
    'SELECT CAST(month AS TIMESTAMP) AS event_time, cad_per_usd FROM input' 'event_time'
derive txcad 'transactions rates' '' <<'SQL'
SELECT t.event_time, t.symbol, t.quantity, r.cad_per_usd,
       round(t.price * r.cad_per_usd, 4) AS price_cad,
       round(t.settlement * r.cad_per_usd, 4) AS settlement_cad
FROM @transactions t JOIN @rates r ON date_trunc('month', t.event_time) = r.event_time
SQL
ok ingest rates "$(dates "$T_DIR/rates.csv" 0 2018-07-01 rates.1)"
ok ingest transactions "$(batch "$TX" 1 12)"
same txcad 'event_time, symbol, quantity, cad_per_usd, price_cad, settlement_cad' "fx batch 1"
ok ingest transactions "$(batch "$TX" 13 36)"
same txcad 'event_time, symbol, quantity, cad_per_usd, price_cad, settlement_cad' "fx batch 2 (transactions without a rate yet)"
expect_sql 'SELECT count(*) AS n FROM "txcad:current"' "only the months with a rate" <<'CSV'
n
18
CSV
ok ingest rates "$(dates "$T_DIR/rates.csv" 2018-07-01 9 rates.2)"
same txcad 'event_time, symbol, quantity, cad_per_usd, price_cad, settlement_cad' "fx batch 3 (the rates arrive)"
expect_sql 'SELECT event_time, symbol, cad_per_usd, price_cad, settlement_cad FROM "txcad:current" WHERE event_time >= TIMESTAMP '"'2019-12-01'"'' "a converted transaction" <<'CSV'
event_time,symbol,cad_per_usd,price_cad,settlement_cad
2019-12-02T00:00:00Z,SPY,1.3,405.132,-405.132
CSV

# ---- orders not fully shipped within 2 days (an as-of join) ------------------------

O=$FIX/overdue_shipments/data/orders-001.csv
S=$FIX/overdue_shipments/data/shipments-001.csv
root orders Csv 'event_time DATE, order_id BIGINT, quantity BIGINT' \
    'SELECT CAST(event_time AS TIMESTAMP) AS event_time, order_id, quantity FROM input' 'order_id'
root shipments Csv 'event_time DATE, shipment_id BIGINT, order_id BIGINT, quantity BIGINT' \
    'SELECT CAST(event_time AS TIMESTAMP) AS event_time, shipment_id, order_id, quantity FROM input' 'shipment_id'
derive overdue 'orders shipments' order_id <<'SQL'
WITH shipped AS (
  SELECT order_id, event_time,
         CAST(sum(quantity) OVER (PARTITION BY order_id ORDER BY event_time, shipment_id) AS BIGINT) AS shipped
  FROM @shipments)
SELECT o.order_id, o.event_time AS ordered, o.quantity, coalesce(s.shipped, 0) AS shipped_in_2_days
FROM @orders o ASOF LEFT JOIN shipped s
  ON s.order_id = o.order_id AND o.event_time + INTERVAL 2 DAY >= s.event_time
WHERE coalesce(s.shipped, 0) < o.quantity
SQL
OV='SELECT order_id, ordered, quantity, shipped_in_2_days FROM "overdue:current" ORDER BY order_id'
ok ingest orders "$(batch "$O" 1 3)"
ok ingest shipments "$(batch "$S" 1 3)"
same overdue 'order_id, ordered, quantity, shipped_in_2_days' "orders batch 1"
expect_sql "$OV" "order 3: nothing shipped yet" <<'CSV'
order_id,ordered,quantity,shipped_in_2_days
3,2020-01-05T00:00:00Z,9,0
CSV
ok ingest orders "$(batch "$O" 4 4)"
ok ingest shipments "$(batch "$S" 4 6)"
same overdue 'order_id, ordered, quantity, shipped_in_2_days' "orders batch 2"
expect_sql "$OV" "order 3 shipped after 3 days, order 4 only 50 of 110 in 2 days" <<'CSV'
order_id,ordered,quantity,shipped_in_2_days
3,2020-01-05T00:00:00Z,9,0
4,2020-01-10T00:00:00Z,110,50
CSV

# ---- a running portfolio value: daily closes as-of the position held --------------

root tickers Csv 'date DATE, symbol STRING, adj_close DOUBLE, close DOUBLE, high DOUBLE, low DOUBLE, open DOUBLE, volume DOUBLE' \
    'SELECT CAST(date AS TIMESTAMP) AS event_time, symbol, close FROM input' 'event_time, symbol'
root trades Csv 'event_time DATE, symbol STRING, quantity BIGINT, price DOUBLE, settlement DOUBLE' \
    'SELECT CAST(event_time AS TIMESTAMP) AS event_time, symbol, quantity, price, settlement FROM input' ''
derive portfolio 'tickers trades' '' <<'SQL'
WITH position AS (
  SELECT symbol, event_time,
         CAST(sum(quantity) OVER w AS BIGINT) AS held,
         sum(-settlement) OVER w AS invested
  FROM @trades WINDOW w AS (PARTITION BY symbol ORDER BY event_time))
SELECT t.event_time, t.symbol, p.held, round(p.invested, 2) AS invested,
       round(p.held * t.close, 2) AS market_value
FROM @tickers t ASOF JOIN position p ON p.symbol = t.symbol AND t.event_time >= p.event_time
SQL
TK=$FIX/trading/data/tickers.csv
TR=$FIX/trading/data/transactions.csv
PF='event_time, symbol, held, invested, market_value'
# three batches each, split so that closes arrive before the trades of their days
# (the position of those days changes later: -R/+A in the changelog)
ok ingest tickers "$(dates "$TK" 0 2017-07-01 tickers.1)"
ok ingest trades "$(dates "$TR" 0 2017-01-01 trades.1)"
same portfolio "$PF" "trading batch 1"
ok ingest tickers "$(dates "$TK" 2017-07-01 2019-01-01 tickers.2)"
ok ingest trades "$(dates "$TR" 2017-01-01 2018-07-01 trades.2)"
same portfolio "$PF" "trading batch 2"
ok ingest tickers "$(dates "$TK" 2019-01-01 9 tickers.3)"
ok ingest trades "$(dates "$TR" 2018-07-01 9 trades.3)"
same portfolio "$PF" "trading batch 3"
# the 1192 SPY days once each (+A), and -R/+A for the 251 SPY days valued before
# their trades had arrived (2017-01-03..2017-06-30 in batch 1, 2018-07-02..2018-12-31
# in batch 2); IPO is never traded, so never valued
expect_sql 'SELECT op, count(*) AS n FROM portfolio GROUP BY op ORDER BY op' \
    "days valued before their trades arrived are corrected" <<'CSV'
op,n
0,1443
1,251
CSV
expect_sql 'SELECT event_time, held, invested, market_value FROM "portfolio:current" ORDER BY event_time DESC LIMIT 1' \
    "the last day: 48 shares" <<'CSV'
event_time,held,invested,market_value
2020-09-25T00:00:00Z,48,12176.5,15779.04
CSV

ok verify leaderboard txcad overdue portfolio
done_tests
