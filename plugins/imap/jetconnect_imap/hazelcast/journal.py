"""The members' event journals of maps and caches: bounds, pages, and exact ranges.

* :func:`bounds` — ``(oldest, next)`` of every partition (one subscribe per partition, all in
  flight at once): a journal source's ``initial_offset`` and ``latest_offset``;
* :func:`read_page` — up to ``max_size`` events of one partition from a sequence;
* :func:`read_ranges` — exactly the events ``[start, end)`` of each partition asked for, every
  partition's reads in flight at once: an executor's micro-batch, the same events however often
  it is replayed.

Lost events are never a silent gap. A Hazelcast 5 member asked for a sequence its ring has
already dropped (capacity or time-to-live) answers from the oldest one it still has; the read
then raises :class:`~jetconnect_imap.errors.JournalEventsLostError` carrying the partition and
the lost range ``[lost_from, lost_to)`` (with ``allow_lost=True`` the page says what was lost,
for a source told to skip). A start past the journal's end (the map was destroyed and recreated,
or a partition lost with its backups) raises :class:`~jetconnect_imap.errors.JournalSequenceError`.
A map or cache without a journal raises :class:`~jetconnect_imap.errors.JournalNotEnabledError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from hazelcast.future import combine_futures

from jetconnect_imap.errors import JournalEventsLostError, JournalSequenceError
from jetconnect_imap.hazelcast.codecs import (
    cache_event_journal_read,
    cache_event_journal_subscribe,
    map_event_journal_read,
    map_event_journal_subscribe,
)
from jetconnect_imap.hazelcast.decoding import EventDecoder, WireEvent
from jetconnect_imap.hazelcast.errors import HazelcastProtocolError
from jetconnect_imap.hazelcast.invocation import check_partition, invoke, result
from jetconnect_imap.hazelcast.iteration import CACHE_PREFIX

#: com.hazelcast.core.EntryEventType: type id -> Jet's name.
MAP_EVENT_TYPES = {
    1: "ADDED",
    2: "REMOVED",
    4: "UPDATED",
    8: "EVICTED",
    16: "EXPIRED",
    32: "EVICT_ALL",
    64: "CLEAR_ALL",
    128: "MERGED",
    256: "INVALIDATION",
    512: "LOADED",
}
#: com.hazelcast.cache.CacheEventType: type id -> name.
CACHE_EVENT_TYPES = {
    1: "CREATED",
    2: "UPDATED",
    3: "REMOVED",
    4: "EXPIRED",
    5: "EVICTED",
    6: "INVALIDATED",
    7: "COMPLETED",
    8: "EXPIRATION_TIME_UPDATED",
    9: "PARTITION_LOST",
}
#: Events one request of a range read asks for at most (a page's answer is held in memory whole).
RANGE_PAGE = 10_000


@dataclass(frozen=True)
class JournalKind:
    """What differs between a map's and a cache's journal: names, codecs, event classes."""

    kind: str
    prefix: str
    subscribe: ModuleType
    read: ModuleType
    #: The events' IdentifiedDataSerializable factory and class ids (read from the hazelcast-5.7.0
    #: jar with javap: MapDataSerializerHook and CacheDataSerializerHook).
    factory_id: int
    class_ids: tuple[int, ...]
    types: Mapping[int, str]


MAP_JOURNAL = JournalKind(
    "map", "", map_event_journal_subscribe, map_event_journal_read, -4, (132, 133), MAP_EVENT_TYPES
)
CACHE_JOURNAL = JournalKind(
    "cache", CACHE_PREFIX, cache_event_journal_subscribe, cache_event_journal_read, -13, (54, 55), CACHE_EVENT_TYPES
)


@dataclass(frozen=True)
class JournalPage:
    """What one journal read brought: ``events`` from the start sequence on (or, when events
    were lost and that was allowed, from the oldest one kept), ``read_count`` of them, and the
    sequence to read from next. ``lost`` is the dropped range ``(from, to)``, end exclusive."""

    read_count: int
    events: list[WireEvent]
    next_sequence: int
    lost: tuple[int, int] | None = None


def _decode_bounds(msg: Any) -> tuple[int, int]:
    response = map_event_journal_subscribe.decode_response(msg)  # the cache's answers alike
    return response["oldest_sequence"], response["newest_sequence"]


def _subscribe_async(client: Any, journal: JournalKind, name: str, partition_id: int) -> Any:
    return invoke(client, journal.subscribe.encode_request(journal.prefix + name), partition_id, _decode_bounds)


def subscribe(client: Any, journal: JournalKind, name: str, partition_id: int) -> tuple[int, int]:
    """``(oldest, newest)`` sequence of ``name``'s journal in ``partition_id`` (``newest = oldest -
    1`` when it keeps none; the next event written gets ``newest + 1``)."""
    check_partition(client, partition_id)
    return result(
        _subscribe_async(client, journal, name, partition_id),
        f"subscribing to the event journal of {journal.kind} '{name}' partition {partition_id}",
    )


def _check_read(start: int, min_size: int, max_size: int) -> None:
    for label, value, low, high in (
        ("start_sequence", start, 0, 2**63),
        ("min_size", min_size, 0, 2**31),
        ("max_size", max_size, 1, 2**31),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
            raise HazelcastProtocolError(f"{label} must be an int from {low}, got {value!r}")
    if min_size > max_size:
        raise HazelcastProtocolError(f"min_size {min_size} is more than max_size {max_size}")


def _read_async(
    client: Any, journal: JournalKind, name: str, partition_id: int, start: int, min_size: int, max_size: int
) -> Any:
    _check_read(start, min_size, max_size)
    # no predicate (every event) and no projection (the whole event)
    request = journal.read.encode_request(journal.prefix + name, start, min_size, max_size, None, None)
    return invoke(client, request, partition_id, journal.read.decode_response)


def _reading(journal: JournalKind, name: str, partition_id: int, start: int) -> str:
    return f"reading the event journal of {journal.kind} '{name}' partition {partition_id} from sequence {start}"


def _page(
    client: Any, journal: JournalKind, name: str, partition_id: int, start: int, raw: dict[str, Any], allow_lost: bool
) -> JournalPage:
    """A read's answer checked against ``start``: lost events and foreign sequences are errors."""
    items, seqs, next_seq = raw["items"], raw["item_seqs"], raw["next_seq"]
    what = _reading(journal, name, partition_id, start)
    if seqs is None:  # no filter: the items are consecutive and end just before next_seq
        seqs = list(range(next_seq - len(items), next_seq))
    # The sequences, not the events' "after lost events" flag, say what was lost: they are exact.
    decode = EventDecoder(client, journal.factory_id, journal.class_ids, journal.types).event
    events = [decode(data, seq) for data, seq in zip(items, seqs)]
    lost = None
    kind = journal.kind
    if seqs:
        first = seqs[0]
        if first < start:
            raise JournalSequenceError(
                f"{what}: the journal answered from sequence {first}, before the one asked for: the sequence "
                f"is past the journal's end, so it is not the journal it came from (the {kind} was destroyed "
                f"and created again, or the partition was lost with its backups)"
            )
        if first > start:
            lost = (start, first)
    else:
        # An empty page says nothing of where the journal is (the member leaves next_seq at 0 when
        # it read nothing): its bounds tell whether the start was dropped, current or past the end.
        oldest, newest = result(_subscribe_async(client, journal, name, partition_id), what)
        if start > newest + 1:
            raise JournalSequenceError(
                f"{what}: the journal ends at sequence {newest} (next {newest + 1}), before the one asked for, "
                f"so it is not the journal the sequence came from (the {kind} was destroyed and created "
                f"again, or the partition was lost with its backups)"
            )
        if start < oldest:
            lost, next_seq = (start, oldest), oldest
        else:
            next_seq = start
    if lost is not None and not allow_lost:
        raise JournalEventsLostError(kind, name, partition_id, *lost)
    return JournalPage(read_count=raw["read_count"], events=events, next_sequence=next_seq, lost=lost)


def read_page(
    client: Any,
    journal: JournalKind,
    name: str,
    partition_id: int,
    start_sequence: int,
    min_size: int,
    max_size: int,
    allow_lost: bool = False,
) -> JournalPage:
    """Up to ``max_size`` events of ``name``'s journal in ``partition_id`` from ``start_sequence``;
    ``min_size`` > 0 makes the member wait until that many exist (up to the client's invocation
    timeout), 0 answers at once with what there is."""
    check_partition(client, partition_id)
    raw = result(
        _read_async(client, journal, name, partition_id, start_sequence, min_size, max_size),
        _reading(journal, name, partition_id, start_sequence),
    )
    return _page(client, journal, name, partition_id, start_sequence, raw, allow_lost)


def bounds(client: Any, journal: JournalKind, name: str) -> list[tuple[int, int]]:
    """For every partition, ``(oldest, next)``: the oldest sequence its journal still keeps and
    the one the next event will get (equal when it keeps none). A source's ``start="oldest"`` is
    the first, ``"current"`` the second."""
    count = client.partition_service.get_partition_count()
    futures = [_subscribe_async(client, journal, name, p) for p in range(count)]
    answers = result(combine_futures(futures), f"reading the event journal bounds of {journal.kind} '{name}'")
    return [(oldest, newest + 1) for oldest, newest in answers]


def event_bytes(client: Any, journal: JournalKind, name: str, partition_id: int, sequence: int) -> bytes | None:
    """The serialised event at ``sequence`` of ``name``'s journal in ``partition_id`` as the
    member keeps it (None: dropped, or not written yet): what tells two journals apart."""
    check_partition(client, partition_id)
    raw = result(
        _read_async(client, journal, name, partition_id, sequence, 0, 1),
        _reading(journal, name, partition_id, sequence),
    )
    items, seqs, next_seq = raw["items"], raw["item_seqs"], raw["next_seq"]
    if not items:
        return None
    first = seqs[0] if seqs else next_seq - len(items)
    return bytes(items[0].buffer) if first == sequence else None


def read_ranges(
    client: Any,
    journal: JournalKind,
    name: str,
    spans: Mapping[int, tuple[int, int]],
    allow_lost: bool = False,
    page_size: int = RANGE_PAGE,
) -> dict[int, JournalPage]:
    """Exactly the events ``[start, end)`` of each partition of ``spans`` (``{partition: (start,
    end)}``, ``end`` at most the journal's next sequence, from :func:`bounds`), ``page_size``
    events a request, every partition's reads in flight at once.

    Events dropped before they were read raise :class:`JournalEventsLostError` naming the
    partition and the range; with ``allow_lost`` the page holds what is left of the range and
    ``lost`` says what was dropped. ``next_sequence`` of each page is the range's end."""
    for partition, (start, end) in spans.items():
        check_partition(client, partition)
        if not 0 <= start <= end:
            raise HazelcastProtocolError(
                f"partition {partition}: the range [{start}, {end}) is not a range of sequences"
            )
    events: dict[int, list[WireEvent]] = {p: [] for p in spans}
    lost: dict[int, tuple[int, int] | None] = {p: None for p in spans}
    at = {p: start for p, (start, _end) in spans.items()}
    while True:
        # one read per partition still short of its end, all in flight at once (a round trip per
        # round, not per partition)
        todo = [p for p in spans if at[p] < spans[p][1]]
        if not todo:
            break
        futures = [_read_async(client, journal, name, p, at[p], 0, min(page_size, spans[p][1] - at[p])) for p in todo]
        answers = result(combine_futures(futures), f"reading the event journal of {journal.kind} '{name}'")
        for p, raw in zip(todo, answers):
            end = spans[p][1]
            page = _page(client, journal, name, p, at[p], raw, allow_lost=True)
            if page.lost is not None:  # of this range, only what lies before its end was asked for
                dropped = (page.lost[0], min(page.lost[1], end))
                if not allow_lost:
                    raise JournalEventsLostError(journal.kind, name, p, *dropped)
                lost[p] = lost[p] or dropped
            kept = [e for e in page.events if e.sequence < end]
            events[p] += kept
            if page.next_sequence <= at[p] and not kept:
                raise JournalSequenceError(
                    f"{_reading(journal, name, p, at[p])}: the journal has no event {at[p]} yet, though the range "
                    f"asked for ends at {end} (a range must end at or before the journal's next sequence)"
                )
            at[p] = max(page.next_sequence, at[p]) if not kept else kept[-1].sequence + 1
    return {
        p: JournalPage(read_count=len(events[p]), events=events[p], next_sequence=spans[p][1], lost=lost[p])
        for p in spans
    }


__all__ = [
    "CACHE_EVENT_TYPES",
    "CACHE_JOURNAL",
    "MAP_EVENT_TYPES",
    "MAP_JOURNAL",
    "RANGE_PAGE",
    "JournalKind",
    "JournalPage",
    "bounds",
    "event_bytes",
    "read_page",
    "read_ranges",
    "subscribe",
]
