#!/usr/bin/env bash
# PostgreSQL for jetconnect's JDBC connector: its own cluster under /tmp/jetconnect-postgresql,
# listening on 127.0.0.1 only, no systemd needed (initdb + pg_ctl as the postgres user).
#
#   scripts/servers/postgresql.sh start|stop|restart|status
#
# Connection: postgresql+psycopg://jetconnect:pg-Secret-7f3a@127.0.0.1:${JETCONNECT_PG_PORT:-5432}/jetconnect
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"

ROOT=/tmp/jetconnect-postgresql
DATA=$ROOT/data
SOCKETS=$ROOT/sockets
LOG=$ROOT/server.log
PORT=${JETCONNECT_PG_PORT:-5432}
ROLE=jetconnect
# A password unlike any other word here, so tests can prove it never shows up in a message.
PASSWORD=pg-Secret-7f3a
DATABASE=jetconnect

pg_bin() {
    # The newest installed major version (Debian 12 ships 15).
    ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

install_if_missing() {
    [ -n "$(pg_bin)" ] || apt_install postgresql
    [ -n "$(pg_bin)" ] || die "PostgreSQL binaries not found after apt-get install postgresql"
}

# initdb and the server refuse to run as root: run them as the postgres user when we are root.
as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

answers() {
    PGPASSWORD=$PASSWORD PGCONNECT_TIMEOUT=2 "$(pg_bin)/psql" -h 127.0.0.1 -p "$PORT" -U "$ROLE" \
        -d "$DATABASE" -tAc "select 1" >/dev/null 2>&1
}

running() {
    [ -f "$DATA/postmaster.pid" ] && as_postgres "$(pg_bin)/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

init_cluster() {
    mkdir -p "$ROOT" "$SOCKETS"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$ROOT" "$SOCKETS"
    # Local socket: trust (only this script uses it, to create the role); TCP: password required.
    as_postgres "$(pg_bin)/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
        --encoding=UTF8 --locale=C.UTF-8 >"$ROOT/initdb.log" 2>&1 || die "initdb failed: $(tail -5 "$ROOT/initdb.log")"
}

create_role_and_database() {
    local psql=("$(pg_bin)/psql" -h "$SOCKETS" -p "$PORT" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
    if [ -z "$(as_postgres "${psql[@]}" -c "select 1 from pg_roles where rolname = '$ROLE'")" ]; then
        as_postgres "${psql[@]}" -c "create role $ROLE login" >/dev/null
    fi
    as_postgres "${psql[@]}" -c "alter role $ROLE password '$PASSWORD'" >/dev/null
    if [ -z "$(as_postgres "${psql[@]}" -c "select 1 from pg_database where datname = '$DATABASE'")" ]; then
        as_postgres "${psql[@]}" -c "create database $DATABASE owner $ROLE" >/dev/null
    fi
}

start() {
    install_if_missing
    if running && answers; then echo "postgresql already running on 127.0.0.1:$PORT"; return 0; fi
    [ -f "$DATA/PG_VERSION" ] || init_cluster
    if ! running; then
        # pg_ctl -w waits until the server accepts connections (its own readiness check).
        as_postgres "$(pg_bin)/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $PORT -k $SOCKETS -c max_connections=200" start >/dev/null \
            || die "server did not start; log: $(tail -20 "$LOG" 2>/dev/null)"
    fi
    create_role_and_database
    wait_until 10 - answers || fail_start "the server started but a query as $ROLE does not succeed" "$LOG"
    echo "postgresql up on 127.0.0.1:$PORT (database $DATABASE, role $ROLE)"
}

stop() {
    if [ -n "$(pg_bin)" ] && running; then
        as_postgres "$(pg_bin)/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null || die "pg_ctl stop failed"
    fi
    echo "postgresql stopped"
}

status() {
    if [ -n "$(pg_bin)" ] && running && answers; then echo "postgresql running on 127.0.0.1:$PORT"; else echo "postgresql not running"; return 3; fi
}

server_main "$@"
