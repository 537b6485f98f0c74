#!/usr/bin/env bash
# Several processes write to one dataset at once:
#  - `silt append`: every append either lands or fails with exactly the
#    conflict message (never a rule violation); no fork, no lost block;
#  - `silt ingest` (Append and Snapshot merges): a lost race is retried
#    against the new head, so every ingest lands, offsets stay dense and the
#    chain verifies (issue 8, item 21).
. "$(dirname "$0")/lib.sh"

PROCS=${SILT_CONC_PROCS:-4}
PER=${SILT_CONC_APPENDS:-40}
mkdir ws && cd ws && ok init
ok new shared

worker() {
    local w=$1 i ok=0 conflict=0 other=0
    for i in $(seq 1 "$PER"); do
        f="$T_DIR/w$w-$i.yaml"
        printf 'kind: SetInfo\ndescription: worker %s append %s\n' "$w" "$i" >"$f"
        if "$SILT" append shared "$f" >/dev/null 2>"$T_DIR/w$w.err"; then
            ok=$((ok + 1))
            echo "worker $w append $i" >>"$T_DIR/landed.$w"
        elif [ "$(cat "$T_DIR/w$w.err")" = "silt: $f: event 1 (SetInfo): dataset 'shared': concurrent update of shared: head moved; retry" ]; then
            conflict=$((conflict + 1))
        else
            other=$((other + 1))
            cat "$T_DIR/w$w.err" >>"$T_DIR/other-errors"
        fi
    done
    echo "$ok $conflict $other" >"$T_DIR/result.$w"
}
for w in $(seq 1 "$PROCS"); do worker "$w" & done
wait

landed=0 conflicts=0
for w in $(seq 1 "$PROCS"); do
    read -r o c x <"$T_DIR/result.$w"
    [ "$x" -eq 0 ] || fail "worker $w saw errors other than conflicts: $(cat "$T_DIR/other-errors")"
    landed=$((landed + o))
    conflicts=$((conflicts + c))
done
[ "$landed" -gt 0 ] || fail "no append landed"
ok verify shared
ok info shared --json
blocks=$(echo "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)["blocks"])')
assert_eq "$blocks" "$((landed + 1))" "blocks = seed + landed appends"
# every landed append is in the chain exactly once, in a single linear history
ok log shared --json
echo "$OUT" | python3 -c '
import json, sys
blocks = json.load(sys.stdin)
descs = [b["event"].get("description") for b in blocks if b["event"]["kind"] == "SetInfo"]
assert len(descs) == len(set(descs)), "duplicate block"
seqs = [b["sequenceNumber"] for b in blocks]
assert seqs == list(range(len(blocks) - 1, -1, -1)), "not linear"
print(len(descs))' >"$T_DIR/count" || fail "history check failed"
assert_eq "$(cat "$T_DIR/count")" "$landed" "landed appends in history"
for w in $(seq 1 "$PROCS"); do
    [ -f "$T_DIR/landed.$w" ] || continue
    while read -r line; do
        d="${line}"
        grep -qF -- "\"description\":\"$d\"" <<<"$OUT" || fail "landed append '$d' missing from the log"
    done <"$T_DIR/landed.$w"
done
pass
echo "concurrency: $PROCS processes x $PER appends: $landed landed, $conflicts conflicts"

# ---- parallel ingests: lost races are retried --------------------------------
# At most 5 writers (the attempts of one ingest) per round: each can lose only
# to the others of its round, so every one of them lands.
IPROCS=5
IROUNDS=${SILT_CONC_INGEST_ROUNDS:-3}
ROWS=4
add_ds pushed <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id STRING", "n BIGINT"]
      merge:
        kind: Append
EOF
add_ds snapped <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT", "w BIGINT"]
      merge:
        kind: Snapshot
        primaryKey: [id]
EOF
ingest_worker() { # NAME ROUND WORKER FILE
    if "$SILT" ingest "$1" "$4" >"$T_DIR/i-$1-$2-$3.out" 2>"$T_DIR/i-$1-$2-$3.err"; then
        echo ok >"$T_DIR/i-$1-$2-$3.rc"
    else
        echo failed >"$T_DIR/i-$1-$2-$3.rc"
    fi
}
for r in $(seq 1 "$IROUNDS"); do
    for w in $(seq 1 "$IPROCS"); do
        { echo "id,n"; for k in $(seq 1 $ROWS); do echo "r$r-w$w-$k,$k"; done; } >"$T_DIR/p-$r-$w.csv"
        # every snapshot: id 0 naming its worker, and two ids of its own
        printf 'id,w\n0,%s\n%s,%s\n%s,%s\n' "$w" "$((r * 100 + w * 10))" "$w" "$((r * 100 + w * 10 + 1))" "$w" \
            >"$T_DIR/s-$r-$w.csv"
    done
    for w in $(seq 1 "$IPROCS"); do ingest_worker pushed "$r" "$w" "$T_DIR/p-$r-$w.csv" & done
    for w in $(seq 1 "$IPROCS"); do ingest_worker snapped "$r" "$w" "$T_DIR/s-$r-$w.csv" & done
    wait
    for name in pushed snapped; do
        for w in $(seq 1 "$IPROCS"); do
            assert_eq "$(cat "$T_DIR/i-$name-$r-$w.rc")" "ok" \
                "round $r: ingest of worker $w into $name ($(cat "$T_DIR/i-$name-$r-$w.err"))"
        done
    done
done
total=$((IPROCS * IROUNDS * ROWS))
ok verify pushed
assert_eq "$OUT" "pushed: ok ($((3 + IPROCS * IROUNDS)) blocks)" "parallel Append ingests verify"
expect_sql 'SELECT count(*) AS n, count(DISTINCT id) AS ids, min("offset") AS lo, max("offset") AS hi FROM pushed' "dense offsets" <<EOF
n,ids,lo,hi
$total,$total,0,$((total - 1))
EOF
# one AddData per ingest, each continuing the offsets of the one before
"$SILT" log pushed --json | python3 -c '
import json, sys
adds = [b["event"] for b in json.load(sys.stdin) if b["event"]["kind"] == "AddData"][::-1]
nxt = 0
for e in adds:
    iv = e["newData"]["offsetInterval"]
    assert iv["start"] == nxt, (iv, nxt)
    assert e.get("prevOffset") == (nxt - 1 if nxt else None), e
    nxt = iv["end"] + 1
print(len(adds), nxt)' >"$T_DIR/adds" || fail "offsets of the parallel ingests are not dense"
assert_eq "$(cat "$T_DIR/adds")" "$((IPROCS * IROUNDS)) $total" "AddData blocks and records"
# the rows of each file are contiguous and in file order
expect_sql "SELECT count(*) AS bad FROM (SELECT split_part(id, '-', 1) || split_part(id, '-', 2) AS f, max(\"offset\") - min(\"offset\") AS span, bool_and(n = 1 + \"offset\" - (SELECT min(\"offset\") FROM pushed p WHERE split_part(p.id, '-', 1) || split_part(p.id, '-', 2) = split_part(pushed.id, '-', 1) || split_part(pushed.id, '-', 2))) AS ordered FROM pushed GROUP BY 1) WHERE span <> $((ROWS - 1)) OR NOT ordered" "files stay whole" <<'EOF'
bad
0
EOF
ok verify snapped
# the current state is one worker's snapshot: id 0 and that worker's two ids
expect_sql 'SELECT count(*) AS n, count(DISTINCT w) AS workers FROM "snapped:current"' "Snapshot current = the last snapshot" <<'EOF'
n,workers
3,1
EOF
echo "concurrency: $IROUNDS rounds x $IPROCS parallel ingests into an Append and a Snapshot dataset: all landed"
done_tests
