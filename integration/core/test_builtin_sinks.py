"""The built-in ``logger`` and ``noop`` sinks through the real SparkSession, batch and streaming
(from a checkpoint, restarted once): what a user sees of the logged rows, and what noop takes.

Where the logger's lines go: the rows are logged in Spark's Python workers. In local mode a
worker's stderr is copied to the driver JVM's stderr, the console the application was started from
(on a cluster, the executor's stderr log, shown in Spark's UI); with
``spark.sql.pyspark.worker.logging.enabled`` Spark collects the records instead, and
``spark.tvf.python_worker_logs()`` returns them. The shared session's stderr is the test runner's,
so the console path is checked in processes of their own (``logger_console.py``). Spark's collection
was tried for a stream too: its stdout reader thread died with a StackOverflowError and the test
found no row, so streams are checked on the console.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from jetconnect import sinks
from jetconnect.testing import checkpoint_batches, wait_until

WORKER_LOGGING = "spark.sql.pyspark.worker.logging.enabled"


@pytest.fixture
def worker_logs(spark) -> Iterator[None]:
    """Spark's collection of the Python workers' log records, on for one test."""
    spark.conf.set(WORKER_LOGGING, "true")
    try:
        yield
    finally:
        spark.conf.unset(WORKER_LOGGING)


def logged(spark, tag: str) -> list[tuple[str, str, str]]:
    """``(level, message, logger)`` of every record the workers logged whose message starts with ``tag``."""
    rows = spark.tvf.python_worker_logs().where(f"startswith(msg, '{tag}')").select("level", "msg", "logger").collect()
    return [(r.level, r.msg, r.logger) for r in rows]


def sequences(records: list[tuple[str, str, str]], tag: str) -> list[int]:
    """The ``sequence`` of each ``Row(sequence=..., timestamp=...)`` the logger logged after ``tag``."""
    return [int(msg[len(tag) :].split("sequence=")[1].split(",")[0]) for _, msg, _ in records]


def test_a_batch_write_logs_every_row_at_info_where_spark_collects_worker_logs(spark, worker_logs):
    # Once no INFO row reached any handler (Python's last resort prints WARNING and up): this
    # found nothing at all for the default level.
    tag = f"batch-{uuid.uuid4().hex[:8]} "
    df = spark.range(0, 40, numPartitions=3).selectExpr("id", "concat('v', id) AS text")
    sinks.logger(prefix=tag).write(df)
    records = logged(spark, tag)
    assert sorted(msg for _, msg, _ in records) == sorted(f"{tag}Row(id={i}, text='v{i}')" for i in range(40))
    assert {(level, name) for level, _, name in records} == {("INFO", "jetconnect.sink.logger")}
    warned = f"warn-{uuid.uuid4().hex[:8]} "
    df.limit(3).write.format("jetconnect.logger").option("level", "warning").option("prefix", warned).mode(
        "append"
    ).save()
    assert {level for level, _, _ in logged(spark, warned)} == {"WARNING"} and len(logged(spark, warned)) == 3


def test_noop_takes_every_row_and_writes_nothing_batch_and_stream(spark, tmp_path):
    df = spark.range(0, 10_000, numPartitions=4)
    sinks.noop().write(df)
    df.write.format("jetconnect.noop").mode("append").save()
    seen = spark.sparkContext.accumulator(0)

    def count(rows):
        for row in rows:
            seen.add(1)
            yield row

    # what feeds it runs: each row went through the sink's task
    sinks.noop().write(spark.createDataFrame(df.rdd.mapPartitions(count), df.schema))
    assert seen.value == 10_000

    checkpoint = tmp_path / "cp"
    last = -1
    for by_name in (False, True):  # by object, then restarted from its checkpoint by format name
        stream = spark.readStream.format("rate").option("rowsPerSecond", 500).load()
        if by_name:
            query = (
                stream.writeStream.format("jetconnect.noop")
                .option("checkpointLocation", str(checkpoint))
                .trigger(processingTime="500 milliseconds")
                .start()
            )
        else:
            query = sinks.noop().write_stream(
                stream, checkpoint_location=str(checkpoint), trigger={"processingTime": "500 milliseconds"}
            )
        try:
            wait_until(
                lambda: len(checkpoint_batches(checkpoint)) >= 3 + last + 1, 240, "three more committed micro-batches"
            )
            progress = query.recentProgress
        finally:
            query.stop()
        assert progress[0]["batchId"] == last + 1  # the second run resumed from the first one's checkpoint
        assert sum(p["numInputRows"] for p in progress) > 0
        last = checkpoint_batches(checkpoint)[-1]


CONSOLE = Path(__file__).with_name("logger_console.py")


def test_a_users_console_shows_every_row_at_info_batch_and_stream_across_a_restart(tmp_path):
    # What a user starting an application sees on its console (local mode: the workers' stderr is
    # copied to the driver JVM's): each row at INFO. Before, nothing at all: the default INFO
    # records reached no handler in the worker. In a process of its own (the shared session's
    # stderr is the test runner's): a batch write, then a stream stopped and restarted from its
    # checkpoint; ~20 s on a quiet machine.
    tag = f"console-{uuid.uuid4().hex[:8]} "
    env = {k: v for k, v in os.environ.items() if k != "JETCONNECT_TEST_SPARK_MASTER"}
    result = subprocess.run(
        [sys.executable, str(CONSOLE), tag, str(tmp_path / "cp")], capture_output=True, text=True, timeout=900, env=env
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert tag not in result.stdout
    # Spark's own collection loses a streaming write's records (PySpark 4.3), which is why the
    # console gets them under it too; should this fail, Spark collects them now: update the README
    assert "collected by Spark: 0" in result.stdout, result.stdout[-2000:]
    lines = [line.split(" ", 2)[2] for line in result.stderr.splitlines() if tag in line]
    assert all(line.startswith(f"INFO jetconnect.sink.logger: {tag}") for line in lines), lines[:5]

    def logged(run: str) -> list[str]:
        return [line.split(f"{tag}{run}| ", 1)[1] for line in lines if f"{tag}{run}| " in line]

    def sequences(run: str) -> list[int]:
        return [int(re.fullmatch(r"Row\(sequence=(\d+), timestamp=.*\)", row)[1]) for row in logged(run)]  # type: ignore[index]

    assert logged("batch") == [f"Row(id={i}, text='v{i}')" for i in range(5)]
    first, second = sequences("run1"), sequences("run2")
    # every micro-batch is 100 items of item_stream, all due at once: the first run logged 0, 1, ...
    assert first == list(range(len(first))) and len(first) >= 300
    # the restart resumed from the checkpoint, not from 0 and without a gap; a micro-batch that was
    # running when the first run stopped is delivered again (at-least-once), nothing else twice
    assert 0 < min(second) <= max(first) + 1 and len(second) == len(set(second)) >= 300
    assert sorted(set(first) | set(second)) == list(range(max(second) + 1))
    assert len(set(first) & set(second)) <= 100
