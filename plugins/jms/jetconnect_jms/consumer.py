"""One consumer of the JMS source: a processor's state, one STOMP connection in an executor.

The source is a builder stream without snapshot functions (:mod:`jetconnect_jms.source`). The core
runs each processor in a *receiver*, a thread of the Python worker that first ran the processor's
task: it calls :meth:`Consumer.fill` again and again, appends what a fill took to the processor's
spool (durably), and only then calls :meth:`Consumer.acknowledge`. So a message is acknowledged
only once a restart can replay it, and what a consumer holds unacknowledged when it closes (its
query stopped, no round came for a while, its worker died) the broker redelivers: that is how a
consumer no task reads any more hands its messages back.

A redelivery of a message that is spooled already (its ACK was lost with a connection or a
worker) is recognised by message id, acknowledged and dropped. The broker may redeliver to any
consumer of a queue, so each consumer checks every message against the ids in the spools of all
the source's processors: its own (the ids it took, seeded from its spool when it starts) and the
others' (read as they grow). The source keeps the last ``dedupe_window`` rows of every spool after
Spark committed them, so a redelivery is recognised while its spool has grown by fewer rows than
that since the message was spooled; the broker redelivers as soon as a connection is gone, and
an unacknowledged message holds back at most ``prefetch`` more on its connection.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jetconnect import ProcessorContext, SourceBuffer
from jetconnect.api import WAL_LOCATION, Spool, run_spools
from jetconnect.errors import ChecksumError, OffsetError, OptionError, SourceError
from jetconnect_jms.messages import _FRAME_HEADERS, RAW_SCHEMA, MessageView, _timestamp_ms
from jetconnect_jms.stomp_client import CONNECTION_ERRORS, StompClient, StompSettings

log = logging.getLogger("jetconnect.jms")

#: A message as the spool keeps it: whole (every header, the body's bytes), so a replay never
#: depends on the broker and the user's view (:class:`MessageView`) is applied when a round is read.
#: The headers are one flat list ``[key, value, key, value, ...]``: the builder converted a flat
#: list per message ~1.7x faster than a map (measured on ActiveMQ's frames of ten headers).
SPOOL_SCHEMA = "message_id string NOT NULL, destination string, timestamp_ms bigint, headers array<string>, body binary"

#: The option through which the source tells a processor its stream run (whose spools it checks).
RUN_OPTION = "jetconnect_jms.run"

#: How long an idle fill waits for a message before it returns (the receiver then renews its lease).
_IDLE_S = 0.05
#: How often a fill gathering a segment looks whether it is complete.
_POLL_S = 0.002
#: How long a closing consumer may wait for the receipts of the ACKs it sent last.
_CLOSE_GRACE_S = 2.0
#: What a consumer is doing while it waits for a receipt, for errors.
_ACKNOWLEDGING = "acknowledging messages"

Frame = tuple[dict[str, str], bytes]


@dataclass(frozen=True)
class ConsumerConfig:
    """What every consumer of one source needs; pickled to the executors with the source."""

    settings: StompSettings
    destination: str
    #: Names the source in errors, e.g. "jms_queue source '/queue/orders'".
    owner: str
    view: MessageView
    subscription: str | None
    prefetch: int
    linger_s: float
    dedupe_window: int
    max_backlog: int

    def __post_init__(self) -> None:
        for option, value in (
            ("prefetch", self.prefetch),
            ("max_backlog", self.max_backlog),
            ("dedupe_window", self.dedupe_window),
        ):
            if value < 1:
                raise OptionError(f"{self.owner}: option '{option}' must be at least 1, got {value}")

    @property
    def segment(self) -> int:
        """Messages one fill takes at most: half the prefetch window, the other half keeps arriving."""
        return max(1, self.prefetch // 2)


class RecentIds:
    """The ids of the last ``capacity`` messages a consumer spooled (or found spooled when it started)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def add(self, ids: Iterable[str]) -> None:
        for message_id in ids:
            self._ids[message_id] = None
        while len(self._ids) > self.capacity:
            self._ids.popitem(last=False)


class SpoolIds:
    """The message ids another processor's spool holds, kept in step with it by :meth:`refresh`.

    Spool segments are written once, so each is read once; ids of segments Spark's commits
    trimmed are forgotten.
    """

    def __init__(self, spool: Spool) -> None:
        self.spool = spool
        self._ids: set[str] = set()
        #: ``(end position, ids)`` of what was read, oldest first.
        self._chunks: collections.deque[tuple[int, list[str]]] = collections.deque()
        self._read_to: int | None = None

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def in_order(self) -> Iterable[str]:
        """The ids read, oldest first."""
        for _, ids in self._chunks:
            yield from ids

    def refresh(self) -> None:
        """Read the segments appended since the last refresh, forget the trimmed ones."""
        for _ in range(3):  # a commit may trim a segment between the listing and the read
            try:
                start, end = self.spool.bounds()
                if self._read_to is not None and end < self._read_to:  # pragma: no cover - an emptied spool
                    self._forget(end + 1)
                    self._read_to = None
                self._forget(start)
                position = start if self._read_to is None else max(start, self._read_to)
                for batch in self.spool.read(position, end) if end > position else ():
                    ids = batch.column("message_id").to_pylist()
                    position += len(ids)
                    self._chunks.append((position, ids))
                    self._ids.update(ids)
                    self._read_to = position
                self._read_to = end
                return
            except ChecksumError:
                raise  # changed on disk, not trimmed under the reader: the query must hear of it
            except (OffsetError, FileNotFoundError):
                continue
        log.warning("%s: could not read it in three tries (trimmed under the reader?)", self.spool)

    def _forget(self, start: int) -> None:
        while self._chunks and self._chunks[0][0] <= start:
            self._ids.difference_update(self._chunks.popleft()[1])


def spool_rows(frames: Sequence[Frame]) -> list[tuple[Any, ...]]:
    """The spool's rows (:data:`SPOOL_SCHEMA`) of received MESSAGE frames, in order."""
    rows = []
    for headers, body in frames:
        flat: list[str] = []
        for key, value in headers.items():
            if key not in _FRAME_HEADERS:
                flat.append(key)
                flat.append(value)
        rows.append(
            (
                headers["message-id"],
                headers.get("destination"),
                _timestamp_ms(headers.get("timestamp")),
                flat,
                body if isinstance(body, bytes) else str(body).encode("utf-8"),
            )
        )
    return rows


def spooled_to_raw(batch: pa.RecordBatch) -> pa.RecordBatch:
    """A spool batch as :data:`~jetconnect_jms.messages.RAW_SCHEMA`: the flat header lists become a map."""
    lists = batch.column("headers")
    flat = lists.flatten()  # respects a sliced batch's offset
    offsets = pc.subtract(lists.offsets, lists.offsets[0])
    headers = pa.MapArray.from_arrays(
        pc.divide(offsets, 2), flat.take(np.arange(0, len(flat), 2)), flat.take(np.arange(1, len(flat), 2))
    )
    columns = [batch.column(name) if name != "headers" else headers for name in RAW_SCHEMA.names]
    return pa.RecordBatch.from_arrays(columns, schema=RAW_SCHEMA)


class _Reconnect(threading.Thread):
    """Reconnects a lost client off the receiver's thread, which must go on renewing its lease."""

    def __init__(self, consumer: Consumer) -> None:
        super().__init__(name=f"jetconnect reconnect {consumer.client.what}", daemon=True)
        self.consumer = consumer
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.consumer.client.connect()  # forgets the dead connection's frames: they come again
        except BaseException as exc:  # raised by the next fill: the query must hear of it
            self.error = exc
        if self.consumer.closed:  # closed while reconnecting: no connection may outlive the consumer
            self.consumer.client.close()


class Consumer:
    """Processor ``ctx.global_processor_index``'s STOMP connection: what it takes, spools and acknowledges.

    ``fill`` takes what has arrived (up to :attr:`ConsumerConfig.segment` messages since the last
    acknowledgement, waiting up to ``linger_s`` for them: one spool segment, one fsync), leaves out
    redeliveries of spooled messages, and adds the rest; the receiver spools them and calls
    ``acknowledge``, which sends their ACKs in one write (the receipts are collected as they come,
    never waited for in a fill).
    A body that does not decode stops the consumer: the messages before it are spooled and
    acknowledged, it and those after it are not, and the next fill raises naming it.
    """

    def __init__(self, config: ConsumerConfig, ctx: ProcessorContext) -> None:
        self.config = config
        self.index = ctx.global_processor_index
        self.closed = False
        self.stats = {"taken": 0, "redelivered": 0, "reconnects": 0}
        spools = run_spools(ctx.options.get_str(WAL_LOCATION), ctx.options.get_str(RUN_OPTION), ctx.total_parallelism)
        #: What this consumer took, and what its spool held when it started (an earlier consumer's).
        self.recent = RecentIds(config.dedupe_window + config.max_backlog + config.prefetch)
        self.others = [SpoolIds(spool) for j, spool in enumerate(spools) if j != self.index]
        own = SpoolIds(spools[self.index])
        own.refresh()
        self.recent.add(own.in_order())
        for other in self.others:
            other.refresh()
        #: ACK ids of what the fills took since the last acknowledgement: acknowledged once the
        #: receiver has spooled it. The receiver may call fill several times before it spools.
        self._taken: list[str] = []
        self._segment_started = 0.0
        #: Receipts awaited for ACKs sent, oldest first, with when they were sent.
        self._in_flight: collections.deque[tuple[str, float]] = collections.deque()
        self._failure: SourceError | None = None
        self._reconnect: _Reconnect | None = None
        self.client = StompClient(config.settings, f"{config.owner} consumer {self.index}").connect()
        headers = {"activemq.prefetchSize": str(config.prefetch)}
        if config.subscription:
            headers["activemq.subscriptionName"] = config.subscription
        try:
            self.client.subscribe(config.destination, f"jetconnect-{self.index}", headers)
        except BaseException:
            self.client.close()
            raise

    # --- the builder's functions -------------------------------------------------------------------

    def fill(self, buf: SourceBuffer) -> None:
        """Add the messages that have arrived and were not spooled before (``fill_buffer_fn``).

        A fill adds nothing only when nothing new arrived for a moment (or the connection is
        being made again): the core takes that as "the source has nothing now".
        """
        if self._failure is not None:
            if self._taken:
                return  # the messages before the bad one are spooled and acknowledged first
            raise self._failure
        if not self._connected():
            return
        client = self.client
        client.raise_broker_error()
        self._collect_receipts()
        if not client.wait_for_messages(_IDLE_S):
            return
        if not self._taken:  # the first take since the last acknowledgement starts a segment
            self._segment_started = time.monotonic()
        wanted = self.config.segment - len(self._taken)
        while len(client.messages) < wanted and time.monotonic() - self._segment_started < self.config.linger_s:
            time.sleep(_POLL_S)  # while messages flow, polling costs less than a wake-up per message
        client.raise_broker_error()
        if not client.connected:
            return  # what the dead connection delivered is redelivered to the next one
        frames = [client.messages.popleft() for _ in range(min(len(client.messages), self.config.segment))]
        self._take(frames, buf)

    def acknowledge(self) -> None:
        """Acknowledge what the last fill took: the receiver has spooled it (``acknowledge_fn``)."""
        taken, self._taken = self._taken, []
        self._ack(taken)

    def close(self) -> None:
        """Wait briefly for the receipts of the last ACKs, then close (``destroy_fn``).

        The broker redelivers whatever this connection holds unacknowledged to another consumer.
        """
        self.closed = True
        deadline = time.monotonic() + _CLOSE_GRACE_S
        try:
            while self._in_flight and self.client.connected and time.monotonic() < deadline:
                self._collect_receipts()
                time.sleep(_POLL_S)
        except Exception:  # closing anyway; unconfirmed ACKs make redeliveries, recognised by id
            log.info("%s: receipts not collected while closing", self.client.what, exc_info=True)
        self.client.close()
        log.info("%s: closed after %s", self.client.what, self.stats)

    # --- steps -------------------------------------------------------------------------------------

    def _take(self, frames: list[Frame], buf: SourceBuffer) -> None:
        """Add the new messages among ``frames`` to ``buf``; acknowledge the repeated ones at once.

        A message is repeated if a spool holds it: it is durable, so its ACK needs no spooling.
        """
        for other in self.others:
            other.refresh()  # a message another consumer spooled may be redelivered here
        repeated = [self._spooled(headers["message-id"]) for headers, _ in frames]
        fresh = [frame for frame, seen in zip(frames, repeated) if not seen]
        bad = self._first_undecodable(fresh)
        if bad is not None:
            # it and what came after it stay unacknowledged: the broker keeps them
            cut = frames.index(fresh[bad])
            frames, repeated, fresh = frames[:cut], repeated[:cut], fresh[:bad]
        again = [headers["ack"] for (headers, _), seen in zip(frames, repeated) if seen]
        if again:
            self.stats["redelivered"] += len(again)
            self._ack(again)
        if fresh:
            buf.add_all(spool_rows(fresh))
            self.recent.add(headers["message-id"] for headers, _ in fresh)
            self._taken.extend(headers["ack"] for headers, _ in fresh)
            self.stats["taken"] += len(fresh)

    def _spooled(self, message_id: str) -> bool:
        return message_id in self.recent or any(message_id in other for other in self.others)

    def _first_undecodable(self, frames: list[Frame]) -> int | None:
        """The index of the first message whose body the view cannot decode (its error kept), or None."""
        if not frames:
            return None
        probe = pa.RecordBatch.from_arrays(
            [
                pa.array([h["message-id"] for h, _ in frames], pa.string()),
                pa.array([h.get("destination") for h, _ in frames], pa.string()),
                pa.array([b if isinstance(b, bytes) else str(b).encode("utf-8") for _, b in frames], pa.binary()),
            ],
            names=["message_id", "destination", "body"],
        )
        try:
            self.config.view.check_decodable(probe)
            return None
        except SourceError:
            pass
        for i in range(len(frames)):  # rare: find the first one, so the messages before it are kept
            try:
                self.config.view.check_decodable(probe.slice(i, 1))
            except SourceError as exc:
                self._failure = exc
                return i
        return None  # pragma: no cover - the whole failed, so one of them does

    def _ack(self, ack_ids: list[str]) -> None:
        if not ack_ids:
            return
        try:
            receipt = self.client.ack_async(ack_ids)
        except CONNECTION_ERRORS as exc:
            # durable in a spool already: the broker redelivers them and they are recognised by id
            log.warning("%s: acknowledgement failed (%s); will reconnect", self.client.what, exc)
            self.client.lost = True
            return
        if receipt is not None:
            self._in_flight.append((receipt, time.monotonic()))

    def _collect_receipts(self) -> None:
        """Forget the receipts that arrived; a broker silent for ``receipt_timeout`` counts as lost."""
        while self._in_flight:
            receipt, sent = self._in_flight[0]
            try:
                arrived = self.client.take_receipt(receipt, _ACKNOWLEDGING)
            except CONNECTION_ERRORS:
                return  # the connection is gone; the next fill reconnects
            if not arrived:
                if time.monotonic() - sent > self.config.settings.receipt_timeout:
                    log.warning("%s: no receipt for %.0f s; reconnecting", self.client.what, time.monotonic() - sent)
                    self.client.lost = True
                return
            self._in_flight.popleft()

    def _connected(self) -> bool:
        """Whether the connection is up; a lost one is reconnected in the background meanwhile."""
        if self._reconnect is not None:
            if self._reconnect.is_alive():
                return False
            done, self._reconnect = self._reconnect, None
            if done.error is not None:
                raise done.error
        if self.client.connected:
            return True
        self.stats["reconnects"] += 1
        log.warning("%s: connection lost, reconnecting", self.client.what)
        self._in_flight.clear()  # their receipts went with the connection
        # Their ACK ids belong to the dead connection (another one's ERROR would fail the query):
        # the receiver spools them, the broker redelivers them, and they are recognised by id.
        self._taken.clear()
        self._reconnect = _Reconnect(self)
        self._reconnect.start()
        return False


__all__ = [
    "RUN_OPTION",
    "SPOOL_SCHEMA",
    "Consumer",
    "ConsumerConfig",
    "RecentIds",
    "SpoolIds",
    "spool_rows",
    "spooled_to_raw",
]
