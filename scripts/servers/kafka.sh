#!/usr/bin/env bash
# Apache Kafka 4 itself for jetconnect's tests: one KRaft node that is broker and controller at once,
# PLAINTEXT on 127.0.0.1:9092, its controller on 127.0.0.1:9093, data on disk under
# /tmp/jetconnect-kafka/data (a restart keeps every record). The jars come from Maven Central
# through scripts/servers/kafka/pom.xml, cached under ~/.cache/jetconnect-kafka: only the first start
# runs Maven. Debian's kcat, a client the interop tests use, is installed by start as root.
#
# The same node also listens secured, always (scripts/servers/kafka/secured.sh makes the CA and
# certificates once, under /tmp/jetconnect-kafka/secured): SASL_SSL with SCRAM-SHA-512 logins on
# 127.0.0.1:9094, TLS requiring a client certificate (mTLS) on 9095, and TLS with an expired server
# certificate on 9096. `secured` prints the file that says where everything is (secured.json).
#
#   scripts/servers/kafka.sh start|stop|status|restart|kill|secured
#
# `kill` SIGKILLs the broker (the crash tests' fault: no clean shutdown, no flush); a `start` after
# it recovers the log from disk as Kafka does after a crash. A `start` that finds the broker running
# with another configuration than this script's (started by an older one) restarts it to apply it:
# its data stays, and SCRAM users missing from storage formatted before them are added.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HOST=127.0.0.1
PORT=9092
CONTROLLER_PORT=9093
BASE=/tmp/jetconnect-kafka
DATA=$BASE/data
CONF=$BASE/conf
PIDFILE=$BASE/kafka.pid
LOG=$BASE/kafka.out
CACHE="$HOME/.cache/jetconnect-kafka"
LIBS=$CACHE/libs
# The project's venv when there is one (it has confluent-kafka), else whatever python is first.
PYTHON="${PYTHON:-$(if [[ -x $HERE/../../.venv/bin/python ]]; then echo "$HERE/../../.venv/bin/python"; else echo python3; fi)}"
source "$HERE/kafka/secured.sh"

answers() {
    # A real metadata request, not just an open port: the broker accepts before it has metadata.
    "$PYTHON" - "$HOST:$PORT" <<'PY' >/dev/null 2>&1
import sys
from confluent_kafka.admin import AdminClient
md = AdminClient({"bootstrap.servers": sys.argv[1]}).list_topics(timeout=2)
sys.exit(0 if md.brokers else 1)
PY
}

is_running() { pid_alive "$PIDFILE"; }

install_kcat() {
    command -v kcat >/dev/null 2>&1 && return 0
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        echo "kcat is missing and this is not root on Debian: install the kcat package; its tests fail in CI, skip here" >&2
        return 0
    fi
    (apt_install kcat) || echo "could not install kcat with apt-get; its tests fail in CI, skip here" >&2
}

install() {
    if ! "$PYTHON" -c 'import confluent_kafka' 2>/dev/null; then
        echo "installing confluent-kafka with pip (the readiness check's client)"
        "$PYTHON" -m pip install --quiet confluent-kafka
    fi
    command -v java >/dev/null || apt_install openjdk-17-jre-headless
    maven_jars "$HERE/kafka/pom.xml" "$LIBS"
}

# The node's configuration, on stdout. Replication factors and min ISR 1: one node holds every
# replica of the internal topics (offsets, transactions, share-group state), which otherwise wait
# for 3 brokers. No initial rebalance delay: a test's consumer group starts at once.
server_properties() {
    cat <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=$HOST:$CONTROLLER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
$(secured_properties)
log.dirs=$DATA
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
PROPS
}

# WARN and above, to kafka.out: a quiet broker whose problems still show. The network Selector at
# INFO: it logs each refused login or TLS handshake ("Failed authentication with ..."), which the
# tests count.
log4j2_properties() {
    cat <<'PROPS'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
logger.selector.name = org.apache.kafka.common.network.Selector
logger.selector.level = info
PROPS
}

# Whether the running broker was started from the configuration this script writes now.
current_configuration() {
    [[ -f $CONF/server.properties ]] && diff -q <(server_properties) "$CONF/server.properties" >/dev/null \
        && diff -q <(log4j2_properties) "$CONF/log4j2.properties" >/dev/null && secured_listening
}

start() {
    install_kcat
    make_secured
    if is_running && answers && ! current_configuration; then
        # Started by an older script (no secured listeners): the one restart that applies this one's.
        echo "kafka: the running broker has another configuration than $SERVER_SCRIPT's; restarting it (data kept)"
        stop
    fi
    if is_running && answers; then
        echo "kafka (Apache Kafka) already running on $HOST:$PORT (pid $(pid_of "$PIDFILE"))"
        return 0
    fi
    if ! is_running && answers; then
        die "something else already answers Kafka requests on $HOST:$PORT (not the broker of $PIDFILE); stop it first"
    fi
    if is_running; then  # started but not answering yet: another start's broker, still recovering
        if wait_until 180 "$PIDFILE" answers; then
            echo "kafka (Apache Kafka) running on $HOST:$PORT (pid $(pid_of "$PIDFILE"))"
            return 0
        fi
        stop_pid "$PIDFILE" 30
    fi
    install
    mkdir -p "$CONF" "$DATA"
    chmod 700 "$CONF"  # server.properties holds the keystores' password
    server_properties >"$CONF/server.properties"
    log4j2_properties >"$CONF/log4j2.properties"
    local java
    java=$(command -v java) || die "java not found (Kafka 4's broker needs Java 17 or newer)"
    local jvm=(-Xms128m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true
        -Dlog4j2.configurationFile="$CONF/log4j2.properties" -cp "$LIBS/*")
    if [[ ! -f $DATA/meta.properties ]]; then
        # Formatted once; the cluster id then belongs to the data and a restart keeps both.
        local id
        id=$("$java" "${jvm[@]}" kafka.tools.StorageTool random-uuid 2>>"$LOG") \
            || fail_start "StorageTool random-uuid failed" "$LOG"
        local scram=()
        mapfile -t scram < <(scram_format_args)
        "$java" "${jvm[@]}" kafka.tools.StorageTool format --standalone -t "$id" -c "$CONF/server.properties" \
            "${scram[@]}" >>"$LOG" 2>&1 || fail_start "StorageTool format failed" "$LOG"
    fi
    setsid "$java" "${jvm[@]}" kafka.Kafka "$CONF/server.properties" >>"$LOG" 2>&1 </dev/null &
    write_pidfile "$PIDFILE" $!
    # A few seconds on a quiet machine; recovering the log after `kill` takes longer.
    if ! wait_until 180 "$PIDFILE" answers; then
        is_running || fail_start "kafka exited during start-up" "$LOG"
        stop >/dev/null  # a broker left starting would answer later, unknown to the next start
        fail_start "kafka did not answer a metadata request on $HOST:$PORT within 180 s; stopped it" "$LOG"
    fi
    upsert_scram_user || fail_start "could not add SCRAM user $SCRAM_USER through $HOST:$PORT" "$LOG"
    wait_until 60 "$PIDFILE" secured_listening || fail_start "the secured listeners did not open" "$LOG"
    echo "kafka (Apache Kafka) listening on $HOST:$PORT, SASL_SSL $SASL_SSL_PORT, mTLS $MTLS_PORT, expired TLS $EXPIRED_PORT (pid $(pid_of "$PIDFILE"), data $DATA, secured $SECURED/secured.json)"
}

stop() {
    if ! is_running; then
        rm -f "$PIDFILE"
        echo "kafka not running"
        return 0
    fi
    stop_pid "$PIDFILE" 30  # a clean shutdown closes its log segments; force after 30 s
    if [ "$STOP_FORCED" = 1 ]; then echo "kafka killed after 30 s"; else echo "kafka stopped"; fi
}

status() {
    if is_running && answers; then
        local secured="secured listeners not open (started by an older script? start applies them)"
        secured_listening && secured="SASL_SSL $SASL_SSL_PORT, mTLS $MTLS_PORT, expired TLS $EXPIRED_PORT: $SECURED/secured.json"
        echo "kafka (Apache Kafka) running on $HOST:$PORT, $secured (pid $(pid_of "$PIDFILE"))"
    else
        echo "kafka not running"
        return 1
    fi
}

verb_secured() {  # where the secured listeners, the user and the certificates are: a JSON file
    make_secured >/dev/null
    echo "$SECURED/secured.json"
}

verb_kill() {  # SIGKILL, as a crash: the data stays on disk, and `start` recovers it
    if ! is_running; then
        rm -f "$PIDFILE"
        echo "kafka not running"
        return 0
    fi
    local pid
    pid=$(pid_of "$PIDFILE")
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    rm -f "$PIDFILE"
    echo "kafka killed (SIGKILL, pid $pid); its data stays in $DATA"
}

server_main "$@"
