"""The STOMP frame reader fuzzed: any bytes, in any chunks, give frames or a FrameError, quickly,
with what the reader holds bounded; valid frames cut anywhere give exactly the frames sent."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jetconnect_jms.stomp_frames import REQUIRED_HEADERS, FrameError, FrameReader

MAX_HEADER = 300
MAX_BODY = 600
#: Bounded: the file runs in seconds. The deadline is per example: a hang or a quadratic rescan fails it.
FUZZ = settings(max_examples=100, deadline=2000)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n").replace(":", "\\c")


@st.composite
def frames(draw):
    """One valid server frame: its bytes, and the (command, headers, body) it must parse to."""
    command = draw(st.sampled_from(["MESSAGE", "RECEIPT", "ERROR"]))
    reserved = {"content-length", *REQUIRED_HEADERS.get(command, ())}
    headers = {name: draw(st.text(max_size=12)) for name in REQUIRED_HEADERS.get(command, ())}
    headers.update(
        draw(
            st.dictionaries(
                st.text(min_size=1, max_size=8).filter(lambda n: n not in reserved), st.text(max_size=12), max_size=4
            )
        )
    )
    body = draw(st.binary(max_size=40))
    if draw(st.booleans()):
        headers["content-length"] = str(len(body))
    else:
        body = body.replace(b"\x00", b"")  # the first NUL ends a body without a content-length
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    head = command + eol + "".join(f"{_escape(k)}:{_escape(v)}{eol}" for k, v in headers.items()) + eol
    trailer = draw(st.sampled_from([b"", b"\n", b"\r\n", b"\n\n"]))
    return head.encode() + body + b"\x00" + trailer, (command, headers, body)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts}) if data else []
    pieces, start = [], 0
    for point in points + [len(data)]:
        pieces.append(data[start:point])
        start = point
    return pieces


def _feed_all(reader: FrameReader, pieces: list[bytes]) -> list:
    """Feed every piece; frames until a FrameError; nothing else may be raised, nothing may grow."""
    got = []
    for piece in pieces:
        try:
            got += reader.feed(piece)
        except FrameError:
            return got
        # an unfinished preamble or body is all the reader holds, and the limits bound both
        assert len(reader._buffer) <= MAX_HEADER + 2 + MAX_BODY + 1 + len(piece)
    return got


@FUZZ
@given(st.lists(frames(), min_size=1, max_size=4), st.lists(st.integers(min_value=0), max_size=10))
def test_valid_frames_cut_anywhere_give_exactly_the_frames_sent(sent, cuts):
    stream = b"".join(raw for raw, _ in sent)
    got = []
    reader = FrameReader()
    for piece in _chunks(stream, cuts):
        got += reader.feed(piece)
    assert [(f.cmd, f.headers, f.body) for f in got if f.cmd != "heartbeat"] == [expected for _, expected in sent]


@settings(max_examples=300, deadline=2000)
@given(st.binary(max_size=2000), st.lists(st.integers(min_value=0), max_size=12))
def test_random_bytes_give_frames_or_a_frame_error_and_stay_bounded(data, cuts):
    _feed_all(FrameReader(MAX_HEADER, MAX_BODY), _chunks(data, cuts))


@FUZZ
@given(
    st.lists(frames(), min_size=1, max_size=3),
    st.lists(
        st.tuples(
            st.integers(min_value=0),
            st.sampled_from(["flip", "insert", "delete", "cut"]),
            st.binary(min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.integers(min_value=0), max_size=8),
)
def test_mutated_frames_give_frames_or_a_frame_error_and_stay_bounded(sent, mutations, cuts):
    stream = bytearray(b"".join(raw for raw, _ in sent))
    for position, kind, data in mutations:
        at = position % (len(stream) + 1)
        if kind == "flip" and at < len(stream):
            stream[at] ^= data[0] or 1
        elif kind == "insert":
            stream[at:at] = data
        elif kind == "delete":
            del stream[at : at + len(data)]
        else:
            del stream[at:]
    _feed_all(FrameReader(MAX_HEADER, MAX_BODY), _chunks(bytes(stream), cuts))


@settings(max_examples=60, deadline=5000)
@given(
    st.sampled_from([b"MESSAGE\nk:", b"MESSAGE\nmessage-id:m\ndestination:d\nsubscription:s\n\n"]),
    st.integers(min_value=1, max_value=64),
)
def test_an_endless_preamble_or_body_in_small_pieces_fails_at_the_limit_without_rescanning(start, step):
    # the default limits (10 MiB of headers, 100 MiB of body) would take too long to reach here:
    # 64 KiB limits fed in pieces of 1-64 bytes; rescanning the buffer on every piece is quadratic
    reader = FrameReader(max_header_bytes=1 << 16, max_body_bytes=1 << 16)
    reader.feed(start)
    piece = b"x" * step
    fed = len(start)
    try:
        while fed < 3 << 16:
            reader.feed(piece)
            fed += step
    except FrameError as exc:
        assert "within 65536 bytes" in str(exc)
    else:
        raise AssertionError(f"no FrameError after {fed} bytes")
