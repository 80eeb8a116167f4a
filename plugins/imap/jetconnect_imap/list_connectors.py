"""``sources.list`` and ``sinks.list``: Jet's IList, one partition, for prototyping.

The list sink appends each Spark task's rows in one atomic step with a progress record, so a
re-delivered micro-batch is not appended twice (exactly-once from a replayable source); the
order of the tasks of one batch is the order they finish in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect.arrow import parse_schema
from jetconnect.connector import BatchSource, Guarantee, ReadOutput, Sink, WriteContext
from jetconnect_imap.map_sinks import WriteReport, progress_of
from jetconnect_imap.rows import row_shaper
from jetconnect_imap.serde import dumps, loads
from jetconnect_imap.store import check_name, default_url, open_store


class ListSource(BatchSource):
    """The items of a list, in order, as rows of ``schema`` (one ``value string`` by default)."""

    name = "list"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(self, list_name: str, store: str | None = None, schema: str | StructType | None = None) -> None:
        self.list_name = check_name("list", list_name)
        self.store_url = store or default_url()
        self._schema = parse_schema(schema or "value string")

    def schema(self) -> StructType:
        return self._schema

    def splits(self) -> Sequence[str]:
        return [self.list_name]  # one partition, as in Jet

    def read_split(self, split: str) -> ReadOutput:
        shape = row_shaper(self._schema)
        return (shape(loads(v)) for v in open_store(self.store_url).list_read(split))


class ListSink(Sink):
    """Appends rows to a list: the ``value`` column if there is one, else the row as a dict."""

    name = "list"
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

    def __init__(self, list_name: str, store: str | None = None) -> None:
        self.list_name = check_name("list", list_name)
        self.store_url = store or default_url()

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        values: list[str] = []
        for batch in data:
            items: list[Any] = (
                batch.column("value").to_pylist() if batch.schema.names == ["value"] else batch.to_pylist()
            )
            values.extend(dumps(v) for v in items)
        if not values:
            return WriteReport(0, False)
        applied = open_store(self.store_url).list_append(self.list_name, values, progress_of(ctx))
        return WriteReport(len(values), not applied)
