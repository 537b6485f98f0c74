#!/usr/bin/env bash
# test_evm.sh — EthereumLogs / EvmLogs sources against a real anvil node on
# 127.0.0.1 with contracts compiled offline by npm solc (tests/node/
# evm_chain.mjs): every decoded value of an event with indexed and
# non-indexed, static and dynamic parameters; incremental pulls (exact
# offsets of the 2nd pull, `up to date`); batches of SILT_EVM_BATCH_SIZE;
# filters on an indexed topic and on the address; a Source/Flow EvmLogs;
# a node that refuses wide eth_getLogs ranges (the scan halves them; a
# pass-through proxy in front of anvil, tests/evm_range_proxy.py); faults
# (chainId mismatch, node down, bad filter / signature): exit 1, one line,
# dataset unchanged.
source "$(dirname "$0")/lib.sh"

NPM="${SILT_NPM_CACHE:-$HOME/.cache/silt/npm}"
ANVIL="$NPM/node_modules/@foundry-rs/anvil-linux-amd64/bin/anvil"
[ -x "$ANVIL" ] || fail "anvil missing in $NPM (run scripts/bootstrap.sh)"
PORT=$(free_port)
NODE="http://127.0.0.1:$PORT"
"$ANVIL" --host 127.0.0.1 --port "$PORT" --silent --timestamp 1700000000 &
T_PIDS+=("$!")
for _ in $(seq 100); do
    curl -sf -X POST -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "$NODE" >/dev/null && break
    sleep 0.1
done
chain() { node_run "$SILT_SOURCE_DIR/tests/node/evm_chain.mjs" "$NODE" "$@"; }
chain deploy "$SILT_SOURCE_DIR/tests/fixtures/evm_emitter.sol" "$T_DIR/addr.json"
A=$(jget 'd["address"][0]' <"$T_DIR/addr.json")
B=$(jget 'd["address"][1]' <"$T_DIR/addr.json")
assert_eq "$A" "0x5fbdb2315678afecb367f032d93f642f64180aa3" "first contract (deployer nonce 0)"
assert_eq "$B" "0xe7f1725e7734ce288f8367e1bb143e90bb3f0512" "second contract"
TO1=0x1111111111111111111111111111111111111111
TO2=0x2222222222222222222222222222222222222222
chain transfer "$A" "$TO1" 1000   # block 3
chain mixed "$A"                  # block 4
chain transfer "$B" "$TO2" 7      # block 5

ok init
MIXED='Mixed(uint8 indexed small, int256 indexed neg, string indexed tag, bytes32 id, bool flag, int64 delta,
            string note, bytes blob, uint256[] nums, address[2] pair, uint128 big, int16 tiny, string[] words)'
legacy() { # NAME FILTER SIGNATURE [CHAINID]
    add_ds "$1" <<YAML
    - kind: SetPollingSource
      fetch:
        kind: EthereumLogs
        chainId: ${4:-31337}
        nodeUrl: $NODE
        filter: "$2"
        signature: |
          $3
      read:
        kind: Parquet
      merge:
        kind: Append
YAML
}

# ---- every decoded value of Mixed ------------------------------------------------
legacy mixed "" "$(printf '%s' "$MIXED" | tr '\n' ' ')"
ok pull mixed
assert_contains "$OUT" "mixed: 1 new record (offsets 0..0)"
expect_sql "select block_number, block_timestamp, transaction_index, log_index, hex(address) a, hex(topic0) t0, hex(topic1) t1, hex(topic2) t2, hex(topic3) t3, octet_length(data) n from mixed" <<'CSV'
block_number,block_timestamp,transaction_index,log_index,a,t0,t1,t2,t3,n
4,2023-11-14T22:14:00Z,0,0,5FBDB2315678AFECB367F032D93F642F64180AA3,ABC235D8535E8523F7C092A1FE9BAD2804FFA3DE6AACE0BF8E825D4EE8438E3A,00000000000000000000000000000000000000000000000000000000000000FF,FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFE,97721080EADE4B057EAE589A1435045ACA04C882598F794915100D4634A2C909,832
CSV
expect_sql "select event.small, event.neg, hex(event.tag) tag, hex(event.id) id, event.flag, event.delta, event.note, hex(event.blob) bl, event.nums, list_transform(event.pair, lambda x: hex(x)) pair, event.big, event.tiny, event.words from mixed" <<'CSV'
small,neg,tag,id,flag,delta,note,bl,nums,pair,big,tiny,words
255,-2,97721080EADE4B057EAE589A1435045ACA04C882598F794915100D4634A2C909,A709FD3AA96D9FAF770E44A5AEF2F4808A6FE3A5DDF546568F36AD3A3873F31D,true,-9000000000000000000,"héllo ""q""",000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F20,"[""0"",""1"",""115792089237316195423570985008687907853269984665640564039457584007913129639935""]","[""1111111111111111111111111111111111111111"",""5FBDB2315678AFECB367F032D93F642F64180AA3""]",340282366920938463463374607431768211455,-32768,"[""alpha"",""""]"
CSV
# the raw columns are the node's: block and transaction hashes as eth_getLogs returns them
NODE_LOG=$(chain logs | jget '[l for l in d if l["blockNumber"]=="0x4"][0]')
expect_sql "select '0x' || lower(hex(block_hash)) b, '0x' || lower(hex(transaction_hash)) t, '0x' || lower(hex(data)) d from mixed" <<CSV
b,t,d
$(printf '%s' "$NODE_LOG" | jget 'd["blockHash"]+","+d["transactionHash"]+","+d["data"]')
CSV
run log mixed -n 1 --yaml
assert_contains "$OUT" "kind: odf/etag"
assert_contains "$OUT" "value: 5@$(chain logs >/dev/null; curl -s -X POST -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x5",false]}' "$NODE" | jget 'd["result"]["hash"][2:]')"
ok pull mixed
assert_eq "$OUT" "mixed: up to date"

# ---- Transfer: incremental, filters --------------------------------------------
TRANSFER='Transfer(address indexed from, address indexed to, uint256 value)'
legacy transfers "" "$TRANSFER"
ok pull transfers
assert_contains "$OUT" "transfers: 2 new records (offsets 0..1)"
expect_sql "select block_number, hex(address) a, hex(event.\"from\") f, hex(event.\"to\") t, event.value from transfers order by \"offset\"" <<'CSV'
block_number,a,f,t,value
3,5FBDB2315678AFECB367F032D93F642F64180AA3,F39FD6E51AAD88F6F4CE6AB8827279CFFFB92266,1111111111111111111111111111111111111111,1000
5,E7F1725E7734CE288F8367E1BB143E90BB3F0512,F39FD6E51AAD88F6F4CE6AB8827279CFFFB92266,2222222222222222222222222222222222222222,7
CSV
chain transfer "$A" "$TO2" 42     # block 6
chain mixed "$A"                  # block 7 (not a Transfer)
chain transfer "$B" "$TO1" 43     # block 8
ok pull transfers
assert_contains "$OUT" "transfers: 2 new records (offsets 2..3)"
expect_sql "select \"offset\", block_number, event.value from transfers order by \"offset\"" <<'CSV'
offset,block_number,value
0,3,1000
1,5,7
2,6,42
3,8,43
CSV
ok pull transfers
assert_eq "$OUT" "transfers: up to date"

# filter on an indexed topic (to = TO1) and on the address
legacy to1 "topic2 = X'0000000000000000000000001111111111111111111111111111111111111111'" "$TRANSFER"
ok pull to1
expect_sql "select block_number, event.value from to1 order by \"offset\"" <<'CSV'
block_number,value
3,1000
8,43
CSV
legacy onlyb "address = X'${B#0x}' and block_number between 1 and 7" "$TRANSFER"
ok pull onlyb
expect_sql "select block_number, event.value from onlyb order by \"offset\"" <<'CSV'
block_number,value
5,7
CSV
legacy nomatch "address in (X'${A#0x}') and not block_number > 2" ""
ok pull nomatch
assert_eq "$OUT" "nomatch: 0 new records, watermark -"

# batches: two logs per AddData, cut at block boundaries
legacy batched "" "$TRANSFER"
SILT_EVM_BATCH_SIZE=2 SILT_EVM_BLOCK_STRIDE=3 ok pull batched
assert_contains "$OUT" "batched: 4 new records (offsets 0..3)"
expect_sql "select block_number, event.value from batched order by \"offset\"" <<'CSV'
block_number,value
3,1000
5,7
6,42
8,43
CSV

# confirmations: the last 3 blocks are not scanned yet
legacy confirmed "" "$TRANSFER"
SILT_EVM_CONFIRMATIONS=3 ok pull confirmed
expect_sql "select block_number from confirmed order by \"offset\"" <<'CSV'
block_number
3
5
CSV

# ---- EvmLogs Source + Flow --------------------------------------------------------
cat >flow.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: flowlogs
  kind: Root
  metadata:
    - kind: SetVocab
      eventTimeColumn: event_time
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: chain
spec:
  ingress:
    kind: EvmLogs
    chainId: 31337
    nodeUrl: $NODE
    filter: topic0 = eth_event_selector('$TRANSFER') and address = X'${A#0x}'
  read:
    kind: Parquet
  preprocess:
    kind: Sql
    engine: duckdb
    query: select block_timestamp as event_time, block_number, log_index from input
  merge:
    kind: Append
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: chain-flow
spec:
  target: Dataset:flowlogs
  triggers:
    - kind: Schedule
      cron: "0 * * * *"
  tasks:
    - kind: Ingest
      source: Source:chain
YAML
ok add flow.yaml
ok pull flowlogs
expect_sql "select event_time, block_number, log_index from flowlogs order by \"offset\"" <<'CSV'
event_time,block_number,log_index
2023-11-14T22:13:50Z,3,0
2023-11-14T22:14:20Z,6,0
CSV

# ---- a node that refuses wide eth_getLogs ranges (as hosted providers do) ---------
# tests/evm_range_proxy.py passes every call to anvil but answers eth_getLogs
# over more than 3 blocks with -32005 "query exceeds max block range 3": the
# scan halves its range until the node accepts it, covers every block once,
# and gets the same logs as a direct scan.
proxy() { # PORT MAX LOG
    python3 "$SILT_SOURCE_DIR/tests/evm_range_proxy.py" "$1" "$NODE" "$2" "$3" &
    T_PIDS+=("$!")
    for _ in $(seq 100); do
        curl -sf -X POST -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}' "http://127.0.0.1:$1" >/dev/null && return 0
        sleep 0.1
    done
    fail "range proxy on port $1 did not start"
}
P1=$(free_port)
proxy "$P1" 3 "$T_DIR/ranges.log"
HEAD=$(curl -sf -X POST -H 'content-type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' "$NODE" | jget 'int(d["result"], 16)')
DIRECT=$NODE
NODE=http://127.0.0.1:$P1 legacy ranged "" "$TRANSFER"
ok pull ranged
assert_contains "$OUT" "ranged: 4 new records (offsets 0..3)"
assert_eq "$("$SILT" sql --format csv "select block_number, event.value from ranged order by \"offset\"")" \
    "$("$SILT" sql --format csv "select block_number, event.value from transfers order by \"offset\"")" "same logs as the direct scan"
# the ranges the node saw: at least one refusal, then accepted ranges of at
# most 3 blocks that cover 0..HEAD exactly once, in order
COVER=$(python3 - "$T_DIR/ranges.log" "$HEAD" <<'PY'
import sys
rs = [tuple(map(int, l.split("-"))) for l in open(sys.argv[1])]
refused = [r for r in rs if r[1] - r[0] + 1 > 3]
ok = [r for r in rs if r[1] - r[0] + 1 <= 3]
nxt = 0
for lo, hi in ok:
    if lo != nxt:
        print(f"gap or overlap at {lo}-{hi} (expected {nxt})"); sys.exit()
    nxt = hi + 1
print(f"refused {len(refused) > 0}, covered 0..{nxt - 1}")
PY
)
assert_eq "$COVER" "refused True, covered 0..$HEAD" "halved ranges cover every block once"
NODE=$DIRECT
# a node that refuses even one block: a clean error, nothing committed
P2=$(free_port)
proxy "$P2" 0 "$T_DIR/ranges0.log"
NODE=http://127.0.0.1:$P2 legacy refusing "" "$TRANSFER"
unchanged_after 1 "silt: pull 'refusing': eth_getLogs: the node refuses even block 0 alone as too large (node http://127.0.0.1:$P2)" pull refusing

# ---- faults: exit 1, one line, nothing changes ----------------------------------------
legacy wrongchain "" "$TRANSFER" 1
unchanged_after 1 "silt: pull 'wrongchain': the node at $NODE serves chain 31337, the source expects chainId 1" pull wrongchain
legacy badfilter "topic1 > X'00'" "$TRANSFER"
unchanged_after 1 "silt: pull 'badfilter': filter: binary columns compare only with = and <> at position 8" pull badfilter
legacy badsig "" "Transfer(address indexed from, uint257 value)"
unchanged_after 1 "silt: pull 'badsig': signature: uintN needs N in 8..256, a multiple of 8 at position 32" pull badsig
# a signature whose indexed layout does not fit the logs (same selector, 3 topics vs 2 indexed)
legacy wronglayout "" "Transfer(address indexed from, address to, uint256 value)"
unchanged_after_like 1 "topics, the signature has 1 indexed parameters (plus topic0)" pull wronglayout
# node down
kill "${T_PIDS[0]}"
wait "${T_PIDS[0]}" 2>/dev/null || true
unchanged_after_like 1 "pull 'transfers': eth_chainId: Couldn't connect to server (node $NODE)" pull transfers
done_tests
