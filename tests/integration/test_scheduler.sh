#!/usr/bin/env bash
# test_scheduler.sh — the flow scheduler (src/ops/scheduler.c) through
# `silt flows set/run/history` and `silt serve`:
#  - `flows set NAME --cron EXPR|--none` on a legacy FilesGlob source: exact
#    output, `silt flows` listing, a bad cron (exit 1, one line, workspace
#    unchanged), a dataset without a polling source, usage errors;
#  - the fake clock (SILT_SCHEDULER_CLOCK_FILE) and `flows run --once`, one
#    tick per call: a flow's schedule starts when it is first seen, it runs
#    at its exact slots and never twice for one slot; slots missed while no
#    scheduler ran give ONE run ("missed");
#  - a failing source retried after 30 s, 60 s, 120 s (and recorded with its
#    attempt and error) until it succeeds;
#  - a Flow resource (Url source on nginx, targetRecordsPerSlice 2);
#  - the pull lock: a scheduled run while a CLI `silt pull` runs is "busy"
#    (nothing ingested twice), and a CLI pull waits for a scheduled run;
#  - `flows run` without --once: loops on the fake clock, stops on SIGTERM
#    with exit 0;
#  - `flows history [NAME] [--json]`: exact rows, newest first;
#  - real time: `silt serve` runs a 6-field (seconds) schedule within
#    seconds, and a SIGTERM during a run aborts it cleanly (whole AddData
#    blocks only, exit 0 within the 5 s budget).
source "$(dirname "$0")/lib.sh"

command -v nginx >/dev/null || { echo "$T_NAME: nginx not installed (scripts/bootstrap.sh)" >&2; exit 1; }

CLOCK="$T_DIR/clock"
export SILT_SCHEDULER_CLOCK_FILE="$CLOCK"
at() { printf '%s\n' "$1" >"$CLOCK"; }

# glob_ds NAME DIR [PIPE]: a root dataset with a legacy FilesGlob source over
# DIR/NAME-*.csv (Ledger by id; event time from the file name), with an
# optional Pipe prepare command (a YAML flow sequence).
glob_ds() {
    local name=$1 dir=$2 pipe=${3:-}
    mkdir -p "$dir"
    {
        cat <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: $name
  kind: Root
  metadata:
    - kind: SetPollingSource
      fetch:
        kind: FilesGlob
        path: $dir/$name-*.csv
        eventTime:
          kind: FromPath
          pattern: '$name-(\d+-\d+-\d+)\.csv'
          timestampFormat: '%Y-%m-%d'
YAML
        if [ -n "$pipe" ]; then
            printf '      prepare:\n        - kind: Pipe\n          command: %s\n' "$pipe"
        fi
        cat <<YAML
      read:
        kind: Csv
        header: true
        ddlSchema: [id BIGINT, city STRING]
      merge:
        kind: Ledger
        primaryKey: [id]
YAML
    } >"$T_DIR/$name.yaml"
    ok add "$T_DIR/$name.yaml"
}

ok init
DROP="$T_DIR/drop"
glob_ds dumps "$DROP"

# ---- flows set -----------------------------------------------------------------
unchanged_after 1 "silt: invalid cron expression '61 * * * *': minute: value 61 out of range 0-59" \
    flows set dumps --cron '61 * * * *'
unchanged_after 1 "silt: invalid cron expression '* * *': expected 5 fields (minute hour day-of-month month day-of-week) or 6 (second first), got 3" \
    flows set dumps --cron '* * *'
unchanged_after 1 "silt: dataset 'nope' not found" flows set nope --cron '* * * * *'
unchanged_after 1 "silt: flows set: dataset 'dumps' has no schedule" flows set dumps --none
fails 2 "silt: flows set needs NAME and --cron EXPR or --none (see 'silt help')" flows set dumps
fails 2 "silt: flows set needs NAME and --cron EXPR or --none (see 'silt help')" flows set dumps --cron '* * * * *' --none
fails 2 "silt: flows: unknown subcommand 'bogus' (set, run, history) (see 'silt help')" flows bogus
ok new pushed --push-source csv
unchanged_after 1 "silt: flows set: dataset 'pushed' has no polling source (SetPollingSource) to schedule" \
    flows set pushed --cron '* * * * *'
ok flows set dumps --cron '*/10 * * * *'
assert_eq "$OUT" "dumps: schedule set to '*/10 * * * *'"
SILT_FAKE_SYSTEM_TIME=2024-05-01T10:07:00Z ok flows
assert_eq "$OUT" "NAME                     TARGET                   SOURCE                   NEXT RUN             SCHEDULE
dumps                    dumps                    SetPollingSource         2024-05-01T10:10:00Z */10 * * * *" "flows lists the schedule"
SILT_FAKE_SYSTEM_TIME=2024-05-01T10:07:00Z ok --json flows
assert_eq "$OUT" '[{"name":"dumps","target":"dumps","schedules":["*/10 * * * *"],"nextRun":"2024-05-01T10:10:00Z","source":null,"targetRecordsPerSlice":null}]' "flows --json"
ok flows history
assert_eq "$OUT" "" "no history yet"

# ---- exact slots, none twice ----------------------------------------------------------
at 2024-05-01T10:05:00Z
ok flows run --once
assert_eq "$OUT" "" "first seen: its schedule starts now"
printf 'id,city\n1,Vancouver\n2,Seattle\n' >"$DROP/dumps-2020-01-01.csv"
at 2024-05-01T10:09:59Z
ok flows run --once
assert_eq "$OUT" "" "not before the slot"
at 2024-05-01T10:10:00Z
ok flows run --once
assert_eq "$OUT" "dumps: 2 new records (offsets 0..1)" "at the slot"
assert_eq "$ERR" "silt flows: flow 'dumps': run started (schedule, dataset 'dumps')
silt flows: flow 'dumps': 2 new records (offsets 0..1) in 1 block" "log lines"
ok flows run --once
assert_eq "$OUT" "" "never twice for one slot"
at 2024-05-01T10:19:59Z
ok flows run --once
assert_eq "$OUT" "" "not before the next slot"
printf 'id,city\n2,Seattle\n3,Portland\n' >"$DROP/dumps-2020-02-01.csv"
at 2024-05-01T10:20:00Z
ok flows run --once
assert_eq "$OUT" "dumps: 1 new record (offsets 2..2)" "next slot (Ledger: id 2 is known)"
ok flows run --once
assert_eq "$OUT" "" "once per slot"

# ---- missed slots: one run --------------------------------------------------------------
printf 'id,city\n4,Boston\n' >"$DROP/dumps-2020-03-01.csv"
at 2024-05-01T11:05:30Z
ok flows run --once
assert_eq "$OUT" "dumps: 1 new record (offsets 3..3)" "4 missed slots, one run"
ok flows run --once
assert_eq "$OUT" "" "the missed slots are not run again"
at 2024-05-01T11:10:00Z
ok flows run --once
assert_eq "$OUT" "dumps: up to date" "the schedule goes on"
expect_sql 'select "offset", op, id, city from dumps order by "offset"' <<'CSV'
offset,op,id,city
0,0,1,Vancouver
1,0,2,Seattle
2,0,3,Portland
3,0,4,Boston
CSV
ok flows history dumps
assert_eq "$OUT" "START                    END                      FLOW                 DATASET              TRIGGER  OUTCOME    RECORDS ERROR
2024-05-01T11:10:00.000Z 2024-05-01T11:10:00.000Z dumps                dumps                schedule up-to-date       0 -
2024-05-01T11:05:30.000Z 2024-05-01T11:05:30.000Z dumps                dumps                missed   ok               1 -
2024-05-01T10:20:00.000Z 2024-05-01T10:20:00.000Z dumps                dumps                schedule ok               1 -
2024-05-01T10:10:00.000Z 2024-05-01T10:10:00.000Z dumps                dumps                schedule ok               2 -" "history, newest first"

# ---- a failing source: retried with backoff ------------------------------------------------
BROKEN="$T_DIR/broken"
glob_ds broken "$BROKEN"
ok flows set broken --cron '0 * * * *'
ok flows run --once
assert_eq "$OUT" "" "broken first seen at 11:10"
at 2024-05-01T12:00:00Z
run flows run --once
[ "$RC" = 1 ] || fail "a failed run exits 1 (got $RC)"
assert_eq "$OUT" "broken: failed: pull 'broken': no files match '$BROKEN/broken-*.csv'
dumps: up to date" "failed run and the due dumps run"
assert_contains "$ERR" "silt flows: flow 'broken': failed (attempt 1): pull 'broken': no files match '$BROKEN/broken-*.csv'; retry at 2024-05-01T12:00:30Z"
at 2024-05-01T12:00:29Z
ok flows run --once
assert_eq "$OUT" "" "no retry before 30 s"
at 2024-05-01T12:00:30Z
run flows run --once
assert_eq "$RC:$OUT" "1:broken: failed: pull 'broken': no files match '$BROKEN/broken-*.csv'" "retry 1"
assert_contains "$ERR" "failed (attempt 2): pull 'broken': no files match '$BROKEN/broken-*.csv'; retry at 2024-05-01T12:01:30Z"
at 2024-05-01T12:01:29Z
ok flows run --once
assert_eq "$OUT" "" "no retry before 60 s"
at 2024-05-01T12:01:30Z
run flows run --once
assert_eq "$RC" "1" "retry 2 fails"
assert_contains "$ERR" "failed (attempt 3): pull 'broken': no files match '$BROKEN/broken-*.csv'; retry at 2024-05-01T12:03:30Z"
printf 'id,city\n7,Lima\n' >"$BROKEN/broken-2021-01-01.csv"
at 2024-05-01T12:03:29Z
ok flows run --once
assert_eq "$OUT" "" "no retry before 120 s"
at 2024-05-01T12:03:30Z
ok flows run --once
assert_eq "$OUT" "broken: 1 new record (offsets 0..0)" "retry 3 succeeds"
at 2024-05-01T12:09:00Z
ok flows run --once
assert_eq "$OUT" "" "no retry after a success"
ok --json flows history broken
assert_eq "$(printf '%s' "$OUT" | jget '[(r["start"], r["trigger"], r["outcome"], r["attempt"], r["records"], r["error"] is None) for r in d]')" \
    '[["2024-05-01T12:03:30.000Z","retry","ok",4,1,true],["2024-05-01T12:01:30.000Z","retry","failed",3,0,false],["2024-05-01T12:00:30.000Z","retry","failed",2,0,false],["2024-05-01T12:00:00.000Z","schedule","failed",1,0,false]]' \
    "broken's history"
assert_eq "$(printf '%s' "$OUT" | jget 'd[1]["error"]')" "pull 'broken': no files match '$BROKEN/broken-*.csv'"
ok --json flows history
assert_eq "$(printf '%s' "$OUT" | jget '[r["flow"] for r in d]')" \
    '["broken","broken","broken","dumps","broken","dumps","dumps","dumps","dumps"]' "every flow, newest first"

# ---- a Flow resource (Url source on nginx) ------------------------------------------------
WWW="$T_DIR/www"
NG="$T_DIR/nginx"
mkdir -p "$WWW" "$NG/logs"
PORT=$(free_port)
nginx_write_conf "" </dev/null
nginx_start
printf 'id,name\n1,a\n2,b\n3,c\n' >"$WWW/rates.csv"
touch -d '2021-01-01 00:00:00 UTC' "$WWW/rates.csv"
cat >rates.yaml <<YAML
kind: DatasetSnapshot
version: 1
content:
  name: rates
  kind: Root
  metadata: []
---
\$schema: https://opendatafabric.org/schemas/source/v1alpha1/Source
headers:
  name: rates-src
spec:
  ingress:
    kind: Url
    url: $BASE/rates.csv
  read:
    kind: Csv
    header: true
    ddlSchema: [id BIGINT, name STRING]
  merge:
    kind: Ledger
    primaryKey: [id]
---
\$schema: https://opendatafabric.org/schemas/flow/v1alpha1/Flow
headers:
  name: rates-flow
spec:
  target: Dataset:rates
  triggers:
    - kind: Schedule
      cron: "*/30 * * * *"
  tasks:
    - kind: Ingest
      source: Source:rates-src
      targetRecordsPerSlice: 2
YAML
ok add rates.yaml
unchanged_after 1 "silt: flows set: dataset 'rates' has no polling source (SetPollingSource) to schedule" \
    flows set rates --cron '* * * * *'
ok flows run --once
assert_eq "$OUT" "" "rates-flow first seen at 12:09"
at 2024-05-01T12:30:00Z
ok flows run --once
assert_eq "$OUT" "rates-flow: 3 new records (offsets 0..2)
dumps: up to date" "the Flow runs at its slot"
ok --json flows history rates-flow
assert_eq "$(printf '%s' "$OUT" | jget '[(r["dataset"], r["trigger"], r["records"], r["blocks"], r["firstOffset"], r["lastOffset"]) for r in d]')" \
    '[["rates","schedule",3,2,0,2]]' "targetRecordsPerSlice 2: two blocks"
expect_sql 'select "offset", id, name from rates order by "offset"' <<'CSV'
offset,id,name
0,1,a
1,2,b
2,3,c
CSV
# a manual run of a named flow, due or not
ok flows run --once rates-flow
assert_eq "$OUT" "rates-flow: up to date" "manual run"
ok --json flows run --once rates-flow
assert_eq "$OUT" '[{"flow":"rates-flow","dataset":"rates","trigger":"manual","outcome":"up-to-date","start":"2024-05-01T12:30:00.000Z","end":"2024-05-01T12:30:00.000Z","attempt":1,"records":0,"blocks":0,"firstOffset":null,"lastOffset":null,"error":null}]' "flows run --once --json"
ok flows history rates-flow
assert_eq "$(printf '%s\n' "$OUT" | awk 'NR > 1 {print $5, $6}')" "manual up-to-date
manual up-to-date
schedule ok" "manual trigger"
fails 1 "silt: flow 'nope' not found" flows run --once nope

# ---- the pull lock ------------------------------------------------------------------------------
SLOW="$T_DIR/slow"
MARK="$T_DIR/mark"
glob_ds slow "$SLOW" "[sh, -c, 'touch $MARK; sleep 2; cat']"
ok --json flows set slow --cron '0 0 1 1 *'
assert_eq "$OUT" '{"name":"slow","cron":"0 0 1 1 *"}' "flows set --json"
wait_mark() {
    local _
    for _ in $(seq 100); do
        [ -e "$MARK" ] && return 0
        sleep 0.05
    done
    fail "the slow pull did not start"
}
printf 'id,city\n1,Oslo\n' >"$SLOW/slow-2020-01-01.csv"
rm -f "$MARK"
"$SILT" pull slow >"$T_DIR/bg.out" 2>"$T_DIR/bg.err" &
BG=$!
wait_mark
run flows run --once slow
assert_eq "$RC:$OUT" "1:slow: busy: pull 'slow': another pull of the dataset is running" "busy while a CLI pull runs"
wait "$BG" || fail "the CLI pull failed: $(cat "$T_DIR/bg.err")"
assert_eq "$(cat "$T_DIR/bg.out")" "slow: 1 new record (offsets 0..0), watermark 2020-01-01T00:00:00.000Z" "the CLI pull"
# and a CLI pull waits for a scheduled run
printf 'id,city\n2,Bergen\n' >"$SLOW/slow-2020-02-01.csv"
rm -f "$MARK"
"$SILT" flows run --once slow >"$T_DIR/bg.out" 2>"$T_DIR/bg.err" &
BG=$!
wait_mark
ok pull slow
assert_eq "$OUT" "slow: up to date" "the CLI pull waited for the run"
wait "$BG" || fail "the scheduled run failed: $(cat "$T_DIR/bg.err")"
assert_eq "$(cat "$T_DIR/bg.out")" "slow: 1 new record (offsets 1..1)" "the scheduled run"
expect_sql 'select "offset", id, city from slow order by "offset"' <<'CSV'
offset,id,city
0,1,Oslo
1,2,Bergen
CSV
ok flows history slow
assert_eq "$(printf '%s\n' "$OUT" | awk 'NR > 1 {print $5, $6, $7}')" "manual ok 1
manual busy 0" "slow's history"

# ---- flows run without --once: loop, SIGTERM ------------------------------------------------------
printf 'id,city\n5,Austin\n' >"$DROP/dumps-2020-04-01.csv"
at 2024-05-01T12:31:00Z
"$SILT" flows run dumps >"$T_DIR/loop.out" 2>"$T_DIR/loop.err" &
LOOP=$!
T_PIDS+=("$LOOP")
sleep 0.5
at 2024-05-01T12:40:00Z
for _ in $(seq 100); do
    grep -q "flow 'dumps': 1 new record" "$T_DIR/loop.err" && break
    sleep 0.05
done
sleep 0.5 # a few more ticks at the same time: no second run
kill -TERM "$LOOP"
wait "$LOOP" || fail "flows run exited with $? after SIGTERM"
assert_eq "$(cat "$T_DIR/loop.err")" "silt flows: scheduler started
silt flows: flow 'dumps': run started (schedule, dataset 'dumps')
silt flows: flow 'dumps': 1 new record (offsets 4..4) in 1 block
silt flows: SIGTERM received, stopping" "the loop's log"
assert_eq "$(cat "$T_DIR/loop.out")" "" "the loop prints nothing on stdout"

# ---- real time through silt serve -----------------------------------------------------------------
unset SILT_SCHEDULER_CLOCK_FILE
mkdir "$T_DIR/rt"
cd "$T_DIR/rt"
ok init
LIVE="$T_DIR/live"
glob_ds live "$LIVE"
printf 'id,city\n1,Rome\n2,Milan\n' >"$LIVE/live-2020-01-01.csv"
ok flows set live --cron '*/2 * * * * *'
serve_start
for _ in $(seq 100); do
    grep -q "flow 'live': 2 new records" "$SERVE_LOG" && break
    sleep 0.1
done
assert_contains "$(cat "$SERVE_LOG")" "silt serve: flow 'live': run started (schedule, dataset 'live')
silt serve: flow 'live': 2 new records (offsets 0..1) in 1 block"
printf 'id,city\n3,Turin\n' >"$LIVE/live-2020-02-01.csv"
for _ in $(seq 100); do
    grep -q "flow 'live': 1 new record" "$SERVE_LOG" && break
    sleep 0.1
done
assert_contains "$(cat "$SERVE_LOG")" "silt serve: flow 'live': 1 new record (offsets 2..2) in 1 block"
serve_stop
expect_sql 'select "offset", id, city from live order by "offset"' <<'CSV'
offset,id,city
0,1,Rome
1,2,Milan
2,3,Turin
CSV
ok --json flows history live
assert_eq "$(printf '%s' "$OUT" | jget 'set(r["outcome"] for r in d) <= {"ok", "up-to-date"} and sum(r["records"] for r in d) == 3')" "true" \
    "only ok / up-to-date runs, 3 records in all"

# SIGTERM during a run: the file being read is not committed, exit 0 in time
STOP="$T_DIR/stopping"
MARK="$T_DIR/mark2"
glob_ds halt "$STOP" "[sh, -c, 'touch $MARK; sleep 1.5; cat']"
printf 'id,city\n1,Nice\n' >"$STOP/halt-2020-01-01.csv"
printf 'id,city\n2,Lyon\n' >"$STOP/halt-2020-02-01.csv"
ok flows set halt --cron '* * * * * *'
rm -f "$MARK"
serve_start
wait_mark
serve_stop
assert_contains "$(cat "$SERVE_LOG")" "silt serve: flow 'halt': aborted: pull 'halt': "
ok --json flows history halt
assert_eq "$(printf '%s' "$OUT" | jget '[(r["outcome"], r["blocks"]) for r in d]')" '[["aborted",1]]' \
    "the first file committed whole, the second not at all"
expect_sql 'select "offset", id, city from halt order by "offset"' <<'CSV'
offset,id,city
0,1,Nice
CSV
ok verify halt
# the aborted run is retried at the next start
ok flows run --once
assert_eq "$(printf '%s\n' "$OUT" | grep '^halt')" "halt: 1 new record (offsets 1..1)" "retried at the next start"

done_tests
