"""The factories behind ``sources.*`` and ``sinks.*``, under Jet's names.

Each is its connector's class: its annotated ``__init__`` parameters are also the options of
``spark.read.format("jetconnect.map")`` (jetconnect converts Spark's string options by these
annotations), and the sinks' shared store options are :class:`~jetconnect_imap.map_sinks.StoreOptions`,
so an option is declared once. Functions (predicates, projections, merge functions) and
``client_config`` (any keyword of ``hazelcast.HazelcastClient``) can only be given from Python.
"""

from __future__ import annotations

from jetconnect_imap.cache_connectors import CacheJournalSource, CacheSink, CacheSource
from jetconnect_imap.journal_source import MapJournalSource
from jetconnect_imap.list_connectors import ListSink, ListSource
from jetconnect_imap.map_sinks import MapSink, MapWithEntryProcessorSink, MapWithMergingSink, MapWithUpdatingSink
from jetconnect_imap.map_source import MapSource

map_source = MapSource
map_journal = MapJournalSource
list_source = ListSource
cache_source = CacheSource
cache_journal = CacheJournalSource

map_sink = MapSink
map_with_merging = MapWithMergingSink
map_with_updating = MapWithUpdatingSink
map_with_entry_processor = MapWithEntryProcessorSink
list_sink = ListSink
cache_sink = CacheSink

__all__ = [
    "cache_journal",
    "cache_sink",
    "cache_source",
    "list_sink",
    "list_source",
    "map_journal",
    "map_sink",
    "map_source",
    "map_with_entry_processor",
    "map_with_merging",
    "map_with_updating",
]
