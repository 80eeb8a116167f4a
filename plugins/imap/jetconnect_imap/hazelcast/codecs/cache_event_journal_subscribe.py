"""``Cache.eventJournalSubscribe``: a partition's journal bounds, the oldest and the newest sequence."""

from __future__ import annotations

from typing import Any

from hazelcast.protocol.builtin import FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import (
    REQUEST_HEADER_SIZE,
    RESPONSE_HEADER_SIZE,
    InboundMessage,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.serialization.bits import LONG_SIZE_IN_BYTES

# hex: 0x131F00
REQUEST_MESSAGE_TYPE = 1253120
# hex: 0x131F01
RESPONSE_MESSAGE_TYPE = 1253121

REQUEST_INITIAL_FRAME_SIZE = REQUEST_HEADER_SIZE
RESPONSE_OLDEST_SEQUENCE_OFFSET = RESPONSE_HEADER_SIZE
RESPONSE_NEWEST_SEQUENCE_OFFSET = RESPONSE_OLDEST_SEQUENCE_OFFSET + LONG_SIZE_IN_BYTES


def encode_request(name: str) -> OutboundMessage:
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    StringCodec.encode(buf, name, True)
    return OutboundMessage(buf, True)


def decode_response(msg: InboundMessage) -> dict[str, Any]:
    """``oldest_sequence`` and ``newest_sequence`` (``newest = oldest - 1`` when the journal is empty)."""
    initial_frame = msg.next_frame()
    response: dict[str, Any] = {}
    response["oldest_sequence"] = FixSizedTypesCodec.decode_long(initial_frame.buf, RESPONSE_OLDEST_SEQUENCE_OFFSET)
    response["newest_sequence"] = FixSizedTypesCodec.decode_long(initial_frame.buf, RESPONSE_NEWEST_SEQUENCE_OFFSET)
    return response
