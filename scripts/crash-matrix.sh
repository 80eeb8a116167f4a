#!/usr/bin/env bash
# The long SIGKILL-and-restart matrix (every kill point, every store): not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -m "crash or crash_matrix" -p no:cacheprovider "$@"
