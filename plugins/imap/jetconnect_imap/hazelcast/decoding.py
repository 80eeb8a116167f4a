"""Serialised ``Data`` as Python values, the way the client's serialization service reads them, faster.

A read of a million entries or journal events spends most of its time here, so the two most
common key and value types, String and Long, are decoded in place with ``struct`` (in the
stream byte order the client and the members share, big-endian unless configured otherwise);
a Compact value is kept as its bytes (:class:`~jetconnect_imap.hazelcast.compact.reader.CompactData`),
read by its schema once the type of the column it fills is known, whatever serializers the client
has; every other type goes through the client's own ``to_object``. Journal items are the members'
``DeserializingEventJournal{Map,Cache}Event`` objects (IdentifiedDataSerializable): an int event
type, then key, new value and old value as length-prefixed Data, then a "lost events" flag.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from typing import Any, NamedTuple

from hazelcast.serialization.data import Data

from jetconnect_imap.hazelcast.compact.reader import COMPACT_TYPE_ID, CompactData
from jetconnect_imap.hazelcast.errors import HazelcastProtocolError

_STRING_TYPE, _LONG_TYPE = -11, -8  # SerializationConstants: String and Long, most keys and values
_DATA_SERIALIZABLE_TYPE = -2  # SerializationConstants.CONSTANT_TYPE_DATA_SERIALIZABLE
_IDENTIFIED_FLAG, _VERSIONED_FLAG = 1, 2  # DataSerializableHeader
_BE_INT = struct.Struct(">i")


class WireEvent(NamedTuple):
    """One journal event as the member sent it, its key and values decoded (a named tuple: a read
    makes millions of them, and a frozen dataclass costs three times as much to build)."""

    sequence: int
    type: str
    key: Any
    old_value: Any
    new_value: Any

    def __repr__(self) -> str:  # the values left out, as they may be large
        return f"WireEvent(sequence={self.sequence!r}, type={self.type!r}, key={self.key!r})"


class DataDecoder:
    """Decodes ``Data`` as the client's serialization service would (see the module docstring)."""

    def __init__(self, client: Any) -> None:
        service = client._serialization_service
        order = ">" if getattr(service, "_is_big_endian", True) else "<"
        self._int = struct.Struct(order + "i").unpack_from
        self._long = struct.Struct(order + "q").unpack_from
        self._two_ints = struct.Struct(order + "ii").unpack_from
        self._to_object = service.to_object

    def _at(self, buf: bytes | bytearray, pos: int, end: int) -> Any:
        """The serialized Data ``buf[pos:end]`` (partition hash and type id big-endian, as in
        every Data) as a Python object."""
        type_id = _BE_INT.unpack_from(buf, pos + 4)[0]
        if type_id == _LONG_TYPE and end - pos == 16:
            return self._long(buf, pos + 8)[0]
        if type_id == _STRING_TYPE:
            length = self._int(buf, pos + 8)[0]
            if length >= 0 and pos + 12 + length == end:
                return buf[pos + 12 : end].decode("utf-8")
        if type_id == COMPACT_TYPE_ID:  # read by its schema once its column's type is known
            return CompactData(bytes(buf[pos:end]))
        return self._to_object(Data(bytes(buf[pos:end])))

    def object(self, data: Data | None) -> Any:
        """One Data (a key or value) as a Python object (None stays None)."""
        if data is None:
            return None
        buf = data.buffer
        return self._at(buf, 0, len(buf)) if len(buf) >= 8 else self._to_object(data)

    def _value(self, buf: bytes | bytearray, pos: int) -> tuple[Any, int]:
        """IOUtil.readData at ``pos``: an int length (-1: null), then a whole serialized Data;
        the value and where it ends."""
        size = self._int(buf, pos)[0]
        pos += 4
        if size <= 0:
            return None, pos
        return self._at(buf, pos, pos + size), pos + size


class EventDecoder(DataDecoder):
    """Decodes journal events of one kind (the map's or the cache's event class and type names)."""

    def __init__(self, client: Any, factory_id: int, class_ids: tuple[int, ...], types: Mapping[int, str]) -> None:
        super().__init__(client)
        self.factory_id, self.class_ids, self.types = factory_id, class_ids, types

    def event(self, data: Data, sequence: int) -> WireEvent:
        """One journal event (its trailing "after lost events" flag is read past, not used: the
        sequences say exactly what was lost)."""
        buf = data.buffer
        serializer = _BE_INT.unpack_from(buf, 4)[0] if len(buf) >= 8 else None  # Data.get_type, inline
        if serializer != _DATA_SERIALIZABLE_TYPE:
            raise HazelcastProtocolError(
                f"journal item {sequence} is not a journal event (serializer type {serializer})"
            )
        header = buf[8]  # past the partition hash and the type id
        if not header & _IDENTIFIED_FLAG:
            raise HazelcastProtocolError(f"journal item {sequence} is not an IdentifiedDataSerializable event")
        factory, class_id = self._two_ints(buf, 9)
        if factory != self.factory_id or class_id not in self.class_ids:
            raise HazelcastProtocolError(
                f"journal item {sequence} is factory {factory} class {class_id}, not an event journal event "
                f"({self.factory_id}, {self.class_ids}): a member version this module was not written for?"
            )
        pos = 19 if header & _VERSIONED_FLAG else 17  # past the version's major and minor bytes
        type_id = self._int(buf, pos)[0]
        key, pos = self._value(buf, pos + 4)
        new_value, pos = self._value(buf, pos)
        old_value, pos = self._value(buf, pos)
        return WireEvent(sequence, self.types.get(type_id) or f"UNKNOWN_{type_id}", key, old_value, new_value)


__all__ = ["DataDecoder", "EventDecoder", "WireEvent"]
