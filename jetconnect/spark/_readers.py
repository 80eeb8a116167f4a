"""Spark readers over jetconnect sources: the batch reader and the stream reader."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadLimit, ReadMaxRows, SupportsTriggerAvailableNow
from pyspark.sql.types import StructType

from jetconnect._arrow_conform import to_batches
from jetconnect._connector import BatchSource, StreamSource
from jetconnect.spark._guard import guarded, guarded_iter
from jetconnect.spark._worker import settle


class _NoSplits:
    """Stands in for the one partition Spark needs when a source has nothing to read."""


class BatchReader(DataSourceReader):
    """Reads the splits of a :class:`BatchSource`, one Spark partition each, as Arrow batches."""

    def __init__(self, source: BatchSource, schema: StructType) -> None:
        source.bind_schema(schema)
        self.source = source
        self.schema = schema

    def secret_holders(self) -> tuple[Any, ...]:
        return (self.source,)

    @guarded
    def partitions(self) -> Sequence[InputPartition]:
        splits = list(self.source.splits())
        return [InputPartition(split) for split in splits] or [InputPartition(_NoSplits())]

    @guarded
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        settle()
        if isinstance(partition.value, _NoSplits):
            return iter(())
        batches = to_batches(self.source.read_split(partition.value), self.schema, f"source '{self.source.name}'")
        return guarded_iter(batches, self.source)


class FilteringBatchReader(BatchReader):
    """A :class:`BatchReader` that offers Spark's filters to the source.

    A separate class because Spark refuses a reader that implements ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false.
    """

    @guarded
    def pushFilters(self, filters: list[Any]) -> Any:
        return iter(self.source.push_filters(list(filters)))


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Drives a :class:`StreamSource` from Spark's driver-side reader process.

    ``latestOffset`` honours admission control: ``max_records_per_batch`` becomes Spark's
    default read limit, and Spark's ``ReadAllAvailable`` (e.g. for its own triggers) overrides it.
    """

    def __init__(self, source: StreamSource, schema: StructType, max_records: int | None) -> None:
        source.bind_schema(schema)
        self.source = source
        self.schema = schema
        self.max_records = max_records

    def secret_holders(self) -> tuple[Any, ...]:
        return (self.source,)

    @guarded
    def initialOffset(self) -> dict:
        return self.source.initial_offset()

    @guarded
    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        max_records = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return self.source.latest_offset(start, max_records)

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadMaxRows(self.max_records) if self.max_records else ReadAllAvailable()

    @guarded
    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        return [InputPartition(r) for r in self.source.ranges(start, end)]

    @guarded
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        settle()
        batches = to_batches(self.source.read_range(partition.value), self.schema, f"source '{self.source.name}'")
        return guarded_iter(batches, self.source)

    @guarded
    def commit(self, end: dict) -> None:
        self.source.commit(end)

    @guarded
    def stop(self) -> None:
        self.source.stop()

    @guarded
    def prepareForTriggerAvailableNow(self) -> None:
        self.source.prepare_available_now()


class FailedStreamReader(StreamReader):
    """Stands in for a stream reader that could not be made (a bad option, a factory's error):
    every call raises that error, except :meth:`stop`, which has nothing to stop (see
    ``JetconnectDataSource.streamReader`` for why the error is not raised where it happened)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def secret_holders(self) -> tuple[Any, ...]:
        return ()  # the error was scrubbed of the data source's secrets where it was caught

    def _fail(self, *_args: Any) -> Any:
        raise self.error

    initialOffset = latestOffset = getDefaultReadLimit = partitions = read = commit = _fail  # noqa: N815
    prepareForTriggerAvailableNow = _fail  # noqa: N815

    def stop(self) -> None:
        """Nothing started."""
