"""``sources.map_journal``: a map's event journal as an infinite, exactly replayable stream.

The offset is ``{partition: next sequence to read}`` for every map partition. The driver asks
the store how far each partition's journal goes; executors read exact ``[start, end)`` ranges,
several map partitions per Spark partition. A journal is a ring: if events the query has not
read yet were pushed out (capacity) or expired (TTL), the query fails with an
:class:`~jetconnect.errors.OffsetError` naming the partition and the lost sequences, or, with
``on_overflow="skip"``, logs a warning and goes on from the oldest event still kept.
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import chain, repeat
from operator import itemgetter
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructField, StructType

from jetconnect import Guarantee, Range, StreamSource
from jetconnect.api import (
    Offset,
    ReadOutput,
    check_function_option,
    columns_to_batch,
    integer_positions,
    parse_schema,
    share_budget,
    spread,
    to_arrow_schema,
)
from jetconnect.errors import OffsetError, OptionError
from jetconnect_imap.connector import OnBackend
from jetconnect_imap.events import MAP_PUT_EVENTS, EventType, JournalEvent, RawEvent, parse_event_types
from jetconnect_imap.map_source import DEFAULT_PROJECTED_SCHEMA, derived_entry_schema
from jetconnect_imap.rows import row_shaper

log = logging.getLogger(__name__)

DEFAULT_JOURNAL_SCHEMA = (
    "partition int, sequence long, type string, key string, old_value string, new_value string, timestamp timestamp"
)
DEFAULT_SCHEMA = parse_schema(DEFAULT_JOURNAL_SCHEMA)
#: Jet's default: ``mapPutEvents()`` (ADDED and UPDATED) as ``mapEventToEntry()``, key and new value.
ENTRY_SCHEMA_DDL = "key string, value string"
ENTRY_SCHEMA = parse_schema(ENTRY_SCHEMA_DDL)
_FULL_ARROW = to_arrow_schema(DEFAULT_SCHEMA)
_SEQ = itemgetter(0)  # a RawEvent's sequence
START_FROM_OLDEST = "oldest"
START_FROM_CURRENT = "current"


class MapJournalSource(OnBackend, StreamSource):
    """The change events of one map, from the oldest kept (or from now) on, forever.

    As Jet's ``Sources.mapJournal`` by default: the ADDED and UPDATED events, each as the entry's
    key and new value. ``full_events=True`` gives every event type as a whole event row
    (partition, sequence, type, key, old and new value, time); ``event_types``, ``predicate`` and
    ``projection`` narrow or reshape either.
    """

    name = "map_journal"
    guarantee = Guarantee.EXACTLY_ONCE  # ranges of sequence numbers replay exactly
    #: The event names ``event_types`` takes, and the default ones (Jet's put events).
    #: (The cache journal's are JCache's names: another enum, parsed alike.)
    event_names: type[enum.Enum] = EventType
    put_events: tuple[enum.Enum, ...] = MAP_PUT_EVENTS

    def __init__(
        self,
        name: str,
        store: str | None = None,
        start: str = START_FROM_OLDEST,
        predicate: Callable[[JournalEvent], bool] | None = None,
        projection: Callable[[JournalEvent], Any] | None = None,
        event_types: Iterable[str | EventType] | None = None,
        on_overflow: str = "fail",
        schema: str | StructType | None = None,
        parallelism: int = 4,
        full_events: bool = False,
        client_config: Mapping[str, Any] | None = None,
    ) -> None:
        self._locate(name, store, client_config)
        if start not in (START_FROM_OLDEST, START_FROM_CURRENT):
            raise OptionError(f"source '{self.name}': option 'start' must be oldest or current, got {start!r}")
        if on_overflow not in ("fail", "skip"):
            raise OptionError(f"source '{self.name}': option 'on_overflow' must be fail or skip, got {on_overflow!r}")
        try:
            self.event_types: AbstractSet[enum.Enum] | None = (
                parse_event_types(self.event_names, event_types, f"source '{self.name}': option 'event_types'")
                if event_types
                else None
            )
        except ValueError as exc:
            raise OptionError(str(exc)) from None
        if self.event_types is None and not full_events:
            self.event_types = set(self.put_events)
        self.full_events = full_events
        self.start, self.on_overflow = start, on_overflow
        for option, function in (("predicate", predicate), ("projection", projection)):
            check_function_option(function, option, f"source '{self.name}'", "the event (a JournalEvent)")
        self.predicate, self.projection = predicate, projection
        #: The schema, given or settled (None: the key and value columns learnt from the data).
        self._schema: StructType | None = parse_schema(schema) if schema else None
        if projection is not None and schema is None:
            self._schema = parse_schema(DEFAULT_PROJECTED_SCHEMA)
        self.parallelism = parallelism

    def schema(self) -> StructType:
        """The given schema, or the default one with the key and value columns as a sample of the
        structure's entries reads (structs of the records' fields for Compact values)."""
        if self._schema is None:
            entry = derived_entry_schema(self.backend, self.structure, self.stored)
            if not self.full_events:
                self._schema = entry
            else:
                key, value = (field.dataType for field in entry.fields)
                self._schema = StructType(
                    [
                        StructField(
                            f.name, {"key": key, "old_value": value, "new_value": value}.get(f.name, f.dataType)
                        )
                        for f in DEFAULT_SCHEMA.fields
                    ]
                )
        return self._schema

    def bind_schema(self, schema: StructType) -> None:
        if self._schema is None:
            self._schema = schema

    def _bounds(self) -> list[tuple[int, int]]:
        return self.backend.journal_bounds(self.structure, self.stored)

    # --- driver side -------------------------------------------------------------------------

    def initial_offset(self) -> Offset:
        which = 0 if self.start == START_FROM_OLDEST else 1
        return {str(p): bounds[which] for p, bounds in enumerate(self._bounds())}

    def _positions(self, offset: Offset, partitions: int | None = None) -> dict[str, int]:
        """The checked entries of ``offset``: partition numbers (below ``partitions``) and sequences."""

        def check_partition(key: str) -> None:
            if not (key.isascii() and key.isdigit() and str(int(key)) == key) or (
                partitions is not None and int(key) >= partitions
            ):
                raise OffsetError(
                    f"source '{self.name}': offset entry {key!r} is not a partition of {self._subject}"
                    + (f" (0..{partitions - 1})" if partitions else "")
                    + "; was the checkpoint edited?"
                )

        return integer_positions(offset, f"source '{self.name}' ({self._subject})", "partition", check_partition)

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        bounds = self._bounds()
        start = self._positions(start, len(bounds))
        if len(start) != len(bounds):
            raise OffsetError(
                f"source '{self.name}': the offset has {len(start)} partitions but {self._subject} "
                f"has {len(bounds)}; was the map recreated with another partition count?"
            )
        begin = {}
        for p, (oldest, nxt) in enumerate(bounds):
            saved = start[str(p)]
            if saved > nxt:
                raise OffsetError(
                    f"source '{self.name}': {self._subject} partition {p} is at sequence {nxt}, "
                    f"behind the saved offset {saved}; was the map's store wiped or replaced?"
                )
            begin[p] = self._check_overflow(p, saved, oldest)
        backlog = {p: bounds[p][1] - begin[p] for p in begin}
        allowed = share_budget(backlog, max_records) if max_records is not None else backlog
        return {str(p): begin[p] + allowed[p] for p in begin}

    def _check_overflow(self, partition: int, saved: int, oldest: int) -> int:
        """Where reading of ``partition`` really starts: ``saved``, or ``oldest`` when skipping."""
        if saved >= oldest:
            return saved
        kept, remedy = self.backend.journal_retention(self.structure, self.stored)
        message = (
            f"source '{self.name}': {self._subject} partition {partition} lost events "
            f"{saved}..{oldest - 1} before they were read (the journal keeps {kept}); "
            f"{remedy}, read more often, or set on_overflow='skip'"
        )
        if self.on_overflow == "fail":
            raise OffsetError(message)
        log.warning("%s; skipping them as asked", message)
        return oldest

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        start, end = self._positions(start), self._positions(end)
        if set(start) != set(end):
            raise OffsetError(
                f"source '{self.name}': {self._subject}: the micro-batch starts at partitions {sorted(start)} "
                f"and ends at {sorted(end)}; was the checkpoint edited?"
            )
        moved = [p for p in end if end[p] != start[p]]
        return [
            Range(f"partitions {group[0]}..", {p: start[p] for p in group}, {p: end[p] for p in group})
            for group in spread(moved, self.parallelism)
        ]

    # --- executor side -----------------------------------------------------------------------

    def read_range(self, range_: Range) -> ReadOutput:
        shape = row_shaper(self.schema(), f"source '{self.name}' {self.display_name!r}")
        value_of = self.backend.codec.plain
        columnar = self.predicate is None and self.projection is None and self._columnar()
        starts, ends = self._positions(range_.start), self._positions(range_.end)
        spans: dict[int, tuple[int, int]] = {}
        for p_text, end in ends.items():
            if p_text not in starts:
                raise OffsetError(
                    f"source '{self.name}': {self._subject}: range {range_.partition!r} has no start for partition {p_text}"
                )
            spans[int(p_text)] = (starts[p_text], end)
        for group in _groups(spans, READ_GROUP_EVENTS):
            # One backend call per group of partitions (their reads in flight at once), bounded in
            # events so that a task holds a group, not its whole range.
            read = self.backend.read_journal(self.structure, self.stored, group)
            if columnar:
                yield from self._column_batches(group, read)
                continue
            for partition, events in self._kept(group, read):
                for seq, kind, key, old, new, ts in events:
                    event = JournalEvent(partition, seq, kind, value_of(key), value_of(old), value_of(new), ts)
                    if self.predicate is not None and not self.predicate(event):
                        continue
                    if self.projection is not None:
                        row = self.projection(event)
                        if row is not None:  # Jet's rule: a projection that returns None filters the event out
                            yield shape(row)
                    else:
                        yield shape(_as_row(event) if self.full_events else (event.key, event.new_value))

    def _columnar(self) -> bool:
        """Whether rows can be built a column at a time: the entry rows' two columns, or the
        full rows' seven with the default types for everything but the key and values."""
        fields = self.schema().fields
        if not self.full_events:
            return len(fields) == 2
        return len(fields) == len(DEFAULT_SCHEMA.fields) and all(
            fields[i].dataType == DEFAULT_SCHEMA.fields[i].dataType for i in (0, 1, 2, 6)
        )

    def _kept(
        self, spans: dict[int, tuple[int, int]], read: dict[int, list[RawEvent]]
    ) -> Iterator[tuple[int, Sequence[RawEvent]]]:
        """Each partition's events read that this query emits, in partition order: whole lists,
        not event by event (a group holds up to 50,000 events)."""
        types = self.event_types
        for partition, (start, end) in spans.items():
            raw = read.get(partition, [])
            first = raw[0][0] if raw else end
            if first != start:  # the ring moved past `start` since the driver looked
                start = self._check_overflow(partition, start, first)
            events: Sequence[RawEvent] = raw[bisect_left(raw, start, key=_SEQ) :] if first < start else raw
            if types is not None:
                events = [event for event in events if event[1] in types]
            yield partition, events

    def _column_batches(
        self, spans: dict[int, tuple[int, int]], read: dict[int, list[RawEvent]]
    ) -> Iterator[pa.RecordBatch]:
        """The rows of events no function looks at, as Arrow columns: each key and value column
        decoded straight from the stored form by its type (a string column shows the stored
        text, see :mod:`jetconnect_imap.rows`), the fixed columns of full rows built whole."""
        runs = [(partition, events) for partition, events in self._kept(spans, read) if events]
        if not runs:
            return
        kept = list(chain.from_iterable(events for _, events in runs))
        owner = f"source '{self.name}' {self.display_name!r}"
        codec, schema = self.backend.codec, self.schema()
        partitions = list(chain.from_iterable(repeat(p, len(events)) for p, events in runs))

        def describe(index: int) -> str:
            return f"{owner}: the event of partition {partitions[index]} sequence {kept[index][0]}"

        def column(field: int, at: int) -> list[Any] | pa.Array:
            return codec.column_values(schema.fields[field].dataType, [e[at] for e in kept], describe)

        if not self.full_events:
            yield columns_to_batch([column(0, 2), column(1, 4)], schema, owner)
            return
        yield columns_to_batch(
            [
                pa.array(partitions, pa.int32()),
                pa.array([e[0] for e in kept], pa.int64()),
                pa.array([e[1].value for e in kept], pa.string()),
                column(3, 2),
                column(4, 3),
                column(5, 4),
                # Hazelcast's events carry no time (None): a null timestamp
                pa.array([None if e[5] is None else e[5] * 1000 for e in kept], pa.int64()).cast(
                    _FULL_ARROW.field("timestamp").type
                ),
            ],
            schema,
            owner,
        )


#: Events a read task fetches at once, at most (a partition with more is fetched alone).
READ_GROUP_EVENTS = 50_000


def _groups(spans: dict[int, tuple[int, int]], budget: int) -> Iterator[dict[int, tuple[int, int]]]:
    """``spans`` cut into consecutive groups of at most ``budget`` events (by their bounds)."""
    group: dict[int, tuple[int, int]] = {}
    held = 0
    for partition, (start, end) in spans.items():
        size = max(0, end - start)
        if group and held + size > budget:
            yield group
            group, held = {}, 0
        group[partition] = (start, end)
        held += size
    if group:
        yield group


def _utc(timestamp_ms: int | None) -> dt.datetime | None:
    if timestamp_ms is None:  # a Hazelcast journal event: no time recorded
        return None
    return dt.datetime.fromtimestamp(timestamp_ms / 1000, tz=dt.UTC)


def _as_row(event: JournalEvent) -> tuple[Any, ...]:
    return (
        event.partition,
        event.sequence,
        event.type.value,
        event.key,
        event.old_value,
        event.new_value,
        _utc(event.timestamp_ms),
    )
