"""Builder streams through the shared SparkSession: admission control, WAL, event time."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
from pyspark.sql import functions as F

from jetconnect import SinkBuilder, SourceBuilder, sources
from jetconnect.spark import members
from jetconnect.testing import counter_stream, wait_until


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
    df = counter_stream(None, per_fill=25).read_stream(
        spark, max_records_per_batch=100, wal_location=str(tmp_path / "wal")
    )
    query = (
        df.writeStream.format("memory")
        .queryName("admission")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
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
    query = (
        df.writeStream.format("memory")
        .queryName("walstream")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    _run_until(query, 2)
    values = [r.value for r in spark.sql("select value from walstream").collect()]
    assert values and sorted(values, key=lambda v: int(v.split()[1])) == [f"line {i}" for i in range(len(values))]
    assert list((tmp_path / "wal").rglob("*.arrow"))  # the rounds' records, rows included


def test_timestamped_stream_has_a_watermark_for_windowed_aggregation(spark, tmp_path):
    df = sources.item_stream(items_per_second=200, distributed=2).read_stream(spark, wal_location=str(tmp_path / "wal"))
    assert df.schema.simpleString() == "struct<sequence:bigint,timestamp:timestamp>"
    # append-mode aggregation is only allowed with a watermark: the source's allowed lateness
    windowed = df.groupBy(F.window("timestamp", "1 second")).count()
    query = (
        windowed.writeStream.outputMode("append")
        .format("memory")
        .queryName("windows")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .start()
    )
    _run_until(query, 2)
    assert query.exception() is None


def test_streaming_builder_sink_gets_its_preferred_partitions_per_member(spark, tmp_path):
    out = str(tmp_path / "out")
    os.makedirs(out)

    def create(ctx):
        return open(f"{out}/{ctx.batch_id}-{ctx.partition_id}", "a")

    sink = (
        SinkBuilder.sink("counted", create)
        .receive_fn(lambda f, row: f.write(f"{row.n}\n"))
        .destroy_fn(lambda f: f.close())
        .preferred_local_parallelism(3)
        .build()
    )
    df = counter_stream(None, per_fill=25).read_stream(
        spark, max_records_per_batch=90, wal_location=str(tmp_path / "wal")
    )
    query = sink.write_stream(df, checkpoint_location=str(tmp_path / "ck"))
    _run_until(query, 1)
    partitions = {int(name.split("-")[1]) for name in os.listdir(out)}
    assert partitions == set(range(3 * members(spark)))


class _Tally:
    """Processor i emits i, i+n, ... below ``total``; every fill appends where it ran and what it added."""

    def __init__(self, ctx):
        self.next, self.step = ctx.global_processor_index, ctx.total_parallelism
        self.total = int(ctx.options["tally_total"])
        self.log = ctx.options["tally_log"]


def _tally_fill(state, buf):
    from jetconnect.testing import executor_process

    added = 0
    while added < 500 and state.next < state.total:
        buf.add(state.next)
        state.next += state.step
        added += 1
    with open(state.log, "a") as handle:
        handle.write(f"{os.getpid()}\t{executor_process()}\t{added}\n")


def _tally(total: int, log: str, local_parallelism: int = 2):
    return (
        SourceBuilder.stream("tally", _Tally)
        .fill_buffer_fn(_tally_fill)
        .schema("n bigint")
        .create_snapshot_fn(lambda s: s.next)
        .restore_snapshot_fn(lambda s, p: setattr(s, "next", p))
        .distributed(local_parallelism)
        .build()
        .with_options({"tally_total": str(total), "tally_log": log})
    )


def _fills(log) -> list[tuple[int, str, int]]:
    rows = [line.split("\t") for line in open(log).read().splitlines()]
    return [(int(pid), process, int(added)) for pid, process, added in rows]


def test_available_now_reads_everything_in_capped_batches_pulling_each_item_once_in_tasks(spark, tmp_path, capsys):
    total, log = 20_000, str(tmp_path / "fills.tsv")
    df = _tally(total, log).read_stream(spark, max_records_per_batch=3_000, wal_location=str(tmp_path / "wal"))
    query = (
        df.writeStream.format("memory")
        .queryName("tally")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None
    rows = [r.n for r in spark.sql("select n from tally").collect()]
    assert sorted(rows) == list(range(total))  # everything, once: AvailableNow is not one capped round
    batches = [p["numInputRows"] for p in query.recentProgress]
    assert max(batches) <= 3_000 and len([b for b in batches if b]) >= total // 3_000
    fills = _fills(log)
    assert sum(added for _, _, added in fills) == total  # pulled once: pulled / delivered = 1.0
    assert os.getpid() not in {pid for pid, _, _ in fills}  # never in the driver's own process
    processes = sorted({process for _, process, _ in fills})
    with capsys.disabled():
        print(f"\n  fill_buffer_fn ran in ({spark.conf.get('spark.master')}): {processes}")
    if spark.conf.get("spark.master").startswith("spark://"):
        assert "driver" not in processes and len(processes) >= 2, processes


@pytest.mark.parametrize("snapshots", [True, False])
def test_a_failing_fill_is_retried_or_restarted_with_nothing_lost_or_doubled(spark, tmp_path, snapshots):
    marker, position_file = tmp_path / "failed-once", tmp_path / "dispensed"

    # with snapshots the position lives in the processor and is restored; without, it lives
    # outside it, as a socket's or a broker's does (what was handed out is not handed out again)
    def create(ctx):
        return {"n": 0}

    def fill(state, buf):
        n = state["n"] if snapshots else int(position_file.read_text() or 0) if position_file.exists() else 0
        if n == 30 and not marker.exists():
            marker.write_text("x")
            raise ConnectionResetError("the source hiccuped")
        upto = min(100, n + 10)
        for k in range(n, upto):
            buf.add(k)
        state["n"] = upto
        if not snapshots:
            position_file.write_text(str(upto))

    builder = SourceBuilder.stream("hiccup", create).fill_buffer_fn(fill).schema("n bigint")
    if snapshots:
        builder = builder.create_snapshot_fn(lambda s: s["n"]).restore_snapshot_fn(lambda s, n: s.update(n=n))
    source, out = builder.build(), str(tmp_path / "out")

    def run() -> bool:
        df = source.read_stream(spark, max_records_per_batch=20, wal_location=str(tmp_path / "wal"))
        query = (
            df.writeStream.format("parquet")
            .option("path", out)
            .option("checkpointLocation", str(tmp_path / "ck"))
            .trigger(availableNow=True)
            .start()
        )
        try:
            query.awaitTermination(300)
        except Exception as exc:  # local mode does not retry tasks: the query fails, a restart resumes
            assert "the source hiccuped" in str(exc)
            return False
        return True

    if not run():
        assert run()
    assert sorted(r.n for r in spark.read.parquet(out).collect()) == list(range(100))
    assert marker.exists()


def test_an_idle_stream_runs_few_jobs(spark, tmp_path):
    source = SourceBuilder.stream("quiet", lambda ctx: None).fill_buffer_fn(lambda s, b: None).build()
    df = source.read_stream(spark, wal_location=str(tmp_path / "wal"), idle_poll_ms=500)
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "ck")).start()
    time.sleep(4)
    query.stop()
    # with the default trigger an idle source would be asked every few ms; rounds open at most
    # every idle_poll_ms once the pauses have grown (25, 50, ... 500 ms)
    assert len(query.recentProgress) <= 12, [p["batchId"] for p in query.recentProgress]


def _note_time(path) -> None:
    """Write the time into ``path`` whole (a rename), so a reader never sees it empty or half written."""
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(str(time.time()))
    os.replace(partial, path)


def _watched_stream(tmp_path):
    """A slow stream without snapshot functions whose processor notes each fill and its destruction."""
    fills, destroyed = tmp_path / "last-fill", tmp_path / "destroyed"

    def fill(state, buf):
        time.sleep(0.002)
        buf.add(state["n"])
        state["n"] += 1
        _note_time(fills)

    def destroy(state):
        _note_time(destroyed)

    source = (
        SourceBuilder.stream("watched", lambda ctx: {"n": 0})
        .fill_buffer_fn(fill)
        .destroy_fn(destroy)
        .schema("n bigint")
        .build()
    )
    return source, fills, destroyed


def _reader_pid(wal) -> int:
    """The pid of the query's stream reader process, from the beacon it writes (this test's own query)."""
    (beacon,) = list(wal.glob("*/_alive"))
    pid = int(json.loads(beacon.read_text())["pid"])
    assert pid != os.getpid() and b"pyspark" in open(f"/proc/{pid}/cmdline", "rb").read()
    return pid


@pytest.mark.parametrize("ending", ["query.stop()", "reader process killed"])
def test_a_receiver_stops_within_seconds_of_its_query_even_when_spark_never_calls_stop(spark, tmp_path, ending):
    """Stopped, the receiver's processor is destroyed at once (the driver's stop marker); if the
    reader's process dies without calling stop() (SIGKILL here), its beacon goes quiet and the
    receiver stops within QUERY_GONE_S + a look (6.5 s), not at processor_keep_alive_ms (60 s)."""
    source, fills, destroyed = _watched_stream(tmp_path)
    df = source.read_stream(spark, wal_location=str(tmp_path / "wal"))
    query = df.writeStream.format("noop").option("checkpointLocation", str(tmp_path / "ck")).start()
    try:
        wait_until(lambda: len([p for p in query.recentProgress if p["numInputRows"]]) >= 2, 180, "two batches")
        if ending == "reader process killed":
            os.kill(_reader_pid(tmp_path / "wal"), signal.SIGKILL)
            ended = time.time()
            wait_until(lambda: not query.isActive, 60, "the query failing without its reader")
    finally:
        query.stop()
    if ending == "query.stop()":
        ended = time.time()
    wait_until(destroyed.exists, 30, "the receiver destroying its processor")
    took = float(destroyed.read_text()) - ended
    # After query.stop() Spark usually ends the reader's process with SIGTERM, whose handler writes
    # the stop marker: the receiver stops at its next heartbeat. Now and then the process ends with
    # neither a SIGTERM nor stop() (seen once, on PySpark 4.2 in CI, 2026-11-27): then the beacon
    # going quiet stops the receiver (QUERY_GONE_S + a look). Within 10 s either way.
    marker = bool(list((tmp_path / "wal").glob("*/_stopped")))
    print(f"\n  receiver gone {took:.1f} s after {ending} (stop marker written: {marker})")
    assert took < (10 if ending == "query.stop()" else 20), took  # keep-alive would take 60 s
    time.sleep(1)
    assert float(fills.read_text()) <= float(destroyed.read_text()), "a fill after the processor was destroyed"
