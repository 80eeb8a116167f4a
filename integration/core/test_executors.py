"""Where partitions run: in local mode the driver, on a standalone cluster separate executor JVMs.

The cluster profile (scripts/cluster-test.sh) runs this against two one-core workers and prints
which executor process read each partition, as evidence that nothing leaned on driver state.
"""

from __future__ import annotations

import time

from jetconnect import SourceBuilder
from jetconnect._builders import fill_from_iterator
from jetconnect.spark import members
from jetconnect.testing import executor_process


def _where_each_partition_runs(partitions: int):
    def create(ctx):
        return iter([(ctx.global_processor_index, executor_process())])

    return (
        SourceBuilder.batch("where", create)
        .fill_buffer_fn(fill_from_iterator)
        .schema("partition int, process string")
        .distributed(partitions)
        .build()
    )


def _wait_for_executors(spark, wanted: int, timeout: float = 120.0) -> None:
    """Wait until ``wanted`` executors are registered: one lost and replaced mid-run comes back."""
    tracker = spark.sparkContext._jsc.sc().statusTracker()
    deadline = time.monotonic() + timeout
    while len(tracker.getExecutorInfos()) - 1 < wanted:  # one of them is the driver
        assert time.monotonic() < deadline, f"{wanted} executors did not register in {timeout:.0f} s"
        time.sleep(0.5)


def test_partitions_run_in_executor_processes(spark, capsys):
    if spark.conf.get("spark.master").startswith("spark://"):
        _wait_for_executors(spark, members(spark))
    rows = sorted(tuple(r) for r in _where_each_partition_runs(3).read(spark).collect())
    assert [p for p, _ in rows] == list(range(3 * members(spark)))
    processes = {process for _, process in rows}
    with capsys.disabled():
        print(f"\n  partitions by process ({spark.conf.get('spark.master')}): {rows}")
    if spark.conf.get("spark.master").startswith("spark://"):
        assert "driver" not in processes
        assert len(processes) >= 2, f"every partition ran in one executor: {rows}"
    else:
        assert processes == {"driver"}
