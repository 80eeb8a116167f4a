"""The STOMP client's reconnecting is bounded by connect_timeout, however the broker misbehaves.

A broker that accepts and never answers, one that drops every connection once it is made, and
one that sends a frame that cannot be parsed on every connection are TCP servers on 127.0.0.1
run by the test: a real broker cannot be made to misbehave so without breaking it for everyone
else on the machine. What a working connection looks like is checked against the real ActiveMQ.
The password is a canary full of the characters that break redaction: it must never show.
"""

from __future__ import annotations

import os
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jetconnect._retry import RetriesExhausted
from jetconnect_jms.stomp_client import ConnectRefused, StompClient, StompSettings

CANARY = "c4n'ary\\@#/%pw"
ROOT = Path(__file__).resolve().parents[2]
BROKER_SCRIPT = ROOT / "scripts" / "servers" / "activemq.sh"
#: The test broker allows anonymous logins and knows one user (scripts/servers/activemq.sh):
#: a named login must be that one.
BROKER_USER, BROKER_PASSWORD = "jetconnect_canary", "c@n#a/r%y'\\x"


class _Misbehaving(socketserver.BaseRequestHandler):
    """Answers a STOMP CONNECT as ``server.mode`` says: silent, refuse, drop or poison."""

    def handle(self) -> None:
        self.server.connections += 1  # type: ignore[attr-defined]
        mode = self.server.mode  # type: ignore[attr-defined]
        sock: socket.socket = self.request
        connect = self._read_frame(sock)
        if not connect or mode == "silent":
            while sock.recv(65536):  # never answers, reads until the client gives up
                pass
            return
        if mode == "refuse":  # a careless broker that quotes the CONNECT frame, passcode and all
            sock.sendall(
                b"ERROR\nmessage:User name [jet] or password is invalid.\n\n" + connect.replace(b"\x00", b"") + b"\x00"
            )
            return
        if mode == "client-id-held":  # ActiveMQ, while a crashed run's connection still holds the client id
            sock.sendall(
                b"ERROR\nmessage:Broker\\c jetconnect - Client\\c jetconnect-sub already connected from tcp\\c//x\n\n\x00"
            )
            return
        sock.sendall(b"CONNECTED\nversion:1.2\n\n\x00")
        if not self._read_frame(sock):  # the SUBSCRIBE: the client counts as connected now
            return
        if mode == "poison":  # as if the broker redelivered a message no reader can frame
            sock.sendall(
                b"MESSAGE\nmessage-id:m1\ndestination:/queue/q\nsubscription:s\nack:a1\ncontent-length:abc\n\nx\x00"
            )
            while sock.recv(65536):
                pass
        # mode "drop": the handler returns, the connection closes

    @staticmethod
    def _read_frame(sock: socket.socket) -> bytes:
        data = b""
        while b"\x00" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return b""
            data += chunk
        return data


class MisbehavingBroker(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, mode: str) -> None:
        super().__init__(("127.0.0.1", 0), _Misbehaving)
        self.mode = mode
        self.connections = 0
        self.port: int = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()


@pytest.fixture
def broker_that(request) -> Iterator:
    started: list[MisbehavingBroker] = []

    def start(mode: str) -> MisbehavingBroker:
        started.append(MisbehavingBroker(mode))
        return started[-1]

    yield start
    for server in started:
        server.shutdown()
        server.server_close()


def settings(port: int, connect_timeout: float) -> StompSettings:
    return StompSettings(port=port, user="jet", password=CANARY, connect_timeout=connect_timeout)


def keep_consuming(client: StompClient, seconds: float) -> None:
    """What the JMS source's consumer does with its client: reconnect whenever it is not connected."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not client.connected:
            client.connect()
        client.wait_for_messages(0.05)
    raise AssertionError(f"still reconnecting after {seconds} s")


@pytest.mark.timeout(60)
def test_a_broker_that_accepts_but_never_answers_fails_after_connect_timeout(broker_that):
    # Found by trying: stomp.py waits for CONNECTED without any timeout, so this hung forever.
    broker = broker_that("silent")
    client = StompClient(settings(broker.port, 1.0), "jms_queue source '/queue/q' consumer 0")
    started = time.monotonic()
    with pytest.raises(RetriesExhausted) as failure:
        client.connect()
    assert time.monotonic() - started < 10
    message = str(failure.value)
    assert message.startswith(
        f"jms_queue source '/queue/q' consumer 0: connecting to the STOMP broker at 127.0.0.1:{broker.port} failed"
    )
    assert f"no CONNECTED frame from 127.0.0.1:{broker.port} within 1 s" in message
    assert CANARY not in message and CANARY not in repr(failure.value.__cause__)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "mode, reason",
    [
        ("drop", "last loss: the connection closed"),
        (
            "poison",
            "last loss: FrameError: the STOMP frame at byte 24 of the connection: MESSAGE frame: content-length 'abc' is not a number of bytes",
        ),
    ],
)
def test_a_connection_lost_every_time_it_is_made_ends_in_an_error_naming_the_broker(broker_that, mode, reason, caplog):
    # Found by trying: every reconnect succeeded, so the consumer reconnected forever; and a
    # frame with a bad content-length raised a ValueError that stomp.py's receiver swallowed,
    # leaving a connection that never delivered anything again, without an error.
    broker = broker_that(mode)
    client = StompClient(settings(broker.port, 1.5), "jms_queue source '/queue/q' consumer 0").connect()
    client.subscribe("/queue/q", "s", {})
    started = time.monotonic()
    with pytest.raises(RetriesExhausted) as failure:
        keep_consuming(client, 30)
    assert time.monotonic() - started < 10
    assert broker.connections > 2  # it did reconnect, and stopped
    message = str(failure.value)
    assert message.startswith(
        f"jms_queue source '/queue/q' consumer 0: the connection to the STOMP broker at 127.0.0.1:{broker.port} was lost"
    )
    assert "option 'connect_timeout' is 1.5 s" in message and message.endswith(reason)
    assert CANARY not in message and CANARY not in caplog.text
    assert not client.connected and client._conn is None  # nothing left open


@pytest.mark.timeout(60)
def test_a_refused_login_fails_at_once_naming_the_broker_and_its_answer(broker_that, caplog):
    """A wrong password does not become right by waiting: one login, not connect_timeout's worth
    (issue #46; before, each was retried for connect_timeout, 30 s by default)."""
    broker = broker_that("refuse")
    started = time.monotonic()
    with pytest.raises(ConnectRefused) as failure:
        StompClient(settings(broker.port, 20.0), "jms_queue source '/queue/q' consumer 0").connect()
    assert time.monotonic() - started < 5
    message = str(failure.value)
    assert f"cannot connect to the STOMP broker at 127.0.0.1:{broker.port}: authentication refused" in message
    assert "the broker answered ERROR: User name [jet] or password is invalid." in message and "passcode:***" in message
    assert broker.connections == 1
    assert CANARY not in message and CANARY not in caplog.text


@pytest.mark.timeout(60)
def test_a_client_id_still_held_is_retried_until_connect_timeout(broker_that, caplog):
    # ActiveMQ refuses a durable subscriber's client id while the connection of a crashed run still
    # holds it, for a while: that refusal passes
    broker = broker_that("client-id-held")
    with pytest.raises(RetriesExhausted) as failure:
        StompClient(settings(broker.port, 1.0), "jms_topic source '/topic/t' consumer 0").connect()
    assert "already connected from" in str(failure.value)
    assert broker.connections > 1
    assert CANARY not in str(failure.value) and CANARY not in caplog.text


def test_a_closed_port_fails_after_connect_timeout_naming_the_broker_not_the_password(caplog):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(RetriesExhausted) as failure:
        StompClient(settings(port, 0.5), "jms_queue sink '/queue/q'").connect()
    assert f"connecting to the STOMP broker at 127.0.0.1:{port} failed" in str(failure.value)
    assert CANARY not in str(failure.value) and CANARY not in caplog.text


@pytest.fixture(scope="module")
def activemq() -> Iterator[None]:
    """The real ActiveMQ on 127.0.0.1:61613 (scripts/servers/activemq.sh), stopped after only if started here."""
    running = subprocess.run(["bash", str(BROKER_SCRIPT), "status"], capture_output=True, timeout=60).returncode == 0
    started = subprocess.run(["bash", str(BROKER_SCRIPT), "start"], capture_output=True, text=True, timeout=900)
    if started.returncode != 0:
        pytest.fail(f"activemq.sh start exited {started.returncode}: {started.stdout[-2000:]} {started.stderr[-2000:]}")
    yield
    if not running and os.environ.get("JETCONNECT_KEEP_SERVERS") != "1":
        subprocess.run(["bash", str(BROKER_SCRIPT), "stop"], capture_output=True, timeout=120)


def broker_settings(connect_timeout: float) -> StompSettings:
    return StompSettings(port=61613, user=BROKER_USER, password=BROKER_PASSWORD, connect_timeout=connect_timeout)


def test_connections_the_real_broker_confirmed_on_may_be_lost_for_longer_than_connect_timeout(activemq):
    client = StompClient(broker_settings(1.0), "jms_queue sink '/queue/q'").connect()
    try:
        started = time.monotonic()
        for round_ in range(4):
            client.begin(f"tx{round_}")
            client.commit(f"tx{round_}")  # its receipt: the broker worked on this connection
            time.sleep(0.5)
            client.lost = True  # as the consumer marks a connection whose ACK failed
            client.connect()
        assert time.monotonic() - started > 2.0  # twice connect_timeout of losses, and still going
    finally:
        client.close()


def test_connections_to_the_real_broker_lost_before_it_confirmed_anything_end_in_an_error(activemq):
    client = StompClient(broker_settings(1.0), "jms_queue source '/queue/q' consumer 0").connect()
    started = time.monotonic()
    with pytest.raises(RetriesExhausted, match=r"at 127\.0\.0\.1:61613 was lost \d+ time\(s\) in 1\.\d s"):
        while time.monotonic() - started < 10:
            time.sleep(0.1)
            client.lost = True
            client.connect()
    assert not client.connected
