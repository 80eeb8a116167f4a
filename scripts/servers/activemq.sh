#!/usr/bin/env bash
# ActiveMQ (Debian's `activemq` package) with a STOMP connector on 127.0.0.1:61613.
#
#   scripts/servers/activemq.sh start|stop|status|restart|fresh
#   scripts/servers/activemq.sh secured start|stop|status|env
#
# No systemd here: the broker is started the way /usr/bin/activemq would start it (same java
# flags), from a private configuration under /tmp/jetconnect-activemq, in the background.
# Messages are persistent (KahaDB under the same folder), so `stop` then `start` is a real broker
# restart that keeps every queued message: the JMS tests rely on that. `fresh` stops the broker,
# deletes its store and starts it empty: the benchmark's way to measure on a store that messages
# left by earlier runs have not grown (one left message keeps a whole 32 MiB journal file).
#
# `secured` runs a second broker (the plain one is every test's and stays open as it is: ActiveMQ 5
# cannot require a login on one connector and not on another) under $BASE/secured: STOMP over TLS
# only (stomp+ssl on 127.0.0.1:61614, and on 61615 a connector that also requires a client
# certificate), a user and password required (no anonymous access), JMX off, a server certificate
# for DNS:localhost from the script's own CA. `secured env` prints, as JSON, what a client needs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

BASE=/tmp/jetconnect-activemq
CONF=$BASE/conf
DATA=$BASE/data
PIDFILE=$BASE/activemq.pid
LOG=$BASE/activemq.out
HOST=127.0.0.1
PORT=61613
HOME_DIR=/usr/share/activemq
# One user with a password (integration/test_canary_secret.py): the canary of CANARY there, every
# character that broke redaction somewhere. Single-quoted here ('\'' is a quote) and interpolated
# into the configuration's heredoc, whose expansion does not touch a variable's value; it holds no
# '&', '<' or '"' (XML) and no '${' (Spring's placeholders). Anonymous connections, those of every
# other test, stay allowed.
CANARY_USER=jetconnect_canary
CANARY_PASSWORD='c@n#a/r%y'\''\x'

is_running() { pid_alive "$PIDFILE"; }

# A STOMP CONNECT answered by CONNECTED is the readiness check: an open port alone is not enough,
# the transport connector accepts before the broker is started.
answers() {
    python3 - "$HOST" "$PORT" <<'EOF' 2>/dev/null
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=1)
    s.settimeout(2)
    s.sendall(b"CONNECT\naccept-version:1.2\nhost:localhost\n\n\x00")
    sys.exit(0 if s.recv(9) == b"CONNECTED" else 1)
except OSError:
    sys.exit(1)
EOF
}

install() {
    if [[ ! -f $HOME_DIR/bin/activemq.jar ]] || ! command -v java >/dev/null; then
        # policy-rc.d refuses to start the packaged service here; we start our own below.
        apt_install activemq
    fi
    [[ -f $HOME_DIR/bin/activemq.jar ]] || die "activemq.jar missing after install"
}

# The broker's configuration, on stdout. Only STOMP, only loopback; schedulerSupport off keeps
# start-up fast.
config_xml() {
    cat <<EOF
<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans-2.0.xsd
       http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" useJmx="false" brokerName="jetconnect"
          dataDirectory="$DATA" schedulerSupport="false" advisorySupport="false">
    <!-- Flow control before the heap runs out: big transactions otherwise end in OutOfMemoryError. -->
    <systemUsage>
      <systemUsage>
        <memoryUsage><memoryUsage percentOfJvmHeap="50"/></memoryUsage>
        <storeUsage><storeUsage limit="8 gb"/></storeUsage>
        <tempUsage><tempUsage limit="4 gb"/></tempUsage>
      </systemUsage>
    </systemUsage>
    <persistenceAdapter>
      <kahaDB directory="$DATA/kahadb"/>
    </persistenceAdapter>
    <plugins>
      <simpleAuthenticationPlugin anonymousAccessAllowed="true">
        <users>
          <authenticationUser username="$CANARY_USER" password="$CANARY_PASSWORD" groups="users,admins"/>
        </users>
      </simpleAuthenticationPlugin>
    </plugins>
    <transportConnectors>
      <transportConnector name="stomp" uri="stomp://$HOST:$PORT?transport.closeAsync=false"/>
    </transportConnectors>
  </broker>
</beans>
EOF
}

write_config() {
    mkdir -p "$CONF" "$DATA"
    cp /etc/activemq/instances-available/main/log4j2.properties "$CONF/" 2>/dev/null || true
    config_xml >"$CONF/activemq.xml"
    # The password must reach the broker exactly as written: read it back the way an XML parser
    # does (passed in the environment, not on a command line that `ps` shows).
    if ! CANARY_PASSWORD="$CANARY_PASSWORD" python3 - "$CONF/activemq.xml" <<'EOF'; then
import os, sys, xml.etree.ElementTree as ET
users = ET.parse(sys.argv[1]).getroot().iter("{http://activemq.apache.org/schema/core}authenticationUser")
sys.exit(0 if [u.get("password") for u in users] == [os.environ["CANARY_PASSWORD"]] else 1)
EOF
        die "$CONF/activemq.xml does not hold the password of $CANARY_USER as written"
    fi
}

launch_broker() {  # launch_broker CONF DATA LOG XMS XMX: the broker of CONF/activemq.xml in the background,
    # the way /usr/bin/activemq starts it (its java flags for Java > 8); its pid in LAUNCHED
    local conf=$1 data=$2 log=$3 xms=$4 xmx=$5 java
    java=$(command -v java)
    setsid "$java" "-Xms$xms" "-Xmx$xmx" -Dorg.apache.activemq.UseDedicatedTaskRunner=true \
        --add-reads=java.xml=java.logging \
        --add-opens java.base/java.security=ALL-UNNAMED \
        --add-opens java.base/java.net=ALL-UNNAMED \
        --add-opens java.base/java.lang=ALL-UNNAMED \
        --add-opens java.base/java.util=ALL-UNNAMED \
        --add-opens java.naming/javax.naming.spi=ALL-UNNAMED \
        --add-opens java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED \
        --add-opens java.base/java.util.concurrent=ALL-UNNAMED \
        --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED \
        -Dlog4j2.configurationFile="$conf/log4j2.properties" \
        -Dactivemq.classpath="$conf" \
        -Dactivemq.home="$HOME_DIR" \
        -Dactivemq.base="$(dirname "$conf")" \
        -Dactivemq.conf="$conf" \
        -Dactivemq.data="$data" \
        -jar "$HOME_DIR/bin/activemq.jar" start "xbean:file:$conf/activemq.xml" \
        >>"$log" 2>&1 </dev/null &
    LAUNCHED=$!
}

start() {
    if is_running && answers; then
        echo "activemq already running on $HOST:$PORT"
        # a configuration is only read at start: say so if this broker's is not the one above
        if ! config_xml | cmp -s - "$CONF/activemq.xml"; then
            echo "warning: it was started from another configuration than this script writes (e.g. without" \
                 "the user $CANARY_USER); restart it to apply: $0 stop; $0 start" >&2
        fi
        return 0
    fi
    if answers; then
        die "something else already answers STOMP on $HOST:$PORT (not the broker of $PIDFILE); stop it first"
    fi
    install
    write_config
    launch_broker "$CONF" "$DATA" "$LOG" 256M 1024M
    write_pidfile "$PIDFILE" "$LAUNCHED"
    # Usually ~2 s; KahaDB recovering a large journal after a hard kill can take minutes.
    if ! wait_until 180 "$PIDFILE" answers; then
        is_running || fail_start "activemq exited during start-up" "$LOG"
        stop >/dev/null  # a broker left starting would answer later, unknown to the next start
        fail_start "activemq did not answer STOMP on $HOST:$PORT within 180 s; stopped it" "$LOG"
    fi
    echo "activemq up on $HOST:$PORT (pid $(pid_of "$PIDFILE"), data $DATA)"
}

stop() {
    if ! is_running; then
        echo "activemq not running"
        rm -f "$PIDFILE"
        return 0
    fi
    stop_pid "$PIDFILE" 30  # a clean shutdown flushes KahaDB; force after 30 s
    if [ "$STOP_FORCED" = 1 ]; then echo "activemq killed after 30 s"; else echo "activemq stopped"; fi
}

status() {
    if is_running && answers; then
        echo "activemq running on $HOST:$PORT (pid $(pid_of "$PIDFILE"))"
    else
        echo "activemq not running"
        return 1
    fi
}

verb_fresh() {
    stop
    rm -rf "$DATA"
    start
}

# --- the secured broker ------------------------------------------------------------------------------

SECURED=$BASE/secured
S_CONF=$SECURED/conf
S_DATA=$SECURED/data
S_TLS=$SECURED/tls
S_PIDFILE=$SECURED/activemq.pid
S_LOG=$SECURED/activemq.out
TLS_PORT=${JETCONNECT_AMQ_TLS_PORT:-61614}
MTLS_PORT=${JETCONNECT_AMQ_MTLS_PORT:-61615}
SECURED_USER=jetconnect_tls
# ' " @ % (and a %41 a careless decoder turns into "A"), escaped for XML when written. Single-quoted
# here ('\'' is a quote); no '${' (Spring's placeholders).
SECURED_PASSWORD='tls-Mq'\''q"7@x%41'
# The broker's keystore and truststore: read by the broker only, but a secret all the same.
STORE_PASSWORD='store-Mq-4f1c9e'

secured_pki() {
    make_ca "$S_TLS" "jetconnect ActiveMQ test CA"
    make_server_cert "$S_TLS" broker "DNS:localhost"
    make_client_cert "$S_TLS" client "$SECURED_USER"
    make_pkcs12 "$S_TLS" broker "$STORE_PASSWORD"
    make_truststore "$S_TLS" "$STORE_PASSWORD"
    make_ca "$S_TLS/untrusted" "a CA the broker does not trust"
    make_client_cert "$S_TLS/untrusted" client "$SECURED_USER"
}

xml_attr() {  # xml_attr TEXT: TEXT fit for a double-quoted XML attribute (python3: bash 5.2's ${v//x/&...}
    # would put the matched text where the & is)
    XML_TEXT=$1 python3 -c 'import os, sys; from xml.sax.saxutils import escape; sys.stdout.write(escape(os.environ["XML_TEXT"], {"\x22": "&quot;", "\x27": "&apos;"}))'
}

secured_config_xml() {
    cat <<EOF
<beans xmlns="http://www.springframework.org/schema/beans"
       xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
       xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans-2.0.xsd
       http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
  <broker xmlns="http://activemq.apache.org/schema/core" useJmx="false" brokerName="jetconnect-secured"
          dataDirectory="$S_DATA" schedulerSupport="false" advisorySupport="false">
    <systemUsage>
      <systemUsage>
        <memoryUsage><memoryUsage percentOfJvmHeap="50"/></memoryUsage>
        <storeUsage><storeUsage limit="2 gb"/></storeUsage>
        <tempUsage><tempUsage limit="1 gb"/></tempUsage>
      </systemUsage>
    </systemUsage>
    <persistenceAdapter>
      <kahaDB directory="$S_DATA/kahadb"/>
    </persistenceAdapter>
    <sslContext>
      <sslContext keyStore="file:$S_TLS/broker.p12" keyStoreType="PKCS12" keyStorePassword="$(xml_attr "$STORE_PASSWORD")"
                  trustStore="file:$S_TLS/ca.p12" trustStoreType="PKCS12" trustStorePassword="$(xml_attr "$STORE_PASSWORD")"/>
    </sslContext>
    <plugins>
      <simpleAuthenticationPlugin anonymousAccessAllowed="false">
        <users>
          <authenticationUser username="$SECURED_USER" password="$(xml_attr "$SECURED_PASSWORD")" groups="users,admins"/>
        </users>
      </simpleAuthenticationPlugin>
    </plugins>
    <transportConnectors>
      <transportConnector name="stomp+ssl" uri="stomp+ssl://$HOST:$TLS_PORT?transport.closeAsync=false"/>
      <transportConnector name="stomp+ssl+client-auth" uri="stomp+ssl://$HOST:$MTLS_PORT?transport.closeAsync=false&amp;transport.needClientAuth=true"/>
    </transportConnectors>
  </broker>
</beans>
EOF
}

secured_write_config() {
    mkdir -p "$S_CONF" "$S_DATA"
    cp /etc/activemq/instances-available/main/log4j2.properties "$S_CONF/" 2>/dev/null || true
    ( umask 077 && secured_config_xml >"$S_CONF/activemq.xml" )
    # Its warnings in a log of its own (log4j 1, found on the conf classpath): each refused login
    # or handshake is one "Security error" / "Could not accept connection" line, what the tests count.
    cat >"$S_CONF/log4j.properties" <<EOF
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$SECURED/broker.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=%d %-5p [%c] %m%n
EOF
    # the password must reach the broker exactly as written: read back as an XML parser does
    if ! SECURED_PASSWORD="$SECURED_PASSWORD" python3 - "$S_CONF/activemq.xml" <<'PY'; then
import os, sys, xml.etree.ElementTree as ET
users = ET.parse(sys.argv[1]).getroot().iter("{http://activemq.apache.org/schema/core}authenticationUser")
sys.exit(0 if [u.get("password") for u in users] == [os.environ["SECURED_PASSWORD"]] else 1)
PY
        die "$S_CONF/activemq.xml does not hold the password of $SECURED_USER as written"
    fi
}

secured_answers() {  # a TLS handshake (verified against the CA, for localhost) and a STOMP login
    SECURED_PASSWORD=$SECURED_PASSWORD python3 - "$TLS_PORT" "$S_TLS/ca.pem" "$SECURED_USER" <<'PY' 2>/dev/null
import os, socket, ssl, sys
port, ca, user = int(sys.argv[1]), sys.argv[2], sys.argv[3]
password = os.environ["SECURED_PASSWORD"]
escape = lambda v: v.replace("\\", "\\\\").replace("\n", "\\n").replace(":", "\\c")
try:
    raw = socket.create_connection(("localhost", port), timeout=2)
    s = ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname="localhost")
    s.settimeout(3)
    s.sendall(f"CONNECT\naccept-version:1.2\nhost:localhost\nlogin:{escape(user)}\npasscode:{escape(password)}\n\n\x00".encode())
    sys.exit(0 if s.recv(9) == b"CONNECTED" else 1)
except OSError:
    sys.exit(1)
PY
}

secured_running() { pid_alive "$S_PIDFILE"; }

secured_start() {
    if secured_running && secured_answers; then
        echo "activemq (secured) already running on $HOST:$TLS_PORT (stomp+ssl), $HOST:$MTLS_PORT (client certificates)"
        return 0
    fi
    install
    secured_pki
    secured_write_config
    launch_broker "$S_CONF" "$S_DATA" "$S_LOG" 64M 256M
    write_pidfile "$S_PIDFILE" "$LAUNCHED"
    if ! wait_until 180 "$S_PIDFILE" secured_answers; then
        secured_running || fail_start "activemq (secured) exited during start-up" "$S_LOG"
        secured_stop >/dev/null
        fail_start "activemq (secured) did not answer a TLS login on $HOST:$TLS_PORT within 180 s; stopped it" "$S_LOG"
    fi
    echo "activemq (secured) up on $HOST:$TLS_PORT (stomp+ssl), $HOST:$MTLS_PORT (client certificates); $0 secured env"
}

secured_stop() {
    if secured_running; then stop_pid "$S_PIDFILE" 30; fi
    rm -f "$S_PIDFILE"
    echo "activemq (secured) stopped"
}

secured_status() {
    if secured_running && secured_answers; then
        echo "activemq (secured) running on $HOST:$TLS_PORT (pid $(pid_of "$S_PIDFILE"))"
    else
        echo "activemq (secured) not running"
        return 1
    fi
}

secured_env() {
    SECURED_PASSWORD=$SECURED_PASSWORD STORE_PASSWORD=$STORE_PASSWORD python3 - "$S_TLS" "$TLS_PORT" "$MTLS_PORT" "$SECURED_USER" <<'PY'
import json, os, sys
tls, port, mtls_port, user = sys.argv[1:]
print(json.dumps({
    "host": "localhost", "address": "127.0.0.1", "port": int(port), "mtls_port": int(mtls_port),
    "plain_port": 61613, "user": user, "log": f"{os.path.dirname(tls)}/broker.log", "password": os.environ["SECURED_PASSWORD"],
    "store_password": os.environ["STORE_PASSWORD"], "ca": f"{tls}/ca.pem",
    "client_cert": f"{tls}/client.pem", "client_key": f"{tls}/client.key",
    "untrusted_ca": f"{tls}/untrusted/ca.pem", "untrusted_client_cert": f"{tls}/untrusted/client.pem",
    "untrusted_client_key": f"{tls}/untrusted/client.key",
    "private_keys": [f"{tls}/{n}" for n in ("ca.key", "broker.key", "client.key", "untrusted/ca.key", "untrusted/client.key")],
}, indent=2))
PY
}

server_main "$@"
