#!/usr/bin/env bash
# A Spark Connect server from the PySpark wheel alone (docs/ARCHITECTURE.md §4) on sc://127.0.0.1:15002, running
# its queries on local[2]. Its Python workers use .venv's Python, where jetconnect and the plugins
# are installed: that is the "installed on the server" half of jetconnect's Connect support.
# Logs under /tmp/jetconnect-spark-connect.
# Usage: spark-connect.sh start|stop|status   (idempotent)
set -euo pipefail
cd "$(dirname "$0")/../.."

DIR=/tmp/jetconnect-spark-connect
PORT="${JETCONNECT_SPARK_CONNECT_PORT:-15002}"
PY="$(pwd)/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"

answers() {  # the gRPC port accepts connections
    "$PY" -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=1).close()" "$PORT" 2>/dev/null
}

start() {
    command -v java >/dev/null || { echo "spark-connect.sh: java not found (run scripts/setup.sh)" >&2; exit 1; }
    if answers; then echo "spark connect already up on sc://127.0.0.1:$PORT"; return 0; fi
    mkdir -p "$DIR"
    local home; home=$("$PY" -c "import os, pyspark; print(os.path.dirname(pyspark.__file__))")
    # --wait keeps the server in the foreground of its own session, so its pid is ours to stop
    SPARK_HOME="$home" SPARK_LOCAL_IP=127.0.0.1 SPARK_LOG_DIR="$DIR" SPARK_PID_DIR="$DIR" \
        PYSPARK_PYTHON="$PY" setsid "$home/sbin/start-connect-server.sh" --wait \
        --master "local[2]" --driver-memory 2g \
        --conf spark.connect.grpc.binding.address=127.0.0.1 \
        --conf spark.connect.grpc.binding.port="$PORT" \
        --conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 \
        --conf spark.ui.enabled=false --conf spark.sql.shuffle.partitions=2 \
        --conf spark.sql.streaming.forceDeleteTempCheckpointLocation=true \
        >"$DIR/server.log" 2>&1 < /dev/null &
    echo $! > "$DIR/server.pid"
    for _ in $(seq 1 1200); do  # readiness: the gRPC port answers, within 120 s
        if answers; then echo "spark connect up on sc://127.0.0.1:$PORT"; return 0; fi
        kill -0 "$(cat "$DIR/server.pid")" 2>/dev/null || break
        sleep 0.1
    done
    echo "spark-connect.sh: the server did not open port $PORT; log:" >&2
    tail -n 30 "$DIR/server.log" >&2 || true
    exit 1
}

stop() {
    if [ -f "$DIR/server.pid" ]; then
        local pid; pid=$(cat "$DIR/server.pid")
        kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 -- "-$pid" 2>/dev/null || true
        rm -f "$DIR/server.pid"
    fi
    for _ in $(seq 1 50); do answers || { echo "spark connect stopped"; return 0; }; sleep 0.1; done
    echo "spark-connect.sh: something still answers on port $PORT" >&2; exit 1
}

status() {
    if answers; then echo "spark connect up on sc://127.0.0.1:$PORT"; else echo "spark connect down"; exit 1; fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
