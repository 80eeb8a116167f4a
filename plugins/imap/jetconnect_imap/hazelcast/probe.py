"""What a member address answers to the first step of Hazelcast's client protocol, for an error
that names the setting at fault when a client could not connect.

:func:`probe` does what the client does first, once and with a short deadline: a TCP connect,
the TLS handshake when ``ssl_enabled`` (with the client's own code, so the same settings fail the
same way), the protocol bytes ``CP2`` and one ``Client.authentication`` request with the cluster
name and credentials of the settings. What comes back tells apart what the client's own error
("Unable to connect to any cluster") does not: nothing listening, TLS settings, a peer that does
not speak the protocol (silent, closing, or answering bytes that are no Hazelcast frame), the
cluster name or credentials refused, or a client admitted (then the cause is elsewhere).
"""

from __future__ import annotations

import enum
import os
import socket
import ssl
import struct
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from hazelcast import __version__ as client_version
from hazelcast.config import Config
from hazelcast.core import CLIENT_TYPE, SERIALIZATION_VERSION
from hazelcast.protocol.client_message import _IS_FINAL_FLAG, Frame, InboundMessage
from hazelcast.protocol.codec import client_authentication_codec
from hazelcast.reactor import AsyncoreConnection

#: com.hazelcast.client.impl.protocol.codec.ClientAuthenticationCodec's response type.
_AUTH_RESPONSE_TYPE = 0x000101
#: A frame header: its length (header included) and flags, little-endian.
_FRAME_HEADER = struct.Struct("<iH")
#: The largest first answer a member sends (an authentication response is under 200 bytes).
_MAX_FRAME = 1 << 16


class Verdict(enum.Enum):
    """What one member address answered."""

    ADMITTED = "admitted"
    NOTHING_LISTENING = "nothing listening"
    TLS_SETTINGS = "TLS settings"
    TLS_HANDSHAKE = "TLS handshake"
    SILENT = "silent"
    CLOSED = "closed"
    NOT_HAZELCAST = "not Hazelcast"
    CREDENTIALS = "cluster name or credentials refused"
    NOT_ALLOWED = "client not allowed"
    SERIALIZATION = "serialization version"


@dataclass(frozen=True)
class Finding:
    """``member``'s answer, and the detail to show (never a secret: no setting's value)."""

    member: str
    verdict: Verdict
    detail: str = ""


def probe(member: str, settings: Mapping[str, Any], timeout: float) -> Finding:
    """What ``member`` (``host:port``) answers to a client with ``settings`` within ``timeout``
    seconds (each step: connect, handshake, answer)."""
    host, _, port = member.rpartition(":")
    host = host.strip("[]")
    config = Config.from_dict(dict(settings))
    try:
        sock = socket.create_connection((host, int(port)), timeout=timeout)
    except OSError as exc:
        return Finding(member, Verdict.NOTHING_LISTENING, _said(exc))
    try:
        if config.ssl_enabled:
            family = sock.family
            sock.close()
            unusable = tls_file_problem(config)
            if unusable:
                return Finding(member, Verdict.TLS_SETTINGS, unusable)
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.settimeout(timeout)
            holder = SimpleNamespace(socket=sock)
            try:
                # the client's own method (on a stand-in that holds the socket): the same settings
                # load the same way; the handshake runs at connect
                AsyncoreConnection._wrap_as_ssl_socket(holder, config, host)  # type: ignore[arg-type]
            except (OSError, ValueError) as exc:
                return Finding(member, Verdict.TLS_SETTINGS, _said(exc))
            sock = holder.socket
            try:
                sock.connect((host, int(port)))
            except TimeoutError:
                return Finding(member, Verdict.SILENT, f"no answer to the TLS handshake within {timeout:g} s")
            except OSError as exc:
                return Finding(member, Verdict.TLS_HANDSHAKE, _said(exc))
        return _authenticate(sock, member, config, timeout)
    finally:
        sock.close()


def tls_file_problem(config: Config) -> str:
    """Which of the TLS file settings names no readable file, or one Python's ``ssl`` cannot
    load, as text ('' if all load)."""
    for setting in ("ssl_cafile", "ssl_certfile", "ssl_keyfile"):
        path = getattr(config, setting)
        if path and not (os.path.isfile(path) and os.access(path, os.R_OK)):
            return f"{setting} {path!r} is not a readable file"
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if config.ssl_cafile:
        try:
            context.load_verify_locations(config.ssl_cafile)
        except (OSError, ValueError) as exc:
            return f"ssl_cafile {config.ssl_cafile!r} holds no CA certificate ssl can load ({_said(exc)})"
    if config.ssl_certfile:
        try:
            context.load_cert_chain(config.ssl_certfile, config.ssl_keyfile, config.ssl_password)
        except (OSError, ValueError) as exc:
            return (
                f"ssl_certfile {config.ssl_certfile!r} (with ssl_keyfile and ssl_password) holds no certificate "
                f"and key ssl can load ({_said(exc)})"
            )
    return ""


def _authenticate(sock: socket.socket, member: str, config: Config, timeout: float) -> Finding:
    request = client_authentication_codec.encode_request(
        config.cluster_name,
        config.creds_username,
        config.creds_password,
        uuid.uuid4(),
        CLIENT_TYPE,
        SERIALIZATION_VERSION,
        client_version,
        "jetconnect-probe",
        [],
    )
    request.set_correlation_id(1)
    try:
        sock.sendall(b"CP2" + bytes(request.buf))
        answer = _read_message(sock, timeout)
    except TimeoutError:
        return Finding(member, Verdict.SILENT, f"no answer to the Hazelcast handshake within {timeout:g} s")
    except _NotAFrame as exc:
        return Finding(member, Verdict.NOT_HAZELCAST, f"it answered {exc.start!r}, which is no Hazelcast frame")
    except OSError as exc:
        return Finding(member, Verdict.CLOSED, f"it closed the connection ({type(exc).__name__}: {exc})")
    if answer is None:
        return Finding(member, Verdict.CLOSED, "it closed the connection without an answer")
    message_type = struct.unpack_from("<i", answer.start_frame.buf, 0)[0]
    if message_type != _AUTH_RESPONSE_TYPE:
        return Finding(member, Verdict.NOT_HAZELCAST, f"it answered message type {message_type:#x}")
    status = client_authentication_codec.decode_response(answer)["status"]
    verdict = {
        0: Verdict.ADMITTED,
        1: Verdict.CREDENTIALS,
        2: Verdict.SERIALIZATION,
        3: Verdict.NOT_ALLOWED,
    }.get(status, Verdict.NOT_HAZELCAST)
    return Finding(member, verdict, f"authentication status {status}")


class _NotAFrame(Exception):
    def __init__(self, start: bytes) -> None:
        super().__init__()
        self.start = start


def _read_message(sock: socket.socket, timeout: float) -> InboundMessage | None:
    """The first whole message ``sock`` receives within ``timeout`` s; None if it closes first."""
    deadline = time.monotonic() + timeout
    buffer = b""
    message: InboundMessage | None = None
    while True:
        while len(buffer) >= _FRAME_HEADER.size:
            length, flags = _FRAME_HEADER.unpack_from(buffer, 0)
            if not _FRAME_HEADER.size <= length <= _MAX_FRAME:
                raise _NotAFrame(buffer[:16])
            if len(buffer) < length:
                break
            frame = Frame(buffer[_FRAME_HEADER.size : length], flags)
            buffer = buffer[length:]
            if message is None:
                message = InboundMessage(frame)
            else:
                message.add_frame(frame)
            if flags & _IS_FINAL_FLAG:
                return message
        left = deadline - time.monotonic()
        if left <= 0:
            if buffer or message is not None:
                raise _NotAFrame(buffer[:16])
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(4096)
        if not chunk:
            if buffer:
                raise _NotAFrame(buffer[:16])
            return None
        buffer += chunk


def _said(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


__all__ = ["Finding", "Verdict", "probe", "tls_file_problem"]
