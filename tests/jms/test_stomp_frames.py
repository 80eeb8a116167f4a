"""jetconnect's STOMP frame reader gives the frames stomp.py's parser gives, however bytes arrive."""

from __future__ import annotations

import random

import pytest
import stomp.transport
import stomp.utils
from jetconnect_jms.stomp_client import _Transport
from jetconnect_jms.stomp_frames import FrameError, FrameReader

FRAMES = [
    # ActiveMQ's MESSAGE frame: escaped colons in values, a content-length, a trailing EOL.
    (b"MESSAGE\ncontent-length:5\nexpires:0\ndestination:/queue/orders\nsubscription:s-1\npriority:4\n"
     b"ack:ID\\cb1-1\\c1\\c1\\c1\\c1\\c42\nmessage-id:ID\\cb1-1\\c1\\c1\\c1\\c42\npersistent:true\n"
     b"timestamp:1700000000000\n\nhello\x00\n"),
    # A body with NULs, told by its content-length.
    b"MESSAGE\nmessage-id:m2\ncontent-length:7\n\nab\x00cd\x00e\x00",
    # No content-length: the body ends at the first NUL. CRLF line ends.
    b"MESSAGE\r\nmessage-id:m3\r\ncustom:a\\nb\\\\c\\rd\r\n\r\n{\"k\": 1}\x00",
    # A repeated header keeps its first value; a line without a colon is ignored.
    b"MESSAGE\nmessage-id:m4\nx:first\nx:second\nnot a header\n\n\x00",
    b"RECEIPT\nreceipt-id:jetconnect-7\n\n\x00\n",
    b"ERROR\nmessage:bad destination\ncontent-length:4\n\noops\x00",
    # An unknown escape is kept as it is (as stomp.py keeps it).
    b"MESSAGE\nmessage-id:m6\nodd:a\\tb\\c\n\n\x00",
    # Non-ASCII header and body.
    "MESSAGE\nmessage-id:m5\nname:caf\u00e9\n\n\u00fcber\x00".encode(),
]


def _as_stomp_py(raw: bytes) -> tuple[str, dict[str, str], bytes]:
    frame = stomp.utils.parse_frame(raw.rstrip(b"\n").rstrip(b"\x00"))
    return frame.cmd, frame.headers, frame.body


@pytest.mark.parametrize("seed", range(20))
def test_frames_split_at_any_byte_parse_as_stomp_py_parses_them(seed: int) -> None:
    rnd = random.Random(seed)
    stream = b"".join(FRAMES)
    reader, got, pos = FrameReader(), [], 0
    while pos < len(stream):
        step = rnd.randint(1, 40)
        got += reader.feed(stream[pos:pos + step])
        pos += step
    assert [(f.cmd, f.headers, f.body) for f in got] == [_as_stomp_py(raw) for raw in FRAMES]


def test_end_of_lines_between_frames_are_heart_beats_but_a_frame_trailer_is_not() -> None:
    reader = FrameReader()
    assert [f.cmd for f in reader.feed(b"\n")] == ["heartbeat"]
    assert [f.cmd for f in reader.feed(b"RECEIPT\nreceipt-id:1\n\n\x00\n")] == ["RECEIPT"]
    assert [f.cmd for f in reader.feed(b"\r\n")] == ["heartbeat"]


def test_a_body_longer_than_its_content_length_is_an_error_naming_the_frame() -> None:
    with pytest.raises(FrameError, match="MESSAGE frame's body does not end after its content-length of 2"):
        FrameReader().feed(b"MESSAGE\ncontent-length:2\n\nabc\x00")


def test_the_transport_replaces_the_reader_stomp_py_calls() -> None:
    # stomp.py's receiver loop calls the name-mangled BaseTransport.__read_frames: if a stomp.py
    # release renames it, jetconnect's override would silently stop being used.
    assert hasattr(stomp.transport.BaseTransport, "_BaseTransport__read_frames")
    assert _Transport._BaseTransport__read_frames is not stomp.transport.BaseTransport._BaseTransport__read_frames
