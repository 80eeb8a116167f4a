"""JCache on the embedded store: a cache is the map ``cache/<name>`` whose values carry the time
they expire, and whose journal speaks JCache's event names.

* **expiry**: every stored value is ``[expires_ms,value]`` (0: never), set by the sink's
  ``expiry_s``. Reads skip expired entries and remove them, each only if it still holds what was
  found expired, which the journal shows as EXPIRED.
* **events**: the journal's ADDED, UPDATED, REMOVED and EVICTED read as JCache's CREATED, UPDATED,
  REMOVED and EXPIRED; a put over an entry that had expired is CREATED (it no longer existed), a
  removal of one EXPIRED.

(On Hazelcast a cache is the members' own JCache cache, which expires entries and keeps its
journal itself: none of this applies there.)
"""

from __future__ import annotations

import enum
import time
from collections.abc import Iterator
from typing import Any

from jetconnect_imap.backend import MapConfig
from jetconnect_imap.embedded.sqlite_store import Change, SqliteStore
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import CacheEventType, EventType, RawEvent

#: The expiry time of an entry that never expires.
NEVER = 0

_AS_CACHE_EVENT: dict[enum.Enum, enum.Enum] = {
    EventType.ADDED: CacheEventType.CREATED,
    EventType.UPDATED: CacheEventType.UPDATED,
    EventType.REMOVED: CacheEventType.REMOVED,
    EventType.EVICTED: CacheEventType.EXPIRED,  # a cache's entries leave early only by expiring
}


def now_ms() -> int:
    return int(time.time() * 1000)


def expiry_time(expiry_s: float | None) -> int:
    """When an entry written now with ``expiry_s`` expires (ms since the epoch; NEVER for None)."""
    return NEVER if expiry_s is None else now_ms() + max(1, round(expiry_s * 1000))


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


def expired(expires_ms: int, at_ms: int) -> bool:
    return expires_ms != NEVER and expires_ms <= at_ms


def expire(store: SqliteStore, name: str, config: MapConfig, partition: int, found: dict[str, str]) -> None:
    """Remove the entries of ``partition`` found expired (serialised key -> stored value), each
    only if it still holds that value: a newer write wins, and of readers that found the same
    entry expired only the first removes it, so the journal gets one EXPIRED event for it."""

    def compute(_partition: int, current: Any) -> list[Change]:
        return [Change(k, None, evict=True) for k, stored in found.items() if current.get(k) == stored]

    store.update(name, config, {partition: list(found)}, compute)


def live_entries(store: SqliteStore, stored_name: str, partition: int, shown: str) -> Iterator[tuple[str, str]]:
    """The live ``(key, value JSON)`` entries of one partition of a cache, values unwrapped;
    the expired ones found are removed once the partition is read."""
    at = now_ms()
    found: dict[str, str] = {}
    for key, stored in store.scan(stored_name, partition):
        expires, value = unwrap(stored, shown)
        if expired(expires, at):
            found[key] = stored
        else:
            yield key, value
    if found:
        expire(store, stored_name, store.map_config(stored_name), partition, found)


def as_cache_event(event: RawEvent, shown: str) -> RawEvent:
    """A map journal event of a cache's stored map as the cache's own event (values unwrapped)."""
    seq, kind, key, old, new, ts = event
    old_expires, old_value = unwrap(old, shown) if old is not None else (NEVER, None)
    new_value = unwrap(new, shown)[1] if new is not None else None
    cache_kind: Any = _AS_CACHE_EVENT.get(kind, kind)  # CLEARED: caches have no clear
    if old is not None and ts is not None and expired(old_expires, ts):
        # The entry had expired before this change: for JCache it no longer existed.
        if kind is EventType.UPDATED:
            cache_kind, old_value = CacheEventType.CREATED, None
        elif kind in (EventType.REMOVED, EventType.EVICTED):
            cache_kind = CacheEventType.EXPIRED
    return (seq, cache_kind, key, old_value, new_value, ts)


__all__ = ["NEVER", "as_cache_event", "expire", "expired", "expiry_time", "live_entries", "now_ms", "unwrap", "wrap"]
