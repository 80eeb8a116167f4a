"""Which micro-batch partitions a query has already committed to Kafka: the sink's ledger.

Every exactly-once write ends its Kafka transaction with one marker record in a small control
topic, ``{"query", "batch", "partition"}``, so the marker is committed if and only if the data
is. When Spark re-delivers a batch after a crash, the writer looks for its marker and skips a
batch that is already in. The markers of one ``(query, Spark partition)`` always go to the same
control partition, in batch order (Spark starts batch N only after every task of N-1 finished),
so the lookup reads that partition backwards and stops at the first of its markers older than N.

The control topic has :data:`CONTROL_PARTITIONS` partitions so that writers rarely share one: a
transaction left open by a killed writer holds back read_committed readers of its partitions (the
last stable offset) until it is aborted, and every lookup on a partition it shares would wait.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from jetconnect.retry import Backoff, retry_call

from jetconnect_kafka import config
from jetconnect_kafka.errors import KafkaSinkError

DEFAULT_TOPIC = "jetconnect_sink_commits"
#: Partitions of a control topic the sink creates (an existing topic keeps its own count).
CONTROL_PARTITIONS = 16
_WINDOW = 1000  # offsets read per step backwards


def _marker_key(query_id: str, partition_id: int) -> bytes:
    return f"{query_id}/{partition_id}".encode()


def marker(query_id: str, batch_id: int, partition_id: int) -> tuple[bytes, bytes]:
    """Key and value of the record that says ``(query, batch, partition)`` is committed."""
    key = _marker_key(query_id, partition_id)
    value = json.dumps({"query": query_id, "batch": batch_id, "partition": partition_id}).encode()
    return key, value


class Ledger:
    """The control topic: ensure it exists, say where a marker goes, look markers up."""

    def __init__(self, client_config: Mapping[str, Any], topic: str, backoff: Backoff) -> None:
        self.config, self.topic, self.backoff = dict(client_config), topic, backoff
        self.partitions = 0  # known after ensure_topic()

    def ensure_topic(self) -> None:
        """Create the control topic if it is missing, and learn its partition count."""
        admin = AdminClient(self.config, logger=config.LIBRDKAFKA_LOG)
        what = f"kafka sink: looking for control topic '{self.topic}'"
        self.partitions = self._listed_partitions(admin, what)
        if self.partitions:
            return
        new = NewTopic(self.topic, num_partitions=CONTROL_PARTITIONS, replication_factor=1)
        try:
            admin.create_topics([new])[self.topic].result(timeout=self.backoff.deadline)
            self.partitions = CONTROL_PARTITIONS
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise KafkaSinkError(f"kafka sink: cannot create control topic '{self.topic}': {exc}") from exc
            # Another task created it a moment ago: wait until the broker lists its partitions.
            self.partitions = retry_call(lambda: self._listed_partitions(admin, what, required=True),
                                         retry_on=(KafkaSinkError,), what=what, backoff=self.backoff)

    def _listed_partitions(self, admin: AdminClient, what: str, required: bool = False) -> int:
        """The control topic's partition count as the broker lists it: 0 if it does not (or raise if ``required``)."""
        listed = config.cluster_metadata(admin, what, self.backoff).topics.get(self.topic)
        if listed is not None and listed.error is None and listed.partitions:
            return len(listed.partitions)
        if required:
            raise KafkaSinkError(f"kafka sink: control topic '{self.topic}' is not listed by the broker yet")
        return 0

    def partition_for(self, query_id: str, partition_id: int) -> int:
        """The control partition that holds the markers of ``(query, Spark partition)``."""
        return zlib.crc32(_marker_key(query_id, partition_id)) % self.partitions

    def committed(self, query_id: str, batch_id: int, partition_id: int) -> bool:
        """Whether a committed transaction holds the marker of ``(query, batch, partition)``.

        Call it after ``init_transactions``: that aborts what a killed attempt left open, and
        until then the open transaction would hide newer markers from a read_committed reader.
        """
        control = self.partition_for(query_id, partition_id)
        consumer = config.consumer(self.config, **{"isolation.level": "read_committed", "auto.offset.reset": "earliest"})
        try:
            low, high = config.watermarks(consumer, self.topic, control, f"kafka sink: end of '{self.topic}'", self.backoff)
            upper = high
            while upper > low:
                lower = max(low, upper - _WINDOW)
                found_older = False
                for batch, partition in self._markers(consumer, query_id, control, lower, upper):
                    if batch == batch_id and partition == partition_id:
                        return True
                    found_older |= batch < batch_id
                if found_older:
                    return False
                upper = lower
            return False
        finally:
            consumer.close()

    def _markers(self, consumer: Any, query_id: str, control: int, lower: int, upper: int) -> list[tuple[int, int]]:
        """``(batch, partition)`` of the query's committed markers at offsets ``[lower, upper)`` of ``control``."""
        tp = TopicPartition(self.topic, control, lower)
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


__all__ = ["CONTROL_PARTITIONS", "DEFAULT_TOPIC", "Ledger", "marker"]
