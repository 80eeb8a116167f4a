"""Keys and values of Kafka's own Java serializers, both ways, with a Java program compiled here.

A small Java program (below), compiled in the test with javac against the broker's own
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
from jetconnect_kafka.errors import KafkaSourceError

pytestmark = pytest.mark.spark

LIBS = Path.home() / ".cache" / "jetconnect-kafka" / "libs"
JAVA = r"""
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class JavaSerdes {
    public static void main(String[] args) throws Exception {
        String mode = args[0], bootstrap = args[1], topic = args[2];
        if (mode.equals("produce-int-double")) {
            try (KafkaProducer<Integer, Double> p = new KafkaProducer<>(props(bootstrap), new IntegerSerializer(), new DoubleSerializer())) {
                int[] keys = {0, 1, -1, Integer.MIN_VALUE, Integer.MAX_VALUE};
                for (int i = 0; i < keys.length; i++) p.send(new ProducerRecord<>(topic, 0, keys[i], i + 0.5)).get();
                p.send(new ProducerRecord<>(topic, 0, null, -0.0)).get();  // a null key
                p.send(new ProducerRecord<Integer, Double>(topic, 0, 7, null)).get();  // a null value (a tombstone)
            }
        } else if (mode.equals("produce-long-uuid")) {
            try (KafkaProducer<Long, UUID> p = new KafkaProducer<>(props(bootstrap), new LongSerializer(), new UUIDSerializer())) {
                long[] keys = {0L, -2L, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 40};
                for (int i = 0; i < keys.length; i++) p.send(new ProducerRecord<>(topic, 0, keys[i], new UUID(i, -i))).get();
            }
        } else if (mode.equals("consume-short-float")) {
            Properties c = props(bootstrap);
            c.put("isolation.level", "read_committed");
            try (KafkaConsumer<Short, Float> consumer = new KafkaConsumer<>(c, new ShortDeserializer(), new FloatDeserializer())) {
                TopicPartition tp = new TopicPartition(topic, 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                long end = consumer.endOffsets(List.of(tp)).get(tp);
                long deadline = System.currentTimeMillis() + 60_000;
                while (consumer.position(tp) < end && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<Short, Float> r : consumer.poll(Duration.ofMillis(500))) {
                        System.out.println(r.key() + "\t" + r.value());
                    }
                }
            }
        }
    }

    static Properties props(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        return p;
    }
}
"""


@pytest.fixture(scope="module")
def java_serdes(kafka, tmp_path_factory):  # type: ignore[no-untyped-def]
    """``run(mode, topic)``: the Java program above, compiled once against the broker's kafka-clients jar."""
    jars = sorted(LIBS.glob("kafka-clients-*.jar"))
    javac, java = shutil.which("javac"), shutil.which("java")
    if not jars or javac is None or java is None:
        missing = f"javac/java or {LIBS}/kafka-clients-*.jar (scripts/servers/kafka.sh start fetches Kafka's jars)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"missing {missing}")
        pytest.skip(f"missing {missing}")
    folder = tmp_path_factory.mktemp("java")
    (folder / "JavaSerdes.java").write_text(JAVA)
    classpath = f"{folder}:{LIBS}/*"
    done = subprocess.run(
        [javac, "--release", "17", "-cp", classpath, "-d", str(folder), str(folder / "JavaSerdes.java")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr

    def run(mode: str, topic: str) -> list[str]:
        result = subprocess.run(
            [java, "-Xmx128m", "-Dlog4j2.level=WARN", "-cp", classpath, "JavaSerdes", mode, kafka.bootstrap, topic],
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
