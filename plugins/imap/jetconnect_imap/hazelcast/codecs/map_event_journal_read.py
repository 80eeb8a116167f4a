"""``Map.eventJournalRead``: up to ``max_size`` events of a partition's journal from a sequence."""

from __future__ import annotations

from typing import Any

from hazelcast.protocol.builtin import (
    CodecUtil,
    DataCodec,
    FixSizedTypesCodec,
    ListMultiFrameCodec,
    LongArrayCodec,
    StringCodec,
)
from hazelcast.protocol.client_message import (
    REQUEST_HEADER_SIZE,
    RESPONSE_HEADER_SIZE,
    InboundMessage,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.serialization.bits import INT_SIZE_IN_BYTES, LONG_SIZE_IN_BYTES
from hazelcast.serialization.data import Data

# hex: 0x014200
REQUEST_MESSAGE_TYPE = 82432
# hex: 0x014201
RESPONSE_MESSAGE_TYPE = 82433

REQUEST_START_SEQUENCE_OFFSET = REQUEST_HEADER_SIZE
REQUEST_MIN_SIZE_OFFSET = REQUEST_START_SEQUENCE_OFFSET + LONG_SIZE_IN_BYTES
REQUEST_MAX_SIZE_OFFSET = REQUEST_MIN_SIZE_OFFSET + INT_SIZE_IN_BYTES
REQUEST_INITIAL_FRAME_SIZE = REQUEST_MAX_SIZE_OFFSET + INT_SIZE_IN_BYTES
RESPONSE_READ_COUNT_OFFSET = RESPONSE_HEADER_SIZE
RESPONSE_NEXT_SEQ_OFFSET = RESPONSE_READ_COUNT_OFFSET + INT_SIZE_IN_BYTES


def encode_request(
    name: str, start_sequence: int, min_size: int, max_size: int, predicate: Data | None, projection: Data | None
) -> OutboundMessage:
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    FixSizedTypesCodec.encode_long(buf, REQUEST_START_SEQUENCE_OFFSET, start_sequence)
    FixSizedTypesCodec.encode_int(buf, REQUEST_MIN_SIZE_OFFSET, min_size)
    FixSizedTypesCodec.encode_int(buf, REQUEST_MAX_SIZE_OFFSET, max_size)
    StringCodec.encode(buf, name)
    CodecUtil.encode_nullable(buf, predicate, DataCodec.encode)
    CodecUtil.encode_nullable(buf, projection, DataCodec.encode, True)
    return OutboundMessage(buf, True)


def decode_response(msg: InboundMessage) -> dict[str, Any]:
    """``read_count``, ``items`` (each event's ``Data``), ``item_seqs`` (their sequences, or None:
    consecutive, ending just before ``next_seq``) and ``next_seq``."""
    initial_frame = msg.next_frame()
    response: dict[str, Any] = {}
    response["read_count"] = FixSizedTypesCodec.decode_int(initial_frame.buf, RESPONSE_READ_COUNT_OFFSET)
    response["next_seq"] = FixSizedTypesCodec.decode_long(initial_frame.buf, RESPONSE_NEXT_SEQ_OFFSET)
    response["items"] = ListMultiFrameCodec.decode(msg, DataCodec.decode)
    response["item_seqs"] = CodecUtil.decode_nullable(msg, LongArrayCodec.decode)
    return response
