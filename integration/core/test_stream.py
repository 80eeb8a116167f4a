"""Builder streams through the shared SparkSession: admission control, WAL, event time."""

from __future__ import annotations

import os
import time

from pyspark.sql import functions as F

from jetconnect import SinkBuilder, SourceBuilder, sources
from jetconnect.spark import members


class _Counter:
    def __init__(self, ctx):
        self.n = ctx.global_processor_index * 1_000_000


def _fill(state, buf):
    for _ in range(25):
        buf.add(state.n)
        state.n += 1


def _counter():
    return (
        SourceBuilder.stream("counter", _Counter).fill_buffer_fn(_fill).schema("n bigint").distributed(2)
        .create_snapshot_fn(lambda s: s.n).restore_snapshot_fn(lambda s, p: setattr(s, "n", p)).build()
    )


def _run_until(query, batches: int, timeout: float = 120) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in query.recentProgress if p["numInputRows"]]
        if len(done) >= batches:
            break
        time.sleep(0.2)
    query.stop()
    return [p for p in query.recentProgress if p["numInputRows"]]


def test_admission_control_caps_each_micro_batch(spark, tmp_path):
    df = _counter().read_stream(spark, max_records_per_batch=100)
    query = df.writeStream.format("memory").queryName("admission").option("checkpointLocation", str(tmp_path)).start()
    progress = _run_until(query, 3)
    assert progress and all(p["numInputRows"] <= 100 for p in progress)
    rows = spark.sql("select n from admission").collect()
    assert len(rows) == len({r.n for r in rows})  # nothing twice


def test_stream_without_snapshots_reads_through_the_wal(spark, tmp_path):
    def fill(state, buf):
        for _ in range(10):
            buf.add(f"line {state[0]}")
            state[0] += 1

    source = SourceBuilder.stream("lines", lambda ctx: [0]).fill_buffer_fn(fill).build()
    df = source.read_stream(spark, wal_location=str(tmp_path / "wal"), max_records_per_batch=50)
    query = df.writeStream.format("memory").queryName("walstream").option("checkpointLocation", str(tmp_path / "ck")).start()
    _run_until(query, 2)
    values = [r.value for r in spark.sql("select value from walstream").collect()]
    assert values and sorted(values, key=lambda v: int(v.split()[1])) == [f"line {i}" for i in range(len(values))]
    assert (tmp_path / "wal" / "0").is_dir()


def test_timestamped_stream_has_a_watermark_for_windowed_aggregation(spark, tmp_path):
    df = sources.item_stream(items_per_second=200, distributed=2).read_stream(spark)
    assert df.schema.simpleString() == "struct<sequence:bigint,timestamp:timestamp>"
    # append-mode aggregation is only allowed with a watermark: the source's allowed lateness
    windowed = df.groupBy(F.window("timestamp", "1 second")).count()
    query = windowed.writeStream.outputMode("append").format("memory").queryName("windows").option(
        "checkpointLocation", str(tmp_path)
    ).start()
    _run_until(query, 2)
    assert query.exception() is None


def test_streaming_builder_sink_gets_its_preferred_partitions_per_member(spark, tmp_path):
    out = str(tmp_path / "out")
    os.makedirs(out)

    def create(ctx):
        return open(f"{out}/{ctx.batch_id}-{ctx.partition_id}", "a")

    sink = (
        SinkBuilder.sink("counted", create).receive_fn(lambda f, row: f.write(f"{row.n}\n"))
        .destroy_fn(lambda f: f.close()).preferred_local_parallelism(3).build()
    )
    query = sink.write_stream(_counter().read_stream(spark, max_records_per_batch=90), checkpoint_location=str(tmp_path / "ck"))
    _run_until(query, 1)
    partitions = {int(name.split("-")[1]) for name in os.listdir(out)}
    assert partitions == set(range(3 * members(spark)))
