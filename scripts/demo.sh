#!/usr/bin/env bash
# Sets up everything and runs the demo pipeline on embedded defaults (no server needed):
# a batch job, then a streaming job run twice from one checkpoint (each run ends by itself with
# Trigger.AvailableNow; the second resumes where the first ended). One line per step.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m jetconnect.demo "$@"
