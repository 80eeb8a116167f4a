# What every scripts/servers/*.sh shares: errors, installing Debian packages, waiting for a server
# to answer, stopping a daemon by its pid file, and the command line (start|stop|status|restart and
# the script's own verbs). Sourced, never run:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/_server.sh"
#   start() { ...; wait_until 20 "$PIDFILE" answers || fail_start "did not answer" "$LOG"; }
#   stop() { stop_pid "$PIDFILE"; }
#   status() { ... }
#   verb_fresh() { ... }          # an extra verb: `NAME.sh fresh`
#   server_main "$@"
#
# Each script keeps only what is its own: how to install and launch it, and what "answers" means.

# The script's name, for messages: redis.sh, hdfs.sh, ...
SERVER_SCRIPT=$(basename "$0")

die() {  # die MESSAGE...: the message on stderr, prefixed with the script's name; exit 1
    echo "$SERVER_SCRIPT: $*" >&2
    exit 1
}

apt_install() {  # apt_install PACKAGE...: install with apt-get as root; waits for dpkg's lock (several
    # installers may share a machine) and refreshes the package lists once if they are empty or stale
    local apt=(apt-get -o DPkg::Lock::Timeout=600)
    export DEBIAN_FRONTEND=noninteractive
    echo "$SERVER_SCRIPT: installing $* (apt-get)"
    "${apt[@]}" install -y -qq "$@" >/dev/null 2>&1 && return 0
    "${apt[@]}" update -qq >/dev/null || die "apt-get update failed"
    "${apt[@]}" install -y -qq "$@" >/dev/null || die "apt-get install $* failed"
}

maven_jars() {  # maven_jars POM DIR [MVN-ARGS...]: POM's dependencies into DIR, from Maven Central once per
    # content of POM (DIR/.complete holds its hash): an unchanged pom never reaches Maven again, a
    # changed one (another version) fetches afresh. Installs Maven when missing. The copy lands in
    # DIR.tmp first, so an interrupted fetch never passes for a complete one.
    local pom=$1 dir=$2 hash
    shift 2
    hash=$(sha256sum "$pom" | cut -d' ' -f1)
    [ "$(cat "$dir/.complete" 2>/dev/null)" = "$hash" ] && return 0
    command -v mvn >/dev/null 2>&1 || apt_install maven
    echo "$SERVER_SCRIPT: fetching the jars of $pom from Maven Central into $dir" >&2
    rm -rf "$dir.tmp"
    mkdir -p "$(dirname "$dir")"
    mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dir.tmp" "$@" >&2 \
        || die "mvn could not fetch the jars of $pom"
    echo "$hash" >"$dir.tmp/.complete"
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
}

# A pidfile holds "PID START", START being the process's start time (clock ticks since boot,
# /proc/PID/stat field 22). Pids wrap (pid_max is 32768 on many machines and a test run forks
# thousands of processes), so a pidfile left by a server that died with its machine's session may
# name another process by now: only the process with that pid *and* that start time is ours.
# pid_alive ignores any other, and stop_pid never signals it.
start_time_of() {  # start_time_of PID: the process's start time; fails if there is no such process
    local stat fields
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    stat=${stat##*) }  # the fields after the command name, which may hold spaces and parentheses
    read -ra fields <<<"$stat"
    echo "${fields[19]}"  # field 22; this array starts at field 3
}

write_pidfile() {  # write_pidfile PIDFILE PID: record PID (just started, e.g. $!) as the server's
    echo "$2 $(start_time_of "$2" || echo gone)" >"$1"
}

pid_of() {  # pid_of PIDFILE: print the pid it records if that very process still runs; else fail
    local pid="" start=""
    [ -f "$1" ] || return 1
    read -r pid start <"$1" || [ -n "$pid" ] || return 1
    [ -n "$start" ] && [ "$(start_time_of "$pid")" = "$start" ] || return 1
    echo "$pid"
}

pid_alive() { pid_of "$1" >/dev/null; }  # pid_alive PIDFILE: the process it records is running

wait_until() {  # wait_until SECONDS PIDFILES CHECK [ARGS...]: poll CHECK every 0.1 s until it succeeds
    # (true); false after SECONDS, or at once when the process of one of the comma-separated
    # PIDFILES has exited ("-": a server that daemonises itself, nothing to watch)
    local deadline=$((SECONDS + $1)) pidfiles=()
    [ "$2" = - ] || IFS=, read -ra pidfiles <<<"$2"
    shift 2
    while true; do
        "$@" 2>/dev/null && return 0
        for pidfile in "${pidfiles[@]}"; do pid_alive "$pidfile" || return 1; done
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.1
    done
}

fail_start() {  # fail_start WHAT LOG...: say that start failed and show the end of each log; exit 1
    local what=$1
    shift
    echo "$SERVER_SCRIPT: $what" >&2
    for log in "$@"; do
        [ -f "$log" ] || continue
        echo "--- end of $log" >&2
        tail -n 30 "$log" >&2
    done
    exit 1
}

STOP_FORCED=0
stop_pid() {  # stop_pid PIDFILE [SECONDS] [--group]: SIGTERM the process (its whole process group with
    # --group, for daemons started with setsid), SIGKILL it after SECONDS (default 10; STOP_FORCED=1
    # then), and remove PIDFILE
    local pidfile=$1 seconds=${2:-10} group=${3:-}
    STOP_FORCED=0
    local pid target
    # a pidfile whose process is gone (or whose pid another process has taken) is only removed
    pid=$(pid_of "$pidfile") || { rm -f "$pidfile"; return 0; }
    target=$pid
    [ "$group" = --group ] && target=-$pid
    kill -TERM -- "$target" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + seconds))
    while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL -- "$target" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
        STOP_FORCED=1
    fi
    rm -f "$pidfile"
}

# --- certificates for a server's secured (TLS) mode --------------------------------------------
# A script's own certificate authority and the certificates it signs, made with openssl, kept under
# the server's directory (never in the repository), private keys mode 0600. Each function makes its
# files once and keeps them on later starts (a client holding the CA keeps trusting the server);
# delete the folder to make new ones. Certificates name hosts as subjectAltName entries
# ("DNS:localhost" or "DNS:localhost,IP:127.0.0.1"), which is what every TLS client checks.

make_ca() {  # make_ca DIR [CN]: a certificate authority, DIR/ca.key and DIR/ca.pem (10 years)
    local dir=$1 cn=${2:-jetconnect test CA}
    [ -s "$dir/ca.pem" ] && [ -s "$dir/ca.key" ] && return 0
    mkdir -p "$dir"
    ( umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/ca.key" 2>/dev/null ) \
        || die "openssl could not make the key of $dir/ca.key"
    openssl req -x509 -new -key "$dir/ca.key" -sha256 -days 3650 -subj "/CN=$cn" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -out "$dir/ca.pem" 2>/dev/null || die "openssl could not make $dir/ca.pem"
}

_sign_cert() {  # _sign_cert CADIR NAME CN EXTENSIONS START END: CADIR/NAME.key + NAME.pem, signed by
    # CADIR's CA, valid from START to END (openssl ca's YYYYMMDDHHMMSSZ); `openssl ca` because it
    # alone (in OpenSSL 3.0) takes a start and an end date, which an expired certificate needs
    local dir=$1 name=$2 cn=$3 ext=$4 start=$5 end=$6 work
    [ -s "$dir/$name.pem" ] && [ -s "$dir/$name.key" ] && return 0
    [ -s "$dir/ca.pem" ] || die "no CA in $dir (make_ca $dir first)"
    work=$(mktemp -d)
    ( umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/$name.key" 2>/dev/null ) \
        || die "openssl could not make the key of $dir/$name.key"
    openssl req -new -key "$dir/$name.key" -subj "/CN=$cn" -out "$work/req.csr" 2>/dev/null \
        || die "openssl could not make a request for $dir/$name.pem"
    : >"$work/index.txt"
    mkdir "$work/new"
    printf '%s\n' "$ext" >"$work/ext.cnf"
    printf '%s\n' "[ca]" "default_ca = this" "[this]" "database = $work/index.txt" "new_certs_dir = $work/new" \
        "rand_serial = yes" "default_md = sha256" "policy = any" "unique_subject = no" "[any]" \
        "commonName = supplied" >"$work/ca.cnf"
    openssl ca -batch -notext -config "$work/ca.cnf" -cert "$dir/ca.pem" -keyfile "$dir/ca.key" \
        -in "$work/req.csr" -out "$dir/$name.pem" -startdate "$start" -enddate "$end" \
        -extfile "$work/ext.cnf" >"$work/ca.log" 2>&1 || die "openssl could not sign $dir/$name.pem: $(tail -3 "$work/ca.log")"
    rm -rf "$work"
}

_cert_date() { date -u -d "$1" +%Y%m%d%H%M%SZ; }  # _cert_date "now - 1 day": openssl ca's date form

_SERVER_EXT='extendedKeyUsage=serverAuth
keyUsage=critical,digitalSignature,keyEncipherment'

make_server_cert() {  # make_server_cert CADIR NAME SANS: a server certificate for SANS ("DNS:localhost"),
    # CADIR/NAME.key and CADIR/NAME.pem, signed by CADIR's CA, valid for 5 years
    _sign_cert "$1" "$2" "${3#*:}" "subjectAltName=$3
$_SERVER_EXT" "$(_cert_date 'now - 1 day')" "$(_cert_date 'now + 1825 days')"
}

make_expired_server_cert() {  # make_expired_server_cert CADIR NAME SANS: as make_server_cert, but its
    # validity ended a year ago (the certificate a server forgot to renew)
    _sign_cert "$1" "$2" "${3#*:}" "subjectAltName=$3
$_SERVER_EXT" "$(_cert_date 'now - 730 days')" "$(_cert_date 'now - 365 days')"
}

make_client_cert() {  # make_client_cert CADIR NAME CN: a client certificate whose subject is CN=CN (the
    # user name a server that maps certificates to users reads), CADIR/NAME.key and CADIR/NAME.pem
    _sign_cert "$1" "$2" "$3" "extendedKeyUsage=clientAuth
keyUsage=critical,digitalSignature,keyEncipherment" "$(_cert_date 'now - 1 day')" "$(_cert_date 'now + 1825 days')"
}

make_pkcs12() {  # make_pkcs12 CADIR NAME PASSWORD: CADIR/NAME.p12 holding NAME.key and NAME.pem with the
    # CA (a Java server's keystore); the password reaches openssl in the environment, not on a command line
    local dir=$1 name=$2
    [ -s "$dir/$name.p12" ] && return 0
    ( umask 077 && P12_PASSWORD=$3 openssl pkcs12 -export -in "$dir/$name.pem" -inkey "$dir/$name.key" \
        -certfile "$dir/ca.pem" -name "$name" -passout env:P12_PASSWORD -out "$dir/$name.p12" 2>/dev/null ) \
        || die "openssl could not make $dir/$name.p12"
}

make_truststore() {  # make_truststore CADIR PASSWORD: CADIR/ca.p12, the CA as the trusted entry of a PKCS12
    # store, which Java reads as a truststore (keytool, as OpenSSL 3.0 cannot mark an entry trusted)
    local dir=$1
    [ -s "$dir/ca.p12" ] && return 0
    ( umask 077 && P12_PASSWORD=$2 keytool -importcert -noprompt -alias ca -file "$dir/ca.pem" -storetype PKCS12 \
        -keystore "$dir/ca.p12" -storepass:env P12_PASSWORD >/dev/null 2>&1 ) || die "keytool could not make $dir/ca.p12"
}

verb_secured() {  # NAME.sh secured start|stop|status|env: the script's secured twin of its server, by the
    # secured_start, secured_stop, secured_status and secured_env it defines (env: where its CA,
    # certificates and credentials are, for tests)
    case "${1:-}" in
        start | stop | status | env) "secured_$1" ;;
        *) echo "usage: $0 secured start|stop|status|env" >&2; exit 2 ;;
    esac
}

server_main() {  # server_main "$@": run start|stop|status|restart, or verb_NAME for `NAME` (dashes as
    # underscores) with the arguments after it; anything else prints the usage and exits 2
    local verb=${1:-}
    case "$verb" in
        start | stop | status) "$verb" ;;
        restart) stop; start ;;
        *)
            local own=verb_${verb//-/_}
            if [ -n "$verb" ] && declare -F "$own" >/dev/null; then
                "$own" "${@:2}"
            else
                local extra
                extra=$(declare -F | awk '$3 ~ /^verb_/ {sub("verb_", "", $3); gsub("_", "-", $3); printf "|%s", $3}')
                echo "usage: $0 start|stop|status|restart$extra" >&2
                exit 2
            fi
            ;;
    esac
}
