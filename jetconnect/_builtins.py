"""The connectors that ship with the core: Jet's test sources and its logger and no-op sinks,
``sources.items``, ``sources.item_stream``, ``sinks.logger`` (made with the public builders) and
``sinks.noop``.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from jetconnect._builders import (
    BuilderBatchSource,
    BuilderSink,
    BuilderStreamSource,
    ProcessorContext,
    SinkBuilder,
    SinkContext,
    SourceBuffer,
    SourceBuilder,
)
from jetconnect._connector import Guarantee, Sink, WriteContext
from jetconnect._hookspecs import hookimpl
from jetconnect._options import check_count
from jetconnect.errors import OptionError


def items(items: list, schema: str = "value string") -> BuilderBatchSource:
    """A batch source of the given items (Jet's ``TestSources.items``), spread over no processors but one."""
    values = list(items)

    def fill(state: list[Any], buf: SourceBuffer) -> None:
        buf.add_all(state)
        buf.close()

    return SourceBuilder.batch("items", lambda ctx: values).fill_buffer_fn(fill).schema(schema).build()


@dataclass
class _EventClock:
    """Emits event ``k`` of a processor at ``start_ms + k / rate``: replayable from ``k`` alone."""

    start_ms: int
    rate: float
    index: int
    stride: int
    next_k: int = 0

    def due(self, now_ms: int, limit: int) -> range:
        last_due = int((now_ms - self.start_ms) * self.rate / 1000)
        end = min(last_due + 1, self.next_k + limit)
        return range(self.next_k, max(self.next_k, end))


def item_stream(items_per_second: int = 10, distributed: int = 1, start_ms: int | None = None) -> BuilderStreamSource:
    """An infinite, timestamped, replayable stream of ``(sequence, event_time)`` at a steady rate.

    Jet's ``TestSources.itemStream``: processor ``i`` of ``n`` emits sequences ``i, i+n, ...``;
    its position is the next sequence, so a restarted query resumes exactly.
    """
    items_per_second = check_count(items_per_second, "items_per_second", "item_stream")

    def create(ctx: ProcessorContext) -> _EventClock:
        begin = start_ms if start_ms is not None else int(time.time() * 1000)
        rate = items_per_second / ctx.total_parallelism
        return _EventClock(begin, rate, ctx.global_processor_index, ctx.total_parallelism)

    def fill(clock: _EventClock, buf: SourceBuffer) -> None:
        for k in clock.due(int(time.time() * 1000), 1024):
            buf.add((k * clock.stride + clock.index,), clock.start_ms + int(k * 1000 / clock.rate))
        clock.next_k += len(buf)

    def snapshot(clock: _EventClock) -> dict[str, int]:
        return {"k": clock.next_k, "start_ms": clock.start_ms}

    def restore(clock: _EventClock, position: dict[str, int]) -> None:
        clock.next_k, clock.start_ms = position["k"], position["start_ms"]

    return (
        SourceBuilder.timestamped_stream("item_stream", create)
        .fill_buffer_fn(fill)
        .create_snapshot_fn(snapshot)
        .restore_snapshot_fn(restore)
        .schema("sequence bigint NOT NULL")
        .timestamp_column("timestamp")
        .distributed(distributed)
        .build()
    )


def logger(level: str = "INFO", prefix: str = "") -> BuilderSink:
    """A sink that logs every row (Jet's ``Sinks.logger``) on the executor's ``jetconnect.sink.logger``.

    Spark's Python workers configure no logging, so a record below WARNING would reach no handler
    and be dropped: the sink lets its logger pass ``level`` (unless its level was set) and gives it
    a handler to the worker's stderr, used while no handler of the user's would take the record.
    """
    numeric = logging.getLevelName(level.upper()) if isinstance(level, str) else None
    if not isinstance(numeric, int) or numeric <= logging.NOTSET:  # NOTSET would log nothing
        raise OptionError(
            f"logger: option 'level' must be a logging level (DEBUG, INFO, WARNING, ERROR, CRITICAL), got {level!r}"
        )

    def create(ctx: SinkContext) -> logging.Logger:
        log = ctx.logger
        _let_through(log, numeric)
        return log

    return SinkBuilder.sink("logger", create).receive_fn(lambda log, row: log.log(numeric, "%s%s", prefix, row)).build()


class _WorkerStderr(logging.StreamHandler[TextIO]):
    """A handler writing to the worker's stderr, used only while no handler of the user's would
    take the record. In local mode Spark copies a worker's stderr to the driver's console; on a
    cluster it is the executor's stderr log.

    Spark's own collection of worker logs (``spark.sql.pyspark.worker.logging.enabled``, a root
    handler it adds per task and ``spark.tvf.python_worker_logs()``) is no reason to stay quiet:
    it loses the records of streaming writes (seen with PySpark 4.3), so the line goes to the
    stderr beneath the one Spark swaps in while it captures (else it would log it again, as an
    error of logger ``stderr``)."""

    def __init__(self, owner: logging.Logger) -> None:
        super().__init__()
        self.owner = owner
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    @property
    def stream(self) -> TextIO:
        current = sys.stderr
        if type(current).__name__ == "JsonOutput" and sys.__stderr__ is not None:  # Spark capturing a task
            return sys.__stderr__
        return current

    @stream.setter
    def stream(self, _value: TextIO) -> None:  # StreamHandler.__init__ sets it; sys.stderr is looked up instead
        pass

    def emit(self, record: logging.LogRecord) -> None:
        if not _others_handle(self.owner, self):
            super().emit(record)


def _others_handle(log: logging.Logger, handler: logging.Handler) -> bool:
    """Whether a handler of the user's, other than ``handler``, is on ``log`` or a logger it
    propagates to (Spark's capturing handler is not one: see :class:`_WorkerStderr`)."""
    current: logging.Logger | None = log
    while current is not None:
        if any(h is not handler and not _sparks_capture(h) for h in current.handlers):
            return True
        current = current.parent if current.propagate else None
    return False


def _sparks_capture(handler: logging.Handler) -> bool:
    """Whether ``handler`` is the one Spark adds to the root logger while it captures a task's logs."""
    return type(handler.formatter).__name__ == "JSONFormatterWithMarker"


#: The levels the logger sink set on loggers itself (only those it may lower again).
_LEVELS_SET: dict[str, int] = {}


def _let_through(log: logging.Logger, numeric: int) -> None:
    """Make records of ``numeric`` on ``log`` reach a handler, respecting a level the user set."""
    if log.level == logging.NOTSET or _LEVELS_SET.get(log.name) == log.level:
        if log.level == logging.NOTSET or numeric < log.level:
            log.setLevel(numeric)
            _LEVELS_SET[log.name] = numeric
    if not any(isinstance(h, _WorkerStderr) for h in log.handlers):
        log.addHandler(_WorkerStderr(log))


class NoopSink(Sink):
    """Writes nothing (Jet's ``Sinks.noop``): every row is taken and dropped, batch and stream.

    Exactly-once holds trivially: nothing written any number of times is still nothing. The rows
    are read all the same, so whatever produces them runs, which is what a no-op sink is for
    (measuring a source, or a pipeline's side effects)."""

    name = "noop"
    guarantee = Guarantee.EXACTLY_ONCE

    def write_partition(self, data: Iterator[Any], ctx: WriteContext) -> None:
        for _ in data:
            pass


def noop() -> NoopSink:
    """A sink that drops every row (Jet's ``Sinks.noop``)."""
    return NoopSink()


@hookimpl
def register_sources(register: Any) -> None:
    register(items, name="items")
    register(item_stream, name="item_stream")


@hookimpl
def register_sinks(register: Any) -> None:
    register(logger, name="logger")
    register(noop, name="noop")
