#!/usr/bin/env bash
# PostgreSQL for jetconnect's JDBC connector: its own cluster under /tmp/jetconnect-postgresql,
# listening on 127.0.0.1 only, no systemd needed (initdb + pg_ctl as the postgres user).
#
#   scripts/servers/postgresql.sh start|stop|restart|status
#   scripts/servers/postgresql.sh secured start|stop|status|env
#
# Connection: postgresql+psycopg://jetconnect:pg-Secret-7f3a@127.0.0.1:${JETCONNECT_PG_PORT:-5432}/jetconnect
#
# `secured` runs a second cluster beside it (the plain one above is every test's and stays as it
# is), the way a production server is set up: TLS only (`hostssl`, no `host` line), scram-sha-256,
# a server certificate for DNS:localhost from the script's own CA, client certificates checked
# against that CA. Its role's password holds ' " @ %. A third, tiny cluster serves an expired
# certificate (for the tests of that case). `secured env` prints, as JSON, what a client needs:
# ports, users, passwords, the CA and the client certificates (all under $ROOT/secured).
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

# --- the secured clusters ---------------------------------------------------------------------------

SECURED=$ROOT/secured
TLS=$SECURED/tls
SECURED_PORT=${JETCONNECT_PG_SECURED_PORT:-5433}
EXPIRED_PORT=${JETCONNECT_PG_EXPIRED_PORT:-5434}
SECURED_ROLE=jetconnect_tls
CERT_ROLE=jetconnect_cert  # logs in with a client certificate (CN=jetconnect_cert), no password
# ' " @ % (and a %41 that a careless decoder turns into "A"): what breaks quoting in URLs, libpq
# connection strings, SQL and shells. Single-quoted here ('\'' is a quote).
SECURED_PASSWORD='tls-Pg'\''q"7@x%41'

secured_pki() {  # the CA, the servers' certificates, the client certificates; and another CA nobody trusts
    make_ca "$TLS" "jetconnect PostgreSQL test CA"
    make_server_cert "$TLS" server "DNS:localhost"
    make_expired_server_cert "$TLS" expired "DNS:localhost"
    make_client_cert "$TLS" client "$CERT_ROLE"
    make_ca "$TLS/untrusted" "a CA the server does not trust"
    make_client_cert "$TLS/untrusted" client "$CERT_ROLE"
    make_server_cert "$TLS/untrusted" server "DNS:localhost"
    # the server reads its key as the postgres user, and refuses one that others may read
    if [ "$(id -u)" = 0 ]; then
        chown postgres:postgres "$TLS/server.key" "$TLS/expired.key"
        chmod 755 "$SECURED" "$TLS"
    fi
}

secured_answers() {  # secured_answers PORT: a verify-full login as the password role succeeds
    PGPASSWORD=$SECURED_PASSWORD PGCONNECT_TIMEOUT=2 PGSSLMODE=verify-full PGSSLROOTCERT=$TLS/ca.pem \
        "$(pg_bin)/psql" -h localhost -p "$1" -U "$SECURED_ROLE" -d "$DATABASE" -tAc "select 1" >/dev/null 2>&1
}

secured_running() {  # secured_running NAME
    [ -f "$SECURED/$1/data/postmaster.pid" ] && as_postgres "$(pg_bin)/pg_ctl" -D "$SECURED/$1/data" status >/dev/null 2>&1
}

secured_cluster_start() {  # secured_cluster_start NAME PORT CERT: a TLS-only cluster serving TLS/CERT.pem
    local name=$1 port=$2 cert=$3 dir=$SECURED/$1
    local data=$dir/data sockets=$dir/sockets
    if secured_running "$name"; then return 0; fi
    mkdir -p "$dir" "$sockets"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir" "$sockets"
    if [ ! -f "$data/PG_VERSION" ]; then
        as_postgres "$(pg_bin)/initdb" -D "$data" -U postgres --auth-local=trust --auth-host=reject \
            --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || die "initdb of $data failed: $(tail -5 "$dir/initdb.log")"
    fi
    # Written at every start, so a changed script takes effect: TLS on, its files, small memory.
    as_postgres tee "$data/jetconnect.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$sockets'
max_connections = 50
shared_buffers = 16MB
password_encryption = 'scram-sha-256'
ssl = on
ssl_cert_file = '$TLS/$cert.pem'
ssl_key_file = '$TLS/$cert.key'
ssl_ca_file = '$TLS/ca.pem'
ssl_min_protocol_version = 'TLSv1.2'
log_connections = on
CONF
    grep -q "^include 'jetconnect.conf'" "$data/postgresql.conf" || echo "include 'jetconnect.conf'" | as_postgres tee -a "$data/postgresql.conf" >/dev/null
    # Only TLS over TCP: a plaintext client finds no line that admits it. The socket (this script's
    # own way in) trusts the superuser only.
    as_postgres tee "$data/pg_hba.conf" >/dev/null <<HBA
local   all  postgres                 trust
hostssl all  $CERT_ROLE  127.0.0.1/32 cert
hostssl all  all         127.0.0.1/32 scram-sha-256
HBA
    as_postgres "$(pg_bin)/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 start >/dev/null \
        || die "the $name cluster did not start; log: $(tail -20 "$dir/server.log" 2>/dev/null)"
    local psql=("$(pg_bin)/psql" -h "$sockets" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
    # The password reaches psql in its environment (\getenv), never on a command line `ps` shows.
    as_postgres env JC_PASSWORD="$SECURED_PASSWORD" "${psql[@]}" >/dev/null <<SQL || die "could not create the roles of the $name cluster"
select 'create role $SECURED_ROLE login' where not exists (select from pg_roles where rolname = '$SECURED_ROLE') \gexec
select 'create role $CERT_ROLE login' where not exists (select from pg_roles where rolname = '$CERT_ROLE') \gexec
\getenv jc_password JC_PASSWORD
alter role $SECURED_ROLE password :'jc_password';
select 'create database $DATABASE owner $SECURED_ROLE' where not exists (select from pg_database where datname = '$DATABASE') \gexec
\c $DATABASE
grant create, usage on schema public to $CERT_ROLE;
SQL
}

secured_cluster_stop() {  # secured_cluster_stop NAME
    if [ -n "$(pg_bin)" ] && secured_running "$1"; then
        as_postgres "$(pg_bin)/pg_ctl" -D "$SECURED/$1/data" -m fast -w stop >/dev/null || die "pg_ctl stop of the $1 cluster failed"
    fi
}

secured_start() {
    install_if_missing
    if secured_running main && secured_answers "$SECURED_PORT" && secured_running expired; then
        echo "postgresql (secured) already running on 127.0.0.1:$SECURED_PORT (expired certificate: $EXPIRED_PORT)"
        return 0
    fi
    mkdir -p "$SECURED"
    secured_pki
    secured_cluster_start main "$SECURED_PORT" server
    secured_cluster_start expired "$EXPIRED_PORT" expired
    wait_until 10 - secured_answers "$SECURED_PORT" \
        || fail_start "the secured cluster started but a verify-full login as $SECURED_ROLE fails" "$SECURED/main/server.log"
    echo "postgresql (secured) up on 127.0.0.1:$SECURED_PORT, TLS only (expired certificate: $EXPIRED_PORT); $0 secured env"
}

secured_stop() {
    secured_cluster_stop main
    secured_cluster_stop expired
    echo "postgresql (secured) stopped"
}

secured_status() {
    if [ -n "$(pg_bin)" ] && secured_running main && secured_answers "$SECURED_PORT" && secured_running expired; then
        echo "postgresql (secured) running on 127.0.0.1:$SECURED_PORT (expired certificate: $EXPIRED_PORT)"
    else
        echo "postgresql (secured) not running"
        return 3
    fi
}

secured_env() {  # what a client needs, as JSON (python3 quotes the password exactly)
    SECURED_PASSWORD=$SECURED_PASSWORD python3 - "$TLS" "$SECURED_PORT" "$EXPIRED_PORT" "$SECURED_ROLE" "$CERT_ROLE" "$DATABASE" <<'PY'
import json, os, sys
tls, port, expired_port, role, cert_role, database = sys.argv[1:]
print(json.dumps({
    "host": "localhost", "address": "127.0.0.1", "port": int(port), "expired_port": int(expired_port),
    "database": database, "user": role, "password": os.environ["SECURED_PASSWORD"], "cert_user": cert_role,
    "ca": f"{tls}/ca.pem", "client_cert": f"{tls}/client.pem", "client_key": f"{tls}/client.key",
    "untrusted_ca": f"{tls}/untrusted/ca.pem", "untrusted_client_cert": f"{tls}/untrusted/client.pem",
    "untrusted_client_key": f"{tls}/untrusted/client.key",
    "private_keys": [f"{tls}/{n}" for n in ("ca.key", "server.key", "expired.key", "client.key",
                     "untrusted/ca.key", "untrusted/client.key", "untrusted/server.key")],
}, indent=2))
PY
}

server_main "$@"
