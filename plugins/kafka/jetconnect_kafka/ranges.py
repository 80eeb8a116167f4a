"""Reading offsets ``[start, end)`` of one partition: the one loop the source and the sink's ledger share.

A consumer assigned by hand at ``start`` hands out records in chunks; some offsets hold no record
(transaction markers, compacted gaps), so when nothing comes the consumer's position says how far
the partition really went; and a fetch may bring records at or past ``end`` (produced after the
range was planned), which are not part of the range. What an error record or a stall means differs
between the callers, so they say it (``on_error``, ``on_stall``).
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator
from typing import NoReturn, cast

from confluent_kafka import Consumer, KafkaError, Message, TopicPartition


class PartitionRange:
    """Offsets ``[start, end)`` of ``topic``/``partition`` read with ``consumer``, in chunks of records."""

    def __init__(
        self,
        consumer: Consumer,
        topic: str,
        partition: int,
        start: int,
        end: int,
        *,
        chunk: int,
        stall_s: float,
        on_error: Callable[[KafkaError, int], NoReturn],
        on_stall: Callable[[int], NoReturn],
        wait_s: float = 0.05,
    ) -> None:
        self.consumer, self.tp = consumer, TopicPartition(topic, partition, start)
        self.start, self.end, self.chunk, self.stall_s = start, end, chunk, stall_s
        #: The longest a ``consume`` call waits to fill its chunk. A call asked for more records
        #: than the range holds (its offsets include markers) waits this long every time.
        self.wait_s = wait_s
        self.on_error, self.on_stall = on_error, on_stall

    def chunks(self) -> Iterator[list[Message]]:
        """Lists of the range's records in offset order; every record of the range once."""
        for records, _ in self.chunks_with_offsets():
            yield records

    def chunks_with_offsets(self) -> Iterator[tuple[list[Message], list[int]]]:
        """:meth:`chunks`, each list with its records' offsets (read once here: the callers need them too)."""
        if self.start >= self.end:
            return
        self.consumer.assign([self.tp])
        position, end = self.start, self.end
        idle_since = time.monotonic()
        while position < end:
            # A short wait: the range's records exist, so a short answer mostly means offsets with
            # no record (a transaction's commit marker ends every transactional range), which the
            # position check below resolves without waiting longer.
            messages = self.consumer.consume(num_messages=min(self.chunk, end - position), timeout=self.wait_s)
            # Whole-list passes, not a loop with branches per record: this is the source's inner loop.
            errors = [m.error() for m in messages]
            if errors.count(None) < len(errors):
                self.on_error(next(e for e in errors if e is not None), position)
            found = [m.offset() for m in messages]
            if None in found:  # librdkafka gives every record its offset; only error events lack one
                raise _no_offset(messages[found.index(None)])
            offsets = cast("list[int]", found)
            # Offsets rise within a partition: records at or past the end (produced after the
            # range was planned) are the list's tail.
            kept = len(offsets) if not offsets or offsets[-1] < end else bisect.bisect_left(offsets, end)
            past_end = kept < len(offsets)
            if kept:
                records = messages if not past_end else messages[:kept]
                taken = offsets if not past_end else offsets[:kept]
                position = taken[-1] + 1
                idle_since = time.monotonic()
                yield records, taken
            if past_end or position >= end:
                break
            # Transaction markers and compacted gaps hold offsets that no record has; the consumer's
            # position has passed those it fetched. Asked at once, not after another wait: the
            # marker that ends a transactional range mostly comes in the same fetch as its records.
            position = max(position, self.consumer.position([self.tp])[0].offset)
            if not messages:
                watch = getattr(self.consumer, "watch", None)  # consume served its reports: a refusal ends the read
                if watch is not None:
                    watch.raise_if_refused()
                if position < end and time.monotonic() - idle_since > self.stall_s:
                    self.on_stall(position)


def record_offset(record: Message) -> int:
    """The offset of a record consumed without error.

    librdkafka gives every fetched record its offset; only error events may come without one, so
    None here is a broken client, named rather than let through as a comparison's TypeError.
    """
    offset = record.offset()
    if offset is None:
        raise _no_offset(record)
    return offset


def _no_offset(record: Message) -> ValueError:
    return ValueError(f"kafka: a record of {record.topic()}:{record.partition()} came without an offset")


__all__ = ["PartitionRange", "record_offset"]
