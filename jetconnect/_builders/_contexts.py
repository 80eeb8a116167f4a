"""What user functions of the builders get: the contexts of ``create_fn`` and the source buffer."""

from __future__ import annotations

import itertools
import logging
import math
import operator
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from jetconnect._options import Options
from jetconnect._short_repr import short_repr
from jetconnect.errors import SourceError

Kind = Literal["batch", "stream", "timestamped_stream"]


@dataclass(frozen=True)
class ProcessorContext:
    """What ``create_fn`` learns about the processor it creates state for (Jet's Context)."""

    source_name: str
    global_processor_index: int
    total_parallelism: int
    local_processor_index: int
    local_parallelism: int
    options: Options
    logger: logging.Logger


@dataclass(frozen=True)
class SinkContext:
    """What a sink's ``create_fn`` learns: its partition and, in a streaming query, the batch."""

    sink_name: str
    partition_id: int
    attempt: int
    batch_id: int | None
    query_id: str | None
    options: Options
    logger: logging.Logger

    @property
    def global_processor_index(self) -> int:
        """Jet's name for the partition this sink instance writes."""
        return self.partition_id


class SourceBuffer:
    """Where ``fill_buffer_fn`` puts items: ``add(item)``, ``add(item, timestamp)``, ``close()``."""

    __slots__ = ("_source", "_kind", "items", "timestamps", "closed")

    def __init__(self, source: str, kind: Kind) -> None:
        self._source = source
        self._kind = kind
        self.items: list[Any] = []
        self.timestamps: list[Any] | None = [] if kind == "timestamped_stream" else None
        self.closed = False

    def add(self, item: Any, timestamp: int | datetime | None = None) -> None:
        """Emit ``item``; a timestamped stream also takes its event time (epoch ms or datetime).

        ``None`` is not an item (in Jet null ends a traverser, and here it is nearly always a
        function that forgot its ``return``): add ``(None,)`` for a row of NULLs. An event time is
        an int of epoch milliseconds or a timezone-aware datetime; ``True`` or a naive datetime
        (which could be any zone) is refused, naming the source and the item.
        """
        if item is None:
            raise SourceError(
                f"source '{self._source}': buf.add(None): None is not an item (a function that forgot its "
                f"'return'?); add (None,) for a row of NULLs"
            )
        if self.timestamps is not None:
            if timestamp is None:
                raise SourceError(f"source '{self._source}' is a timestamped stream: call buf.add(item, timestamp)")
            self.timestamps.append(check_event_time(timestamp, self._source, item))
        elif timestamp is not None:
            raise SourceError(
                f"source '{self._source}' is not timestamped: buf.add(item, timestamp) needs "
                f"SourceBuilder.timestamped_stream"
            )
        self.items.append(item)

    def add_all(self, items: Iterable[Any]) -> None:
        """Emit many items at once (not for timestamped streams).

        ``items`` is a collection of items: a string, bytes or a mapping given here is refused (it
        would add its characters, bytes or keys), and so is a None among the items.
        """
        if self.timestamps is not None:
            raise SourceError(f"source '{self._source}' is a timestamped stream: add items one by one with timestamps")
        if isinstance(items, (str, bytes, bytearray, memoryview, Mapping)) or items is None:
            raise SourceError(
                f"source '{self._source}': buf.add_all() takes a collection of items, got a "
                f"{type(items).__name__} ({short_repr(items, 80)}): it would add its "
                f"{'keys' if isinstance(items, Mapping) else 'characters or bytes'} one by one; "
                f"use buf.add(item) for one item"
            )
        start = len(self.items)
        self.items.extend(items)
        # by identity, in C: `None in items` would call items' own __eq__ (a numpy array's raises)
        if any(map(operator.is_, itertools.islice(self.items, start, None), itertools.repeat(None))):
            index = next(i for i in range(start, len(self.items)) if self.items[i] is None)
            del self.items[start:]
            raise SourceError(
                f"source '{self._source}': buf.add_all(): item {index - start} is None (a function that forgot "
                f"its 'return'?); add (None,) for a row of NULLs"
            )

    def close(self) -> None:
        """End a batch source: no more items will come."""
        if self._kind != "batch":
            raise SourceError(f"source '{self._source}' is a stream: buf.close() ends only batch sources")
        self.closed = True

    def __len__(self) -> int:
        return len(self.items)


def check_event_time(timestamp: Any, source: str, item: Any) -> int | float | datetime:
    """An event time as ``buf.add`` takes it: epoch ms (int or float) or a timezone-aware datetime."""
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, float, datetime)):
        raise SourceError(
            f"source '{source}': the event time of item {short_repr(item, 80)} must be epoch milliseconds or a "
            f"timezone-aware datetime, got {timestamp!r} ({type(timestamp).__name__})"
        )
    if isinstance(timestamp, datetime) and timestamp.utcoffset() is None:
        raise SourceError(
            f"source '{source}': the event time of item {short_repr(item, 80)} is a naive datetime {timestamp!r}: "
            f"say its zone (e.g. datetime(..., tzinfo=timezone.utc)), it is not taken for UTC"
        )
    if isinstance(timestamp, float) and not math.isfinite(timestamp):
        raise SourceError(f"source '{source}': the event time of item {short_repr(item, 80)} is {timestamp!r}")
    return timestamp


def fill_from_iterator(state: Iterator[Any], buf: SourceBuffer, max_items: int = 1024) -> None:
    """A ready ``fill_buffer_fn`` for a batch source whose state is an iterator."""
    for _ in range(max_items):
        try:
            buf.add(next(state))
        except StopIteration:
            buf.close()
            return
