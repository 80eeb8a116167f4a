"""Spark writers over jetconnect sinks, for batch and streaming writes, rows or Arrow."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark import TaskContext
from pyspark.sql.datasource import (
    DataSourceArrowWriter,
    DataSourceStreamArrowWriter,
    DataSourceStreamWriter,
    DataSourceWriter,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from jetconnect._connector import CommitContext, Sink, WriteContext
from jetconnect._options import Options
from jetconnect.spark._guard import guarded
from jetconnect.spark._worker import settle

# Local properties Spark's micro-batch execution sets on every task of a streaming write.
BATCH_ID_PROPERTY = "streaming.sql.batchId"
QUERY_ID_PROPERTY = "sql.streaming.queryId"


@dataclass
class SinkMessage(WriterCommitMessage):
    """What one write task hands to the commit: the sink's own message and the query's id."""

    payload: Any
    query_id: str | None


class _SinkWriter:
    def __init__(self, sink: Sink, schema: StructType, overwrite: bool, options: Options, streaming: bool) -> None:
        self.sink = sink
        self.schema = schema
        self.overwrite = overwrite
        self.options = options
        self.streaming = streaming

    def secret_holders(self) -> tuple[Any, ...]:
        return (self.sink, self.options)

    @guarded
    def write(self, iterator: Iterator[Any]) -> SinkMessage:
        settle()
        task = TaskContext.get()
        batch_id = task.getLocalProperty(BATCH_ID_PROPERTY) if (task and self.streaming) else None
        query_id = task.getLocalProperty(QUERY_ID_PROPERTY) if task else None
        ctx = WriteContext(
            partition_id=task.partitionId() if task else 0,
            attempt=task.attemptNumber() if task else 0,
            batch_id=int(batch_id) if batch_id is not None else None,
            query_id=query_id,
            schema=self.schema,
            overwrite=self.overwrite,
            options=self.options,
        )
        return SinkMessage(self.sink.write_partition(iterator, ctx), query_id)

    def _context(self, messages: list[Any], batch_id: int | None) -> tuple[list[Any], CommitContext]:
        present = [m for m in messages if isinstance(m, SinkMessage)]
        query_id = next((m.query_id for m in present if m.query_id), None)
        ctx = CommitContext(batch_id=batch_id, query_id=query_id, overwrite=self.overwrite, options=self.options)
        return [m.payload for m in present], ctx

    def _commit(self, messages: list[Any], batch_id: int | None) -> None:
        payloads, ctx = self._context(messages, batch_id)
        self.sink.commit(payloads, ctx)

    def _abort(self, messages: list[Any], batch_id: int | None) -> None:
        payloads, ctx = self._context(messages, batch_id)
        self.sink.abort(payloads, ctx)


class _BatchWrites(_SinkWriter):
    @guarded
    def commit(self, messages: list[Any]) -> None:
        self._commit(messages, None)

    @guarded
    def abort(self, messages: list[Any]) -> None:
        self._abort(messages, None)


class _StreamWrites(_SinkWriter):
    @guarded
    def commit(self, messages: list[Any], batchId: int) -> None:
        self._commit(messages, batchId)

    @guarded
    def abort(self, messages: list[Any], batchId: int) -> None:
        self._abort(messages, batchId)


class RowWriter(_BatchWrites, DataSourceWriter):
    pass


class ArrowWriter(_BatchWrites, DataSourceArrowWriter):
    pass


class RowStreamWriter(_StreamWrites, DataSourceStreamWriter):
    pass


class ArrowStreamWriter(_StreamWrites, DataSourceStreamArrowWriter):
    pass


def make_writer(sink: Sink, schema: StructType, overwrite: bool, options: Options, streaming: bool) -> Any:
    """The Spark writer class matching the sink's input format and the kind of write."""
    sink.check_schema(schema)
    arrow = sink.input_format == "arrow"
    cls = (ArrowStreamWriter if arrow else RowStreamWriter) if streaming else (ArrowWriter if arrow else RowWriter)
    return cls(sink, schema, overwrite, options, streaming)
