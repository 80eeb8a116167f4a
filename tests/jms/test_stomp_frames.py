"""jetconnect's STOMP frame reader gives the frames stomp.py's parser gives, however bytes arrive,
and names what is wrong with bytes that are not a frame."""

from __future__ import annotations

import random

import pytest
import stomp.transport
import stomp.utils

from jetconnect_jms.stomp_client import _Transport
from jetconnect_jms.stomp_frames import FrameError, FrameReader

_SUB = b"destination:/queue/q\nsubscription:s-1\n"

FRAMES = [
    # ActiveMQ's MESSAGE frame: escaped colons in values, a content-length, a trailing EOL.
    (
        b"MESSAGE\ncontent-length:5\nexpires:0\ndestination:/queue/orders\nsubscription:s-1\npriority:4\n"
        b"ack:ID\\cb1-1\\c1\\c1\\c1\\c1\\c42\nmessage-id:ID\\cb1-1\\c1\\c1\\c1\\c42\npersistent:true\n"
        b"timestamp:1700000000000\n\nhello\x00\n"
    ),
    # A body with NULs, told by its content-length.
    b"MESSAGE\nmessage-id:m2\n" + _SUB + b"content-length:7\n\nab\x00cd\x00e\x00",
    # No content-length: the body ends at the first NUL. CRLF line ends.
    b'MESSAGE\r\nmessage-id:m3\r\ndestination:/queue/q\r\nsubscription:s-1\r\ncustom:a\\nb\\\\c\\rd\r\n\r\n{"k": 1}\x00',
    # A repeated header keeps its first value.
    b"MESSAGE\nmessage-id:m4\n" + _SUB + b"x:first\nx:second\n\n\x00",
    b"RECEIPT\nreceipt-id:jetconnect-7\n\n\x00\n",
    b"ERROR\nmessage:bad destination\ncontent-length:4\n\noops\x00",
    # Non-ASCII header and body.
    "MESSAGE\nmessage-id:m5\ndestination:/queue/q\nsubscription:s-1\nname:caf\u00e9\n\n\u00fcber\x00".encode(),
    # CONNECTED frames are not escaped (STOMP 1.2): a backslash is just a backslash there.
    b"CONNECTED\nversion:1.2\nserver:ActiveMQ\\5.17\n\n\x00",
]


def _as_stomp_py(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    frame = stomp.utils.parse_frame(raw.rstrip(b"\n").rstrip(b"\x00"))
    if frame.cmd == "CONNECTED":  # stomp.py unescapes these too, which STOMP 1.2 says not to do
        return frame.cmd, {"version": "1.2", "server": "ActiveMQ\\5.17"}, frame.body
    return frame.cmd, frame.headers, frame.body


@pytest.mark.parametrize("seed", range(20))
def test_frames_split_at_any_byte_parse_as_stomp_py_parses_them(seed: int) -> None:
    rnd = random.Random(seed)
    stream = b"".join(FRAMES)
    reader, got, pos = FrameReader(), [], 0
    while pos < len(stream):
        step = rnd.randint(1, 40)
        got += reader.feed(stream[pos : pos + step])
        pos += step
    assert [(f.cmd, f.headers, f.body) for f in got] == [_as_stomp_py(raw) for raw in FRAMES]


def test_a_frame_cut_at_every_byte_waits_for_the_rest_then_is_whole() -> None:
    for raw in FRAMES:
        frame = raw.rstrip(b"\n")
        for cut in range(len(frame)):
            reader = FrameReader()
            assert reader.feed(frame[:cut]) == [], (raw, cut)
            got = reader.feed(frame[cut:])
            assert [(f.cmd, f.headers, f.body) for f in got] == [_as_stomp_py(raw)], (raw, cut)


def test_end_of_lines_between_frames_are_heart_beats_but_a_frame_trailer_is_not() -> None:
    reader = FrameReader()
    assert [f.cmd for f in reader.feed(b"\n")] == ["heartbeat"]
    assert [f.cmd for f in reader.feed(b"RECEIPT\nreceipt-id:1\n\n\x00\n")] == ["RECEIPT"]
    assert [f.cmd for f in reader.feed(b"\r\n")] == ["heartbeat"]


MALFORMED = [
    # (what the broker sent, what the error must say)
    (
        b"MESSAGE\ncontent-length:2\n" + _SUB + b"message-id:m\n\nabc\x00",
        "its body does not end after its content-length of 2 bytes (no NUL there)",
    ),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"not a header\n\n\x00", "a header line with no colon: 'not a header'"),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b":value\n\n\x00", "a header line with an empty name: ':value'"),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"odd:a\\tb\n\n\x00", "an undefined escape '\\\\t' in 'a\\\\tb'"),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"odd:ab\\\n\n\x00", "an undefined escape '\\\\' in 'ab\\\\'"),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"odd:\\\\\\x\n\n\x00", "an undefined escape '\\\\x'"),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"content-length:-1\n\n\x00", "content-length '-1' is not a number of bytes"),
    (
        b"MESSAGE\nmessage-id:m\n" + _SUB + b"content-length:abc\n\n\x00",
        "content-length 'abc' is not a number of bytes",
    ),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"content-length: 5\n\nhello\x00", "content-length ' 5' is not a number"),
    (
        b"MESSAGE\nmessage-id:m\n" + _SUB + "content-length:\u00b2\n\n\x00".encode(),
        "content-length '\u00b2' is not a number",
    ),
    (b"MESSAGE\nmessage-id:m\n" + _SUB + b"content-length:" + b"9" * 5000 + b"\n\n", "is not a number of bytes"),
    (
        b"MESSAGE\nmessage-id:m\n" + _SUB + b"content-length:104857601\n\n",
        "content-length 104857601 is over the limit of 104857600 bytes",
    ),
    (
        b"MESSAGE\nmessage-id:m\n" + _SUB + b"name:caf\xe9\n\n\x00",
        "its headers are not valid UTF-8 (unexpected end of data at byte 67 of the frame)",
    ),
    (b"HELLO\n\n\x00", "unknown command 'HELLO'"),
    (b"\x00\n\n", "unknown command '\\x00'"),
    (b"MESSAGE\n" + _SUB + b"\n\x00", "MESSAGE frame: no 'message-id' header"),
    (b"MESSAGE\nmessage-id:m\n\n\x00", "MESSAGE frame: no 'destination' header"),
    (b"RECEIPT\n\n\x00", "RECEIPT frame: no 'receipt-id' header"),
]


@pytest.mark.parametrize("raw, problem", MALFORMED, ids=[p[:40] for _, p in MALFORMED])
def test_malformed_frames_raise_frame_error_naming_the_problem_and_the_offset(raw: bytes, problem: str) -> None:
    good = FRAMES[4]  # a RECEIPT first: the offset named is that of the bad frame
    reader = FrameReader()
    with pytest.raises(FrameError) as failure:
        reader.feed(good + raw)
    assert str(failure.value).startswith(f"the STOMP frame at byte {len(good)} of the connection: ")
    assert problem in str(failure.value)


def test_a_preamble_or_body_past_the_limits_fails_before_the_rest_arrives() -> None:
    reader = FrameReader(max_header_bytes=100, max_body_bytes=1000)
    assert reader.feed(b"MESSAGE\nk:" + b"v" * 92) == []  # 102 bytes: the blank line may still come
    with pytest.raises(FrameError, match="no end of headers within 100 bytes"):
        reader.feed(b"v")
    reader = FrameReader(max_header_bytes=100, max_body_bytes=1000)
    assert reader.feed(b"MESSAGE\nmessage-id:m\n" + _SUB + b"\n" + b"x" * 1000) == []
    with pytest.raises(FrameError, match="MESSAGE frame: no NUL ends its body within 1000 bytes"):
        reader.feed(b"x")
    with pytest.raises(FrameError, match="content-length 1001 is over the limit of 1000 bytes"):
        FrameReader(max_body_bytes=1000).feed(b"MESSAGE\nmessage-id:m\n" + _SUB + b"content-length:1001\n\n")


def test_the_transport_replaces_the_reader_stomp_py_calls() -> None:
    # stomp.py's receiver loop calls the name-mangled BaseTransport.__read_frames: if a stomp.py
    # release renames it, jetconnect's override would silently stop being used.
    assert hasattr(stomp.transport.BaseTransport, "_BaseTransport__read_frames")
    assert _Transport._BaseTransport__read_frames is not stomp.transport.BaseTransport._BaseTransport__read_frames
