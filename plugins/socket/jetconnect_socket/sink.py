"""``sinks.socket(host, port)``: each row as a line to a TCP server, one connection per partition.

Built with :class:`jetconnect.SinkBuilder`. A chunk of lines is sent with one ``sendall``; if
the connection breaks, the sink reconnects with backoff and sends the chunk again, so a line
may arrive twice but none is lost (at-least-once; a socket has no transactions).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass

import pyarrow as pa

from jetconnect import SinkBuilder, SinkContext
from jetconnect.api import Backoff, BuilderSink, RetriesExhausted, check_charset, retry_call
from jetconnect.errors import SinkError
from jetconnect_socket.connection import NETWORK_ERRORS, Endpoint


@dataclass
class _LineWriter:
    endpoint: Endpoint
    charset: str
    column: str | None
    what: str
    sock: socket.socket | None = None

    def send(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if self.column is not None and self.column not in batch.schema.names:
            raise SinkError(f"{self.what}: no column '{self.column}' (columns: {', '.join(batch.schema.names)})")
        column = batch.column(self.column) if self.column is not None else batch.column(0)
        lines = ["" if v is None else str(v) for v in column.to_pylist()]
        payload = ("\n".join(lines) + "\n").encode(self.charset)
        try:
            retry_call(
                lambda: self._send_once(payload),
                retry_on=NETWORK_ERRORS,
                what=f"{self.what}: sending {len(lines)} lines to {self.endpoint}",
                backoff=Backoff(initial=0.1, maximum=2.0, deadline=self.endpoint.connect_timeout),
            )
        except RetriesExhausted as exc:
            raise SinkError(str(exc)) from exc

    def _send_once(self, payload: bytes) -> None:
        if self.sock is None:
            self.sock = self.endpoint.connect(self.what)
        try:
            self.sock.sendall(payload)
        except NETWORK_ERRORS:
            self.close()  # reconnect on the next attempt
            raise

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def socket_sink(
    host: str,
    port: int,
    column: str | None = None,
    charset: str = "utf-8",
    connect_timeout: float = 30.0,
) -> BuilderSink:
    """Lines to a TCP server: the value of ``column`` (default: the first column) per row."""
    endpoint = Endpoint(host, port, connect_timeout)
    charset = check_charset(charset, owner="socket")

    def create(ctx: SinkContext) -> _LineWriter:
        writer = _LineWriter(endpoint, charset, column, f"socket sink partition {ctx.partition_id}")
        writer.sock = endpoint.connect(writer.what)
        return writer

    return (
        SinkBuilder.sink("socket", create)
        .receive_batch_fn(_LineWriter.send, format="arrow")
        .destroy_fn(_LineWriter.close)
        .build()
    )


__all__ = ["socket_sink"]
