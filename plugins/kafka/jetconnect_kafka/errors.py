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


class KafkaSecurityError(KafkaSourceError, KafkaSinkError):
    """A broker refused this client: its credentials, its certificates or its protocol. Not retried.

    ``kind`` is one of ``authentication refused``, ``certificate not trusted``, ``client
    certificate refused``, ``wrong protocol``; the message gives librdkafka's reason and what to check.
    """

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


__all__ = ["KafkaOffsetError", "KafkaRegistryError", "KafkaSecurityError", "KafkaSinkError", "KafkaSourceError"]
