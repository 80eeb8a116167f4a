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

from confluent_kafka import Consumer, KafkaException

from jetconnect_kafka import config
from jetconnect_kafka.idle_pool import IdlePool, Key, settings_key

#: Idle consumers one worker keeps (each holds threads and a socket); the least recently used goes.
MAX_IDLE = 8


class ConsumerLease:
    """A consumer for manual assignment (:func:`jetconnect_kafka.config.consumer`) lent to one read."""

    def __init__(self, key: Key, consumer: Consumer) -> None:
        self.key, self.consumer = key, consumer

    def give_back(self) -> None:
        """Return the consumer to this worker's pool, unassigned: only after a read that ended cleanly."""
        try:
            self.consumer.unassign()
        except (KafkaException, RuntimeError):  # closed, or its broker gone: of no use to the next read
            self.close()
            return
        _POOL.keep(self.key, self)

    def close(self) -> None:
        try:
            self.consumer.close()
        except RuntimeError:  # closed already
            pass


_POOL: IdlePool[ConsumerLease] = IdlePool(MAX_IDLE, ConsumerLease.close)


def borrow(client_config: Mapping[str, Any], **overrides: Any) -> ConsumerLease:
    """A consumer with exactly these settings: an idle one of this worker if it has one."""
    key = settings_key({**client_config, **overrides})
    return _POOL.take(key) or ConsumerLease(key, config.consumer(client_config, **overrides))


def drop_idle() -> int:
    """Close every idle consumer of this process; returns how many (see producers.drop_idle)."""
    return _POOL.drop_all()


def idle_count() -> int:
    """How many consumers wait in this worker's pool."""
    return len(_POOL)


__all__ = ["MAX_IDLE", "ConsumerLease", "borrow", "drop_idle", "idle_count"]
