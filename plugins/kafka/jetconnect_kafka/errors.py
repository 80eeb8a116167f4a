"""Kafka's typed errors: each names the topic, partition and offset (or option) at fault."""

from __future__ import annotations

from jetconnect.errors import OffsetError, SinkError, SourceError


class KafkaSourceError(SourceError):
    """Reading Kafka failed: a record that cannot be decoded, a broker that does not answer."""


class KafkaOffsetError(KafkaSourceError, OffsetError):
    """A checkpointed offset is outside what the broker holds: the topic was deleted or recreated."""


class KafkaSinkError(SinkError):
    """Writing to Kafka failed: a row that cannot be serialised, a transaction that did not commit."""


class KafkaRegistryError(KafkaSourceError, KafkaSinkError):
    """The Schema Registry refused or did not answer (a read and a write alike ask it): the message
    names the registry, the subject or schema id, and what it said."""


__all__ = ["KafkaOffsetError", "KafkaRegistryError", "KafkaSinkError", "KafkaSourceError"]
