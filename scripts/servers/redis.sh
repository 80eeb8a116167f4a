#!/usr/bin/env bash
# Redis for the imap plugin's networked store: Debian's redis-server on 127.0.0.1:6379, no
# persistence (tests own their data), data under /tmp/jetconnect-redis.
# Usage: redis.sh start|stop|status   (idempotent; installs redis-server if missing)
set -euo pipefail

PORT="${JETCONNECT_REDIS_PORT:-6379}"
DIR=/tmp/jetconnect-redis

ensure_installed() {
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return 0
    # Several installers may share this machine: wait for dpkg's lock instead of failing.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq redis-server redis-tools >/dev/null
    command -v redis-server >/dev/null || { echo "redis.sh: redis-server could not be installed" >&2; exit 1; }
}

answers() { [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = "PONG" ]; }

start() {
    ensure_installed
    if answers; then echo "redis already up on 127.0.0.1:$PORT"; return 0; fi
    mkdir -p "$DIR"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$PORT" --save "" --appendonly no \
        --dir "$DIR" --pidfile "$DIR/redis-$PORT.pid" --logfile "$DIR/redis-$PORT.log"
    for _ in $(seq 1 100); do  # readiness: PING answers, within 10 s
        if answers; then echo "redis up on 127.0.0.1:$PORT"; return 0; fi
        sleep 0.1
    done
    echo "redis.sh: redis-server did not answer PING on 127.0.0.1:$PORT; log:" >&2
    tail -20 "$DIR/redis-$PORT.log" >&2 || true
    exit 1
}

stop() {
    if answers; then redis-cli -h 127.0.0.1 -p "$PORT" shutdown nosave >/dev/null 2>&1 || true; fi
    for _ in $(seq 1 50); do answers || { echo "redis stopped"; return 0; }; sleep 0.1; done
    echo "redis.sh: redis on port $PORT did not stop" >&2; exit 1
}

status() {
    if answers; then echo "redis up on 127.0.0.1:$PORT"; else echo "redis down"; exit 1; fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
