"""The IMap sources and sinks without Spark: offsets, overflow, replayed micro-batches.

They call the connector methods the Spark adapter calls, on a real SQLite store.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

from jetconnect._admission import share_budget
from jetconnect._connector import WriteContext
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect.errors import OffsetError, OptionError, SchemaError
from jetconnect.testing import read_rows
from jetconnect_imap import connect
from jetconnect_imap.canonical_json import dumps
from jetconnect_imap.embedded.serde import partition_of
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import EventType
from jetconnect_imap.factories import (
    cache_sink,
    map_journal,
    map_sink,
    map_source,
    map_with_merging,
)


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path}/imap.db"


def _name() -> str:
    return f"m{uuid.uuid4().hex[:8]}"


def _ctx(partition: int = 0, batch: int | None = 0, query: str | None = "q1") -> WriteContext:
    return WriteContext(partition_id=partition, attempt=0, batch_id=batch, query_id=query, schema=StructType())


def _sequences(offset: dict) -> dict:
    """The partition entries of a journal offset (without its "journal" mark)."""
    return {k: v for k, v in offset.items() if k != "journal"}


def _rows(source, ranges) -> list[tuple]:
    return [row for r in ranges for row in read_rows(source.read_range(r))]


def test_journal_offsets_cover_every_partition_and_replay_exactly(url: str) -> None:
    m = connect(url).map(_name(), partitions=8)
    source = map_journal(m.name, store=url, parallelism=3, full_events=True)
    start = source.initial_offset()
    assert _sequences(start) == {str(p): 0 for p in range(8)}
    m.put_all({i: i for i in range(40)})
    end = source.latest_offset(start, None)
    assert sum(_sequences(end).values()) == 40
    ranges = source.ranges(start, end)
    assert len(ranges) == 3
    first = _rows(source, ranges)
    assert sorted(r[3] for r in first) == sorted(dumps(i) for i in range(40))
    assert _rows(source, source.ranges(start, end)) == first  # the same range, the same rows
    m.put(1, 100)
    later = source.latest_offset(end, None)
    (row,) = _rows(source, source.ranges(end, later))
    assert row[2:6] == ("UPDATED", "1", "1", "100")


def test_the_default_is_jets_put_events_as_key_and_new_value(url: str) -> None:
    m = connect(url).map(_name(), partitions=2)
    m.put("a", 1)
    m.put("a", {"n": 2})
    m.put("b", 3)
    m.remove("b")
    m.evict("a")
    source = map_journal(m.name, store=url)
    assert [f.name for f in source.schema().fields] == ["key", "value"]
    start = source.initial_offset()
    rows = _rows(source, source.ranges(start, source.latest_offset(start, None)))
    assert sorted(rows) == sorted([("a", "1"), ("a", '{"n":2}'), ("b", "3")])  # no REMOVED, no EVICTED
    full = map_journal(m.name, store=url, full_events=True)
    assert sorted(r[2] for r in _rows(full, full.ranges(start, full.latest_offset(start, None)))) == [
        "ADDED",
        "ADDED",
        "EVICTED",
        "REMOVED",
        "UPDATED",
    ]
    decoded = map_journal(m.name, store=url, predicate=lambda e: e.key == "a", schema="key string, value string")
    assert decoded.event_types == {EventType.ADDED, EventType.UPDATED}


def test_start_from_current_skips_history(url: str) -> None:
    m = connect(url).map(_name(), partitions=4)
    m.put_all({i: i for i in range(10)})
    source = map_journal(m.name, store=url, start="current")
    assert source.latest_offset(source.initial_offset(), None) == source.initial_offset()


def test_admission_control_shares_the_budget(url: str) -> None:
    assert share_budget({0: 10, 1: 1, 2: 0}, 5) == {0: 4, 1: 1, 2: 0}
    assert share_budget({0: 3, 1: 3}, 100) == {0: 3, 1: 3}
    m = connect(url).map(_name(), partitions=4)
    m.put_all({i: i for i in range(100)})
    source = map_journal(m.name, store=url)
    start = source.initial_offset()
    end = source.latest_offset(start, 30)
    assert sum(_sequences(end).values()) == 30


def test_overflow_past_the_saved_offset_fails_naming_the_partition(url: str) -> None:
    m = connect(url).map(_name(), partitions=1, journal_capacity=5)
    source = map_journal(m.name, store=url, full_events=True)
    start = source.initial_offset()
    for i in range(8):
        m.put(i, i)
    with pytest.raises(OffsetError, match=r"partition 0 lost events 0\.\.2"):
        source.latest_offset(start, None)
    skipping = map_journal(m.name, store=url, on_overflow="skip", full_events=True)
    end = skipping.latest_offset(start, None)
    assert [r[1] for r in _rows(skipping, skipping.ranges(start, end))] == [3, 4, 5, 6, 7]


def test_event_types_predicate_and_projection(url: str) -> None:
    m = connect(url).map(_name(), partitions=2)
    m.put("a", 1)
    m.put("a", 2)
    m.remove("a")
    source = map_journal(
        m.name,
        store=url,
        event_types=["updated", "REMOVED"],
        predicate=lambda e: e.old_value is not None,
        projection=lambda e: (e.type.value, e.old_value),
        schema="type string, old long",
    )
    rows = _rows(source, source.ranges(source.initial_offset(), source.latest_offset(source.initial_offset(), None)))
    assert rows == [("UPDATED", 1), ("REMOVED", 2)]
    with pytest.raises(OptionError, match="unknown event type 'PUT'"):
        map_journal(m.name, store=url, event_types=["PUT"])
    with pytest.raises(OptionError, match="'start'"):
        map_journal(m.name, store=url, start="newest")


def test_map_source_splits_partitions_and_applies_predicate(url: str) -> None:
    m = connect(url).map(_name(), partitions=10)
    m.put_all({i: {"n": i} for i in range(50)})
    source = map_source(m.name, store=url, predicate=lambda k, v: v["n"] % 2 == 0, parallelism=3)
    splits = source.splits()
    assert sorted(p for s in splits for p in s) == list(range(10)) and len(splits) == 3
    rows = [row for s in splits for row in read_rows(source.read_split(s))]
    assert sorted(rows) == sorted((dumps(i), dumps({"n": i})) for i in range(0, 50, 2))


def _batch(pairs) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{"key": k, "value": v} for k, v in pairs])


def test_map_sink_skips_a_redelivered_micro_batch(url: str) -> None:
    name = _name()
    sink = map_sink(name, store=url, partitions=4)
    report = sink.write_partition(iter([_batch([("a", 1), ("b", 2)])]), _ctx(batch=0))
    assert not report.replayed
    again = sink.write_partition(iter([_batch([("a", 1), ("b", 2)])]), _ctx(batch=0))
    assert again.replayed
    sink.write_partition(iter([_batch([("a", None)])]), _ctx(batch=1))
    m = connect(url).map(name)
    assert m.to_dict() == {"b": 2}
    assert [e.type.value for e in m.journal(partition_of(dumps("a"), 4))] == ["ADDED", "REMOVED"]


@pytest.mark.parametrize(
    ("keys", "values"),
    [
        pytest.param(pa.array([-1, 0, 2**62], pa.int64()), pa.array([5, None, -7], pa.int8()), id="integers"),
        pytest.param(pa.array([2**64 - 1, 0], pa.uint64()), pa.array([1.5, None]), id="uint64-and-floats"),
        pytest.param(
            pa.array(['qu"ote', "back\\slash", "caf\u00e9 \U0001f600", "%@..\n"]),
            pa.array(["a", "", None, "\x00"], pa.large_string()),
            id="strings",
        ),
        pytest.param(pa.array([None, "null", "x"]), pa.array(["none", "text", "x"]), id="null-key"),
        pytest.param(pa.array([True, False]), pa.array([[1, 2], []]), id="bools-and-lists"),
    ],
)
def test_the_sink_stores_each_column_as_dumps_stores_its_values(url: str, keys: pa.Array, values: pa.Array) -> None:
    # The sink encodes whole Arrow columns at once: it must store exactly what a put of each
    # Python value stores, or a key written by Spark would not be found by the client's get.
    name = _name()
    batch = pa.RecordBatch.from_arrays([keys, values], names=["key", "value"])
    map_sink(name, store=url, partitions=8).write_partition(iter([batch]), _ctx(batch=None, query=None))
    expected = {k: v for k, v in zip(keys.to_pylist(), values.to_pylist(), strict=True) if v is not None}
    m = connect(url).map(name)
    assert m.to_dict() == expected
    for key, value in expected.items():
        assert m.get(key) == value


def test_without_a_value_column_the_other_columns_are_the_value(url: str) -> None:
    name = _name()
    both = pa.RecordBatch.from_pydict({"key": ["a", "b"], "x": [1, None], "y": ["p", "q"]})
    alone = pa.RecordBatch.from_pydict({"key": ["c"]})
    sink = map_sink(name, store=url)
    sink.write_partition(iter([both]), _ctx(batch=None, query=None))
    sink.write_partition(iter([alone]), _ctx(batch=None, query=None))
    assert connect(url).map(name).to_dict() == {"a": {"x": 1, "y": "p"}, "b": {"x": None, "y": "q"}, "c": {}}


def test_the_progress_record_is_query_slash_partition_as_stores_already_hold_it(url: str) -> None:
    """Built from ``ctx.key`` now, the record must keep the format older writes left: a record
    ``q1/2 -> 5`` written before makes batch 5 of Spark partition 2 a replay, and batch 6 not."""
    import sqlite3

    name = _name()
    sink = map_sink(name, store=url, partitions=4)
    sink.write_partition(iter([_batch([("x", 0)])]), _ctx(partition=0, batch=0))  # creates the map
    path = url.removeprefix("sqlite:///")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT writer, batch FROM progress WHERE owner = ?", (f"map:{name}",)).fetchall() == [
            ("q1/0", 0)
        ]
        db.execute("INSERT INTO progress VALUES (?, ?, ?)", (f"map:{name}", "q1/2", 5))
    assert sink.write_partition(iter([_batch([("a", 1)])]), _ctx(partition=2, batch=5)).replayed
    assert not sink.write_partition(iter([_batch([("a", 1)])]), _ctx(partition=2, batch=6)).replayed
    assert connect(url).map(name).to_dict() == {"x": 0, "a": 1}


def test_merging_sink_merges_within_and_across_batches_once(url: str) -> None:
    name = _name()
    sink = map_with_merging(
        name, key_fn=lambda r: r["key"], value_fn=lambda r: r["value"], merge_fn=lambda old, new: old + new, store=url
    )
    batch = _batch([("a", 1), ("a", 2), ("b", 5)])
    sink.write_partition(iter([batch]), _ctx(batch=3))
    sink.write_partition(iter([batch]), _ctx(batch=3))  # re-delivered: skipped
    sink.write_partition(iter([batch]), _ctx(partition=1, batch=3))  # another task: counted
    assert connect(url).map(name).to_dict() == {"a": 6, "b": 10}


def test_map_sink_names_a_missing_key_column(url: str) -> None:
    from pyspark.sql.types import LongType, StructField

    with pytest.raises(SchemaError, match="no column 'key'"):
        map_sink(_name(), store=url).check_schema(StructType([StructField("id", LongType())]))


@pytest.mark.parametrize(
    "projection, complaint",
    [
        (lambda k, v: {"key": k, "nn": v["n"]}, r"item \{'key': 1, 'nn': 1\} has no 'n'"),
        (lambda k, v: (k,), r"item \(1,\) has 1 values for the schema's 2 columns"),
        (lambda k, v: (k, v["n"], "extra"), r"item \(1, 1, 'extra'\) has 3 values"),
    ],
)
def test_a_projection_that_does_not_fit_the_schema_fails_naming_the_map_and_item(
    url: str, projection, complaint
) -> None:
    from jetconnect.errors import SourceError

    m = connect(url).map(_name(), partitions=1)
    m.put_all({1: {"n": 1}})
    source = map_source(m.name, store=url, projection=projection, schema="key long, n long")
    with pytest.raises(SourceError, match=f"source 'map' '{m.name}': {complaint}"):
        [row for s in source.splits() for row in read_rows(source.read_split(s))]


def test_a_projection_may_leave_fields_out_of_a_dict(url: str) -> None:
    m = connect(url).map(_name(), partitions=1)
    m.put_all({1: {"n": 1, "other": 2}})
    source = map_source(m.name, store=url, projection=lambda k, v: {"key": k, **v}, schema="key long, n long")
    assert [row for s in source.splits() for row in read_rows(source.read_split(s))] == [(1, 1)]


def test_a_projection_that_returns_none_filters_the_entry_out(url: str) -> None:
    """Jet's rule for every mapping function: None leaves the item out, never a row of NULLs."""
    m = connect(url).map(_name(), partitions=2)
    m.put_all({"a": 1, "b": 2, "c": 3})
    source = map_source(m.name, store=url, projection=lambda k, v: None if v == 2 else k)
    assert sorted(row for s in source.splits() for row in read_rows(source.read_split(s))) == [("a",), ("c",)]
    journal = map_journal(m.name, store=url, projection=lambda e: None if e.new_value == 2 else e.key)
    start = journal.initial_offset()
    assert sorted(_rows(journal, journal.ranges(start, journal.latest_offset(start, None)))) == [("a",), ("c",)]


def test_names_and_list_values_are_checked_whole(url: str) -> None:
    with pytest.raises(StoreError, match="must be letters"):
        connect(url).map("orders\n")
    items = connect(url).list(_name())
    for careless in ("abc", b"abc", {"a": 1}):
        with pytest.raises(StoreError, match="takes a collection"):
            items.add_all(careless)
    items.add_all(["abc"])
    assert items.to_list() == ["abc"]


def test_spark_options_reach_the_classes_typed_and_a_positional_store_is_refused(url: str) -> None:
    """The classes are the factories: Spark's text converts by their annotations, the sinks'
    shared store options included, and a store given where the key column now stands fails
    loudly instead of naming a column after a URL."""
    journal = call_with_options(
        map_journal, Options({"name": _name(), "store": url, "event_types": "updated,REMOVED"}), "source 'map_journal'"
    )
    assert journal.event_types == {EventType.UPDATED, EventType.REMOVED}
    sink = call_with_options(
        map_sink, Options({"name": _name(), "store": url, "chunk_rows": "7", "journal_ttl": "2.5"}), "sink 'map'"
    )
    assert (sink.chunk_rows, sink.layout.journal_ttl if sink.layout else None) == (7, 2.5)
    with pytest.raises(OptionError, match="chunk_rows"):
        call_with_options(map_sink, Options({"name": "m", "store": url, "chunk_rows": "0"}), "sink 'map'")
    with pytest.raises(TypeError):
        map_sink("m", url)  # the mistake under test: store is keyword-only


@pytest.mark.parametrize(("option", "value"), [("partitions", "0"), ("partitions", "-1"), ("journal_capacity", "-5")])
def test_a_layout_option_out_of_range_is_refused_naming_the_sink(url: str, option: str, value: str) -> None:
    """``partitions=0`` used to become the default 271 silently; now it, like -1, is an option error."""
    with pytest.raises(OptionError, match=rf"sink 'map'.*{option}"):
        call_with_options(map_sink, Options({"name": "m", "store": url, option: value}), "sink 'map'")
    with pytest.raises(OptionError, match=rf"sink 'cache'.*{option}"):
        cache_sink("c", store=url, **{option: int(value)})


def test_a_source_keeps_the_schema_spark_settled_for_its_readers(tmp_path) -> None:
    """Spark settles a read's schema on the driver; the reader made there hands it to the source,
    so that no executor learns it from the data again (and maybe otherwise)."""
    from pyspark.sql.types import LongType, StructField

    from jetconnect.spark._readers import BatchReader

    settled = StructType([StructField("key", LongType()), StructField("value", LongType())])
    source = map_source("m", store=f"sqlite:///{tmp_path}/imap.db")
    BatchReader(source, settled)
    assert source.schema() is settled
    given = map_source("m", store=f"sqlite:///{tmp_path}/imap.db", schema="key string, value string")
    BatchReader(given, settled)
    assert given.schema().simpleString() == "struct<key:string,value:string>"  # a given schema stands
