#!/usr/bin/env bash
# ActiveMQ (Debian's `activemq` package) with a STOMP connector on 127.0.0.1:61613.
#
#   scripts/servers/activemq.sh start|stop|status|restart|fresh
#
# No systemd here: the broker is started the way /usr/bin/activemq would start it (same java
# flags), from a private configuration under /tmp/jetconnect-activemq, in the background.
# Messages are persistent (KahaDB under the same folder), so `stop` then `start` is a real broker
# restart that keeps every queued message: the JMS tests rely on that. `fresh` stops the broker,
# deletes its store and starts it empty: the benchmark's way to measure on a store that messages
# left by earlier runs have not grown (one left message keeps a whole 32 MiB journal file).
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
    local java
    java=$(command -v java)
    # The flags of /usr/bin/activemq for Java > 8.
    setsid "$java" -Xms256M -Xmx1024M -Dorg.apache.activemq.UseDedicatedTaskRunner=true \
        --add-reads=java.xml=java.logging \
        --add-opens java.base/java.security=ALL-UNNAMED \
        --add-opens java.base/java.net=ALL-UNNAMED \
        --add-opens java.base/java.lang=ALL-UNNAMED \
        --add-opens java.base/java.util=ALL-UNNAMED \
        --add-opens java.naming/javax.naming.spi=ALL-UNNAMED \
        --add-opens java.rmi/sun.rmi.transport.tcp=ALL-UNNAMED \
        --add-opens java.base/java.util.concurrent=ALL-UNNAMED \
        --add-opens java.base/java.util.concurrent.atomic=ALL-UNNAMED \
        -Dlog4j2.configurationFile="$CONF/log4j2.properties" \
        -Dactivemq.classpath="$CONF" \
        -Dactivemq.home="$HOME_DIR" \
        -Dactivemq.base="$BASE" \
        -Dactivemq.conf="$CONF" \
        -Dactivemq.data="$DATA" \
        -jar "$HOME_DIR/bin/activemq.jar" start "xbean:file:$CONF/activemq.xml" \
        >>"$LOG" 2>&1 </dev/null &
    write_pidfile "$PIDFILE" $!
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

server_main "$@"
