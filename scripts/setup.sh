#!/usr/bin/env bash
# Installs everything jetconnect needs on a fresh Debian 12 machine (as root, no systemd):
# Java for Spark, a virtualenv at .venv with the core, every plugin under plugins/ and contrib/,
# and the test tools. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

need_apt=()
command -v java >/dev/null 2>&1 || need_apt+=(openjdk-17-jre-headless)
python3 -c "import venv, ensurepip" >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing ${need_apt[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
  # missing, or left half-made by an interrupted run (no pip): make it afresh
  echo "setup: creating .venv with $($PY --version)"
  $PY -m venv --clear .venv
fi
VPY="$ROOT/.venv/bin/python"
stamp=.venv/.jetconnect-installed
inputs=$(cat pyproject.toml plugins/*/pyproject.toml contrib/*/pyproject.toml 2>/dev/null | sha1sum | cut -c1-40)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$inputs" ]; then
  echo "setup: installing jetconnect, its plugins and test tools into .venv"
  "$VPY" -m pip install -q --upgrade pip
  args=(-e ".[test,bench]")
  for dir in plugins/*/ contrib/*/; do
    [ -f "$dir/pyproject.toml" ] && args+=(-e "$dir")
  done
  "$VPY" -m pip install -q "${args[@]}"
  echo "$inputs" > "$stamp"
fi
"$VPY" -c "import jetconnect, pyspark; print('setup: jetconnect', jetconnect.__version__, 'pyspark', pyspark.__version__)"
