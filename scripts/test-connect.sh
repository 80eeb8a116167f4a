#!/usr/bin/env bash
# The Spark Connect profile: integration/connect against a real Connect server on
# sc://127.0.0.1:15002 (scripts/servers/spark-connect.sh, started by the tests' server fixture).
# A Connect client cannot share a process with a classic SparkSession, hence a pytest run of its own.
# Part of scripts/test.sh; runs alone as `bash scripts/test-connect.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
export PYTHONUNBUFFERED=1 JETCONNECT_TEST_PROFILE=connect
exec .venv/bin/python -m pytest -p no:cacheprovider integration/connect "$@"
