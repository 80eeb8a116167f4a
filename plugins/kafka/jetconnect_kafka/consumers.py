"""Consumers kept for the life of a Python worker, lent to one range read or ledger lookup at a time.

A new consumer opened a range read in about 10 ms, but now and then in 0.7 s (5 of 60 range reads
of a traced 15 s Kafka → Kafka pipeline here; the exactly-once sink's ledger lookups alike): its
first request waits for librdkafka's retry timer when the connection to the partition's leader is
not up yet. Those were most of the pipeline's p99 latency. A kept consumer has its connections and
metadata. One is given back only by a read that ended cleanly, and unassigned first, so an idle
consumer fetches nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from jetconnect.api import Backoff
from jetconnect_kafka import config
from jetconnect_kafka.idle_pool import IdlePool, Key, settings_key
from jetconnect_kafka.refusals import Watch

#: Idle consumers one worker keeps (each holds threads and a socket); the least recently used goes.
MAX_IDLE = 8
#: Errors that say the broker is out of reach, not that a consumer's view of it is wrong: a new
#: consumer would meet the same, only later (its first request waits for a connection).
_UNREACHABLE = frozenset({KafkaError._ALL_BROKERS_DOWN, KafkaError._TRANSPORT, KafkaError._TIMED_OUT})


class RenewableConsumer:
    """A consumer for manual assignment (:func:`jetconnect_kafka.config.consumer`), made on first use
    and made anew after a watermark query of it fails with an answer from its own view.

    A kept consumer can stay stuck after its broker restarts: in a 20-kill soak (2026-11-27) one
    answered every watermark query with "Local: Unknown partition" for the 240 s its read retried,
    long after the broker was back. (A kept consumer tried by hand across the same broker SIGKILL
    and restart recovered at once, so that state does not come on demand.) A retry after such an
    answer therefore asks a new consumer, which starts from fresh metadata.
    """

    def __init__(self, settings: Mapping[str, Any], first_contact: bool = True) -> None:
        self.settings = dict(settings)
        #: Whether a new consumer makes first contact (:func:`.config.contact`) before it is used;
        #: without it, its first request is a sliced watermark query (:meth:`watermarks`).
        self.first_contact = first_contact
        self._consumer: config.WatchedConsumer | None = None
        #: How many consumers a failed request replaced (for tests and logs).
        self.renewals = 0

    @property
    def consumer(self) -> config.WatchedConsumer:
        if self._consumer is None:
            self._consumer = config.consumer(self.settings, first_contact=self.first_contact)
        return self._consumer

    def renew(self) -> None:
        """Close the consumer: the next use makes a new one with the same settings."""
        self.close()
        self._consumer = None
        self.renewals += 1

    def close(self) -> None:
        """Close the consumer for good (it then raises ``RuntimeError`` on use, as librdkafka's do)."""
        if self._consumer is not None:
            try:
                self._consumer.close()
            except RuntimeError:  # closed already
                pass

    def watermarks(
        self, topic: str, partition: int, what: str, backoff: Backoff = config.DEFAULT_BACKOFF
    ) -> tuple[int, int]:
        """``(low, high)`` offsets of one partition, retried with backoff; after an answer that may
        come from this consumer's own view (an unknown partition, a broker handle gone), on a new one."""
        timeout = min(5.0, backoff.deadline)

        tp = TopicPartition(topic, partition)

        def attempt() -> tuple[int, int]:
            consumer = self.consumer  # unassigned here: a poll between slices serves its reports, fetches nothing
            try:
                low, high = config.sliced(consumer, lambda t: consumer.get_watermark_offsets(tp, timeout=t), timeout)
            except config.Refused:
                self.renew()  # closed before the refusal is looked into; not retried
                consumer.watch.raise_if_refused()
                raise
            except KafkaException as exc:
                if exc.args[0].code() not in _UNREACHABLE:
                    self.renew()
                raise
            return low, high

        return config.retried(self, attempt, what, backoff)

    @property
    def watch(self) -> Watch:
        """The current consumer's reports (:class:`~jetconnect_kafka.refusals.Watch`)."""
        return self.consumer.watch

    def poll(self, timeout: float) -> None:
        """Serve the current consumer's reports; only for a consumer that is not assigned."""
        self.consumer.poll(timeout)


class ConsumerLease(RenewableConsumer):
    """A consumer lent to one read by this worker's pool, with the settings ``key`` stands for."""

    def __init__(self, key: Key, settings: Mapping[str, Any]) -> None:
        super().__init__(settings, first_contact=False)  # its first request, a watermark query, is sliced
        self.key = key

    def give_back(self) -> None:
        """Return the consumer to this worker's pool, unassigned: only after a read that ended cleanly."""
        if self._consumer is None:
            return
        try:
            self._consumer.unassign()
        except (KafkaException, RuntimeError):  # closed, or its broker gone: of no use to the next read
            self.close()
            return
        _POOL.keep(self.key, self)


_POOL: IdlePool[ConsumerLease] = IdlePool(MAX_IDLE, ConsumerLease.close)


def borrow(client_config: Mapping[str, Any], **overrides: Any) -> ConsumerLease:
    """A consumer with exactly these settings: an idle one of this worker if it has one."""
    settings = {**client_config, **overrides}
    key = settings_key(settings)
    return _POOL.take(key) or ConsumerLease(key, settings)


def drop_idle() -> int:
    """Close every idle consumer of this process; returns how many (see producers.drop_idle)."""
    return _POOL.drop_all()


def idle_count() -> int:
    """How many consumers wait in this worker's pool."""
    return len(_POOL)


__all__ = ["MAX_IDLE", "ConsumerLease", "RenewableConsumer", "borrow", "drop_idle", "idle_count"]
