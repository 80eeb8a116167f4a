"""``Map.putAll`` of pairs already serialised (the bytes of each key's and value's ``Data``): the
message the client's ``map_put_all_codec.encode_request`` makes of the same pairs, framed with
one join instead of two ``bytearray.extend`` calls per pair (a sink sends 10,000 pairs a chunk)."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from hazelcast.protocol.builtin import FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import (
    _BEGIN_DATA_STRUCTURE_FLAG,
    END_FINAL_FRAME_BUF,
    REQUEST_HEADER_SIZE,
    SIZE_OF_FRAME_LENGTH_AND_FLAGS,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.serialization.bits import BOOLEAN_SIZE_IN_BYTES

# hex: 0x012C00
REQUEST_MESSAGE_TYPE = 76800
# hex: 0x012C01
RESPONSE_MESSAGE_TYPE = 76801

REQUEST_TRIGGER_MAP_LOADER_OFFSET = REQUEST_HEADER_SIZE
REQUEST_INITIAL_FRAME_SIZE = REQUEST_TRIGGER_MAP_LOADER_OFFSET + BOOLEAN_SIZE_IN_BYTES

#: A frame's length (LE int) and flags (LE uint16).
_FRAME_HEADER = struct.Struct("<iH")
_BEGIN_FRAME = _FRAME_HEADER.pack(SIZE_OF_FRAME_LENGTH_AND_FLAGS, _BEGIN_DATA_STRUCTURE_FLAG)


def encode_request(name: str, entries: Sequence[tuple[bytes, bytes]], trigger_map_loader: bool) -> OutboundMessage:
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    FixSizedTypesCodec.encode_boolean(buf, REQUEST_TRIGGER_MAP_LOADER_OFFSET, trigger_map_loader)
    StringCodec.encode(buf, name)
    header = _FRAME_HEADER.pack
    parts: list[bytes | bytearray] = [_BEGIN_FRAME]
    for key, value in entries:
        parts += (header(SIZE_OF_FRAME_LENGTH_AND_FLAGS + len(key), 0), key)
        parts += (header(SIZE_OF_FRAME_LENGTH_AND_FLAGS + len(value), 0), value)
    parts.append(END_FINAL_FRAME_BUF)
    buf += b"".join(parts)
    return OutboundMessage(buf, False, True)
