"""``sinks.socket(host, port)``: each row as a line to a TCP server, one connection per partition.

Built with :class:`jetconnect.SinkBuilder`. The line is a column's value, or what Jet's
``toStringFn`` makes of the row (``to_string_fn``, a Python function of the pyspark ``Row``). A
chunk of lines is sent with one ``sendall``; if the connection breaks, the sink reconnects with
backoff and sends the chunk again, so a line may arrive twice but none is lost (at-least-once; a
socket has no transactions).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from jetconnect import SinkBuilder, SinkContext
from jetconnect.api import (
    Backoff,
    BuilderSink,
    RetriesExhausted,
    check_charset,
    check_function_option,
    retry_call,
    spark_rows,
)
from jetconnect.errors import OptionError, SinkError
from jetconnect.files_family import encode_lines
from jetconnect_socket.connection import NETWORK_ERRORS, Endpoint

#: Jet's ``toStringFn``: a row (a pyspark ``Row``) -> the line sent for it, without its newline.
ToStringFn = Callable[[Any], str]


@dataclass
class _LineWriter:
    endpoint: Endpoint
    charset: str
    column: str | None
    what: str
    to_string_fn: ToStringFn | None = None
    sock: socket.socket | None = None
    rows_before: int = 0  # rows of earlier batches of this task, to name a row at fault

    def send(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        lines = self._lines(batch)
        # One newline per row: a value holding a line break would arrive as two lines (a SinkError
        # naming the row instead); a character the charset lacks is one too.
        payload = encode_lines(pa.array(lines, pa.string()), self.charset, owner=self.what)
        self.rows_before += batch.num_rows
        try:
            retry_call(
                lambda: self._send_once(payload),
                retry_on=NETWORK_ERRORS,
                what=f"{self.what}: sending {len(lines)} lines to {self.endpoint}",
                backoff=Backoff(initial=0.1, maximum=2.0, deadline=self.endpoint.connect_timeout),
            )
        except RetriesExhausted as exc:
            raise SinkError(str(exc)) from exc

    def _lines(self, batch: pa.RecordBatch) -> list[str]:
        if self.to_string_fn is None:
            if self.column is not None and self.column not in batch.schema.names:
                raise SinkError(f"{self.what}: no column '{self.column}' (columns: {', '.join(batch.schema.names)})")
            column = batch.column(self.column) if self.column is not None else batch.column(0)
            return ["" if v is None else str(v) for v in column.to_pylist()]
        lines = []
        for number, row in enumerate(spark_rows(batch)):
            try:
                line = self.to_string_fn(row)
            except Exception as exc:  # the user's function may raise anything: say which row it was
                raise SinkError(
                    f"{self.what}: to_string_fn raised {type(exc).__name__} for row {self.rows_before + number} "
                    f"of this task: {exc}"
                ) from exc
            if not isinstance(line, str):
                raise SinkError(
                    f"{self.what}: to_string_fn returned {type(line).__name__}, not str, for row "
                    f"{self.rows_before + number} of this task"
                )
            lines.append(line)
        return lines

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
    to_string_fn: ToStringFn | None = None,
) -> BuilderSink:
    """Lines to a TCP server: the value of ``column`` (default: the first column) per row, or
    Jet's ``to_string_fn`` of each row (Python only: a function of the pyspark ``Row``)."""
    check_function_option(to_string_fn, "to_string_fn", "socket sink", "the row", factory="sinks.socket")
    if to_string_fn is not None and column is not None:
        raise OptionError("socket sink: give option 'column' or 'to_string_fn', not both")
    endpoint = Endpoint(host, port, connect_timeout)
    charset = check_charset(charset, owner="socket")

    def create(ctx: SinkContext) -> _LineWriter:
        writer = _LineWriter(endpoint, charset, column, f"socket sink partition {ctx.partition_id}", to_string_fn)
        writer.sock = endpoint.connect(writer.what)
        return writer

    return (
        SinkBuilder.sink("socket", create)
        .receive_batch_fn(_LineWriter.send, format="arrow")
        .destroy_fn(_LineWriter.close)
        .build()
    )


__all__ = ["socket_sink"]
