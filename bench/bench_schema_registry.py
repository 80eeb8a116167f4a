"""Benchmark: Schema Registry framed Avro (``avro-confluent``), jetconnect through Spark vs
confluent-kafka's own consumer + ``AvroDeserializer`` and producer + ``AvroSerializer``, in one run,
against Apache Kafka (scripts/servers/kafka.sh) and Apicurio Registry (scripts/servers/schema-registry.sh).

Usage: python bench/bench_schema_registry.py [--records 1000000] [--sink-records 1000000] [--repeat 1]

Rows:
- source: ``--records`` records of one Avro schema (6 fields: long, string, double,
  timestamp-millis, enum, nullable string; ~40 bytes each), written by ``AvroSerializer`` into
  2 partitions, read by ``sources.kafka(value_format="avro-confluent")`` and summed in Spark
  (``sum(value.id)``, ``sum(length(value.user))``), against one consumer in this process that
  deserializes every record with ``AvroDeserializer`` and sums the same (what a Python service
  would write instead). Target ≥ 1.0× (#45).
- sink: the same records as a cached DataFrame of a struct column written by
  ``sinks.kafka(value_format="avro-confluent", delivery="at-least-once")``, against one
  idempotent producer in this process (kept across runs, as an application keeps it) serializing
  each record with ``AvroSerializer`` from a list of dicts. Target ≥ 1.0× (#45). The exactly-once
  row is beside it for information.

Both sides of a row take turns (``best_of_turns``: a load spike favours neither). Rows go to
``bench/results/schema-registry.json``.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from _harness import Bench, Row, bench_parser, bench_spark, best_of_turns
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = "127.0.0.1:9092"  # Apache Kafka, scripts/servers/kafka.sh
REGISTRY = "http://127.0.0.1:8081/apis/ccompat/v7"  # Apicurio, scripts/servers/schema-registry.sh
PARTITIONS = 2  # local[2]: one Spark task per partition
SCHEMA = {
    "type": "record",
    "name": "Event",
    "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}
BASE = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def client() -> SchemaRegistryClient:
    return SchemaRegistryClient({"url": REGISTRY, "timeout": 10})


_ADMIN: list[AdminClient] = []  # kept: a client collected before its futures resolve fails them


def create_topic() -> str:
    if not _ADMIN:
        _ADMIN.append(AdminClient({"bootstrap.servers": BOOTSTRAP}))
    name = f"bench-sr-{uuid.uuid4().hex[:8]}"
    for future in _ADMIN[0].create_topics([NewTopic(name, PARTITIONS, 1)]).values():
        future.result(timeout=30)
    return name


def event(i: int) -> dict[str, Any]:
    return {
        "id": i,
        "user": f"user{i % 1000}",
        "amount": i * 0.5,
        "at": BASE + datetime.timedelta(milliseconds=i),
        "kind": "ABC"[i % 3],
        "note": None if i % 2 else "n",
    }


def fill(topic: str, records: int) -> None:
    """``records`` events serialized by ``AvroSerializer``, produced round-robin over the partitions."""
    serialize = AvroSerializer(client(), json.dumps(SCHEMA))
    ctx = SerializationContext(topic, MessageField.VALUE)
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 20, "queue.buffering.max.messages": 500000})
    for i in range(records):
        value = serialize(event(i), ctx)
        while True:
            try:
                producer.produce(topic, value, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120):
        raise RuntimeError(f"{topic}: records not delivered within 120 s")


def raw_consume(topic: str, records: int) -> tuple[int, int]:
    """One consumer deserializes every record with ``AvroDeserializer``; the sums Spark computes."""
    deserialize = AvroDeserializer(client())
    ctx = SerializationContext(topic, MessageField.VALUE)
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "bench", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = ids = lengths = 0
    while seen < records:
        for m in consumer.consume(20000, timeout=1.0):
            record = deserialize(m.value(), ctx)
            ids += record["id"]
            lengths += len(record["user"])
            seen += 1
    consumer.close()
    return ids, lengths


def bench_source(spark, bench: Bench, args) -> None:  # type: ignore[no-untyped-def]
    from jetconnect import sources

    topic = create_topic()
    fill(topic, args.records)
    source = sources.kafka(
        bootstrap_servers=BOOTSTRAP, topics=[topic], value_format="avro-confluent", schema_registry_url=REGISTRY
    )
    expected = raw_consume(topic, args.records)

    def ours() -> None:
        [row] = source.read(spark).selectExpr("sum(value.id)", "sum(length(value.user))").collect()
        assert tuple(row) == expected, (tuple(row), expected)

    case = "source: avro-confluent, 1 topic, 2 partitions, vs consumer + AvroDeserializer"
    with bench.measure(case):
        raw, mine = best_of_turns([lambda: raw_consume(topic, args.records), ours], args.repeat, args.warmup)
    bench.add(Row(case, mine, raw, target=1.0, extra={"records": args.records}))


def bench_sink(spark, bench: Bench, args) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from jetconnect import sinks

    n = args.sink_records
    df = (
        spark.range(n)
        .select(
            F.struct(
                F.col("id"),
                F.concat(F.lit("user"), (F.col("id") % 1000).cast("string")).alias("user"),
                (F.col("id") * 0.5).alias("amount"),
                F.timestamp_millis(F.col("id") + int(BASE.timestamp() * 1000)).alias("at"),
                F.element_at(F.array(F.lit("A"), F.lit("B"), F.lit("C")), (F.col("id") % 3 + 1).cast("int")).alias(
                    "kind"
                ),
                F.when(F.col("id") % 2 == 0, F.lit("n")).alias("note"),
            ).alias("value")
        )
        .repartition(PARTITIONS)
        .cache()
    )
    df.count()
    records = [event(i) for i in range(n)]
    serialize = AvroSerializer(client(), json.dumps(SCHEMA))
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, "enable.idempotence": True})

    def raw_produce() -> None:
        topic = create_topic()
        ctx = SerializationContext(topic, MessageField.VALUE)
        for i, record in enumerate(records):
            value = serialize(record, ctx)
            while True:
                try:
                    producer.produce(topic, value, partition=i % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.05)
        producer.flush(120)

    def ours(delivery: str):  # type: ignore[no-untyped-def]
        def write() -> None:
            sinks.kafka(
                bootstrap_servers=BOOTSTRAP,
                topic=create_topic(),
                value_format="avro-confluent",
                schema_registry_url=REGISTRY,
                delivery=delivery,
            ).write(df)

        return write

    cases = ["sink: avro-confluent, at-least-once, vs producer + AvroSerializer", "sink: avro-confluent, exactly-once"]
    with bench.measure(*cases):
        raw, least, exactly = best_of_turns(
            [raw_produce, ours("at-least-once"), ours("exactly-once")], args.repeat, args.warmup
        )
    bench.add(Row(cases[0], least, raw, target=1.0, extra={"records": n}))
    bench.add(Row(cases[1], exactly, raw, extra={"records": n}, note="a transaction per Spark partition (2)"))
    df.unpersist()


def main() -> None:
    parser = bench_parser(__doc__, repeat=1)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--sink-records", type=int, default=1_000_000)
    parser.add_argument("--cases", default="source,sink", help="which groups of rows to run")
    args = parser.parse_args()
    env = {**os.environ, "PYTHON": sys.executable}
    for server in ("kafka", "schema-registry"):
        subprocess.run(["bash", str(ROOT / "scripts" / "servers" / f"{server}.sh"), "start"], check=True, env=env)
    cases = set(args.cases.split(","))
    title = f"avro-confluent via Apicurio 3.3.3, Apache Kafka 4, Spark local[2]; {args.records:,} read, {args.sink_records:,} written"
    with Bench("schema-registry", args, results=args.results, title=title) as bench:
        spark = bench_spark("bench-schema-registry", master="local[2]")
        if "source" in cases:
            bench_source(spark, bench, args)
        if "sink" in cases:
            bench_sink(spark, bench, args)
        spark.stop()


if __name__ == "__main__":
    main()
