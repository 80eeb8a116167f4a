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
# above is every test's and stays as it is), kerberized and HTTPS only: a KDC of the script's own
# realm JETCONNECT.TEST on 127.0.0.1:60088 (Debian's krb5-kdc; principals and keytabs made here),
# hadoop.security.authentication=kerberos, SPNEGO on WebHDFS (https://localhost:9871, the
# DataNode it redirects to on https://localhost:9865), block tokens and SASL data transfer,
# RPC privacy on 127.0.0.1:8021, certificates for DNS:localhost from the script's own CA.
# `secured env` prints, as JSON, what a client needs (URL, CA, principal, keytab, krb5.conf).
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
CURL_TLS=()  # curl's options for the secured mode's HTTPS (its CA) and SPNEGO
JAVA_EXTRA=()  # the secured mode's JVM flags (its krb5.conf)
PROBE_USER=root  # who the readiness probe writes as

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
    JAVA_CMD+=("${JAVA_EXTRA[@]}")
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
        "$URL$probe?op=CREATE&overwrite=true&user.name=$PROBE_USER") || return 1
    [ -n "$location" ] || return 1
    curl "${CURL_TLS[@]}" -sf -X PUT -H 'Content-Type: application/octet-stream' --data-binary ready "$location" >/dev/null || return 1
    body=$(curl "${CURL_TLS[@]}" -sfL "$URL$probe?op=OPEN&user.name=$PROBE_USER") || return 1
    curl "${CURL_TLS[@]}" -sf -X DELETE "$URL$probe?op=DELETE&user.name=$PROBE_USER" >/dev/null || true
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
  <property><name>hadoop.security.authentication</name><value>kerberos</value></property>
  <property><name>hadoop.security.authorization</name><value>true</value></property>
  <property><name>hadoop.rpc.protection</name><value>privacy</value></property>
  <!-- SPNEGO on every web endpoint, WebHDFS included (Hadoop 3 reads WebHDFS's filter from these) -->
  <property><name>hadoop.http.authentication.type</name><value>kerberos</value></property>
  <property><name>hadoop.http.authentication.simple.anonymous.allowed</name><value>false</value></property>
  <property><name>hadoop.http.authentication.kerberos.principal</name><value>HTTP/localhost@$REALM</value></property>
  <property><name>hadoop.http.authentication.kerberos.keytab</name><value>$KRB/hdfs.keytab</value></property>
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
  <!-- Kerberos: the daemons' principals and keytab, SPNEGO for WebHDFS, block access tokens and
       SASL on data transfer (what lets a secure DataNode use unprivileged ports, with HTTPS_ONLY) -->
  <property><name>dfs.namenode.kerberos.principal</name><value>hdfs/localhost@$REALM</value></property>
  <property><name>dfs.namenode.keytab.file</name><value>$KRB/hdfs.keytab</value></property>
  <property><name>dfs.datanode.kerberos.principal</name><value>hdfs/localhost@$REALM</value></property>
  <property><name>dfs.datanode.keytab.file</name><value>$KRB/hdfs.keytab</value></property>
  <property><name>dfs.web.authentication.kerberos.principal</name><value>HTTP/localhost@$REALM</value></property>
  <property><name>dfs.web.authentication.kerberos.keytab</name><value>$KRB/hdfs.keytab</value></property>
  <property><name>dfs.block.access.token.enable</name><value>true</value></property>
  <property><name>dfs.data.transfer.protection</name><value>privacy</value></property>
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
    STORE_PASSWORD=$STORE_PASSWORD KRB_PASSWORD=$KRB_PASSWORD python3 - "$S_TLS" "$S_HTTPS_PORT" "$S_RPC_PORT" \
        "$KRB" "$REALM" "$KRB_USER" <<'PY'
import json, os, sys
tls, port, rpc, krb, realm, user = sys.argv[1:]
print(json.dumps({
    "url": f"https://localhost:{port}", "address_url": f"https://127.0.0.1:{port}",
    "plaintext_url": f"http://localhost:{port}", "rpc_address": f"hdfs://127.0.0.1:{rpc}",
    "ca": f"{tls}/ca.pem", "untrusted_ca": f"{tls}/untrusted/ca.pem",
    "store_password": os.environ["STORE_PASSWORD"],
    "realm": realm, "principal": f"{user}@{realm}", "keytab": f"{krb}/{user}.keytab",
    "krb5_conf": f"{krb}/krb5.conf", "kerberos_password": os.environ["KRB_PASSWORD"],
    "service_keytab": f"{krb}/hdfs.keytab",
    "private_keys": [f"{tls}/{n}" for n in ("ca.key", "hdfs.key", "untrusted/ca.key")],
    "keytabs": [f"{krb}/{user}.keytab", f"{krb}/hdfs.keytab"],
}, indent=2))
PY
}

# --- Kerberos: a KDC of the script's own realm, and the secured HDFS's principals -------------------

KRB=$SECURED/kerberos
REALM=JETCONNECT.TEST
KDC_PORT=${HDFS_KDC_PORT:-60088}
# The user a client logs in as: its keytab, and a password holding ' " @ % for kinit.
KRB_USER=jetconnect
KRB_PASSWORD='krb-Hd'\''q"7@x%41'

kerberos_install() {
    command -v krb5kdc >/dev/null 2>&1 && command -v kadmin.local >/dev/null 2>&1 && command -v kinit >/dev/null 2>&1 \
        || apt_install krb5-kdc krb5-admin-server krb5-user
}

kerberos_conf() {  # krb5.conf (clients, the JVMs) and kdc.conf: loopback only, TCP, no DNS
    mkdir -p "$KRB"
    cat >"$KRB/krb5.conf" <<CONF
[libdefaults]
    default_realm = $REALM
    dns_lookup_kdc = false
    dns_lookup_realm = false
    dns_canonicalize_hostname = false
    rdns = false
    udp_preference_limit = 1
    ticket_lifetime = 24h
    renew_lifetime = 7d
    forwardable = true
    permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
    $REALM = {
        kdc = 127.0.0.1:$KDC_PORT
    }
[domain_realm]
    localhost = $REALM
CONF
    cat >"$KRB/kdc.conf" <<CONF
[kdcdefaults]
    kdc_listen = 127.0.0.1:$KDC_PORT
    kdc_tcp_listen = 127.0.0.1:$KDC_PORT
[realms]
    $REALM = {
        database_name = $KRB/principal
        key_stash_file = $KRB/stash
        acl_file = $KRB/kadm5.acl
        max_life = 24h
        max_renewable_life = 7d
        supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
    }
[logging]
    kdc = FILE:$KRB/kdc.log
CONF
    : >"$KRB/kadm5.acl"
}

krb() { KRB5_CONFIG=$KRB/krb5.conf KRB5_KDC_PROFILE=$KRB/kdc.conf "$@"; }  # krb CMD...: with this realm's files

kerberos_realm() {  # the database, the principals and their keytabs, made once
    [ -s "$KRB/hdfs.keytab" ] && [ -s "$KRB/$KRB_USER.keytab" ] && return 0
    rm -f "$KRB"/principal* "$KRB/stash"
    local master
    master=$(head -c 24 /dev/urandom | base64)
    printf '%s\n%s\n' "$master" "$master" | krb kdb5_util create -s -r "$REALM" >"$KRB/create.log" 2>&1 \
        || die "kdb5_util create failed: $(tail -3 "$KRB/create.log")"
    local principal
    for principal in hdfs/localhost HTTP/localhost; do
        krb kadmin.local -q "addprinc -randkey $principal" >>"$KRB/create.log" 2>&1 || die "addprinc $principal failed"
    done
    # the user's password reaches kadmin on stdin (its prompt), never a command line
    printf '%s\n%s\n' "$KRB_PASSWORD" "$KRB_PASSWORD" | krb kadmin.local -q "addprinc $KRB_USER" >>"$KRB/create.log" 2>&1 \
        || die "addprinc $KRB_USER failed"
    ( umask 077
      krb kadmin.local -q "ktadd -k $KRB/hdfs.keytab hdfs/localhost HTTP/localhost" >>"$KRB/create.log" 2>&1 \
        || die "ktadd of the services failed"
      # -norandkey: the user keeps the password above, and the keytab holds the same keys
      krb kadmin.local -q "ktadd -norandkey -k $KRB/$KRB_USER.keytab $KRB_USER" >>"$KRB/create.log" 2>&1 \
        || die "ktadd of $KRB_USER failed" )
}

kdc_answers() {  # a ticket for the user from its keytab, into a throw-away cache
    local cache
    cache=$(mktemp -u "$KRB/probe.XXXXXX")
    krb env KRB5CCNAME="FILE:$cache" kinit -k -t "$KRB/$KRB_USER.keytab" "$KRB_USER@$REALM" >/dev/null 2>&1
    local ok=$?
    rm -f "$cache"
    return $ok
}

kerberos_start() {
    kerberos_install
    kerberos_conf
    kerberos_realm
    if ! pid_alive "$KRB/kdc.pid"; then
        # not through krb(): a function run in the background is a subshell, whose pid is not the KDC's
        KRB5_CONFIG=$KRB/krb5.conf KRB5_KDC_PROFILE=$KRB/kdc.conf setsid krb5kdc -n -r "$REALM" \
            </dev/null >>"$KRB/kdc.out" 2>&1 9>&- &
        write_pidfile "$KRB/kdc.pid" $!
    fi
    wait_until 20 "$KRB/kdc.pid" kdc_answers || fail_start "the KDC did not give $KRB_USER a ticket" "$KRB/kdc.log" "$KRB/kdc.out"
}

kinit_script() { kinit -k -t "$KRB/$KRB_USER.keytab" "$KRB_USER@$REALM" || die "kinit from $KRB/$KRB_USER.keytab failed"; }

verb_secured() {  # secured start|stop|status|env: the shared verbs, on the secured instance's files
    ROOT=$SECURED CONF=$SECURED/conf LOGS=$SECURED/logs SECURED_MODE=1
    HTTP_PORT=$S_HTTPS_PORT RPC_PORT=$S_RPC_PORT
    URL=https://localhost:$S_HTTPS_PORT/webhdfs/v1
    CURL_TLS=(--cacert "$S_TLS/ca.pem" --negotiate -u :)
    JAVA_EXTRA=(-Djava.security.krb5.conf="$KRB/krb5.conf")
    # curl's SPNEGO takes its ticket from this cache (kinit'ed from the user's keytab by the probe)
    export KRB5_CONFIG=$KRB/krb5.conf KRB5CCNAME=FILE:$KRB/script.ccache
    mkdir -p "$ROOT"
    PROBE_USER=$KRB_USER
    case "${1:-}" in
        start) secured_pki; kerberos_start; kinit_script; start ;;
        stop) stop; stop_pid "$KRB/kdc.pid" 10; echo "hdfs: KDC stopped" ;;
        status) pid_alive "$KRB/kdc.pid" && kinit_script 2>/dev/null || { echo "hdfs: KDC not running"; exit 1; }; status ;;
        env) secured_env ;;
        *) echo "usage: $0 secured start|stop|status|env" >&2; exit 2 ;;
    esac
}

server_main "$@"
