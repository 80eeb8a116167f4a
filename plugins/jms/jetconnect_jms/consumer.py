"""One consumer of the JMS source: a driver thread that logs what its connection receives, then acks it.

Spark calls the driver-side reader only to plan a micro-batch; pulling there left the broker
idle while the batch ran (a third of the time in the benchmark). So each consumer pulls for as
long as the query runs, as Jet's processors do, and a plan only reads how far the log goes. The
order of the steps never changes: a message is acknowledged only once the log segment that holds
it is durable, and a plan covers a segment only once the broker has confirmed its ACKs.

A segment's ACKs go out as soon as it is logged, without waiting for the receipt of the ones
before (up to :data:`_MAX_IN_FLIGHT` segments): receipts are collected as they come, and each
moves ``acked_end`` on. Waiting for each receipt before the next ACKs made the broker alternate
between processing ACKs and dispatching messages; it was half of the consumer's time.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from jetconnect.wal import WriteAheadLog
from jetconnect_jms.messages import MessageView, frames_to_batch
from jetconnect_jms.stomp_client import CONNECTION_ERRORS, StompClient

log = logging.getLogger("jetconnect.jms")

#: How often a consumer gathering a segment looks whether it is complete.
_POLL_S = 0.002
#: How long an idle consumer waits for a message before it looks again whether to stop.
_IDLE_S = 0.1
#: How long a stopping consumer may wait for the receipts of the ACKs it sent last.
_STOP_GRACE_S = 2.0
#: Segments whose ACKs may await their receipt at once (the prefetch window bounds it too).
_MAX_IN_FLIGHT = 4
#: What a consumer is doing while it waits for a receipt, for errors.
_ACKNOWLEDGING = "acknowledging messages"


class RecentIds:
    """The ids of the last ``capacity`` messages logged: what a redelivery is checked against.

    Shared by the consumers of a queue: the broker may redeliver to one what another logged.
    """

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._ids

    def add(self, ids: Iterable[str]) -> None:
        with self._lock:
            for message_id in ids:
                self._ids[message_id] = None
            while len(self._ids) > self.capacity:
                self._ids.popitem(last=False)


class Consumer(threading.Thread):
    """Logs and acknowledges what one STOMP connection receives, into one log partition.

    A segment is written when half the prefetch window has arrived, or ``linger_s`` after its
    first message: fewer fsyncs than one per drain, and the other half of the window keeps
    arriving meanwhile. The consumer pauses while ``max_backlog`` logged messages wait for a
    micro-batch (the broker then stops at the prefetch window). An error that must stop the
    query (an ERROR frame, a body that does not decode, no broker within ``connect_timeout``)
    is kept in :attr:`error` for the next plan to raise.
    """

    def __init__(
        self,
        client: StompClient,
        wal: WriteAheadLog,
        partition: str,
        *,
        view: MessageView,
        seen: RecentIds,
        wal_lock: threading.Lock,
        segment_records: int,
        linger_s: float,
        max_backlog: int,
    ) -> None:
        super().__init__(name=f"jetconnect {client.what}", daemon=True)
        self.client = client
        self.wal = wal
        self.partition = partition
        self.view = view
        self.seen = seen
        self.wal_lock = wal_lock
        self.segment_records = segment_records
        self.linger_s = linger_s
        self.max_backlog = max_backlog
        #: The end of this consumer's log partition: only this thread appends to it.
        self.end = wal.end(partition)
        #: How far the broker has confirmed the ACKs: what a plan may cover. A crashed run's
        #: segments count as confirmed: the broker's redeliveries of them are recognised by id.
        self.acked_end = self.end
        #: How far the micro-batches have been planned (set by the source): flow control only.
        self.planned = self.end
        self.error: BaseException | None = None
        #: Set once the first segment is logged, or the broker had nothing to send for a moment.
        self.first_round = threading.Event()
        self.stats = {"logged": 0, "redelivered": 0, "reconnects": 0}
        self._stopping = threading.Event()
        #: Receipts awaited for ACKs sent, oldest first, each with the log end it confirms.
        self._in_flight: collections.deque[tuple[str, int]] = collections.deque()

    @property
    def paused(self) -> bool:
        """Enough is logged that Spark has not planned yet: the consumer takes no more for now."""
        return self.end - self.planned >= self.max_backlog

    @property
    def receiving(self) -> bool:
        """Messages have arrived that the consumer is about to log, or logged ones await their receipt."""
        busy = (bool(self.client.messages) and not self.paused) or bool(self._in_flight)
        return busy and self.error is None and self.is_alive()

    def stop(self) -> None:
        """Stop taking messages, close the connection and wait for the thread to end."""
        self._stopping.set()
        if self.is_alive():
            self.join(_STOP_GRACE_S)  # time for the receipts of the ACKs in flight
        self.client.close()  # a wait for a receipt ends at once: the connection is gone
        if self.is_alive():
            self.join()
        self.client.close()  # in case a reconnect was under way while stopping

    def run(self) -> None:
        try:
            while not self._stopping.is_set():
                if self.paused:
                    self._settle()  # the ACKs in flight still get their receipts
                    self._stopping.wait(_POLL_S * 5)  # Spark is behind: let the broker hold the rest
                    continue
                self._stay_connected()
                frames = self._gather()
                if frames:
                    self._log_then_ack(frames)
                else:
                    self._settle()
            self._settle()
        except BaseException as exc:  # kept for the query to fail with, on the next plan
            if not self._stopping.is_set():
                self.error = exc
        finally:
            self.first_round.set()

    def _stay_connected(self) -> None:
        if not self.client.connected:
            self.stats["reconnects"] += 1
            log.warning("%s: connection lost, reconnecting", self.client.what)
            self._in_flight.clear()  # their receipts went with the connection
            self.client.connect()  # forgets frames of the dead connection: the broker redelivers them

    def _gather(self) -> list[tuple[dict[str, str], bytes]]:
        """The messages of the next segment; none if nothing arrived for a while."""
        client = self.client
        client.raise_broker_error()
        if not client.wait_for_messages(_IDLE_S):
            return []
        first_arrived = time.monotonic()
        while (
            len(client.messages) < self.segment_records
            and time.monotonic() - first_arrived < self.linger_s
            and not self._stopping.is_set()
        ):
            time.sleep(_POLL_S)  # while messages flow, polling costs less than a wake-up per message
        client.raise_broker_error()
        if not client.connected:
            return []  # what the dead connection delivered will be redelivered
        return [client.messages.popleft() for _ in range(min(len(client.messages), self.segment_records))]

    def _log_then_ack(self, frames: list[tuple[dict[str, str], bytes]]) -> None:
        """Append the new messages among ``frames`` to the log, then acknowledge them all."""
        fresh = [f for f in frames if f[0]["message-id"] not in self.seen]
        self.stats["redelivered"] += len(frames) - len(fresh)
        if fresh:
            batch = frames_to_batch(fresh)
            self.view.check_decodable(batch)  # a bad body stops here, unacknowledged
            with self.wal_lock:  # the source trims this partition from another thread
                self.end = self.wal.append(self.partition, self.end, batch)
            self.seen.add(batch.column("message_id").to_pylist())
            self.stats["logged"] += len(fresh)
        try:
            self._confirm(wait_for=len(self._in_flight) - _MAX_IN_FLIGHT + 1)
            receipt = self.client.ack_async(headers["ack"] for headers, _ in frames)
            if receipt is not None:
                self._in_flight.append((receipt, self.end))
        except CONNECTION_ERRORS as exc:
            self._ack_lost(exc)

    def _confirm(self, wait_for: int = 0) -> None:
        """Take the receipts that arrived, waiting for the oldest ``wait_for`` (all: ``len(in flight)``).

        The log up to where a confirmed segment reaches may be planned.
        """
        while self._in_flight:
            receipt, end = self._in_flight[0]
            if wait_for > 0:
                self.client.wait_receipt(receipt, _ACKNOWLEDGING)
                wait_for -= 1
            elif not self.client.take_receipt(receipt, _ACKNOWLEDGING):
                break
            self._in_flight.popleft()
            self.acked_end = end
            self.first_round.set()

    def _settle(self) -> None:
        """Nothing more arrived: confirm the ACKs in flight and let the plans have the whole log.

        With nothing in flight, every logged message was either confirmed or acknowledged on a
        connection that was lost since; the broker redelivers the latter to the new connection,
        where they are recognised by id, so the log can be planned up to its end.
        """
        try:
            self._confirm(wait_for=len(self._in_flight))
        except CONNECTION_ERRORS as exc:
            self._ack_lost(exc)
            return
        self.acked_end = self.end
        self.first_round.set()

    def _ack_lost(self, exc: BaseException) -> None:
        # The messages are durable in the log already; the broker will redeliver them to the
        # next connection and they will be recognised by id.
        self._in_flight.clear()
        self.client.lost = True
        if not self._stopping.is_set():  # stopping closes the connection under a waiting ack
            log.warning("%s: acknowledgement failed (%s); will reconnect", self.client.what, exc)


def start_consumers(open_client: Callable[[int], StompClient], count: int, **settings: Any) -> list[Consumer]:
    """Open ``count`` connections and start a consumer on each (partition = consumer index)."""
    consumers = [Consumer(open_client(i), partition=str(i), **settings) for i in range(count)]
    for consumer in consumers:
        consumer.start()
    return consumers


__all__ = ["Consumer", "RecentIds", "start_consumers"]
