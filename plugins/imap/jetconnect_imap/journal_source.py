"""``sources.map_journal``: a map's event journal as an infinite, exactly replayable stream.

The offset is ``{partition: next sequence to read}`` for every map partition, plus one reserved
entry ``"journal"`` (:class:`JournalMark`): which journal those sequences belong to (the
backend's :meth:`~jetconnect_imap.backend.Backend.journal_identity`: the cluster's id, the
embedded map's incarnation) and the digest of the last event read in one partition. The driver
asks the store how far each partition's journal goes; executors read exact ``[start, end)``
ranges, several map partitions per Spark partition.

A journal is a ring: if events the query has not read yet were pushed out (capacity) or expired
(TTL), the query fails with an :class:`~jetconnect.errors.OffsetError` naming the partition and
the lost sequences, or, with ``on_overflow="skip"``, logs a warning and goes on from the oldest
event still kept. A journal that is not the one the offset was read from (another identity, an
event digest that differs, a partition behind the saved sequence) fails the query with a
:class:`~jetconnect_imap.errors.JournalSequenceError`, or, with ``on_journal_reset="from_oldest"``,
logs a warning and reads the new journal from its oldest event: never a silent skip of the new
journal's first events. An offset without the mark (a checkpoint of an earlier version) is read
as before and gets it from its next micro-batch on.
"""

from __future__ import annotations

import datetime as dt
import enum
import logging
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
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
from jetconnect_imap.errors import JournalSequenceError
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
#: The offset's reserved entry (partition entries are numbers, so it is never one of them).
JOURNAL_KEY = "journal"
#: How often the identity may change while the bounds are read before the driver gives up.
_IDENTITY_ATTEMPTS = 3


@dataclass(frozen=True)
class JournalMark:
    """The offset's ``"journal"`` entry: the journal's identity when the offset was made;
    ``check``: ``(partition, sequence, digest)`` of the last event read in one partition (the one
    read furthest), which a journal made again under the same identity does not hold; and, in
    the first offset after a journal reset, ``begins``: where each partition of the new journal
    is read from (its micro-batch's start belongs to the old journal)."""

    identity: str | None
    check: tuple[int, int, str] | None = None
    begins: tuple[int, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.identity is not None:
            out["id"] = self.identity
        if self.check is not None:
            out["last"] = list(self.check)
        if self.begins is not None:
            out["from"] = list(self.begins)
        return out

    @classmethod
    def from_json(cls, value: Any, owner: str) -> JournalMark:
        """The mark of an offset as Spark kept it; an OffsetError for one that cannot be ours."""

        def bad() -> OffsetError:
            return OffsetError(
                f"{owner}: offset entry {JOURNAL_KEY!r} is {value!r}, not a journal mark "
                '({"id": text, "last": [partition, sequence, digest], "from": [sequence, ...]}); '
                "was the checkpoint edited?"
            )

        def sequences(items: Any) -> bool:
            return isinstance(items, list) and all(type(n) is int and n >= 0 for n in items)

        if not isinstance(value, dict) or set(value) - {"id", "last", "from"}:
            raise bad()
        identity, last, begins = value.get("id"), value.get("last"), value.get("from")
        if identity is not None and not isinstance(identity, str):
            raise bad()
        if last is not None and not (
            isinstance(last, list) and len(last) == 3 and sequences(last[:2]) and isinstance(last[2], str)
        ):
            raise bad()
        if begins is not None and not sequences(begins):
            raise bad()
        return cls(
            identity,
            None if last is None else (last[0], last[1], last[2]),
            None if begins is None else tuple(begins),
        )


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
        on_journal_reset: str = "fail",
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
        if on_journal_reset not in ("fail", "from_oldest"):
            raise OptionError(
                f"source '{self.name}': option 'on_journal_reset' must be fail or from_oldest, got {on_journal_reset!r}"
            )
        self.on_journal_reset = on_journal_reset
        #: The last offset this driver-side process made (a cache: what it checked a moment ago).
        self._planned: Offset | None = None
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

    def _journal_now(self) -> tuple[str | None, list[tuple[int, int]]]:
        """The journal's identity and, per partition, ``(oldest, next)``, read as one: the
        identity before and after the bounds must agree (a cluster restarting meanwhile)."""
        for _ in range(_IDENTITY_ATTEMPTS):
            identity = self.backend.journal_identity(self.structure, self.stored)
            bounds = self.backend.journal_bounds(self.structure, self.stored)
            if self.backend.journal_identity(self.structure, self.stored) == identity:
                return identity, bounds
        raise JournalSequenceError(
            f"source '{self.name}': the journal of {self._subject} changed its identity {_IDENTITY_ATTEMPTS} times "
            "while its bounds were read (a cluster restarting?)"
        )

    # --- driver side -------------------------------------------------------------------------

    def initial_offset(self) -> Offset:
        identity, bounds = self._journal_now()
        which = 0 if self.start == START_FROM_OLDEST else 1
        return self._offset({p: b[which] for p, b in enumerate(bounds)}, identity, bounds)

    def _offset(
        self,
        positions: Mapping[int, int],
        identity: str | None,
        bounds: Sequence[tuple[int, int]],
        begins: Mapping[int, int] | None = None,
    ) -> Offset:
        """``positions`` as an offset marked with the journal's identity and the digest of the
        last event read in the partition read furthest (the one that, kept longest, a later check
        finds); after a reset, with where the new journal is read from (``begins``)."""
        kept = [p for p, at in positions.items() if at > 0 and at - 1 >= bounds[p][0]]
        check = None
        if kept:
            partition = max(kept, key=lambda p: (positions[p], -p))
            digest = self.backend.journal_fingerprint(self.structure, self.stored, partition, positions[partition] - 1)
            check = None if digest is None else (partition, positions[partition] - 1, digest)
        offset: dict[str, Any] = {str(p): at for p, at in sorted(positions.items())}
        mark = JournalMark(
            identity, check, None if begins is None else tuple(begins[p] for p in sorted(begins))
        ).to_json()
        if mark:
            offset[JOURNAL_KEY] = mark
        return offset

    def _split(self, offset: Offset) -> tuple[dict[str, int], JournalMark | None]:
        """The partition entries of ``offset`` (checked) and its journal mark (None: an offset of
        an earlier version, which has none)."""
        owner = f"source '{self.name}' ({self._subject})"
        mark = None
        if isinstance(offset, dict) and JOURNAL_KEY in offset:
            offset = dict(offset)
            mark = JournalMark.from_json(offset.pop(JOURNAL_KEY), owner)
        return self._positions(offset), mark

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

    def _reset(
        self,
        saved: Mapping[str, int],
        mark: JournalMark | None,
        identity: str | None,
        bounds: Sequence[tuple[int, int]],
    ) -> str | None:
        """Why the journal now is not the one ``saved`` and ``mark`` were read from (a message
        naming the partition and the sequences), or None: the same journal, further on."""

        def held(p: int) -> str:
            oldest, nxt = bounds[p]
            return f"holds sequences {oldest}..{nxt - 1}" if nxt > oldest else f"holds no event (next {nxt})"

        if mark is not None and mark.check is not None and mark.check[0] >= len(bounds):
            raise OffsetError(
                f"source '{self.name}': offset entry {JOURNAL_KEY!r} names partition {mark.check[0]}, which "
                f"{self._subject} does not have (0..{len(bounds) - 1}); was the checkpoint edited?"
            )
        if len(saved) != len(bounds) or any(int(p) >= len(bounds) for p in saved):
            return (
                f"the offset has {len(saved)} partitions but {self._subject} has {len(bounds)} (made again with "
                "another partition count, or the checkpoint edited)"
            )
        far = max(saved, key=lambda p: (saved[p], -int(p)), default="0")
        if mark is not None and mark.identity is not None and identity is not None and mark.identity != identity:
            p = mark.check[0] if mark.check is not None else int(far)
            return (
                f"partition {p}: the checkpoint read its journal up to sequence {saved[str(p)]} when it was of "
                f"{mark.identity}, but the journal is now of {identity} and {held(p)}: a new journal (a cluster "
                "restarted without persistence, or the store replaced)"
            )
        for p_text, at in saved.items():
            if at > bounds[int(p_text)][1]:
                return (
                    f"partition {p_text} is at sequence {bounds[int(p_text)][1]}, behind the saved offset {at}: "
                    f"a new journal (the {self.structure} destroyed and made again, a cluster restarted without "
                    "persistence, or the store wiped or replaced)"
                )
        if mark is not None and mark.check is not None:
            p, sequence, digest = mark.check
            if bounds[p][0] <= sequence < bounds[p][1]:
                now = self.backend.journal_fingerprint(self.structure, self.stored, p, sequence)
                if now is not None and now != digest:
                    return (
                        f"partition {p}: the event at sequence {sequence}, the last the checkpoint read there, "
                        f"is not the one it read (the journal {held(p)}): a new journal (the {self.structure} "
                        "destroyed and made again, or the store replaced)"
                    )
        return None

    def _on_reset(self, reason: str, skipped: str = "") -> None:
        """Fail with ``reason``, or (``on_journal_reset="from_oldest"``) warn that the new
        journal is read from its oldest event (and that ``skipped`` reads nothing)."""
        message = f"source '{self.name}': {self._subject} {reason}"
        if self.on_journal_reset == "fail":
            raise JournalSequenceError(
                f"{message}. Reading on at the saved sequences would skip the new journal's first events. "
                "Set on_journal_reset='from_oldest' to read the new journal from its oldest event, or start "
                "the query with a new checkpoint"
            )
        log.warning(
            "%s; %sthe new journal is read from its oldest event, as on_journal_reset='from_oldest' asks",
            message,
            f"{skipped} reads nothing and " if skipped else "",
        )

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        identity, bounds = self._journal_now()
        saved, mark = self._split(start)
        reason = self._reset(saved, mark, identity, bounds)
        if reason is not None:
            self._on_reset(reason)
            begin = {p: oldest for p, (oldest, _) in enumerate(bounds)}
        else:
            begin = {p: self._check_overflow(p, saved[str(p)], oldest) for p, (oldest, _) in enumerate(bounds)}
        backlog = {p: bounds[p][1] - begin[p] for p in begin}
        allowed = share_budget(backlog, max_records) if max_records is not None else backlog
        end = {p: begin[p] + allowed[p] for p in begin}
        if (
            reason is None
            and mark is not None
            and mark.identity == identity
            and mark.begins is None
            and all(end[p] == saved[str(p)] for p in end)
        ):
            offset = start  # nothing moved: the same offset, so that Spark plans no batch
        else:
            offset = self._offset(end, identity, bounds, begin if reason is not None else None)
        self._planned = offset
        return offset

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
        (start, _), (end_positions, mark) = self._split(start), self._split(end)
        if mark is not None and mark.begins is not None:
            # the first micro-batch of a new journal: its start is the old journal's offset
            if len(mark.begins) != len(end_positions):
                raise OffsetError(
                    f"source '{self.name}': {self._subject}: offset entry {JOURNAL_KEY!r} starts "
                    f"{len(mark.begins)} partitions, the offset has {len(end_positions)}; was the checkpoint edited?"
                )
            start = {str(p): at for p, at in enumerate(mark.begins)}
        if set(start) != set(end_positions):
            raise OffsetError(
                f"source '{self.name}': {self._subject}: the micro-batch starts at partitions {sorted(start)} "
                f"and ends at {sorted(end_positions)}; was the checkpoint edited?"
            )
        behind = [p for p in end_positions if end_positions[p] < start[p]]
        if behind:
            p = behind[0]
            raise OffsetError(
                f"source '{self.name}': {self._subject} partition {p}: the micro-batch starts at sequence {start[p]} "
                f"and ends before it, at {end_positions[p]}; was the checkpoint edited?"
            )
        if mark is not None and end != self._planned:
            # a micro-batch this process did not just plan (a restart replays the last one): is
            # the journal still the one it was planned on?
            identity, bounds = self._journal_now()
            reason = self._reset(end_positions, mark, identity, bounds)
            if reason is not None:
                self._on_reset(f"{reason}, in a micro-batch planned before", "that micro-batch")
                return []
        moved = [p for p in end_positions if end_positions[p] != start[p]]
        # each range carries the journal's identity, which its reader checks against the journal it reads
        planned_on = {JOURNAL_KEY: JournalMark(mark.identity).to_json()} if mark and mark.identity else {}
        return [
            Range(
                f"partitions {group[0]}..",
                {**{p: start[p] for p in group}, **planned_on},
                {p: end_positions[p] for p in group},
            )
            for group in spread(moved, self.parallelism)
        ]

    # --- executor side -----------------------------------------------------------------------

    def read_range(self, range_: Range) -> ReadOutput:
        shape = row_shaper(self.schema(), f"source '{self.name}' {self.display_name!r}")
        value_of = self.backend.codec.plain
        columnar = self.predicate is None and self.projection is None and self._columnar()
        (starts, mark), ends = self._split(range_.start), self._positions(range_.end)
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
            if mark is not None and not self._same_journal(mark, group):
                return
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

    def _same_journal(self, mark: JournalMark, group: Mapping[int, tuple[int, int]]) -> bool:
        """Whether the journal just read is still the one the range was planned on (checked after
        each read: a client that reconnected to a restarted cluster reads the new one). If not,
        an error, or (``from_oldest``) False: the range reads nothing more."""
        identity = self.backend.journal_identity(self.structure, self.stored)
        if identity is None or identity == mark.identity:
            return True
        p = min(group)
        self._on_reset(
            f"partition {p}: the micro-batch was planned on the journal of {mark.identity}, but the journal is now "
            f"of {identity}: a new journal (a cluster restarted without persistence, or the store replaced) "
            f"whose events {group[p][0]}..{group[p][1] - 1} are not the ones planned",
            "the rest of this range",
        )
        return False

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
