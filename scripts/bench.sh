#!/usr/bin/env bash
# Runs every benchmark (jetconnect next to the raw or native alternative, ratios in a table).
# Servers are started with the same scripts the tests use. Pass a name to run one: bench.sh kafka
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
declare -A servers=([kafka]=kafka [jdbc]=postgresql [jms]=activemq [hdfs]=hdfs [imap]=redis)
for bench in bench/bench_${1:-*}.py; do
  name=$(basename "$bench" .py); name=${name#bench_}
  [ -n "${servers[$name]:-}" ] && bash "scripts/servers/${servers[$name]}.sh" start
  echo "== $bench"
  .venv/bin/python "$bench"
done
