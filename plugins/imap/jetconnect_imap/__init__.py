"""jetconnect's IMap family: Hazelcast's partitioned map with its event journal, the ICache and
the IList, as Spark sources and sinks, on a Hazelcast cluster or on an embedded SQLite store.

The connectors (registered by :mod:`jetconnect_imap.plugin`) are ``sources.map / map_journal /
cache / cache_journal / list`` and ``sinks.map / map_with_merging / map_with_updating /
map_with_entry_processor / cache / list``; each acts on a :class:`~jetconnect_imap.backend.Backend`
(:mod:`jetconnect_imap.embedded` or :mod:`jetconnect_imap.hazelcast`). ``connect(url).map("name")``
is the embedded store's plain Python API.
"""

from __future__ import annotations

from jetconnect_imap.backend import MapConfig
from jetconnect_imap.embedded.grid import Grid, IList, IMap, connect
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import EventType, JournalEvent

__all__ = ["EventType", "Grid", "IList", "IMap", "JournalEvent", "MapConfig", "StoreError", "connect"]
