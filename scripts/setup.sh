#!/usr/bin/env bash
# Installs everything jetconnect needs on a fresh Debian 12 machine (as root, no systemd):
# Java for Spark, a virtualenv with the core, every plugin under plugins/ and contrib/ (editable),
# the test, lint and docs tools. Idempotent: a second run only checks. Quiet: one line per step, and
# pip's output only when it fails (it is kept in $VENV/.pip.log).
#
#   bash scripts/setup.sh                                 # .venv: the newest PySpark pyproject.toml allows
#   bash scripts/setup.sh --spark 4.2.0 .venv-spark-oldest  # another venv, with that PySpark release
#
# The second form builds the venv scripts/test.sh uses to run part of the suite on the oldest
# PySpark jetconnect supports (the floor of the range in pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

VENV=.venv
SPARK=""
while [ $# -gt 0 ]; do
  case "$1" in
    --spark)
      [ $# -ge 3 ] || { echo "setup: usage: setup.sh [--spark VERSION VENV_DIR]" >&2; exit 2; }
      SPARK=$2; VENV=$3; shift 3 ;;
    *) echo "setup: unknown argument '$1'; usage: setup.sh [--spark VERSION VENV_DIR]" >&2; exit 2 ;;
  esac
done

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || need_apt+=(python3-venv)
# the HDFS plugin's Kerberos (its [kerberos] extra, below): gssapi has no Linux wheel and builds
# against MIT Kerberos's headers
command -v krb5-config >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
command -v gcc >/dev/null 2>&1 || need_apt+=(gcc)
# the docs check opens the built site in a real browser (scripts/check_docs.py --browser, from
# scripts/lint.sh): Debian's Chromium, headless, driven over its DevTools protocol
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if ! "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
  # missing, or left half-made by an interrupted run (no pip): make it afresh
  echo "setup: creating $VENV with $($PY --version)"
  $PY -m venv --clear "$VENV"
fi
case "$VENV" in /*) VPY="$VENV/bin/python" ;; *) VPY="$ROOT/$VENV/bin/python" ;; esac  # absolute or under the root
stamp=$VENV/.jetconnect-installed
inputs=$( (echo "spark=$SPARK"; cat pyproject.toml plugins/*/pyproject.toml contrib/*/pyproject.toml 2>/dev/null) | sha1sum | cut -c1-40)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$inputs" ]; then
  echo "setup: installing jetconnect, its plugins and test tools into $VENV${SPARK:+ (pyspark $SPARK)}"
  log=$VENV/.pip.log
  quiet() {  # run pip, showing its output only if it fails
    if ! "$@" >"$log" 2>&1; then
      cat "$log" >&2
      echo "setup: failed: $* (output above, also in $log)" >&2
      exit 1
    fi
  }
  quiet "$VPY" -m pip install -q --upgrade pip
  if [ -n "$SPARK" ]; then
    # pinned in the same resolve as the core, so pip fails if the version is outside its range
    args=(-e ".[test]" "pyspark[connect]==$SPARK")
  else
    args=(-e ".[test,bench,lint,docs]")
  fi
  for dir in plugins/*/ contrib/*/; do
    [ -f "$dir/pyproject.toml" ] || continue
    case "$dir" in
      plugins/hdfs/) args+=(-e "${dir}[kerberos]") ;;  # the secured HDFS tests log in with Kerberos
      *) args+=(-e "$dir") ;;
    esac
  done
  quiet "$VPY" -m pip install -q "${args[@]}"
  echo "$inputs" > "$stamp"
fi
"$VPY" -c "import jetconnect, pyspark; print('setup: jetconnect', jetconnect.__version__, 'pyspark', pyspark.__version__, 'in $VENV')"
