#!/usr/bin/env bash
# A Spark Connect server from the PySpark wheel alone (docs/ARCHITECTURE.md §4) on sc://127.0.0.1:15002, running
# its queries on local[2]. Its Python workers use .venv's Python, where jetconnect and the plugins
# are installed: that is the "installed on the server" half of jetconnect's Connect support.
# Logs under /tmp/jetconnect-spark-connect.
# Usage: spark-connect.sh start|stop|status|restart   (idempotent)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"
cd "$(dirname "$0")/../.."

DIR=/tmp/jetconnect-spark-connect
PORT="${JETCONNECT_SPARK_CONNECT_PORT:-15002}"
PY="$(pwd)/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"

answers() {  # the gRPC port accepts connections
    "$PY" -c "import socket, sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=1).close()" "$PORT" 2>/dev/null
}

start() {
    command -v java >/dev/null || die "java not found (run scripts/setup.sh)"
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
    write_pidfile "$DIR/server.pid" $!
    # readiness: the gRPC port answers
    wait_until 120 "$DIR/server.pid" answers || fail_start "the server did not open port $PORT" "$DIR/server.log"
    echo "spark connect up on sc://127.0.0.1:$PORT"
}

down() { ! answers; }

stop() {
    stop_pid "$DIR/server.pid" 15 --group
    wait_until 5 - down || die "something still answers on port $PORT"
    echo "spark connect stopped"
}

status() {
    if answers; then echo "spark connect up on sc://127.0.0.1:$PORT"; else echo "spark connect down"; exit 1; fi
}

server_main "$@"
