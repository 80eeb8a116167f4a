"""The JMS source: a broker that cannot replay, made replayable by the core's spooled stream.

The messages are pulled by a builder stream without snapshot functions, so they go where every
such stream's items go (:mod:`jetconnect._builders`): processor i lives in a receiver in the
executor whose task first ran it, with its own STOMP connection (:class:`~jetconnect_jms.consumer.Consumer`,
Jet's connection per member), spools what it receives under ``wal_location`` and acknowledges it
only after that; a micro-batch's round records the spool range it takes, and a replay reads it.
The driver only plans rounds: it never connects to the broker.

This class wraps that stream for two things the core leaves to a source: the rows a query sees
are computed from the spooled messages when a round is read (:class:`MessageView`: the spool keeps
each message whole), and Spark's commits leave the last ``dedupe_window`` rows of each spool in
place (the core's ``spool_keep_committed_rows``), so that a redelivery of a spooled message is recognised by its id (see
:mod:`jetconnect_jms.consumer`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from jetconnect import Guarantee, Range, SourceBuilder, StreamSource
from jetconnect.api import (
    DEFAULT_IDLE_POLL_MS,
    DEFAULT_KEEP_ALIVE_MS,
    SPOOL_LINGER_MS_LIMIT,
    WAL_LOCATION,
    BuilderStreamSource,
    Offset,
    ReadOutput,
    StreamOptions,
)
from jetconnect.errors import OptionError
from jetconnect_jms.consumer import RUN_OPTION, SPOOL_SCHEMA, Consumer, ConsumerConfig, spooled_to_raw
from jetconnect_jms.messages import JmsMessage, MessageView
from jetconnect_jms.stomp_client import StompSettings, destination_path, tls_settings

#: Unacknowledged messages the broker may send a consumer. ActiveMQ's own default (1000) made the
#: consumer wait for the broker: with 2000, 100k messages went through a query ~8% faster.
DEFAULT_PREFETCH = 2000
#: Spooled messages a consumer may keep ahead of the micro-batches before it stops taking more
#: (the broker keeps the rest). Each micro-batch costs Spark a fixed amount of work; 20k instead
#: of 10k halved their number (~10% faster).
DEFAULT_MAX_BACKLOG = 20_000
#: Rows of each spool kept after Spark committed them: what a redelivery is checked against.
DEFAULT_DEDUPE_WINDOW = 100_000
#: How long a round waits while messages keep arriving: fewer, larger micro-batches.
DEFAULT_MAX_PULL_MS = 500
#: How long a consumer gathers messages into one spool segment (one fsync) before acknowledging:
#: the core receiver's linger (a slow queue makes at most 5 segments a second per consumer).
DEFAULT_LINGER_MS = 200


Kind = Literal["queue", "topic"]


class JmsSource(StreamSource):
    """Messages of a JMS queue or topic, exactly once through the spools of the core's receivers.

    ``sources.jms_queue`` and ``sources.jms_topic`` are this class with ``kind`` fixed: every
    parameter after ``kind`` is also a Spark option (converted by its annotation), declared here
    only; ``projection`` is the one the Python API alone can pass.
    """

    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        kind: Kind,
        destination: str,
        host: str = "127.0.0.1",
        port: int = 61613,
        parallelism: int = 1,
        subscription: str | None = None,
        client_id: str | None = None,
        wal_location: str | None = None,
        body_format: str = "string",
        charset: str = "utf-8",
        header_columns: list[str] | None = None,
        projection: Callable[[JmsMessage], Any] | None = None,
        schema: str | None = None,
        prefetch: int = DEFAULT_PREFETCH,
        dedupe_window: int = DEFAULT_DEDUPE_WINDOW,
        max_pull_ms: int = DEFAULT_MAX_PULL_MS,
        linger_ms: int = DEFAULT_LINGER_MS,
        max_backlog: int = DEFAULT_MAX_BACKLOG,
        user: str | None = None,
        password: str | None = None,
        connect_timeout: float = 30.0,
        receipt_timeout: float = 120.0,
        tls: bool | None = None,
        tls_ca_file: str | None = None,
        tls_cert_file: str | None = None,
        tls_key_file: str | None = None,
        tls_key_password: str | None = None,
        idle_poll_ms: int = DEFAULT_IDLE_POLL_MS,
        processor_keep_alive_ms: int = DEFAULT_KEEP_ALIVE_MS,
    ) -> None:
        self.kind, self.name = kind, f"jms_{kind}"
        self.destination = destination_path(kind, destination)
        self.owner = f"{self.name} source '{self.destination}'"
        _check_consumers(self.owner, kind, parallelism, subscription)
        self.parallelism, self.subscription, self.wal_location = parallelism, subscription, wal_location
        # a durable subscription is identified by (client id, name): derive a stable client id
        client_id = client_id or (f"jetconnect-{subscription}" if subscription else None)
        self.settings = StompSettings(
            host=host,
            port=port,
            user=user,
            password=password,
            client_id=client_id,
            connect_timeout=connect_timeout,
            receipt_timeout=receipt_timeout,
            tls=tls_settings(self.owner, tls, tls_ca_file, tls_cert_file, tls_key_file, tls_key_password),
        )
        self.view = MessageView(
            owner=self.owner,
            body_format=body_format,
            charset=charset,
            header_columns=tuple(header_columns or ()),
            projection=projection,
            schema_ddl=schema,
        )
        self.config = ConsumerConfig(
            settings=self.settings,
            destination=self.destination,
            owner=self.owner,
            view=self.view,
            subscription=subscription,
            prefetch=prefetch,
            linger_s=linger_ms / 1000,
            dedupe_window=dedupe_window,
            max_backlog=max_backlog,
        )
        self._core_options = _receiver_options(
            self.config,
            max_pull_ms=max_pull_ms,
            linger_ms=linger_ms,
            idle_poll_ms=idle_poll_ms,
            keep_alive_ms=processor_keep_alive_ms,
            wal_location=wal_location,
        )
        self._stream = self._consumer_stream()

    def _consumer_stream(self) -> BuilderStreamSource:
        """The builder stream whose processors are the consumers, spooling what they receive."""
        builder = (
            SourceBuilder.stream(f"{self.name} {self.destination}", functools.partial(Consumer, self.config))
            .fill_buffer_fn(Consumer.fill)
            .acknowledge_fn(Consumer.acknowledge)
            .destroy_fn(Consumer.close)
            .schema(SPOOL_SCHEMA)
        )
        if self.kind == "queue":  # Jet's way: that many connections on each member; a topic has one in the job
            builder = builder.distributed(self.parallelism)
        return builder.build().with_options(self._core_options)

    def with_options(self, options: Mapping[str, str]) -> JmsSource:
        """A copy with Spark's options (``wal_location``, the number of members) given to the stream."""
        lowered = {k.lower(): v for k, v in options.items()}
        clone = copy.copy(self)
        if WAL_LOCATION in lowered:
            clone.wal_location = lowered[WAL_LOCATION]
            clone._core_options = {**self._core_options, WAL_LOCATION: lowered[WAL_LOCATION]}
        # the factory's settings win over a same-named Spark option: they were checked above
        clone._stream = self._stream.with_options({**lowered, **clone._core_options})
        return clone

    def schema(self) -> Any:
        return self.view.schema()

    # --- driver side: the core plans the rounds -------------------------------------------------

    def initial_offset(self) -> Offset:
        return self._stream.initial_offset()

    def prepare_available_now(self) -> None:
        self._stream.prepare_available_now()

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        return self._stream.latest_offset(start, max_records)

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        return self._stream.ranges(start, end)

    def commit(self, end: Offset) -> None:
        self._stream.commit(end)  # keeps the last dedupe_window rows of each spool

    def stop(self) -> None:
        self._stream.stop()  # the receivers in the executors close their connections when they see it

    # --- executor side: a round of one processor --------------------------------------------------

    def read_range(self, range_: Range) -> ReadOutput:
        # the consumer this round may start checks redeliveries against the spools of this run
        stream = self._stream.with_options({RUN_OPTION: self._stream.run_of(range_)})
        for batch in stream.read_range(range_):
            yield self.view.to_rows(spooled_to_raw(batch))


def _check_consumers(owner: str, kind: str, parallelism: int, subscription: str | None) -> None:
    """How many consumers a destination may have, and which take a durable subscription."""
    if parallelism < 1:
        raise OptionError(f"{owner}: option 'parallelism' must be at least 1, got {parallelism}")
    if kind == "topic" and parallelism != 1:
        # every subscriber of a topic gets every message: more than one would duplicate them
        raise OptionError(f"{owner}: option 'parallelism' must be 1 for a topic, got {parallelism}")
    if subscription and kind != "topic":
        raise OptionError(f"{owner}: option 'subscription' (a durable subscription) only applies to topics")


def _receiver_options(
    config: ConsumerConfig,
    *,
    max_pull_ms: int,
    linger_ms: int,
    idle_poll_ms: int,
    keep_alive_ms: int,
    wal_location: str | None,
) -> dict[str, str]:
    """The core receiver's options for the consumers of ``config``, their ranges checked."""
    owner = config.owner
    timings = (
        ("max_pull_ms", max_pull_ms),
        ("linger_ms", linger_ms),
        ("idle_poll_ms", idle_poll_ms),
        ("processor_keep_alive_ms", keep_alive_ms),
    )
    for option, value in timings:
        if value < 0:
            raise OptionError(f"{owner}: option '{option}' must not be negative, got {value}")
    if linger_ms > SPOOL_LINGER_MS_LIMIT:
        raise OptionError(f"{owner}: option 'linger_ms' must be at most {SPOOL_LINGER_MS_LIMIT}, got {linger_ms}")
    if keep_alive_ms == 0:
        # a receiver destroyed after every round would reconnect (and be redelivered its prefetch) per micro-batch
        raise OptionError(f"{owner}: option 'processor_keep_alive_ms' must be positive for a broker connection")
    return {
        # the receiver counts the rows a spool holds, and commits leave dedupe_window of them
        StreamOptions.MAX_BACKLOG: str(config.max_backlog + config.dedupe_window),
        # ... all of them: the consumer's window of recent ids is sized to the whole spool
        StreamOptions.BACKLOG_PAST_COMMITS: "true",
        # a message whose ACK was lost with its connection may be redelivered after Spark
        # committed it: it must then still be found in a spool to be recognised
        StreamOptions.SPOOL_KEEP_COMMITTED_ROWS: str(config.dedupe_window),
        StreamOptions.MAX_PULL_MS: str(max(1, max_pull_ms)),
        # the receiver seals a segment after the consumer's linger, or once a fill took its
        # share of the prefetch window (the broker sends no more until those are acknowledged)
        StreamOptions.SPOOL_LINGER_MS: str(linger_ms),
        StreamOptions.SPOOL_SEGMENT_ROWS: str(config.segment),
        StreamOptions.IDLE_POLL_MS: str(idle_poll_ms),
        StreamOptions.KEEP_ALIVE_MS: str(keep_alive_ms),
        **({WAL_LOCATION: wal_location} if wal_location else {}),
    }


__all__ = [
    "DEFAULT_DEDUPE_WINDOW",
    "DEFAULT_IDLE_POLL_MS",
    "DEFAULT_KEEP_ALIVE_MS",
    "DEFAULT_LINGER_MS",
    "DEFAULT_MAX_BACKLOG",
    "DEFAULT_MAX_PULL_MS",
    "DEFAULT_PREFETCH",
    "JmsSource",
    "Kind",
]
