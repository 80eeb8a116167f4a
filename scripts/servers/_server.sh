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

server_main() {  # server_main "$@": run start|stop|status|restart, or verb_NAME for `NAME` (dashes as
    # underscores); anything else prints the usage and exits 2
    local verb=${1:-}
    case "$verb" in
        start | stop | status) "$verb" ;;
        restart) stop; start ;;
        *)
            local own=verb_${verb//-/_}
            if [ -n "$verb" ] && declare -F "$own" >/dev/null; then
                "$own"
            else
                local extra
                extra=$(declare -F | awk '$3 ~ /^verb_/ {sub("verb_", "", $3); gsub("_", "-", $3); printf "|%s", $3}')
                echo "usage: $0 start|stop|status|restart$extra" >&2
                exit 2
            fi
            ;;
    esac
}
