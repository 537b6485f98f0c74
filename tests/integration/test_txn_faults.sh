#!/usr/bin/env bash
# test_txn_faults.sh — concurrency and crashes of files transactions:
#  - many processes uploading to one branch: exactly one OPEN transaction at
#    a time, every successful upload is in the view, the chain is linear;
#  - SIGKILL during put / commit / abort at random moments, repeated:
#    `silt verify --all` passes, every committed transaction is intact and
#    an interrupted commit is fully visible or not at all;
#  - an OPEN transaction whose owning process is gone (a planted record) is
#    reported by `txn list`, aborted by `txn recover` and by the next upload;
#    one started with `txn start` (owned by the user) never is;
#  - SIGKILL of `silt upload` at random moments, repeated: the next upload
#    to the branch succeeds without any manual abort, `verify` passes, and
#    no OPEN transaction is left behind.
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
# (transactions started with `txn start` belong to the user: never auto-aborted)
[ "$("$SILT" txn list files1 | awk '$3 == "OPEN"' | wc -l)" -le 1 ] || fail "more than one OPEN transaction"
for rid in $("$SILT" txn list files1 | awk '$3 == "OPEN" {print $1}'); do ok txn abort files1 "$rid"; done
ok txn start files1 --type update
ok txn abort files1 "$OUT"
ok verify --all

# --- abandoned transactions: a dead owner, planted --------------------------
ok new owned --files
printf 'o1' >o1
ok upload owned o1
OWNED_DIR="$T_DIR/.silt/datasets/$(info owned 'd["id"]' | sed 's/^did:odf://')"
HOST=$(python3 -c 'import socket; print(socket.gethostname())')
# plant RID OWNER_PID: an OPEN transaction of master owned by OWNER_PID on this host
plant() {
    python3 - "$OWNED_DIR/txn" "$1" "$2" "$HOST" <<'PY'
import json, sys
d, rid, pid, host = sys.argv[1:]
boot = open("/proc/sys/kernel/random/boot_id").read().strip()
rec = {"rid": rid, "type": "UPDATE", "branch": "master", "status": "OPEN", "created": "2024-01-01T00:00:00.000Z",
       "closed": "", "block": "", "owner": {"pid": int(pid), "start": 12345, "host": host, "boot": boot}}
open(f"{d}/{rid}", "w").write(json.dumps(rec))
open(f"{d}/open-master", "w").write(rid)
PY
}
DEAD=$(sh -c 'echo $$') # a process that has exited
R1=ri.silt.main.transaction.00000000-0000-4000-8000-0000000000a1
R2=ri.silt.main.transaction.00000000-0000-4000-8000-0000000000a2
plant "$R1" "$DEAD"
ok txn list owned
assert_eq "$(printf '%s\n' "$OUT" | grep "^$R1 ")" "$R1  UPDATE    OPEN       2024-01-01T00:00:00.000Z  -  (abandoned: process $DEAD on host $HOST is gone)" "txn list reports the abandoned transaction"
ok --json txn list owned
assert_eq "$(printf '%s' "$OUT" | jget '[[t["status"], t["abandoned"], t["owner"]["pid"], t["owner"]["host"]] for t in d if t["rid"] == "'"$R1"'"][0]')" "[\"OPEN\",true,$DEAD,\"$HOST\"]" "txn list --json"
assert_eq "$(printf '%s' "$OUT" | jget '[t["abandoned"] for t in d if t["rid"] != "'"$R1"'"]')" "[false]" "a committed upload is not abandoned"
ok txn recover owned
assert_eq "$OUT" "aborted $R1 (branch master, abandoned: process $DEAD on host $HOST is gone)" "txn recover"
ok txn recover owned
assert_eq "$OUT" "owned: no abandoned transaction" "txn recover again"
ok txn list owned
assert_eq "$(printf '%s\n' "$OUT" | grep "^$R1 " | awk '{print $3}')" "ABORTED" "recovered = ABORTED"
assert_contains "$OUT" "(abandoned: process $DEAD on host $HOST is gone)"
# the next upload aborts an abandoned transaction of its branch by itself
plant "$R2" "$DEAD"
printf 'o2' >o2
ok upload owned o2
ok --json txn list owned
assert_eq "$(printf '%s' "$OUT" | jget '[[t["status"], t.get("reason", "")] for t in d if t["rid"] == "'"$R2"'"][0]')" \
    "[\"ABORTED\",\"abandoned: process $DEAD on host $HOST is gone\"]" "upload aborted the abandoned transaction"
# a transaction the user started has no owner: recover leaves it alone
ok txn start owned --type update; USER_RID=$OUT
ok --json txn list owned
assert_eq "$(printf '%s' "$OUT" | jget '[t.get("owner"), t["abandoned"]] if (t := d[-1]) else 0')" "[null,false]" "txn start: no owner"
ok txn recover owned
assert_eq "$OUT" "owned: no abandoned transaction" "a user's OPEN transaction is not abandoned"
unchanged_after 1 "silt: branch master of owned already has an open transaction $USER_RID" upload owned o2
ok txn abort owned "$USER_RID"
ok verify owned

# --- SIGKILL of `silt upload` at random moments -----------------------------
UKILLS=${SILT_UPLOAD_KILLS:-40}
ok new upl --files
mkdir -p up
reaped=0
for k in $(seq 1 "$UKILLS"); do
    mkdir -p "up/$k"
    for j in 1 2 3; do head -c $((RANDOM * 8)) /dev/urandom >"up/$k/f$j"; done
    "$SILT" upload upl "up/$k/f1" "up/$k/f2" "up/$k/f3" >/dev/null 2>&1 &
    pid=$!
    sleep "0.$((RANDOM % 3))$((RANDOM % 10))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    open_before=$("$SILT" txn list upl | awk '$3 == "OPEN"' | wc -l)
    ok verify upl
    # the next upload to the branch succeeds without a manual abort
    printf 'probe-%s' "$k" >"probe-$k"
    ok upload upl "probe-$k"
    probe=$OUT
    [ "$open_before" -eq 0 ] || reaped=$((reaped + 1))
    assert_eq "$("$SILT" txn list upl | awk '$3 == "OPEN"' | wc -l)" "0" "round $k: no OPEN transaction left"
    assert_eq "$("$SILT" files upl | awk -F'\t' -v r="$probe" '$4 == r {print $1}')" "probe-$k" "round $k: probe committed"
    # the killed upload: all of its files visible or none
    n=$("$SILT" files upl | cut -f1 | grep -c "^up/$k/" || true)
    case "$n" in 0|3) pass ;; *) fail "round $k: $n of 3 files of a killed upload are visible" ;; esac
done
ok verify --all
assert_eq "$("$SILT" txn list upl | awk '$3 == "OPEN"' | wc -l)" "0" "no OPEN transaction after $UKILLS kills"
echo "upload kills: $UKILLS, abandoned transactions aborted by the next upload: $reaped"
done_tests
