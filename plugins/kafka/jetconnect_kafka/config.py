"""librdkafka configuration from jetconnect options, and clients that wait for a broker.

Extra keyword arguments of ``sources.kafka`` / ``sinks.kafka`` are librdkafka settings: dotted
names as Spark options (``.option("security.protocol", "SSL")``, or with Spark's ``kafka.``
prefix), underscores for Python keywords (``security_protocol="SSL"``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, ClusterMetadata

from jetconnect.api import Backoff, retry_call

#: A legal Kafka topic name (Kafka's ``Topic.validate``: at most 249 of these characters), matched whole.
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]{1,249}")
TOPIC_NAME_IS = "a Kafka topic name (letters, digits, '.', '_' and '-', at most 249)"

#: How long a client keeps retrying an unreachable broker before the error reaches the user.
DEFAULT_BACKOFF = Backoff(initial=0.1, maximum=2.0, deadline=30.0)
#: librdkafka's own log lines (one per failed connection attempt) go here, not to stderr; the
#: errors that matter reach the user as exceptions naming what failed.
LIBRDKAFKA_LOG = logging.getLogger("jetconnect_kafka.librdkafka")
LIBRDKAFKA_LOG.addHandler(logging.NullHandler())


def client_config(bootstrap_servers: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    """librdkafka settings: ``bootstrap.servers`` plus the user's extra settings, normalised."""
    config: dict[str, Any] = {"bootstrap.servers": bootstrap_servers}
    for key, value in extra.items():
        name = key[len("kafka.") :] if key.lower().startswith("kafka.") else key
        config[name.replace("_", ".")] = value
    return config


def consumer(config: Mapping[str, Any], **overrides: Any) -> Consumer:
    """A consumer for manual assignment: no group membership, nothing committed to the broker."""
    settings = {
        "group.id": "jetconnect",  # required by librdkafka, unused: partitions are assigned by hand
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "enable.partition.eof": False,
        **config,
        **overrides,
    }
    return Consumer(settings, logger=LIBRDKAFKA_LOG)


def producer(config: Mapping[str, Any], **overrides: Any) -> Producer:
    return Producer({**config, **overrides}, logger=LIBRDKAFKA_LOG)


def cluster_metadata(
    admin_or_consumer: AdminClient | Consumer, what: str, backoff: Backoff = DEFAULT_BACKOFF
) -> ClusterMetadata:
    """Topic metadata, retried with backoff while the broker does not answer."""
    timeout = min(5.0, backoff.deadline)
    return retry_call(
        lambda: admin_or_consumer.list_topics(timeout=timeout), retry_on=(KafkaException,), what=what, backoff=backoff
    )


__all__ = ["DEFAULT_BACKOFF", "client_config", "cluster_metadata", "consumer", "producer"]
