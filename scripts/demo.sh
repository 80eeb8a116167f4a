#!/usr/bin/env bash
# Sets up everything and runs the demo pipeline on embedded defaults (no server needed):
# a batch job, then a streaming job that is stopped and resumed from its checkpoint.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m jetconnect.demo "$@"
