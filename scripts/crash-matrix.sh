#!/usr/bin/env bash
# The long SIGKILL-and-restart matrix (every kill point, every store): not part of CI. Without
# arguments it then runs every connector family's crash test on a standalone cluster too
# (scripts/test-cluster.sh with JETCONNECT_CLUSTER_CRASH=all; CI runs three of them there);
# arguments go to pytest and run the local matrix only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
status=0
.venv/bin/python -m pytest -m "crash or crash_matrix" -p no:cacheprovider "$@" || status=1
if [ $# -eq 0 ]; then
    echo "== every family's streaming crash test, pipelines on a standalone cluster"
    JETCONNECT_CLUSTER_CRASH=all bash scripts/test-cluster.sh || status=1
fi
exit $status
