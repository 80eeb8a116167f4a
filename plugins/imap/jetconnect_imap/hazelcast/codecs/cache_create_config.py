"""``Cache.createConfig``: a cache configuration made live on the member (and the others)."""

from __future__ import annotations

from hazelcast.protocol.builtin import FixSizedTypesCodec
from hazelcast.protocol.client_message import REQUEST_HEADER_SIZE, OutboundMessage, create_initial_buffer
from hazelcast.serialization.bits import BOOLEAN_SIZE_IN_BYTES

from jetconnect_imap.hazelcast.codecs._builtin import RawFrames, RawStructureCodec

# hex: 0x130600
REQUEST_MESSAGE_TYPE = 1246720
# hex: 0x130601
RESPONSE_MESSAGE_TYPE = 1246721

REQUEST_CREATE_ALSO_ON_OTHERS_OFFSET = REQUEST_HEADER_SIZE
REQUEST_INITIAL_FRAME_SIZE = REQUEST_CREATE_ALSO_ON_OTHERS_OFFSET + BOOLEAN_SIZE_IN_BYTES


def encode_request(cache_config: RawFrames, create_also_on_others: bool) -> OutboundMessage:
    """``cache_config``: the ``CacheConfigHolder`` frames ``Cache.getConfig`` answered."""
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    FixSizedTypesCodec.encode_boolean(buf, REQUEST_CREATE_ALSO_ON_OTHERS_OFFSET, create_also_on_others)
    RawStructureCodec.encode(buf, cache_config, True)
    return OutboundMessage(buf, True)
