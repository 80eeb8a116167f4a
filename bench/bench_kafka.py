"""Benchmark: Kafka, jetconnect vs raw confluent-kafka and vs Spark's own Kafka source and sink, in one
run, against Apache Kafka (scripts/servers/kafka.sh).

Usage: python bench/bench_kafka.py [--records 1000000] [--sink-records 200000] [--latency-seconds 20]
                                   [--rate 200] [--cases source,sink,latency,native] [--repeat 2]

Rows: the source (``--records`` records of 100 bytes, 2 partitions, produced by a batching
producer) vs one raw consumer; the sink in both delivery modes vs one raw idempotent producer,
kept across runs as an application keeps its producer (the sink's workers keep theirs too); and a
Kafka → Kafka pipeline at a steady ``--rate``, exactly-once and at-least-once, end to end
(produced → seen by a read_committed consumer), next to the same pipeline written by hand with
confluent-kafka (a consume → produce loop, one transaction per poll for exactly-once). Each
pipeline is warmed up first (a record per partition goes through: the first micro-batch that reads
starts Spark's Python workers; then 5 s of the steady input, which start the rest), and the first
records' latency and the warm-up's p99 are reported beside the measured figures. For the latency rows "seconds" are the p99 latency; the p50, the goal (p99 < 0.5 s) and
where each micro-batch's time went (Spark's ``durationMs``, medians) are in the note and in
``extra``.

``native``: jetconnect's source and sink next to Spark's own (``spark-sql-kafka-0-10``), in one
SparkSession on the same topics. Spark's connector jars must match PySpark's version exactly and
Maven Central serves them only up to Spark 4.2.0 while the main venv has a newer PySpark, so these
rows run in a child process on PySpark 4.2.0 (``.venv-spark-oldest``, built by ``bash
scripts/setup.sh --spark 4.2.0 .venv-spark-oldest`` when missing), jetconnect's side included, with
the jars of ``bench/spark-kafka/pom.xml`` (cached in ``~/.cache/jetconnect-spark-kafka``) given
through ``spark.jars``. Their note says so. Rows go to ``bench/results/kafka.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import Bench, Row, bench_parser, bench_spark, best_of_turns
from _maven import OLDEST_VENV, maven_jars, pom_version, spark_venv_python
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP = "127.0.0.1:9092"  # Apache Kafka, scripts/servers/kafka.sh
#: Spark's own Kafka connector: its pom, the venv whose PySpark matches it, where its jars are cached.
NATIVE_POM = ROOT / "bench" / "spark-kafka" / "pom.xml"
NATIVE_VENV = OLDEST_VENV
NATIVE_CACHE = Path.home() / ".cache" / "jetconnect-spark-kafka"
PARTITIONS = 2  # local[2]: one Spark task per partition
#: How long a latency run waits, after the last record is produced, for the reader to see them all.
DRAIN_S = 30
#: The measuring reader's longest fetch wait: librdkafka's default (500 ms) would add up to that much
#: to a record that commits while a fetch waits, on both sides alike.
READER_FETCH_WAIT_MS = 10
LATENCY_GOAL_S = 0.5  # #35: p99 < 0.5 s once running
_ADMIN: AdminClient | None = None


def create_topic(partitions: int = PARTITIONS) -> str:
    global _ADMIN
    _ADMIN = _ADMIN or AdminClient({"bootstrap.servers": BOOTSTRAP})
    name = f"bench-{uuid.uuid4().hex[:8]}"
    for future in _ADMIN.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(timeout=30)
    return name


def fill(topic: str, records: int, size: int = 100) -> None:
    """Produce ``records`` values of ``size`` bytes round-robin over the partitions, as an
    application's batching producer does (big batches: 20 ms linger, up to 10,000 records)."""
    producer = Producer(
        {
            "bootstrap.servers": BOOTSTRAP,
            "linger.ms": 20,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 500000,
        }
    )
    payload = b"x" * size
    for i in range(records):
        while True:
            try:
                producer.produce(topic, payload, partition=i % PARTITIONS)
                break
            except BufferError:
                producer.poll(0.05)
    if producer.flush(120):
        raise RuntimeError(f"{topic}: records not delivered within 120 s")


def raw_consume(topic: str, records: int) -> None:
    """One plain consumer reads every record (touching each value)."""
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "bench", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
    seen = total = 0
    while seen < records:
        for m in consumer.consume(20000, timeout=1.0):
            total += len(m.value())
            seen += 1
    consumer.close()


def bench_source(spark, bench: Bench, args) -> None:  # type: ignore[no-untyped-def]
    from jetconnect import sources

    topic = create_topic()
    fill(topic, args.records)
    source = sources.kafka(bootstrap_servers=BOOTSTRAP, topics=[topic])
    projected = sources.kafka(
        bootstrap_servers=BOOTSTRAP, topics=[topic], projection=lambda r: (r.value,), schema="value binary"
    )
    case, by_fn = "source: read 1 topic, 2 partitions", "source: the same, with a projection"
    with bench.measure(case, by_fn):
        raw, ours, function = best_of_turns(
            [
                lambda: raw_consume(topic, args.records),
                lambda: source.read(spark).selectExpr("sum(length(value))").collect(),
                lambda: projected.read(spark).selectExpr("sum(length(value))").collect(),
            ],
            args.repeat,
            args.warmup,
        )
    bench.add(Row(case, ours, raw, target=0.8, extra={"records": args.records}))
    bench.add(
        Row(by_fn, function, raw, note="Jet's projection: a Python call per record", extra={"records": args.records})
    )


def bench_sink(spark, bench: Bench, args) -> None:  # type: ignore[no-untyped-def]
    from pyspark.sql import functions as F

    from jetconnect import sinks

    df = (
        spark.range(args.sink_records)
        .select(F.concat(F.lit("x" * 90), F.col("id").cast("string")).alias("value"))
        .repartition(PARTITIONS)
        .cache()
    )
    df.count()
    values = [r.value.encode() for r in df.collect()]
    # The raw side keeps its producer across runs, as an application does (a new idempotent
    # producer waits ~0.5 s for its producer id; the sink's Python workers keep theirs too).
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, "enable.idempotence": True})

    def raw_produce() -> None:
        topic = create_topic()
        for i, v in enumerate(values):
            while True:
                try:
                    producer.produce(topic, v, partition=i % PARTITIONS)
                    break
                except BufferError:
                    producer.poll(0.05)
        producer.flush(120)

    def ours(delivery: str, **options: Any) -> Callable[[], None]:
        sink = sinks.kafka(
            bootstrap_servers=BOOTSTRAP, topic=create_topic(), value_format="string", delivery=delivery, **options
        )
        return lambda: sink.write(df)

    cases = ["sink: write, at-least-once", "sink: write, exactly-once", "sink: the same, record_fn, at-least-once"]
    with bench.measure(*cases):
        raw, least, exactly, made = best_of_turns(
            [
                raw_produce,
                ours("at-least-once"),
                ours("exactly-once"),
                ours("at-least-once", record_fn=lambda row: (None, row.value)),
            ],
            args.repeat,
            args.warmup,
        )
    extra = {"records": args.sink_records}
    bench.add(Row(cases[0], least, raw, target=0.9, extra=extra))
    bench.add(
        Row(
            cases[1],
            exactly,
            raw,
            extra=extra,
            note="a transaction per Spark partition (2), read_committed readers see it at commit",
        )
    )
    bench.add(Row(cases[2], made, raw, note="Jet's toRecordFn: a Python call per row", extra=extra))
    df.unpersist()


class Latencies:
    """A read_committed consumer of ``topic`` that records, per record, now minus the time in its value."""

    def __init__(self, topic: str) -> None:
        self.topic, self.seen = topic, []  # type: ignore[var-annotated]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        consumer = Consumer(
            {
                "bootstrap.servers": BOOTSTRAP,
                "group.id": "bench",
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": READER_FETCH_WAIT_MS,
            }
        )
        consumer.assign([TopicPartition(self.topic, p, 0) for p in range(PARTITIONS)])
        while not self._stop.is_set():
            for m in consumer.consume(1000, timeout=0.05):
                if m.error() is None:
                    self.seen.append(time.time() - float(m.value()))
        consumer.close()

    def stop(self) -> list[float]:
        self._stop.set()
        self._thread.join()
        return self.seen  # in arrival order


def steady_input(topic: str, seconds: float, rate: int) -> int:
    """Produce the current time at ``rate`` records/s for ``seconds``; returns how many. No linger: a
    latency-minded producer sends at once (at 200/s there is rarely more than one record to batch)."""
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 0})
    started, sent = time.monotonic(), 0
    while time.monotonic() - started < seconds:
        due = int((time.monotonic() - started) * rate)
        while sent < due:
            producer.produce(topic, repr(time.time()).encode(), partition=sent % PARTITIONS)
            sent += 1
        producer.poll(0)
        time.sleep(0.002)
    producer.flush(30)
    return sent


def measure_pipeline(start: Callable[[str, str], Callable[[], None]], seconds: float, rate: int) -> dict[str, Any]:
    """Start a pipeline from a new topic to another, feed it, read its output: latency percentiles
    of the steady window, after the warm-up (whose own figures are returned beside them)."""
    source_topic, target_topic = create_topic(), create_topic()
    stop = start(source_topic, target_topic)  # returns once the pipeline runs
    reader = Latencies(target_topic)
    warm = warm_up(source_topic, reader, rate)
    sent = steady_input(source_topic, seconds, rate)
    expected = warm["records"] + sent
    deadline = time.monotonic() + DRAIN_S
    while len(reader.seen) < expected and time.monotonic() < deadline:
        time.sleep(0.1)
    seen = sorted(reader.stop()[warm["records"] :])
    stop()
    if not seen:
        print(
            f"output topic {target_topic}: nothing reached the read_committed reader; "
            f"input topic {source_topic}: {sent} records sent"
        )
        raise RuntimeError(f"no record reached the reader of {target_topic}")
    return {
        "p50_s": seen[len(seen) // 2],
        "p99_s": _p99(seen),
        "seen": len(seen),
        "sent": sent,
        "first_record_s": warm["first_record_s"],
        "warm_up_p99_s": warm["p99_s"],
    }


def _p99(latencies: list[float]) -> float:
    ordered = sorted(latencies)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


#: Seconds of steady input a pipeline runs before the measured window ("once running"): the first
#: micro-batches under load start more of Spark's Python workers than one record per partition
#: does (1.5 s each, seen as a single slow micro-batch in the first seconds).
WARM_UP_SECONDS = 5


def warm_up(topic: str, reader: Latencies, rate: int) -> dict[str, float]:
    """Send one record per partition and wait until the reader has them: the first micro-batch that
    reads anything starts Spark's Python workers for the read and the write and the sink's
    producers (3-4 s here), a one-off that is not the latency of a running pipeline. Then run the
    steady input for ``WARM_UP_SECONDS`` and wait for it too. Returns how many records that was,
    the slowest first record's latency and the p99 of the steady warm-up records, reported next to
    the measured figures."""
    producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 0})
    for partition in range(PARTITIONS):
        producer.produce(topic, repr(time.time()).encode(), partition=partition)
    producer.flush(30)
    await_seen(reader, PARTITIONS, f"the warm-up records of {topic}")
    time.sleep(1)  # a micro-batch or two with nothing to read, as between records of a steady stream
    records = PARTITIONS + steady_input(topic, WARM_UP_SECONDS, rate)
    await_seen(reader, records, f"the steady warm-up records of {topic}")
    return {
        "records": records,
        "first_record_s": max(reader.seen[:PARTITIONS]),
        "p99_s": _p99(reader.seen[PARTITIONS:records]),
    }


def await_seen(reader: Latencies, count: int, what: str) -> None:
    deadline = time.monotonic() + 300
    while len(reader.seen) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come through in 300 s")
        time.sleep(0.05)


def spark_pipeline(spark, delivery: str, progress: list[dict]) -> Callable[[str, str], Callable[[], None]]:  # type: ignore[no-untyped-def]
    from jetconnect import sinks, sources

    def start(source_topic: str, target_topic: str) -> Callable[[], None]:
        stream = sources.kafka(bootstrap_servers=BOOTSTRAP, topics=[source_topic]).read_stream(spark)
        sink = sinks.kafka(bootstrap_servers=BOOTSTRAP, topic=target_topic, delivery=delivery)
        query = sink.write_stream(
            stream.select("value"),
            checkpoint_location=tempfile.mkdtemp(prefix="bench-kafka-"),
            trigger={"processingTime": "0 seconds"},
        )
        deadline = time.monotonic() + 300  # a loaded machine: the first micro-batch starts Python workers
        while query.lastProgress is None and time.monotonic() < deadline:
            query.awaitTermination(0.5)
        if query.lastProgress is None:
            raise RuntimeError(f"the Spark pipeline finished no micro-batch in 300 s: {query.exception()}")

        def stop() -> None:
            progress.extend(query.recentProgress)
            query.stop()

        return stop

    return start


def raw_pipeline(exactly_once: bool) -> Callable[[str, str], Callable[[], None]]:
    """The same pipeline by hand: a consume → produce loop; exactly-once commits a transaction per poll
    with the consumed offsets in it (Kafka's consume-transform-produce)."""

    def start(source_topic: str, target_topic: str) -> Callable[[], None]:
        stop_event = threading.Event()
        consumer = Consumer(
            {
                "bootstrap.servers": BOOTSTRAP,
                "group.id": f"raw-{uuid.uuid4().hex[:6]}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "fetch.wait.max.ms": READER_FETCH_WAIT_MS,
            }
        )
        consumer.assign([TopicPartition(source_topic, p, 0) for p in range(PARTITIONS)])
        settings = {"transactional.id": f"raw-{uuid.uuid4().hex}"} if exactly_once else {"enable.idempotence": True}
        producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 5, **settings})
        if exactly_once:
            producer.init_transactions(30)

        def run() -> None:
            while not stop_event.is_set():
                messages = [m for m in consumer.consume(1000, timeout=0.05) if m.error() is None]
                if not messages:
                    continue
                if exactly_once:
                    producer.begin_transaction()
                for m in messages:
                    producer.produce(target_topic, m.value(), partition=m.partition())
                if exactly_once:
                    producer.send_offsets_to_transaction(
                        consumer.position(consumer.assignment()), consumer.consumer_group_metadata()
                    )
                    producer.commit_transaction(30)
                else:
                    producer.flush(30)
            consumer.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()

        def stop() -> None:
            stop_event.set()
            thread.join()

        return stop

    return start


def _median_durations(progress: list[dict]) -> dict[str, float]:
    """Median ms of each part of Spark's micro-batches that read something (``durationMs``)."""
    progress = [p for p in progress if p["numInputRows"]]
    parts = sorted({k for p in progress for k in p["durationMs"]})
    return {k: statistics.median(p["durationMs"].get(k, 0) for p in progress) for k in parts}


def spark_floor(spark, seconds: float, rate: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Median ``durationMs`` of a trivial query in this SparkSession: Spark's rate source into the
    noop sink, same trigger, no Python at all. No Kafka pipeline's micro-batch can be shorter."""
    query = (
        spark.readStream.format("rate")
        .option("rowsPerSecond", rate)
        .load()
        .writeStream.format("noop")
        .trigger(processingTime="0 seconds")
        .option("checkpointLocation", tempfile.mkdtemp(prefix="bench-floor-"))
        .start()
    )
    try:
        time.sleep(seconds)
        progress = list(query.recentProgress)
    finally:
        query.stop()
    return _median_durations(progress[1:])  # the first micro-batch plans the query


def bench_latency(spark, bench: Bench, args) -> None:  # type: ignore[no-untyped-def]
    floor = spark_floor(spark, min(args.latency_seconds, 10), args.rate)
    for delivery in ("exactly-once", "at-least-once"):
        case = f"latency Kafka→Kafka {args.rate}/s, {delivery}: p99 s"
        progress: list[dict] = []
        with bench.measure(case):
            ours = measure_pipeline(spark_pipeline(spark, delivery, progress), args.latency_seconds, args.rate)
            raw = measure_pipeline(raw_pipeline(delivery == "exactly-once"), args.latency_seconds, args.rate)
        spent = _median_durations(progress)
        parts = ", ".join(f"{k} {v:.0f}" for k, v in spent.items() if v)
        lost = (
            f"; {ours['sent'] - ours['seen']} of {ours['sent']} never reached the read_committed reader"
            if ours["seen"] < ours["sent"]
            else ""
        )
        note = (
            f"p50 {ours['p50_s'] * 1000:.0f} ms, p99 {ours['p99_s'] * 1000:.0f} ms (goal p99 < {LATENCY_GOAL_S:g} s: "
            f"{'met' if ours['p99_s'] < LATENCY_GOAL_S else 'NOT met'}); by hand p50 {raw['p50_s'] * 1000:.0f} ms; "
            f"median micro-batch ms: {parts}; Spark's floor (rate → noop, same session) "
            f"{floor.get('triggerExecution', 0):.0f} ms a micro-batch; "
            f"first records (cold start) {ours['first_record_s']:.1f} s, p99 of the "
            f"{WARM_UP_SECONDS} s of steady input before the measured window "
            f"{ours['warm_up_p99_s'] * 1000:.0f} ms{lost}"
        )
        bench.add(
            Row(
                case,
                ours["p99_s"],
                raw["p99_s"],
                note=note,
                extra={
                    "ours": ours,
                    "by_hand": raw,
                    "micro_batch_median_ms": spent,
                    "spark_floor_micro_batch_median_ms": floor,
                    "micro_batches": sum(1 for p in progress if p["numInputRows"]),
                    "rate": args.rate,
                    "seconds": args.latency_seconds,
                },
            )
        )


# --- Spark's own Kafka connector (the native rows) ----------------------------------------------


def native_spark_version() -> str:
    """The Spark version of bench/spark-kafka/pom.xml: PySpark must be exactly this one."""
    return pom_version(NATIVE_POM, "spark-sql-kafka-0-10_2.13")


def native_rows(args) -> list[Row]:  # type: ignore[no-untyped-def]
    """Run the native rows in a child process on PySpark ``native_spark_version()`` and return them."""
    version = native_spark_version()
    python = spark_venv_python(version, NATIVE_VENV)
    with tempfile.TemporaryDirectory(prefix="bench-kafka-native-") as out:
        command = [
            str(python), __file__, "--native-child", "--results", out, "--records", str(args.records),
            "--sink-records", str(args.sink_records), "--repeat", str(args.repeat), "--warmup", str(args.warmup),
        ]  # fmt: skip
        subprocess.run(command, check=True)
        rows = json.loads((Path(out) / "kafka-native.json").read_text())["rows"]
    fields = {f for f in Row.__dataclass_fields__}
    return [Row(**{k: v for k, v in row.items() if k in fields}) for row in rows]


def native_child(args) -> None:  # type: ignore[no-untyped-def]
    """The native rows, in this process (PySpark of ``.venv-spark-oldest``): jetconnect and Spark's
    own Kafka source and sink in one SparkSession, on the same topics, taking turns."""
    import pyspark
    from pyspark.sql import functions as F

    from jetconnect import sinks, sources

    version = native_spark_version()
    if pyspark.__version__ != version:
        raise SystemExit(
            f"the native rows need PySpark {version} (bench/spark-kafka/pom.xml), not {pyspark.__version__}"
        )
    jars = maven_jars(NATIVE_POM, NATIVE_CACHE)
    spark = bench_spark("bench-kafka-native", master="local[2]", conf={"spark.jars": ",".join(map(str, jars))})
    on = f"PySpark {version} (.venv-spark-oldest: Maven Central serves spark-sql-kafka only up to {version})"
    with Bench("kafka-native", args, results=args.results, title=f"native rows, {on}") as bench:
        topic = create_topic()
        fill(topic, args.records)
        ours = sources.kafka(bootstrap_servers=BOOTSTRAP, topics=[topic])
        theirs = (
            spark.read.format("kafka")
            .option("kafka.bootstrap.servers", BOOTSTRAP)
            .option("subscribe", topic)
            .option("startingOffsets", "earliest")
            .option("endingOffsets", "latest")
        )
        case = "native source: read 1 topic, 2 partitions, vs Spark's Kafka source"
        with bench.measure(case):
            mine, spark_s = best_of_turns(
                [
                    lambda: ours.read(spark).selectExpr("sum(length(value))").collect(),
                    lambda: theirs.load().selectExpr("sum(length(value))").collect(),
                ],
                args.repeat,
                args.warmup,
            )
        counts = (ours.read(spark).count(), theirs.load().count())
        if counts != (args.records, args.records):
            raise RuntimeError(f"{topic}: jetconnect read {counts[0]}, Spark {counts[1]}, of {args.records} records")
        bench.add(Row(case, mine, spark_s, target=1.0, note=on, extra={"records": args.records}))

        df = (
            spark.range(args.sink_records)
            .select(F.concat(F.lit("x" * 90), F.col("id").cast("string")).alias("value"))
            .repartition(PARTITIONS)
            .cache()
        )
        df.count()

        def ours_sink(delivery: str):  # type: ignore[no-untyped-def]
            sink = sinks.kafka(
                bootstrap_servers=BOOTSTRAP, topic=create_topic(), value_format="string", delivery=delivery
            )
            return lambda: sink.write(df)

        def spark_sink() -> None:
            df.write.format("kafka").option("kafka.bootstrap.servers", BOOTSTRAP).option("topic", create_topic()).save()

        least, exactly = (
            "native sink: write, at-least-once, vs Spark's Kafka sink",
            "native sink: write, exactly-once, vs Spark's Kafka sink (at-least-once)",
        )
        with bench.measure(least, exactly):
            spark_w, mine_least, mine_exactly = best_of_turns(
                [spark_sink, ours_sink("at-least-once"), ours_sink("exactly-once")], args.repeat, args.warmup
            )
        extra = {"records": args.sink_records}
        bench.add(Row(least, mine_least, spark_w, target=1.0, note=on, extra=extra))
        bench.add(Row(exactly, mine_exactly, spark_w, note="Spark's sink has no exactly-once mode; " + on, extra=extra))
        df.unpersist()
    spark.stop()


def main() -> None:
    parser = bench_parser(__doc__, repeat=2)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--sink-records", type=int, default=200_000)
    parser.add_argument("--latency-seconds", type=float, default=20)
    parser.add_argument("--rate", type=int, default=200, help="records per second in the latency runs")
    parser.add_argument("--cases", default="source,sink,latency,native", help="which groups of rows to run")
    parser.add_argument("--native-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.native_child:
        native_child(args)
        return
    cases = set(args.cases.split(","))

    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run(["bash", str(ROOT / "scripts" / "servers" / "kafka.sh"), "start"], check=True, env=env)
    title = (
        f"Apache Kafka 4, Spark local[2]; {args.records:,} records read, {args.sink_records:,} written (100 bytes), "
        f"latency at {args.rate}/s for {args.latency_seconds:.0f} s"
    )
    with Bench("kafka", args, results=args.results, title=title) as bench:
        if cases & {"source", "sink", "latency"}:
            spark = bench_spark("bench-kafka", master="local[2]")
            if "source" in cases:
                bench_source(spark, bench, args)
            if "sink" in cases:
                bench_sink(spark, bench, args)
            if "latency" in cases:
                bench_latency(spark, bench, args)
            spark.stop()
        if "native" in cases:
            for row in native_rows(args):
                bench.add(row)


if __name__ == "__main__":
    main()
