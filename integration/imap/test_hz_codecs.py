"""jetconnect's own Hazelcast codecs (plugins/imap/jetconnect_imap/hazelcast/codecs) byte for byte
against the member jar's: integration/imap/java/CodecOracle.java encodes each request and response
with ``com.hazelcast.client.impl.protocol.codec.*Codec`` and Hazelcast's ClientMessageWriter; ours
must make the same request bytes and read the same values out of the responses."""

from __future__ import annotations

import struct
import subprocess

import pytest
from hazelcast.protocol.client_message import Frame, InboundMessage
from hazelcast.serialization.data import Data

from jetconnect_imap.hazelcast.codecs import (
    cache_event_journal_read,
    cache_event_journal_subscribe,
    cache_get_config,
    cache_iterate_entries,
    cache_put_all,
    map_event_journal_read,
    map_event_journal_subscribe,
    map_fetch_entries,
    map_put_all,
)

NAME = 'm-ä "q"'
POINTERS = [(2**31 - 1, -1), (5, 7)]


def text(value: str) -> Data:
    """A Data of a String, as CodecOracle.text makes it."""
    raw = value.encode()
    return Data(struct.pack(">iii", 0, -11, len(raw)) + raw)


ENTRIES = [(text("k1"), text("v1")), (text("ключ"), text(""))]
ITEMS = [text("e1"), text("e2")]


@pytest.fixture(scope="module")
def java(java_classes) -> dict[str, bytes]:
    done = subprocess.run([*java_classes, "CodecOracle"], capture_output=True, text=True, timeout=120, check=True)
    return {name: bytes.fromhex(hex_) for name, hex_ in (line.split(" ") for line in done.stdout.splitlines())}


def inbound(raw: bytes) -> InboundMessage:
    """The frames of a message as the client's reader builds them from the wire."""
    message = None
    at = 0
    while at < len(raw):
        length, flags = struct.unpack_from("<iH", raw, at)
        frame = Frame(bytearray(raw[at + 6 : at + length]), flags)
        if message is None:
            message = InboundMessage(frame)
        else:
            message.add_frame(frame)
        at += length
    assert message is not None
    return message


@pytest.mark.parametrize(
    ("case", "request_"),
    [
        ("map_fetch_entries.request", lambda: map_fetch_entries.encode_request(NAME, POINTERS, 2048)),
        ("cache_iterate_entries.request", lambda: cache_iterate_entries.encode_request("/hz/" + NAME, POINTERS, 7)),
        ("map_event_journal_subscribe.request", lambda: map_event_journal_subscribe.encode_request(NAME)),
        ("cache_event_journal_subscribe.request", lambda: cache_event_journal_subscribe.encode_request("/hz/" + NAME)),
        (
            "map_event_journal_read.request",
            lambda: map_event_journal_read.encode_request(NAME, 2**33, 0, 10_000, None, None),
        ),
        (
            "cache_event_journal_read.request",
            lambda: cache_event_journal_read.encode_request("/hz/" + NAME, 5, 1, 2, None, None),
        ),
        (
            "map_put_all.request",
            lambda: map_put_all.encode_request(NAME, [(k.buffer, v.buffer) for k, v in ENTRIES], False),
        ),
        ("cache_put_all.request", lambda: cache_put_all.encode_request("/hz/" + NAME, ENTRIES, None, -1)),
        ("cache_get_config.request", lambda: cache_get_config.encode_request("/hz/" + NAME, NAME)),
    ],
)
def test_a_request_is_the_member_jars_bytes(java: dict[str, bytes], case: str, request_) -> None:
    assert bytes(request_().buf) == java[case]


def _entries(pairs) -> list[tuple[bytes, bytes]]:
    return [(bytes(k.buffer), bytes(v.buffer)) for k, v in pairs]


@pytest.mark.parametrize("codec", [map_fetch_entries, cache_iterate_entries])
def test_an_entries_page_reads_the_member_jars_response(java: dict[str, bytes], codec) -> None:
    response = codec.decode_response(inbound(java[f"{codec.__name__.rsplit('.', 1)[1]}.response"]))
    assert response["iteration_pointers"] == POINTERS
    assert _entries(response["entries"]) == _entries(ENTRIES)


def test_journal_bounds_read_the_member_jars_response(java: dict[str, bytes]) -> None:
    assert map_event_journal_subscribe.decode_response(inbound(java["map_event_journal_subscribe.response"])) == {
        "oldest_sequence": 3,
        "newest_sequence": 2**40,
    }
    assert cache_event_journal_subscribe.decode_response(inbound(java["cache_event_journal_subscribe.response"])) == {
        "oldest_sequence": 0,
        "newest_sequence": -1,
    }


@pytest.mark.parametrize(
    ("case", "codec", "seqs"),
    [
        ("map_event_journal_read.response", map_event_journal_read, [8, 9]),
        ("map_event_journal_read.response-no-seqs", map_event_journal_read, None),
        ("cache_event_journal_read.response", cache_event_journal_read, [8, 9]),
    ],
)
def test_a_journal_page_reads_the_member_jars_response(java: dict[str, bytes], case: str, codec, seqs) -> None:
    response = codec.decode_response(inbound(java[case]))
    assert response["read_count"] == 2 and response["next_seq"] == 10
    assert [bytes(item.buffer) for item in response["items"]] == [bytes(item.buffer) for item in ITEMS]
    assert (list(response["item_seqs"]) if response["item_seqs"] is not None else None) == seqs


def test_no_cache_configuration_reads_as_none(java: dict[str, bytes]) -> None:
    assert cache_get_config.decode_response(inbound(java["cache_get_config.response-null"])) is None
