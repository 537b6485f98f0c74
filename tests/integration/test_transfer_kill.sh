#!/usr/bin/env bash
# test_transfer_kill.sh — `silt push` and `silt pull` killed with SIGKILL at a
# random moment (docs/remote.md, "Failures"): TRANSFER_KILLS (default 12)
# rounds per direction, alternating a file:// repository and a silt node,
# and a first transfer (clone / first push) with an incremental one (the
# target holds the first half of the chain). The dataset has four slices of
# ~1 MB, so that kills land while objects are being copied; the delay is a
# random fraction of a measured uninterrupted transfer (seed printed).
# After every kill:
#  - no partial dataset is visible: the target's refs/head is absent, the
#    old head or the new one, and an independent walker
#    (tests/odf_walker.py) accepts what it points at, and `silt verify`
#    too where the target is a workspace (a node, a local dataset);
#  - a re-run resumes: its --json counts say that the needed objects the
#    target already had were skipped ("skipped") and only the others were
#    transferred ("objects"); against a node, the node's request log shows
#    that none of the objects present before the re-run was sent again;
#  - the final state verifies and equals the source (head, blocks, data).
source "$(dirname "$0")/lib.sh"

ROUNDS=${TRANSFER_KILLS:-12}
SEED=${TRANSFER_KILL_SEED:-$$}
RANDOM=$SEED
echo "$T_NAME: seed $SEED, $ROUNDS rounds per direction"
WALK="python3 $SILT_SOURCE_DIR/tests/odf_walker.py"
export ADMIN=${ADMIN:-admin-secret}
cat >src.yaml <<'Y'
kind: AddPushSource
sourceName: default
read:
  kind: Csv
  header: true
  ddlSchema: ["id BIGINT", "s STRING"]
merge:
  kind: Append
Y
# incompressible rows: ~1 MB of Parquet per slice
python3 - <<'P'
import os
for k in range(4):
    r = os.urandom(12500 * 40)
    with open(f"d{k}.csv", "w") as f:
        f.write("id,s\n")
        for i in range(12500):
            f.write(f"{k * 100000 + i},{r[i * 40:(i + 1) * 40].hex()}\n")
P

# names of the objects in DIR/data (no temp files)
objs() { ls "$1/data" 2>/dev/null | grep '^f1620' || true; }
# listing of blocks and data of an ODF dataset directory
listing() { (cd "$1" && ls blocks data | grep -v '^\.tmp-'); }
# ds_dir WS NAME: the directory of dataset NAME in workspace WS ("" if none)
ds_dir() {
    local j
    j=$(cd "$1" && "$SILT" --json info "$2" 2>/dev/null) || return 0
    echo "$1/.silt/datasets/$(printf '%s' "$j" | jget 'd["id"]' | sed 's/^did:odf://')"
}

# ---- the source: a at HB (2 slices), then HF (4 slices) ---------------------
mkdir a base full node0 wbase
cd a
ok init
ok new big
ok append big ../src.yaml
ok ingest big ../d0.csv
ok ingest big ../d1.csv
HB=$(head_of big)
ok push big "file://$T_DIR/base/big"
SRC=$(ds_dir "$T_DIR/a" big)
NEED_INC=$(objs "$SRC")
cd ../node0
ok init
serve_start
cd ../a
SILT_TOKEN=$ADMIN ok push big "$BASE/odf/big"
serve_stop
cd ../wbase
ok init
ok pull "file://$T_DIR/base/big"
cd ../a
ok ingest big ../d2.csv
ok ingest big ../d3.csv
HF=$(head_of big)
NEED_ALL=$(objs "$SRC")
NEED_INC=$(comm -13 <(printf '%s\n' "$NEED_INC") <(printf '%s\n' "$NEED_ALL"))
WANT_LIST=$(listing "$SRC")
WANT_WALK=$($WALK "$SRC")
t0=$(date +%s%N)
ok push big "file://$T_DIR/full/big"
T_MS=$((($(date +%s%N) - t0) / 1000000))
echo "$T_NAME: an uninterrupted transfer takes ${T_MS} ms"
cp -r ../node0 ../nodefull
cd ..

KILLED_PUSH=0 KILLED_PULL=0 PARTIAL=0

# killed CMD...: runs silt in the background and SIGKILLs it after a random
# share of T_MS; KILLED=1 when it was still running then.
killed() {
    local d=$((RANDOM % (T_MS + 20) + 5))
    "$SILT" "$@" >/dev/null 2>&1 &
    local pid=$!
    sleep "$(printf '0.%03d' "$d")"
    KILLED=0
    if kill -KILL "$pid" 2>/dev/null; then KILLED=1; fi
    wait "$pid" 2>/dev/null || true
}

# visible_ok WHAT DIR OLD: DIR's refs/head is absent, OLD or HF, and the
# walker accepts it. Sets HEAD_NOW.
visible_ok() {
    local what=$1 dir=$2 old=$3 w
    HEAD_NOW=""
    [ -f "$dir/refs/head" ] && HEAD_NOW=$(cat "$dir/refs/head")
    case "$HEAD_NOW" in
    "" | "$old" | "$HF") pass ;;
    *) fail "$what: refs/head is $HEAD_NOW, neither the old head nor the new one" ;;
    esac
    if [ -n "$HEAD_NOW" ]; then
        w=$($WALK "$dir" 2>&1) && pass || fail "$what: walker after the kill: $w"
    fi
}

# present NEED DIRS...: how many of the objects NEED are in one of DIRS/data
present() {
    local need=$1 n=0 h d
    shift
    for h in $need; do
        for d in "$@"; do
            if [ -e "$d/data/$h" ]; then
                n=$((n + 1))
                break
            fi
        done
    done
    echo "$n"
}

# rerun_ok WHAT NEED HAVE HEAD JSON: the re-run's counts.
rerun_ok() {
    local what=$1 need=$2 have=$3 head=$4 j=$5 total
    total=$(printf '%s\n' $need | wc -l)
    if [ "$head" = "$HF" ]; then
        assert_eq "$(printf '%s' "$j" | jget 'd["objects"]')" "0" "$what: nothing to transfer after a completed kill"
    else
        assert_eq "$(printf '%s' "$j" | jget '[d["skipped"], d["objects"]]')" "[$have,$((total - have))]" \
            "$what: re-run skips the $have objects already there"
    fi
    [ "$have" -gt 0 ] && [ "$head" != "$HF" ] && PARTIAL=$((PARTIAL + 1))
    return 0
}

# final_ok WHAT DIR: DIR equals the source
final_ok() {
    assert_eq "$(cat "$2/refs/head")" "$HF" "$1: final head"
    assert_eq "$(listing "$2")" "$WANT_LIST" "$1: final blocks and data"
    assert_eq "$($WALK "$2" 2>&1)" "$WANT_WALK" "$1: walker on the final state"
}

# sent_again LOG FROM METHOD HAVE_DIRS...: objects of the log lines after line
# FROM (requests METHOD …/data/<h> answered 2xx, completed) that were in one
# of HAVE_DIRS before the re-run (must be none)
sent_again() {
    local log=$1 from=$2 m=$3 h
    shift 3
    tail -n +"$((from + 1))" "$log" | awk -v m="$m" '$1 == m && $3 ~ /^2/ && $0 !~ /aborted/ {print $2}' |
        sed -n 's|.*/data/||p' | while read -r h; do
        for d in "$@"; do [ -e "$d/data/$h" ] && echo "$h"; done
    done
}

# ---- push rounds ------------------------------------------------------------------
for r in $(seq "$ROUNDS"); do
    inc=$(((r / 2) % 2))
    if [ $((r % 2)) -eq 1 ]; then # file:// repository
        R=$T_DIR/prepo.$r
        mkdir -p "$R"
        old=""
        need=$NEED_ALL
        [ $inc -eq 1 ] && cp -r base/big "$R/big" && old=$HB && need=$NEED_INC
        cd a
        killed push big "file://$R/big"
        KILLED_PUSH=$((KILLED_PUSH + KILLED))
        visible_ok "push $r (file)" "$R/big" "$old"
        have=$(present "$need" "$R/big")
        run --json push big "file://$R/big"
        assert_eq "$RC" "0" "push $r (file): re-run ($ERR)"
        rerun_ok "push $r (file)" "$need" "$have" "$HEAD_NOW" "$OUT"
        final_ok "push $r (file)" "$R/big"
        cd ..
        rm -rf "$R"
    else # a silt node
        N=$T_DIR/pnode.$r
        old=""
        need=$NEED_ALL
        if [ $inc -eq 1 ]; then cp -r node0 "$N" && old=$HB && need=$NEED_INC; else mkdir "$N" && (cd "$N" && "$SILT" init >/dev/null); fi
        cd "$N"
        serve_start
        cd ../a
        SILT_TOKEN=$ADMIN killed push big "$BASE/odf/big"
        KILLED_PUSH=$((KILLED_PUSH + KILLED))
        D=$(ds_dir "$N" big)
        if [ -n "$D" ]; then
            visible_ok "push $r (node)" "$D" "$old"
            (cd "$N" && "$SILT" verify big >/dev/null 2>&1) && pass || fail "push $r (node): silt verify after the kill"
        else
            HEAD_NOW=""
            [ -z "$old" ] && pass || fail "push $r (node): the node lost its dataset"
        fi
        have=$(present "$need" "$D" "$N/.silt/tmp/incoming-big")
        mkdir -p "$T_DIR/had"
        rm -rf "$T_DIR/had/data" && mkdir "$T_DIR/had/data"
        for h in $need; do
            [ -e "$D/data/$h" ] || [ -e "$N/.silt/tmp/incoming-big/data/$h" ] && : >"$T_DIR/had/data/$h"
        done
        from=$(wc -l <"$SERVE_LOG")
        SILT_TOKEN=$ADMIN run --json push big "$BASE/odf/big"
        assert_eq "$RC" "0" "push $r (node): re-run ($ERR)"
        rerun_ok "push $r (node)" "$need" "$have" "$HEAD_NOW" "$OUT"
        cd "$N"
        serve_stop
        assert_eq "$(sent_again "$SERVE_LOG" "$from" PUT "$T_DIR/had")" "" "push $r (node): no verified object sent again"
        ok verify big
        final_ok "push $r (node)" "$(ds_dir "$N" big)"
        cd ..
        rm -rf "$N"
    fi
done

# ---- pull rounds ------------------------------------------------------------------
cd nodefull
serve_start
cd ../a
SILT_TOKEN=$ADMIN ok push big "$BASE/odf/big"
cd ..
for r in $(seq "$ROUNDS"); do
    inc=$(((r / 2) % 2))
    W=$T_DIR/pull.$r
    if [ $inc -eq 1 ]; then cp -r wbase "$W" && old=$HB && need=$NEED_INC; else mkdir "$W" && (cd "$W" && "$SILT" init >/dev/null) && old="" && need=$NEED_ALL; fi
    if [ $((r % 2)) -eq 1 ]; then src="file://$T_DIR/full/big" kind=file; else src="$BASE/odf/big" kind=node; fi
    cd "$W"
    SILT_TOKEN=$ADMIN killed pull "$src"
    KILLED_PULL=$((KILLED_PULL + KILLED))
    D=$(ds_dir "$W" big)
    if [ -n "$D" ]; then
        visible_ok "pull $r ($kind)" "$D" "$old"
        ok verify big
    else
        [ -z "$old" ] && pass || fail "pull $r ($kind): the local dataset is gone"
        HEAD_NOW=""
        [ -f .silt/tmp/clone-big/refs/head ] && HEAD_NOW=$(cat .silt/tmp/clone-big/refs/head)
    fi
    have=$(present "$need" "$D" .silt/tmp/clone-big)
    rm -rf "$T_DIR/had" && mkdir -p "$T_DIR/had/data"
    for h in $need; do
        [ -e "$D/data/$h" ] || [ -e ".silt/tmp/clone-big/data/$h" ] && : >"$T_DIR/had/data/$h"
    done
    from=$(wc -l <"$SERVE_LOG")
    SILT_TOKEN=$ADMIN run --json pull "$src"
    assert_eq "$RC" "0" "pull $r ($kind): re-run ($ERR)"
    rerun_ok "pull $r ($kind)" "$need" "$have" "$HEAD_NOW" "$(printf '%s' "$OUT" | jget 'd[0]')"
    TOKEN=none http GET /odf/info # a last request: the log has the re-run's lines
    if [ $kind = node ]; then
        assert_eq "$(sent_again "$SERVE_LOG" "$from" GET "$T_DIR/had")" "" "pull $r (node): no verified object fetched again"
    fi
    ok verify big
    final_ok "pull $r ($kind)" "$(ds_dir "$W" big)"
    cd ..
    rm -rf "$W"
done
cd nodefull
serve_stop
cd ..
echo "$T_NAME: killed while running: $KILLED_PUSH/$ROUNDS pushes, $KILLED_PULL/$ROUNDS pulls; $PARTIAL re-runs resumed a partial transfer"
[ "$KILLED_PUSH" -gt 0 ] && [ "$KILLED_PULL" -gt 0 ] && pass || fail "no kill landed while a transfer was running"
done_tests
