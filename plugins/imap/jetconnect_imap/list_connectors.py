"""``sources.list`` and ``sinks.list``: Jet's IList, one partition, for prototyping.

The list sink appends each Spark task's rows in chunks of ``chunk_rows``, each in one atomic
step with its progress record, so a re-delivered micro-batch is not appended twice (exactly-once
from a replayable source); chunks of the tasks of one batch may interleave.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect.api import BatchSource, Guarantee, ReadOutput, Sink, WriteContext, parse_schema
from jetconnect_imap.map_sinks import (
    DEFAULT_CHUNK_ROWS,
    WriteReport,
    check_chunk_rows,
    chunk_progress,
    progress_of,
    row_chunks,
)
from jetconnect_imap.rows import row_shaper
from jetconnect_imap.serde import dumps, loads
from jetconnect_imap.store import check_name, default_url, open_store, redact_url


class ListSource(BatchSource):
    """The items of a list, in order, as rows of ``schema`` (one ``value string`` by default)."""

    name = "list"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(self, list_name: str, store: str | None = None, schema: str | StructType | None = None) -> None:
        self.list_name = check_name("list", list_name)
        self.store_url = store or default_url()
        self._schema = parse_schema(schema or "value string")

    def __repr__(self) -> str:
        return f"ListSource({self.list_name!r}, store={redact_url(self.store_url)!r})"

    def schema(self) -> StructType:
        return self._schema

    def splits(self) -> Sequence[str]:
        return [self.list_name]  # one partition, as in Jet

    def read_split(self, split: str) -> ReadOutput:
        shape = row_shaper(self._schema, f"source 'list' {self.list_name!r}")
        return (shape(loads(v)) for v in open_store(self.store_url).list_read(split))


class ListSink(Sink):
    """Appends rows to a list: the ``value`` column if there is one, else the row as a dict."""

    name = "list"
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

    def __init__(self, list_name: str, store: str | None = None, chunk_rows: int = DEFAULT_CHUNK_ROWS) -> None:
        self.list_name = check_name("list", list_name)
        self.store_url = store or default_url()
        self.chunk_rows = check_chunk_rows(self.name, chunk_rows)

    def __repr__(self) -> str:
        return f"ListSink({self.list_name!r}, store={redact_url(self.store_url)!r})"

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        store = open_store(self.store_url)
        progress = progress_of(ctx)
        rows = 0
        replayed = False
        for index, chunk in enumerate(row_chunks(data, self.chunk_rows)):
            values: list[str] = []
            for batch in chunk:
                items: list[Any] = (
                    batch.column("value").to_pylist() if batch.schema.names == ["value"] else batch.to_pylist()
                )
                values.extend(dumps(v) for v in items)
            rows += len(values)
            replayed |= not store.list_append(self.list_name, values, chunk_progress(progress, index))
        return WriteReport(rows, replayed)
