"""Line framing, decoding errors and option checks of the socket connector (no Spark)."""

import socket
import threading

import pytest

from jetconnect._retry import RetriesExhausted
from jetconnect.errors import OptionError, SourceError
from jetconnect_socket import socket_sink, socket_source
from jetconnect_socket.connection import Endpoint, LineReader


@pytest.fixture
def listener():
    """A listening socket on 127.0.0.1 whose accepted connections are handed to the test."""
    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    ready = threading.Event()

    def accept():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)
            ready.set()

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], accepted, ready
    server.close()
    for conn in accepted:
        conn.close()


def read_until(reader, count, tries=200):
    lines = []
    for _ in range(tries):
        lines += reader.read_lines()
        if len(lines) >= count:
            return lines
        threading.Event().wait(0.01)
    return lines


def test_lines_are_emitted_only_when_complete(listener):
    port, accepted, ready = listener
    reader = LineReader(Endpoint("127.0.0.1", port), "utf-8", "socket source processor 0").open()
    ready.wait(5)
    accepted[0].sendall(b"one\r\ntwo\nthr")
    assert read_until(reader, 2) == ["one", "two"]
    assert reader.read_lines() == []
    accepted[0].sendall(b"ee\n\n")
    assert read_until(reader, 2) == ["three", ""]
    reader.close()


def test_a_closed_connection_is_reopened_and_its_half_line_dropped(listener):
    port, accepted, ready = listener
    reader = LineReader(Endpoint("127.0.0.1", port, connect_timeout=5), "utf-8", "p0").open()
    ready.wait(5)
    accepted[0].sendall(b"a\nhalf")
    assert read_until(reader, 1) == ["a"]
    accepted[0].close()
    ready.clear()
    assert read_until(reader, 1, tries=50) == []
    ready.wait(5)
    assert reader.reconnects == 1 and len(accepted) == 2
    accepted[1].sendall(b"b\n")
    assert read_until(reader, 1) == ["b"]
    reader.close()


def test_a_bad_line_is_reported_after_the_good_lines_before_it(listener):
    port, accepted, ready = listener
    reader = LineReader(Endpoint("127.0.0.1", port), "utf-8", "socket source processor 0").open()
    ready.wait(5)
    accepted[0].sendall(b"ok\n\xff\xfe\nlater\n")
    assert read_until(reader, 1) == ["ok"]
    assert reader.read_lines() == []  # an empty read first, so the caller logs "ok" before the error
    with pytest.raises(SourceError, match=r"line 2 from 127.0.0.1:\d+ is not valid utf-8"):
        reader.read_lines()
    reader.close()


def test_no_server_gives_a_clear_error_after_the_timeout():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RetriesExhausted, match=f"connecting to 127.0.0.1:{port} failed"):
        Endpoint("127.0.0.1", port, connect_timeout=0.3).connect("socket source processor 0")


@pytest.mark.parametrize(
    "make, option",
    [
        (lambda: socket_source("h", 0), "port"),
        (lambda: socket_source("h", 1, charset="nope"), "charset"),
        (lambda: socket_source("h", 1, connect_timeout=0), "connect_timeout"),
        (lambda: socket_source("h", 1, parallelism=0), "parallelism"),
        (lambda: socket_sink("h", 70000), "port"),
    ],
)
def test_bad_options_name_the_option(make, option):
    with pytest.raises(OptionError, match=f"option '{option}'"):
        make()


def test_source_is_a_wal_backed_builder_stream():
    source = socket_source("127.0.0.1", 9, wal_location="/tmp/w")
    assert not source.replays_by_snapshot
    assert source.options["wal_location"] == "/tmp/w"
    assert source.schema().simpleString() == "struct<line:string>"


def test_one_connection_in_the_whole_job_unless_distributed():
    # found on a two-executor cluster: parallelism 1 opened one connection per executor, and a
    # server that sends every line to every connection had each line written twice
    members = {"jetconnect.members": "3"}
    assert socket_source("h", 1).with_options(members).total_parallelism == 1
    assert socket_source("h", 1, parallelism=2).with_options(members).total_parallelism == 6
