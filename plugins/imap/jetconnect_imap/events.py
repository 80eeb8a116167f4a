"""The event journal's vocabulary: event types, journal events, and the changes that make them."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

_E = TypeVar("_E", bound=enum.Enum)


class EventType(str, enum.Enum):
    """What happened to an entry (Hazelcast's ``EntryEventType`` names)."""

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


def parse_event_types(kinds: type[_E], names: Iterable[str | EventType], owner: str = "event_types") -> frozenset[_E]:
    """Members of the event enum ``kinds`` (the map's or the cache's) from names such as
    ``"ADDED"`` (any case); unknown names raise ValueError listing the known ones."""
    out: set[_E] = set()
    for name in names:
        try:
            out.add(kinds(str(name.value if isinstance(name, EventType) else name).strip().upper()))
        except ValueError:
            known = ", ".join(t.value for t in kinds)
            raise ValueError(f"{owner}: unknown event type {name!r} (known: {known})") from None
    return frozenset(out)


@dataclass(frozen=True)
class JournalEvent:
    """One change of a map entry, as its journal recorded it (values already deserialised)."""

    partition: int
    sequence: int
    type: EventType
    key: Any
    old_value: Any
    new_value: Any
    #: When the change was made, in milliseconds since the epoch.
    timestamp_ms: int


class Change(NamedTuple):
    """A change to apply to one entry: put ``value`` (serialised), or remove it when None.

    ``evict`` marks a removal as an eviction (journal type EVICTED instead of REMOVED). A named
    tuple rather than a dataclass: a sink makes one per row, and a tuple is made in half the time.
    """

    key: str
    value: str | None
    evict: bool = False
