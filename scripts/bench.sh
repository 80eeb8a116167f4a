#!/usr/bin/env bash
# Runs every benchmark (jetconnect next to the raw or native alternative, ratios in a table).
# Servers are started with the same scripts the tests use. Pass a name to run one, and arguments
# after it for that benchmark: bench.sh core --rows 5000000 --repeat 7
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
declare -A servers=([kafka]=kafka [jdbc]=postgresql [jms]=activemq [hdfs]=hdfs [imap]=redis)
pattern=${1:-*}
shift || true  # what follows the name belongs to the benchmark
for bench in bench/bench_${pattern}.py; do
  name=$(basename "$bench" .py); name=${name#bench_}
  [ -n "${servers[$name]:-}" ] && bash "scripts/servers/${servers[$name]}.sh" start
  echo "== $bench"
  .venv/bin/python "$bench" "$@"
done
