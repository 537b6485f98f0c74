#!/usr/bin/env bash
# A process killed with SIGKILL at any moment during repeated appends, or
# during concurrent ingests (possibly inside the retry of a lost race),
# leaves a chain that `silt verify` accepts, and the next write works.
. "$(dirname "$0")/lib.sh"

ROUNDS=${SILT_CRASH_ROUNDS:-40}
mkdir ws && cd ws && ok init
ok new crashy

# an appender that never stops: a new SetInfo per iteration
cat >"$T_DIR/appender.sh" <<'SH'
#!/usr/bin/env bash
i=0
while :; do
    i=$((i + 1))
    f="$1/ev-$$-$i.yaml"
    printf 'kind: SetInfo\ndescription: pid %s step %s\n' "$$" "$i" >"$f"
    "$SILT" append crashy "$f" >/dev/null 2>&1 || true
    rm -f "$f"
done
SH
chmod +x "$T_DIR/appender.sh"

for round in $(seq 1 "$ROUNDS"); do
    SILT="$SILT" bash "$T_DIR/appender.sh" "$T_DIR" &
    pid=$!
    # kill at a random moment between 0 and ~150 ms
    sleep "0.0$((RANDOM % 15))"
    pkill -KILL -P "$pid" 2>/dev/null || true
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    run verify crashy
    [ "$RC" -eq 0 ] || fail "round $round: chain invalid after SIGKILL: $OUT $ERR"
done
pass
n1=$(SILT_WORKSPACE=. "$SILT" info crashy --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["blocks"])')
printf 'kind: SetInfo\ndescription: after the crashes\n' >"$T_DIR/final.yaml"
ok append crashy "$T_DIR/final.yaml"
n2=$(SILT_WORKSPACE=. "$SILT" info crashy --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["blocks"])')
assert_eq "$n2" "$((n1 + 1))" "append after crashes"
# no temp files are visible as objects
ok verify crashy
echo "crash test: $ROUNDS kills, chain of $n2 blocks"

# two ingesters racing (so kills also land inside retries of lost races)
add_ds ingested <<'EOF'
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id STRING"]
      merge:
        kind: Append
EOF
cat >"$T_DIR/ingester.sh" <<'SH'
#!/usr/bin/env bash
i=0
while :; do
    i=$((i + 1))
    f="$1/in-$$-$i.csv"
    printf 'id\n%s-%s-a\n%s-%s-b\n' "$$" "$i" "$$" "$i" >"$f"
    "$SILT" ingest ingested "$f" >/dev/null 2>&1 || true
    rm -f "$f"
done
SH
chmod +x "$T_DIR/ingester.sh"
IROUNDS=$((ROUNDS / 4 > 0 ? ROUNDS / 4 : 1))
for round in $(seq 1 "$IROUNDS"); do
    SILT="$SILT" bash "$T_DIR/ingester.sh" "$T_DIR" 2>/dev/null &
    p1=$!
    SILT="$SILT" bash "$T_DIR/ingester.sh" "$T_DIR" 2>/dev/null &
    p2=$!
    sleep "0.$((RANDOM % 6))$((RANDOM % 10))"
    for p in $p1 $p2; do
        pkill -KILL -P "$p" 2>/dev/null || true
        kill -KILL "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    run verify ingested
    [ "$RC" -eq 0 ] || fail "ingest round $round: chain invalid after SIGKILL: $OUT $ERR"
done
pass
printf 'id\nlast\n' >"$T_DIR/last.csv"
ok ingest ingested "$T_DIR/last.csv"
run sql 'SELECT count(*) = max("offset") + 1 AND count(*) = count(DISTINCT id) FROM ingested' --format csv
assert_eq "$(printf '%s\n' "$OUT" | tail -1)" "true" "dense offsets after killed ingests"
ok verify ingested
echo "crash test: $IROUNDS rounds of killed concurrent ingests, $(info ingested 'd["records"]') records"
done_tests
