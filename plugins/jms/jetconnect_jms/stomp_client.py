"""One STOMP 1.2 connection to the broker, as the JMS source and sink need it.

stomp.py delivers frames on its own receiver thread; :class:`StompClient` turns that into what a
pull-style reader wants: a queue of received messages to drain, receipts to wait for (an ACK or
COMMIT is only known to be done when its receipt arrives), and a flag that says the connection
was lost, so the caller can reconnect and forget what the lost connection had delivered.

Reconnecting is bounded by ``connect_timeout``: each attempt (TCP connect, then the broker's
CONNECTED) has a deadline, and a connection that keeps being lost soon after it was made, with
nothing confirmed by the broker meanwhile, counts as still reconnecting, so a broker that
accepts and drops, or a frame that cannot be parsed redelivered on every connection, ends in a
clear error naming the broker's host:port instead of reconnecting forever.

Over TLS (ActiveMQ's ``stomp+ssl``) the server's certificate is checked against the given CA and
its names against the host, as Python's ``ssl.create_default_context`` does; a client certificate
is sent when the settings have one. A connection the broker or the handshake refuses for good (a
wrong password, an unknown user, a certificate not trusted, a plaintext client on a TLS port, or
TLS on a plaintext one) raises :class:`ConnectRefused` at once: waiting cannot cure it, and a
retried login would only fill the broker's log with failures.
"""

from __future__ import annotations

import collections
import errno
import itertools
import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import stomp
import stomp.connect
import stomp.exception
import stomp.protocol
import stomp.transport
import stomp.utils

from jetconnect.api import (
    PLAIN_NAME,
    PLAIN_NAME_IS,
    Backoff,
    ConnectionFailure,
    RetriesExhausted,
    check_name,
    connection_failure,
    explain_connection_failure,
    redact,
    redact_hosts,
    retry_call,
)
from jetconnect.errors import OptionError
from jetconnect_jms.stomp_frames import FrameError, FrameReader

_log = logging.getLogger(__name__)

#: What stomp.py raises when the broker is down or the connection is lost.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    stomp.exception.ConnectFailedException,
    stomp.exception.NotConnectedException,
    ConnectionError,
    OSError,
)


#: How often the client tells the broker it is alive.
HEARTBEAT_MS = 5000


def _escape_header(value: str) -> str:
    """A STOMP 1.2 header value as it goes on the wire (backslash, CR, LF and colon escaped)."""
    if "\\" in value or "\r" in value or "\n" in value or ":" in value:
        value = value.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n").replace(":", "\\c")
    return value


class BrokerError(Exception):
    """The broker answered with an ERROR frame (bad destination, refused login, ...)."""


class ReceiptTimeout(ConnectionError):
    """A receipt did not arrive in time: treat the connection as lost."""


class ConnectRefused(Exception):
    """The broker or the TLS handshake refused the connection for a reason retrying cannot cure:
    credentials, a certificate, the port's protocol. Not one of :data:`CONNECTION_ERRORS`."""


#: The first bytes of a TLS record (handshake or alert, TLS 1.0-1.3): what a TLS port answers a
#: plaintext client with.
_TLS_RECORDS = (b"\x15\x03", b"\x16\x03")


@dataclass(frozen=True)
class TlsSettings:
    """TLS for the STOMP connection; ``key_password`` never appears in ``repr``.

    The broker's certificate is checked against ``ca_file`` (the system's CAs when None) and must
    name the host connected to; ``cert_file``/``key_file`` are the client's own certificate, for a
    broker that requires one (``needClientAuth``), ``key_password`` the key's passphrase.
    """

    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None

    def __repr__(self) -> str:
        return f"TlsSettings(ca_file={self.ca_file!r}, cert_file={self.cert_file!r}, key_file={self.key_file!r})"

    def context(self, owner: str) -> ssl.SSLContext:
        """The client's TLS context: TLS 1.2 or later, the certificate and the host name verified."""
        try:
            context = ssl.create_default_context(cafile=self.ca_file)
        except (OSError, ValueError) as exc:
            raise ConnectRefused(f"{owner}: option 'tls_ca_file' ({self.ca_file}): {_reason(exc)}") from None
        if self.cert_file is not None:
            try:
                context.load_cert_chain(self.cert_file, self.key_file, self.key_password)
            except (OSError, ValueError) as exc:
                files = f"{self.cert_file}" + (f", {self.key_file}" if self.key_file else "")
                raise ConnectRefused(
                    f"{owner}: options 'tls_cert_file'/'tls_key_file'/'tls_key_password' ({files}): {_reason(exc)}"
                ) from None
        return context


def tls_settings(
    owner: str,
    tls: bool | None,
    ca_file: str | None,
    cert_file: str | None,
    key_file: str | None,
    key_password: str | None,
) -> TlsSettings | None:
    """The TLS of a connector's options: on when ``tls`` is true, or unset and any ``tls_*`` option
    is given. A client key needs its certificate (a certificate file may hold the key too)."""
    given = any(v is not None for v in (ca_file, cert_file, key_file, key_password))
    if tls is False and given:
        raise OptionError(f"{owner}: options 'tls_*' are given but option 'tls' is false")
    if (key_file is not None or key_password is not None) and cert_file is None:
        raise OptionError(f"{owner}: options 'tls_key_file' and 'tls_key_password' need option 'tls_cert_file'")
    if not (tls or given):
        return None
    return TlsSettings(ca_file=ca_file, cert_file=cert_file, key_file=key_file, key_password=key_password)


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class StompSettings:
    """Where the broker is and how to log in; ``password`` never appears in ``repr``."""

    host: str = "127.0.0.1"
    port: int = 61613
    user: str | None = None
    password: str | None = None
    #: JMS client id; durable topic subscriptions are keyed by (client id, subscription name).
    client_id: str | None = None
    #: How long to keep trying to (re)connect before giving up with a clear error.
    connect_timeout: float = 30.0
    #: How long an ACK or COMMIT receipt may take before the connection counts as lost.
    receipt_timeout: float = 120.0
    #: TLS (``stomp+ssl``), or None for a plaintext connection.
    tls: TlsSettings | None = None

    def __repr__(self) -> str:
        host = redact_hosts(self.host)  # a user:password@ pasted into host stays hidden
        return (
            f"StompSettings(host={host!r}, port={self.port}, user={self.user!r}, client_id={self.client_id!r}, "
            f"tls={self.tls!r})"
        )

    @property
    def address(self) -> str:
        return f"{redact_hosts(self.host)}:{self.port}"


def destination_path(kind: str, name: str) -> str:
    """``orders`` -> ``/queue/orders`` (or ``/topic/orders``); a name with a leading ``/`` is kept."""
    check_name(name, "destination", f"jms_{kind}", PLAIN_NAME, PLAIN_NAME_IS)  # "q\n" would be another queue
    return name if name.startswith("/") else f"/{kind}/{name}"


class _Listener(stomp.ConnectionListener):
    """Hands one connection's frames to its client; a closed connection's late frames are dropped.

    stomp.py calls back from the connection's own thread, possibly after the client has closed
    it and connected again: a late "disconnected" must not mark the new connection lost, and a
    late message must not be acknowledged on a connection that never received it.
    """

    def __init__(self, client: StompClient, generation: int) -> None:
        self._client = client
        self._generation = generation

    @property
    def _current(self) -> bool:
        return self._generation == self._client._generation

    def on_message(self, frame: Any) -> None:
        if self._current:
            self._client.messages.append((frame.headers, frame.body))
            self._client._arrived.set()

    def on_connected(self, frame: Any) -> None:
        if self._current:
            with self._client._cond:
                self._client._cond.notify_all()  # the CONNECTED that connect() waits for

    def on_receipt(self, frame: Any) -> None:
        with self._client._cond:
            self._client._receipts.add(frame.headers.get("receipt-id"))
            if self._current:
                self._client._confirmed = True  # the broker did something we asked: not flapping
            self._client._cond.notify_all()

    def on_error(self, frame: Any) -> None:
        if not self._current:
            return
        with self._client._cond:
            message = frame.headers.get("message", "")
            body = frame.body.decode("utf-8", "replace") if isinstance(frame.body, bytes) else frame.body
            self._client._errors.append(f"{message} {body or ''}".strip())
            self._client._cond.notify_all()
        self._client._arrived.set()  # a consumer waiting for messages must see the error

    def on_disconnected(self) -> None:
        if not self._current:
            return
        with self._client._cond:
            self._client.lost = True
            self._client._cond.notify_all()
        self._client._arrived.set()


#: Bytes per ``recv``: a prefetch window of MESSAGE frames arrives in a few reads, not hundreds.
RECV_BYTES = 256 * 1024


class _Transport(stomp.transport.Transport):
    """stomp.py's socket transport with :class:`FrameReader` in place of its frame parsing.

    stomp.py's receiver loop calls the private ``__read_frames`` for each read; this is the one
    method replaced, and it hands the same ``Frame`` objects to stomp.py's ``process_frame``, so
    listeners, receipts and heart-beats work as they do in stomp.py.
    """

    def __init__(
        self, broker: tuple[str, int], timeout: float, tls: ssl.SSLContext | None, *args: Any, **kwargs: Any
    ) -> None:
        super().__init__([broker], *args, recv_bytes=RECV_BYTES, timeout=timeout, **kwargs)
        self._reader = FrameReader()
        self._broker, self._timeout, self._tls = broker, timeout, tls
        #: Why this connection was dropped, by the client or the peer, if known (for the error).
        self.failure: str | None = None
        self._first_read = True

    def attempt_connection(self) -> None:
        """Open the TCP connection (and the TLS session) to the one broker address, once.

        Replaces stomp.py's own, which logs why a connection or a TLS handshake failed and raises
        a ``ConnectFailedException`` without the reason; whether to try again is
        :meth:`StompClient.connect`'s to decide, from that reason. As stomp.py does for TLS, the
        socket is then non-blocking and its writes go through the I/O loop's selector.
        """
        self.connection_error = False
        host, port = self._broker
        try:
            sock = socket.create_connection((host, port), self._timeout)
        except OSError as exc:
            raise stomp.exception.ConnectFailedException(f"{host}:{port}: {_reason(exc)}") from None
        if self._tls is not None:
            try:
                sock = self._tls.wrap_socket(sock, server_hostname=host)
            except TimeoutError:
                sock.close()
                raise stomp.exception.ConnectFailedException(
                    f"{host}:{port} accepted the connection but did not answer the TLS handshake within "
                    f"{self._timeout:g} s: a plaintext port (wrong protocol)?"
                ) from None
            except OSError as exc:
                sock.close()
                raise stomp.exception.ConnectFailedException(f"{host}:{port}: TLS: {_reason(exc)}") from None
            self.send_queue = stomp.utils.PollableQueue()
            self.sel = selectors.DefaultSelector()
            self.sel.register(self.send_queue, selectors.EVENT_READ)
            self.sel.register(sock, selectors.EVENT_READ)
            self.blocking = False
        sock.settimeout(self._timeout)
        sock.setblocking(self.blocking)
        self.socket = sock
        self.current_host_and_port = (host, port)

    def receive(self) -> bytes:
        """One read. stomp.py's returns None for any error before the STOMP session is connected,
        which hid a TLS alert (the broker refusing the client's certificate) and made a read of a
        TLS socket with nothing to read yet look like one at its end."""
        sock = self.socket
        if sock is None:
            return b""
        try:
            return sock.recv(RECV_BYTES)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EINTR) and not isinstance(exc, ssl.SSLError):
                raise stomp.exception.InterruptedException() from None
            raise

    def _pending_tls(self) -> bytes:
        """What the TLS session has decrypted already beyond one read: the socket will not turn
        readable for it (its bytes have left the kernel), so the I/O loop's select would sit on
        frames that arrived until the broker sends something more."""
        sock = self.socket
        chunks = []
        while isinstance(sock, ssl.SSLSocket) and sock.pending():
            try:
                chunks.append(sock.recv(RECV_BYTES))
            except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                break
        return b"".join(chunks)

    def send_frames(self, data: bytes) -> None:
        """Frames already encoded, in one write; over TLS through the I/O loop, which alone may use
        the TLS socket (as stomp.py's own frames do), else on the socket at once."""
        if self.blocking:
            self.send(data)
        elif self.send_queue is not None:
            self.send_queue.put(data)
        else:
            raise stomp.exception.NotConnectedException()

    def disconnect_socket(self) -> None:
        """stomp.py's, safe against its own I/O thread: when a connection ends, that thread's
        cleanup sets ``socket`` (and, over TLS, the selector) to None, and stomp.py's method reads
        them again between its checks: ``AttributeError: 'NoneType' object has no attribute
        'shutdown'`` failed a sink's task after its transaction had committed."""
        try:
            super().disconnect_socket()
        except AttributeError:
            if self.socket is not None and not (self._tls is not None and self.sel is None):
                raise  # not the race: a bug to hear of
            # the I/O thread closed the socket already; what stomp.py's method had left to do
            self.running = False
            self.current_host_and_port = None
            self.socket = None
            if not self.notified_on_disconnect:
                self.notify("disconnected")

    def _BaseTransport__read_frames(self) -> None:  # overrides stomp.py's private frame reader
        try:
            data = self.receive()
        except (stomp.exception.InterruptedException, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except Exception as exc:  # noqa: BLE001 - as in stomp.py: any failed read is a closed connection
            if isinstance(exc, ssl.SSLError):  # an alert: the broker refused the client's certificate
                self.failure = f"TLS: {_reason(exc)}"
            data = b""
        if not data:
            # a TLS socket with nothing to read raises SSLWantReadError: no data is the end of it
            self._reader.clear()
            raise stomp.exception.ConnectionClosedException()
        data += self._pending_tls()
        if self._first_read and self._tls is None and data.startswith(_TLS_RECORDS):
            self.failure = (
                f"{self._broker[0]}:{self._broker[1]} answered with a TLS record: a TLS port, "
                "and this client speaks plaintext (wrong protocol); set option 'tls'"
            )
            self._reader.clear()
            raise stomp.exception.ConnectionClosedException()
        self._first_read = False
        failure: Exception | None = None
        try:
            frames = self._reader.feed(data)
        except FrameError as e:
            frames, failure = e.frames, e  # the good frames before the bad one still count
        except Exception as e:  # noqa: BLE001 - a bug in the reader must not hang the connection either
            frames, failure = [], e
        for i, frame in enumerate(frames):
            if failure is None and frame.cmd == "MESSAGE" and "ack" not in frame.headers:
                # every subscription of ours is client-individual: STOMP 1.2 then requires it
                failure = FrameError(f"a MESSAGE frame ({frame.headers['message-id']}) has no 'ack' header")
                frames = frames[:i]
                break
        for frame in frames:
            self.process_frame(frame, data)
        if failure is not None:
            # The stream cannot be resynchronised: drop the connection. Anything but
            # ConnectionClosedException is logged and swallowed by stomp.py's receiver loop, which
            # then waits on a connection it can no longer frame: a silent hang.
            self.failure = f"{type(failure).__name__}: {failure}"
            _log.warning("STOMP connection to %s dropped: %s", self.current_host_and_port, self.failure)
            self._reader.clear()
            raise stomp.exception.ConnectionClosedException() from failure


class _Connection(stomp.Connection12):
    """``stomp.Connection12`` on :class:`_Transport` (its ``__init__`` builds stomp.py's own)."""

    def __init__(
        self, broker: tuple[str, int], heartbeats: tuple[int, int], timeout: float, tls: ssl.SSLContext | None
    ) -> None:
        transport = _Transport(
            broker,
            timeout,
            tls,
            auto_decode=False,  # bodies stay bytes: decoding (and its errors) is ours to name
            reconnect_attempts_max=1,  # our own backoff decides how long to keep trying
        )
        stomp.connect.BaseConnection.__init__(self, transport)
        stomp.protocol.Protocol12.__init__(self, transport, heartbeats)


class StompClient:
    """A connected STOMP session; received MESSAGE frames land in :attr:`messages` in order."""

    _receipt_ids = itertools.count()

    def __init__(self, settings: StompSettings, what: str) -> None:
        self.settings = settings
        #: Names the connection's user in errors, e.g. "jms_queue source 'orders'".
        self.what = what
        #: ``(headers, body)`` of each MESSAGE frame, appended by stomp.py's receiver thread.
        self.messages: collections.deque[tuple[dict[str, str], bytes]] = collections.deque()
        self.lost = False
        self._cond = threading.Condition()
        #: Set when a message (or an error, or the end of the connection) arrives.
        self._arrived = threading.Event()
        self._receipts: set[str] = set()
        self._errors: list[str] = []
        self._subscriptions: list[tuple[str, str, dict[str, str]]] = []
        #: Counts connections: callbacks of an earlier (closed) connection are ignored.
        self._generation = 0
        self._conn: _Connection | None = None
        #: When the current connection was made (monotonic), and whether the broker has sent a
        #: receipt on it since: what tells a working connection from one that keeps being lost.
        self._connected_at: float | None = None
        self._confirmed = False
        #: Since when connect() has been trying without a working connection, how often the
        #: connections it made meanwhile were lost, and the pauses before the next reconnect.
        self._trying_since: float | None = None
        self._losses = 0
        self._pauses: Iterator[float] | None = None

    # --- connecting ------------------------------------------------------------------------------

    def connect(self) -> StompClient:
        """Connect (retrying with backoff) and redo every subscription, within ``connect_timeout``.

        The timeout runs from the first loss of a working connection: one made again since then
        counts as working once the broker confirmed something on it (a receipt) or it lasted
        ``connect_timeout``. A connection lost sooner does not restart the clock, so a broker that
        accepts and then drops, or a frame that breaks every connection it is redelivered on,
        ends in :class:`RetriesExhausted` naming the broker and the last reason, not in a loop.
        """
        now = time.monotonic()
        timeout = self.settings.connect_timeout
        worked = self._confirmed or (self._connected_at is not None and now - self._connected_at >= timeout)
        if self._trying_since is None or worked:
            self._trying_since, self._losses, self._pauses = now, 0, None
        elif self._connected_at is not None:  # lost again before it worked: flapping
            self._losses += 1
            if self._pauses is None:
                self._pauses = Backoff(initial=0.1, maximum=2.0, deadline=timeout).delays()
            pause = next(self._pauses, None)
            if pause is None or now - self._trying_since >= timeout:
                failure = self._conn.transport.failure if self._conn is not None else None
                self.close()
                raise RetriesExhausted(
                    f"{self.what}: the connection to the STOMP broker at {self.settings.address} was lost "
                    f"{self._losses} time(s) in {now - self._trying_since:.1f} s, each time before the broker "
                    f"confirmed anything, and option 'connect_timeout' is {timeout:g} s; last loss: "
                    f"{failure or 'the connection closed'}"
                )
            time.sleep(pause)  # a broker that drops every connection is not hammered
        self._connected_at = None
        remaining = max(0.1, timeout - (time.monotonic() - self._trying_since))
        try:
            retry_call(
                self._connect_once,
                retry_on=CONNECTION_ERRORS,
                retry_if=lambda exc: not _refused_for_good(exc),
                what=f"{self.what}: connecting to the STOMP broker at {self.settings.address}",
                backoff=Backoff(initial=0.1, maximum=2.0, deadline=remaining),
                secrets=self._secrets,
            )
        except CONNECTION_ERRORS as exc:  # refused for good: said at once, never retried
            self.close()
            reason = redact(str(exc), self._secrets)
            raise ConnectRefused(
                f"{self.what}: cannot connect to the STOMP broker at {self.settings.address}: "
                f"{explain_connection_failure(reason)}{reason}"
            ) from None
        except BaseException:
            self.close()  # the last attempt's socket and receiver thread go with it
            raise
        self._connected_at = time.monotonic()
        return self

    @property
    def _secrets(self) -> tuple[str, ...]:
        return (self.settings.password,) if self.settings.password else ()

    def _connect_once(self) -> None:
        self.close()
        # stomp.py's own timeout only covers the TCP connect (its wait for CONNECTED has none)
        attempt = min(5.0, self.settings.connect_timeout)
        tls = self.settings.tls.context(self.what) if self.settings.tls is not None else None
        conn = _Connection(
            (self.settings.host, self.settings.port),
            # Without heart-beats ActiveMQ drops a connection that is silent for 30 s, e.g. one
            # waiting for the receipt of a big transaction's COMMIT on a busy broker.
            heartbeats=(HEARTBEAT_MS, 0),
            timeout=attempt,
            tls=tls,
        )
        conn.set_listener("jetconnect", _Listener(self, self._generation))
        headers = {"client-id": self.settings.client_id} if self.settings.client_id else {}
        self.messages.clear()
        self._errors.clear()
        self.lost = False
        self._confirmed = False
        self._conn = conn  # set first: the next attempt closes it if this one fails
        conn.connect(self.settings.user, self.settings.password, wait=False, headers=headers)
        with self._cond:
            self._cond.wait_for(lambda: conn.is_connected() or self._errors or self.lost, timeout=attempt)
            errors = list(self._errors)
        if not conn.is_connected() or errors:
            # retried like stomp.py's own connect failure: ActiveMQ refuses a durable subscriber's
            # client id while the connection of a crashed run still holds it, for a while
            failure = conn.transport.failure
            raise stomp.exception.ConnectFailedException(
                f"the broker answered ERROR: {redact(errors[0], self._secrets)}"
                if errors
                else f"the connection to {self.settings.address} closed before CONNECTED"
                + (f": {failure}" if failure else "")
                if self.lost
                else f"no CONNECTED frame from {self.settings.address} within {attempt:g} s"
            )
        for destination, sub_id, sub_headers in self._subscriptions:
            conn.subscribe(destination, id=sub_id, ack="client-individual", headers=sub_headers)
        self.raise_broker_error()

    def check(self) -> str:
        """Connect and log in (TLS handshake included), say what was checked, and disconnect: what
        ``jetconnect doctor`` asks of a sink, nothing sent."""
        self.connect()
        try:
            conn = self._conn
            sock = conn.transport.socket if conn is not None else None
            tls = f"{sock.version()} handshake" if isinstance(sock, ssl.SSLSocket) else "no TLS"
        finally:
            self.close()
        login = f"logged in as {self.settings.user!r}" if self.settings.user else "connected without a login"
        return f"STOMP broker at {self.settings.address}: reachable, {tls}, {login}"

    def close(self) -> None:
        """Disconnect, ignoring a connection that is already gone."""
        conn, self._conn = self._conn, None
        with self._cond:  # callbacks of this connection are ignored from now on, waits end
            self._generation += 1
            self.lost = True
            self._cond.notify_all()
        self._arrived.set()
        if conn is not None:
            try:
                conn.disconnect()
            except CONNECTION_ERRORS:
                pass
            # stomp.py closes the socket only when the DISCONNECT receipt arrives; a connection
            # given up as lost may never send it, and while its socket stays open the broker keeps
            # the messages it dispatched there instead of redelivering them.
            conn.transport.disconnect_socket()

    @property
    def connected(self) -> bool:
        return self._conn is not None and not self.lost and self._conn.is_connected()

    def raise_broker_error(self) -> None:
        """Raise the first ERROR frame the broker sent since the last check, if any."""
        with self._cond:
            if self._errors:
                error = redact(self._errors.pop(0), self._secrets)
                raise BrokerError(f"{self.what}: the broker at {self.settings.address} answered ERROR: {error}")

    def _require(self) -> _Connection:
        if self._conn is None or self.lost:
            raise stomp.exception.NotConnectedException(f"{self.what}: not connected")
        return self._conn

    # --- consuming -------------------------------------------------------------------------------

    def subscribe(self, destination: str, sub_id: str, headers: dict[str, str]) -> None:
        """Subscribe with client-individual acknowledgement; repeated after every reconnect."""
        self._subscriptions.append((destination, sub_id, headers))
        self._require().subscribe(destination, id=sub_id, ack="client-individual", headers=headers)

    def wait_for_messages(self, timeout: float) -> bool:
        """Block until :attr:`messages` is not empty (True) or ``timeout`` s have passed (False).

        Also returns early when the connection is lost or the broker sent an ERROR.
        """
        if not self.messages:
            self._arrived.clear()
            if not self.messages:  # checked again: a message may have come before the clear
                self._arrived.wait(timeout)
        return bool(self.messages)

    def ack(self, ack_ids: Iterable[str]) -> None:
        """Acknowledge messages and wait until the broker confirms it processed them."""
        receipt = self.ack_async(ack_ids)
        if receipt is not None:
            self.wait_receipt(receipt, "acknowledging messages")

    def ack_async(self, ack_ids: Iterable[str]) -> str | None:
        """Send the ACKs of messages; return the receipt that confirms them (None if there were none).

        The ACK frames go out in one write: one stomp.py call per message costs a lock, a round
        of listeners and a syscall each, a tenth of a consumer's CPU. Only the last frame asks
        for a receipt: the broker handles a connection's frames in order, so that receipt proves
        the earlier ones were processed too.
        """
        conn = self._require()
        ids = [_escape_header(ack_id) for ack_id in ack_ids]
        if not ids:
            return None
        receipt = self._next_receipt()
        frames = "".join(f"ACK\nid:{ack_id}\n\n\x00" for ack_id in ids[:-1])
        frames += f"ACK\nid:{ids[-1]}\nreceipt:{receipt}\n\n\x00"
        conn.transport.send_frames(frames.encode("utf-8"))
        return receipt

    # --- producing -------------------------------------------------------------------------------

    def begin(self, transaction: str) -> None:
        self._require().begin(transaction)

    def send(self, destination: str, body: bytes | str, headers: dict[str, str], transaction: str | None) -> None:
        self._require().send(destination, body, headers=headers, transaction=transaction)

    def commit(self, transaction: str) -> None:
        """Commit and wait for the receipt: only then is every message of it on the broker."""
        receipt = self._next_receipt()
        self._require().commit(transaction, receipt=receipt)
        self.wait_receipt(receipt, f"committing transaction {transaction}")

    def abort(self, transaction: str) -> None:
        try:
            self._require().abort(transaction)
        except CONNECTION_ERRORS:
            pass  # a lost connection aborts the transaction on the broker anyway

    # --- receipts --------------------------------------------------------------------------------

    def _next_receipt(self) -> str:
        return f"jetconnect-{next(self._receipt_ids)}"

    def take_receipt(self, receipt: str, doing: str) -> bool:
        """Whether ``receipt`` has arrived (forgetting it if so), without waiting.

        An ERROR frame or a lost connection raises, as in :meth:`wait_receipt`.
        """
        with self._cond:
            arrived = receipt in self._receipts
            self._receipts.discard(receipt)
        if not arrived:
            self._raise_if_failed(doing)
        return arrived

    def wait_receipt(self, receipt: str, doing: str) -> None:
        """Block until ``receipt`` arrives; an ERROR frame or a lost connection raises instead."""
        with self._cond:
            ok = self._cond.wait_for(
                lambda: receipt in self._receipts or self._errors or self.lost,
                timeout=self.settings.receipt_timeout,
            )
            self._receipts.discard(receipt)
        self._raise_if_failed(doing)
        if not ok:
            raise ReceiptTimeout(
                f"{self.what}: no receipt from the broker after {self.settings.receipt_timeout} s while {doing}"
            )

    def _raise_if_failed(self, doing: str) -> None:
        """Raise the broker's ERROR, or that the connection was lost while ``doing``."""
        self.raise_broker_error()
        if self.lost:
            raise stomp.exception.NotConnectedException(f"{self.what}: connection lost while {doing}")


def _refused_for_good(exc: BaseException) -> bool:
    """Whether a failed connection attempt is the broker refusing the login, or TLS refusing the
    peer, rather than a broker not (yet) there: only the latter is tried again."""
    kind = connection_failure(str(exc))
    return kind is not None and kind is not ConnectionFailure.UNREACHABLE


__all__ = [
    "CONNECTION_ERRORS",
    "BrokerError",
    "ConnectRefused",
    "TlsSettings",
    "ReceiptTimeout",
    "StompClient",
    "StompSettings",
    "destination_path",
    "tls_settings",
]
