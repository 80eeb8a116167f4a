#!/usr/bin/env bash
# A three-node Redis Cluster for the imap plugin: redis-server --cluster-enabled yes on
# 127.0.0.1:7001-7003, no replicas, no persistence, data under /tmp/jetconnect-redis-cluster.
# Usage: redis-cluster.sh start|stop|status   (idempotent; installs redis-server if missing)
set -euo pipefail

PORTS=(7001 7002 7003)
DIR=/tmp/jetconnect-redis-cluster

ensure_installed() {
    command -v redis-server >/dev/null && command -v redis-cli >/dev/null && return 0
    # Several installers may share this machine: wait for dpkg's lock instead of failing.
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq redis-server redis-tools >/dev/null
    command -v redis-server >/dev/null || { echo "redis-cluster.sh: redis-server could not be installed" >&2; exit 1; }
}

node_answers() { [ "$(redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null)" = "PONG" ]; }
cluster_ok() { redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info 2>/dev/null | grep -q "cluster_state:ok"; }

start() {
    ensure_installed
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
        for _ in $(seq 1 100); do node_answers "$port" && break; sleep 0.1; done
        node_answers "$port" || { echo "redis-cluster.sh: node $port did not answer PING" >&2; exit 1; }
    done
    if ! redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info | grep -q "cluster_known_nodes:${#PORTS[@]}"; then
        local nodes=()
        for port in "${PORTS[@]}"; do nodes+=("127.0.0.1:$port"); done
        redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$DIR/create.log" 2>&1 || {
            echo "redis-cluster.sh: cluster create failed:" >&2; cat "$DIR/create.log" >&2; exit 1; }
    fi
    for _ in $(seq 1 150); do  # readiness: every slot assigned and the state ok, within 15 s
        if cluster_ok; then echo "redis cluster up on 127.0.0.1:${PORTS[*]}"; return 0; fi
        sleep 0.1
    done
    echo "redis-cluster.sh: cluster did not reach cluster_state:ok" >&2
    redis-cli -h 127.0.0.1 -p "${PORTS[0]}" cluster info >&2 || true
    exit 1
}

stop() {
    for port in "${PORTS[@]}"; do
        node_answers "$port" && redis-cli -h 127.0.0.1 -p "$port" shutdown nosave >/dev/null 2>&1 || true
    done
    for port in "${PORTS[@]}"; do
        for _ in $(seq 1 50); do node_answers "$port" || break; sleep 0.1; done
        rm -f "$DIR/$port/nodes.conf"
    done
    echo "redis cluster stopped"
}

status() {
    if cluster_ok; then echo "redis cluster up on 127.0.0.1:${PORTS[*]}"; else echo "redis cluster down"; exit 1; fi
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
