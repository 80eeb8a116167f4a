#!/usr/bin/env bash
# The cluster profile: jetconnect on a Spark standalone cluster (a master and two one-core workers
# on 127.0.0.1, scripts/servers/spark-cluster.sh), executors in their own processes.
#   1. the core's integration tests, the test run's session on the cluster; test_executors prints
#      which executor process read each partition;
#   2. streaming crash tests, each pipeline on the cluster (SIGKILLed and restarted there), the test
#      run's own session local so the pipelines get the cluster's cores: by default three that
#      stand for the three ways a stream keeps its place (a receiver's spool: the core WAL stream;
#      a server's positions with a two-phase sink: Kafka to Kafka; a journal into an idempotent
#      sink: IMap), ~100 s each; with JETCONNECT_CLUSTER_CRASH=all one per connector family (eight,
#      as scripts/crash-matrix.sh runs them). Every family's crash test runs on local[2] in the
#      main test run either way.
# Part of scripts/test.sh; runs alone as `bash scripts/test-cluster.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
export PYTHONUNBUFFERED=1 JETCONNECT_SPARK_MASTER=spark://127.0.0.1:7077
PYTEST=(.venv/bin/python -m pytest -p no:cacheprovider)

if ! bash scripts/servers/spark-cluster.sh status >/dev/null 2>&1; then
    trap 'bash scripts/servers/spark-cluster.sh stop >/dev/null' EXIT
fi
bash scripts/servers/spark-cluster.sh start

echo "== cluster profile 1/2: core integration tests on $JETCONNECT_SPARK_MASTER"
"${PYTEST[@]}" -m "not crash and not crash_matrix" integration/core "$@"

CRASH_TESTS=(
    "integration/core/test_crash.py::test_wal_stream_killed_mid_batch_loses_nothing_received"
    "integration/imap/test_imap_crash.py::test_journal_to_map_survives_sigkill"
    "integration/kafka/test_crash.py::test_kafka_to_kafka_exactly_once_when_killed_between_kafka_commit_and_spark_commit"
)
if [ "${JETCONNECT_CLUSTER_CRASH:-}" = all ]; then
    CRASH_TESTS+=(
        "integration/files/test_files_crash.py::test_watcher_to_files_sink_survives_sigkill_mid_batch"
        "integration/hdfs/test_crash.py::test_kill_mid_batch_then_restart_writes_every_line_once"
        "integration/jdbc/test_jdbc_streaming.py::test_sigkill_between_the_sinks_commit_and_sparks_loses_nothing_and_writes_nothing_twice"
        "integration/jms/test_jms.py::test_sigkill_of_the_driver_mid_stream_then_restart_is_exactly_once"
        "integration/socket/test_socket.py::test_sigkill_of_the_driver_then_restart_loses_nothing_received"
    )
fi
echo "== cluster profile 2/2: ${#CRASH_TESTS[@]} streaming crash tests, pipelines on $JETCONNECT_SPARK_MASTER"
JETCONNECT_TEST_SPARK_MASTER="local[2]" "${PYTEST[@]}" "$@" "${CRASH_TESTS[@]}"
