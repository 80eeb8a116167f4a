"""The JMS connector against a real ActiveMQ (STOMP on 127.0.0.1:61613), through a real SparkSession."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from jetconnect import sinks, sources
from jetconnect.api import Spool
from jetconnect.files_family import LocalFileSystem
from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until
from jetconnect_jms.stomp_client import StompClient, StompSettings

ROOT = Path(__file__).resolve().parents[2]
BROKER_SCRIPT = ROOT / "scripts" / "servers" / "activemq.sh"
PIPELINE = ROOT / "integration" / "pipelines" / "jms_queue_to_parquet.py"


@pytest.fixture(autouse=True)
def broker(server):
    server("activemq")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def produce(destination: str, bodies: list, headers: dict | None = None) -> None:
    """Send ``bodies`` in one transaction with a plain stomp.py connection."""
    client = StompClient(StompSettings(), "test producer").connect()
    try:
        client.begin("tx")
        for body in bodies:
            client.send(destination, body, {"persistent": "true", **(headers or {})}, "tx")
        client.commit("tx")
    finally:
        client.close()


def consume(destination: str, expected: int, timeout: float = 60) -> list[tuple[dict, bytes]]:
    """Receive and acknowledge up to ``expected`` messages, waiting at most ``timeout`` s for them."""
    client = StompClient(StompSettings(), "test consumer").connect()
    client.subscribe(destination, "test", {"activemq.prefetchSize": "1000"})
    got: list[tuple[dict, bytes]] = []
    deadline = time.monotonic() + timeout
    while len(got) < expected and time.monotonic() < deadline:
        if client.messages:
            got.append(client.messages.popleft())
        else:
            time.sleep(0.01)
    client.ack(h["ack"] for h, _ in got)
    client.close()
    return got


def parquet_count(spark, path: Path) -> int:
    from pyspark.errors import AnalysisException

    try:
        return spark.read.parquet(str(path)).count()
    except AnalysisException:  # no committed file yet: Spark cannot infer the schema
        return 0


def wait_rows(spark, query, out: Path, count: int, timeout: float) -> None:
    """Wait until ``out`` holds ``count`` rows; fail at once, with its error, if the query died."""

    def arrived() -> bool:
        if not query.isActive:
            raise AssertionError(f"the query stopped before {count} rows arrived: {query.exception()}")
        return slowly(parquet_count)(spark, out) >= count

    wait_until(arrived, timeout, f"{count} rows in {out.name}")


def slowly(fn):
    """``fn`` after a pause: each count is a Spark job, and polling every 50 ms starves the
    query under test (Spark gives a new Python worker only 10 s to start and connect back)."""

    def paced(*args):
        time.sleep(1.0)
        return fn(*args)

    return paced


def stream_to_parquet(spark, source, out: Path, checkpoint: Path, max_records: int | None = None):
    df = source.read_stream(spark, **({"max_records_per_batch": max_records} if max_records else {}))
    return (
        df.writeStream.format("parquet")
        .option("path", str(out))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )


def test_queue_to_parquet_consumed_in_parallel_exactly_once(spark, tmp_path):
    queue = unique("orders")
    bodies = [f"order {i}" for i in range(1200)]
    produce(f"/queue/{queue}", bodies, {"kind": "order"})
    # a small prefetch spreads the queue over both consumers
    source = sources.jms_queue(
        queue, parallelism=2, prefetch=50, header_columns=["kind"], wal_location=str(tmp_path / "wal")
    )
    query = stream_to_parquet(spark, source, tmp_path / "out", tmp_path / "cp", max_records=400)
    try:
        wait_rows(spark, query, tmp_path / "out", len(bodies), 180)
    finally:
        query.stop()
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    assert sorted(r.body for r in rows) == sorted(bodies)
    assert len({r.message_id for r in rows}) == len(bodies)
    assert {r.kind for r in rows} == {"order"}
    assert {r.destination for r in rows} == {f"/queue/{queue}"}
    # both consumers (processors 0 and 1, each with its own connection) spooled messages
    spools = sorted((tmp_path / "wal").glob("*/*/spool"))
    assert [p.parent.name for p in spools] == ["0", "1"] and all(any(p.glob("*.arrow")) for p in spools)
    assert consume(f"/queue/{queue}", 1, timeout=3) == []  # everything was acknowledged


def test_a_queue_query_stopped_and_restarted_from_its_checkpoint_gets_every_message_once(spark, tmp_path):
    queue = unique("resume")
    first, then = [f"first {i}" for i in range(3000)], [f"then {i}" for i in range(500)]
    produce(f"/queue/{queue}", first)
    source = sources.jms_queue(queue, parallelism=2, prefetch=100, wal_location=str(tmp_path / "wal"))
    out, cp = tmp_path / "out", tmp_path / "cp"
    query = stream_to_parquet(spark, source, out, cp, max_records=100)  # small batches: stopped mid-stream
    try:
        wait_rows(spark, query, out, 100, 150)
    finally:
        query.stop()  # mid-stream: the consumers close, the broker keeps what they had not spooled
    assert parquet_count(spark, out) < len(first)
    produce(f"/queue/{queue}", then)
    query = stream_to_parquet(spark, source, out, cp, max_records=1000)
    try:
        wait_rows(spark, query, out, len(first) + len(then), 240)
        time.sleep(1)  # a duplicate would arrive in the next micro-batches
    finally:
        query.stop()
    bodies = [r.body for r in spark.read.parquet(str(out)).collect()]
    assert len(bodies) == len(first) + len(then) and sorted(bodies) == sorted(first + then)
    assert consume(f"/queue/{queue}", 1, timeout=3) == []


def test_dataframe_to_queue_with_headers_and_json_body(spark):
    queue = unique("shipments")
    df = spark.createDataFrame(
        [(i, f"text {i}", "even" if i % 2 == 0 else "odd") for i in range(300)], "id bigint, text string, parity string"
    ).repartition(3)
    sinks.jms_queue(queue, body_column="text", header_columns=["parity", "id"]).write(df)
    got = consume(f"/queue/{queue}", 300)
    assert sorted(b.decode() for _, b in got) == sorted(f"text {i}" for i in range(300))
    assert all(h["parity"] == ("even" if int(h["id"]) % 2 == 0 else "odd") for h, _ in got)
    assert all(h["persistent"] == "true" for h, _ in got)

    # a non-string body column is sent as JSON
    structs = spark.createDataFrame([(1, "a"), (2, "b")], "id int, name string").selectExpr("struct(id, name) AS body")
    sinks.jms_queue(queue).write(structs)
    assert sorted((json.loads(b) for _, b in consume(f"/queue/{queue}", 2)), key=lambda d: d["id"]) == sorted(
        [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}], key=lambda d: d["id"]
    )


def test_a_streaming_write_marks_each_message_with_its_write_key(spark, tmp_path):
    """The ``jetconnect-batch`` header is the core's WriteKey as text: query:batch:partition."""
    queue = unique("keyed")
    spark.range(0, 60, numPartitions=3).selectExpr("CAST(id AS string) AS body").write.parquet(str(tmp_path / "in"))
    df = spark.readStream.schema("body string").parquet(str(tmp_path / "in"))
    query = sinks.jms_queue(queue).write_stream(df, str(tmp_path / "cp"), trigger={"availableNow": True})
    assert query.awaitTermination(180) is not False and query.exception() is None
    got = consume(f"/queue/{queue}", 60)
    assert sorted(int(b) for _, b in got) == list(range(60))
    keys = {h["jetconnect-batch"] for h, _ in got}
    # one micro-batch (0) of this query; every Spark partition of it under its own key
    assert {k.rsplit(":", 2)[0] for k in keys} == {query.id}
    assert {k.rsplit(":", 2)[1] for k in keys} == {"0"}
    partitions = sorted(int(k.rsplit(":", 2)[2]) for k in keys)
    assert len(partitions) == len(keys) >= 1 and partitions == list(range(len(partitions)))


def test_jets_message_fn_makes_each_message_and_a_wrong_return_names_the_row(spark):
    queue = unique("made")
    df = spark.range(0, 200, numPartitions=2).selectExpr("id", "concat('item ', id) AS name")
    sinks.jms_queue(
        queue,
        message_fn=lambda row: (
            json.dumps({"n": row.id, "name": row.name}),
            {"kind": "even" if row.id % 2 == 0 else "odd"},
        ),
    ).write(df)
    got = consume(f"/queue/{queue}", 200)
    bodies = sorted((json.loads(b) for _, b in got), key=lambda d: d["n"])
    assert bodies == [{"n": i, "name": f"item {i}"} for i in range(200)]
    assert all(h["kind"] == ("even" if json.loads(b)["n"] % 2 == 0 else "odd") for h, b in got)
    with pytest.raises(Exception, match=r"message_fn returned int for row 0 of this partition"):
        sinks.jms_queue(queue, message_fn=lambda row: row.id).write(df.limit(1))
    assert consume(f"/queue/{queue}", 1, timeout=2) == []  # the failed partition's transaction was dropped


def test_durable_topic_subscription_keeps_messages_while_the_query_is_stopped(spark, tmp_path):
    topic = unique("prices")
    source = sources.jms_topic(topic, subscription=unique("sub"), wal_location=str(tmp_path / "wal"))
    publish = sinks.jms_topic(topic, body_column="body")
    out, cp = tmp_path / "out", tmp_path / "cp"

    query = stream_to_parquet(spark, source, out, cp)
    try:
        wait_until(lambda: query.lastProgress is not None, 120, "the first micro-batch")  # subscribed
        publish.write(spark.createDataFrame([(f"p{i}",) for i in range(200)], "body string"))
        wait_rows(spark, query, out, 200, 150)
    finally:
        query.stop()
    # published while no query runs: the durable subscription keeps them for the next run
    publish.write(spark.createDataFrame([(f"q{i}",) for i in range(150)], "body string"))
    query = stream_to_parquet(spark, source, out, cp)
    try:
        wait_rows(spark, query, out, 350, 150)
    finally:
        query.stop()
    bodies = [r.body for r in spark.read.parquet(str(out)).collect()]
    assert sorted(bodies) == sorted([f"p{i}" for i in range(200)] + [f"q{i}" for i in range(150)])


def test_topic_parallelism_other_than_one_is_an_error():
    with pytest.raises(Exception, match="'parallelism' must be 1 for a topic"):
        sources.jms_topic("t", parallelism=2)


def test_broker_restart_mid_stream_loses_nothing_and_duplicates_nothing(spark, tmp_path):
    queue = unique("restart")
    first = [f"before {i}" for i in range(1000)]
    then = [f"after {i}" for i in range(1000)]
    produce(f"/queue/{queue}", first)
    source = sources.jms_queue(
        queue, parallelism=2, prefetch=100, wal_location=str(tmp_path / "wal"), connect_timeout=60
    )
    out = tmp_path / "out"
    query = stream_to_parquet(spark, source, out, tmp_path / "cp", max_records=200)
    try:
        wait_rows(spark, query, out, 200, 150)
        subprocess.run(["bash", str(BROKER_SCRIPT), "stop"], check=True, capture_output=True)
        subprocess.run(["bash", str(BROKER_SCRIPT), "start"], check=True, capture_output=True)
        produce(f"/queue/{queue}", then)
        wait_rows(spark, query, out, 2000, 180)
        time.sleep(1)  # a duplicate would arrive in the next micro-batches
        assert query.exception() is None
    finally:
        query.stop()
    rows = spark.read.parquet(str(out)).collect()
    assert len(rows) == 2000
    assert sorted(r.body for r in rows) == sorted(first + then)


def test_undecodable_body_fails_naming_the_message_and_nothing_after_it_is_acknowledged(spark, tmp_path):
    queue = unique("bad")
    before, after = [f"before {i}" for i in range(3)], [f"after {i}" for i in range(2)]
    produce(f"/queue/{queue}", [*before, b"\xff\xfe not utf-8", *after])
    source = sources.jms_queue(queue, wal_location=str(tmp_path / "wal"))
    out, cp = tmp_path / "out", tmp_path / "cp"
    query = stream_to_parquet(spark, source, out, cp)
    with pytest.raises(Exception) as failure:
        query.awaitTermination(180)  # Spark's first micro-batch takes a while on a busy machine
        raise AssertionError("the query did not fail")
    text = str(failure.value)
    assert f"/queue/{queue}" in text and "ID:" in text and "not valid utf-8" in text
    bad_id = text.split("message ", 1)[1].split(" ", 1)[0]
    left = consume(f"/queue/{queue}", 3)
    # it and everything after it stay on the broker; what came before it was accepted
    assert [b for _, b in left] == [b"\xff\xfe not utf-8", *(a.encode() for a in after)]
    assert left[0][0]["message-id"] == bad_id

    # the bad message removed, a restart delivers what was accepted before it, once
    query = stream_to_parquet(spark, source, out, cp)
    try:
        wait_rows(spark, query, out, len(before), 120)
        time.sleep(1)
    finally:
        query.stop()
    assert sorted(r.body for r in spark.read.parquet(str(out)).collect()) == before


def committed_at_least(n: int):
    return lambda cp: len(checkpoint_batches(cp)) >= n, f"{n} committed batches"


def planned_not_committed(cp: Path) -> bool:
    """Spark wrote the offsets of a batch but not its commit: the batch is being processed."""
    planned, committed = checkpoint_batches(cp, "offsets"), checkpoint_batches(cp)
    return bool(planned) and len(committed) >= 1 and planned[-1] not in committed


def crash_and_recover(spark, tmp_path: Path, kill_points: list) -> None:
    """Run the queue -> parquet pipeline, SIGKILL it at each kill point in turn, restart it, and
    check every message arrived exactly once."""
    queue = unique("crash")
    bodies = [f"event {i}" for i in range(3000)]
    produce(f"/queue/{queue}", bodies)
    cp, out = tmp_path / "cp", tmp_path / "out"
    args = [queue, str(cp), str(out), "300"]

    for attempt, (when, what) in enumerate(kill_points):
        run = start_pipeline(PIPELINE, args, tmp_path / f"run{attempt}.log")
        try:
            wait_until(lambda: when(cp), 180, what, run)
        finally:
            run.kill()
    assert parquet_count(spark, out) < len(bodies), "the crash should happen mid-stream"

    run = start_pipeline(PIPELINE, args, tmp_path / "final.log")
    try:
        wait_until(
            lambda: slowly(parquet_count)(spark, out) >= len(bodies), 180, "every message after the restart", run
        )
        time.sleep(1)  # a duplicate would arrive in the next micro-batches
    finally:
        run.kill()
    rows = spark.read.parquet(str(out)).collect()
    assert len(rows) == len(bodies)
    assert sorted(r.body for r in rows) == sorted(bodies)


@pytest.mark.crash
def test_sigkill_of_the_driver_mid_stream_then_restart_is_exactly_once(spark, tmp_path):
    crash_and_recover(spark, tmp_path, [committed_at_least(2)])


@pytest.mark.crash_matrix
@pytest.mark.parametrize(
    "kill_points",
    [
        pytest.param([(planned_not_committed, "a planned, uncommitted batch")], id="mid-batch"),
        pytest.param([committed_at_least(1), committed_at_least(4)], id="killed-twice"),
    ],
)
def test_sigkill_matrix(spark, tmp_path, kill_points):
    crash_and_recover(spark, tmp_path, kill_points)


def test_a_stopped_query_hands_its_unspooled_messages_back_to_the_broker_within_seconds(spark, tmp_path):
    """The receiver holds a prefetch window it cannot spool (its backlog is full); after
    query.stop() its connection closes within seconds (not processor_keep_alive_ms, 60 s), so the
    broker gives every message the query did not spool to the next consumer, and no later one to it."""
    queue = unique("handback")
    produce(f"/queue/{queue}", [f"m {i}" for i in range(3000)])
    wal = tmp_path / "wal"
    source = sources.jms_queue(queue, prefetch=1000, max_backlog=100, dedupe_window=100, wal_location=str(wal))
    query = stream_to_parquet(spark, source, tmp_path / "out", tmp_path / "cp", max_records=50)
    try:
        wait_rows(spark, query, tmp_path / "out", 50, 150)
    finally:
        query.stop()
    stopped = time.monotonic()
    produce(f"/queue/{queue}", [f"later {i}" for i in range(100)])  # the old consumer must not take these
    (spool,) = wal.glob("*/0/spool")
    spooled = Spool(LocalFileSystem(), str(spool)).bounds()[1]  # every message the query's consumer acknowledged
    client = StompClient(StompSettings(), "test consumer").connect()
    client.subscribe(f"/queue/{queue}", "test", {"activemq.prefetchSize": "5000"})
    got: list = []
    deadline = time.monotonic() + 20
    while len(got) < 3100 - spooled and time.monotonic() < deadline:
        time.sleep(0.1)
        arrived = [client.messages.popleft() for _ in range(len(client.messages))]
        client.ack(h["ack"] for h, _ in arrived)  # the broker dispatches no more than ~1,400 unacknowledged
        got += arrived
    took = time.monotonic() - stopped
    client.close()
    print(f"\n  {len(got)} messages back at the broker {took:.1f} s after query.stop() ({spooled} spooled)")
    bodies = sorted(body.decode() for _, body in got)
    assert len(got) == 3100 - spooled and len(set(bodies)) == len(bodies), (len(got), spooled)
    assert all(f"later {i}" in bodies for i in range(100))
    assert took < 15, took  # not processor_keep_alive_ms (60 s)
