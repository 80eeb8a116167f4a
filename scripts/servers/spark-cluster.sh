#!/usr/bin/env bash
# A Spark standalone cluster from the PySpark wheel alone (docs/ARCHITECTURE.md §4): a master on
# spark://127.0.0.1:7077 and two workers with one core and 1 GiB each, every process on 127.0.0.1,
# logs and work dirs under /tmp/jetconnect-spark-cluster. Executors run jetconnect with the same
# Python as the driver (.venv), so plugins are "installed on every node" as on a real cluster.
# Usage: spark-cluster.sh start|stop|status|restart   (idempotent)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"
cd "$(dirname "$0")/../.."

DIR=/tmp/jetconnect-spark-cluster
MASTER_PORT="${JETCONNECT_SPARK_MASTER_PORT:-7077}"
UI_PORT="${JETCONNECT_SPARK_MASTER_UI_PORT:-8090}"
WORKERS=2
PY="$(pwd)/.venv/bin/python"
[ -x "$PY" ] || PY="$(command -v python3)"

spark_home() { "$PY" -c "import os, pyspark; print(os.path.dirname(pyspark.__file__))"; }

# The number of workers the master sees as ALIVE (0 when the master does not answer).
alive_workers() {
    "$PY" - "$UI_PORT" <<'EOF' 2>/dev/null || echo 0
import json, sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/json/", timeout=2) as reply:
    print(json.load(reply).get("aliveworkers", 0))
EOF
}

launch() {  # launch NAME ARGS...: a daemon in its own session, its pid in $DIR/NAME.pid
    local name=$1; shift
    SPARK_HOME="$(spark_home)" SPARK_LOCAL_IP=127.0.0.1 SPARK_LOG_DIR="$DIR" \
        PYSPARK_PYTHON="$PY" setsid "$(spark_home)/bin/spark-class" "$@" >"$DIR/$name.log" 2>&1 < /dev/null &
    write_pidfile "$DIR/$name.pid" $!
}

workers_alive() { [ "$(alive_workers)" -ge "$WORKERS" ]; }

start() {
    command -v java >/dev/null || die "java not found (run scripts/setup.sh)"
    if [ "$(alive_workers)" -ge "$WORKERS" ]; then echo "spark cluster already up on spark://127.0.0.1:$MASTER_PORT"; return 0; fi
    stop >/dev/null 2>&1 || true
    mkdir -p "$DIR"
    launch master org.apache.spark.deploy.master.Master \
        --host 127.0.0.1 --port "$MASTER_PORT" --webui-port "$UI_PORT"
    for i in $(seq 1 "$WORKERS"); do
        mkdir -p "$DIR/worker-$i"
        launch "worker-$i" org.apache.spark.deploy.worker.Worker "spark://127.0.0.1:$MASTER_PORT" \
            --host 127.0.0.1 --cores 1 --memory 1g --work-dir "$DIR/worker-$i" --webui-port 0
    done
    # readiness: the master reports both workers ALIVE
    wait_until 60 "$DIR/master.pid" workers_alive \
        || fail_start "the master did not report $WORKERS alive workers" "$DIR"/*.log
    echo "spark cluster up on spark://127.0.0.1:$MASTER_PORT ($WORKERS workers, 1 core each)"
}

stop() {
    for file in "$DIR"/*.pid; do
        [ -f "$file" ] && stop_pid "$file" 10 --group
    done
    echo "spark cluster stopped"
}

status() {
    local alive; alive=$(alive_workers)
    if [ "$alive" -ge "$WORKERS" ]; then echo "spark cluster up on spark://127.0.0.1:$MASTER_PORT ($alive workers)"
    else echo "spark cluster down ($alive workers alive)"; exit 1; fi
}

server_main "$@"
