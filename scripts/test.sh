#!/usr/bin/env bash
# Sets up everything, checks lint, format and types (scripts/lint.sh), and runs the whole test
# suite in four pytest runs:
#   1. unit tests, then integration tests against real servers (each started once by
#      scripts/servers/NAME.sh) through one shared local[2] SparkSession, on the newest PySpark
#      that pyproject.toml's range allows (.venv);
#   2. the Spark Connect profile (scripts/test-connect.sh): a client session of a real Connect server;
#   3. the cluster profile (scripts/test-cluster.sh): a standalone master and two workers;
#   4. the oldest-PySpark profile (scripts/test-spark-oldest.sh): unit tests, integration/core and
#      integration/files on the floor of the range (.venv-spark-oldest).
# Every run goes on after a failure, and the exit status is non-zero if any failed. Each phase's
# start is printed, and run 1's slowest tests; every test's time is in build/test-results/local.xml.
# Crash matrices and benchmarks are separate commands (scripts/crash-matrix.sh, scripts/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYTHONUNBUFFERED=1
status=0
echo "== setup took ${SECONDS}s"
echo "== 0/4: lint, format and types (scripts/lint.sh)"
bash scripts/lint.sh || status=1
echo "== at ${SECONDS}s, 1/4: unit and integration tests (local[2])"
.venv/bin/python -m pytest -m "not crash_matrix" -p no:cacheprovider --durations=25 --junitxml=build/test-results/local.xml "$@" || status=1
echo "== at ${SECONDS}s, 2/4: Spark Connect profile"
bash scripts/test-connect.sh || status=1
echo "== at ${SECONDS}s, 3/4: standalone cluster profile"
bash scripts/test-cluster.sh || status=1
echo "== at ${SECONDS}s, 4/4: oldest supported PySpark profile"
bash scripts/test-spark-oldest.sh || status=1
echo "== all done in ${SECONDS}s, status $status"
exit $status
