#!/usr/bin/env bash
# Runs every benchmark (jetconnect next to the raw or native alternative, ratios in a table), each
# writing its rows to bench/results/<name>.json. Servers are started with the same scripts the tests
# use. Pass a name to run one, and arguments after it for that benchmark:
#   bash scripts/bench.sh core --rows 5000000 --repeat 7
# and `chart` to draw every bench/results/*.json into docs/bench.png (arguments go to bench/chart.py):
#   bash scripts/bench.sh chart
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
pattern=${1:-*}
shift || true  # what follows the name belongs to the benchmark
if [ "$pattern" = chart ]; then
  exec .venv/bin/python bench/chart.py "$@"
fi
declare -A servers=([kafka]=kafka [jdbc]=postgresql [jms]=activemq [hdfs]=hdfs [imap]=hazelcast)
benches=()
for bench in bench/bench_${pattern}.py; do
  [ -f "$bench" ] && benches+=("$bench")
done
if [ ${#benches[@]} -eq 0 ]; then
  known=$(ls bench/bench_*.py | sed 's|bench/bench_||; s|\.py$||' | tr '\n' ' ')
  echo "bench.sh: no benchmark '$pattern' (known: ${known}chart)" >&2
  exit 2
fi
for bench in "${benches[@]}"; do
  name=$(basename "$bench" .py); name=${name#bench_}
  [ -n "${servers[$name]:-}" ] && bash "scripts/servers/${servers[$name]}.sh" start
  echo "== $bench $*"
  .venv/bin/python "$bench" "$@"
done
