"""``sources.socket(host, port)``: lines from a TCP server, one connection per processor.

Built with :class:`jetconnect.SourceBuilder` *without* snapshot functions: a socket cannot
replay, so each round's lines are recorded under ``wal_location`` before they count as read,
and a re-read of the round (a retried task, a restart) replays the record. The processor runs
in an executor task and its connection stays open in that Python worker between rounds; lines
a server sends while no processor is connected are not received at all.
"""

from __future__ import annotations

from jetconnect import ProcessorContext, SourceBuffer, SourceBuilder, StreamSource
from jetconnect.api import WAL_LOCATION, check_charset
from jetconnect.errors import OptionError
from jetconnect_socket.connection import DEFAULT_MAX_LINE_BYTES, Endpoint, LineReader, check_max_line_bytes


def socket_source(
    host: str,
    port: int,
    charset: str = "utf-8",
    parallelism: int = 1,
    connect_timeout: float = 30.0,
    wal_location: str | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> StreamSource:
    """A stream of the lines a TCP server sends (schema ``line string``).

    A line longer than ``max_line_bytes`` (1 MiB) fails the query naming the limit and the line's
    offset, after the lines before it: a server that never sends a newline cannot fill the memory.
    """
    endpoint = Endpoint(host, port, connect_timeout)
    charset = check_charset(charset, owner="socket")
    if parallelism < 1:
        raise OptionError(f"socket source: option 'parallelism' must be at least 1, got {parallelism}")
    max_line_bytes = check_max_line_bytes(max_line_bytes)

    def connect(ctx: ProcessorContext) -> LineReader:
        what = f"socket source processor {ctx.global_processor_index}"
        return LineReader(endpoint, charset, what, max_line_bytes=max_line_bytes).open()

    def fill(reader: LineReader, buf: SourceBuffer) -> None:
        buf.add_all(reader.read_lines())

    builder = (
        SourceBuilder.stream("socket", connect).fill_buffer_fn(fill).destroy_fn(LineReader.close).schema("line string")
    )
    if parallelism > 1:  # Jet's way: that many connections on each member; else one in the whole job
        builder = builder.distributed(parallelism)
    source = builder.build()
    return source.with_options({WAL_LOCATION: wal_location}) if wal_location else source


__all__ = ["socket_source"]
