"""A TCP connection that (re)connects with backoff and speaks in lines."""

from __future__ import annotations

import codecs
import socket
from dataclasses import dataclass, field

from jetconnect.errors import OptionError, SourceError
from jetconnect.retry import Backoff, retry_call

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
        return f"{self.host}:{self.port}"

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


def check_charset(charset: str) -> str:
    try:
        return codecs.lookup(charset).name
    except LookupError:
        raise OptionError(f"socket: option 'charset' names no known encoding: {charset!r}") from None


@dataclass
class LineReader:
    """Complete lines received on one connection; a line still being sent waits for its newline.

    When the server closes the connection, or it breaks, the reader reconnects with backoff: a
    socket cannot replay, so what was sent while nobody listened is not ours to recover.
    """

    endpoint: Endpoint
    charset: str
    what: str
    sock: socket.socket | None = None
    partial: bytes = b""
    lines_read: int = 0
    #: A decoding error found after good lines of the same chunk: raised on the read after next,
    #: so the good lines are delivered and logged first (see :meth:`read_lines`).
    failure: SourceError | None = None
    _quiet_before_failure: bool = False
    reconnects: int = field(default=0)

    def open(self) -> "LineReader":
        self.sock = self.endpoint.connect(self.what)
        self.sock.setblocking(False)
        return self

    def read_lines(self, max_bytes: int = 1 << 20) -> list[str]:
        """The complete lines that have arrived, without waiting for more."""
        if self.failure is not None:
            if self._quiet_before_failure:
                # The builder logs what a pull gathered only when a fill comes back empty; an
                # error raised right away would discard the good lines of the same pull.
                self._quiet_before_failure = False
                return []
            raise self.failure
        if self.sock is None:
            self.open()
        chunks = []
        received = 0
        while received < max_bytes:
            try:
                chunk = self.sock.recv(min(65536, max_bytes - received))  # type: ignore[union-attr]
            except BlockingIOError:
                break
            except NETWORK_ERRORS:
                chunk = b""
            if not chunk:  # closed by the server or broken: keep what came, reconnect
                self._reconnect()
                break
            chunks.append(chunk)
            received += len(chunk)
        if not chunks:
            return []
        data = self.partial + b"".join(chunks)
        complete, _, self.partial = data.rpartition(b"\n")
        if not complete and not _:
            return []
        return self._decode(complete.split(b"\n"))

    def _decode(self, raw_lines: list[bytes]) -> list[str]:
        lines = []
        for raw in raw_lines:
            try:
                lines.append(raw.decode(self.charset).removesuffix("\r"))
            except UnicodeDecodeError as exc:
                self.failure = SourceError(
                    f"{self.what}: line {self.lines_read + 1} from {self.endpoint} is not valid {self.charset} "
                    f"({exc.reason} at byte {exc.start}): {raw[:80]!r}; the {self.lines_read} lines before it "
                    f"were kept"
                )
                self._quiet_before_failure = True
                break
            self.lines_read += 1
        return lines

    def _reconnect(self) -> None:
        self.close()
        self.partial = b""  # a half line from a dead connection will never be completed
        self.reconnects += 1
        self.open()

    def close(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            finally:
                self.sock = None


__all__ = ["Endpoint", "LineReader", "NETWORK_ERRORS", "check_charset"]
