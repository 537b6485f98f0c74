#!/usr/bin/env bash
# test_tmpfiles.sh — temporary files stay inside the workspace and do not
# outlive a killed command:
#  - `silt ingest NAME -` copies stdin into .silt/tmp/<owner>-<random>/stdin:
#    SIGKILLed while it reads ~50 MB, it leaves nothing named silt-* in
#    $TMPDIR, and `silt gc` removes the leftover at once ("leftover of
#    process PID, which has exited");
#  - a transcoding ingest (`--input-format ndjson` into a CSV source) keeps the
#    reader's temp directory in .silt/tmp/spill/<owner>-<random>/: SIGKILLed,
#    nothing in $TMPDIR, and the next command removes the leftover;
#  - the directory of a live process is never removed, however old (a
#    `sleep` holding a directory named after it; a concurrent `silt ingest -`
#    waiting for its stdin while gc and other commands run), while one of an
#    exited process goes at once and one whose owner cannot be checked (an
#    older silt's name, another boot) only after the grace period;
#  - temporary object names (.tmp-<pid>-<random>.parquet) have a random part
#    that differs between processes (it came from unseeded rand()).
source "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || { echo "$T_NAME: strace not installed" >&2; exit 1; }

export TMPDIR="$T_DIR/systmp"
mkdir -p "$TMPDIR"
ok init
cat >src.yaml <<'YAML'
kind: DatasetSnapshot
version: 1
content:
  name: big
  kind: Root
  metadata:
    - kind: AddPushSource
      sourceName: default
      read:
        kind: Csv
        header: true
        ddlSchema: ["id BIGINT", "v BIGINT"]
      merge:
        kind: Append
YAML
ok add src.yaml
H0=$(head_of big)

BOOT=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
PIDNS=$(readlink /proc/self/ns/pid | tr -dc 0-9)
start_of() { cut -d' ' -f22 "/proc/$1/stat"; }   # (comm of our processes has no spaces)
SCRATCH_RE='^[0-9]+-[0-9]+-[0-9a-f]{8}-[0-9]+-[0-9a-f]{16}$'
no_tmp_leftovers() { # LABEL: nothing named silt-* in $TMPDIR
    local left
    left=$(find "$TMPDIR" -mindepth 1 -name 'silt-*' | sed -n 1,5p)
    [ -z "$left" ] || fail "$1: left in \$TMPDIR: $left"
    pass
}
# entries of .silt/tmp other than spill
tmp_entries() { find .silt/tmp -mindepth 1 -maxdepth 1 ! -name spill -printf '%f\n' | sort; }
spill_entries() { find .silt/tmp/spill -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort; }
# wait_for COND-COMMAND...: up to 30 s
wait_for() {
    local i
    for i in $(seq 600); do
        if "$@"; then return 0; fi
        sleep 0.05
    done
    fail "timed out waiting for: $*"
}

# ---- SIGKILL while `silt ingest big -` copies a large stdin -------------------------
awk 'BEGIN { print "id,v"; for (i = 0; i < 3000000; i++) printf "%d,%d\n", i, i * 7 }' >"$T_DIR/big.csv"
[ "$(stat -c %s "$T_DIR/big.csv")" -gt 40000000 ] || fail "input too small"
mkfifo "$T_DIR/fifo"
(cat "$T_DIR/big.csv"; exec sleep 120) >"$T_DIR/fifo" &
WRITER=$!
T_PIDS+=("$WRITER")
"$SILT" ingest big - <"$T_DIR/fifo" >/dev/null 2>&1 &
INGEST=$!
copied() { # the whole input is in the copy (the writer now stalls)
    local f
    f=$(find .silt/tmp -mindepth 2 -maxdepth 2 -name stdin | sed -n 1p)
    [ -n "$f" ] && [ "$(stat -c %s "$f")" -ge "$(stat -c %s "$T_DIR/big.csv")" ]
}
wait_for copied
kill -KILL "$INGEST"
wait "$INGEST" 2>/dev/null || true
kill "$WRITER"
wait "$WRITER" 2>/dev/null || true
no_tmp_leftovers "killed stdin ingest"
LEFT=$(tmp_entries)
[[ "$LEFT" =~ $SCRATCH_RE ]] || fail "expected one scratch directory in .silt/tmp, got: $LEFT"
pass
assert_eq "${LEFT%%-*}" "$INGEST" "the leftover is named after the killed process"
assert_eq "$(stat -c %s ".silt/tmp/$LEFT/stdin")" "$(stat -c %s "$T_DIR/big.csv")" "the copy of stdin is in the workspace"
assert_eq "$(head_of big)" "$H0" "the killed ingest committed nothing"
ok gc
assert_eq "$OUT" "big: purged 0 transactions, deleted 0 objects (0 bytes), 0 leftovers
delete tmp/$LEFT (leftover of process $INGEST, which has exited)" "gc removes the leftover of the dead process"
assert_eq "$(tmp_entries)" "" "nothing left in .silt/tmp"
# a successful stdin ingest leaves nothing either
head -n 1001 "$T_DIR/big.csv" | "$SILT" ingest big - >"$T_DIR/.out" 2>&1 || fail "ingest from stdin: $(cat "$T_DIR/.out")"
assert_eq "$(cat "$T_DIR/.out")" "big: 1000 new records (offsets 0..999), watermark $(text_time "$(info big 'd["watermark"]')")"
assert_eq "$(tmp_entries)" "" "a finished stdin ingest leaves nothing"
no_tmp_leftovers "stdin ingest"

# ---- SIGKILL during a transcoding ingest (--input-format ndjson into a CSV source) ---------
awk 'BEGIN { for (i = 0; i < 2500000; i++) printf "{\"id\":%d,\"v\":%d}\n", i, i * 3 }' >"$T_DIR/big.ndjson"
H1=$(head_of big)
"$SILT" ingest big "$T_DIR/big.ndjson" --input-format ndjson >/dev/null 2>&1 &
INGEST=$!
# the reader's directory sits inside the ingest's own scratch directory
reader_dirs() { find .silt/tmp -mindepth 2 -maxdepth 2 -type d -printf '%f\n' | grep -E "$SCRATCH_RE" || true; }
reading() { [ -n "$(reader_dirs)" ]; }
wait_for reading
kill -KILL "$INGEST"
wait "$INGEST" 2>/dev/null || true
no_tmp_leftovers "killed transcoding ingest"
LEFT=$(tmp_entries)
assert_eq "${LEFT%%-*}" "$INGEST" "the ingest's leftover is named after the killed process"
assert_eq "$(reader_dirs | cut -d- -f1)" "$INGEST" "the reader's leftover is inside it"
assert_eq "$(head_of big)" "$H1" "the killed transcoding ingest committed nothing"
# the next command that needs scratch space removes it
ok sql 'SELECT count(*) AS n FROM big' --format csv
assert_eq "$OUT" "n
1000" "next command"
assert_eq "$(tmp_entries)" "" "the next command removed the killed ingest's leftover"
# a transcoding ingest that finishes leaves nothing
head -n 500 "$T_DIR/big.ndjson" >"$T_DIR/small.ndjson"
ok ingest big "$T_DIR/small.ndjson" --input-format ndjson
assert_eq "$OUT" "big: 500 new records (offsets 1000..1499), watermark $(text_time "$(info big 'd["watermark"]')")"
assert_eq "$(tmp_entries)$(spill_entries | grep -E "$SCRATCH_RE" || true)" "" "a finished transcoding ingest leaves nothing"
no_tmp_leftovers "transcoding ingest"

# ---- live owners are kept, whatever their age; dead ones go at once ---------------------
sleep 300 &
LIVE=$!
T_PIDS+=("$LIVE")
LIVE_DIR="$LIVE-$(start_of "$LIVE")-$BOOT-$PIDNS-0123456789abcdef"
sleep 0.1 &
DEAD=$!
DEAD_DIR="$DEAD-$(start_of "$DEAD")-$BOOT-$PIDNS-fedcba9876543210"
wait "$DEAD"
OTHER_BOOT=$(printf '%08x' $(( (16#$BOOT + 1) % 4294967296 )))
OLD_FOREIGN="$LIVE-$(start_of "$LIVE")-$OTHER_BOOT-$PIDNS-00000000000000aa" # another boot/host: age rule
NEW_FOREIGN="$LIVE-$(start_of "$LIVE")-$OTHER_BOOT-$PIDNS-00000000000000bb"
mkdir -p ".silt/tmp/$LIVE_DIR/x" ".silt/tmp/$DEAD_DIR" ".silt/tmp/$OLD_FOREIGN" ".silt/tmp/$NEW_FOREIGN" \
    .silt/tmp/0123456789abcdef .silt/tmp/fedcba9876543210 ".silt/trash/$DEAD_DIR/dataset" \
    ".silt/tmp/spill/$DEAD_DIR"
touch .silt/tmp/spill/duckdb_temp_storage-0.tmp
touch -d '2 days ago' ".silt/tmp/$LIVE_DIR" ".silt/tmp/$DEAD_DIR" ".silt/tmp/$OLD_FOREIGN" .silt/tmp/0123456789abcdef \
    .silt/tmp/spill/duckdb_temp_storage-0.tmp
ok gc --dry-run
assert_eq "$(printf '%s\n' "$OUT" | sed 1d | sort)" "$(printf '%s\n' \
    "would delete tmp/$DEAD_DIR (leftover of process $DEAD, which has exited)" \
    "would delete tmp/$OLD_FOREIGN (leftover of a crashed command)" \
    "would delete tmp/0123456789abcdef (leftover of a crashed command)" \
    "would delete tmp/spill/$DEAD_DIR (leftover of process $DEAD, which has exited)" \
    "would delete trash/$DEAD_DIR (leftover of process $DEAD, which has exited)" | sort)" "gc --dry-run"
ok gc
assert_eq "$(printf '%s\n' "$OUT" | sed 1d | sort)" "$(printf '%s\n' \
    "delete tmp/$DEAD_DIR (leftover of process $DEAD, which has exited)" \
    "delete tmp/$OLD_FOREIGN (leftover of a crashed command)" \
    "delete tmp/0123456789abcdef (leftover of a crashed command)" \
    "delete tmp/spill/$DEAD_DIR (leftover of process $DEAD, which has exited)" \
    "delete trash/$DEAD_DIR (leftover of process $DEAD, which has exited)" | sort)" "gc"
assert_eq "$(tmp_entries)" "$(printf '%s\n' "$LIVE_DIR" "$NEW_FOREIGN" fedcba9876543210 | sort)" \
    "the live owner's (2 days old), a young unknown and a young old-style directory are kept"
assert_eq "$(spill_entries)" "duckdb_temp_storage-0.tmp" "the engine's spill files are not gc's"
assert_eq "$(find .silt/trash -mindepth 1 | wc -l)" "0" "trash leftover removed"
# a silt command (not gc) also never touches the live one
ok sql "SELECT 1 AS one" --format csv
[ -d ".silt/tmp/$LIVE_DIR/x" ] || fail "a command removed the directory of a live process"
pass
# once the owner is gone, the next command removes it
kill "$LIVE"
wait "$LIVE" 2>/dev/null || true
ok sql "SELECT 1 AS one" --format csv
assert_eq "$(tmp_entries)" "$(printf '%s\n' "$NEW_FOREIGN" fedcba9876543210 | sort)" "the next command removed the exited owner's directory"
rm -r ".silt/tmp/$NEW_FOREIGN" .silt/tmp/fedcba9876543210

# ---- a concurrent long-running silt keeps its scratch directory ------------------------------
(head -n 101 "$T_DIR/big.csv"; exec sleep 120) >"$T_DIR/fifo" &
WRITER=$!
T_PIDS+=("$WRITER")
"$SILT" ingest big - <"$T_DIR/fifo" >"$T_DIR/slow.out" 2>&1 &
SLOW=$!
has_stdin() { [ -n "$(find .silt/tmp -mindepth 2 -maxdepth 2 -name stdin)" ]; }
wait_for has_stdin
SLOW_DIR=$(tmp_entries)
assert_eq "${SLOW_DIR%%-*}" "$SLOW" "the waiting ingest's directory"
SILT_GC_GRACE_SECONDS=0 run gc
assert_eq "$RC" 0 "gc next to a running ingest"
assert_eq "$(printf '%s\n' "$OUT" | sed 1d)" "" "gc deletes nothing of a running ingest, even with grace 0"
ok sql "SELECT 1 AS one" --format csv
assert_eq "$(tmp_entries)" "$SLOW_DIR" "commands leave the running ingest's directory alone"
kill "$WRITER"
wait "$WRITER" 2>/dev/null || true
wait "$SLOW" || fail "the concurrent ingest failed: $(cat "$T_DIR/slow.out")"
assert_eq "$(cat "$T_DIR/slow.out")" "big: 100 new records (offsets 1500..1599), watermark $(text_time "$(info big 'd["watermark"]')")" "the concurrent ingest finished"
assert_eq "$(tmp_entries)" "" "and cleaned up"
no_tmp_leftovers "concurrent ingest"

# ---- temporary object names differ between processes ---------------------------------------
tmp_names() { # the random parts of the scratch directories one ingest creates
    head -n 21 "$T_DIR/big.csv" | strace -f -qq -e trace=mkdir,mkdirat -o "$T_DIR/strace.txt" "$SILT" ingest big - >/dev/null
    grep -oE '\.silt/tmp/[0-9]+-[0-9]+-[0-9a-f]{8}-[0-9]+-[0-9a-f]{16}' "$T_DIR/strace.txt" | sed -E 's/.*-([0-9a-f]{16})$/\1/' | sort -u
}
A=$(tmp_names)
B=$(tmp_names)
[ -n "$A" ] && [ -n "$B" ] || fail "no scratch directory names seen: '$A' '$B'"
assert_eq "$(printf '%s\n' "$A" "$B" | grep -cvE '^[0-9a-f]{16}$' || true)" "0" "16 random hex digits"
assert_eq "$(comm -12 <(printf '%s\n' "$A") <(printf '%s\n' "$B"))" "" "two processes use different scratch names"
ok verify big
no_tmp_leftovers "end"

# ---- files datasets: their engines spill into private scratch directories too --------------
# (a shared .silt/tmp/spill is unsafe: a closing DuckDB may delete another
# process's duckdb_temp_* files there)
rm -rf .silt/tmp/spill  # the earlier parts left a file there on purpose
ok new fd --files
printf 'hi\n' >"$T_DIR/a.txt"
ok upload fd "$T_DIR/a.txt" --as a.txt
ok files fd
ok gc fd
assert_eq "$(find .silt/tmp -mindepth 1 -printf '%P\n' | sort)" "" \
    "upload, files and gc of a files dataset leave nothing in .silt/tmp, no shared spill directory"

done_tests
