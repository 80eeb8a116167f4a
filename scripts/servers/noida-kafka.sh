#!/usr/bin/env bash
# A second Kafka-protocol broker for jetconnect's tests: noida-db (PyPI) with only its Kafka
# service, on 127.0.0.1:9094. It hides aborted transactions from read_committed consumers and
# answers offsets_for_times correctly (tansu does neither), reports true high watermarks for
# batched records, and talks to Debian's kcat (librdkafka 2.0.2), which start installs as root
# with apt-get when it is missing: the tests produce and consume with it as users do.
# Usage: noida-kafka.sh start|stop|status|restart. Idempotent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

HOST=127.0.0.1
PORT="${JETCONNECT_NOIDA_KAFKA_PORT:-9094}"
DATA=/tmp/jetconnect-noida-kafka
PYTHON="${PYTHON:-python}"

answers() {
    "$PYTHON" - "$HOST:$PORT" <<'PY' >/dev/null 2>&1
import sys
from confluent_kafka.admin import AdminClient
AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=2)
PY
}

binary() {
    "$PYTHON" -c 'import noida_db, os; print(os.path.join(os.path.dirname(noida_db.__file__), "noida-db"))' 2>/dev/null
}

install_kcat() {
    command -v kcat >/dev/null 2>&1 && return 0
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        echo "kcat is missing and this is not root on Debian: install the kcat package; its tests fail in CI, skip here" >&2
        return 0
    fi
    (apt_install kcat) || echo "could not install kcat with apt-get; its tests fail in CI, skip here" >&2
}

start() {
    install_kcat
    if answers; then
        echo "kafka (noida-db) already running on $HOST:$PORT"
        return 0
    fi
    if ! "$PYTHON" -c 'import noida_db, confluent_kafka' 2>/dev/null; then
        echo "installing noida-db and confluent-kafka with pip"
        "$PYTHON" -m pip install --quiet noida-db confluent-kafka
    fi
    local bin
    bin="$(binary)"
    chmod +x "$bin"
    mkdir -p "$DATA"
    # `up` daemonises by itself; its loader warns about a weak GLIBC symbol, harmlessly
    "$bin" up --data-dir "$DATA/data" --host "$HOST" --only kafka --kafka-port "$PORT" >"$DATA/up.log" 2>&1 \
        || fail_start "noida-db up failed" "$DATA/up.log"
    wait_until 20 - answers \
        || fail_start "kafka (noida-db) did not answer a metadata request on $HOST:$PORT" "$DATA/data/noida.log"
    echo "kafka (noida-db) listening on $HOST:$PORT"
}

stop() {
    local bin
    bin="$(binary)" || true
    if [[ -n "$bin" && -x "$bin" ]]; then
        "$bin" down --data-dir "$DATA/data" >/dev/null 2>&1 || true
    fi
    rm -rf "$DATA/data"  # test data only: every run starts empty
    echo "kafka (noida-db) stopped"
}

status() {
    if answers; then echo "kafka (noida-db) running on $HOST:$PORT"; else echo "kafka (noida-db) not running"; exit 1; fi
}

server_main "$@"
