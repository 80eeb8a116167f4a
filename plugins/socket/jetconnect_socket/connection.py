"""A TCP connection that (re)connects with backoff and speaks in lines."""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass, field

from jetconnect.api import Backoff, redact_hosts, retry_call
from jetconnect.errors import OptionError, SourceError

log = logging.getLogger("jetconnect.socket")

#: What a refused, reset or timed-out connection raises.
NETWORK_ERRORS: tuple[type[BaseException], ...] = (OSError,)


@dataclass(frozen=True)
class Endpoint:
    """Where the server is, and how long to keep trying to reach it before a clear error."""

    host: str
    port: int
    connect_timeout: float = 30.0

    def __post_init__(self) -> None:
        if not 0 < self.port < 65536:
            raise OptionError(f"socket: option 'port' must be 1-65535, got {self.port}")
        if self.connect_timeout <= 0:
            raise OptionError(f"socket: option 'connect_timeout' must be positive, got {self.connect_timeout}")

    def __str__(self) -> str:
        return f"{redact_hosts(self.host)}:{self.port}"  # a user:password@ pasted into host stays hidden

    def __repr__(self) -> str:
        return f"Endpoint({self})"

    def connect(self, what: str) -> socket.socket:
        """A connected socket, retrying with backoff until ``connect_timeout`` seconds have passed."""

        def once() -> socket.socket:
            return socket.create_connection((self.host, self.port), timeout=min(5.0, self.connect_timeout))

        return retry_call(
            once,
            retry_on=NETWORK_ERRORS,
            what=f"{what}: connecting to {self}",
            backoff=Backoff(initial=0.1, maximum=2.0, deadline=self.connect_timeout),
        )


#: The longest line a socket source accepts by default, in bytes without its newline: a server
#: that never sends a newline must not grow the reader's buffer without limit.
DEFAULT_MAX_LINE_BYTES = 1 << 20


def check_max_line_bytes(value: object) -> int:
    if type(value) is not int or value < 1:
        raise OptionError(f"socket: option 'max_line_bytes' must be an integer of at least 1, got {value!r}")
    return value


@dataclass
class LineReader:
    """Complete lines received on one connection; a line still being sent waits for its newline.

    When the server closes the connection, or it breaks, the lines that arrived complete are
    returned first and the reader reconnects (with backoff, up to ``connect_timeout``) on a later
    read: a failed reconnect never takes lines already received with it. A socket cannot replay,
    so what was sent while nobody listened is not ours to recover, and the unfinished line a dead
    connection leaves (bytes after its last newline) is **dropped with a warning**, never emitted
    and never glued to the next connection's bytes: it is a line only once its newline arrives,
    and a cut-off line emitted as if whole would be silent corruption. :attr:`dropped_bytes`
    counts what was dropped so.

    A line longer than ``max_line_bytes`` (without its newline) fails the reader with an error
    naming the limit, the server and the line's byte offset in the connection, after the lines
    before it were delivered: a server that never sends a newline cannot fill the memory.
    """

    endpoint: Endpoint
    charset: str
    what: str
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    sock: socket.socket | None = None
    #: The bytes of the current connection after its last newline (at most ``max_line_bytes``).
    partial: bytes = b""
    lines_read: int = 0
    #: An error found after good lines of the same chunk: raised on the read after next, so the
    #: good lines are delivered and logged first (see :meth:`read_lines`).
    failure: SourceError | None = None
    reconnects: int = field(default=0)
    #: Bytes of unfinished lines dropped because their connection ended.
    dropped_bytes: int = 0
    #: Where ``partial`` starts in the current connection's byte stream: offsets in errors.
    offset: int = 0
    #: The next read returns nothing (see :meth:`read_lines`).
    _pause: bool = False
    #: The connection ended: the next read that is not a pause reconnects.
    _ended: bool = False

    def __post_init__(self) -> None:
        check_max_line_bytes(self.max_line_bytes)

    def open(self) -> LineReader:
        self.sock = self.endpoint.connect(self.what)
        self.sock.setblocking(False)
        self.offset = 0
        return self

    def read_lines(self, max_bytes: int = 1 << 20) -> list[str]:
        """The complete lines that have arrived, without waiting for more.

        After a read that returned lines and found an error, or the end of the connection, the
        next read returns nothing and does no I/O: the builder logs what a pull gathered when a
        fill comes back empty, so an error raised by the read after that (a bad line, a failed
        reconnect) cannot discard the good lines of the same pull.
        """
        if self._pause:
            self._pause = False
            return []
        if self.failure is not None:
            raise self.failure
        if self._ended:
            self.open()  # raises once connect_timeout has passed; nothing received is held then
            self._ended = False
            self.reconnects += 1
        elif self.sock is None:
            self.open()
        chunks, ended = self._receive(max_bytes)
        lines = self._split(b"".join(chunks)) if chunks else []
        if ended:
            self._end_connection()
        if lines and (ended or self.failure is not None):
            self._pause = True
        elif self.failure is not None:
            raise self.failure
        return lines

    def _receive(self, max_bytes: int) -> tuple[list[bytes], bool]:
        """What the socket holds now (up to about ``max_bytes``), and whether the connection ended."""
        sock = self.sock
        assert sock is not None, "read_lines opens the connection before receiving"
        chunks: list[bytes] = []
        received = 0
        while received < max_bytes:
            try:
                chunk = sock.recv(min(65536, max_bytes - received))
            except BlockingIOError:
                return chunks, False
            except NETWORK_ERRORS:
                chunk = b""
            if not chunk:  # closed by the server, or broken
                return chunks, True
            chunks.append(chunk)
            received += len(chunk)
        return chunks, False

    def _split(self, data: bytes) -> list[str]:
        """The lines ``data`` completes after :attr:`partial`; the rest becomes the new ``partial``."""
        data = self.partial + data
        complete, newline, rest = data.rpartition(b"\n")
        raw_lines = complete.split(b"\n") if newline else []
        lines: list[str] = []
        position = self.offset  # where the line being looked at starts in the connection
        for raw in raw_lines:
            if len(raw) > self.max_line_bytes and self._too_long(raw):
                self._fail_too_long(position)
                return lines
            try:
                lines.append(raw.decode(self.charset).removesuffix("\r"))
            except UnicodeDecodeError as exc:
                self._fail(
                    SourceError(
                        f"{self.what}: line {self.lines_read + 1} from {self.endpoint} is not valid {self.charset} "
                        f"({exc.reason} at byte {exc.start} of the line, which starts at byte {position} of the "
                        f"connection): {raw[:80]!r}; the {self.lines_read} lines before it were kept"
                    )
                )
                return lines
            self.lines_read += 1
            position += len(raw) + 1
        self.partial, self.offset = rest, position
        if len(rest) > self.max_line_bytes and self._too_long(rest):
            self._fail_too_long(position)
        return lines

    def _too_long(self, raw: bytes) -> bool:
        """Whether ``raw`` (a line, or the start of one) has more than ``max_line_bytes`` without its line end."""
        # a trailing \r belongs to the line end (\r\n), or may once the \n arrives
        return len(raw) - raw.endswith(b"\r") > self.max_line_bytes

    def _fail_too_long(self, position: int) -> None:
        self._fail(
            SourceError(
                f"{self.what}: line {self.lines_read + 1} from {self.endpoint} (at byte {position} of the connection) "
                f"is longer than option 'max_line_bytes' allows ({self.max_line_bytes} bytes without a newline); "
                f"the {self.lines_read} lines before it were kept"
            )
        )

    def _fail(self, error: SourceError) -> None:
        self.failure = error
        self.partial = b""  # nothing more is read: let the buffer go

    def _end_connection(self) -> None:
        if self.partial:
            log.warning(
                "%s: the connection to %s ended in the middle of a line: its first %d bytes (at byte %d of the "
                "connection) were dropped, not emitted, since a line ends with a newline",
                self.what,
                self.endpoint,
                len(self.partial),
                self.offset,
            )
            self.dropped_bytes += len(self.partial)
        self.partial = b""
        self.close()
        self._ended = True

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None


__all__ = ["DEFAULT_MAX_LINE_BYTES", "Endpoint", "LineReader", "NETWORK_ERRORS"]
