"""The JMS consumer (a processor's state) and the source's rounds against the real ActiveMQ, without Spark.

A test plays the core's receiver by hand where the order of the steps is the point (fill, spool,
then acknowledge), and plays Spark (plan, read every range, commit) where the whole source is.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from jetconnect._arrow_rows import rows_to_batch
from jetconnect._builders._processor import Processor
from jetconnect._builders._receiver import RECEIVERS
from jetconnect.api import run_spools
from jetconnect.errors import SourceError
from jetconnect_jms import jms_queue_source
from jetconnect_jms.consumer import RUN_OPTION
from jetconnect_jms.stomp_client import StompClient, StompSettings

ROOT = Path(__file__).resolve().parents[2]
BROKER_SCRIPT = ROOT / "scripts" / "servers" / "activemq.sh"
RUN = "testrun"


@pytest.fixture(scope="module", autouse=True)
def activemq() -> Iterator[None]:
    """The real ActiveMQ on 127.0.0.1:61613, stopped after only if started here (and not kept)."""
    running = subprocess.run(["bash", str(BROKER_SCRIPT), "status"], capture_output=True, timeout=60).returncode == 0
    started = subprocess.run(["bash", str(BROKER_SCRIPT), "start"], capture_output=True, text=True, timeout=900)
    if started.returncode != 0:
        pytest.fail(f"activemq.sh start exited {started.returncode}: {started.stdout[-2000:]} {started.stderr[-2000:]}")
    yield
    if not running and __import__("os").environ.get("JETCONNECT_KEEP_SERVERS") != "1":
        subprocess.run(["bash", str(BROKER_SCRIPT), "stop"], capture_output=True, timeout=120)


@pytest.fixture(autouse=True)
def _no_receiver_left():
    yield
    RECEIVERS.stop_all()


def queue() -> str:
    return f"/queue/unit-{uuid.uuid4().hex[:8]}"


def produce(destination: str, bodies: list[bytes | str]) -> None:
    client = StompClient(StompSettings(), "test producer").connect()
    try:
        client.begin("tx")
        for body in bodies:
            client.send(destination, body, {"persistent": "true"}, "tx")
        client.commit("tx")
    finally:
        client.close()


def left_on_broker(destination: str, expected: int = 0) -> list[bytes]:
    """The bodies still on the queue (taken and acknowledged, so the queue is empty after).

    Waits up to 10 s for ``expected`` of them, then half a second for any more.
    """
    client = StompClient(StompSettings(), "test consumer").connect()
    client.subscribe(destination, "left", {"activemq.prefetchSize": "1000"})
    got: list[tuple[dict, bytes]] = []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        while client.messages:
            got.append(client.messages.popleft())
        if len(got) >= expected:
            deadline = min(deadline, time.monotonic() + 0.5)
        time.sleep(0.01)
    client.ack(h["ack"] for h, _ in got)
    client.close()
    return [body for _, body in got]


def processor(source, index: int, total: int) -> Processor:
    """Processor ``index`` of ``total`` of the source, as the core's receiver creates it."""
    return Processor(source._stream.spec, index, total, source._stream.options.merged({RUN_OPTION: RUN}))


def take(proc: Processor, timeout: float = 10) -> pa.Table:
    """Fill until a fill brings rows (or the time is up): what the receiver would spool next."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        items = proc.fill().items
        if items:
            return pa.Table.from_batches([rows_to_batch(items, proc.spec.schema, "test")])
    return pa.table({})


def spool(source, index: int, total: int):
    return run_spools(source.wal_location, RUN, total)[index]


def test_a_message_is_acknowledged_only_after_the_receiver_spooled_it(tmp_path):
    destination = queue()
    produce(destination, [f"m{i}" for i in range(5)])
    source = jms_queue_source(destination, linger_ms=500, wal_location=str(tmp_path))
    proc = processor(source, 0, 1)
    taken = take(proc)
    assert taken.column("body").to_pylist() == [f"m{i}".encode() for i in range(5)]
    proc.destroy()  # a worker gone before the receiver spooled and acknowledged: the broker keeps them
    assert sorted(left_on_broker(destination, 5)) == [f"m{i}".encode() for i in range(5)]

    produce(destination, ["n0", "n1"])
    proc = processor(source, 0, 1)
    taken = take(proc)
    spool(source, 0, 1).append(0, taken)
    proc.acknowledge()
    proc.destroy()
    assert left_on_broker(destination) == []


def test_redeliveries_of_what_another_consumer_spooled_are_dropped_and_acknowledged(tmp_path):
    destination = queue()
    source = jms_queue_source(destination, parallelism=2, prefetch=50, linger_ms=500, wal_location=str(tmp_path))
    first = processor(source, 0, 2)  # subscribed alone: it is sent every message
    produce(destination, [f"m{i}" for i in range(20)])
    taken = take(first)
    second = processor(source, 1, 2)  # started before the first one spooled: it must look again later
    spool(source, 0, 2).append(0, taken)
    first.destroy()  # spooled, its ACKs lost with the connection: the broker redelivers to the second
    deadline = time.monotonic() + 10
    while second.state.stats["redelivered"] < 20 and time.monotonic() < deadline:
        assert not second.fill().items  # each one is in the first consumer's spool
    assert second.state.stats["redelivered"] == 20 and second.state.stats["taken"] == 0
    second.destroy()
    assert left_on_broker(destination) == []  # the redeliveries were acknowledged


def test_a_new_consumer_of_a_processor_drops_what_its_spool_holds_and_takes_the_rest(tmp_path):
    destination = queue()
    source = jms_queue_source(destination, linger_ms=500, wal_location=str(tmp_path))
    produce(destination, [f"m{i}" for i in range(10)])
    proc = processor(source, 0, 1)
    taken = take(proc)
    spool(source, 0, 1).append(0, taken.slice(0, 6))  # the worker died after spooling six of them
    proc.destroy()
    proc = processor(source, 0, 1)
    again = take(proc)
    assert again.column("body").to_pylist() == [f"m{i}".encode() for i in range(6, 10)]
    spool(source, 0, 1).append(6, again)
    proc.acknowledge()
    proc.destroy()
    assert left_on_broker(destination) == []


def test_a_body_that_does_not_decode_stops_the_consumer_and_it_and_what_follows_stay_on_the_broker(tmp_path):
    destination = queue()
    produce(destination, ["good 0", "good 1", b"\xff\xfe bad", "after 0", "after 1"])
    source = jms_queue_source(destination, linger_ms=500, wal_location=str(tmp_path))
    proc = processor(source, 0, 1)
    taken = take(proc)
    assert taken.column("body").to_pylist() == [b"good 0", b"good 1"]
    spool(source, 0, 1).append(0, taken)
    proc.acknowledge()
    with pytest.raises(SourceError, match=f"message ID:.* on {destination} has a body that is not valid utf-8"):
        for _ in range(10):
            proc.fill()
    proc.destroy()
    assert left_on_broker(destination, 3) == [b"\xff\xfe bad", b"after 0", b"after 1"]


def run_rounds(source, count: int, timeout: float = 30, max_records: int | None = None) -> tuple[dict, list[str]]:
    """Play Spark: plan, read every range, commit, until ``count`` rows came; the offset and the bodies."""
    position, bodies = source.initial_offset(), []
    deadline = time.monotonic() + timeout
    while len(bodies) < count and time.monotonic() < deadline:
        end = source.latest_offset(position, max_records)
        for range_ in source.ranges(position, end):
            bodies += [b for batch in source.read_range(range_) for b in batch.column("body").to_pylist()]
        source.commit(end)
        position = end
    return position, bodies


def test_rounds_deliver_every_message_once_and_commits_keep_the_dedupe_window(tmp_path):
    destination = queue()
    bodies = [f"m{i}" for i in range(300)]
    produce(destination, bodies)
    source = jms_queue_source(destination, parallelism=2, prefetch=20, dedupe_window=50, wal_location=str(tmp_path))
    source = source.with_options({"jetconnect.members": "1"})
    position, got = run_rounds(source, len(bodies), max_records=60)
    source.stop()
    assert sorted(got) == sorted(bodies)
    run = next(iter(position.values()))["run"]
    for index in (0, 1):
        start, end = run_spools(str(tmp_path), run, 2)[index].bounds()
        # whole segments are kept or trimmed, and a segment holds at most the prefetch window (20);
        # a processor the broker gave fewer than 50 messages keeps them all (nothing to trim)
        assert min(50, end) <= end - start < 50 + 20, (index, start, end)


def test_a_lost_connection_is_reconnected_off_the_fill_and_its_redeliveries_are_recognised(tmp_path):
    destination = queue()
    produce(destination, [f"m{i}" for i in range(10)])
    source = jms_queue_source(destination, linger_ms=500, wal_location=str(tmp_path))
    proc = processor(source, 0, 1)
    taken = take(proc)
    spool(source, 0, 1).append(0, taken)
    proc.state.client._conn.transport.disconnect_socket()  # the connection drops before the ACKs go out
    time.sleep(0.2)
    proc.acknowledge()  # fails quietly: the messages are spooled, the broker will redeliver them
    started = time.monotonic()
    assert not proc.fill().items
    assert time.monotonic() - started < 0.5  # the receiver must go on renewing its lease meanwhile
    deadline = time.monotonic() + 20
    while proc.state.stats["redelivered"] < 10 and time.monotonic() < deadline:
        assert not proc.fill().items
    assert proc.state.stats == {"taken": 10, "redelivered": 10, "reconnects": 1}
    produce(destination, ["new"])
    fresh = take(proc)
    assert fresh.column("body").to_pylist() == [b"new"]
    spool(source, 0, 1).append(10, fresh)
    proc.acknowledge()
    proc.destroy()
    assert left_on_broker(destination) == []


def test_a_fill_adds_nothing_only_when_nothing_arrived_and_one_acknowledgement_covers_every_fill(tmp_path):
    # the core ends a round "dry" on a fill that adds nothing: that must mean the broker has nothing now
    destination = queue()
    produce(destination, [f"m{i}" for i in range(6)])
    source = jms_queue_source(destination, prefetch=4, linger_ms=200, wal_location=str(tmp_path))
    proc = processor(source, 0, 1)
    first = take(proc)  # half the prefetch window: a segment
    second, third = proc.fill().items, proc.fill().items  # the receiver may fill again before spooling
    assert first.num_rows == 2 and len(second) == 2  # the broker held back the rest: 4 unacknowledged
    assert third == []  # nothing more arrives until the first four are acknowledged
    taken = pa.concat_tables([first, pa.Table.from_batches([rows_to_batch(second, proc.spec.schema, "test")])])
    spool(source, 0, 1).append(0, taken)
    proc.acknowledge()
    rest = take(proc)
    assert rest.column("body").to_pylist() == [b"m4", b"m5"]
    spool(source, 0, 1).append(4, rest)
    proc.acknowledge()
    proc.destroy()
    assert left_on_broker(destination) == []
