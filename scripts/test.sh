#!/usr/bin/env bash
# Sets up everything and runs the whole test suite, in three pytest runs:
#   1. unit tests, then integration tests against real servers (each started once by
#      scripts/servers/NAME.sh) through one shared local[2] SparkSession;
#   2. the Spark Connect profile (scripts/test-connect.sh): a client session of a real Connect server;
#   3. the cluster profile (scripts/test-cluster.sh): a standalone master and two workers.
# Every run goes on after a failure, and the exit status is non-zero if any failed.
# Crash matrices and benchmarks are separate commands (scripts/crash-matrix.sh, scripts/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYTHONUNBUFFERED=1
status=0
echo "== 1/3: unit and integration tests (local[2])"
.venv/bin/python -m pytest -m "not crash_matrix" -p no:cacheprovider "$@" || status=1
echo "== 2/3: Spark Connect profile"
bash scripts/test-connect.sh || status=1
echo "== 3/3: standalone cluster profile"
bash scripts/test-cluster.sh || status=1
exit $status
