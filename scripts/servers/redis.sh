#!/usr/bin/env bash
# Redis for the imap plugin's networked store: Debian's redis-server on 127.0.0.1:6379, no
# persistence (tests own their data), data under /tmp/jetconnect-redis.
# Usage: redis.sh start|stop|status|restart   (idempotent; installs redis-server if missing)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

PORT="${JETCONNECT_REDIS_PORT:-6379}"
DIR=/tmp/jetconnect-redis
LOG=$DIR/redis-$PORT.log

answers() { [ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = "PONG" ]; }
down() { ! answers; }

start() {
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null || apt_install redis-server redis-tools
    if answers; then echo "redis already up on 127.0.0.1:$PORT"; return 0; fi
    mkdir -p "$DIR"
    redis-server --daemonize yes --bind 127.0.0.1 --port "$PORT" --save "" --appendonly no \
        --dir "$DIR" --pidfile "$DIR/redis-$PORT.pid" --logfile "$LOG"
    wait_until 10 - answers || fail_start "redis-server did not answer PING on 127.0.0.1:$PORT" "$LOG"
    echo "redis up on 127.0.0.1:$PORT"
}

stop() {
    if answers; then redis-cli -h 127.0.0.1 -p "$PORT" shutdown nosave >/dev/null 2>&1 || true; fi
    wait_until 5 - down || die "redis on port $PORT did not stop"
    echo "redis stopped"
}

status() {
    if answers; then echo "redis up on 127.0.0.1:$PORT"; else echo "redis down"; exit 1; fi
}

server_main "$@"
