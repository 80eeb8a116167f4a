#!/usr/bin/env bash
# Sets up everything and runs the whole test suite: unit tests, then integration tests against
# real servers (each started once by scripts/servers/NAME.sh) through one shared SparkSession.
# Crash matrices and benchmarks are separate commands (scripts/crash-matrix.sh, scripts/bench.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export PYTHONUNBUFFERED=1
exec .venv/bin/python -m pytest -m "not crash_matrix" -p no:cacheprovider "$@"
