# mqtt_lib.sh — a real mosquitto broker for the MQTT tests (sourced after
# lib.sh): mqtt_start writes $MQ/mosquitto.conf (127.0.0.1:$MQ_PORT,
# persistence on in $MQ/data, password file with user silt / $MQ_PASS,
# no anonymous access) and starts it; mqtt_stop stops it by PID (SIGTERM,
# so it saves its persistence file). mqtt_pub TOPIC QOS MESSAGE publishes
# with mosquitto_pub as the independent peer.
command -v mosquitto >/dev/null || PATH=$PATH:/usr/sbin
MQ=$T_DIR/mq
MQ_PASS=${MQ_PASS:-pw-$RANDOM$RANDOM}
mqtt_start() {
    mkdir -p "$MQ/data"
    if [ ! -f "$MQ/passwd" ]; then
        : >"$MQ/passwd"
        chmod 600 "$MQ/passwd"
        mosquitto_passwd -b "$MQ/passwd" silt "$MQ_PASS" >/dev/null 2>&1 || fail "mosquitto_passwd failed"
    fi
    : "${MQ_PORT:=$(free_port)}"
    cat >"$MQ/mosquitto.conf" <<CONF
listener $MQ_PORT 127.0.0.1
persistence true
persistence_location $MQ/data/
autosave_interval 1
allow_anonymous false
password_file $MQ/passwd
max_queued_messages 100000
user $(id -un)
CONF
    mosquitto -c "$MQ/mosquitto.conf" >>"$MQ/log" 2>&1 &
    MQ_PID=$!
    T_PIDS+=("$MQ_PID")
    local _
    for _ in $(seq 100); do
        mosquitto_pub -h 127.0.0.1 -p "$MQ_PORT" -u silt -P "$MQ_PASS" -t silt/ping -m x 2>/dev/null && return 0
        sleep 0.05
    done
    fail "mosquitto did not start: $(cat "$MQ/log")"
}
mqtt_stop() {
    kill -TERM "$MQ_PID" 2>/dev/null || true
    wait "$MQ_PID" 2>/dev/null || true
}
mqtt_pub() { mosquitto_pub -h 127.0.0.1 -p "$MQ_PORT" -u silt -P "$MQ_PASS" -t "$1" -q "$2" -m "$3"; }
