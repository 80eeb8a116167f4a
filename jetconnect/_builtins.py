"""The connectors that ship with the core, all made with the public builders (Jet's test sources
and logger sink): ``sources.items``, ``sources.item_stream`` and ``sinks.logger``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

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
from jetconnect._hookspecs import hookimpl


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
    if items_per_second < 1:
        raise ValueError(f"item_stream: items_per_second must be at least 1, got {items_per_second}")

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
    """A sink that logs every row (Jet's ``Sinks.logger``) on the executor's ``jetconnect.sink.logger``."""
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"logger: unknown level {level!r}")

    def create(ctx: SinkContext) -> logging.Logger:
        return ctx.logger

    return SinkBuilder.sink("logger", create).receive_fn(lambda log, row: log.log(numeric, "%s%s", prefix, row)).build()


@hookimpl
def register_sources(register: Any) -> None:
    register(items, name="items")
    register(item_stream, name="item_stream")


@hookimpl
def register_sinks(register: Any) -> None:
    register(logger, name="logger")
