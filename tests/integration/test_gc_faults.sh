#!/usr/bin/env bash
# test_gc_faults.sh — SIGKILL of `silt gc` at random moments, repeated:
# afterwards `silt verify --all` passes and the retained views are intact.
source "$(dirname "$0")/lib.sh"

ok init
ok new f --files
ok retention set f --keep-days 0
for i in $(seq 1 12); do
    printf 'v%s' "$i" >"x$i.txt"
    printf 'w%s' "$i" >"y$i.txt"
    ok upload f "x$i.txt" --as a.txt
    ok upload f "y$i.txt" --as "b$((i % 3)).txt"
done
ok branch create f side
ok files f
EXPECT=$OUT
for round in $(seq 1 10); do
    ok upload f "x$round.txt" --as "r$round.txt" --type update
    EXPECT_MASTER=$(SILT_GC_GRACE_SECONDS=0 "$SILT" files f)
    SILT_GC_GRACE_SECONDS=0 "$SILT" gc f >/dev/null 2>&1 &
    pid=$!
    sleep "0.0$((RANDOM % 9))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    ok verify --all
    ok files f
    assert_eq "$OUT" "$EXPECT_MASTER" "master view after killed gc (round $round)"
    for p in $(printf '%s\n' "$OUT" | cut -f1); do ok cat f "$p"; done
    ok files f@side
    assert_eq "$OUT" "$EXPECT" "side view after killed gc (round $round)"
    for p in $(printf '%s\n' "$OUT" | cut -f1); do ok cat f@side "$p"; done
done
SILT_GC_GRACE_SECONDS=0 ok gc f
ok verify --all
done_tests
