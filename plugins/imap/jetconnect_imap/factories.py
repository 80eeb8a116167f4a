"""The factories behind ``sources.*`` and ``sinks.*``: Jet's names, annotated so that Spark's
string options (``spark.read.format("jetconnect.map").option("name", ...)``) convert.

Functions (predicates, projections, merge functions) and ``client_config`` (any keyword of
``hazelcast.HazelcastClient``) can only be given from Python; ``store`` is a string option too.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jetconnect_imap.cache_connectors import CacheJournalSource, CacheSink, CacheSource
from jetconnect_imap.journal_source import MapJournalSource
from jetconnect_imap.list_connectors import ListSink, ListSource
from jetconnect_imap.map_sinks import (
    DEFAULT_CHUNK_ROWS,
    MapSink,
    MapWithEntryProcessorSink,
    MapWithMergingSink,
    MapWithUpdatingSink,
)
from jetconnect_imap.map_source import MapSource


def map_source(
    name: str,
    store: str | None = None,
    predicate: Callable[[Any, Any], bool] | None = None,
    projection: Callable[[Any, Any], Any] | None = None,
    schema: str | None = None,
    parallelism: int = 4,
    client_config: Mapping[str, Any] | None = None,
) -> MapSource:
    """Read every entry of map ``name`` (batch); ``predicate(key, value)``, ``projection(key, value)``."""
    return MapSource(
        map_name=name,
        store=store,
        predicate=predicate,
        projection=projection,
        schema=schema,
        parallelism=parallelism,
        client_config=client_config,
    )


def map_journal(
    name: str,
    store: str | None = None,
    start: str = "oldest",
    predicate: Callable[..., bool] | None = None,
    projection: Callable[..., Any] | None = None,
    event_types: list[str] | None = None,
    on_overflow: str = "fail",
    schema: str | None = None,
    parallelism: int = 4,
    full_events: bool = False,
    client_config: Mapping[str, Any] | None = None,
) -> MapJournalSource:
    """Stream the event journal of map ``name`` from the ``oldest`` kept event or the ``current`` end:
    as Jet, ADDED and UPDATED events as ``(key, value)``; ``full_events=True`` for every event, whole."""
    return MapJournalSource(
        map_name=name,
        store=store,
        start=start,
        predicate=predicate,
        projection=projection,
        event_types=event_types,
        on_overflow=on_overflow,
        schema=schema,
        parallelism=parallelism,
        full_events=full_events,
        client_config=client_config,
    )


def list_source(
    name: str, store: str | None = None, schema: str | None = None, client_config: Mapping[str, Any] | None = None
) -> ListSource:
    """Read the items of list ``name`` (one partition)."""
    return ListSource(list_name=name, store=store, schema=schema, client_config=client_config)


def map_sink(
    name: str,
    store: str | None = None,
    key_column: str = "key",
    value_column: str = "value",
    partitions: int | None = None,
    journal_capacity: int | None = None,
    journal_ttl: float | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    client_config: Mapping[str, Any] | None = None,
) -> MapSink:
    """Put rows into map ``name`` (``key`` -> ``value``; a null value removes the key), ``chunk_rows`` at a time."""
    return MapSink(
        map_name=name,
        store=store,
        key_column=key_column,
        value_column=value_column,
        partitions=partitions,
        journal_capacity=journal_capacity,
        journal_ttl=journal_ttl,
        chunk_rows=chunk_rows,
        client_config=client_config,
    )


def map_with_merging(
    name: str,
    key_fn: Callable[..., Any],
    value_fn: Callable[..., Any],
    merge_fn: Callable[[Any, Any], Any],
    store: str | None = None,
    partitions: int | None = None,
    journal_capacity: int | None = None,
    journal_ttl: float | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    client_config: Mapping[str, Any] | None = None,
) -> MapWithMergingSink:
    """Merge ``value_fn(row)`` into the entry at ``key_fn(row)`` with ``merge_fn(old, new)``."""
    return MapWithMergingSink(
        map_name=name,
        key_fn=key_fn,
        value_fn=value_fn,
        merge_fn=merge_fn,
        store=store,
        partitions=partitions,
        journal_capacity=journal_capacity,
        journal_ttl=journal_ttl,
        chunk_rows=chunk_rows,
        client_config=client_config,
    )


def map_with_updating(
    name: str,
    key_fn: Callable[..., Any],
    update_fn: Callable[[Any, Any], Any],
    store: str | None = None,
    partitions: int | None = None,
    journal_capacity: int | None = None,
    journal_ttl: float | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    client_config: Mapping[str, Any] | None = None,
) -> MapWithUpdatingSink:
    """Set the entry at ``key_fn(row)`` to ``update_fn(old, row)`` (None removes it)."""
    return MapWithUpdatingSink(
        map_name=name,
        key_fn=key_fn,
        update_fn=update_fn,
        store=store,
        partitions=partitions,
        journal_capacity=journal_capacity,
        journal_ttl=journal_ttl,
        chunk_rows=chunk_rows,
        client_config=client_config,
    )


def map_with_entry_processor(
    name: str,
    key_fn: Callable[..., Any],
    processor_fn: Callable[..., Any],
    store: str | None = None,
    partitions: int | None = None,
    journal_capacity: int | None = None,
    journal_ttl: float | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    client_config: Mapping[str, Any] | None = None,
) -> MapWithEntryProcessorSink:
    """Run ``processor_fn(entry)`` on the entry at ``key_fn(row)``; it may set ``entry.value``."""
    return MapWithEntryProcessorSink(
        map_name=name,
        key_fn=key_fn,
        processor_fn=processor_fn,
        store=store,
        partitions=partitions,
        journal_capacity=journal_capacity,
        journal_ttl=journal_ttl,
        chunk_rows=chunk_rows,
        client_config=client_config,
    )


def list_sink(
    name: str,
    store: str | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    client_config: Mapping[str, Any] | None = None,
) -> ListSink:
    """Append rows to list ``name``, ``chunk_rows`` at a time."""
    return ListSink(list_name=name, store=store, chunk_rows=chunk_rows, client_config=client_config)


def cache_source(
    name: str,
    store: str | None = None,
    predicate: Callable[[Any, Any], bool] | None = None,
    projection: Callable[[Any, Any], Any] | None = None,
    schema: str | None = None,
    parallelism: int = 4,
    client_config: Mapping[str, Any] | None = None,
) -> CacheSource:
    """Read every live entry of cache ``name`` (batch), skipping and expiring the expired ones."""
    return CacheSource(
        map_name=name,
        store=store,
        predicate=predicate,
        projection=projection,
        schema=schema,
        parallelism=parallelism,
        client_config=client_config,
    )


def cache_journal(
    name: str,
    store: str | None = None,
    start: str = "oldest",
    predicate: Callable[..., bool] | None = None,
    projection: Callable[..., Any] | None = None,
    event_types: list[str] | None = None,
    on_overflow: str = "fail",
    schema: str | None = None,
    parallelism: int = 4,
    full_events: bool = False,
    client_config: Mapping[str, Any] | None = None,
) -> CacheJournalSource:
    """Stream the event journal of cache ``name``: as Jet, CREATED and UPDATED events as
    ``(key, value)``; ``full_events=True`` for every event (CREATED, UPDATED, REMOVED, EXPIRED), whole."""
    return CacheJournalSource(
        map_name=name,
        store=store,
        start=start,
        predicate=predicate,
        projection=projection,
        event_types=event_types,
        on_overflow=on_overflow,
        schema=schema,
        parallelism=parallelism,
        full_events=full_events,
        client_config=client_config,
    )


def cache_sink(
    name: str,
    store: str | None = None,
    key_column: str = "key",
    value_column: str = "value",
    partitions: int | None = None,
    journal_capacity: int | None = None,
    journal_ttl: float | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    expiry_s: float | None = None,
    client_config: Mapping[str, Any] | None = None,
) -> CacheSink:
    """Put rows into cache ``name`` (a null value removes the key); with ``expiry_s`` they expire
    that many seconds after being written."""
    return CacheSink(
        cache_name=name,
        store=store,
        key_column=key_column,
        value_column=value_column,
        partitions=partitions,
        journal_capacity=journal_capacity,
        journal_ttl=journal_ttl,
        chunk_rows=chunk_rows,
        expiry_s=expiry_s,
        client_config=client_config,
    )
