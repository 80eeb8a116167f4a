"""The IMap, IList and ICache connectors as clients of the 3-member cluster of
scripts/servers/hazelcast.sh, through the shared SparkSession, with the official
hazelcast-python-client on the other side: what it writes jetconnect reads exactly, and the
reverse, with the types every Hazelcast client reads (never a Python pickle).
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow as pa
import pytest
from hazelcast.core import HazelcastJsonValue
from hazelcast.predicate import equal, greater, sql
from hazelcast.projection import single_attribute
from pyspark.sql.types import StructType

from jetconnect import sinks, sources
from jetconnect._connector import WriteContext
from jetconnect.testing import read_rows
from jetconnect_imap.factories import map_sink, map_source

from .conftest import HAZELCAST_URL

BATCH = WriteContext(partition_id=0, attempt=0, batch_id=None, query_id=None, schema=StructType())


def _plain(value: Any) -> Any:
    return value.loads() if isinstance(value, HazelcastJsonValue) else value


def test_what_jetconnect_writes_the_official_client_reads_as_java_types(spark, hz, name) -> None:
    target = name("written")
    df = spark.createDataFrame(
        [
            (f"k{i}", i * 3_000_000_000, i / 4, i % 2 == 0, bytes([i % 256, 7]), {"qty": i, "tag": f"t{i}"})
            for i in range(500)
        ],
        "key string, big long, ratio double, even boolean, raw binary, doc struct<qty:long,tag:string>",
    )
    sinks.map(f"{target}-doc", store=HAZELCAST_URL, value_column="doc").write(df)
    batch = pa.RecordBatch.from_pylist([r.asDict() for r in df.drop("doc").collect()])
    for column in ("big", "ratio", "even", "raw"):  # what a task of such a write does, without a job each
        map_sink(f"{target}-{column}", store=HAZELCAST_URL, value_column=column).write_partition(iter([batch]), BATCH)
    # the value of each row is a long past 2^31, a double, a boolean, a byte[] and a JSON value
    assert hz.get_map(f"{target}-big").blocking().get("k499") == 499 * 3_000_000_000
    assert hz.get_map(f"{target}-ratio").blocking().get("k3") == 0.75
    assert hz.get_map(f"{target}-even").blocking().get("k4") is True
    assert hz.get_map(f"{target}-raw").blocking().get("k9") == bytearray([9, 7])
    doc = hz.get_map(f"{target}-doc").blocking().get("k5")
    assert isinstance(doc, HazelcastJsonValue) and doc.loads() == {"qty": 5, "tag": "t5"}
    # a member reads the JSON value's fields: its own predicate and projection over them
    docs = hz.get_map(f"{target}-doc").blocking()
    assert sorted(k for k, _ in docs.entry_set(sql("qty >= 497"))) == ["k497", "k498", "k499"]
    assert docs.size() == 500
    # and jetconnect reads all of it back typed, or as JSON text in the default string columns
    back = sources.map(f"{target}-doc", store=HAZELCAST_URL, schema="key string, value struct<qty:long,tag:string>")
    rows = {r["key"]: r["value"].asDict() for r in back.read(spark).collect()}
    assert rows == {f"k{i}": {"qty": i, "tag": f"t{i}"} for i in range(500)}
    text = {r["key"]: r["value"] for r in sources.map(f"{target}-big", store=HAZELCAST_URL).read(spark).collect()}
    assert text["k7"] == str(7 * 3_000_000_000) and len(text) == 500


def test_what_the_official_client_writes_jetconnect_reads_exactly(spark, hz, name) -> None:
    source = name("theirs")
    theirs = hz.get_map(source).blocking()
    values: dict[str, Any] = {
        "s": "text ü",
        "l": 2**40,
        "d": 2.5,
        "b": False,
        "y": bytearray(b"\x00\xff"),
        "j": HazelcastJsonValue('{"a": [1, 2], "b": null}'),
        "date": dt.date(2024, 2, 29),
        "dec": decimal.Decimal("12.345"),
    }
    theirs.put_all(values)
    got = {r["key"]: r["value"] for r in sources.map(source, store=HAZELCAST_URL).read(spark).collect()}
    assert got == {
        "s": "text ü",
        "l": str(2**40),
        "d": "2.5",
        "b": "false",
        "y": "00ff",
        "j": '{"a": [1, 2], "b": null}',
        "date": "2024-02-29",
        "dec": "12.345",
    }
    # typed columns get each value as it is (the member picks the entry: a predicate on the key)
    for key, spark_type in [("l", "long"), ("d", "double"), ("b", "boolean"), ("y", "binary"), ("date", "date")]:
        one = sources.map(
            source, store=HAZELCAST_URL, predicate=equal("__key", key), schema=f"key string, value {spark_type}"
        )
        expected = values[key]
        assert one.read(spark).collect()[0]["value"] == (
            bytes(expected) if isinstance(expected, bytearray) else expected
        )


def test_each_task_reads_its_own_partitions_and_the_members_filter(spark, hz, name) -> None:
    m = name("parallel")
    hz.get_map(m).blocking().put_all({i: i * 10 for i in range(3_000)})
    source = map_source(m, store=HAZELCAST_URL, schema="key long, value long", parallelism=3)
    splits = source.splits()
    assert sorted(p for split in splits for p in split) == list(range(271)) and len(splits) == 3
    partition_of = hz.partition_service.get_partition_id
    seen: list[int] = []
    for split in splits:
        keys = [k for k, _ in read_rows(source.read_split(split))]
        assert {partition_of(k) for k in keys} <= set(split)  # a task reads only its partitions
        seen += keys
    assert sorted(seen) == list(range(3_000))
    df = source.read(spark)
    assert df.rdd.getNumPartitions() == 3 and df.count() == 3_000
    # Spark's own filters on a long key or value become a member-side predicate
    pushed = map_source(m, store=HAZELCAST_URL, schema="key long, value long")
    from pyspark.sql.datasource import EqualTo, GreaterThan, Not

    odd = EqualTo(("key",), "x")  # not a long: left to Spark
    assert pushed.push_filters([GreaterThan(("value",), 29_900), Not(EqualTo(("key",), 2_995)), odd]) == [odd]
    assert sorted(k for split in pushed.splits() for k, _ in read_rows(pushed.read_split(split))) == [
        k for k in range(2_991, 3_000) if k != 2_995
    ]
    where = sources.map(m, store=HAZELCAST_URL, schema="key long, value long").read(spark).where("value >= 29950")
    assert sorted(r["key"] for r in where.collect()) == list(range(2_995, 3_000))
    # Hazelcast's own predicate and projection run on the members
    projected = sources.map(
        m,
        store=HAZELCAST_URL,
        predicate=greater("this", 29_970),
        projection=single_attribute("this"),
        schema="value long",
    ).read(spark)
    assert sorted(r["value"] for r in projected.collect()) == [29_980, 29_990]
    # a Python predicate runs in the task, on every entry read
    local = sources.map(m, store=HAZELCAST_URL, predicate=lambda k, v: k < 3, schema="key long, value long")
    assert sorted(r["key"] for r in local.read(spark).collect()) == [0, 1, 2]


def test_format_strings_read_and_write_a_map(spark, hz, name) -> None:
    src, dst = name("fmt-src"), name("fmt-dst")
    hz.get_map(src).blocking().put_all({f"k{i}": f"v{i}" for i in range(100)})
    df = spark.read.format("jetconnect.map").option("name", src).option("store", HAZELCAST_URL).load()
    df.write.format("jetconnect.map").option("name", dst).option("store", HAZELCAST_URL).mode("append").save()
    assert dict(hz.get_map(dst).blocking().entry_set()) == {f"k{i}": f"v{i}" for i in range(100)}


def test_merging_updating_and_entry_processor_sinks(spark, hz, name) -> None:
    from jetconnect_imap.hazelcast.processors import AddDelta

    merged, updated, processed = name("merged"), name("updated"), name("processed")
    hz.get_map(merged).blocking().put_all({k: 1_000 for k in range(5)})  # merged into what is there
    df = spark.range(0, 3_000, numPartitions=3).selectExpr("id % 10 AS k", "id AS v")
    sinks.map_with_merging(
        merged, key_fn=lambda r: r["k"], value_fn=lambda r: r["v"], merge_fn=lambda a, b: a + b, store=HAZELCAST_URL
    ).write(df)
    expected = {k: sum(range(k, 3_000, 10)) + (1_000 if k < 5 else 0) for k in range(10)}
    assert dict(hz.get_map(merged).blocking().entry_set()) == expected  # three tasks raced: no update lost
    sinks.map_with_updating(
        updated,
        key_fn=lambda r: r["k"],
        update_fn=lambda old, r: None if r["v"] == 7 else (old or 0) + 1,
        store=HAZELCAST_URL,
    ).write(df.where("v < 10"))
    assert dict(hz.get_map(updated).blocking().entry_set()) == {k: 1 for k in range(10) if k != 7}
    sinks.map_with_entry_processor(
        processed, key_fn=lambda r: r["k"], processor_fn=lambda r: AddDelta(r["v"]), store=HAZELCAST_URL
    ).write(df)
    assert dict(hz.get_map(processed).blocking().entry_set()) == {k: sum(range(k, 3_000, 10)) for k in range(10)}


def test_lists(spark, hz, name) -> None:
    lst = name("list")
    sinks.list(lst, store=HAZELCAST_URL).write(spark.range(5).selectExpr("id AS value"))
    assert sorted(hz.get_list(lst).blocking().get_all()) == [0, 1, 2, 3, 4]
    hz.get_list(lst).blocking().add(HazelcastJsonValue('{"x": 1}'))
    back = sources.list(lst, store=HAZELCAST_URL).read(spark)
    assert sorted(r["value"] for r in back.collect()) == ["0", "1", "2", "3", "4", '{"x": 1}']


def test_caches_are_the_members_jcache_caches(spark, name) -> None:
    cache = name("cache")
    df = spark.range(0, 1_000, numPartitions=2).selectExpr("concat('k', id) AS key", "id AS value")
    sinks.cache(cache, store=HAZELCAST_URL).write(df)
    back = sources.cache(cache, store=HAZELCAST_URL, schema="key string, value long").read(spark)
    assert {r["key"]: r["value"] for r in back.collect()} == {f"k{i}": i for i in range(1_000)}
    assert sources.map(cache, store=HAZELCAST_URL).read(spark).count() == 0  # the map of that name is another
    # a cache runs no queries: Spark's filters stay Spark's (once sent as a query of the *map* of
    # that name, they found nothing)
    assert back.where("value >= 990").count() == 10
    with pytest.raises(Exception, match="expiry policy"):
        sinks.cache(cache, store=HAZELCAST_URL, expiry_s=5)
