"""The event journal's vocabulary, shared by both backends and both journal sources: the event
types of maps and caches, the event a predicate or projection sees, and the raw event a backend
hands a journal source."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

_E = TypeVar("_E", bound=enum.Enum)


class EventType(str, enum.Enum):
    """What happened to a map entry (Hazelcast's ``EntryEventType`` names)."""

    ADDED = "ADDED"
    UPDATED = "UPDATED"
    REMOVED = "REMOVED"
    EVICTED = "EVICTED"
    #: ``clear()``: one event per partition, with no key.
    CLEARED = "CLEARED"

    @classmethod
    def parse(cls, names: Iterable[str | EventType], owner: str = "event_types") -> frozenset[EventType]:
        """Event types from names such as ``"ADDED"`` (any case); unknown names raise ValueError."""
        return parse_event_types(cls, names, owner)


class CacheEventType(str, enum.Enum):
    """What happened to a cache entry (JCache's ``EventType`` names)."""

    CREATED = "CREATED"
    UPDATED = "UPDATED"
    REMOVED = "REMOVED"
    EXPIRED = "EXPIRED"

    @classmethod
    def parse(cls, names: Iterable[str | EventType], owner: str = "event_types") -> frozenset[CacheEventType]:
        """The same parsing as the map's event names (any case, unknown names listed), for these."""
        return parse_event_types(cls, names, owner)


class OtherEventType(str, enum.Enum):
    """Hazelcast event types outside the two enums above (a map's EXPIRED, MERGED, LOADED, ...;
    a cache's EVICTED, ...): shown by ``full_events`` under their names, not selectable by
    ``event_types``."""

    EXPIRED = "EXPIRED"
    EVICTED = "EVICTED"
    EVICT_ALL = "EVICT_ALL"
    CLEAR_ALL = "CLEAR_ALL"
    MERGED = "MERGED"
    INVALIDATION = "INVALIDATION"
    LOADED = "LOADED"
    INVALIDATED = "INVALIDATED"
    COMPLETED = "COMPLETED"
    EXPIRATION_TIME_UPDATED = "EXPIRATION_TIME_UPDATED"
    PARTITION_LOST = "PARTITION_LOST"


#: Jet's ``mapPutEvents()`` and ``cachePutEvents()``: what the journal sources emit by default.
MAP_PUT_EVENTS = (EventType.ADDED, EventType.UPDATED)
CACHE_PUT_EVENTS = (CacheEventType.CREATED, CacheEventType.UPDATED)


def parse_event_types(kinds: type[_E], names: Iterable[str | enum.Enum], owner: str = "event_types") -> frozenset[_E]:
    """Members of the event enum ``kinds`` (the map's or the cache's) from names such as
    ``"ADDED"`` (any case); unknown names raise ValueError listing the known ones."""
    out: set[_E] = set()
    for name in names:
        try:
            out.add(kinds(str(name.value if isinstance(name, enum.Enum) else name).strip().upper()))
        except ValueError:
            known = ", ".join(t.value for t in kinds)
            raise ValueError(f"{owner}: unknown event type {name!r} (known: {known})") from None
    return frozenset(out)


@dataclass(frozen=True)
class JournalEvent:
    """One change of an entry, as its journal recorded it (values as plain Python values): what a
    journal source's ``predicate(event)`` and ``projection(event)`` get."""

    partition: int
    sequence: int
    type: enum.Enum
    key: Any
    old_value: Any
    new_value: Any
    #: When the change was made, in milliseconds since the epoch (None: not recorded).
    timestamp_ms: int | None


#: A journal event as a backend hands it over: sequence, type (a member of one of the enums
#: above), key, old value, new value, each in the backend's stored form (its
#: :class:`~jetconnect_imap.backend.ValueCodec` decodes them), and the time in ms (or None).
RawEvent = tuple[int, enum.Enum, Any, Any, Any, "int | None"]

__all__ = [
    "CACHE_PUT_EVENTS",
    "MAP_PUT_EVENTS",
    "CacheEventType",
    "EventType",
    "JournalEvent",
    "OtherEventType",
    "RawEvent",
    "parse_event_types",
]
