"""Kafka's typed errors: each names the topic, partition and offset (or option) at fault."""

from __future__ import annotations

from jetconnect.errors import OffsetError, SinkError, SourceError


class KafkaSourceError(SourceError):
    """Reading Kafka failed: a record that cannot be decoded, a broker that does not answer."""


class KafkaOffsetError(KafkaSourceError, OffsetError):
    """A checkpointed offset is outside what the broker holds: the topic was deleted or recreated."""


class KafkaWatermarkError(KafkaSourceError):
    """A broker served records past the high watermark it reported, or reported one it cannot fill.

    An exact read trusts the watermark as the end of what exists: a broker that breaks it would
    make a read skip records without a word, so the read stops and names the broker instead.
    """


class KafkaSinkError(SinkError):
    """Writing to Kafka failed: a row that cannot be serialised, a transaction that did not commit."""


__all__ = ["KafkaOffsetError", "KafkaSinkError", "KafkaSourceError", "KafkaWatermarkError"]
