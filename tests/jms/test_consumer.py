"""The consumer thread against a stand-in connection: log first, acknowledge second, plan once confirmed, pause when Spark lags."""

import collections
import threading
import time

from jetconnect.testing import wait_until
from jetconnect.wal import WriteAheadLog
from jetconnect_jms.consumer import Consumer, RecentIds
from jetconnect_jms.messages import MessageView


class FakeClient:
    """What the consumer uses of a StompClient; each ACK records how far the log was then."""

    what = "fake consumer"

    def __init__(self, wal: WriteAheadLog) -> None:
        self.wal = wal
        self.messages: collections.deque = collections.deque()
        self.connected = True
        self.lost = False
        self.acked: list[tuple[str, int]] = []
        self.sent_receipts: list[str] = []
        self.confirmed: list[str] = []
        #: Cleared, the broker holds back its receipts.
        self.receipts_flow = threading.Event()
        self.receipts_flow.set()

    def deliver(self, *ids: str) -> None:
        for i in ids:
            self.messages.append(({"message-id": i, "ack": f"ack-{i}", "destination": "/queue/q"}, i.encode()))

    def wait_for_messages(self, timeout: float) -> bool:
        if not self.messages:
            time.sleep(min(timeout, 0.01))
        return bool(self.messages)

    def raise_broker_error(self) -> None:
        pass

    def ack_async(self, ack_ids) -> str | None:
        self.acked.extend((ack_id, self.wal.end("0")) for ack_id in ack_ids)
        self.sent_receipts.append(f"r{len(self.sent_receipts)}")
        return self.sent_receipts[-1]

    def wait_receipt(self, receipt: str, doing: str) -> None:
        assert self.receipts_flow.wait(10), f"no receipt for {receipt} while {doing}"
        self.confirmed.append(receipt)

    def take_receipt(self, receipt: str, doing: str) -> bool:
        if self.receipts_flow.is_set():
            self.confirmed.append(receipt)
        return self.receipts_flow.is_set()

    def close(self) -> None:
        self.connected = False


def consumer(tmp_path, max_backlog: int = 100, seen: RecentIds | None = None) -> tuple[Consumer, FakeClient]:
    wal = WriteAheadLog(tmp_path / "wal")
    client = FakeClient(wal)
    return Consumer(
        client, wal, "0", view=MessageView("test"), seen=seen or RecentIds(100), wal_lock=threading.Lock(),
        segment_records=3, linger_s=0.01, max_backlog=max_backlog,
    ), client


def test_messages_are_acknowledged_only_once_logged_and_redeliveries_are_not_logged_twice(tmp_path):
    seen = RecentIds(100)
    seen.add(["m0"])  # logged by an earlier run, its ACK lost
    worker, client = consumer(tmp_path, seen=seen)
    client.deliver("m0", "m1", "m2", "m3", "m4")
    worker.start()
    try:
        wait_until(lambda: len(client.acked) == 5, 10, "five acknowledgements")
    finally:
        worker.stop()
    logged = [b.column("message_id").to_pylist() for b in worker.wal.read("0", 0, worker.wal.end("0"))]
    assert sum(logged, []) == ["m1", "m2", "m3", "m4"]
    # every ACK was sent when the log already held the message it acknowledges (m0: from before)
    position = {"ack-m0": 0, "ack-m1": 1, "ack-m2": 2, "ack-m3": 3, "ack-m4": 4}
    assert all(logged_end >= position[ack_id] for ack_id, logged_end in client.acked)
    assert worker.error is None


def started_with_receipts_held(tmp_path, segments: int) -> tuple[Consumer, FakeClient]:
    """A running consumer given ``segments`` segments of three messages; the broker holds its receipts."""
    worker, client = consumer(tmp_path)
    client.receipts_flow.clear()
    client.deliver(*(f"m{i}" for i in range(3 * segments)))
    worker.start()
    return worker, client


def release_receipts_and_expect_all_confirmed(worker: Consumer, client: FakeClient, segments: int) -> None:
    client.receipts_flow.set()
    wait_until(lambda: worker.acked_end == 3 * segments and not worker.receiving, 10, f"all {segments} confirmed")
    assert client.confirmed == client.sent_receipts == [f"r{i}" for i in range(segments)]


def test_a_plan_covers_a_segment_only_once_the_broker_confirmed_its_acknowledgements(tmp_path):
    worker, client = started_with_receipts_held(tmp_path, segments=2)
    try:
        # the second segment's ACKs go out while the first one's receipt is awaited
        wait_until(lambda: len(client.acked) == 6, 10, "both segments logged and acknowledged")
        time.sleep(0.1)
        assert worker.end == 6 and worker.acked_end == 0 and worker.receiving
        release_receipts_and_expect_all_confirmed(worker, client, segments=2)
    finally:
        worker.stop()


def test_at_most_four_segments_await_their_receipts(tmp_path):
    worker, client = started_with_receipts_held(tmp_path, segments=6)
    try:
        wait_until(lambda: len(client.sent_receipts) == 4, 10, "four segments acknowledged")
        time.sleep(0.2)
        # the fifth segment is logged, but its ACKs wait for the oldest receipt
        assert len(client.sent_receipts) == 4 and worker.end == 15 and worker.acked_end == 0
        release_receipts_and_expect_all_confirmed(worker, client, segments=6)
    finally:
        worker.stop()


def test_consumer_pauses_while_spark_has_not_planned_the_backlog(tmp_path):
    worker, client = consumer(tmp_path, max_backlog=3)
    client.deliver(*(f"m{i}" for i in range(9)))
    worker.start()
    try:
        wait_until(lambda: worker.end == 3, 10, "the first three logged")
        time.sleep(0.1)
        assert worker.end == 3 and worker.paused  # the rest waits, unacknowledged
        worker.planned = 3  # a micro-batch took them
        wait_until(lambda: worker.end == 6, 10, "three more after the plan")
    finally:
        worker.stop()


def test_a_body_that_does_not_decode_stops_the_consumer_unacknowledged(tmp_path):
    worker, client = consumer(tmp_path)
    client.messages.append(({"message-id": "bad", "ack": "ack-bad", "destination": "/queue/q"}, b"\xff"))
    worker.start()
    worker.join(10)
    assert "message bad on /queue/q" in str(worker.error) and client.acked == []
