"""``Cache.putAll``: entries of one partition of a cache, with the cache's own expiry policy or another."""

from __future__ import annotations

from hazelcast.protocol.builtin import CodecUtil, DataCodec, EntryListCodec, FixSizedTypesCodec, StringCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer
from hazelcast.serialization.bits import INT_SIZE_IN_BYTES
from hazelcast.serialization.data import Data

# hex: 0x131B00
REQUEST_MESSAGE_TYPE = 1252096
# hex: 0x131B01
RESPONSE_MESSAGE_TYPE = 1252097

REQUEST_COMPLETION_ID_OFFSET = REQUEST_HEADER_SIZE
REQUEST_INITIAL_FRAME_SIZE = REQUEST_COMPLETION_ID_OFFSET + INT_SIZE_IN_BYTES


def encode_request(
    name: str, entries: list[tuple[Data, Data]], expiry_policy: Data | None, completion_id: int
) -> OutboundMessage:
    """``completion_id`` -1: no completion listener waits for it."""
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    FixSizedTypesCodec.encode_int(buf, REQUEST_COMPLETION_ID_OFFSET, completion_id)
    StringCodec.encode(buf, name)
    EntryListCodec.encode(buf, entries, DataCodec.encode, DataCodec.encode)
    CodecUtil.encode_nullable(buf, expiry_policy, DataCodec.encode, True)
    return OutboundMessage(buf, False, True)
