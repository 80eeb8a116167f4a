"""IMap sources and sinks through the real SparkSession, on SQLite, Redis and a Redis Cluster."""

from __future__ import annotations

import sys

import pytest
from pyspark import cloudpickle
from pyspark.sql import functions as F

from jetconnect import sinks, sources
from jetconnect_imap import connect

# This module is imported by path (--import-mode=importlib): Spark's Python workers could not
# import it, so the lambdas given to sources and sinks travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

# The embedded store through its plain Python API; Hazelcast: test_hazelcast_spark.py
ALL_STORES = TWO_STORES = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


@ALL_STORES
def test_batch_map_to_map(spark, store_url, name) -> None:
    grid = connect(store_url)
    source = grid.map(name("src"))
    source.put_all({f"k{i}": {"n": i, "tag": "even" if i % 2 == 0 else "odd"} for i in range(2000)})

    df = sources.map(
        source.name,
        store=store_url,
        predicate=lambda k, v: v["tag"] == "even",
        projection=lambda k, v: (k, v["n"] * 10),
        schema="key string, value long",
    ).read(spark)
    assert df.count() == 1000
    target = name("dst")
    sinks.map(target, store=store_url).write(df.withColumn("value", F.col("value") + 1))

    assert connect(store_url).map(target).to_dict() == {f"k{i}": i * 10 + 1 for i in range(0, 2000, 2)}


@TWO_STORES
def test_format_strings_read_and_write_a_map(spark, store_url, name) -> None:
    src, dst = name("src"), name("dst")
    connect(store_url).map(src).put_all({f"k{i}": f"v{i}" for i in range(100)})
    df = spark.read.format("jetconnect.map").option("name", src).option("store", store_url).load()
    df.write.format("jetconnect.map").option("name", dst).option("store", store_url).mode("append").save()
    assert connect(store_url).map(dst).to_dict() == {f"k{i}": f"v{i}" for i in range(100)}


@ALL_STORES
def test_merging_updating_and_entry_processor_sinks(spark, store_url, name) -> None:
    df = spark.range(0, 1000, numPartitions=4).select(
        (F.col("id") % 10).cast("string").alias("key"), F.col("id").alias("amount")
    )
    merged, updated, processed = name("merged"), name("updated"), name("processed")
    sinks.map_with_merging(
        merged,
        key_fn=lambda r: r["key"],
        value_fn=lambda r: r["amount"],
        merge_fn=lambda old, new: old + new,
        store=store_url,
    ).write(df)
    sinks.map_with_updating(
        updated, key_fn=lambda r: r["key"], update_fn=lambda old, r: (old or 0) + 1, store=store_url
    ).write(df)

    def keep_max(entry) -> None:
        entry.value = max(entry.value or 0, entry.row["amount"])

    sinks.map_with_entry_processor(processed, key_fn=lambda r: r["key"], processor_fn=keep_max, store=store_url).write(
        df
    )

    expected_sums = {str(k): sum(range(k, 1000, 10)) for k in range(10)}
    assert connect(store_url).map(merged).to_dict() == expected_sums
    assert connect(store_url).map(updated).to_dict() == {str(k): 100 for k in range(10)}
    assert connect(store_url).map(processed).to_dict() == {str(k): 990 + k for k in range(10)}


@TWO_STORES
def test_many_concurrent_writers_lose_no_update(spark, store_url, name) -> None:
    # 16 tasks on 2 cores, every one updating the same 3 hot keys: read-modify-writes collide.
    counters = name("counters")
    df = spark.range(0, 16_000, numPartitions=16).select((F.col("id") % 3).alias("k"))
    sinks.map_with_merging(
        counters, key_fn=lambda r: r["k"], value_fn=lambda r: 1, merge_fn=lambda old, new: old + new, store=store_url
    ).write(df)
    plain = name("plain")
    sinks.map(plain, store=store_url).write(
        spark.range(0, 20_000, numPartitions=16).selectExpr("id AS key", "id * 2 AS value")
    )
    assert connect(store_url).map(counters).to_dict() == {0: 5334, 1: 5333, 2: 5333}
    m = connect(store_url).map(plain)
    assert len(m) == 20_000 and m.get(12345) == 24690


@TWO_STORES
def test_journal_stream_to_map_and_overflow(spark, store_url, name, tmp_path) -> None:
    src = connect(store_url).map(name("src"), partitions=4, journal_capacity=40)  # 10 per partition
    src.put_all({f"k{i}": i for i in range(20)})
    src.remove("k3")
    dst = name("dst")

    def drain() -> None:
        stream = sources.map_journal(src.name, store=store_url, full_events=True).read_stream(
            spark, max_records_per_batch=7
        )
        query = sinks.map(dst, store=store_url).write_stream(
            stream.selectExpr("key", "CAST(new_value AS LONG) AS value"),
            checkpoint_location=str(tmp_path / "checkpoint"),
            trigger={"availableNow": True},
        )
        query.awaitTermination(120)
        if query.exception() is not None:
            raise query.exception()

    drain()
    expected = {f"k{i}": i for i in range(20) if i != 3}
    assert connect(store_url).map(dst).to_dict() == expected

    for round_ in range(11):  # 44 events into a ring of 40: the unread oldest are pushed out
        src.put_all({f"k{i}": 100 * round_ + i for i in range(4)})
    with pytest.raises(Exception, match=r"lost events .* on_overflow='skip'"):
        drain()


@TWO_STORES
def test_lists(spark, store_url, name) -> None:
    lst = name("list")
    sinks.list(lst, store=store_url).write(spark.range(5).selectExpr("id AS value"))
    assert sorted(connect(store_url).list(lst).to_list()) == [0, 1, 2, 3, 4]
    back = sources.list(lst, store=store_url, schema="value long").read(spark)
    assert sorted(r.value for r in back.collect()) == [0, 1, 2, 3, 4]
