"""A standard client at both ends: kcat produces, jetconnect streams to Kafka, kcat reads it back."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from jetconnect import sinks, sources

pytestmark = pytest.mark.spark


def test_what_kcat_produced_streams_exactly_once_to_a_topic_kcat_reads_back(spark, kafka, tmp_path) -> None:
    source_topic, target = kafka.topic(partitions=2, prefix="kcat-in"), kafka.topic(partitions=2, prefix="kcat-out")
    n = 1000
    for p in range(2):  # kcat batches as librdkafka does by default: a few batches of many records
        kafka.kcat(
            "-P", "-t", source_topic, "-p", str(p), "-K", ":", input="".join(f"k{i}:v{i}\n" for i in range(p, n, 2))
        )
    assert kafka.ends(source_topic, [0, 1]) == {0: n // 2, 1: n // 2}

    stream = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[source_topic], key_format="string", value_format="string"
    ).read_stream(spark)
    query = sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=target, value_format="string").write_stream(
        stream.select("key", F.upper("value").alias("value")),
        checkpoint_location=str(tmp_path / "ck"),
        trigger={"availableNow": True},
    )
    assert query.awaitTermination(240), "the query did not finish in 240 s"

    kafka.check_stable(target)  # every transaction ended, so kcat's read_committed sees them all
    out = kafka.kcat("-C", "-t", target, "-e", "-q", "-X", "isolation.level=read_committed", "-f", "%k:%s\\n").stdout
    assert sorted(out.splitlines()) == sorted(f"k{i}:V{i}" for i in range(n))
