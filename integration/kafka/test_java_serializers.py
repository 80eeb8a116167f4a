"""Keys and values of Kafka's own Java serializers, both ways, with a Java program compiled here.

A small Java program (``java/JavaSerdes.java``), compiled in the test with javac against the broker's own
kafka-clients jar (scripts/servers/kafka.sh keeps Kafka's jars in ~/.cache/jetconnect-kafka/libs),
produces records with ``IntegerSerializer`` / ``LongSerializer`` keys and ``DoubleSerializer`` /
``UUIDSerializer`` / ``ShortSerializer`` / ``FloatSerializer`` values, as a Java service does;
jetconnect reads them through Spark as ``int``, ``bigint``, ``double``, ``string``, ``smallint`` and
``float``. What jetconnect's sink writes in those formats, the program reads back with the
matching Java deserializers.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from jetconnect import sinks, sources
from jetconnect.testing import java_program
from jetconnect_kafka.errors import KafkaSourceError

pytestmark = pytest.mark.spark

LIBS = Path.home() / ".cache" / "jetconnect-kafka" / "libs"
JAVA_SOURCES = Path(__file__).resolve().parent / "java"  # JavaSerdes.java


@pytest.fixture(scope="module")
def java_serdes(kafka, tmp_path_factory):  # type: ignore[no-untyped-def]
    """``run(mode, topic)``: java/JavaSerdes.java, compiled once against the broker's kafka-clients jar."""
    jars = sorted(LIBS.glob("kafka-clients-*.jar"))
    if not jars or shutil.which("javac") is None:
        missing = f"javac or {LIBS}/kafka-clients-*.jar (scripts/servers/kafka.sh start fetches Kafka's jars)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"missing {missing}")
        pytest.skip(f"missing {missing}")
    java = java_program(JAVA_SOURCES, f"{LIBS}/*", tmp_path_factory.mktemp("java"))

    def run(mode: str, topic: str) -> list[str]:
        result = subprocess.run(
            [*java, "-Xmx128m", "-Dlog4j2.level=WARN", "JavaSerdes", mode, kafka.bootstrap, topic],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        return result.stdout.splitlines()

    return run


def test_keys_and_values_of_javas_serializers_read_as_spark_types(spark, kafka, java_serdes) -> None:
    topic = kafka.topic(prefix="java-int")
    java_serdes("produce-int-double", topic)
    df = sources.kafka(
        bootstrap_servers=kafka.bootstrap, topics=[topic], key_format="integer", value_format="double"
    ).read(spark)
    assert df.schema["key"].dataType.simpleString() == "int" and df.schema["value"].dataType.simpleString() == "double"
    rows = sorted(df.collect(), key=lambda r: r.offset)
    assert [(r.key, r.value) for r in rows] == [
        (0, 0.5),
        (1, 1.5),
        (-1, 2.5),
        (-(2**31), 3.5),
        (2**31 - 1, 4.5),
        (None, -0.0),
        (7, None),
    ]

    topic = kafka.topic(prefix="java-long")
    java_serdes("produce-long-uuid", topic)
    df = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], key_format="long", value_format="uuid").read(
        spark
    )
    rows = sorted(df.collect(), key=lambda r: r.offset)
    assert [r.key for r in rows] == [0, -2, -(2**63), 2**63 - 1, 1 << 40]
    # Java's UUID(most, least) prints as the 128 bits in hex: the same UUID Python makes from them
    assert [r.value for r in rows] == [str(uuid.UUID(int=((i << 64) | (-i & (2**64 - 1))))) for i in range(5)]


def test_what_the_sink_writes_as_short_and_float_javas_deserializers_read(spark, kafka, java_serdes) -> None:
    topic = kafka.topic(prefix="java-out")
    df = spark.createDataFrame([(1, 0.25), (-32768, -1.5), (32767, None), (None, 3.0)], "k smallint, v float").select(
        F.col("k").alias("key"), F.col("v").alias("value")
    )
    sinks.kafka(bootstrap_servers=kafka.bootstrap, topic=topic, key_format="short", value_format="float").write(df)
    assert sorted(java_serdes("consume-short-float", topic)) == sorted(
        ["1\t0.25", "-32768\t-1.5", "32767\tnull", "null\t3.0"]
    )


def test_an_integer_key_of_five_bytes_is_an_error_naming_the_record(spark, kafka) -> None:
    topic = kafka.topic(prefix="java-bad")
    kafka.produce(topic, ["a", "b"], key=False)
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": kafka.bootstrap})
    producer.produce(topic, value=b"c", key=b"\x00\x00\x00\x00\x05")
    assert producer.flush(30) == 0
    source = sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], key_format="integer")
    with pytest.raises(
        KafkaSourceError,
        match=rf"the key at topic '{topic}' partition 0 offset 2 as integer: value has 5 bytes; Kafka's IntegerSerializer writes 4",
    ):
        list(source.read_split(source.splits()[0]))
    rows = (
        sources.kafka(bootstrap_servers=kafka.bootstrap, topics=[topic], key_format="integer", on_bad_record="null")
        .read(spark)
        .collect()
    )
    assert sorted((r.offset, r.key, r._corrupt_key) for r in rows) == [
        (0, None, None),
        (1, None, None),
        (2, None, b"\x00\x00\x00\x00\x05"),
    ]
