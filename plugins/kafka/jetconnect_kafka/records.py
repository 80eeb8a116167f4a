"""Records as Jet's Kafka functions see them: what a source ``projection`` is given, and what a
sink ``record_fn`` returns (Jet's ``ConsumerRecord`` and ``ProducerRecord``, in Python)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jetconnect_kafka.errors import KafkaSinkError


@dataclass(frozen=True)
class ConsumerRecord:
    """One record read, its key and value decoded as ``key_format``/``value_format`` say
    (bytes by default); ``timestamp_ms`` None when the record has none."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None
    key: Any
    value: Any
    headers: Sequence[tuple[str, bytes | None]] = ()


@dataclass(frozen=True)
class ProducerRecord:
    """One record to send; ``topic`` None means the sink's ``topic`` option, ``partition`` None
    lets the partitioner choose. A str key or value is sent as UTF-8."""

    value: Any
    key: Any = None
    topic: str | None = None
    partition: int | None = None
    headers: Sequence[tuple[str, bytes | str | None]] = field(default_factory=tuple)


def as_producer_record(made: Any, where: str) -> ProducerRecord:
    """What a ``record_fn`` returned, as a :class:`ProducerRecord`: the record itself, a mapping of
    its fields, or a ``(key, value)`` pair; anything else is a :class:`KafkaSinkError` naming ``where``."""
    if isinstance(made, ProducerRecord):
        return made
    if isinstance(made, Mapping):
        unknown = set(made) - {"value", "key", "topic", "partition", "headers"}
        if "value" not in made or unknown:
            raise KafkaSinkError(
                f"kafka sink: record_fn returned a mapping with keys {sorted(map(str, made))} for "
                f"{where}; it needs 'value' and may have key, topic, partition, headers"
            )
        return ProducerRecord(**made)
    if isinstance(made, tuple) and len(made) == 2:
        return ProducerRecord(key=made[0], value=made[1])
    raise KafkaSinkError(
        f"kafka sink: record_fn returned {type(made).__name__} for {where}; return a "
        f"ProducerRecord, a mapping with 'value', or a (key, value) pair"
    )


def wire_bytes(value: Any, what: str, where: str) -> bytes | None:
    """A key or value as Kafka carries it: bytes as they are, str as UTF-8, None as null."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode()
    raise KafkaSinkError(
        f"kafka sink: record_fn gave a {what} of type {type(value).__name__} for {where}; "
        f"give bytes or str (encode it: json.dumps(...), an Avro writer, ...)"
    )


__all__ = ["ConsumerRecord", "ProducerRecord", "as_producer_record", "wire_bytes"]
