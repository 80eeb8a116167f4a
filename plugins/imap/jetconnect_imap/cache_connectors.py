"""``sources.cache``, ``sources.cache_journal`` and ``sinks.cache``: Jet's JCache (ICache) family.

A cache is a map kept under a name of its own in the store (``cache/<name>``, which no map
name can be), so it has the map's partitions, its atomic journal and its exactly-once sink;
these classes are the map connectors with JCache's differences:

* **expiry**: every stored value carries the time it expires, ``[expires_ms,value]`` (0: never),
  set by the sink's ``expiry_s``. Reads skip expired entries and remove them, each only if it
  still holds what was found expired, which the journal shows as EXPIRED. The envelope needs
  nothing of the stores, so SQLite, Redis and a Redis Cluster expire alike.
* **events**: the journal speaks JCache's names, CREATED, UPDATED, REMOVED and EXPIRED; a put
  over an entry that had expired is CREATED (it no longer existed), a removal of one EXPIRED.

On Hazelcast (``store="hazelcast://..."``) a cache is the members' own JCache cache, declared in
their configuration (``cache:``): the members expire entries by the cache's expiry policy and
keep its journal, so none of the above applies there. The sink puts with ``Cache.putAll``
(grouped by partition; a replay puts the same values again: exactly-once for the cache's
content), the source iterates each partition with ``Cache.iterateEntries``. JCache has no
queries, so a cache takes Python predicates and projections only, and no null values.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Unpack

import pyarrow as pa

from jetconnect.api import ReadOutput
from jetconnect.errors import OptionError
from jetconnect_imap.events import Change, EventType, parse_event_types
from jetconnect_imap.hz_store import HazelcastStore
from jetconnect_imap.hz_values import ValueMappingError, to_hazelcast
from jetconnect_imap.journal_source import MapJournalSource
from jetconnect_imap.map_sinks import MapSink, StoreOptions
from jetconnect_imap.map_source import MapSource
from jetconnect_imap.pushdown import is_member_side
from jetconnect_imap.serde import dumps_column
from jetconnect_imap.store import MapConfig, RawEvent, Store, StoreError, cache_store_name, open_store

#: The expiry time of an entry that never expires.
NEVER = 0


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


#: Jet's ``cachePutEvents()``: what ``cache_journal`` emits unless asked otherwise.
CACHE_PUT_EVENTS = (CacheEventType.CREATED, CacheEventType.UPDATED)
_AS_CACHE_EVENT = {
    EventType.ADDED: CacheEventType.CREATED,
    EventType.UPDATED: CacheEventType.UPDATED,
    EventType.REMOVED: CacheEventType.REMOVED,
    EventType.EVICTED: CacheEventType.EXPIRED,  # a cache's entries leave early only by expiring
}


def _now_ms() -> int:
    return int(time.time() * 1000)


def wrap(value_text: str, expires_ms: int) -> str:
    """The stored form of a cache value: its expiry time (ms since the epoch, 0: never) and its
    JSON text, itself JSON: ``[1717171717000,{"qty":2}]``."""
    return f"[{expires_ms},{value_text}]"


def unwrap(stored: str, name: str = "") -> tuple[int, str]:
    """``(expires_ms, value JSON text)`` of a stored cache value, cut without parsing the value."""
    comma = stored.find(",")
    try:
        if stored[:1] != "[" or stored[-1:] != "]" or comma < 0:
            raise ValueError(stored[:40])
        return int(stored[1:comma]), stored[comma + 1 : -1]
    except ValueError:
        raise StoreError(f"cache '{name}' holds a value not written as a cache entry: {stored[:80]!r}") from None


def _expired(expires_ms: int, now_ms: int) -> bool:
    return expires_ms != NEVER and expires_ms <= now_ms


def check_expiry(owner: str, expiry_s: float | None) -> float | None:
    """``expiry_s`` if it is None or a positive number of seconds, else an OptionError."""
    if expiry_s is None:
        return None
    if isinstance(expiry_s, bool) or not isinstance(expiry_s, (int, float)) or not (0 < expiry_s < math.inf):
        raise OptionError(f"sink '{owner}': option 'expiry_s' must be a positive number of seconds, got {expiry_s!r}")
    return float(expiry_s)


def expire(store: Store, name: str, config: MapConfig, partition: int, found: dict[str, str]) -> None:
    """Remove the entries of ``partition`` found expired (serialised key -> stored value), each
    only if it still holds that value: a newer write wins, and of readers that found the same
    entry expired only the first removes it, so the journal gets one EXPIRED event for it."""

    def compute(_partition: int, current: Any) -> list[Change]:
        return [Change(k, None, evict=True) for k, stored in found.items() if current.get(k) == stored]

    store.update(name, config, {partition: list(found)}, compute)


class CacheSource(MapSource):
    """Every live entry of a cache as ``(key, value)`` rows, or what ``projection(key, value)``
    makes; entries found expired are skipped and removed (journalled EXPIRED)."""

    name = "cache"
    _stored_name = staticmethod(cache_store_name)

    def read_split(self, split: list[int]) -> ReadOutput:
        if self.on_hazelcast:
            if is_member_side(self.predicate) or is_member_side(self.projection):
                raise OptionError(
                    f"source '{self.name}': a JCache cache has no queries; give a Python predicate or projection"
                )
            return self._guarded(self._read_hazelcast(split))
        store = open_store(self.store_url)
        return self._read(self._live_scan(store), split)

    def _scan_hazelcast(self, store: HazelcastStore, partition: int) -> list[tuple[Any, Any]]:
        return store.cache_scan(self.map_name, partition)

    def _live_scan(self, store: Store) -> Callable[[str, int], Iterator[tuple[str, str]]]:
        """A ``scan`` giving live entries with their values unwrapped, expiring the others."""
        configs: dict[str, MapConfig] = {}

        def scan(name: str, partition: int) -> Iterator[tuple[str, str]]:
            now = _now_ms()
            found: dict[str, str] = {}
            for key, stored in store.scan(name, partition):
                expires, value = unwrap(stored, self.display_name)
                if _expired(expires, now):
                    found[key] = stored
                else:
                    yield key, value
            if found:
                if name not in configs:
                    configs[name] = store.map_config(name)
                expire(store, name, configs[name], partition, found)

        return scan


class CacheJournalSource(MapJournalSource):
    """The change events of one cache, from the oldest kept (or from now) on, forever.

    As Jet's ``Sources.cacheJournal`` by default: the CREATED and UPDATED events, each as the
    entry's key and new value; ``full_events=True`` gives every event whole, under JCache's
    names. Values are unwrapped: the expiry time stays inside the store.
    """

    name = "cache_journal"
    kind = "cache"
    event_names = CacheEventType
    put_events = CACHE_PUT_EVENTS
    _stored_name = staticmethod(cache_store_name)

    def _read_events(self, store: Store | None, spans: dict[int, tuple[int, int]]) -> dict[int, list[RawEvent]]:
        if store is None:  # Hazelcast: the members' cache journal already speaks JCache's names
            return super()._read_events(store, spans)
        return {
            p: [self._as_cache_event(event) for event in events]
            for p, events in super()._read_events(store, spans).items()
        }

    def _as_cache_event(self, event: RawEvent) -> RawEvent:
        seq, kind, key, old, new, ts = event
        old_expires, old_value = unwrap(old, self.display_name) if old is not None else (NEVER, None)
        new_value = unwrap(new, self.display_name)[1] if new is not None else None
        cache_kind: Any = _AS_CACHE_EVENT.get(kind, kind)  # CLEARED cannot happen: caches have no clear
        if old is not None and _expired(old_expires, ts):
            # The entry had expired before this change: for JCache it no longer existed.
            if kind is EventType.UPDATED:
                cache_kind, old_value = CacheEventType.CREATED, None
            elif kind in (EventType.REMOVED, EventType.EVICTED):
                cache_kind = CacheEventType.EXPIRED
        return (seq, cache_kind, key, old_value, new_value, ts)


class CacheSink(MapSink):
    """Puts each row's ``value`` under its ``key`` in a cache (a null value removes the key);
    with ``expiry_s`` the entries written expire that many seconds after their write."""

    name = "cache"
    kind = "cache"
    _stored_name = staticmethod(cache_store_name)
    bulk_put = False  # Cache.putAll, and nulls refused: each value goes through _to_member_value

    def __init__(
        self,
        name: str,
        *,
        key_column: str = "key",
        value_column: str = "value",
        expiry_s: float | None = None,
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(name, key_column=key_column, value_column=value_column, **store_options)
        self.expiry_s = check_expiry(self.name, expiry_s)
        if self.on_hazelcast and self.expiry_s is not None:
            raise OptionError(
                f"sink '{self.name}': on Hazelcast a cache's entries expire by the expiry policy of its "
                "configuration on the members, not by expiry_s"
            )

    def _to_member_value(self, value: Any, column: str) -> Any:
        if value is None:
            raise ValueMappingError(f"column '{column}': a null value; JCache refuses nulls (and removals by null)")
        return to_hazelcast(value, column)

    def _put_hazelcast(self, store: HazelcastStore, entries: list[tuple[Any, Any]]) -> int:
        store.cache_put(self.map_name, entries)
        return len(entries)

    def _value_encoder(self) -> Callable[[pa.Array], list[str | None]]:
        # One expiry time per chunk: the chunk is written in one store call right after.
        expires = NEVER if self.expiry_s is None else _now_ms() + max(1, round(self.expiry_s * 1000))
        return lambda column: [None if text is None else wrap(text, expires) for text in dumps_column(column)]
