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
"""

from __future__ import annotations

import collections
import itertools
import logging
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

from jetconnect.api import (
    PLAIN_NAME,
    PLAIN_NAME_IS,
    Backoff,
    RetriesExhausted,
    check_name,
    redact,
    redact_hosts,
    retry_call,
)
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

    def __repr__(self) -> str:
        host = redact_hosts(self.host)  # a user:password@ pasted into host stays hidden
        return f"StompSettings(host={host!r}, port={self.port}, user={self.user!r}, client_id={self.client_id!r})"

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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, recv_bytes=RECV_BYTES, **kwargs)
        self._reader = FrameReader()
        #: Why this connection was dropped by the client, if it was (for the reconnect error).
        self.failure: str | None = None

    def _BaseTransport__read_frames(self) -> None:  # overrides stomp.py's private frame reader
        try:
            data = self.receive()
        except (stomp.exception.InterruptedException, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        except Exception:  # noqa: BLE001 - as in stomp.py: any failed read is a closed connection
            data = b""
        if not data:
            if not self.blocking:
                return
            self._reader.clear()
            raise stomp.exception.ConnectionClosedException()
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

    def __init__(self, host_and_ports: list[tuple[str, int]], heartbeats: tuple[int, int], timeout: float) -> None:
        transport = _Transport(
            host_and_ports,
            auto_decode=False,  # bodies stay bytes: decoding (and its errors) is ours to name
            reconnect_attempts_max=1,  # our own backoff decides how long to keep trying
            timeout=timeout,
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
                what=f"{self.what}: connecting to the STOMP broker at {self.settings.address}",
                backoff=Backoff(initial=0.1, maximum=2.0, deadline=remaining),
                secrets=self._secrets,
            )
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
        conn = _Connection(
            [(self.settings.host, self.settings.port)],
            # Without heart-beats ActiveMQ drops a connection that is silent for 30 s, e.g. one
            # waiting for the receipt of a big transaction's COMMIT on a busy broker.
            heartbeats=(HEARTBEAT_MS, 0),
            timeout=attempt,
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
            raise stomp.exception.ConnectFailedException(
                f"the broker answered ERROR: {redact(errors[0], self._secrets)}"
                if errors
                else f"the connection to {self.settings.address} closed before CONNECTED"
                if self.lost
                else f"no CONNECTED frame from {self.settings.address} within {attempt:g} s"
            )
        for destination, sub_id, sub_headers in self._subscriptions:
            conn.subscribe(destination, id=sub_id, ack="client-individual", headers=sub_headers)
        self.raise_broker_error()

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
        conn.transport.send(frames.encode("utf-8"))
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


__all__ = [
    "CONNECTION_ERRORS",
    "BrokerError",
    "ReceiptTimeout",
    "StompClient",
    "StompSettings",
    "destination_path",
]
