#!/usr/bin/env bash
# test_txn_faults.sh — concurrency and crashes of files transactions:
#  - many processes uploading to one branch: exactly one OPEN transaction at
#    a time, every successful upload is in the view, the chain is linear;
#  - SIGKILL during put / commit / abort at random moments, repeated:
#    `silt verify --all` passes, every committed transaction is intact and
#    an interrupted commit is fully visible or not at all.
. "$(dirname "$0")/lib.sh"

ok init
ok new files1 --files
N=${SILT_TXN_PROCS:-8}
ROUNDS=${SILT_TXN_ROUNDS:-3}
# --- concurrent uploads ---------------------------------------------------
for r in $(seq 1 "$ROUNDS"); do
    pids=()
    for p in $(seq 1 "$N"); do
        printf 'r%sp%s' "$r" "$p" >"f-$r-$p"
        ( for try in $(seq 1 200); do
              if "$SILT" upload files1 "f-$r-$p" --type append >"rid-$r-$p" 2>"err-$r-$p"; then exit 0; fi
              grep -q "already has an open transaction" "err-$r-$p" || exit 1
              sleep 0.0$((RANDOM % 9 + 1))
          done; exit 1 ) &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || fail "an upload failed: $(cat err-* | sort -u | head -3)"; done
done
EXPECTED=$((N * ROUNDS))
assert_eq "$("$SILT" files files1 | wc -l)" "$EXPECTED" "every upload is in the view"
assert_eq "$("$SILT" txn list files1 | grep -c COMMITTED)" "$EXPECTED" "every transaction committed"
for f in rid-*; do
    rid=$(cat "$f"); name=${f#rid-}
    assert_eq "$("$SILT" files files1 | awk -F'\t' -v p="f-$name" '$1 == p {print $4}')" "$rid" "file of $rid"
done
assert_eq "$("$SILT" log files1 | grep -c AddData)" "$EXPECTED" "one AddData per transaction, no fork"
ok verify --all

# --- SIGKILL at random moments --------------------------------------------
KILLS=${SILT_TXN_KILLS:-12}
for k in $(seq 1 "$KILLS"); do
    printf 'kill-%s' "$k" >"k-$k"
    # leave no OPEN transaction behind from a previous round
    for rid in $("$SILT" txn list files1 | awk '$3 == "OPEN" {print $1}'); do "$SILT" txn abort files1 "$rid" >/dev/null 2>&1 || true; done
    rid=$("$SILT" txn start files1 --type update)
    case $((k % 3)) in
    0) "$SILT" txn put files1 "$rid" "k-$k" & ;;
    1) "$SILT" txn put files1 "$rid" "k-$k" >/dev/null; "$SILT" txn commit files1 "$rid" >/dev/null 2>&1 & ;;
    2) "$SILT" txn put files1 "$rid" "k-$k" >/dev/null; "$SILT" txn abort files1 "$rid" >/dev/null 2>&1 & ;;
    esac
    pid=$!
    sleep "0.0$((RANDOM % 10))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    ok verify --all
    # the interrupted transaction: visible exactly when it is COMMITTED
    status=$("$SILT" txn list files1 | awk -v r="$rid" '$1 == r {print $3}')
    inview=$("$SILT" files files1 | awk -F'\t' -v r="$rid" '$4 == r' | wc -l)
    case "$status" in
    COMMITTED) assert_eq "$inview" "1" "committed $rid visible" ;;
    OPEN|ABORTED) assert_eq "$inview" "0" "$status $rid invisible" ;;
    *) fail "transaction $rid has status '$status'" ;;
    esac
    # every earlier committed transaction is intact
    assert_eq "$("$SILT" files files1 --range "$(cat rid-1-1)..$(cat rid-1-1)" | cut -f1)" "f-1-1"
done
# at most one OPEN transaction survived the kills; once aborted, the branch is free
[ "$("$SILT" txn list files1 | awk '$3 == "OPEN"' | wc -l)" -le 1 ] || fail "more than one OPEN transaction"
for rid in $("$SILT" txn list files1 | awk '$3 == "OPEN" {print $1}'); do ok txn abort files1 "$rid"; done
ok txn start files1 --type update
ok txn abort files1 "$OUT"
ok verify --all
done_tests
