#!/usr/bin/env bash
# A real single-node HDFS (Hadoop 2.7.3 NameNode + DataNode) on 127.0.0.1, WebHDFS on port 9870.
#
#   scripts/servers/hdfs.sh start|stop|status|restart  (and stop-namenode|start-namenode|restart-namenode for tests)
#
# The Hadoop jars come from the PyPI sdist of pyspark 2.4.8 (the only registry that ships them),
# cached under ~/.cache/jetconnect-hdfs so a second start takes seconds; Jersey 1, which the
# NameNode's WebHDFS servlet needs and that sdist lacks, comes from Debian. Data lives under
# /tmp/jetconnect-hdfs. Idempotent: `start` on a running server only checks that it answers.
#
# Environment: HDFS_BLOCK_SIZE (bytes, default 1 MiB so tests get multi-block files cheaply),
# HDFS_HTTP_PORT (default 9870), HDFS_RPC_PORT (default 9000), PYTHON (a Python with pip, to
# download the jars; default: the repo's .venv, then python, then Debian's python3 with pip).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

ROOT=/tmp/jetconnect-hdfs
CACHE=${JETCONNECT_CACHE:-$HOME/.cache/jetconnect-hdfs}
JARS=$CACHE/jars
CONF=$ROOT/conf
LOGS=$ROOT/logs
HTTP_PORT=${HDFS_HTTP_PORT:-9870}
RPC_PORT=${HDFS_RPC_PORT:-9000}
BLOCK_SIZE=${HDFS_BLOCK_SIZE:-1048576}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
URL=http://127.0.0.1:$HTTP_PORT/webhdfs/v1

install_java_and_jersey() {
    local missing=()
    command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    for pkg in libjersey1-core-java libjersey1-server-java libjersey1-servlet-java; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

python_with_pip() {
    for candidate in ${PYTHON:-} "$REPO/.venv/bin/python" python python3; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -m pip --version >/dev/null 2>&1; then
            echo "$candidate"; return 0
        fi
    done
    apt_install python3-pip python3-wheel >&2 && echo python3
}

fetch_hadoop_jars() {
    [ -f "$JARS/.complete" ] && return 0
    PYTHON=$(python_with_pip) || die "no Python with pip to download the Hadoop jars with"
    mkdir -p "$CACHE"
    local sdist=$CACHE/pyspark-2.4.8.tar.gz
    if [ ! -f "$sdist" ]; then
        echo "hdfs.sh: downloading the pyspark 2.4.8 sdist (220 MB) for its Hadoop 2.7.3 jars"
        # pip builds the sdist's metadata while downloading; that needs setuptools' bdist_wheel.
        "$PYTHON" -m pip install -q wheel >/dev/null 2>&1 || true
        "$PYTHON" -m pip download -q --no-deps --no-binary :all: --no-build-isolation \
            pyspark==2.4.8 -d "$CACHE" || die "pip download pyspark==2.4.8 failed"
    fi
    rm -rf "$JARS.tmp" && mkdir -p "$JARS.tmp"
    tar -xzf "$sdist" -C "$JARS.tmp" --strip-components=3 --wildcards 'pyspark-2.4.8/deps/jars/*.jar' \
        || die "could not extract the jars from $sdist"
    # Spark's and Scala's own jars are not needed by HDFS; leaving them out keeps the JVM lean.
    rm -f "$JARS.tmp"/spark-*.jar "$JARS.tmp"/scala-*.jar
    touch "$JARS.tmp/.complete"
    rm -rf "$JARS" && mv "$JARS.tmp" "$JARS"
}

write_conf() {
    mkdir -p "$CONF"/webapps/{hdfs,datanode,secondary} "$ROOT"/{name,data,logs}
    cat >"$CONF/core-site.xml" <<EOF
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:$RPC_PORT</value></property>
  <property><name>hadoop.tmp.dir</name><value>$ROOT/tmp</value></property>
</configuration>
EOF
    cat >"$CONF/hdfs-site.xml" <<EOF
<configuration>
  <property><name>dfs.namenode.name.dir</name><value>$ROOT/name</value></property>
  <property><name>dfs.datanode.data.dir</name><value>$ROOT/data</value></property>
  <property><name>dfs.replication</name><value>1</value></property>
  <property><name>dfs.blocksize</name><value>$BLOCK_SIZE</value></property>
  <property><name>dfs.namenode.fs-limits.min-block-size</name><value>4096</value></property>
  <property><name>dfs.permissions.enabled</name><value>false</value></property>
  <property><name>dfs.webhdfs.enabled</name><value>true</value></property>
  <property><name>dfs.namenode.rpc-address</name><value>127.0.0.1:$RPC_PORT</value></property>
  <property><name>dfs.namenode.http-address</name><value>127.0.0.1:$HTTP_PORT</value></property>
  <property><name>dfs.namenode.secondary.http-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.datanode.address</name><value>127.0.0.1:9866</value></property>
  <property><name>dfs.datanode.http.address</name><value>127.0.0.1:9864</value></property>
  <property><name>dfs.datanode.ipc.address</name><value>127.0.0.1:9867</value></property>
  <!-- WebHDFS redirects clients to the DataNode by this name: keep it on loopback. -->
  <property><name>dfs.datanode.hostname</name><value>127.0.0.1</value></property>
  <property><name>dfs.heartbeat.interval</name><value>1</value></property>
  <property><name>dfs.namenode.safemode.extension</name><value>0</value></property>
  <property><name>dfs.namenode.safemode.threshold-pct</name><value>0</value></property>
</configuration>
EOF
    cat >"$CONF/log4j.properties" <<'EOF'
log4j.rootLogger=WARN, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d %p %c{1}: %m%n
EOF
}

java_cmd() {  # java_cmd MAIN-CLASS ARGS...: sets JAVA_CMD; Hadoop 2.7 on Java 17 needs these opens.
    JAVA_CMD=(java -Xmx512m -XX:+UseSerialGC)
    for pkg in java.lang java.nio sun.nio.ch java.util java.lang.reflect java.net java.io java.security; do
        JAVA_CMD+=(--add-opens "java.base/$pkg=ALL-UNNAMED")
    done
    JAVA_CMD+=(-Dhadoop.log.dir="$LOGS" -Dhadoop.home.dir="$ROOT"
        -Dlog4j.configuration="file:$CONF/log4j.properties"
        -cp "$CONF:$JARS/*:/usr/share/java/jersey1-core.jar:/usr/share/java/jersey1-server.jar:/usr/share/java/jersey1-servlet.jar"
        "$@")
}

daemon_alive() { pid_alive "$ROOT/$1.pid"; }  # daemon_alive namenode|datanode

start_daemon() {  # start_daemon namenode|datanode
    daemon_alive "$1" && return 0
    local class=org.apache.hadoop.hdfs.server.namenode.NameNode
    [ "$1" = datanode ] && class=org.apache.hadoop.hdfs.server.datanode.DataNode
    java_cmd "$class"
    # setsid: the daemon outlives this script and the test run's process group.
    setsid "${JAVA_CMD[@]}" </dev/null >>"$LOGS/$1.log" 2>&1 &
    echo $! >"$ROOT/$1.pid"
}

# Readiness: a real WebHDFS write and read-back (proves NameNode, DataNode and the redirect work).
round_trip() {
    local probe=/tmp/jetconnect-hdfs-probe-$$ location body
    location=$(curl -s -o /dev/null -w '%{redirect_url}' -X PUT \
        "$URL$probe?op=CREATE&overwrite=true&user.name=root") || return 1
    [ -n "$location" ] || return 1
    curl -sf -X PUT -H 'Content-Type: application/octet-stream' --data-binary ready "$location" >/dev/null || return 1
    body=$(curl -sfL "$URL$probe?op=OPEN&user.name=root") || return 1
    curl -sf -X DELETE "$URL$probe?op=DELETE&user.name=root" >/dev/null || true
    [ "$body" = ready ]
}

daemons_answer() { daemon_alive namenode && daemon_alive datanode && round_trip; }

wait_ready() {  # wait_ready SECONDS: a round trip succeeds; fails at once when a daemon exits
    wait_until "$1" "$ROOT/namenode.pid,$ROOT/datanode.pid" round_trip && return 0
    for d in namenode datanode; do
        daemon_alive $d || fail_start "$d exited" "$LOGS/$d.log"
    done
    die "HDFS did not answer a WebHDFS round trip on $URL within $1 s; see $LOGS"
}

stop_daemon() { stop_pid "$ROOT/$1.pid" 10; }  # stop_daemon namenode|datanode

start() {
    if daemons_answer 2>/dev/null; then
        echo "hdfs: already running on $URL"; return 0
    fi
    install_java_and_jersey
    fetch_hadoop_jars
    write_conf
    if [ ! -f "$ROOT/name/current/VERSION" ]; then
        java_cmd org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive
        "${JAVA_CMD[@]}" >"$LOGS/format.log" 2>&1 || die "namenode -format failed; see $LOGS/format.log"
    fi
    start_daemon namenode
    start_daemon datanode
    wait_ready 90
    echo "hdfs: up on $URL (block size $BLOCK_SIZE)"
}

stop() { stop_daemon datanode; stop_daemon namenode; echo "hdfs: stopped"; }

status() {
    if daemons_answer 2>/dev/null; then echo "hdfs: running on $URL"; else echo "hdfs: not running"; exit 1; fi
}

# For tests of a NameNode outage: the DataNode and the data stay, the NameNode comes back.
verb_stop_namenode() { stop_daemon namenode; echo "hdfs: namenode stopped"; }
verb_start_namenode() { start_daemon namenode; wait_ready 90; echo "hdfs: namenode started"; }
verb_restart_namenode() { stop_daemon namenode; start_daemon namenode; wait_ready 90; echo "hdfs: namenode restarted"; }

server_main "$@"
