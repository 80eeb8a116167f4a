"""Property-based tests (Hypothesis, bounded) of the IMap connectors' contracts, on the embedded store:

* what ``sinks.map`` wrote, ``sources.map`` reads back equal: hostile keys (empty, Unicode,
  glob and hash-tag characters, very long), values of every supported type, and nulls
  (a null value removes the key);
* the journal source reads the same range twice the same, in one go or in admission-controlled
  steps, and the events are exactly the changes made.

They call the connector methods the Spark adapter calls (``write_partition``, ``read_split``,
``latest_offset``, ``read_range``), without Spark, so each example costs milliseconds.
"""

from __future__ import annotations

import datetime as dt
import math
import uuid
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.types import StructType

from jetconnect._connector import WriteContext
from jetconnect.testing import read_rows
from jetconnect_imap import connect
from jetconnect_imap.canonical_json import dumps
from jetconnect_imap.embedded.serde import partition_of
from jetconnect_imap.factories import map_journal, map_sink, map_source

ALL_STORES = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
# Bounded: each test adds seconds per store, not minutes. The store URL is the same for every
# example (each example uses a map of its own), so function-scoped fixtures are fine.
BOUNDED = settings(
    max_examples=30,
    deadline=dt.timedelta(seconds=20),
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

HOSTILE = [
    "",
    " ",
    ":",
    "{",
    "}",
    "{}",
    "}{",
    "*",
    "?",
    "[a-z]",
    "\\",
    '"',
    "'",
    "%41",
    "\x00",
    "\n",
    "{imap:m:0}",
    "jc:{imap:m:0}:entries",
    "null",
    "\u202etxt",
    "\U0001f600",
    "é",
    "e\u0301",
    "\ufeff",
]
KEYS = st.one_of(
    st.sampled_from(HOSTILE),
    st.text(max_size=12),
    st.text(alphabet=":{}*?[]\\\"'%\x00", max_size=8),
    st.builds(lambda c, n: c * n, st.sampled_from(["k", "{", "\U0001f600", ":"]), st.integers(1_000, 60_000)),
)

_UTC = dt.UTC
# (arrow type, Spark type it is read back as, values, how a value reads back)
VALUE_TYPES: dict[str, tuple[pa.DataType, str, st.SearchStrategy[Any], Any]] = {
    "long": (pa.int64(), "long", st.integers(-(2**63), 2**63 - 1), lambda v: v),
    "double": (pa.float64(), "double", st.floats(), lambda v: v),
    "boolean": (pa.bool_(), "boolean", st.booleans(), lambda v: v),
    "string": (pa.string(), "string", st.one_of(st.sampled_from(HOSTILE), st.text()), lambda v: v),
    "array": (
        pa.list_(pa.int64()),
        "array<long>",
        st.lists(st.none() | st.integers(-(2**63), 2**63 - 1), max_size=5),
        lambda v: v,
    ),
    "struct": (
        pa.struct([("a", pa.string()), ("b", pa.int64())]),
        "struct<a:string,b:long>",
        st.fixed_dictionaries({"a": st.none() | st.text(max_size=5), "b": st.none() | st.integers(-9, 9)}),
        lambda v: v,
    ),
    # JSON has no dates, timestamps, decimals or bytes: they are stored as text (README), and a
    # string column reads that text back.
    "date": (pa.date32(), "string", st.dates(), lambda v: v.isoformat()),
    "timestamp": (
        pa.timestamp("us", tz="UTC"),
        "string",
        st.datetimes(min_value=dt.datetime(1, 1, 2), timezones=st.just(_UTC)),
        lambda v: v.isoformat(),
    ),
    "decimal": (
        pa.decimal128(12, 3),
        "string",
        st.decimals(min_value=-(10**8), max_value=10**8, places=3, allow_nan=False),
        lambda v: str(v),
    ),
    "binary": (pa.binary(), "string", st.binary(max_size=20), lambda v: v.hex()),
}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


@st.composite
def writes(draw) -> tuple[str, list[tuple[str | None, Any]]]:
    kind = draw(st.sampled_from(sorted(VALUE_TYPES)))
    values = VALUE_TYPES[kind][2]
    pairs = draw(st.lists(st.tuples(st.none() | KEYS, st.none() | values), min_size=1, max_size=25))
    return kind, pairs


def _map_name(draw_prefix: str) -> str:
    return f"{draw_prefix}{uuid.uuid4().hex[:8]}"


@ALL_STORES
def test_what_the_map_sink_wrote_the_map_source_reads_back_equal(store_url) -> None:
    @BOUNDED
    @given(writes(), st.sampled_from(["p.", "a:b-", "x_"]), st.integers(1, 7), st.booleans())
    def check(written, prefix, chunk_rows, streaming) -> None:
        kind, pairs = written
        arrow_type, spark_type, _values, read_back = VALUE_TYPES[kind]
        name = _map_name(prefix)
        batch = pa.RecordBatch.from_arrays(
            [pa.array([k for k, _ in pairs], pa.string()), pa.array([v for _, v in pairs], arrow_type)],
            names=["key", "value"],
        )
        ctx = WriteContext(
            partition_id=0,
            attempt=0,
            batch_id=0 if streaming else None,
            query_id="q" if streaming else None,
            schema=StructType(),
        )
        map_sink(name, store=store_url, partitions=4, chunk_rows=chunk_rows).write_partition(iter([batch]), ctx)

        expected: dict[str | None, Any] = {}
        for row in batch.to_pylist():  # what Spark hands the sink, in order
            key, value = row["key"], row["value"]
            if value is None:
                expected.pop(key, None)  # a null value removes the key
            else:
                expected[key] = read_back(value)
        source = map_source(name, store=store_url, schema=f"key string, value {spark_type}", parallelism=3)
        rows = [row for split in source.splits() for row in read_rows(source.read_split(split))]
        assert len(rows) == len(expected)
        got = dict(rows)
        assert set(got) == set(expected)
        for key, value in expected.items():
            assert _same(got[key], value), (key, got[key], value)

    check()


JSON = st.recursive(
    st.booleans()
    | st.integers(-(2**63), 2**63)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(HOSTILE),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("put"), KEYS, JSON),
        st.tuples(st.just("remove"), KEYS),
        st.tuples(st.just("evict"), KEYS),
        st.just(("clear",)),
    ),
    min_size=1,
    max_size=30,
)


@ALL_STORES
def test_the_journal_replays_a_range_the_same_and_holds_exactly_the_changes(store_url) -> None:
    @BOUNDED
    @given(OPS, st.integers(1, 40), st.integers(1, 4))
    def check(ops, step, parallelism) -> None:
        partitions = 3
        m = connect(store_url).map(_map_name("j"), partitions=partitions, journal_capacity=3_000)
        model: dict[str, Any] = {}
        expected: dict[int, list[tuple]] = {p: [] for p in range(partitions)}
        for op in ops:
            if op[0] == "clear":
                m.clear()
                model.clear()
                for p in range(partitions):
                    expected[p].append(("CLEARED", None, None, None))
                continue
            key = op[1]
            p = partition_of(dumps(key), partitions)
            old = model.get(key)
            if op[0] == "put":
                m.put(key, op[2])
                expected[p].append(("ADDED" if key not in model else "UPDATED", key, old, op[2]))
                model[key] = op[2]
            else:
                (m.remove if op[0] == "remove" else m.evict)(key)
                if key in model:
                    expected[p].append(("REMOVED" if op[0] == "remove" else "EVICTED", key, old, None))
                    del model[key]

        source = map_journal(
            m.name,
            store=store_url,
            parallelism=parallelism,
            full_events=True,
            projection=lambda e: (
                e.partition,
                e.sequence,
                e.type.value,
                dumps(e.key),
                dumps(e.old_value),
                dumps(e.new_value),
            ),
            schema="partition int, sequence long, type string, key string, old string, new string",
        )
        start = source.initial_offset()
        end = source.latest_offset(start, None)
        once = [row for r in source.ranges(start, end) for row in read_rows(source.read_range(r))]
        assert [row for r in source.ranges(start, end) for row in read_rows(source.read_range(r))] == once

        def sequences(offset: dict) -> dict:  # the partition entries, without the "journal" mark
            return {k: v for k, v in offset.items() if k != "journal"}

        stepped, offset = [], start  # the same events, admitted `step` at a time
        while sequences(offset) != sequences(end):
            nxt = source.latest_offset(offset, step)
            assert sum(sequences(nxt).values()) - sum(sequences(offset).values()) <= step
            stepped += [row for r in source.ranges(offset, nxt) for row in read_rows(source.read_range(r))]
            offset = nxt
        assert sorted(stepped) == sorted(once)

        for p in range(partitions):
            events = [row[1:] for row in sorted(once) if row[0] == p]
            assert [seq for seq, *_ in events] == list(range(len(expected[p])))
            assert [tuple(rest) for _seq, *rest in events] == [
                (t, dumps(k), dumps(o), dumps(n)) for t, k, o, n in expected[p]
            ]
        assert m.to_dict() == model

    check()


#: Every type a map sink writes, read back by the same schema (key string, value <type>): the
#: JSON text of bytes, dates, timestamps and decimals inside a struct, a map, or on the embedded
#: store reads back as those values again, and a map is a JSON object (what a member reads).
SAME_TYPE: dict[str, tuple[pa.DataType, str, st.SearchStrategy[Any]]] = {
    "long": (pa.int64(), "long", st.integers(-(2**63), 2**63 - 1)),
    "double": (pa.float64(), "double", st.floats(allow_nan=False)),
    "boolean": (pa.bool_(), "boolean", st.booleans()),
    "string": (pa.string(), "string", st.one_of(st.sampled_from(HOSTILE), st.text())),
    "date": (pa.date32(), "date", st.dates()),
    "timestamp": (
        pa.timestamp("us", tz="UTC"),
        "timestamp",
        st.datetimes(min_value=dt.datetime(1, 1, 2), timezones=st.just(_UTC)),
    ),
    "decimal": (
        pa.decimal128(12, 3),
        "decimal(12,3)",
        st.decimals(min_value=-(10**8), max_value=10**8, places=3, allow_nan=False),
    ),
    "binary": (pa.binary(), "binary", st.binary(max_size=20)),
    "map": (
        pa.map_(pa.string(), pa.int64()),
        "map<string,long>",
        st.dictionaries(st.text(max_size=6), st.none() | st.integers(-9, 9), max_size=4),
    ),
    "struct": (
        pa.struct(
            [
                ("b", pa.binary()),
                ("t", pa.timestamp("us", tz="UTC")),
                ("d", pa.decimal128(10, 2)),
                ("day", pa.date32()),
                ("m", pa.map_(pa.string(), pa.string())),
            ]
        ),
        "struct<b:binary,t:timestamp,d:decimal(10,2),day:date,m:map<string,string>>",
        st.fixed_dictionaries(
            {
                "b": st.none() | st.binary(max_size=6),
                "t": st.none() | st.datetimes(min_value=dt.datetime(1, 1, 2), timezones=st.just(_UTC)),
                "d": st.none() | st.decimals(min_value=-(10**6), max_value=10**6, places=2, allow_nan=False),
                "day": st.none() | st.dates(),
                "m": st.none() | st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3),
            }
        ),
    ),
    "array": (
        pa.list_(pa.decimal128(6, 1)),
        "array<decimal(6,1)>",
        st.lists(st.none() | st.decimals(min_value=-999, max_value=999, places=1, allow_nan=False), max_size=4),
    ),
}


def _arrow_value(kind: str, value: Any) -> Any:
    """A drawn value as Arrow takes it (a map as its entries)."""
    if value is None:
        return None
    if kind == "map":
        return list(value.items())
    if kind == "struct" and value["m"] is not None:
        return {**value, "m": list(value["m"].items())}
    return value


@pytest.mark.parametrize("store_url", ["sqlite", "hazelcast"], indirect=True)
def test_what_the_map_sink_writes_its_own_schema_reads_back_exactly(store_url) -> None:
    @BOUNDED
    @given(st.sampled_from(sorted(SAME_TYPE)), st.data())
    def check(kind, data) -> None:
        arrow_type, spark_type, values = SAME_TYPE[kind]
        keys = st.text(min_size=1, max_size=12)  # Hazelcast refuses null keys; both take any text
        pairs = data.draw(st.lists(st.tuples(keys, values), min_size=1, max_size=12, unique_by=lambda p: p[0]))
        name = _map_name("same-")
        batch = pa.RecordBatch.from_arrays(
            [
                pa.array([k for k, _ in pairs], pa.string()),
                pa.array([_arrow_value(kind, v) for _, v in pairs], arrow_type),
            ],
            names=["key", "value"],
        )
        ctx = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=StructType())
        map_sink(name, store=store_url).write_partition(iter([batch]), ctx)
        source = map_source(name, store=store_url, schema=f"key string, value {spark_type}", parallelism=2)
        got = dict(row for split in source.splits() for row in read_rows(source.read_split(split)))
        want = {k: v for k, v in pairs}
        if kind == "map":
            got = {k: None if v is None else dict(v) for k, v in got.items()}
        if kind == "struct":
            got = {
                k: None if v is None else {**v, "m": None if v["m"] is None else dict(v["m"])} for k, v in got.items()
            }
        assert got == want

    check()


@pytest.mark.parametrize("store_url", ["sqlite", "hazelcast"], indirect=True)
def test_a_map_with_keys_json_cannot_hold_is_refused_before_anything_is_written(store_url) -> None:
    from jetconnect.errors import SinkError

    name = _map_name("intkeys-")
    batch = pa.RecordBatch.from_arrays(
        [pa.array(["k"]), pa.array([[(1, "a")]], pa.map_(pa.int64(), pa.string()))], names=["key", "value"]
    )
    ctx = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=StructType())
    with pytest.raises((SinkError, Exception), match="column 'value' is a map with int64 keys"):
        map_sink(name, store=store_url).write_partition(iter([batch]), ctx)
    source = map_source(name, store=store_url)
    assert [row for split in source.splits() for row in read_rows(source.read_split(split))] == []
