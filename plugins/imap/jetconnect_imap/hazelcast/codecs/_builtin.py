"""Codecs of the protocol's built-in types that the Python client's ``hazelcast.protocol.builtin``
lacks, in its shape: the iteration pointers (``List_Map_Entry_Integer_Integer``, one frame of
int pairs) and a data structure passed back to the member unread (a ``CacheConfigHolder``)."""

from __future__ import annotations

from hazelcast.protocol.builtin import FixSizedTypesCodec
from hazelcast.protocol.client_message import (
    _BEGIN_FRAGMENT_FLAG,
    _END_FRAGMENT_FLAG,
    _IS_FINAL_FLAG,
    SIZE_OF_FRAME_LENGTH_AND_FLAGS,
    InboundMessage,
)
from hazelcast.serialization.bits import INT_SIZE_IN_BYTES, LE_INT, LE_UINT16

_PAIR = 2 * INT_SIZE_IN_BYTES

#: Frames of a data structure as they came: (content, flags) each.
RawFrames = list[tuple[bytes, int]]


class EntryListIntegerIntegerCodec:
    """A list of (int, int) entries in one frame, as Hazelcast's iteration pointers travel."""

    @staticmethod
    def encode(buf: bytearray, entries: list[tuple[int, int]], is_final: bool = False) -> None:
        size = SIZE_OF_FRAME_LENGTH_AND_FLAGS + len(entries) * _PAIR
        frame = bytearray(size)
        LE_INT.pack_into(frame, 0, size)
        if is_final:
            LE_UINT16.pack_into(frame, INT_SIZE_IN_BYTES, _IS_FINAL_FLAG)
        for i, (key, value) in enumerate(entries):
            offset = SIZE_OF_FRAME_LENGTH_AND_FLAGS + i * _PAIR
            FixSizedTypesCodec.encode_int(frame, offset, key)
            FixSizedTypesCodec.encode_int(frame, offset + INT_SIZE_IN_BYTES, value)
        buf.extend(frame)

    @staticmethod
    def decode(msg: InboundMessage) -> list[tuple[int, int]]:
        b = msg.next_frame().buf
        return [
            (FixSizedTypesCodec.decode_int(b, o), FixSizedTypesCodec.decode_int(b, o + INT_SIZE_IN_BYTES))
            for o in range(0, len(b), _PAIR)
        ]


class RawStructureCodec:
    """A nullable data structure kept as its frames, to send back unchanged (what the member
    sends of a cache's configuration, which only the member needs to read)."""

    @staticmethod
    def decode_nullable(msg: InboundMessage) -> RawFrames | None:
        frame = msg.next_frame()
        if frame is None:
            raise ValueError("the message ended where a data structure was due")
        if frame.is_null_frame():
            return None
        if not frame.is_begin_frame():
            raise ValueError("a data structure does not start with a begin frame")
        frames, depth = [(bytes(frame.buf), frame.flags)], 1
        while depth:
            frame = msg.next_frame()
            if frame is None:
                raise ValueError("a data structure is cut short")
            frames.append((bytes(frame.buf), frame.flags))
            if frame.is_begin_frame():
                depth += 1
            elif frame.is_end_frame():
                depth -= 1
        return frames

    @staticmethod
    def encode(buf: bytearray, frames: RawFrames, is_final: bool = False) -> None:
        last = len(frames) - 1
        for i, (content, flags) in enumerate(frames):
            flags &= ~(_IS_FINAL_FLAG | _BEGIN_FRAGMENT_FLAG | _END_FRAGMENT_FLAG)
            if is_final and i == last:
                flags |= _IS_FINAL_FLAG
            header = bytearray(SIZE_OF_FRAME_LENGTH_AND_FLAGS)
            LE_INT.pack_into(header, 0, SIZE_OF_FRAME_LENGTH_AND_FLAGS + len(content))
            LE_UINT16.pack_into(header, INT_SIZE_IN_BYTES, flags)
            buf.extend(header)
            buf.extend(content)


__all__ = ["EntryListIntegerIntegerCodec", "RawFrames", "RawStructureCodec"]
