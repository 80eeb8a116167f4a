"""``Map.fetchEntries``: one page of a map partition, from the iteration pointers of the last."""

from __future__ import annotations

from typing import Any

from hazelcast.protocol.builtin import DataCodec, EntryListCodec, FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import (
    REQUEST_HEADER_SIZE,
    InboundMessage,
    OutboundMessage,
    create_initial_buffer,
)
from hazelcast.serialization.bits import INT_SIZE_IN_BYTES
from hazelcast.serialization.data import Data

from jetconnect_imap.hazelcast.codecs._builtin import EntryListIntegerIntegerCodec

# hex: 0x013800
REQUEST_MESSAGE_TYPE = 79872
# hex: 0x013801
RESPONSE_MESSAGE_TYPE = 79873

REQUEST_BATCH_OFFSET = REQUEST_HEADER_SIZE
REQUEST_INITIAL_FRAME_SIZE = REQUEST_BATCH_OFFSET + INT_SIZE_IN_BYTES


def encode_request(name: str, iteration_pointers: list[tuple[int, int]], batch: int) -> OutboundMessage:
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    FixSizedTypesCodec.encode_int(buf, REQUEST_BATCH_OFFSET, batch)
    StringCodec.encode(buf, name)
    EntryListIntegerIntegerCodec.encode(buf, iteration_pointers, True)
    return OutboundMessage(buf, True)


def decode_response(msg: InboundMessage) -> dict[str, Any]:
    """``iteration_pointers`` (where the next page starts) and ``entries`` (``(Data, Data)`` pairs)."""
    msg.next_frame()
    response: dict[str, Any] = {}
    response["iteration_pointers"] = EntryListIntegerIntegerCodec.decode(msg)
    entries: list[tuple[Data, Data]] = EntryListCodec.decode(msg, DataCodec.decode, DataCodec.decode)
    response["entries"] = entries
    return response
