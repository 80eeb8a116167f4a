"""The JMS source: a broker that cannot replay, made replayable by the write-ahead log.

On the driver, each consumer (one STOMP connection, one log partition, one thread: see
:mod:`jetconnect_jms.consumer`) writes what the broker delivers to the log (fsynced), and only
then acknowledges it; a plan covers the log as far as the broker has confirmed the ACKs (its
receipt). A micro-batch is a range of the log, read on the executors as often as Spark asks. So:

* a message is acknowledged only once it is durable: a crash before that makes the broker
  redeliver it, a crash after it replays it from the log;
* a redelivered message that is already in the log (its acknowledgement was lost with the
  connection or with the driver) is recognised by its message id, acknowledged and not emitted;
* a broker restart drops the connection; the consumer reconnects with backoff, forgets what the
  dead connection had delivered but not logged (the broker redelivers it) and goes on.
"""

from __future__ import annotations

import contextlib
import copy
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jetconnect.connector import Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect.errors import OptionError
from jetconnect.wal import WriteAheadLog
from jetconnect_jms.consumer import Consumer, RecentIds, start_consumers
from jetconnect_jms.messages import MessageView
from jetconnect_jms.stomp_client import StompClient, StompSettings, destination_path


#: How long a plan waits for a just-started consumer's first segment (or for it to find nothing).
_FIRST_ROUND_S = 5.0
#: How often a plan looks at how far the consumers have logged.
_POLL_S = 0.02
#: Unacknowledged messages the broker may send a consumer. ActiveMQ's own default (1000) made the
#: consumer wait for the broker: with 2000, 100k messages went through a query ~8% faster.
DEFAULT_PREFETCH = 2000
#: Logged messages a consumer may keep ahead of the planned micro-batches. Each micro-batch
#: costs Spark a fixed amount of work; 20k instead of 10k halved their number (~10% faster).
DEFAULT_MAX_BACKLOG = 20_000
#: Recent message ids a redelivery is checked against (shared by the consumers of a queue).
DEFAULT_DEDUPE_WINDOW = 100_000
#: How long a plan waits while messages keep arriving: fewer, larger micro-batches.
DEFAULT_MAX_PULL_MS = 500
#: How long a consumer gathers messages into one log segment (one fsync) before acknowledging.
DEFAULT_LINGER_MS = 50


@dataclass
class _Running:
    """The driver-side state of a running query: never pickled."""

    wal: WriteAheadLog
    consumers: list[Consumer]
    #: Held while appending to or trimming the log: consumers append from their own threads.
    wal_lock: threading.Lock


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
        prefetch: int = DEFAULT_PREFETCH,
        dedupe_window: int = DEFAULT_DEDUPE_WINDOW,
        max_pull_ms: int = DEFAULT_MAX_PULL_MS,
        linger_ms: int = DEFAULT_LINGER_MS,
        max_backlog: int = DEFAULT_MAX_BACKLOG,
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
        for option, value in (("prefetch", prefetch), ("max_backlog", max_backlog), ("dedupe_window", dedupe_window)):
            if value < 1:
                raise OptionError(f"{self.owner}: option '{option}' must be at least 1, got {value}")
        for option, value in (("max_pull_ms", max_pull_ms), ("linger_ms", linger_ms)):
            if value < 0:
                raise OptionError(f"{self.owner}: option '{option}' must not be negative, got {value}")
        self.settings = settings
        self.view = view
        self.parallelism = parallelism
        self.subscription = subscription
        self.prefetch = prefetch
        self.dedupe_window = dedupe_window
        self.max_pull_ms = max_pull_ms
        self.linger_ms = linger_ms
        self.max_backlog = max_backlog
        self.wal_location = wal_location
        self._live: _Running | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_live"] = None  # connections and threads stay in the driver process that started them
        return state

    def with_options(self, options: Mapping[str, str]) -> "JmsSource":
        lowered = {k.lower(): v for k, v in options.items()}
        if "wal_location" not in lowered:
            return self
        clone = copy.copy(self)
        clone.wal_location = lowered["wal_location"]
        clone._live = None
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

    def _running(self) -> _Running:
        if self._live is None:
            wal = self._wal()
            seen = RecentIds(self.dedupe_window)
            for partition in wal.partitions():  # what the log holds may come back as redeliveries
                for batch in wal.read(partition, wal.start(partition), wal.end(partition)):
                    seen.add(batch.column("message_id").to_pylist())
            wal_lock = threading.Lock()
            consumers = start_consumers(
                self._open,
                self.parallelism,
                wal=wal,
                view=self.view,
                seen=seen,
                wal_lock=wal_lock,
                # half the prefetch window: the other half keeps arriving while a segment is written
                segment_records=max(1, self.prefetch // 2),
                linger_s=self.linger_ms / 1000,
                max_backlog=self.max_backlog,
            )
            self._live = _Running(wal, consumers, wal_lock)
        return self._live

    def _open(self, index: int) -> StompClient:
        client = StompClient(self.settings, f"{self.owner} consumer {index}").connect()
        headers = {"activemq.prefetchSize": str(self.prefetch)}
        if self.subscription:
            headers["activemq.subscriptionName"] = self.subscription
        client.subscribe(self.destination, f"jetconnect-{index}", headers)
        return client

    def initial_offset(self) -> Offset:
        running = self._running()  # subscribe now: a plain topic subscription sees messages from here on
        return {p: running.wal.start(p) for p in self._partitions(running.wal)}

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        """How far the log goes (at most ``max_records`` past ``start``): what was logged and acknowledged.

        While messages keep arriving the plan waits for them, up to ``max_pull_ms``: every
        micro-batch costs Spark a fixed amount of work, so fewer, larger ones go faster.
        """
        running = self._running()
        for consumer in running.consumers:
            # a fresh consumer's first segment is on its way: a first plan without it would be empty
            consumer.first_round.wait(_FIRST_ROUND_S)
        self._wait_while_flowing(running, start, max_records)
        for consumer in running.consumers:
            if consumer.error is not None:
                raise consumer.error
        wal = running.wal
        confirmed = {consumer.partition: consumer.acked_end for consumer in running.consumers}
        budget = max_records
        end: Offset = {}
        for partition in self._partitions(wal):
            begin = int(start.get(partition, wal.start(partition)))
            # a crashed run may have logged past the checkpoint: its consumer starts from there
            logged = confirmed[partition] if partition in confirmed else wal.end(partition)
            end[partition] = logged if budget is None else min(logged, begin + budget)
            if budget is not None:
                budget -= end[partition] - begin
        for consumer in running.consumers:
            consumer.planned = end[consumer.partition]
        return end

    def _wait_while_flowing(self, running: _Running, start: Offset, max_records: int | None) -> None:
        """Wait while messages arrive, until ``max_records`` are logged or ``max_pull_ms`` is up."""
        deadline = time.monotonic() + self.max_pull_ms / 1000
        logged = self._logged(running, start)
        while time.monotonic() < deadline and (max_records is None or logged < max_records):
            time.sleep(_POLL_S)
            now_logged = self._logged(running, start)
            if now_logged == logged and not any(consumer.receiving for consumer in running.consumers):
                return  # nothing arrived since the last look: the broker has nothing more now
            logged = now_logged

    @staticmethod
    def _logged(running: _Running, start: Offset) -> int:
        return sum(
            consumer.acked_end - int(start.get(consumer.partition, consumer.acked_end)) for consumer in running.consumers
        )

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        wal = self._wal()
        bounds = {p: (int(start[p]) if p in start else wal.start(p), int(e)) for p, e in end.items()}
        return [Range(p, s, e) for p, (s, e) in bounds.items() if s != e]

    def commit(self, end: Offset) -> None:
        wal = self._wal()
        with self._live.wal_lock if self._live is not None else contextlib.nullcontext():
            for partition, position in end.items():
                wal.trim(partition, int(position))

    def stop(self) -> None:
        if self._live is not None:
            for consumer in self._live.consumers:
                consumer.stop()
            self._live = None

    # --- executor side ---------------------------------------------------------------------------

    def read_range(self, range_: Range) -> ReadOutput:
        for raw in self._wal().read(range_.partition, int(range_.start), int(range_.end)):
            yield self.view.to_rows(raw)


__all__ = [
    "DEFAULT_DEDUPE_WINDOW", "DEFAULT_LINGER_MS", "DEFAULT_MAX_BACKLOG", "DEFAULT_MAX_PULL_MS", "DEFAULT_PREFETCH",
    "JmsSource",
]
