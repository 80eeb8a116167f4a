"""``Cache.getConfig``: a cache's configuration as the member builds it from its declared ones."""

from __future__ import annotations

from hazelcast.protocol.builtin import StringCodec
from hazelcast.protocol.client_message import (
    REQUEST_HEADER_SIZE,
    InboundMessage,
    OutboundMessage,
    create_initial_buffer,
)

from jetconnect_imap.hazelcast.codecs._builtin import RawFrames, RawStructureCodec

# hex: 0x130C00
REQUEST_MESSAGE_TYPE = 1248256
# hex: 0x130C01
RESPONSE_MESSAGE_TYPE = 1248257

REQUEST_INITIAL_FRAME_SIZE = REQUEST_HEADER_SIZE


def encode_request(name: str, simple_name: str) -> OutboundMessage:
    """``name`` is the cache's full name (``/hz/<simple_name>`` for the default cache manager)."""
    buf = create_initial_buffer(REQUEST_INITIAL_FRAME_SIZE, REQUEST_MESSAGE_TYPE)
    StringCodec.encode(buf, name)
    StringCodec.encode(buf, simple_name, True)
    return OutboundMessage(buf, True)


def decode_response(msg: InboundMessage) -> RawFrames | None:
    """The ``CacheConfigHolder`` as raw frames (None: no configuration matches the name)."""
    msg.next_frame()
    return RawStructureCodec.decode_nullable(msg)
