"""The socket connector against a real asyncio TCP line server, through a real SparkSession."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

from jetconnect import sinks, sources
from jetconnect.testing import checkpoint_batches, recorded_rows, start_pipeline, wait_until

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "integration" / "pipelines" / "socket_to_parquet.py"


def parquet_lines(spark, path: Path) -> list[str]:
    from pyspark.errors import AnalysisException

    try:
        return [r.line for r in spark.read.parquet(str(path)).collect()]
    except AnalysisException:  # nothing committed yet
        return []


def wait_lines(spark, query, out: Path, count: int, timeout: float) -> None:
    """Wait until ``out`` holds ``count`` lines; fail at once, with its error, if the query died."""

    def arrived() -> bool:
        if not query.isActive:
            raise AssertionError(f"the query stopped before {count} lines arrived: {query.exception()}")
        time.sleep(1.0)  # each count is a Spark job: polling faster starves the query under test
        return len(parquet_lines(spark, out)) >= count

    wait_until(arrived, timeout, f"{count} lines in {out.name}")


def stream_to_parquet(spark, source, out: Path, checkpoint: Path):
    return (
        source.read_stream(spark)
        .writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lines_from_a_server_arrive_once_across_a_reconnect(spark, line_server, tmp_path):
    source = sources.socket("127.0.0.1", line_server.port, wal_location=str(tmp_path / "wal"))
    out = tmp_path / "out"
    query = stream_to_parquet(spark, source, out, tmp_path / "cp")
    try:
        line_server.wait_for_clients(1)
        first = [f"first {i}" for i in range(500)]
        line_server.send_lines(first[:250])
        line_server.send(("\n".join(first[250:]) + "\nhalf a li").encode())  # the tail waits for its newline
        wait_lines(spark, query, out, 500, 150)
        assert "half a li" not in parquet_lines(spark, out)

        line_server.drop_clients()  # the source reconnects with backoff
        line_server.wait_for_clients(1)
        then = [f"then {i}" for i in range(300)]
        line_server.send_lines(then)
        wait_lines(spark, query, out, 800, 150)
        time.sleep(0.5)
    finally:
        query.stop()
    assert sorted(parquet_lines(spark, out)) == sorted(first + then)
    # the receiver closes its connection once the query is gone (its stop marker, else its beacon
    # going quiet: within 6.5 s), not after processor_keep_alive_ms (60 s), and does not reconnect
    stopped = time.monotonic()
    wait_until(lambda: not line_server.writers, 15, "the receiver closing its connection after query.stop()")
    print(f"\n  socket receiver gone {time.monotonic() - stopped:.1f} s after query.stop()")
    connections = line_server.connections
    time.sleep(2)
    assert line_server.connections == connections and not line_server.writers, "the receiver reconnected"


def test_dataframe_rows_to_a_server_as_lines(spark, line_server):
    df = spark.createDataFrame([(i, f"row {i}") for i in range(1000)], "id int, text string").repartition(2)
    sinks.socket("127.0.0.1", line_server.port, column="text").write(df)
    wait_until(lambda: len(line_server.received) >= 1000, 30, "1000 lines at the server")
    assert sorted(line_server.received) == sorted(f"row {i}" for i in range(1000))
    assert line_server.connections == 2  # one connection per partition


def test_a_server_that_never_answers_fails_clearly_after_the_timeout(spark, tmp_path):
    port = free_port()
    source = sources.socket("127.0.0.1", port, connect_timeout=1.0, wal_location=str(tmp_path / "wal"))
    query = stream_to_parquet(spark, source, tmp_path / "out", tmp_path / "cp")
    with pytest.raises(Exception, match=f"connecting to 127.0.0.1:{port} failed"):
        query.awaitTermination(60)
        raise AssertionError("the query did not fail")

    df = spark.createDataFrame([("x",)], "line string")
    with pytest.raises(Exception, match=f"connecting to 127.0.0.1:{port} failed"):
        sinks.socket("127.0.0.1", port, connect_timeout=1.0).write(df)


def test_an_undecodable_line_fails_naming_it_and_keeps_the_lines_before(spark, line_server, tmp_path):
    source = sources.socket("127.0.0.1", line_server.port, wal_location=str(tmp_path / "wal"))
    out = tmp_path / "out"
    query = stream_to_parquet(spark, source, out, tmp_path / "cp")
    line_server.wait_for_clients(1)
    line_server.send(b"good 1\ngood 2\n\xff\xfe bad\ngood 3\n")
    with pytest.raises(Exception) as failure:
        query.awaitTermination(60)
        raise AssertionError("the query did not fail")
    assert "line 3 from 127.0.0.1" in str(failure.value) and "not valid utf-8" in str(failure.value)
    # the lines before are kept: delivered in a committed micro-batch (whose spool rows are then
    # trimmed) or still in the spool, depending on whether a round took them before the error
    delivered = parquet_lines(spark, out)
    spooled = [row["line"] for row in recorded_rows(tmp_path / "wal")]
    assert sorted(set(delivered) | set(spooled)) == ["good 1", "good 2"]
    assert len(delivered) == len(set(delivered))


class Sender:
    """Sends numbered lines to whoever is connected, in small steady chunks, from a thread."""

    def __init__(self, server) -> None:
        self.server = server
        self.sent: list[str] = []
        self.next = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            chunk = [f"line {i}" for i in range(self.next, self.next + 20)]
            if self.server.send_lines(chunk):
                self.sent.extend(chunk)
                self.next += 20
            time.sleep(0.05)

    def __enter__(self) -> Sender:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def __exit__(self, *exc) -> None:
        self.stop()


def logged_lines(wal_dir: Path) -> list[str]:
    return [row["line"] for row in recorded_rows(wal_dir)]


@pytest.mark.crash
def test_sigkill_of_the_driver_then_restart_loses_nothing_received(spark, line_server, tmp_path):
    cp, out = tmp_path / "cp", tmp_path / "out"
    args = [str(line_server.port), str(cp), str(out)]
    with Sender(line_server) as sender:
        run = start_pipeline(PIPELINE, args, tmp_path / "run1.log")
        try:
            wait_until(lambda: len(checkpoint_batches(cp)) >= 3, 180, "three committed batches", run)
        finally:
            run.kill()
        # everything received before the crash: committed to parquet, or durable in the log
        received = set(parquet_lines(spark, out)) | set(logged_lines(Path(str(cp) + "-wal")))
        assert received

        connections = line_server.connections
        run = start_pipeline(PIPELINE, args, tmp_path / "run2.log")
        try:
            wait_until(lambda: line_server.connections > connections, 180, "the restarted pipeline to connect", run)
            mark = sender.next
            wait_until(lambda: sender.next >= mark + 200, 30, "200 more lines sent")
        finally:
            sender.stop()
        after = {f"line {i}" for i in range(mark + 20, mark + 200)}  # surely sent to the new connection
        try:
            wait_until(
                lambda: time.sleep(1.0) or set(parquet_lines(spark, out)) >= received | after,
                180,
                "every received line",
                run,
            )
            time.sleep(1)
        finally:
            run.kill()
    lines = parquet_lines(spark, out)
    assert len(lines) == len(set(lines)), "a line was written twice"
    assert set(lines) <= set(sender.sent)


def test_to_string_fn_makes_each_rows_line_through_spark(spark, line_server):
    # Jet's Sinks.socket(host, port, toStringFn, charset): any line made from each row
    df = spark.createDataFrame(
        [(i, f"row {i}", i * 0.5) for i in range(500)], "id int, text string, x double"
    ).repartition(2)
    sinks.socket("127.0.0.1", line_server.port, to_string_fn=lambda row: f"{row.id}\t{row.text}\t{row.x:.1f}").write(df)
    wait_until(lambda: len(line_server.received) >= 500, 30, "500 lines at the server")
    assert sorted(line_server.received) == sorted(f"{i}\trow {i}\t{i * 0.5:.1f}" for i in range(500))
    with pytest.raises(Exception, match=r"to_string_fn returned int, not str, for row \d+ of this task"):
        sinks.socket("127.0.0.1", line_server.port, to_string_fn=lambda row: row.id).write(df)
    with pytest.raises(Exception, match=r"option 'to_string_fn' must be a Python function"):
        df.write.format("jetconnect.socket").option("host", "127.0.0.1").option("port", line_server.port).option(
            "to_string_fn", "lambda row: row.text"
        ).mode("append").save()
