"""The JMS sink: each Spark partition of each batch is sent in one STOMP transaction.

The transaction is committed at the end of the partition, with a receipt, so a partition reaches
the queue whole or not at all. The batch's commit runs in another process that cannot see the
tasks' connections, so a batch that Spark re-delivers after a driver crash is sent again: the
sink is at-least-once. Every message of a streaming write carries a ``jetconnect-batch`` header,
the write's :class:`~jetconnect.api.WriteKey` as text (``<query id>:<batch id>:<partition>``),
so a consumer can drop a resent partition.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from jetconnect import Guarantee, Sink, WriteContext
from jetconnect.api import Backoff, RetriesExhausted, check_function_option, retry_call, spark_rows
from jetconnect.errors import SchemaError, SinkError
from jetconnect_jms.source import Kind
from jetconnect_jms.stomp_client import (
    CONNECTION_ERRORS,
    BrokerError,
    ConnectRefused,
    StompClient,
    StompSettings,
    destination_path,
    tls_settings,
)


class JmsSink(Sink):
    """Rows of a DataFrame as JMS messages: body from one column, headers from others.

    ``sinks.jms_queue`` and ``sinks.jms_topic`` are this class with ``kind`` fixed: every parameter
    after ``kind`` is also a Spark option; ``message_fn`` (Jet's, making each message from a row)
    the Python API alone can pass.
    """

    guarantee = Guarantee.AT_LEAST_ONCE
    input_format = "arrow"

    def __init__(
        self,
        kind: Kind,
        destination: str,
        host: str = "127.0.0.1",
        port: int = 61613,
        body_column: str = "body",
        header_columns: list[str] | None = None,
        persistent: bool = True,
        user: str | None = None,
        password: str | None = None,
        connect_timeout: float = 30.0,
        receipt_timeout: float = 120.0,
        tls: bool | None = None,
        tls_ca_file: str | None = None,
        tls_cert_file: str | None = None,
        tls_key_file: str | None = None,
        tls_key_password: str | None = None,
        message_fn: Callable[[Any], Any] | None = None,
    ) -> None:
        self.kind = kind
        self.name = f"jms_{kind}"
        self.destination = destination_path(kind, destination)
        self.owner = f"{self.name} sink '{self.destination}'"
        self.settings = StompSettings(
            host=host,
            port=port,
            user=user,
            password=password,
            connect_timeout=connect_timeout,
            receipt_timeout=receipt_timeout,
            tls=tls_settings(self.owner, tls, tls_ca_file, tls_cert_file, tls_key_file, tls_key_password),
        )
        self.body_column = body_column
        self.header_columns = tuple(header_columns or ())
        self.persistent = persistent
        check_function_option(message_fn, "message_fn", self.owner, "the row", factory=f"sinks.{self.name}")
        self.message_fn = message_fn

    def check_schema(self, schema: Any) -> None:
        if self.message_fn is not None:
            return  # the function makes each message from rows of any schema
        names = set(schema.fieldNames())
        wanted = [self.body_column, *self.header_columns]
        missing = [c for c in wanted if c not in names]
        if missing:
            raise SchemaError(
                f"{self.owner}: column(s) {', '.join(missing)} not in the DataFrame "
                f"({', '.join(schema.fieldNames())}); see options 'body_column' and 'header_columns'"
            )

    def check_connection(self) -> str:
        """Connect and log in to the broker (TLS handshake included), send nothing, disconnect."""
        try:
            return StompClient(self.settings, self.owner).check()
        except (BrokerError, RetriesExhausted, ConnectRefused) as exc:
            raise SinkError(str(exc)) from None

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> int:
        # The batches are kept so that a connection lost mid-transaction (the broker then drops
        # the transaction) can be retried whole on a new connection.
        batches = [b for b in data if b.num_rows]
        if not batches:
            return 0
        common = {"persistent": "true" if self.persistent else "false"}
        if ctx.key is not None:  # streaming: the core's WriteKey, spelled as in every sink
            common["jetconnect-batch"] = ctx.key.text()
        client = StompClient(self.settings, self.owner)
        try:
            return retry_call(
                lambda: self._send_transaction(client, batches, common),
                retry_on=CONNECTION_ERRORS,
                what=f"{self.owner}: sending partition {ctx.partition_id}",
                backoff=Backoff(initial=0.2, maximum=2.0, deadline=self.settings.connect_timeout),
            )
        except (BrokerError, RetriesExhausted, ConnectRefused) as exc:
            raise SinkError(str(exc)) from None  # the messages are scrubbed; the causes need not be
        finally:
            client.close()

    def _send_transaction(self, client: StompClient, batches: list[pa.RecordBatch], common: dict[str, str]) -> int:
        if not client.connected:
            client.connect()
        transaction = f"jetconnect-{uuid.uuid4().hex}"
        client.begin(transaction)
        sent = 0
        try:
            for batch in batches:
                if self.message_fn is not None:
                    for body, headers in self._made(batch, sent):
                        client.send(self.destination, body, {**common, **headers}, transaction)
                        sent += 1
                    continue
                bodies = _bodies(batch.column(self.body_column))
                header_values = [batch.column(name).to_pylist() for name in self.header_columns]
                for row, body in enumerate(bodies):
                    message_headers = dict(common)
                    for name, values in zip(self.header_columns, header_values):
                        if values[row] is not None:
                            message_headers[name] = str(values[row])
                    client.send(self.destination, body, message_headers, transaction)
                    sent += 1
            client.commit(transaction)
        except BaseException:
            client.abort(transaction)
            raise
        return sent

    def _made(self, batch: pa.RecordBatch, before: int) -> Iterator[tuple[str | bytes, dict[str, str]]]:
        """Jet's ``messageFn``: each row, as a pyspark ``Row``, made into a body or a ``(body, headers)`` pair."""
        message_fn = self.message_fn
        assert message_fn is not None, "write_partition makes messages with message_fn only when there is one"
        for i, row in enumerate(spark_rows(batch)):
            made = message_fn(row)
            body, headers = made if isinstance(made, tuple) and len(made) == 2 else (made, {})
            if not isinstance(body, (str, bytes)) or not isinstance(headers, dict):
                raise SinkError(
                    f"{self.owner}: message_fn returned {type(made).__name__} for row {before + i} of this "
                    f"partition; return a body (str or bytes) or a (body, headers dict) pair"
                )
            yield body, {str(k): str(v) for k, v in headers.items() if v is not None}


def _bodies(column: pa.Array | pa.ChunkedArray) -> list[Any]:
    """Message bodies: strings and bytes as they are, anything else as JSON text."""
    kind = column.type
    if (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
    ):
        return ["" if v is None else v for v in column.to_pylist()]
    return [json.dumps(v, default=str, separators=(",", ":")) for v in column.to_pylist()]


__all__ = ["JmsSink"]
