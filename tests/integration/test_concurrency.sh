#!/usr/bin/env bash
# Several processes append to one dataset at once: every append either lands
# or fails with a conflict error; no fork, no lost block.
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
        elif grep -q "concurrent update" "$T_DIR/w$w.err"; then
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
        grep -qF -- "\"description\": \"$d\"" <<<"$OUT" || fail "landed append '$d' missing from the log"
    done <"$T_DIR/landed.$w"
done
pass
echo "concurrency: $PROCS processes x $PER appends: $landed landed, $conflicts conflicts"
done_tests
