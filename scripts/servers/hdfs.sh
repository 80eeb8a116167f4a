#!/usr/bin/env bash
# A real single-node HDFS (Hadoop 3.5.0 NameNode + DataNode, two JVMs) on 127.0.0.1.
#
#   scripts/servers/hdfs.sh start|stop|status|restart
#   scripts/servers/hdfs.sh stop-namenode|start-namenode|restart-namenode   (NameNode outage tests)
#   scripts/servers/hdfs.sh kill-datanode|start-datanode                    (DataNode crash tests)
#   scripts/servers/hdfs.sh secured start|stop|status|env
#
# Hadoop 3.5.0 is the first release with full Java 17 support. Its jars come from Maven Central
# through scripts/servers/hdfs/pom.xml (`mvn dependency:copy-dependencies`), cached under
# ~/.cache/jetconnect-hdfs: a second start does not touch Maven. NameNode and DataNode run as two
# JVMs (not hadoop-client-minicluster's one) so that a test can SIGKILL the DataNode alone.
# Ports are Hadoop 3's: NameNode RPC 8020, HTTP (WebHDFS) 9870; DataNode HTTP 9864, data 9866,
# IPC 9867; all on 127.0.0.1, and the DataNode's hostname is 127.0.0.1 too (WebHDFS redirects
# clients to it). Data lives under /tmp/jetconnect-hdfs. Idempotent: `start` on a running server
# only checks that it answers.
#
# `secured` runs a second HDFS (its own NameNode and DataNode, storage and ports; the plain one
# above is every test's and stays as it is) whose web endpoints speak HTTPS only
# (dfs.http.policy=HTTPS_ONLY): WebHDFS on https://localhost:9871, the DataNode it redirects to on
# https://localhost:9865, certificates for DNS:localhost from the script's own CA; RPC on
# 127.0.0.1:8021. Authentication stays Hadoop's simple one: this HDFS has no Kerberos (see
# plugins/hdfs/README.md). `secured env` prints, as JSON, what a client needs.
#
# Environment: HDFS_BLOCK_SIZE (bytes, default 1 MiB so tests get multi-block files cheaply),
# HDFS_HTTP_PORT (default 9870), HDFS_RPC_PORT (default 8020), HDFS_HEAP (per JVM, default 512m).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

HADOOP_VERSION=3.5.0
ROOT=/tmp/jetconnect-hdfs
CACHE=${JETCONNECT_CACHE:-$HOME/.cache/jetconnect-hdfs}
JARS=$CACHE/hadoop-$HADOOP_VERSION
CONF=$ROOT/conf
LOGS=$ROOT/logs
HTTP_PORT=${HDFS_HTTP_PORT:-9870}
RPC_PORT=${HDFS_RPC_PORT:-8020}
BLOCK_SIZE=${HDFS_BLOCK_SIZE:-1048576}
HEAP=${HDFS_HEAP:-512m}
POM=$(cd "$(dirname "${BASH_SOURCE[0]}")/hdfs" && pwd)/pom.xml
URL=http://127.0.0.1:$HTTP_PORT/webhdfs/v1
SECURED_MODE=0
CURL_TLS=()  # curl's options for the secured mode's HTTPS (its CA)

# One verb at a time: a chaos run restarting the NameNode while a test run's `start` found it down
# once raced two NameNodes for the same ports and storage. The daemons do not inherit the lock.
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
flock 9

install_tools() {
    local missing=()
    command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
}

fetch_hadoop_jars() { maven_jars "$POM" "$JARS" -DincludeScope=runtime; }  # the pom's runtime classpath, once

write_conf() {
    [ "$SECURED_MODE" = 1 ] && { write_secured_conf; return; }
    # HttpServer2 needs webapps/<name> on the classpath; Maven's hadoop-hdfs jar has no web UI, and
    # WebHDFS (a servlet) does not need one: empty folders will do.
    mkdir -p "$CONF"/webapps/{hdfs,datanode,secondary} "$ROOT"/{name,data,logs}
    cat >"$CONF/core-site.xml" <<XML
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:$RPC_PORT</value></property>
  <property><name>hadoop.tmp.dir</name><value>$ROOT/tmp</value></property>
</configuration>
XML
    cat >"$CONF/hdfs-site.xml" <<XML
<configuration>
  <property><name>dfs.namenode.name.dir</name><value>$ROOT/name</value></property>
  <property><name>dfs.datanode.data.dir</name><value>$ROOT/data</value></property>
  <property><name>dfs.replication</name><value>1</value></property>
  <property><name>dfs.blocksize</name><value>$BLOCK_SIZE</value></property>
  <property><name>dfs.namenode.fs-limits.min-block-size</name><value>4096</value></property>
  <property><name>dfs.permissions.enabled</name><value>false</value></property>
  <property><name>dfs.webhdfs.enabled</name><value>true</value></property>
  <property><name>dfs.namenode.rpc-address</name><value>127.0.0.1:$RPC_PORT</value></property>
  <property><name>dfs.namenode.rpc-bind-host</name><value>127.0.0.1</value></property>
  <property><name>dfs.namenode.http-address</name><value>127.0.0.1:$HTTP_PORT</value></property>
  <property><name>dfs.namenode.http-bind-host</name><value>127.0.0.1</value></property>
  <property><name>dfs.namenode.https-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.namenode.secondary.http-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.namenode.secondary.https-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.datanode.address</name><value>127.0.0.1:9866</value></property>
  <property><name>dfs.datanode.http.address</name><value>127.0.0.1:9864</value></property>
  <property><name>dfs.datanode.https.address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.datanode.ipc.address</name><value>127.0.0.1:9867</value></property>
  <!-- WebHDFS redirects clients to the DataNode by this name: keep it on loopback. -->
  <property><name>dfs.datanode.hostname</name><value>127.0.0.1</value></property>
  <property><name>dfs.heartbeat.interval</name><value>1</value></property>
  <property><name>dfs.namenode.safemode.extension</name><value>0</value></property>
  <property><name>dfs.namenode.safemode.threshold-pct</name><value>0</value></property>
  <!-- A DataNode that was SIGKILLed re-registers on restart; no need to wait for block reports. -->
  <property><name>dfs.blockreport.initialDelay</name><value>0</value></property>
</configuration>
XML
    cat >"$CONF/log4j.properties" <<'PROPS'
log4j.rootLogger=WARN, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d %p %c{1}: %m%n
PROPS
}

java_cmd() {  # java_cmd MAIN-CLASS ARGS...: sets JAVA_CMD
    JAVA_CMD=(java "-Xmx$HEAP" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.net.preferIPv4Stack=true)
    # The packages Hadoop's own launcher (hadoop-functions.sh) opens on Java 17.
    for pkg in java.io java.lang java.lang.reflect java.math java.net java.nio java.text java.util \
        java.util.concurrent java.util.zip sun.nio.ch sun.security.util sun.security.x509; do
        JAVA_CMD+=(--add-opens "java.base/$pkg=ALL-UNNAMED")
    done
    JAVA_CMD+=(-Dhadoop.log.dir="$LOGS" -Dhadoop.home.dir="$ROOT" -Dhadoop.conf.dir="$CONF"
        -Dlog4j.configuration="file:$CONF/log4j.properties" -cp "$CONF:$JARS/*" "$@")
}

daemon_alive() { pid_alive "$ROOT/$1.pid"; }  # daemon_alive namenode|datanode

start_daemon() {  # start_daemon namenode|datanode
    daemon_alive "$1" && return 0
    local class=org.apache.hadoop.hdfs.server.namenode.NameNode
    [ "$1" = datanode ] && class=org.apache.hadoop.hdfs.server.datanode.DataNode
    java_cmd "$class"
    # setsid: the daemon outlives this script and the test run's process group.
    setsid "${JAVA_CMD[@]}" </dev/null >>"$LOGS/$1.log" 2>&1 9>&- &
    write_pidfile "$ROOT/$1.pid" $!
}

# Readiness: a real WebHDFS write and read-back (proves NameNode, DataNode and the redirect work).
round_trip() {
    local probe=/tmp/jetconnect-hdfs-probe-$$ location body
    location=$(curl "${CURL_TLS[@]}" -s -o /dev/null -w '%{redirect_url}' -X PUT \
        "$URL$probe?op=CREATE&overwrite=true&user.name=root") || return 1
    [ -n "$location" ] || return 1
    curl "${CURL_TLS[@]}" -sf -X PUT -H 'Content-Type: application/octet-stream' --data-binary ready "$location" >/dev/null || return 1
    body=$(curl "${CURL_TLS[@]}" -sfL "$URL$probe?op=OPEN&user.name=root") || return 1
    curl "${CURL_TLS[@]}" -sf -X DELETE "$URL$probe?op=DELETE&user.name=root" >/dev/null || true
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
    install_tools
    fetch_hadoop_jars
    write_conf
    # Storage formatted by another Hadoop (the 2.7.3 this script ran before) makes a NameNode refuse
    # to start until upgraded; it is test data in /tmp, so it starts afresh instead.
    if [ -f "$ROOT/name/current/VERSION" ] && [ "$(cat "$ROOT/hadoop-version" 2>/dev/null)" != "$HADOOP_VERSION" ]; then
        echo "hdfs.sh: $ROOT holds another Hadoop's storage; formatting afresh for $HADOOP_VERSION"
        rm -rf "$ROOT/name" "$ROOT/data" && mkdir -p "$ROOT/name" "$ROOT/data"
    fi
    if [ ! -f "$ROOT/name/current/VERSION" ]; then
        java_cmd org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive
        "${JAVA_CMD[@]}" >"$LOGS/format.log" 2>&1 || die "namenode -format failed; see $LOGS/format.log"
    fi
    echo "$HADOOP_VERSION" >"$ROOT/hadoop-version"
    start_daemon namenode
    start_daemon datanode
    wait_ready 90
    echo "hdfs: Hadoop $HADOOP_VERSION up on $URL, RPC hdfs://127.0.0.1:$RPC_PORT (block size $BLOCK_SIZE)"
}

stop() { stop_daemon datanode; stop_daemon namenode; echo "hdfs: stopped"; }

status() {
    if daemons_answer 2>/dev/null; then echo "hdfs: running on $URL"; else echo "hdfs: not running"; exit 1; fi
}

# For tests of a NameNode outage: the DataNode and the data stay, the NameNode comes back.
verb_stop_namenode() { stop_daemon namenode; echo "hdfs: namenode stopped"; }
verb_start_namenode() { start_daemon namenode; wait_ready 90; echo "hdfs: namenode started"; }
verb_restart_namenode() { stop_daemon namenode; start_daemon namenode; wait_ready 90; echo "hdfs: namenode restarted"; }

# For DataNode crash tests: SIGKILL (no shutdown hook runs, as in a power cut), then a restart on
# the same storage and ports; the NameNode takes the DataNode back when it re-registers.
verb_kill_datanode() {
    if daemon_alive datanode; then
        local pid
        pid=$(pid_of "$ROOT/datanode.pid")
        kill -KILL "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done  # its ports are free once it is gone
    fi
    rm -f "$ROOT/datanode.pid"
    echo "hdfs: datanode killed"
}
verb_start_datanode() { start_daemon datanode; wait_ready 90; echo "hdfs: datanode started"; }

# --- the secured HDFS ----------------------------------------------------------------------------

SECURED=$ROOT/secured
S_TLS=$SECURED/tls
S_RPC_PORT=${HDFS_SECURED_RPC_PORT:-8021}
S_HTTPS_PORT=${HDFS_SECURED_HTTPS_PORT:-9871}
# The daemons' keystore: read by them only, a secret all the same.
STORE_PASSWORD='store-Hdfs-7d2e4b'

write_secured_conf() {
    mkdir -p "$CONF"/webapps/{hdfs,datanode,secondary} "$ROOT"/{name,data,logs}
    cat >"$CONF/core-site.xml" <<XML
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:$S_RPC_PORT</value></property>
  <property><name>hadoop.tmp.dir</name><value>$ROOT/tmp</value></property>
</configuration>
XML
    cat >"$CONF/hdfs-site.xml" <<XML
<configuration>
  <property><name>dfs.namenode.name.dir</name><value>$ROOT/name</value></property>
  <property><name>dfs.datanode.data.dir</name><value>$ROOT/data</value></property>
  <property><name>dfs.replication</name><value>1</value></property>
  <property><name>dfs.blocksize</name><value>$BLOCK_SIZE</value></property>
  <property><name>dfs.namenode.fs-limits.min-block-size</name><value>4096</value></property>
  <property><name>dfs.permissions.enabled</name><value>false</value></property>
  <property><name>dfs.webhdfs.enabled</name><value>true</value></property>
  <!-- Web endpoints (WebHDFS) over HTTPS only: no plaintext HTTP port at all. -->
  <property><name>dfs.http.policy</name><value>HTTPS_ONLY</value></property>
  <property><name>dfs.namenode.rpc-address</name><value>127.0.0.1:$S_RPC_PORT</value></property>
  <property><name>dfs.namenode.rpc-bind-host</name><value>127.0.0.1</value></property>
  <property><name>dfs.namenode.https-address</name><value>localhost:$S_HTTPS_PORT</value></property>
  <property><name>dfs.namenode.https-bind-host</name><value>127.0.0.1</value></property>
  <property><name>dfs.namenode.http-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.namenode.secondary.http-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.namenode.secondary.https-address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.datanode.address</name><value>127.0.0.1:9876</value></property>
  <property><name>dfs.datanode.http.address</name><value>127.0.0.1:0</value></property>
  <property><name>dfs.datanode.https.address</name><value>127.0.0.1:9865</value></property>
  <property><name>dfs.datanode.ipc.address</name><value>127.0.0.1:9877</value></property>
  <!-- WebHDFS redirects clients to the DataNode by this name, which its certificate holds. -->
  <property><name>dfs.datanode.hostname</name><value>localhost</value></property>
  <property><name>dfs.heartbeat.interval</name><value>1</value></property>
  <property><name>dfs.namenode.safemode.extension</name><value>0</value></property>
  <property><name>dfs.namenode.safemode.threshold-pct</name><value>0</value></property>
  <property><name>dfs.blockreport.initialDelay</name><value>0</value></property>
</configuration>
XML
    ( umask 077 && cat >"$CONF/ssl-server.xml" <<XML
<configuration>
  <property><name>ssl.server.keystore.location</name><value>$S_TLS/hdfs.p12</value></property>
  <property><name>ssl.server.keystore.type</name><value>pkcs12</value></property>
  <property><name>ssl.server.keystore.password</name><value>$STORE_PASSWORD</value></property>
  <property><name>ssl.server.keystore.keypassword</name><value>$STORE_PASSWORD</value></property>
  <property><name>ssl.server.truststore.location</name><value>$S_TLS/ca.p12</value></property>
  <property><name>ssl.server.truststore.type</name><value>pkcs12</value></property>
  <property><name>ssl.server.truststore.password</name><value>$STORE_PASSWORD</value></property>
</configuration>
XML
    )
    cat >"$CONF/log4j.properties" <<'PROPS'
log4j.rootLogger=WARN, console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d %p %c{1}: %m%n
PROPS
}

secured_pki() {
    make_ca "$S_TLS" "jetconnect HDFS test CA"
    make_server_cert "$S_TLS" hdfs "DNS:localhost"
    make_pkcs12 "$S_TLS" hdfs "$STORE_PASSWORD"
    make_truststore "$S_TLS" "$STORE_PASSWORD"
    make_ca "$S_TLS/untrusted" "a CA nobody here trusts"
}

secured_env() {
    STORE_PASSWORD=$STORE_PASSWORD python3 - "$S_TLS" "$S_HTTPS_PORT" "$S_RPC_PORT" <<'PY'
import json, os, sys
tls, port, rpc = sys.argv[1:]
print(json.dumps({
    "url": f"https://localhost:{port}", "address_url": f"https://127.0.0.1:{port}",
    "plaintext_url": f"http://localhost:{port}", "rpc_address": f"hdfs://127.0.0.1:{rpc}",
    "ca": f"{tls}/ca.pem", "untrusted_ca": f"{tls}/untrusted/ca.pem",
    "store_password": os.environ["STORE_PASSWORD"],
    "private_keys": [f"{tls}/{n}" for n in ("ca.key", "hdfs.key", "untrusted/ca.key")],
}, indent=2))
PY
}

verb_secured() {  # secured start|stop|status|env: the shared verbs, on the secured instance's files
    ROOT=$SECURED CONF=$SECURED/conf LOGS=$SECURED/logs SECURED_MODE=1
    HTTP_PORT=$S_HTTPS_PORT RPC_PORT=$S_RPC_PORT
    URL=https://localhost:$S_HTTPS_PORT/webhdfs/v1
    CURL_TLS=(--cacert "$S_TLS/ca.pem")
    mkdir -p "$ROOT"
    case "${1:-}" in
        start) secured_pki; start ;;
        stop) stop ;;
        status) status ;;
        env) secured_env ;;
        *) echo "usage: $0 secured start|stop|status|env" >&2; exit 2 ;;
    esac
}

server_main "$@"
