"""What user functions of the builders get: the contexts of ``create_fn`` and the source buffer."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from jetconnect._options import Options
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
        """Emit ``item``; a timestamped stream also takes its event time (epoch ms or datetime)."""
        if self.timestamps is not None:
            if timestamp is None:
                raise SourceError(f"source '{self._source}' is a timestamped stream: call buf.add(item, timestamp)")
            self.timestamps.append(timestamp)
        elif timestamp is not None:
            raise SourceError(
                f"source '{self._source}' is not timestamped: buf.add(item, timestamp) needs "
                f"SourceBuilder.timestamped_stream"
            )
        self.items.append(item)

    def add_all(self, items: Sequence[Any]) -> None:
        """Emit many items at once (not for timestamped streams)."""
        if self.timestamps is not None:
            raise SourceError(f"source '{self._source}' is a timestamped stream: add items one by one with timestamps")
        self.items.extend(items)

    def close(self) -> None:
        """End a batch source: no more items will come."""
        if self._kind != "batch":
            raise SourceError(f"source '{self._source}' is a stream: buf.close() ends only batch sources")
        self.closed = True

    def __len__(self) -> int:
        return len(self.items)


def fill_from_iterator(state: Iterator[Any], buf: SourceBuffer, max_items: int = 1024) -> None:
    """A ready ``fill_buffer_fn`` for a batch source whose state is an iterator."""
    for _ in range(max_items):
        try:
            buf.add(next(state))
        except StopIteration:
            buf.close()
            return
