"""The event journal of a Hazelcast map or cache, in the shape the journal sources read.

``sources.map_journal`` and ``sources.cache_journal`` keep one copy of the journal semantics
(offsets ``{partition: next sequence}``, ``start="oldest"|"current"``, overflow rules, event
filters, row shapes) for both backends; the embedded store hands them each partition's journal
bounds and the raw events of exact ``[start, end)`` ranges. This module hands over the same from
the members' own journals, through :mod:`jetconnect_imap.hz_protocol`:

* :meth:`HazelcastJournal.bounds` — ``(oldest, next)`` per partition (one subscribe per
  partition, all in flight at once): the driver's ``initial_offset`` and ``latest_offset``;
* :meth:`HazelcastJournal.read` — ``{partition: [RawEvent]}`` of exactly the asked ranges, all
  partitions' reads in flight at once: an executor's micro-batch, the same events however often
  it is replayed. Events the ring dropped before they were read are left out and the first kept
  sequence shows the gap, so the source's own overflow rule (fail naming partition and range,
  or skip) decides, as for the embedded store.

Keys and values are handed on as the client decoded them (``hz_values`` says how rows map to
them and how a column shows them, as for the map source), not as the embedded store's JSON text:
a million events read would otherwise be a million ``dumps`` and ``loads`` for nothing.
Hazelcast's journal events carry no time: the ``timestamp`` of a full event row is null.
Event types are Jet's names; those the embedded store has no name for (a map's EXPIRED, MERGED,
LOADED, ...; a cache's EVICTED, ...) are :class:`OtherEventType` members, shown by
``full_events`` but not selectable by ``event_types``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, cast

from jetconnect_imap import hz_protocol
from jetconnect_imap.events import EventType
from jetconnect_imap.hz_client import connect
from jetconnect_imap.store import RawEvent


class OtherEventType(str, enum.Enum):
    """Hazelcast event types outside the embedded store's vocabulary (passed through by name)."""

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


def _other(name: str) -> OtherEventType:
    try:
        return OtherEventType(name)
    except ValueError:
        raise hz_protocol.HazelcastProtocolError(
            f"the journal holds an event of type {name}, which this version of jetconnect does not know"
        ) from None


class HazelcastJournal:
    """The journal of map (or, with ``cache=True``, cache) ``name`` of the cluster ``url``."""

    def __init__(
        self, url: str, name: str, client_config: Mapping[str, Any] | None = None, cache: bool = False
    ) -> None:
        self.url, self.name, self.cache = url, name, cache
        self.client_config = dict(client_config or {})
        self._types = self._event_types(cache)

    @staticmethod
    def _event_types(cache: bool) -> dict[str, enum.Enum]:
        """Hazelcast's type names -> the enum members the sources filter and show."""
        known: list[enum.Enum]
        if cache:
            from jetconnect_imap.cache_connectors import CacheEventType  # it imports the sources: not at the top

            known = list(CacheEventType)
        else:
            known = list(EventType)
        types: dict[str, enum.Enum] = {t.value: t for t in OtherEventType}
        types.update({t.value: t for t in known})
        return types

    @property
    def _client(self) -> Any:
        client = connect(self.url, self.client_config)
        if self.cache:
            hz_protocol.cache_ensure(client, self.name)
        return client

    def bounds(self) -> list[tuple[int, int]]:
        """``(oldest, next)`` of every partition's journal."""
        if self.cache:
            return hz_protocol.cache_journal_bounds(self._client, self.name)
        return hz_protocol.map_journal_bounds(self._client, self.name)

    def read(self, spans: Mapping[int, tuple[int, int]]) -> dict[int, list[RawEvent]]:
        """The events of each partition's ``[start, end)`` still kept, oldest first, as raw
        events (sequence, type, key, old value, new value as the client decoded them, no
        timestamp)."""
        read = hz_protocol.cache_journal_read_ranges if self.cache else hz_protocol.map_journal_read_ranges
        pages = read(self._client, self.name, spans, allow_lost=True)  # the source's overflow rule decides
        types = self._types
        events = {
            partition: [
                (e.sequence, types.get(e.type) or _other(e.type), e.key, e.old_value, e.new_value, None)
                for e in page.events
            ]
            for partition, page in pages.items()
        }
        # a RawEvent's type is the map's enum, its values JSON texts and its time an int; here the
        # cache's enum or OtherEventType, decoded values, and None (the sources read both alike)
        return cast(dict[int, list[RawEvent]], events)

    def __repr__(self) -> str:
        from jetconnect.api import redact_url

        kind = "cache" if self.cache else "map"
        return f"HazelcastJournal({kind} {self.name!r}, {redact_url(self.url)!r})"


__all__ = ["HazelcastJournal", "OtherEventType"]
