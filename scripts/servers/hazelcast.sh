#!/usr/bin/env bash
# A Hazelcast 5 cluster for jetconnect's tests: 3 members on 127.0.0.1:5701-5703, cluster name
# "jetconnect", loopback only (TCP-IP join; multicast, auto-detection and phone-home off).
#
#   scripts/servers/hazelcast.sh start|stop|status|restart
#   scripts/servers/hazelcast.sh kill-member N    # SIGKILL member N (1..3): a crash, no goodbye
#   scripts/servers/hazelcast.sh start-member N   # start member N again; it rejoins the cluster
#   scripts/servers/hazelcast.sh classpath        # the member jars (fetched if missing), for javac -cp
#
# The member jars (scripts/servers/hazelcast/pom.xml) come from Maven Central once, cached under
# ~/.cache/jetconnect-hazelcast keyed by the pom's content, so a second start never runs Maven.
# jetconnect's entry processors (plugins/imap/jetconnect_imap/hazelcast/java) are built against that
# jar by the plugin's own command into a jar on the members' classpath, rebuilt when their source
# changes. The members'
# configuration is scripts/servers/hazelcast/hz.yaml (journals, backups, the processors' factory),
# copied to /tmp/jetconnect-hazelcast when the first member starts; logs (WARNING and up) and pid
# files are there too. Ready means what a user sees: hazelcast-python-client, with cluster name
# "jetconnect", lists 3 members. Idempotent: `start` on a running cluster only checks it, and
# starts just the members that are missing.
#
# Environment: HAZELCAST_HEAP (each member's -Xmx, default 512m: three members share 2 cores and
# 24 GiB with Spark and the other servers), JAVA_HOME (a JDK >= 17; default: the machine's java),
# PYTHON (a Python with hazelcast-python-client; default: the repo's .venv).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/hazelcast" && pwd)
REPO=$(cd "$HERE/../../.." && pwd)
CACHE=${JETCONNECT_CACHE:-$HOME/.cache/jetconnect-hazelcast}
BASE=/tmp/jetconnect-hazelcast
HOST=127.0.0.1
MEMBERS=(1 2 3)
CLUSTER=jetconnect
HEAP=${HAZELCAST_HEAP:-512m}
PYTHON=${PYTHON:-$REPO/.venv/bin/python}
# The member number given to kill-member / start-member (server_main passes verbs no arguments).
MEMBER_ARG=${2:-}

port_of() { echo $((5700 + $1)); }  # member N listens on 570N (hz.yaml: a fixed port per member)
pidfile_of() { echo "$BASE/member$1.pid"; }
log_of() { echo "$BASE/member$1.log"; }
member_alive() { pid_alive "$(pidfile_of "$1")"; }

# A hash of the files a cached artefact is made from: a changed pom or source makes a new one.
content_hash() { cat "$@" | sha1sum | cut -c1-12; }
JARS=$CACHE/jars-$(content_hash "$HERE/pom.xml")

java_bin() {  # the java to run members with: $JAVA_HOME's, else the machine's (Hazelcast 5.7 needs 17+)
    if [ -n "${JAVA_HOME:-}" ]; then echo "$JAVA_HOME/bin/java"; else command -v java; fi
}

install_jdk() {
    # javac compiles the entry processors; a JRE alone has none.
    if ! command -v javac >/dev/null 2>&1 && [ ! -x "${JAVA_HOME:-/nonexistent}/bin/javac" ]; then
        apt_install openjdk-17-jdk-headless
    fi
    local version
    version=$("$(java_bin)" -version 2>&1 | awk -F'"' '/version/ {print $2}' | cut -d. -f1)
    [ "${version:-0}" -ge 17 ] 2>/dev/null \
        || die "Hazelcast 5.7 needs Java 17 or newer; $(java_bin) is ${version:-unknown} (set JAVA_HOME)"
}

fetch_jars() {  # the member jars from Maven Central, once per pom
    maven_jars "$HERE/pom.xml" "$JARS"
    ls "$JARS"/hazelcast-5*.jar >/dev/null 2>&1 || die "no hazelcast jar in $JARS after Maven"
}

PROCESSORS_JAR=""
PROCESSORS_SOURCES=$REPO/plugins/imap/jetconnect_imap/hazelcast/java
build_processors() {  # jetconnect's entry processors, built against the member jar once per source,
    # by the plugin's own documented command (python -m jetconnect_imap.hazelcast.processors jar)
    local sources
    sources=$(find "$PROCESSORS_SOURCES" -name '*.java' | sort)
    # shellcheck disable=SC2086  # one path per line, none with spaces (the repo's own files)
    PROCESSORS_JAR=$CACHE/processors-$(content_hash $sources "$HERE/pom.xml").jar
    [ -f "$PROCESSORS_JAR" ] && return 0
    "$PYTHON" -m jetconnect_imap.hazelcast.processors jar --classpath "$JARS/*" --out "$PROCESSORS_JAR" \
        ${JAVA_HOME:+--jdk "$JAVA_HOME"} >&2 || die "could not build $PROCESSORS_JAR from $PROCESSORS_SOURCES"
    echo "$SERVER_SCRIPT: built $PROCESSORS_JAR"
}

# What each member says of the cluster, as a client with cluster name "jetconnect" sees it: one
# client per member, routed to that member only, prints how many members it lists ("3 3 3"; "-"
# for a member that does not answer). Exit 0 when every member lists $1. Asking each member, not
# one client the whole cluster, matters after a SIGKILL: until the heartbeat timeout the survivors
# still list the dead member, so "3 members" from them alone would not show that a restarted
# member has joined. The client's own connect timeout bounds a member that does not answer.
client_sees() {
    "$PYTHON" - "$1" "$CLUSTER" <<'EOF' 2>/dev/null
import logging, sys
logging.disable(logging.CRITICAL)  # the client logs every failed attempt at WARNING
import hazelcast
want, cluster = int(sys.argv[1]), sys.argv[2]
seen = []
for port in (5701, 5702, 5703):
    try:
        client = hazelcast.HazelcastClient(
            cluster_name=cluster,
            cluster_members=[f"127.0.0.1:{port}"],
            smart_routing=False,
            cluster_connect_timeout=2,
        )
    except Exception:
        seen.append("-")
        continue
    try:
        seen.append(str(len(client.cluster_service.get_members())))
    finally:
        client.shutdown()
print(" ".join(seen))
sys.exit(0 if seen == [str(want)] * 3 else 1)
EOF
}

# Whether every member says the cluster is safe: each partition's backup in sync, no migration
# pending (Hazelcast's health check, /hazelcast/health/cluster-safe: 200 or 503). Until then a
# member killed next could take the only copy of some partitions with it.
cluster_safe() {
    python3 - <<'EOF' 2>/dev/null
import sys, urllib.request
for port in (5701, 5702, 5703):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/hazelcast/health/cluster-safe", timeout=2) as answer:
            if answer.status != 200:
                sys.exit(1)
    except OSError:  # HTTPError (503: not safe yet) included
        sys.exit(1)
EOF
}

check_python() {
    "$PYTHON" -c 'import hazelcast' 2>/dev/null \
        || die "$PYTHON has no hazelcast-python-client, needed to check the members: run bash scripts/setup.sh (or set PYTHON)"
}

port_taken() { python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)' "$1" 2>/dev/null; }

launch_member() {  # launch_member N: start member N in the background (no wait); nothing if it runs
    local n=$1 port
    member_alive "$n" && return 0
    port=$(port_of "$n")
    port_taken "$port" && die "something else listens on $HOST:$port (not member $n of $(pidfile_of "$n")); stop it first"
    mkdir -p "$BASE"
    # logs are appended to: a line per launch shows where this run's lines begin
    echo "--- $(date -u '+%F %T') $SERVER_SCRIPT: launching member $n" >>"$(log_of "$n")"
    # JDK flags of Hazelcast's own start script (bin/common.sh) for Java 9+; an OutOfMemoryError
    # ends the member at once (a clear crash, backups take over) instead of a member that limps on.
    setsid "$(java_bin)" -Xms64m -Xmx"$HEAP" -XX:+ExitOnOutOfMemoryError \
        --add-modules java.se \
        --add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
        --add-opens java.base/java.lang=ALL-UNNAMED \
        --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
        --add-opens java.management/sun.management=ALL-UNNAMED \
        --add-opens jdk.management/com.sun.management.internal=ALL-UNNAMED \
        -Dhazelcast.config="$BASE/hz.yaml" \
        -Djetconnect.member.port="$port" \
        -Dhazelcast.phone.home.enabled=false \
        -Djava.util.logging.config.file="$BASE/logging.properties" \
        -cp "$JARS/*:$PROCESSORS_JAR" \
        com.hazelcast.core.server.HazelcastMemberStarter \
        >>"$(log_of "$n")" 2>&1 </dev/null 9>&- &  # 9>&-: a member must not hold the script's lock
    write_pidfile "$(pidfile_of "$n")" $!
}

all_pidfiles() { local n out=(); for n in "${MEMBERS[@]}"; do out+=("$(pidfile_of "$n")"); done; (IFS=,; echo "${out[*]}"); }
all_logs() { local n; for n in "${MEMBERS[@]}"; do log_of "$n"; done; }

wait_for_members() {  # wait_for_members SECONDS: a client sees all 3; fails at once if a member exits
    if ! wait_until "$1" "$(all_pidfiles)" client_sees "${#MEMBERS[@]}" >/dev/null; then
        local n
        for n in "${MEMBERS[@]}"; do
            member_alive "$n" || fail_start "member $n exited during start-up" "$(log_of "$n")"
        done
        # shellcheck disable=SC2046
        fail_start "a client did not see ${#MEMBERS[@]} members of cluster $CLUSTER within $1 s" $(all_logs)
    fi
    # shellcheck disable=SC2046
    wait_until "$1" "$(all_pidfiles)" cluster_safe \
        || fail_start "the members did not report the cluster safe (backups in sync) within $1 s" $(all_logs)
}

# The members read their configuration at start: a copy under $BASE, taken when no member runs,
# so that a member started later (start-member) joins with the configuration of the others even
# if hz.yaml has changed since; `start` says when the running cluster's copy is not hz.yaml's.
copy_config() {
    local n
    if [ -f "$BASE/hz.yaml" ]; then
        for n in "${MEMBERS[@]}"; do member_alive "$n" && return 0; done
    fi
    mkdir -p "$BASE"
    cp "$HERE/hz.yaml" "$HERE/logging.properties" "$BASE/"
}

warn_if_config_changed() {
    if ! cmp -s "$HERE/hz.yaml" "$BASE/hz.yaml"; then
        echo "warning: the running members were started from another hz.yaml than $HERE/hz.yaml;" \
             "restart them to apply it: $0 restart" >&2
    fi
}

prepare() { install_jdk; check_python; fetch_jars; build_processors; copy_config; }

start() {
    if all_alive && client_sees "${#MEMBERS[@]}" >/dev/null; then
        echo "hazelcast already running: cluster $CLUSTER, ${#MEMBERS[@]} members on $HOST:5701-5703"
        warn_if_config_changed
        return 0
    fi
    prepare
    local n
    for n in "${MEMBERS[@]}"; do launch_member "$n"; done
    # ~10 s on a quiet machine (three JVMs on two cores); much longer when Spark is busy too.
    wait_for_members 180
    echo "hazelcast up: cluster $CLUSTER, ${#MEMBERS[@]} members on $HOST:5701-5703 (logs $BASE/member*.log)"
}

all_alive() { local n; for n in "${MEMBERS[@]}"; do member_alive "$n" || return 1; done; }

stop() {
    local n any=0
    # SIGTERM to all first: the members shut down side by side instead of one after another.
    for n in "${MEMBERS[@]}"; do
        if member_alive "$n"; then any=1; kill -TERM "$(pid_of "$(pidfile_of "$n")")" 2>/dev/null || true; fi
    done
    for n in "${MEMBERS[@]}"; do stop_pid "$(pidfile_of "$n")" 20; done
    if [ "$any" = 1 ]; then echo "hazelcast stopped"; else echo "hazelcast not running"; fi
}

status() {
    local n down=() seen
    for n in "${MEMBERS[@]}"; do member_alive "$n" || down+=("$n"); done
    # all down: nothing to ask (a client would wait out its connect timeout per member)
    [ ${#down[@]} -eq ${#MEMBERS[@]} ] && { echo "hazelcast not running"; exit 1; }
    seen=$(client_sees "${#MEMBERS[@]}") || true
    if [ ${#down[@]} -eq 0 ] && [ "$seen" = "3 3 3" ]; then
        echo "hazelcast running: cluster $CLUSTER, ${#MEMBERS[@]} members on $HOST:5701-5703"
        return 0
    fi
    echo "hazelcast not running${down:+ (members down: ${down[*]})}; members 1 2 3 list: ${seen:-nothing}"
    exit 1
}

member_number() {  # the N of kill-member N / start-member N, checked
    case "$MEMBER_ARG" in
        1 | 2 | 3) echo "$MEMBER_ARG" ;;
        *) die "usage: $0 kill-member|start-member N, N one of ${MEMBERS[*]} (got '${MEMBER_ARG}')" ;;
    esac
}

verb_kill_member() {
    local n pid
    n=$(member_number)
    if ! member_alive "$n"; then echo "hazelcast member $n not running"; rm -f "$(pidfile_of "$n")"; return 0; fi
    pid=$(pid_of "$(pidfile_of "$n")")
    kill -KILL "$pid"
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$(pidfile_of "$n")"
    echo "hazelcast member $n killed (SIGKILL, pid $pid)"
}

verb_start_member() {
    local n
    n=$(member_number)
    prepare
    launch_member "$n"
    # The others may still count the killed member until their heartbeat timeout (hz.yaml: 10 s)
    # removes it; the restarted one is in when a client sees three again.
    wait_for_members 180
    echo "hazelcast member $n up on $HOST:$(port_of "$n"); ${#MEMBERS[@]} members"
}

verb_classpath() {  # what a test compiles a Java client or a codec check against: the members' own jars
    install_jdk >&2
    fetch_jars >&2
    echo "$JARS/*"
}

# One hazelcast.sh at a time changes the cluster: two test runs starting it at once would each
# launch members on the same ports (status only reads).
if [ "${1:-status}" != status ]; then
    mkdir -p "$BASE"
    exec 9>"$BASE/.lock"
    flock -w 900 9 || die "another hazelcast.sh has held $BASE/.lock for 15 minutes"
fi

server_main "$@"
