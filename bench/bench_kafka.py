"""Kafka: jetconnect vs raw confluent-kafka, in one run, against the tansu broker.

    python bench/bench_kafka.py [--records 1000000] [--sink-records 200000] [--latency-seconds 20]

Prints a table: source (1M records) vs a raw consumer, sink vs a raw producer (both delivery
modes), and the end-to-end latency p50/p99 of a Kafka → Kafka query at a steady input rate.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = "127.0.0.1:9092"
PARTITIONS = 2  # local[2]: one Spark task per partition
#: How long the latency run waits, after the last record is produced, for the reader to see them all.
DRAIN_S = 30


def create_topic(partitions: int = PARTITIONS) -> str:
    name = f"bench-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(timeout=30)
    return name


def fill(topic: str, records: int, size: int = 100) -> None:
    """Produce ``records`` values in big batches, then one single-record batch per partition.

    tansu's high watermark is the base offset of the last batch + 1 (a tansu defect); ending
    each partition with a batch of one makes it right. Without it the source would refuse to
    read (``KafkaWatermarkError``: tansu serves records past the watermark it reports).
    """
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 20, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 500000})
    payload = b"x" * size
    for i in range(records - PARTITIONS):
        while True:
            try:
                producer.produce(topic, payload, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(120)
    single = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 0, "batch.num.messages": 1})
    for p in range(PARTITIONS):
        single.produce(topic, payload, partition=p)
        single.flush(30)


def raw_consume(topic: str, records: int) -> float:
    """Seconds for one plain consumer to read every record (touching each value)."""
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "bench", "enable.auto.commit": False})
    started = time.perf_counter()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = total = 0
    while seen < records:
        for m in consumer.consume(20000, timeout=1.0):
            total += len(m.value())
            seen += 1
    elapsed = time.perf_counter() - started
    consumer.close()
    return elapsed


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def bench_source(spark, records: int) -> list[tuple[str, float, float]]:  # type: ignore[no-untyped-def]
    from jetconnect import sources

    topic = create_topic()
    fill(topic, records)
    source = sources.kafka(bootstrap_servers=BOOTSTRAP, topics=[topic])
    source.read(spark).limit(10).collect()  # warm up: Python workers, first job
    raw = min(raw_consume(topic, records) for _ in range(2))
    ours = min(timed(lambda: source.read(spark).selectExpr("sum(length(value))").collect()) for _ in range(2))
    # Jet's projection: a Python function per record instead of the columnar decoding
    projected = sources.kafka(bootstrap_servers=BOOTSTRAP, topics=[topic], projection=lambda r: (r.value,),
                              schema="value binary")
    by_function = min(timed(lambda: projected.read(spark).selectExpr("sum(length(value))").collect()) for _ in range(2))
    return [("source: read 1 topic, 2 partitions", raw, ours), ("source: the same, with a projection", raw, by_function)]


def bench_sink(spark, records: int) -> list[tuple[str, float, float]]:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from jetconnect import sinks

    df = spark.range(records).select(F.concat(F.lit("x" * 90), F.col("id").cast("string")).alias("value")).cache()
    df.count()
    values = [r.value.encode() for r in df.collect()]

    def raw_produce(topic: str) -> None:
        producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, "enable.idempotence": True})
        for i, v in enumerate(values):
            while True:
                try:
                    producer.produce(topic, v, partition=i % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.05)
        producer.flush(120)

    raw = min(timed(lambda: raw_produce(create_topic())) for _ in range(2))
    parted = df.repartition(PARTITIONS).cache()
    parted.count()
    rows = []
    for delivery in ("at-least-once", "exactly-once"):
        sink = sinks.kafka(bootstrap_servers=BOOTSTRAP, topic=create_topic(), value_format="string", delivery=delivery)
        sink.write(parted.limit(100))  # warm up: Python workers, the control topic
        ours = min(timed(lambda: sink.write(parted)) for _ in range(2))
        rows.append((f"sink: write, {delivery}", raw, ours))
    # Jet's toRecordFn: a Python function per row instead of the value column
    sink = sinks.kafka(bootstrap_servers=BOOTSTRAP, topic=create_topic(), delivery="at-least-once",
                       record_fn=lambda row: (None, row.value))
    sink.write(parted.limit(100))
    rows.append(("sink: the same, record_fn, at-least-once", raw, min(timed(lambda: sink.write(parted)) for _ in range(2))))
    parted.unpersist()
    df.unpersist()
    return rows


def bench_latency(spark, seconds: float, rate: int) -> tuple[float, float, int, int]:  # type: ignore[no-untyped-def]
    """p50 / p99 ms from producing a record to a read_committed consumer seeing its copy; seen, sent."""
    from jetconnect import sinks, sources

    source_topic, target_topic = create_topic(), create_topic()
    stream = sources.kafka(bootstrap_servers=BOOTSTRAP, topics=[source_topic]).read_stream(spark)
    sink = sinks.kafka(bootstrap_servers=BOOTSTRAP, topic=target_topic)
    checkpoint = tempfile.mkdtemp(prefix="bench-kafka-")
    query = sink.write_stream(stream.select("value"), checkpoint_location=checkpoint,
                              trigger={"processingTime": "0 seconds"})
    latencies: list[float] = []
    stop = threading.Event()

    def consume() -> None:
        consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "bench", "isolation.level": "read_committed"})
        consumer.assign([TopicPartition(target_topic, p, 0) for p in range(PARTITIONS)])
        while not stop.is_set():
            for m in consumer.consume(1000, timeout=0.2):
                if m.error() is None:
                    latencies.append(time.time() * 1000 - float(m.value()))
        consumer.close()

    reader = threading.Thread(target=consume, daemon=True)
    reader.start()
    # One record per batch: tansu's high watermark is right only then (see fill)
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 0, "batch.num.messages": 1})
    time.sleep(5)  # let the query start its first (empty) batches
    started = time.monotonic()
    sent = 0
    while time.monotonic() - started < seconds:
        due = int((time.monotonic() - started) * rate)
        while sent < due:
            producer.produce(source_topic, str(time.time() * 1000).encode(), partition=sent % PARTITIONS)
            sent += 1
        producer.poll(0)
        time.sleep(0.005)
    producer.flush(30)
    deadline = time.monotonic() + DRAIN_S
    while len(latencies) < sent and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    reader.join()
    query.stop()
    ordered = sorted(latencies)
    return ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.99)], len(ordered), sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--sink-records", type=int, default=200_000)
    parser.add_argument("--latency-seconds", type=float, default=20)
    parser.add_argument("--rate", type=int, default=200, help="records per second in the latency run")
    args = parser.parse_args()

    subprocess.run(["bash", str(ROOT / "scripts" / "servers" / "kafka.sh"), "start"], check=True)
    from jetconnect.testing import shared_spark_session

    spark = shared_spark_session()
    rows = bench_source(spark, args.records) + bench_sink(spark, args.sink_records)
    p50, p99, seen, sent = bench_latency(spark, args.latency_seconds, args.rate)

    load = os.getloadavg()[0]
    print(f"\nKafka bench: {args.records:,} records read, {args.sink_records:,} written, 100-byte values, "
          f"tansu, Spark local[2], {os.cpu_count()} cores, load average {load:.1f}")
    print(f"{'case':<40} {'raw (s)':>9} {'jetconnect (s)':>15} {'rec/s':>11} {'speed vs raw':>13}")
    for name, raw, ours in rows:
        n = args.records if name.startswith("source") else args.sink_records
        print(f"{name:<40} {raw:>9.2f} {ours:>15.2f} {n / ours:>11,.0f} {raw / ours:>12.2f}x")
    print(f"{'latency Kafka→Kafka, exactly-once':<40} p50 {p50:,.0f} ms, p99 {p99:,.0f} ms "
          f"({seen} records at {args.rate}/s for {args.latency_seconds:.0f} s)")
    if seen < sent:  # the percentiles cover only what arrived
        print(f"  {sent - seen} of {sent} records never reached the read_committed reader within {DRAIN_S} s: "
              f"look for 'otherwise=Some(Committed)' in /tmp/jetconnect-kafka/tansu.log "
              f"(tansu's EndTxn race, integration/kafka/conftest.py)")
    spark.stop()


if __name__ == "__main__":
    sys.exit(main())
