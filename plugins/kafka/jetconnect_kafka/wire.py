"""The Schema Registry wire format, as Confluent's serializers frame each key or value.

``0x00`` (the magic byte), the schema id as 4 big-endian bytes, then the payload: the Avro
binary encoding, the JSON text, or for Protobuf the *message indexes* (which message of the
schema's file: a zigzag varint count, then each index as a zigzag varint; the first message,
``[0]``, as the single byte 0) and then the message. Confluent's ``AbstractKafkaSchemaSerDe`` and
confluent-kafka's ``serde.py`` read and write exactly this.
"""

from __future__ import annotations

import struct

MAGIC = 0
#: magic byte and schema id
HEADER = struct.Struct(">bI")


class FrameError(ValueError):
    """Bytes that are not a Schema Registry frame; the message says how."""


def split(value: bytes) -> tuple[int, memoryview]:
    """``(schema id, payload)`` of one framed value."""
    if len(value) < HEADER.size:
        raise FrameError(
            f"value has {len(value)} byte(s), fewer than the 5 of a Schema Registry header "
            f"(magic byte 0 and a 4-byte schema id): not written by a Schema Registry serializer?"
        )
    magic, schema_id = HEADER.unpack_from(value)
    if magic != MAGIC:
        raise FrameError(
            f"value starts with byte {value[0]}, not the Schema Registry magic byte 0: "
            f"not written by a Schema Registry serializer?"
        )
    return schema_id, memoryview(value)[HEADER.size :]


def frame(schema_id: int, payload: bytes) -> bytes:
    """``payload`` behind the header of ``schema_id``."""
    return HEADER.pack(MAGIC, schema_id) + payload


def header(schema_id: int) -> bytes:
    return HEADER.pack(MAGIC, schema_id)


# --- Protobuf message indexes ----------------------------------------------------------------


def _zigzag_varint(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        byte = z & 0x7F
        z >>= 7
        if z:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def message_indexes_bytes(indexes: list[int]) -> bytes:
    """The message indexes as Confluent writes them (``[0]`` as the single byte 0)."""
    if indexes == [0]:
        return b"\x00"
    return _zigzag_varint(len(indexes)) + b"".join(_zigzag_varint(i) for i in indexes)


def read_message_indexes(payload: memoryview) -> tuple[list[int], memoryview]:
    """``(indexes, the message's bytes)`` of a Protobuf payload."""
    position = 0

    def varint() -> int:
        nonlocal position
        shift = result = 0
        while True:
            if position >= len(payload) or shift > 63:
                raise FrameError("the Protobuf message indexes are cut short or too long")
            byte = payload[position]
            position += 1
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7

    count = varint()
    if count == 0:
        return [0], payload[position:]
    if count < 0 or count > 100:
        raise FrameError(f"the Protobuf message indexes say {count} indexes: not a Protobuf frame?")
    indexes = [varint() for _ in range(count)]
    if any(i < 0 for i in indexes):
        raise FrameError(f"negative Protobuf message index in {indexes}")
    return indexes, payload[position:]


__all__ = [
    "HEADER",
    "MAGIC",
    "FrameError",
    "frame",
    "header",
    "message_indexes_bytes",
    "read_message_indexes",
    "split",
]
