"""``sources.list`` and ``sinks.list``: Jet's IList, one partition, for prototyping.

The list sink appends each Spark task's rows in chunks of ``chunk_rows``, each in one atomic
step with its progress record, so a re-delivered micro-batch is not appended twice (exactly-once
from a replayable source); chunks of the tasks of one batch may interleave.

On Hazelcast (``store="hazelcast://..."``) the list is the cluster's IList: the sink appends
each chunk with one ``addAll``, which carries no progress record, so a replayed micro-batch is
appended again: at-least-once there. Items are mapped as map values are (hz_values).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect import BatchSource, Guarantee, Sink, WriteContext
from jetconnect.api import GuaranteeOption, ReadOutput, parse_schema, redact_url
from jetconnect.errors import SinkError, SourceError
from jetconnect_imap.hz_store import open_hazelcast
from jetconnect_imap.hz_values import ValueMappingError, from_hazelcast, to_hazelcast
from jetconnect_imap.located import StoreClient
from jetconnect_imap.map_sinks import (
    DEFAULT_CHUNK_ROWS,
    WriteReport,
    check_chunk_rows,
    chunk_progress,
    progress_of,
    row_chunks,
)
from jetconnect_imap.rows import column_decoder, row_shaper
from jetconnect_imap.serde import dumps, loads
from jetconnect_imap.store import StoreError, check_name, open_store


class ListSource(StoreClient, BatchSource):
    """The items of a list, in order, as rows of ``schema`` (one ``value string`` by default)."""

    name = "list"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        name: str,
        store: str | None = None,
        schema: str | StructType | None = None,
        client_config: Mapping[str, Any] | None = None,
    ) -> None:
        self._locate(store, client_config)
        self.list_name = name if self.on_hazelcast else check_name("list", name)
        self._schema = parse_schema(schema or "value string")

    def __repr__(self) -> str:
        return f"ListSource({self.list_name!r}, store={redact_url(self.store_url)!r})"

    def schema(self) -> StructType:
        return self._schema

    def splits(self) -> Sequence[str]:
        return [self.list_name]  # one partition, as in Jet

    def read_split(self, split: str) -> ReadOutput:
        shape = row_shaper(self._schema, f"source 'list' {self.list_name!r}")
        if self.on_hazelcast:
            try:
                items = open_hazelcast(self.store_url, self.client_config).list_read(split)
            except StoreError as exc:
                raise SourceError(f"source 'list' {self.list_name!r}: {exc}") from exc
            if len(self._schema.fields) == 1:  # a string column shows a JSON value's own text
                read = column_decoder(self._schema.fields[0].dataType, on_hazelcast=True)
                return ((read(v),) for v in items)
            return (shape(from_hazelcast(v)) for v in items)
        return (shape(loads(v)) for v in open_store(self.store_url).list_read(split))


class ListSink(StoreClient, Sink):
    """Appends rows to a list: the ``value`` column if there is one, else the row as a dict."""

    name = "list"
    guarantee = Guarantee.EXACTLY_ONCE
    #: Exactly-once on the embedded store (a progress record per chunk, in the same transaction);
    #: at-least-once on Hazelcast, where a replayed batch is appended again.
    guarantee_option = GuaranteeOption(
        "store", {"sqlite": Guarantee.EXACTLY_ONCE, "hazelcast": Guarantee.AT_LEAST_ONCE}, "sqlite"
    )
    input_format = "arrow"

    def __init__(
        self,
        name: str,
        store: str | None = None,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        client_config: Mapping[str, Any] | None = None,
    ) -> None:
        self._locate(store, client_config)
        self.list_name = name if self.on_hazelcast else check_name("list", name)
        self.guarantee = self.guarantee_option.guarantee("hazelcast" if self.on_hazelcast else "sqlite")
        self.chunk_rows = check_chunk_rows(self.name, chunk_rows)

    def __repr__(self) -> str:
        return f"ListSink({self.list_name!r}, store={redact_url(self.store_url)!r})"

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        if self.on_hazelcast:
            return self._write_hazelcast(data)
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

    def _write_hazelcast(self, data: Iterator[pa.RecordBatch]) -> WriteReport:
        rows = 0
        try:
            store = open_hazelcast(self.store_url, self.client_config)
            for chunk in row_chunks(data, self.chunk_rows):
                items: list[Any] = []
                for batch in chunk:
                    plain = batch.schema.names == ["value"]
                    column = "value" if plain else "<row>"
                    values = batch.column("value").to_pylist() if plain else batch.to_pylist()
                    items.extend(to_hazelcast(v, column) for v in values)
                store.list_append(self.list_name, items)
                rows += len(items)
        except (StoreError, ValueMappingError) as exc:
            raise SinkError(f"sink 'list' writing list '{self.list_name}': {exc}") from exc
        return WriteReport(rows, False)
