"""The socket line reader off the happy path, against a real TCP server on 127.0.0.1.

A connection that ends mid-line, a reconnect that fails after lines arrived, a server that never
sends a newline: nothing received is lost, nothing is glued, nothing grows without bound.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetconnect import sources
from jetconnect._builders import ProcessorContext
from jetconnect._options import Options
from jetconnect._retry import RetriesExhausted
from jetconnect.errors import OptionError, SourceError
from jetconnect_socket.connection import DEFAULT_MAX_LINE_BYTES, Endpoint, LineReader


class Server:
    """A listening socket whose connections the test accepts and drives by hand."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]

    def accept(self, timeout: float = 5) -> socket.socket:
        self.listener.settimeout(timeout)
        conn, _ = self.listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # each send goes out as it is
        return conn

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


def reader_for(server: Server, connect_timeout: float = 5, **kwargs) -> LineReader:
    return LineReader(
        Endpoint("127.0.0.1", server.port, connect_timeout), "utf-8", "socket source processor 0", **kwargs
    )


def read_until(reader: LineReader, done, timeout: float = 5) -> list[str]:
    """Read until ``done(lines)`` holds or ``timeout`` s pass; the lines read."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while not done(lines) and time.monotonic() < deadline:
        lines += reader.read_lines()
        time.sleep(0.002)
    return lines


def send_and_close(conn: socket.socket, data: bytes) -> None:
    conn.sendall(data)
    conn.close()
    time.sleep(0.1)  # the bytes and the end of the connection both wait at the reader: one read sees both


def test_an_unfinished_line_of_a_dead_connection_is_dropped_not_glued_to_the_next_ones(server, caplog):
    # Found by trying: "hal" arrived in the same read as the end of its connection and was kept
    # as the start of a line, so the next connection's "f\n" came out as "half".
    reader = reader_for(server).open()
    send_and_close(server.accept(), b"a\nhal")
    with caplog.at_level(logging.WARNING, "jetconnect.socket"):
        assert reader.read_lines() == ["a"]
    assert reader.read_lines() == []  # nothing yet: the reconnect comes with the next read
    lines = reader.read_lines()  # reconnects
    conn = server.accept()
    conn.sendall(b"f\nb\n")
    lines += read_until(reader, lambda got: len(got) >= 2)
    assert lines == ["f", "b"]
    assert reader.reconnects == 1 and reader.dropped_bytes == 3
    assert f"the connection to 127.0.0.1:{server.port} ended in the middle of a line: its first 3 bytes" in caplog.text
    conn.close()
    reader.close()


def test_lines_received_before_a_failed_reconnect_are_returned_before_its_error(server):
    # Found by trying: the reconnect ran inside the read that saw the end of the connection, so
    # its error took the lines of that read with it.
    reader = reader_for(server, connect_timeout=0.5).open()
    conn = server.accept()
    server.close()  # nobody to reconnect to
    send_and_close(conn, b"x\ny\n")
    assert reader.read_lines() == ["x", "y"]
    assert reader.read_lines() == []  # the caller logs x and y on this empty read
    with pytest.raises(RetriesExhausted, match=f"connecting to 127.0.0.1:{server.port} failed"):
        reader.read_lines()


@pytest.mark.parametrize(
    "data",
    [b"ok\n" + b"x" * 1025, b"ok\n" + b"y" * 1025 + b"\nnext\n"],
    ids=["never ends", "ends too late"],
)
def test_a_line_longer_than_max_line_bytes_fails_naming_the_limit_server_and_offset(server, data):
    reader = reader_for(server, max_line_bytes=1024).open()
    conn = server.accept()
    conn.sendall(data)
    assert read_until(reader, lambda got: got) == ["ok"]
    assert reader.read_lines() == []  # "ok" is logged before the error
    with pytest.raises(SourceError) as failure:
        reader.read_lines()
    assert str(failure.value) == (
        f"socket source processor 0: line 2 from 127.0.0.1:{server.port} (at byte 3 of the connection) is longer "
        f"than option 'max_line_bytes' allows (1024 bytes without a newline); the 1 lines before it were kept"
    )
    with pytest.raises(SourceError):  # it stays failed
        reader.read_lines()
    conn.close()
    reader.close()


def test_a_line_of_exactly_max_line_bytes_is_a_line(server):
    reader = reader_for(server, max_line_bytes=1024).open()
    conn = server.accept()
    conn.sendall(b"z" * 1024 + b"\r\n" + b"w" * 1024)  # the \r is dropped with its newline
    assert read_until(reader, lambda got: got) == ["z" * 1024]
    conn.sendall(b"\n")
    assert read_until(reader, lambda got: got) == ["w" * 1024]
    conn.close()
    reader.close()


def test_a_server_that_never_sends_a_newline_cannot_fill_the_memory(server):
    reader = reader_for(server).open()
    assert reader.max_line_bytes == DEFAULT_MAX_LINE_BYTES == 1 << 20
    conn = server.accept()
    conn.setblocking(False)
    sent = 0
    error = None
    deadline = time.monotonic() + 30
    while error is None and time.monotonic() < deadline:
        try:
            sent += conn.send(b"x" * 65536)
        except BlockingIOError:
            pass
        try:
            reader.read_lines()
        except SourceError as exc:
            error = exc
        assert len(reader.partial) <= DEFAULT_MAX_LINE_BYTES  # what the reader holds stays bounded
    assert error is not None, f"no error after {sent} bytes without a newline"
    assert "option 'max_line_bytes' allows (1048576 bytes" in str(error) and "at byte 0 of the connection" in str(error)
    conn.close()
    reader.close()


@pytest.mark.parametrize("value", [0, -1, "1024", 1.5, True])
def test_max_line_bytes_must_be_a_positive_integer_and_the_source_checks_it_at_once(value):
    with pytest.raises(
        OptionError, match=f"option 'max_line_bytes' must be an integer of at least 1, got {re.escape(repr(value))}"
    ):
        LineReader(Endpoint("127.0.0.1", 9), "utf-8", "p0", max_line_bytes=value)
    with pytest.raises(OptionError, match="max_line_bytes"):
        sources.socket("127.0.0.1", 9, max_line_bytes=value, wal_location="/tmp/unused")


def test_the_source_gives_max_line_bytes_to_its_reader(server):
    source = sources.socket("127.0.0.1", server.port, max_line_bytes=16)
    reader = source.spec.create_fn(ProcessorContext("socket", 0, 1, 0, 1, Options(), logging.getLogger("t")))
    try:
        assert reader.max_line_bytes == 16
    finally:
        reader.close()


@pytest.fixture(scope="module")
def shared_server() -> Iterator[Server]:
    s = Server()
    yield s
    s.close()


_LINE = st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=30)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    before=st.lists(_LINE, max_size=12),
    unfinished=_LINE,
    after=st.lists(_LINE, min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=8),
)
def test_lines_cut_anywhere_and_a_connection_ended_anywhere_come_out_whole_and_in_order(
    shared_server, before, unfinished, after, cuts
):
    """The first connection sends ``before`` then an unfinished line, in pieces cut at random,
    reading between the pieces, and ends; the second sends ``after``: exactly ``before + after``
    comes out, and the unfinished line's bytes are counted as dropped."""
    reader = LineReader(Endpoint("127.0.0.1", shared_server.port), "utf-8", "p0").open()
    first = shared_server.accept()
    stream = "".join(f"{line}\n" for line in before).encode() + unfinished.encode()
    lines: list[str] = []
    start = 0
    for cut in sorted({min(c, len(stream)) for c in cuts}) + [len(stream)]:
        first.sendall(stream[start:cut])
        start = cut
        lines += reader.read_lines()
    first.close()
    lines += read_until(reader, lambda _: reader.reconnects == 1)
    assert reader.reconnects == 1, "the reader did not reconnect"
    second = shared_server.accept()
    second.sendall("".join(f"{line}\n" for line in after).encode())
    lines += read_until(reader, lambda got: len(lines) + len(got) >= len(before) + len(after))
    assert lines == before + after
    assert reader.dropped_bytes == len(unfinished.encode())
    second.close()
    reader.close()
