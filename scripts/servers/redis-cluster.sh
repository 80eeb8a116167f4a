#!/usr/bin/env bash
# A three-node Redis Cluster for the imap plugin: redis-server --cluster-enabled yes on
# 127.0.0.1:7001-7003, no replicas, no persistence, data under /tmp/jetconnect-redis-cluster.
# Usage: redis-cluster.sh start|stop|status|restart   (idempotent; installs redis-server if missing)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

PORTS=(7001 7002 7003)
DIR=/tmp/jetconnect-redis-cluster

node_answers() { [ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = "PONG" ]; }
node_down() { ! node_answers "$1"; }
cluster_ok() { redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info 2>/dev/null | grep -q "cluster_state:ok"; }

start() {
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null || apt_install redis-server redis-tools
    if cluster_ok; then echo "redis cluster already up on 127.0.0.1:${PORTS[*]}"; return 0; fi
    for port in "${PORTS[@]}"; do
        mkdir -p "$DIR/$port"
        if ! node_answers "$port"; then
            # A node config left by an earlier cluster would make `--cluster create` refuse.
            rm -f "$DIR/$port/nodes.conf"
            redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --save "" --appendonly no \
                --cluster-enabled yes --cluster-config-file "$DIR/$port/nodes.conf" \
                --cluster-node-timeout 5000 --dir "$DIR/$port" \
                --pidfile "$DIR/$port/redis.pid" --logfile "$DIR/$port/redis.log"
        fi
    done
    for port in "${PORTS[@]}"; do
        wait_until 10 - node_answers "$port" || fail_start "node $port did not answer PING" "$DIR/$port/redis.log"
    done
    if ! redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info | grep -q "cluster_known_nodes:${#PORTS[@]}"; then
        local nodes=()
        for port in "${PORTS[@]}"; do nodes+=("127.0.0.1:$port"); done
        redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$DIR/create.log" 2>&1 \
            || fail_start "cluster create failed" "$DIR/create.log"
    fi
    # readiness: every slot assigned and the state ok
    wait_until 15 - cluster_ok || fail_start "the cluster did not reach cluster_state:ok" "$DIR/${PORTS[0]}/redis.log"
    echo "redis cluster up on 127.0.0.1:${PORTS[*]}"
}

stop() {
    for port in "${PORTS[@]}"; do
        node_answers "$port" && redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
    done
    for port in "${PORTS[@]}"; do
        wait_until 5 - node_down "$port" || die "node $port did not stop"
        rm -f "$DIR/$port/nodes.conf"
    done
    echo "redis cluster stopped"
}

status() {
    if cluster_ok; then echo "redis cluster up on 127.0.0.1:${PORTS[*]}"; else echo "redis cluster down"; exit 1; fi
}

server_main "$@"
