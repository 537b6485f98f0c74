#!/usr/bin/env bash
# radosgw.sh — a throw-away single-node Ceph (mon + memstore OSD + radosgw)
# for the S3 tests (docs/remote.md "S3 store").
#
#   radosgw.sh start DIR   start the cluster under DIR (created; must not
#                          hold a running cluster) and write DIR/env:
#                          S3_ENDPOINT, S3_REGION, AWS_ACCESS_KEY_ID,
#                          AWS_SECRET_ACCESS_KEY, RGW_DIR, RGW_PORT
#   radosgw.sh stop DIR    stop the daemons by the PIDs in DIR/pids, remove DIR
#   radosgw.sh gw-start DIR NAME   start an extra radosgw NAME on the same
#                          cluster (own port; DIR/env.NAME, as DIR/env)
#   radosgw.sh gw-stop DIR NAME    stop it (by PID); gw-start restarts it on
#                          the same port (the fault tests)
#
# ctest runs "start" once per test run as the fixture s3 (FIXTURES_SETUP) and
# "stop" as its cleanup; tests needing S3 require the fixture and source
# $SILT_RGW_DIR/env. Invariants: every daemon listens on 127.0.0.1 only, on
# ports found free at start; no cephx (a loopback test cluster); the OSD keeps
# its data in memory, so stopping the cluster leaves nothing behind.
set -euo pipefail

ACCESS_KEY=siltTESTACCESSKEY01
SECRET_KEY=siltTestSecretKey0123456789abcdefABCDEF
REGION=default

die() { echo "radosgw.sh: $*" >&2; exit 1; }

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# wait_for SECONDS CMD...: polls CMD every 0.2 s
wait_for() {
    local limit=$1 i=0
    shift
    until "$@" >/dev/null 2>&1; do
        i=$((i + 1))
        [ "$i" -lt $((limit * 5)) ] || return 1
        sleep 0.2
    done
}

write_conf() {
    local d=$1 fsid=$2 p2=$3 p1=$4 prgw=$5
    cat >"$d/ceph.conf" <<EOF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$p2,v1:127.0.0.1:$p1]
public network = 127.0.0.0/8
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
osd pool default size = 1
osd pool default min size = 1
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 2147483648
run dir = $d/run
admin socket = $d/run/\$name.asok
log file = $d/log/\$name.log
keyring = $d/keyring
[mon]
mon data = $d/mon/\$cluster-\$id
[osd]
osd data = $d/osd/\$cluster-\$id
[client]
rgw data = $d/rgw
rgw dns name = 127.0.0.1
EOF
}

# start_rgw DIR NAME: radosgw client.rgw.NAME on the port in DIR/env[.NAME]
start_rgw() {
    local d=$1 name=$2 envf=$1/env port
    [ "$name" = a ] || envf=$d/env.$name
    port=$(sed -n 's/^RGW_PORT=//p' "$envf")
    radosgw -c "$d/ceph.conf" -n "client.rgw.$name" -f \
        --rgw-frontends "beast endpoint=127.0.0.1:$port" >>"$d/log/radosgw.$name.out" 2>&1 &
    echo $! >"$d/pids.rgw.$name"
    wait_for 60 curl -s -o /dev/null "http://127.0.0.1:$port/" || die "radosgw $name did not start (see $d/log)"
}

gw_start() {
    local d=$1 name=$2
    [ -d "$d" ] && [ -f "$d/env" ] || die "$d: no cluster"
    [[ $name =~ ^[a-z0-9]+$ ]] && [ "$name" != a ] || die "bad gateway name '$name'"
    if [ ! -f "$d/env.$name" ]; then
        sed "s|^S3_ENDPOINT=.*||; s|^RGW_PORT=.*||" "$d/env" | grep . >"$d/env.$name"
        local port
        port=$(free_port)
        printf 'S3_ENDPOINT=http://127.0.0.1:%s\nRGW_PORT=%s\n' "$port" "$port" >>"$d/env.$name"
    fi
    start_rgw "$d" "$name"
}

# stop_pid PID: TERM, then KILL after 10 s; only if PID is still a ceph daemon
stop_pid() {
    local pid=$1 i=0
    case $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) in
    ceph-mon* | ceph-osd* | radosgw* | */ceph-mon* | */ceph-osd* | */radosgw*) ;;
    *) return 0 ;;
    esac
    kill "$pid" 2>/dev/null || return 0
    while kill -0 "$pid" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -gt 100 ]; then
            kill -9 "$pid" 2>/dev/null || true
            break
        fi
        sleep 0.1
    done
}

stop_rgw() {
    local d=$1 name=$2
    if [ -f "$d/pids.rgw.$name" ]; then
        stop_pid "$(cat "$d/pids.rgw.$name")"
    fi
    rm -f "$d/pids.rgw.$name"
}

start() {
    local d=$1
    stop "$d" # the leftovers of an interrupted run
    mkdir -p "$d"/{run,log,mon,osd/ceph-0,rgw}
    d=$(cd "$d" && pwd)
    local fsid p2 p1 prgw
    fsid=$(cat /proc/sys/kernel/random/uuid)
    p2=$(free_port); p1=$(free_port); prgw=$(free_port)
    write_conf "$d" "$fsid" "$p2" "$p1" "$prgw"
    local C=(-c "$d/ceph.conf")
    ceph-authtool --create-keyring "$d/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$p2,v1:127.0.0.1:$p1]" "$d/monmap" >/dev/null
    ceph-mon "${C[@]}" --mkfs -i a --monmap "$d/monmap" >"$d/log/mkfs.out" 2>&1
    ceph-mon "${C[@]}" -i a -f >>"$d/log/mon.out" 2>&1 &
    echo $! >"$d/pids"
    wait_for 30 ceph "${C[@]}" --connect-timeout 2 mon stat || die "ceph-mon did not start (see $d/log)"
    local id
    id=$(ceph "${C[@]}" osd create)
    ceph-osd "${C[@]}" -i "$id" --mkfs >>"$d/log/mkfs.out" 2>&1
    ceph-osd "${C[@]}" -i "$id" -f >>"$d/log/osd.out" 2>&1 &
    echo $! >>"$d/pids"
    wait_for 60 sh -c "ceph -c '$d/ceph.conf' osd stat | grep -q '1 up'" || die "ceph-osd did not start (see $d/log)"
    cat >"$d/env" <<EOF
S3_ENDPOINT=http://127.0.0.1:$prgw
S3_REGION=$REGION
AWS_ACCESS_KEY_ID=$ACCESS_KEY
AWS_SECRET_ACCESS_KEY=$SECRET_KEY
RGW_DIR=$d
RGW_PORT=$prgw
EOF
    start_rgw "$d" a
    radosgw-admin "${C[@]}" user create --uid silt-test --display-name "silt test" \
        --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" >"$d/log/user.json"
}

stop() {
    local d=$1
    [ -d "$d" ] || return 0
    local f
    for f in "$d"/pids.rgw.*; do
        [ -f "$f" ] && stop_rgw "$d" "${f##*/pids.rgw.}"
    done
    if [ -f "$d/pids" ]; then
        local pid
        for pid in $(tac "$d/pids"); do stop_pid "$pid"; done
    fi
    rm -rf "$d"
}

usage="usage: radosgw.sh start|stop DIR | gw-start|gw-stop DIR NAME"
case ${1:-} in
start | stop) [ $# -eq 2 ] || die "$usage" ;;
gw-start | gw-stop) [ $# -eq 3 ] || die "$usage" ;;
*) die "$usage" ;;
esac
case $1 in
start) start "$2" ;;
stop) stop "$2" ;;
gw-start) gw_start "$2" "$3" ;;
gw-stop) stop_rgw "$2" "$3" ;;
*) die "unknown command '$1'" ;;
esac
