"""The ICache family through the real SparkSession, on the SQLite store: a DataFrame written with
``sinks.cache`` reads back with ``sources.cache``, and ``sources.cache_journal`` streams it."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from jetconnect import sinks, sources

SQLITE = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


@SQLITE
def test_cache_sink_source_and_journal(spark, store_url, name, tmp_path) -> None:
    cache = name("cache")
    df = spark.range(0, 500, numPartitions=4).select(
        F.format_string("k%d", "id").alias("key"), F.col("id").alias("value")
    )
    sinks.cache(cache, store=store_url, partitions=8).write(df)
    # a second write: ten keys updated, ten removed (null values)
    changes = spark.range(0, 20, numPartitions=2).select(
        F.format_string("k%d", "id").alias("key"),
        F.when(F.col("id") < 10, F.col("id") + 1000).cast("long").alias("value"),
    )
    sinks.cache(cache, store=store_url).write(changes)

    expected = {f"k{i}": i for i in range(20, 500)} | {f"k{i}": i + 1000 for i in range(10)}
    back = sources.cache(cache, store=store_url, schema="key string, value long").read(spark)
    assert {r.key: r.value for r in back.collect()} == expected
    by_format = spark.read.format("jetconnect.cache").option("name", cache).option("store", store_url).load()
    assert by_format.count() == len(expected)
    assert sources.map(cache, store=store_url).read(spark).count() == 0  # the map of that name is another

    def drain(full_events: bool, query_name: str) -> list:
        stream = sources.cache_journal(cache, store=store_url, full_events=full_events).read_stream(
            spark, max_records_per_batch=200
        )
        query = (
            stream.writeStream.format("memory")
            .queryName(query_name)
            .option("checkpointLocation", str(tmp_path / query_name))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(180)
        if query.exception() is not None:
            raise query.exception()
        return spark.table(query_name).collect()

    # Jet's default: CREATED and UPDATED as (key, new value), no REMOVED
    puts = drain(False, f"cache_puts_{cache.replace('-', '_')}")
    assert sorted((r.key, int(r.value)) for r in puts) == sorted(
        [(f"k{i}", i) for i in range(500)] + [(f"k{i}", i + 1000) for i in range(10)]
    )
    events = drain(True, f"cache_events_{cache.replace('-', '_')}")
    kinds = [r.type for r in events]
    assert (kinds.count("CREATED"), kinds.count("UPDATED"), kinds.count("REMOVED")) == (500, 10, 10)
