"""Fixtures for the Kafka tests: the brokers from scripts/servers/, fresh topics, producers as users run them.

Test data is produced the way users produce it: by confluent-kafka producers with librdkafka's
defaults (``linger.ms`` 5, several records per batch) and, in one test, by kcat, the standard
command-line client (Debian's, librdkafka 2.0.2, installed by scripts/servers/noida-kafka.sh).

``kafka``, the default broker, is noida-db (scripts/servers/noida-kafka.sh): it keeps the
semantics the tests check. ``tansu`` (scripts/servers/kafka.sh) starts in 0.1 s but gets them
wrong (docs/ARCHITECTURE.md section 5), so it is kept only where that is what a test checks:

- its high watermark is the base offset of the last record *batch* + 1, so 100 records a
  batching producer sent in one batch look like 1. Kept for the regression test of that
  (test_watermark.py, the only test on tansu besides test_kcat.py's check of the next point):
  the source must refuse to read such a partition with
  ``KafkaWatermarkError`` naming the broker, never return 1 record of 100 without a word.
  Everywhere else this would make a test either fail on tansu or pass only because its data
  came in batches of one, which is how this defect stayed hidden.
- kcat (librdkafka 2.0.2) cannot even fetch its metadata (ApiVersion request: read underflow).
- ``offsets_for_times`` answers offset 0; records of aborted transactions are visible to
  read_committed consumers; it cannot add partitions to a topic.
- tansu 0.6.0 loses an EndTxn race now and then: while transaction A's EndTxn writes its markers,
  B's EndTxn may resolve A as committed, and A's remaining markers then give its committed state
  fresh offset ranges that nothing ever clears (``DynoStore::txn_end``, which logs
  ``otherwise=Some(Committed)`` at WARN). From then on every later transaction on those
  partitions stays "prepared" and the last stable offset never moves again. Six plain
  confluent-kafka producers committing 50 transactions each to one topic hit it about once in
  eight runs; noida-db never did in twenty. :meth:`Kafka.check_stable` turns a held-back
  partition into a failure that names it.

Moving the tests to noida-db cost little: their time is Spark's, not the broker's (the figures,
test by test, are in plugins/kafka/README.md, Tests).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Sequence

import pytest
from confluent_kafka import Consumer, IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

TANSU = "127.0.0.1:9092"
NOIDA = "127.0.0.1:9094"


class Kafka:
    """A test broker: make topics, produce test records, read a topic back."""

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.admin = AdminClient({"bootstrap.servers": bootstrap})

    def topic(self, partitions: int = 1, prefix: str = "t") -> str:
        """A new topic with ``partitions`` partitions (tansu cannot add partitions later)."""
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        for future in self.admin.create_topics([NewTopic(name, partitions, 1)]).values():
            future.result(timeout=30)
        return name

    def produce(
        self,
        topic: str,
        values: Iterable[bytes | str],
        partitions: int = 1,
        key: bool = True,
        headers: Sequence[tuple[str, bytes]] | None = None,
    ) -> int:
        """Record ``i`` goes to partition ``i % partitions``, by a producer with librdkafka's defaults.

        The defaults batch: records produced within ``linger.ms`` (5 ms) of each other share a
        record batch, as in any real application. Returns the count.
        """
        producer = Producer({"bootstrap.servers": self.bootstrap})
        n = 0
        for i, value in enumerate(values):
            value = value.encode() if isinstance(value, str) else value
            producer.produce(
                topic,
                value=value,
                key=str(i).encode() if key else None,
                partition=i % partitions,
                headers=list(headers) if headers else None,
            )
            n += 1
            if n % 1000 == 0:
                producer.poll(0)
        assert producer.flush(30) == 0
        return n

    def kcat(self, *args: str, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run kcat, the standard Kafka command-line client, against this broker; fail if it fails (``check``)."""
        kcat = shutil.which("kcat") or shutil.which("kafkacat")
        if kcat is None:
            missing = "kcat is not installed (scripts/servers/noida-kafka.sh installs Debian's kcat as root)"
            if os.environ.get("CI", "").lower() == "true":
                pytest.fail(missing)
            pytest.skip(missing)
        result = subprocess.run(
            [kcat, "-b", self.bootstrap, *args], input=input, capture_output=True, text=True, timeout=120
        )
        assert not check or result.returncode == 0, (
            f"kcat {' '.join(args)} exited {result.returncode}: {result.stderr[-2000:]}"
        )
        return result

    def check_stable(self, topic: str, timeout: float = 10.0) -> None:
        """Fail, naming the partition, if records of ``topic`` stay behind an unfinished transaction."""
        parts = sorted(self.admin.list_topics(topic, timeout=10).topics[topic].partitions)
        deadline = time.monotonic() + timeout
        while True:
            stable = self.ends(topic, parts, IsolationLevel.READ_COMMITTED)
            high = self.ends(topic, parts)
            behind = {p: (stable[p], high[p]) for p in parts if stable[p] < high[p]}
            if not behind:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"topic {topic}: records behind a transaction the broker has not finished after {timeout:.0f} s "
                    f"(partition: (last stable offset, high watermark)): {behind}"
                )
            time.sleep(0.2)

    def ends(
        self, topic: str, parts: Sequence[int], isolation: IsolationLevel = IsolationLevel.READ_UNCOMMITTED
    ) -> dict[int, int]:
        """The end the broker reports for each partition: the high watermark, or the last stable offset."""
        futures = self.admin.list_offsets(
            {TopicPartition(topic, p): OffsetSpec.latest() for p in parts},
            isolation_level=isolation,
            request_timeout=10,
        )
        return {tp.partition: future.result().offset for tp, future in futures.items()}

    def read_all(self, topic: str, read_committed: bool = True) -> list[tuple[int, int, bytes | None, bytes | None]]:
        """Every record of ``topic`` as ``(partition, offset, key, value)``, read by a plain consumer.

        A read_committed read first checks that no transaction holds records of the topic back.
        """
        if read_committed:
            self.check_stable(topic)
        consumer = Consumer(
            {
                "bootstrap.servers": self.bootstrap,
                "group.id": "jetconnect-tests",
                "enable.auto.commit": False,
                "isolation.level": "read_committed" if read_committed else "read_uncommitted",
            }
        )
        try:
            parts = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
            ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in parts}
            consumer.assign([TopicPartition(topic, p, 0) for p in parts])
            records = []
            done: set[int] = {p for p, end in ends.items() if end == 0}
            idle = 0
            while len(done) < len(parts) and idle < 50:
                messages = consumer.consume(1000, timeout=0.2)
                idle = 0 if messages else idle + 1
                for m in messages:
                    assert m.error() is None, m.error()
                    records.append((m.partition(), m.offset(), m.key(), m.value()))
                for tp in consumer.position([TopicPartition(topic, p) for p in parts if p not in done]):
                    if tp.offset >= ends[tp.partition]:
                        done.add(tp.partition)
            return records
        finally:
            consumer.close()


@pytest.fixture(scope="session")
def kafka(server) -> Kafka:  # type: ignore[no-untyped-def]
    """The default broker: noida-db (see the module docstring)."""
    server("noida-kafka")
    return Kafka(NOIDA)


@pytest.fixture(scope="session")
def tansu(server) -> Kafka:  # type: ignore[no-untyped-def]
    """tansu, only for what the module docstring says it is right for."""
    server("kafka")
    return Kafka(TANSU)


@pytest.fixture
def available_now(spark, tmp_path) -> Callable[[object], tuple[list, list[int]]]:  # type: ignore[no-untyped-def]
    """Run a streaming DataFrame to the end of what is there (AvailableNow) into a memory table.

    Returns its rows and the sizes of its non-empty micro-batches; a failed query raises.
    """

    def run(df):  # type: ignore[no-untyped-def]
        name = f"q_{uuid.uuid4().hex[:8]}"
        query = (
            df.writeStream.format("memory")
            .queryName(name)
            .option("checkpointLocation", str(tmp_path / name))
            .trigger(availableNow=True)
            .start()
        )
        assert query.awaitTermination(240), f"query {name} did not finish in 240 s"
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        return spark.table(name).collect(), sizes

    return run
