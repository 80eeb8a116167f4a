"""The JMS source: a broker that cannot replay, made replayable by the write-ahead log.

On the driver, each consumer (one STOMP connection, one log partition) drains what the broker
delivered, writes it to the log (fsynced), and only then acknowledges it, client-individually,
waiting for the broker's receipt. A micro-batch is a range of the log, read on the executors as
often as Spark asks. So:

* a message is acknowledged only once it is durable: a crash before that makes the broker
  redeliver it, a crash after it replays it from the log;
* a redelivered message that is already in the log (its acknowledgement was lost with the
  connection or with the driver) is recognised by its message id, acknowledged and not emitted;
* a broker restart drops the connection; the consumer reconnects with backoff, forgets what the
  dead connection had delivered but not logged (the broker redelivers it) and goes on.
"""

from __future__ import annotations

import collections
import copy
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from jetconnect.connector import Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect.errors import OptionError
from jetconnect.wal import WriteAheadLog
from jetconnect_jms.messages import MessageView, frames_to_batch
from jetconnect_jms.stomp_client import CONNECTION_ERRORS, StompClient, StompSettings, destination_path

log = logging.getLogger("jetconnect.jms")

#: A consumer that received nothing for this long has nothing more for this micro-batch.
_QUIET_S = 0.02


class RecentIds:
    """The ids of the last ``capacity`` messages logged: what a redelivery is checked against."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()

    def __contains__(self, message_id: object) -> bool:
        return message_id in self._ids

    def add(self, ids: Iterable[str]) -> None:
        for message_id in ids:
            self._ids[message_id] = None
        while len(self._ids) > self.capacity:
            self._ids.popitem(last=False)


@dataclass
class _Consumers:
    """The driver-side state of a running query: never pickled."""

    wal: WriteAheadLog
    clients: list[StompClient]
    seen: RecentIds
    stats: dict[str, int] = field(default_factory=lambda: {"logged": 0, "redelivered": 0, "reconnects": 0})


class JmsSource(StreamSource):
    """Messages of a JMS queue or topic, exactly once through the write-ahead log."""

    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        kind: str,
        destination: str,
        settings: StompSettings,
        view: MessageView,
        *,
        parallelism: int = 1,
        subscription: str | None = None,
        prefetch: int = 1000,
        dedupe_window: int = 100_000,
        max_pull_ms: int = 500,
        wal_location: str | None = None,
    ) -> None:
        self.kind = kind
        self.name = f"jms_{kind}"
        self.destination = destination_path(kind, destination)
        self.owner = f"{self.name} source '{self.destination}'"
        if parallelism < 1:
            raise OptionError(f"{self.owner}: option 'parallelism' must be at least 1, got {parallelism}")
        if kind == "topic" and parallelism != 1:
            # every subscriber of a topic gets every message: more than one would duplicate them
            raise OptionError(f"{self.owner}: option 'parallelism' must be 1 for a topic, got {parallelism}")
        if subscription and kind != "topic":
            raise OptionError(f"{self.owner}: option 'subscription' (a durable subscription) only applies to topics")
        if prefetch < 1:
            raise OptionError(f"{self.owner}: option 'prefetch' must be at least 1, got {prefetch}")
        self.settings = settings
        self.view = view
        self.parallelism = parallelism
        self.subscription = subscription
        self.prefetch = prefetch
        self.dedupe_window = dedupe_window
        self.max_pull_ms = max_pull_ms
        self.wal_location = wal_location
        self._consumers: _Consumers | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_consumers"] = None  # connections stay in the driver process that opened them
        return state

    def with_options(self, options: Mapping[str, str]) -> "JmsSource":
        lowered = {k.lower(): v for k, v in options.items()}
        if "wal_location" not in lowered:
            return self
        clone = copy.copy(self)
        clone.wal_location = lowered["wal_location"]
        clone._consumers = None
        return clone

    def schema(self) -> Any:
        return self.view.schema()

    # --- driver side -----------------------------------------------------------------------------

    def _wal(self) -> WriteAheadLog:
        if not self.wal_location:
            raise OptionError(
                f"{self.owner}: option 'wal_location' is required: a durable folder for the write-ahead "
                f"log, beside the query's checkpoint (e.g. <checkpoint>/../wal)"
            )
        return WriteAheadLog(self.wal_location)

    def _partitions(self, wal: WriteAheadLog) -> list[str]:
        # partitions of an earlier run with a larger parallelism are still read, never dropped
        return sorted({str(i) for i in range(self.parallelism)} | set(wal.partitions()), key=int)

    def _running(self) -> _Consumers:
        if self._consumers is None:
            wal = self._wal()
            seen = RecentIds(self.dedupe_window)
            for partition in wal.partitions():  # what the log holds may come back as redeliveries
                for batch in wal.read(partition, wal.start(partition), wal.end(partition)):
                    seen.add(batch.column("message_id").to_pylist())
            clients = [self._open(i) for i in range(self.parallelism)]
            self._consumers = _Consumers(wal, clients, seen)
        return self._consumers

    def _open(self, index: int) -> StompClient:
        client = StompClient(self.settings, f"{self.owner} consumer {index}").connect()
        headers = {"activemq.prefetchSize": str(self.prefetch)}
        if self.subscription:
            headers["activemq.subscriptionName"] = self.subscription
        client.subscribe(self.destination, f"jetconnect-{index}", headers)
        return client

    def initial_offset(self) -> Offset:
        consumers = self._running()  # subscribe now: a plain topic subscription sees messages from here on
        return {p: consumers.wal.start(p) for p in self._partitions(consumers.wal)}

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        consumers = self._running()
        wal = consumers.wal
        budget = max_records
        end: Offset = {}
        for partition in self._partitions(wal):
            begin = int(start.get(partition, wal.start(partition)))
            logged = wal.end(partition) - begin  # a crashed run may have logged past the checkpoint
            if budget is not None and logged >= budget:
                end[partition] = begin + budget
                budget = 0
                continue
            index = int(partition)
            if index < self.parallelism:
                self._pull(consumers, index, None if budget is None else budget - logged)
            end[partition] = wal.end(partition)
            if budget is not None:
                budget -= end[partition] - begin
        return end

    def _pull(self, consumers: _Consumers, index: int, limit: int | None) -> None:
        """Log and acknowledge what consumer ``index`` receives, for up to ``max_pull_ms``.

        The broker sends at most ``prefetch`` unacknowledged messages, so one drain is never
        more than that: keep draining while messages flow (acknowledging frees the window) and
        stop when the consumer has been quiet for a moment, the budget or the time is spent.
        """
        client = consumers.clients[index]
        if not client.connected:
            consumers.stats["reconnects"] += 1
            log.warning("%s: connection lost, reconnecting", client.what)
            client.connect()  # forgets frames of the dead connection: the broker redelivers them
        started = last_seen = time.monotonic()
        pulled = 0
        while time.monotonic() - started < self.max_pull_ms / 1000 and (limit is None or pulled < limit):
            client.raise_broker_error()
            frames = _drain(client.messages, None if limit is None else limit - pulled)
            if frames:
                pulled += len(frames)
                last_seen = time.monotonic()
                if not self._accept(consumers, index, client, frames):
                    return
            elif time.monotonic() - last_seen > _QUIET_S:
                return
            else:
                time.sleep(0.002)

    def _accept(self, consumers: _Consumers, index: int, client: StompClient, frames: list[Any]) -> bool:
        """Log the new messages among ``frames``, then acknowledge all; False if the ack failed."""
        fresh = [f for f in frames if f[0]["message-id"] not in consumers.seen]
        if len(fresh) != len(frames):
            consumers.stats["redelivered"] += len(frames) - len(fresh)
        if fresh:
            batch = frames_to_batch(fresh)
            self.view.check_decodable(batch)  # a bad body stops here, unacknowledged
            partition = str(index)
            consumers.wal.append(partition, consumers.wal.end(partition), batch)
            consumers.seen.add(batch.column("message_id").to_pylist())
            consumers.stats["logged"] += len(fresh)
        try:
            client.ack(headers["ack"] for headers, _ in frames)
        except CONNECTION_ERRORS as exc:
            # The messages are durable in the log already; the broker will redeliver them to the
            # next connection and they will be recognised by id. Reconnect on the next call.
            client.lost = True
            log.warning("%s: acknowledgement failed (%s); will reconnect", client.what, exc)
            return False
        return True

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        wal = self._wal()
        bounds = {p: (int(start[p]) if p in start else wal.start(p), int(e)) for p, e in end.items()}
        return [Range(p, s, e) for p, (s, e) in bounds.items() if s != e]

    def commit(self, end: Offset) -> None:
        wal = self._wal()
        for partition, position in end.items():
            wal.trim(partition, int(position))

    def stop(self) -> None:
        if self._consumers is not None:
            for client in self._consumers.clients:
                client.close()
            self._consumers = None

    # --- executor side ---------------------------------------------------------------------------

    def read_range(self, range_: Range) -> ReadOutput:
        for raw in self._wal().read(range_.partition, int(range_.start), int(range_.end)):
            yield self.view.to_rows(raw)


def _drain(messages: "collections.deque[Any]", limit: int | None) -> list[Any]:
    taken: list[Any] = []
    while limit is None or len(taken) < limit:
        try:
            taken.append(messages.popleft())
        except IndexError:
            break
    return taken


__all__ = ["JmsSource", "RecentIds"]
