"""The ICache family without Spark: what the cache sink writes the cache source reads back, the
journal speaks JCache's event names, entries expire, and a cache never shares a map's name.

They call the connector methods the Spark adapter calls, on a real SQLite store.
"""

from __future__ import annotations

import time
import uuid

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

from jetconnect._connector import WriteContext
from jetconnect._registry import get_registry
from jetconnect.errors import OptionError, SourceError
from jetconnect.testing import read_rows
from jetconnect_imap import connect
from jetconnect_imap.embedded.cache_entries import expire
from jetconnect_imap.embedded.sqlite_store import open_store
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import CacheEventType
from jetconnect_imap.factories import cache_journal, cache_sink, cache_source, map_journal, map_sink, map_source


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/imap.db"


def _name() -> str:
    return f"c{uuid.uuid4().hex[:8]}"


def _ctx(partition: int = 0, batch: int | None = 0, query: str | None = "q1") -> WriteContext:
    return WriteContext(partition_id=partition, attempt=0, batch_id=batch, query_id=query, schema=StructType())


def _batch(pairs) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{"key": k, "value": v} for k, v in pairs])


def _write(sink, pairs, batch: int | None = None) -> None:
    """One task writing ``pairs``, each in a record batch of its own (so values may differ in type)."""
    sink.write_partition(
        iter([_batch([pair]) for pair in pairs]), _ctx(batch=batch, query=None if batch is None else "q1")
    )


def _read(source) -> list[tuple]:
    return sorted(row for split in source.splits() for row in read_rows(source.read_split(split)))


def _journal(source) -> list[tuple]:
    start = source.initial_offset()
    end = source.latest_offset(start, None)
    return [row for r in source.ranges(start, end) for row in read_rows(source.read_range(r))]


def test_the_cache_source_reads_back_what_the_cache_sink_wrote(url: str) -> None:
    name = _name()
    sink = cache_sink(name, store=url, partitions=8)
    _write(sink, [("a", 1), ("b", {"n": 2}), ("c", "three")])
    _write(sink, [("c", None)])  # a null value removes the key, as for the map sink
    assert _read(cache_source(name, store=url)) == [("a", "1"), ("b", '{"n":2}')]
    typed = cache_source(name, store=url, predicate=lambda k, v: k != "b", schema="key string, value long")
    assert _read(typed) == [("a", 1)]
    projected = cache_source(name, store=url, projection=lambda k, v: f"{k}={v}")
    assert _read(projected) == [("a=1",), ("b={'n': 2}",)]


def test_a_redelivered_micro_batch_is_skipped(url: str) -> None:
    name = _name()
    sink = cache_sink(name, store=url, partitions=4)
    assert not sink.write_partition(iter([_batch([("a", 1)])]), _ctx(batch=0)).replayed
    assert sink.write_partition(iter([_batch([("a", 1)])]), _ctx(batch=0)).replayed
    assert len(_journal(cache_journal(name, store=url))) == 1


def test_a_map_and_a_cache_of_the_same_name_are_apart(url: str) -> None:
    name = _name()
    map_sink(name, store=url, partitions=4).write_partition(iter([_batch([("k", "in the map")])]), _ctx(batch=0))
    cache_sink(name, store=url, partitions=2).write_partition(iter([_batch([("k", "in the cache")])]), _ctx(batch=0))
    assert _read(map_source(name, store=url)) == [("k", "in the map")]
    assert _read(cache_source(name, store=url)) == [("k", "in the cache")]
    # each journal holds its own one event; the layouts differ (4 and 2 partitions) without conflict
    assert _journal(map_journal(name, store=url)) == [("k", "in the map")]
    assert _journal(cache_journal(name, store=url)) == [("k", "in the cache")]
    # the same writer id and batch were claimed once per structure, not once for both
    assert connect(url).map(name).to_dict() == {"k": "in the map"}
    with pytest.raises(StoreError, match="map name 'cache/"):
        connect(url).map(f"cache/{name}")  # the cache's stored name is no map's


def test_the_journal_default_is_jets_cache_put_events_as_key_and_new_value(url: str) -> None:
    name = _name()
    sink = cache_sink(name, store=url, partitions=2)
    _write(sink, [("a", 1), ("b", 2)])
    _write(sink, [("a", {"n": 2}), ("b", None)])
    source = cache_journal(name, store=url)
    assert [f.name for f in source.schema().fields] == ["key", "value"]
    assert source.event_types == {CacheEventType.CREATED, CacheEventType.UPDATED}
    assert sorted(_journal(source)) == [("a", "1"), ("a", '{"n":2}'), ("b", "2")]  # no REMOVED

    full = _journal(cache_journal(name, store=url, full_events=True))
    assert sorted((r[2], r[3], r[4], r[5]) for r in full) == [
        ("CREATED", "a", None, "1"),
        ("CREATED", "b", None, "2"),
        ("REMOVED", "b", "2", None),  # values are unwrapped: the expiry time stays in the store
        ("UPDATED", "a", "1", '{"n":2}'),
    ]
    removed = cache_journal(
        name,
        store=url,
        event_types=["removed"],
        projection=lambda e: (e.type.value, e.old_value),
        schema="type string, old long",
    )
    assert _journal(removed) == [("REMOVED", 2)]


def test_entries_expire_on_read_and_the_journal_says_expired(url: str) -> None:
    name = _name()
    sink = cache_sink(name, store=url, partitions=2, expiry_s=0.2)
    _write(sink, [("short", 1)])
    _write(cache_sink(name, store=url), [("forever", 2)])
    assert _read(cache_source(name, store=url)) == [("forever", "2"), ("short", "1")]
    time.sleep(0.3)
    assert _read(cache_source(name, store=url)) == [("forever", "2")]
    assert _read(cache_source(name, store=url)) == [("forever", "2")]  # removed once, not again
    events = [(r[2], r[3], r[4]) for r in _journal(cache_journal(name, store=url, full_events=True))]
    assert sorted(events) == [("CREATED", "forever", None), ("CREATED", "short", None), ("EXPIRED", "short", "1")]
    assert open_store(url).size(f"cache/{name}") == 1  # the expired entry left the store


def test_a_write_over_an_expired_entry_creates_it_and_a_removal_expires_it(url: str) -> None:
    name = _name()
    _write(cache_sink(name, store=url, partitions=1, expiry_s=0.1), [("a", 1), ("b", 2)])
    time.sleep(0.2)  # both expired, neither read since: still in the store
    _write(cache_sink(name, store=url), [("a", 10), ("b", None)])
    events = [(r[2], r[3], r[4], r[5]) for r in _journal(cache_journal(name, store=url, full_events=True))]
    assert events == [
        ("CREATED", "a", None, "1"),
        ("CREATED", "b", None, "2"),
        ("CREATED", "a", None, "10"),
        ("EXPIRED", "b", "2", None),
    ]
    assert _read(cache_source(name, store=url)) == [("a", "10")]


def test_a_newer_write_is_not_expired_by_a_reader_that_saw_the_old_value(url: str) -> None:
    name = _name()
    _write(cache_sink(name, store=url, partitions=1, expiry_s=0.05), [("a", 1)])
    time.sleep(0.1)
    store = open_store(url)
    config = store.map_config(f"cache/{name}")
    ((key, seen),) = store.scan(f"cache/{name}", 0)  # what a reader found expired
    _write(cache_sink(name, store=url), [("a", 2)])  # lands between the reader's scan and its removal
    expire(store, f"cache/{name}", config, 0, {key: seen})
    assert _read(cache_source(name, store=url)) == [("a", "2")]
    kinds = [r[2] for r in _journal(cache_journal(name, store=url, full_events=True))]
    assert kinds == ["CREATED", "CREATED"]  # the put over the expired entry; no EXPIRED: nothing removed


def test_options_are_checked(url: str) -> None:
    for bad in (0, -1.0, float("inf"), True, "soon"):
        with pytest.raises(OptionError, match="sink 'cache': option 'expiry_s' must be a positive number"):
            cache_sink(_name(), store=url, expiry_s=bad)
    with pytest.raises(
        OptionError,
        match=r"source 'cache_journal': option 'event_types': unknown event type 'ADDED' "
        r"\(known: CREATED, UPDATED, REMOVED, EXPIRED\)",
    ):
        cache_journal(_name(), store=url, event_types=["ADDED"])
    with pytest.raises(OptionError, match="source 'cache_journal': option 'start'"):
        cache_journal(_name(), store=url, start="newest")
    with pytest.raises(StoreError, match="cache name 'a/b'"):
        cache_source("a/b", store=url)


def test_errors_name_the_cache_not_its_stored_name(url: str) -> None:
    from jetconnect.errors import OffsetError

    name = _name()
    _write(cache_sink(name, store=url, partitions=1, journal_capacity=2), [("a", 1)])
    source = cache_journal(name, store=url)
    start = source.initial_offset()
    _write(cache_sink(name, store=url), [("b", 2), ("c", 3), ("d", 4)])
    with pytest.raises(OffsetError, match=f"source 'cache_journal': cache '{name}' partition 0 lost events 0..1"):
        source.latest_offset(start, None)
    bad = cache_source(name, store=url, projection=lambda k, v: (k,), schema="key string, value long")
    with pytest.raises(SourceError, match=f"source 'cache' '{name}': item"):
        _read(bad)
    assert repr(cache_sink(name, store=url)) == f"CacheSink('{name}', store='{url}')"


def test_the_cache_family_is_registered_without_read_modify_write_sinks() -> None:
    registry = get_registry()
    assert {"cache", "cache_journal"} <= set(registry.sources)
    assert "cache" in registry.sinks
    assert not [n for n in registry.sinks if n.startswith("cache_with")]
