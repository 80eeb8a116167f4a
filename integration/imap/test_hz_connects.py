"""Connecting off the happy path: every connect has a deadline of jetconnect's own, and the error
names what is at fault. Peers that are not Hazelcast are servers the test starts (a plain HTTP
server, a silent TCP port, one that answers a banner, a TLS server); the settings at fault are
tried against a member of the test's own (integration/imap/members.py, port 5751)."""

from __future__ import annotations

import http.server
import socket
import socketserver
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from jetconnect import sources
from jetconnect.errors import SourceError
from jetconnect_imap.errors import StoreError
from jetconnect_imap.factories import map_source
from jetconnect_imap.hazelcast import clients

PORT = 5751
FAST = {"cluster_connect_timeout": 3}


@contextmanager
def _serving(handler: Callable[[socket.socket], None]) -> Iterator[int]:
    """A TCP server on a free loopback port whose connections ``handler`` serves; its port."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            handler(self.request)

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _silent(conn: socket.socket) -> None:
    """Accepts, reads what comes, never answers (until the client goes)."""
    conn.settimeout(60)
    try:
        while conn.recv(4096):
            pass
    except OSError:
        pass


def _banner(conn: socket.socket) -> None:
    """Answers at once, as an SSH server does, then waits."""
    conn.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n")
    _silent(conn)


@contextmanager
def _http_server() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _connect_error(url: str, config: dict, within: float) -> str:
    """The error of reading a map at ``url``, which must come within ``within`` seconds."""
    started = time.monotonic()
    with pytest.raises(SourceError) as failed:
        map_source("m", store=url, client_config=config).splits()
    took = time.monotonic() - started
    assert took < within, f"{took:.1f} s: the connect deadline was not kept"
    return str(failed.value)


@pytest.fixture(autouse=True)
def _fresh_clients() -> Iterator[None]:
    yield
    clients.close_all()


@pytest.mark.timeout(300)
def test_a_plain_http_server_is_not_hazelcast_within_the_default_timeout_through_spark(spark) -> None:
    """The case that hung for ever: a Spark read against a port where an HTTP server listens."""
    with _http_server() as port:
        started = time.monotonic()
        with pytest.raises(Exception) as failed:
            sources.map("x", store=f"hazelcast://127.0.0.1:{port}/c").read(spark).collect()
        took = time.monotonic() - started
    message = str(failed.value)
    assert "within 10 s" in message and "does not speak the Hazelcast client protocol" in message, message
    assert took < 60, f"{took:.0f} s"  # 10 s, a probe of 2 s, and Spark's own planning


@pytest.mark.timeout(120)
@pytest.mark.parametrize("peer", [_silent, _banner], ids=["silent", "banner"])
def test_a_peer_that_accepts_and_does_not_speak_the_protocol_is_an_error_within_the_timeout(peer) -> None:
    with _serving(peer) as port:
        message = _connect_error(f"hazelcast://127.0.0.1:{port}/c", FAST, within=3 + 6)
    assert f"127.0.0.1:{port} accepts connections but does not speak the Hazelcast client protocol" in message
    if peer is _banner:
        assert "SSH-2.0" in message and "no Hazelcast frame" in message, message
    else:
        assert "no answer to the Hazelcast handshake" in message, message


def _tls_server(tmp_path: Path) -> tuple[Callable[[socket.socket], None], Path]:
    """A handler speaking TLS with a self-signed certificate (made with openssl here), and that
    certificate; a client trusting another CA fails to verify it."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)

    def handle(conn: socket.socket) -> None:
        try:
            with context.wrap_socket(conn, server_side=True) as tls:
                _silent(tls)
        except (OSError, ssl.SSLError):
            pass

    return handle, cert


@pytest.mark.timeout(300)
def test_each_setting_at_fault_is_named(own_member, tmp_path) -> None:
    member = own_member(PORT, journal=False)
    base = f"127.0.0.1:{PORT}"

    # nothing listening
    message = _connect_error("hazelcast://127.0.0.1:1/c", FAST, within=10)
    assert "no member reachable: nothing listens at 127.0.0.1:1" in message, message

    # some members down, others answering: each said for what it is
    message = _connect_error(f"hazelcast://127.0.0.1:1,{base}/not-{member.cluster}", FAST, within=10)
    assert "nothing listens at 127.0.0.1:1" in message and "no member reachable" not in message, message
    assert f"{base} is a Hazelcast member that did not admit the client" in message, message

    # the cluster name, and with credentials the name or the credentials
    message = _connect_error(f"hazelcast://{base}/not-{member.cluster}", FAST, within=10)
    assert f"{base} is a Hazelcast member that did not admit the client: the cluster name" in message, message
    assert "credentials" not in message and "TLS" not in message, message
    message = _connect_error(f"hazelcast://jet:s3cr%40t@{base}/not-{member.cluster}", FAST, within=10)
    assert (
        "the cluster name 'not-solo' refused (or, if the cluster requires credentials, those of user 'jet')" in message
    )
    assert "s3cr" not in message
    message = _connect_error(f"hazelcast://jet:s3cr%40t@{base}/{member.cluster}", FAST, within=10)
    assert "the credentials of user 'jet' refused (the cluster name is right" in message, message
    assert "s3cr" not in message

    # the TLS settings: a cafile that is no file, one that holds no certificate (at once, no connect)
    message = _connect_error(member.url, {**FAST, "ssl_enabled": True, "ssl_cafile": str(tmp_path / "no.pem")}, 2)
    assert f"ssl_cafile '{tmp_path / 'no.pem'}' is not a readable file" in message, message
    (tmp_path / "garbage.pem").write_text("not a certificate\n")
    message = _connect_error(member.url, {**FAST, "ssl_enabled": True, "ssl_cafile": str(tmp_path / "garbage.pem")}, 2)
    assert "holds no CA certificate ssl can load" in message, message
    # TLS asked of a member that has none (open-source members have no TLS)
    message = _connect_error(member.url, {**FAST, "ssl_enabled": True}, within=10)
    assert f"the TLS handshake with {base} failed" in message and "members have TLS on" in message, message
    # a TLS peer whose certificate the cafile's CA did not sign
    handle, cert = _tls_server(tmp_path)
    with _serving(handle) as port:
        other_ca = {**FAST, "ssl_enabled": True, "ssl_cafile": "/etc/ssl/certs/ca-certificates.crt"}
        message = _connect_error(f"hazelcast://127.0.0.1:{port}/c", other_ca, within=10)
    assert "certificate verify failed" in message and "ssl_cafile must hold the CA" in message, message

    # a Hazelcast Cloud token: refused before any connection (no discovery call leaves the machine)
    with pytest.raises(SourceError) as failed:
        map_source("m", store=member.url, client_config={"cloud_discovery_token": "tok-3x4mpl3"}).splits()
    assert "cloud_discovery_token" in str(failed.value) and "tok-3x4mpl3" not in str(failed.value)

    # and with everything right, the member admits the client
    assert map_source("m", store=member.url, client_config=FAST).splits() is not None
    with pytest.raises(StoreError):  # the error types stay StoreErrors (a SourceError from the connector)
        clients.client_for(f"hazelcast://{base}/wrong", FAST)
