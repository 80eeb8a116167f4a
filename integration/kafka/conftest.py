"""Fixtures for the Kafka tests: the tansu broker from scripts/servers/kafka.sh, fresh topics.

Test data is produced one record per batch: tansu's high watermark is the base offset of the
last *batch* + 1 (tansu defect, shared/DESIGN.md section 5), which is right only for batches of one.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

BOOTSTRAP = "127.0.0.1:9092"


class Kafka:
    """The test broker: make topics, produce test records, read a topic back."""

    bootstrap = BOOTSTRAP

    def __init__(self) -> None:
        self.admin = AdminClient({"bootstrap.servers": BOOTSTRAP})

    def topic(self, partitions: int = 1, prefix: str = "t") -> str:
        """A new topic with ``partitions`` partitions (tansu cannot add partitions later)."""
        name = f"{prefix}-{uuid.uuid4().hex[:10]}"
        for future in self.admin.create_topics([NewTopic(name, partitions, 1)]).values():
            future.result(timeout=30)
        return name

    def produce(self, topic: str, values: Iterable[bytes | str], partitions: int = 1,
                key: bool = True, headers: Sequence[tuple[str, bytes]] | None = None) -> int:
        """Record ``i`` goes to partition ``i % partitions``, one record per batch; returns the count."""
        producer = Producer({"bootstrap.servers": BOOTSTRAP, "linger.ms": 0, "batch.num.messages": 1})
        n = 0
        for i, value in enumerate(values):
            value = value.encode() if isinstance(value, str) else value
            producer.produce(topic, value=value, key=str(i).encode() if key else None,
                             partition=i % partitions, headers=list(headers) if headers else None)
            n += 1
            if n % 1000 == 0:
                producer.poll(0)
        assert producer.flush(30) == 0
        return n

    def read_all(self, topic: str, read_committed: bool = True) -> list[tuple[int, int, bytes | None, bytes | None]]:
        """Every record of ``topic`` as ``(partition, offset, key, value)``, read by a plain consumer."""
        consumer = Consumer({
            "bootstrap.servers": BOOTSTRAP, "group.id": "jetconnect-tests", "enable.auto.commit": False,
            "isolation.level": "read_committed" if read_committed else "read_uncommitted",
        })
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
    server("kafka")
    return Kafka()
