"""Registers the IMap family's sources and sinks (and the ICache family's) with jetconnect."""

from __future__ import annotations

from jetconnect import hookimpl
from jetconnect_imap import factories as f


@hookimpl
def register_sources(register):
    register(f.map_source, name="map")
    register(f.map_journal, name="map_journal")
    register(f.list_source, name="list")
    register(f.cache_source, name="cache")
    register(f.cache_journal, name="cache_journal")


@hookimpl
def register_sinks(register):
    # Exactly-once per micro-batch from a replayable source: a progress record per
    # (query, Spark partition) is written atomically with the data (see map_sinks.py).
    register(f.map_sink, name="map")
    register(f.map_with_merging, name="map_with_merging")
    register(f.map_with_updating, name="map_with_updating")
    register(f.map_with_entry_processor, name="map_with_entry_processor")
    register(f.list_sink, name="list")
    # JCache's family: Jet has no merging, updating or entry-processor sink for ICache.
    register(f.cache_sink, name="cache")
