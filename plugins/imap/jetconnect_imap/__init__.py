"""jetconnect's IMap family: a partitioned map with an event journal, and a list, over SQLite
(embedded, the default) or Redis; usable from plain Python and as Spark sources and sinks.

``connect(url).map("name")`` is the Python API; ``sources.map / map_journal / list`` and
``sinks.map / map_with_merging / map_with_updating / map_with_entry_processor / list`` are the
connectors, with JCache's ``sources.cache / cache_journal`` and ``sinks.cache`` (registered by
:mod:`jetconnect_imap.plugin`).
"""

from __future__ import annotations

from jetconnect_imap.client import Grid, IList, IMap, connect
from jetconnect_imap.events import EventType, JournalEvent
from jetconnect_imap.store import MapConfig, StoreError

__all__ = ["EventType", "Grid", "IList", "IMap", "JournalEvent", "MapConfig", "StoreError", "connect"]
