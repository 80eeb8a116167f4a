#!/usr/bin/env bash
# A Schema Registry for jetconnect's tests: Apicurio Registry 3.3.3, whose Confluent-compatible API
# (/apis/ccompat/v7) confluent-kafka's SchemaRegistryClient and serializers talk to, on
# http://127.0.0.1:8081 (its management interface, health and metrics, on 127.0.0.1:9001),
# in-memory storage (a restart forgets every schema), heap 384 MiB.
#
#   scripts/servers/schema-registry.sh start|stop|status|restart
#
# The registry is Apicurio's Quarkus fast-jar from Maven Central
# (io.apicurio:apicurio-registry-app:3.3.3:tar.gz:all, 158 MB), fetched once with
# `mvn dependency:get` and unpacked under ~/.cache/jetconnect-schema-registry; later starts never
# run Maven. Confluent's own registry is not on Maven Central. Apicurio 3 needs Java 21 or newer:
# the script runs it on the newest JDK >= 21 under /usr/lib/jvm (the Temurin 25 JDK here), or
# $SCHEMA_REGISTRY_JAVA_HOME, and says so clearly when there is none. OpenTelemetry stays off
# (its SDK is disabled; nothing is exported), and so does its "usage telemetry" (which client
# fetched which schema, kept in its own storage: nothing leaves the machine, but the tests need
# none of it); both interfaces bind to 127.0.0.1 only, and nothing else listens (checked: ss).
# Ready means a real API answer: GET /apis/ccompat/v7/subjects returns a JSON list. Logs and the
# pid file are under /tmp/jetconnect-schema-registry.
#
# Environment: SCHEMA_REGISTRY_HEAP (-Xmx, default 384m), SCHEMA_REGISTRY_JAVA_HOME (a JDK >= 21).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

VERSION=3.3.3
HOST=127.0.0.1
PORT=8081
MANAGEMENT_PORT=9001
BASE=/tmp/jetconnect-schema-registry
PIDFILE=$BASE/registry.pid
LOG=$BASE/registry.log
CACHE=${JETCONNECT_CACHE:-$HOME/.cache/jetconnect-schema-registry}
APP=$CACHE/apicurio-registry-$VERSION
HEAP=${SCHEMA_REGISTRY_HEAP:-384m}
ARTIFACT=io.apicurio:apicurio-registry-app:$VERSION:tar.gz:all
# Maven's local repository, where dependency:get leaves the archive (mvn's own default).
M2=${MAVEN_REPO_LOCAL:-$HOME/.m2/repository}
ARCHIVE=$M2/io/apicurio/apicurio-registry-app/$VERSION/apicurio-registry-app-$VERSION-all.tar.gz

java_version() {  # java_version JAVA: its feature version (17, 21, 25), or nothing
    "$1" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}' | cut -d. -f1
}

find_java() {  # the java to run Apicurio 3 with: Java 21 or newer, the newest under /usr/lib/jvm
    local home best="" best_version=0 version
    if [ -n "${SCHEMA_REGISTRY_JAVA_HOME:-}" ]; then
        version=$(java_version "$SCHEMA_REGISTRY_JAVA_HOME/bin/java")
        [ "${version:-0}" -ge 21 ] 2>/dev/null \
            || die "SCHEMA_REGISTRY_JAVA_HOME=$SCHEMA_REGISTRY_JAVA_HOME is Java ${version:-unknown}; Apicurio Registry $VERSION needs Java 21 or newer"
        echo "$SCHEMA_REGISTRY_JAVA_HOME/bin/java"
        return 0
    fi
    for home in /usr/lib/jvm/*/; do
        [ -x "$home/bin/java" ] || continue
        version=$(java_version "$home/bin/java")
        if [ "${version:-0}" -gt "$best_version" ] 2>/dev/null; then best=$home/bin/java best_version=$version; fi
    done
    [ "$best_version" -ge 21 ] 2>/dev/null \
        || die "Apicurio Registry $VERSION needs Java 21 or newer, and /usr/lib/jvm has none (newest: Java ${best_version}); install a JDK >= 21 there (e.g. Temurin 25) or set SCHEMA_REGISTRY_JAVA_HOME"
    echo "${best%/}" | sed 's#//*#/#g'
}

install() {  # the registry's fast-jar, unpacked once into the cache
    [ -f "$APP/.complete" ] && [ -f "$APP/quarkus-run.jar" ] && return 0
    if [ ! -f "$ARCHIVE" ]; then
        command -v mvn >/dev/null 2>&1 || apt_install maven
        echo "$SERVER_SCRIPT: fetching $ARTIFACT from Maven Central (158 MB, once)" >&2
        mvn -q -B dependency:get -Dartifact="$ARTIFACT" -Dtransitive=false >&2 \
            || die "mvn could not fetch $ARTIFACT"
        [ -f "$ARCHIVE" ] || die "mvn fetched $ARTIFACT but $ARCHIVE is not there"
    fi
    # Maven checked the archive against Central's checksum; unpacked beside the cache first, so an
    # interrupted unpack never passes for a complete one.
    rm -rf "$APP.tmp" && mkdir -p "$APP.tmp"
    tar -xzf "$ARCHIVE" -C "$APP.tmp" || die "could not unpack $ARCHIVE"
    [ -f "$APP.tmp/quarkus-run.jar" ] || die "$ARCHIVE holds no quarkus-run.jar"
    echo "$ARTIFACT" >"$APP.tmp/.complete"
    rm -rf "$APP" && mv "$APP.tmp" "$APP"
}

answers() {  # the Confluent API lists its subjects: a JSON array, nothing less
    python3 - "http://$HOST:$PORT/apis/ccompat/v7/subjects" <<'PY' >/dev/null 2>&1
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=2) as answer:
    sys.exit(0 if answer.status == 200 and isinstance(json.load(answer), list) else 1)
PY
}

port_taken() { python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)' "$1" 2>/dev/null; }

is_running() { pid_alive "$PIDFILE"; }

start() {
    if is_running && answers; then
        echo "schema-registry (Apicurio $VERSION) already running on http://$HOST:$PORT (pid $(pid_of "$PIDFILE"))"
        return 0
    fi
    if is_running; then  # another start's registry, still starting
        if wait_until 180 "$PIDFILE" answers; then
            echo "schema-registry (Apicurio $VERSION) running on http://$HOST:$PORT (pid $(pid_of "$PIDFILE"))"
            return 0
        fi
        stop_pid "$PIDFILE" 20
    fi
    local port
    for port in "$PORT" "$MANAGEMENT_PORT"; do
        port_taken "$port" && die "something else listens on $HOST:$port (not the registry of $PIDFILE); stop it first"
    done
    local java
    java=$(find_java)
    install
    mkdir -p "$BASE"
    echo "--- $(date -u '+%F %T') $SERVER_SCRIPT: starting Apicurio Registry $VERSION with $java" >>"$LOG"
    # Quarkus reads its settings from system properties. The working directory is $BASE: anything
    # the registry writes beside itself lands there, not in the cache or the repository.
    (cd "$BASE" && exec setsid "$java" -Xms64m -Xmx"$HEAP" -XX:+ExitOnOutOfMemoryError \
        -Djava.net.preferIPv4Stack=true \
        -Dquarkus.http.host="$HOST" -Dquarkus.http.port="$PORT" \
        -Dquarkus.management.host="$HOST" -Dquarkus.management.port="$MANAGEMENT_PORT" \
        -Dquarkus.otel.sdk.disabled=true -Dapicurio.usage.telemetry.enabled=false \
        -Dquarkus.log.level=WARN '-Dquarkus.log.category."io.apicurio".level=WARN' \
        -Dquarkus.http.access-log.enabled=false \
        -Dquarkus.banner.enabled=false \
        -Dapicurio.storage.snapshot.location="$BASE" -Dapicurio.import.work-dir="$BASE" \
        -jar "$APP/quarkus-run.jar" >>"$LOG" 2>&1 </dev/null 9>&-) &  # 9>&-: not the lock
    write_pidfile "$PIDFILE" $!
    # 8-14 s on a quiet machine; much longer while Spark and the other servers share the 2 cores.
    if ! wait_until 240 "$PIDFILE" answers; then
        is_running || fail_start "the registry exited during start-up" "$LOG"
        stop >/dev/null
        fail_start "the registry did not answer GET /apis/ccompat/v7/subjects on $HOST:$PORT within 240 s; stopped it" "$LOG"
    fi
    echo "schema-registry (Apicurio $VERSION) listening on http://$HOST:$PORT, Confluent API /apis/ccompat/v7 (pid $(pid_of "$PIDFILE"), log $LOG)"
}

stop() {
    if ! is_running; then
        rm -f "$PIDFILE"
        echo "schema-registry not running"
        return 0
    fi
    stop_pid "$PIDFILE" 20
    if [ "$STOP_FORCED" = 1 ]; then echo "schema-registry killed after 20 s"; else echo "schema-registry stopped"; fi
}

status() {
    if is_running && answers; then
        echo "schema-registry (Apicurio $VERSION) running on http://$HOST:$PORT (pid $(pid_of "$PIDFILE"))"
    else
        echo "schema-registry not running"
        return 1
    fi
}

# One schema-registry.sh at a time starts or stops it: two test runs starting it at once would
# each launch a registry on the same ports (status only reads).
if [ "${1:-status}" != status ]; then
    mkdir -p "$BASE"
    exec 9>"$BASE/.lock"
    flock -w 600 9 || die "another schema-registry.sh has held $BASE/.lock for 10 minutes"
fi

server_main "$@"
