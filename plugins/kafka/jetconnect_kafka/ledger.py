"""Which micro-batch partitions a query has already committed to Kafka: the sink's ledger.

Every exactly-once write ends its Kafka transaction with one marker record in a small control
topic, ``{"query", "batch", "partition"}``, so the marker is committed if and only if the data
is. When Spark re-delivers a batch after a crash, the writer looks for its marker and skips a
batch that is already in. Markers of one query are written in batch order (Spark starts batch N
only after every task of N-1 finished), so the lookup reads the control topic backwards and stops
at the first of the query's markers older than N.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from jetconnect.retry import Backoff

from jetconnect_kafka import config
from jetconnect_kafka.errors import KafkaSinkError

DEFAULT_TOPIC = "jetconnect_sink_commits"
_WINDOW = 1000  # offsets read per step backwards


def marker(query_id: str, batch_id: int, partition_id: int) -> tuple[bytes, bytes]:
    """Key and value of the record that says ``(query, batch, partition)`` is committed."""
    key = f"{query_id}/{partition_id}".encode()
    value = json.dumps({"query": query_id, "batch": batch_id, "partition": partition_id}).encode()
    return key, value


class Ledger:
    """The control topic (one partition): ensure it exists, look markers up."""

    def __init__(self, client_config: Mapping[str, Any], topic: str, backoff: Backoff) -> None:
        self.config, self.topic, self.backoff = dict(client_config), topic, backoff

    def ensure_topic(self) -> None:
        admin = AdminClient(self.config, logger=config.LIBRDKAFKA_LOG)
        metadata = config.cluster_metadata(admin, f"kafka sink: looking for control topic '{self.topic}'", self.backoff)
        if self.topic in metadata.topics and metadata.topics[self.topic].error is None:
            return
        future = admin.create_topics([NewTopic(self.topic, num_partitions=1, replication_factor=1)])[self.topic]
        try:
            future.result(timeout=self.backoff.deadline)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:  # another task won the race
                raise KafkaSinkError(f"kafka sink: cannot create control topic '{self.topic}': {exc}") from exc

    def committed(self, query_id: str, batch_id: int, partition_id: int) -> bool:
        """Whether a committed transaction holds the marker of ``(query, batch, partition)``.

        Call it after ``init_transactions``: that aborts what a killed attempt left open, and
        until then the open transaction would hide newer markers from a read_committed reader.
        """
        consumer = config.consumer(self.config, **{"isolation.level": "read_committed", "auto.offset.reset": "earliest"})
        try:
            low, high = config.watermarks(consumer, self.topic, 0, f"kafka sink: end of '{self.topic}'", self.backoff)
            upper = high
            while upper > low:
                lower = max(low, upper - _WINDOW)
                found_older = False
                for batch, partition in self._markers(consumer, query_id, lower, upper):
                    if batch == batch_id and partition == partition_id:
                        return True
                    found_older |= batch < batch_id
                if found_older:
                    return False
                upper = lower
            return False
        finally:
            consumer.close()

    def _markers(self, consumer: Any, query_id: str, lower: int, upper: int) -> list[tuple[int, int]]:
        """``(batch, partition)`` of the query's committed markers at offsets ``[lower, upper)``."""
        tp = TopicPartition(self.topic, 0, lower)
        consumer.assign([tp])
        found: list[tuple[int, int]] = []
        position, idle_since = lower, time.monotonic()
        while position < upper:
            messages = consumer.consume(num_messages=_WINDOW, timeout=0.2)
            for m in messages:
                if m.error() is not None:
                    raise KafkaSinkError(f"kafka sink: reading control topic '{self.topic}': {m.error().str()}")
                position = m.offset() + 1
                entry = json.loads(m.value())
                if entry.get("query") == query_id:
                    found.append((entry["batch"], entry["partition"]))
            if messages:
                idle_since = time.monotonic()
            else:  # transaction markers hold offsets no record has
                position = max(position, consumer.position([tp])[0].offset)
                if time.monotonic() - idle_since > self.backoff.deadline:
                    raise KafkaSinkError(f"kafka sink: control topic '{self.topic}' gave no record after offset "
                                         f"{position} (of {upper}) for {self.backoff.deadline:.0f} s")
        return found


__all__ = ["DEFAULT_TOPIC", "Ledger", "marker"]
