"""``sources.cache``, ``sources.cache_journal`` and ``sinks.cache``: Jet's JCache (ICache) family.

These are the map connectors acting on the structure ``cache``; the backends keep what differs:

* on Hazelcast (``store="hazelcast://..."``) a cache is the members' own JCache cache, declared
  in their configuration (``cache:``): the members expire entries by the cache's expiry policy
  and keep its journal. The sink puts with ``Cache.putAll`` (grouped by partition; a replay puts
  the same values again: exactly-once for the cache's content), the source iterates each
  partition with ``Cache.iterateEntries``. JCache has no queries, so a cache takes Python
  predicates and projections only, Spark's filters stay Spark's, and no value may be null;
* on the embedded store a cache is the map ``cache/<name>`` whose values carry their expiry time
  (the sink's ``expiry_s``), read back without it, with JCache's event names in its journal
  (:mod:`jetconnect_imap.embedded.cache_entries`).
"""

from __future__ import annotations

import math
from typing import Any, Unpack

from jetconnect.errors import OptionError
from jetconnect_imap.events import CACHE_PUT_EVENTS, CacheEventType
from jetconnect_imap.journal_source import MapJournalSource
from jetconnect_imap.map_sinks import EntryOptions, MapSink
from jetconnect_imap.map_source import MapSource


def check_expiry(owner: str, expiry_s: float | None) -> float | None:
    """``expiry_s`` if it is None or a positive number of seconds, else an OptionError."""
    if expiry_s is None:
        return None
    if isinstance(expiry_s, bool) or not isinstance(expiry_s, (int, float)) or not (0 < expiry_s < math.inf):
        raise OptionError(f"sink '{owner}': option 'expiry_s' must be a positive number of seconds, got {expiry_s!r}")
    return float(expiry_s)


class CacheSource(MapSource):
    """Every live entry of a cache as ``(key, value)`` rows, or what ``projection(key, value)``
    makes; on the embedded store, entries found expired are skipped and removed (journalled EXPIRED)."""

    name = "cache"
    structure = "cache"

    def push_filters(self, filters: list[Any]) -> list[Any]:
        """None: a cache runs no queries, so Spark keeps every filter."""
        return filters


class CacheJournalSource(MapJournalSource):
    """The change events of one cache, from the oldest kept (or from now) on, forever.

    As Jet's ``Sources.cacheJournal`` by default: the CREATED and UPDATED events, each as the
    entry's key and new value; ``full_events=True`` gives every event whole, under JCache's
    names. Values are unwrapped: the expiry time stays inside the store.
    """

    name = "cache_journal"
    structure = "cache"
    event_names = CacheEventType
    put_events = CACHE_PUT_EVENTS


class CacheSink(MapSink):
    """Puts each row's ``value`` under its ``key`` in a cache (a null value removes the key on the
    embedded store; JCache refuses it); with ``expiry_s`` the entries written expire that many
    seconds after their write (embedded store; on Hazelcast the cache's own expiry policy rules)."""

    name = "cache"
    structure = "cache"

    def __init__(self, name: str, *, expiry_s: float | None = None, **options: Unpack[EntryOptions]) -> None:
        super().__init__(name, **options)
        self.expiry_s = check_expiry(self.name, expiry_s)
        self.backend.check_expiry(f"sink '{self.name}'", self.expiry_s)


__all__ = ["CacheJournalSource", "CacheSink", "CacheSource", "check_expiry"]
