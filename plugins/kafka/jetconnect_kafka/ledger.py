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
import threading
import zlib
from collections.abc import Mapping
from typing import Any, NoReturn

from confluent_kafka import KafkaError, KafkaException, Message
from confluent_kafka.admin import NewTopic

from jetconnect.api import Backoff, WriteKey, retry_call
from jetconnect_kafka import config, consumers
from jetconnect_kafka.errors import KafkaSinkError
from jetconnect_kafka.ranges import PartitionRange

DEFAULT_TOPIC = "jetconnect_sink_commits"
#: Partitions of a control topic the sink creates (an existing topic keeps its own count).
CONTROL_PARTITIONS = 16
_WINDOW = 1000  # offsets read per step backwards
#: How long one consume call of a lookup waits for more records (a lookup ran 0.1 s with 50 ms).
_CONSUME_WAIT_S = 0.005
#: Control topics' partition counts this process has seen, by ``(bootstrap.servers, topic)``:
#: asked once per worker, not once per task (a topic's partitions are never removed).
_KNOWN: dict[tuple[str, str], int] = {}
_KNOWN_LOCK = threading.Lock()


def marker(key: WriteKey) -> tuple[bytes, bytes]:
    """Key and value of the record that says ``key`` (query, batch, partition) is committed.

    The format checkpoints already hold: key ``query/partition`` (:attr:`WriteKey.writer`),
    value ``{"query", "batch", "partition"}`` as JSON.
    """
    value = json.dumps({"query": key.query_id, "batch": key.batch_id, "partition": key.partition_id}).encode()
    return key.writer.encode(), value


class Ledger:
    """The control topic: ensure it exists, say where a marker goes, look markers up."""

    def __init__(self, client_config: Mapping[str, Any], topic: str, backoff: Backoff) -> None:
        self.config, self.topic, self.backoff = dict(client_config), topic, backoff
        self.partitions = 0  # known after ensure_topic()

    def ensure_topic(self) -> None:
        """Create the control topic if it is missing, and learn its partition count."""
        known = (str(self.config.get("bootstrap.servers")), self.topic)
        with _KNOWN_LOCK:
            self.partitions = _KNOWN.get(known, 0)
        if self.partitions:
            return
        self._ensure_topic()
        with _KNOWN_LOCK:
            _KNOWN[known] = self.partitions

    def _ensure_topic(self) -> None:
        admin = config.admin(self.config)
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
            self.partitions = retry_call(
                lambda: self._listed_partitions(admin, what, required=True),
                retry_on=(KafkaSinkError,),
                what=what,
                backoff=self.backoff,
            )

    def _listed_partitions(self, admin: config.WatchedAdmin, what: str, required: bool = False) -> int:
        """The control topic's partition count as the broker lists it: 0 if it does not (or raise if ``required``)."""
        listed = config.cluster_metadata(admin, what, self.backoff).topics.get(self.topic)
        if listed is not None and listed.error is None and listed.partitions:
            return len(listed.partitions)
        if required:
            raise KafkaSinkError(f"kafka sink: control topic '{self.topic}' is not listed by the broker yet")
        return 0

    def partition_for(self, key: WriteKey) -> int:
        """The control partition that holds the markers of ``key``'s writer (query, Spark partition)."""
        return zlib.crc32(key.writer.encode()) % self.partitions

    def committed(self, key: WriteKey) -> bool:
        """Whether a committed transaction holds the marker of ``key``.

        Call it after ``init_transactions``: that aborts what a killed attempt left open, and
        until then the open transaction would hide newer markers from a read_committed reader.
        """
        control = self.partition_for(key)
        lease = consumers.borrow(self.config, **{"isolation.level": "read_committed", "auto.offset.reset": "earliest"})
        try:
            found = self._lookup(lease, key, control)
        except BaseException:
            lease.close()
            raise
        lease.give_back()
        return found

    def _lookup(self, lease: consumers.ConsumerLease, key: WriteKey, control: int) -> bool:
        """:meth:`committed`, with ``lease``'s consumer (read_committed) lent for it."""
        low, high = lease.watermarks(self.topic, control, f"kafka sink: end of '{self.topic}'", self.backoff)
        consumer = lease.consumer  # the one that answered
        upper = high
        while upper > low:
            lower = max(low, upper - _WINDOW)
            found_older = False
            for batch, partition in self._markers(consumer, key.query_id, control, lower, upper):
                if batch == key.batch_id and partition == key.partition_id:
                    return True
                found_older |= batch < key.batch_id
            if found_older:
                return False
            upper = lower
        return False

    def _markers(self, consumer: Any, query_id: str, control: int, lower: int, upper: int) -> list[tuple[int, int]]:
        """``(batch, partition)`` of the query's committed markers at offsets ``[lower, upper)`` of ``control``."""

        def failed(error: KafkaError, position: int) -> NoReturn:
            raise KafkaSinkError(
                f"kafka sink: reading control topic '{self.topic}' at offset {position}: {error.str()}"
            )

        def stalled(position: int) -> NoReturn:
            raise KafkaSinkError(
                f"kafka sink: control topic '{self.topic}' gave no record after offset "
                f"{position} (of {upper}) for {self.backoff.deadline:.0f} s"
            )

        found: list[tuple[int, int]] = []
        span = PartitionRange(
            consumer,
            self.topic,
            control,
            lower,
            upper,
            chunk=_WINDOW,
            stall_s=self.backoff.deadline,
            on_error=failed,
            on_stall=stalled,
            # Every other offset of the control topic is a transaction marker, so a consume asked
            # for the window's offsets never fills and waits its whole timeout: keep it short.
            wait_s=_CONSUME_WAIT_S,
        )
        for records in span.chunks():
            for m in records:
                query, batch, partition = self._marker_of(m, control)
                if query == query_id:
                    found.append((batch, partition))
        return found

    def _marker_of(self, record: Message, control: int) -> tuple[str, int, int]:
        """``(query, batch, partition)`` of a marker; a record that is not one is named, not skipped:
        the control topic is then shared with another use, and the lookup cannot be trusted."""
        value = record.value()
        try:
            entry: Any = json.loads(value) if value is not None else {}
            marked = (entry["query"], entry["batch"], entry["partition"])
            if isinstance(marked[0], str) and all(type(n) is int for n in marked[1:]):
                return marked
        except (ValueError, TypeError, KeyError):
            pass
        what = "no value" if value is None else f"{len(value)} bytes that are no marker"
        raise KafkaSinkError(
            f"kafka sink: control topic '{self.topic}' holds a record with {what} at partition {control} "
            f"offset {record.offset()}: is the topic shared with another use? (option 'commit_topic')"
        )


__all__ = ["CONTROL_PARTITIONS", "DEFAULT_TOPIC", "Ledger", "marker"]
