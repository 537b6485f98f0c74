# lib.sh — helpers for the CLI integration tests (sourced by test_*.sh).
# ctest sets SILT (path of the binary), SILT_SOURCE_DIR and SILT_FIXTURES.
set -euo pipefail

: "${SILT:?SILT must point to the silt binary}"
: "${SILT_SOURCE_DIR:?}"
: "${SILT_FIXTURES:=$SILT_SOURCE_DIR/tests/fixtures}"

T_PASS=0
T_NAME=$(basename "$0" .sh)
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/silt-it-XXXXXX")
T_PIDS=()
cleanup() {
    local pid
    for pid in "${T_PIDS[@]:-}"; do
        [ -n "$pid" ] && kill "$pid" 2>/dev/null || true
    done
    rm -rf "$T_DIR"
}
trap cleanup EXIT
cd "$T_DIR"

fail() {
    echo "FAIL [$T_NAME]: $*" >&2
    exit 1
}
pass() { T_PASS=$((T_PASS + 1)); }

# run silt, capturing stdout in $OUT, stderr in $ERR and the exit code in $RC
run() {
    set +e
    "$SILT" "$@" >"$T_DIR/.out" 2>"$T_DIR/.err"
    RC=$?
    set -e
    OUT=$(cat "$T_DIR/.out")
    ERR=$(cat "$T_DIR/.err")
}

# ok CMD...: silt must succeed
ok() {
    run "$@"
    [ "$RC" -eq 0 ] || fail "expected success of 'silt $*', got exit $RC: $ERR"
    pass
}

# fails CODE 'expected stderr (exact)' CMD...: exit code and whole stderr
fails() {
    local code=$1 msg=$2
    shift 2
    run "$@"
    [ "$RC" -eq "$code" ] || fail "'silt $*': expected exit $code, got $RC (stderr: $ERR)"
    [ "$ERR" = "$msg" ] || fail "'silt $*': expected stderr
  $msg
got
  $ERR"
    pass
}

# fails_like CODE 'substring' CMD...: exit code, one-line stderr containing substring
fails_like() {
    local code=$1 msg=$2
    shift 2
    run "$@"
    [ "$RC" -eq "$code" ] || fail "'silt $*': expected exit $code, got $RC (stderr: $ERR)"
    [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ] || fail "'silt $*': stderr is not one line: $ERR"
    case "$ERR" in
    silt:*"$msg"*) ;;
    *) fail "'silt $*': stderr '$ERR' does not contain '$msg'" ;;
    esac
    pass
}

assert_eq() {
    [ "$1" = "$2" ] || fail "${3:-values differ}: expected '$2', got '$1'"
    pass
}

assert_contains() {
    case "$1" in
    *"$2"*) pass ;;
    *) fail "${3:-missing text}: '$2' not in: $1" ;;
    esac
}

# fingerprint of every file (path + content hash) under a directory
tree_sum() {
    (cd "$1" && find . -type f ! -name '*.lock' ! -name 'lock' -print0 | sort -z | xargs -0 -r sha256sum) | sha256sum | cut -d' ' -f1
}

# ws_snapshot [DIR]: one line per file of the workspace (default .silt/ of
# the test directory): its path and SHA-256 (a symlink: its target). Lock
# files (`lock`, `*.lock`, `txn/lock-<branch>`) are left out: commands
# create them to flock them, they never hold data. Directories are not
# listed (a scratch directory such as .silt/tmp/spill may be created, but
# every file in it must be gone again).
ws_snapshot() {
    (cd "${1:-$T_DIR/.silt}" &&
        find . -type f ! -name lock ! -name '*.lock' ! -name 'lock-*' -print0 | sort -z | xargs -0 -r sha256sum &&
        find . -type l -printf 'link %p -> %l\n' | sort)
}

# ws_compare BEFORE LABEL: fails unless the workspace still equals the
# ws_snapshot BEFORE, naming the first files that differ
ws_compare() {
    local after
    after=$(ws_snapshot)
    if [ "$after" = "$1" ]; then
        pass
    else
        fail "$2 changed .silt/: $(diff <(printf '%s\n' "$1") <(printf '%s\n' "$after") | grep '^[<>]' | head -6 | tr '\n' ' ')"
    fi
}

# unchanged_after CODE 'expected stderr (exact)' CMD...: as `fails`, and
# not one file of .silt/ was added, removed or changed by the command
unchanged_after() {
    local code=$1 msg=$2 before
    shift 2
    before=$(ws_snapshot)
    fails "$code" "$msg" "$@"
    ws_compare "$before" "'silt $*'"
}

# unchanged_after_like CODE 'substring' CMD...: as `fails_like`, and
# nothing in .silt/ changed
unchanged_after_like() {
    local code=$1 msg=$2 before
    shift 2
    before=$(ws_snapshot)
    fails_like "$code" "$msg" "$@"
    ws_compare "$before" "'silt $*'"
}

# ---- helpers shared by the data-plane tests --------------------------------

# add_ds NAME: creates a root dataset from the metadata events on stdin
# (YAML list items indented by 4 spaces).
add_ds() {
    { printf 'kind: DatasetSnapshot\nversion: 1\ncontent:\n  name: %s\n  kind: Root\n  metadata:\n' "$1"; cat; } >"$1.yaml"
    ok add "$1.yaml"
}

# expect_sql SQL [LABEL]: `silt sql SQL --format csv` must print stdin exactly
expect_sql() {
    local exp
    exp=$(cat)
    run sql "$1" --format csv
    if [ "$RC" -ne 0 ]; then
        fail "${2:-sql $1}: silt sql failed (exit $RC): $ERR"
        return 0
    fi
    assert_eq "$OUT" "$exp" "${2:-sql $1}"
}

# head_of NAME: the dataset's head block hash
head_of() { run info "$1"; printf '%s\n' "$OUT" | sed -n 's/^Head: *//p'; }

# free_port: a free TCP port on 127.0.0.1
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# use_soft_failures: from now on a failed check is reported and counted but
# the script goes on, so one run lists every deviation; call `finish` at the
# end (it exits 1 if any check failed).
use_soft_failures() {
    T_FAILS=0
    T_LAST_FAILED=0
    fail() {
        echo "FAIL [$T_NAME]: $*" >&2
        T_FAILS=$((T_FAILS + 1))
        T_LAST_FAILED=1
    }
    pass() {
        if [ "$T_LAST_FAILED" -eq 1 ]; then T_LAST_FAILED=0; else T_PASS=$((T_PASS + 1)); fi
    }
    finish() {
        if [ "$T_FAILS" -gt 0 ]; then
            echo "$T_NAME: $T_FAILS checks FAILED, $T_PASS passed" >&2
            exit 1
        fi
        done_tests
    }
}

# jget EXPR: evaluates the Python expression EXPR over the JSON document on
# stdin (bound to d); strings print raw, everything else as compact JSON.
jget() {
    python3 -c 'import json,sys
d=json.load(sys.stdin)
try:
    r=eval(sys.argv[1])
except (KeyError, IndexError, TypeError):
    r="<missing>"
print(r if isinstance(r,str) else json.dumps(r,separators=(",",":"),sort_keys=True))' "$1"
}

# info NAME EXPR: jget EXPR over `silt --json info NAME`
info() { "$SILT" --json info "$1" | jget "$2"; }
# text_time T: the stored RFC 3339 UTC time T as text output shows it, with
# milliseconds (2024-01-02T03:04:05Z -> 2024-01-02T03:04:05.000Z; docs/cli.md)
text_time() {
    local t=$1 f=""
    case "$t" in *.*Z) f=${t#*.}; f=${f%Z} ;; esac
    f="${f}000"
    printf '%s.%sZ\n' "${t:0:19}" "${f:0:3}"
}

done_tests() {
    echo "$T_NAME: $T_PASS checks passed"
}

# ---- nginx for the ingress tests (COMPONENTS.md) -----------------------------

# nginx_write_conf LOG_FORMAT: writes $NG/nginx.conf serving $WWW on
# 127.0.0.1:$PORT; the extra directives of the server block (locations) come
# from stdin. LOG_FORMAT is an nginx log_format string ('' = nginx's default).
nginx_write_conf() {
    local fmt=$1 log="access_log $NG/access.log;" extra
    extra=$(cat)
    if [ -n "$fmt" ]; then
        log="log_format plain '$fmt';
    access_log $NG/access.log plain;"
    fi
    cat >"$NG/nginx.conf" <<CONF
daemon off;
user root;
worker_processes 1;
pid $NG/nginx.pid;
error_log $NG/error.log;
events { worker_connections 64; }
http {
    $log
    client_body_temp_path $NG/body;
    proxy_temp_path $NG/proxy;
    fastcgi_temp_path $NG/fastcgi;
    uwsgi_temp_path $NG/uwsgi;
    scgi_temp_path $NG/scgi;
    default_type application/octet-stream;
    server {
        listen 127.0.0.1:$PORT;
        root $WWW;
$extra
    }
}
CONF
}

# nginx_start: runs nginx on $NG/nginx.conf (stopped by PID at exit: its PID
# is in $NGINX_PID and T_PIDS), waits until $PORT accepts, sets $BASE.
nginx_start() {
    nginx -p "$NG" -c "$NG/nginx.conf" &
    NGINX_PID=$!
    T_PIDS+=("$NGINX_PID")
    local _
    for _ in $(seq 50); do
        python3 -c "import socket;socket.create_connection(('127.0.0.1',$PORT),1)" 2>/dev/null && break
        sleep 0.1
    done
    BASE="http://127.0.0.1:$PORT"
}

# node_run SCRIPT.mjs ARGS...: runs a Node test script with the npm packages
# scripts/bootstrap.sh installed into $SILT_NPM_CACHE (tests/node/package.json).
# ESM resolution ignores NODE_PATH, so the script is copied next to a
# node_modules link in the test directory.
node_run() {
    local cache="${SILT_NPM_CACHE:-$HOME/.cache/silt/npm}" script="$1"
    shift
    [ -d "$cache/node_modules" ] || fail "npm test packages missing in $cache (run scripts/bootstrap.sh)"
    mkdir -p "$T_DIR/.node"
    ln -sfn "$cache/node_modules" "$T_DIR/.node/node_modules"
    cp "$script" "$T_DIR/.node/"
    node "$T_DIR/.node/$(basename "$script")" "$@"
}

# ---- silt serve -------------------------------------------------------------

# serve_start [ARGS...]: runs `silt serve --listen 127.0.0.1:0 ARGS` on the
# workspace of the working directory with SILT_ADMIN_TOKEN=$ADMIN (default
# "admin-secret"), waits for its "listening on" line, and sets $BASE, $SERVE_PID
# (stopped at exit) and $SERVE_LOG (its stderr). serve_stop sends SIGTERM and
# waits; it fails unless the server exits 0 within 5 s.
serve_start() {
    : "${ADMIN:=admin-secret}"
    SERVE_LOG="$T_DIR/serve.$$.$RANDOM.log"
    local out="$SERVE_LOG.out" _
    : >"$out"
    SILT_ADMIN_TOKEN="$ADMIN" "$SILT" serve --listen 127.0.0.1:0 "$@" >"$out" 2>"$SERVE_LOG" &
    SERVE_PID=$!
    T_PIDS+=("$SERVE_PID")
    for _ in $(seq 100); do
        grep -q '^listening on ' "$out" && break
        kill -0 "$SERVE_PID" 2>/dev/null || fail "silt serve exited at start: $(cat "$SERVE_LOG")"
        sleep 0.05
    done
    BASE=$(sed -n 's/^listening on //p' "$out")
    [ -n "$BASE" ] || fail "silt serve did not print its address: $(cat "$SERVE_LOG")"
}
serve_stop() {
    kill -TERM "$SERVE_PID"
    local _
    for _ in $(seq 100); do
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.05
    done
    kill -0 "$SERVE_PID" 2>/dev/null && fail "silt serve still running 5 s after SIGTERM"
    wait "$SERVE_PID" || fail "silt serve exited with $? after SIGTERM"
}

# http METHOD PATH [CURL ARGS...]: a request to $BASE with the admin token
# (TOKEN overrides; TOKEN=none sends none). Sets $HTTP_STATUS, $HTTP_BODY
# (and the headers in $HTTP_HEADERS).
http() {
    local m=$1 p=$2 tok=${TOKEN:-$ADMIN}
    shift 2
    local auth=()
    [ "$tok" = none ] || auth=(-H "Authorization: Bearer $tok")
    HTTP_STATUS=$(curl -sS -o "$T_DIR/.hbody" -D "$T_DIR/.hhead" -w '%{http_code}' -X "$m" "${auth[@]}" "$@" "$BASE$p") || true
    HTTP_BODY=$(cat "$T_DIR/.hbody")
    HTTP_HEADERS=$(cat "$T_DIR/.hhead")
}
# expect_http STATUS METHOD PATH [CURL ARGS...]: http, then the status must match.
expect_http() {
    local want=$1
    shift
    http "$@"
    [ "$HTTP_STATUS" = "$want" ] || fail "$1 $2: status $HTTP_STATUS, expected $want; body: $HTTP_BODY"
    pass
}
