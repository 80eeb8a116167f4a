#!/usr/bin/env bash
# The chaos soak (not part of CI): every exactly-once source × sink pair SIGKILLed --kills times
# (default 20) at random, seeded moments and restarted from its checkpoint, its server restarted
# once mid-stream (for imap-hazelcast: one of the 3 members SIGKILLed and started again), then
# counted: a table of rows, lost, duplicated per pair; exit 1 if any is not 0.
#
#   bash scripts/chaos.sh [--pairs core-snapshot,core-wal,files,socket,kafka-parquet,kafka-kafka,jdbc,jms,imap,imap-hazelcast,hdfs]
#                         [--kills N] [--seed N] [--keep-servers]
#
# Starts the servers it needs with scripts/servers/*.sh (and stops those it started, unless
# --keep-servers: use it on a machine whose servers are shared).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || bash scripts/setup.sh
export PATH="$PWD/.venv/bin:$PATH" PYTHON="$PWD/.venv/bin/python"
exec .venv/bin/python integration/chaos/soak.py "$@"
