"""``sources.list`` and ``sinks.list``: Jet's IList, one partition, for prototyping.

The list sink appends each Spark task's rows in chunks of ``chunk_rows``. On the embedded store
each chunk is appended in one atomic step with its progress record, so a re-delivered
micro-batch is not appended twice (exactly-once from a replayable source); chunks of the tasks
of one batch may interleave. On Hazelcast (``store="hazelcast://..."``) the list is the
cluster's IList: each chunk is one ``addAll``, which carries no progress record, so a replayed
micro-batch is appended again: at-least-once there. Items are mapped as map values are.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StringType, StructField, StructType

from jetconnect import BatchSource, Guarantee, Sink, WriteContext
from jetconnect.api import GuaranteeOption, ReadOutput, columns_to_batch, parse_schema
from jetconnect.errors import SinkError, SourceError
from jetconnect_imap.backend import WriteReport
from jetconnect_imap.connector import OnBackend
from jetconnect_imap.errors import StoreError
from jetconnect_imap.hazelcast.values import ValueMappingError
from jetconnect_imap.json_values import json_ready
from jetconnect_imap.map_sinks import DEFAULT_CHUNK_ROWS, check_chunk_rows, progress_of, row_chunks
from jetconnect_imap.rows import row_shaper


class ListSource(OnBackend, BatchSource):
    """The items of a list, in order, as rows of ``schema`` (one ``value string`` by default)."""

    name = "list"
    structure = "list"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        name: str,
        store: str | None = None,
        schema: str | StructType | None = None,
        client_config: Mapping[str, Any] | None = None,
    ) -> None:
        self._locate(name, store, client_config)
        #: The schema, given or settled (None: learnt from the items when Spark first asks).
        self._schema: StructType | None = parse_schema(schema) if schema else None

    def schema(self) -> StructType:
        """The given schema, or one ``value`` column: a struct of the items' fields where they are
        records with schemas of their own (Compact), else a string."""
        if self._schema is None:
            try:
                items = [item for _, item in self.backend.sample(self.structure, self.stored)]
            except StoreError as exc:
                raise SourceError(f"source 'list' {self.display_name!r}: {exc}") from exc
            value = self.backend.codec.derived_type(items) or StringType()
            self._schema = StructType([StructField("value", value)])
        return self._schema

    def bind_schema(self, schema: StructType) -> None:
        if self._schema is None:
            self._schema = schema

    def splits(self) -> Sequence[str]:
        return [self.stored]  # one partition, as in Jet

    def read_split(self, split: str) -> ReadOutput:
        try:
            items = self.backend.read_list(split)
        except StoreError as exc:
            raise SourceError(f"source 'list' {self.display_name!r}: {exc}") from exc
        codec, schema = self.backend.codec, self.schema()
        owner = f"source 'list' {self.display_name!r}"
        if len(schema.fields) == 1:  # a string column shows a JSON value's own text

            def describe(index: int) -> str:
                return f"{owner}: item {index}"

            values = codec.column_values(schema.fields[0].dataType, items, describe)
            return iter([columns_to_batch([values], schema, owner)] if items else [])
        shape = row_shaper(schema, owner)
        return (shape(codec.plain(v)) for v in items)


class ListSink(OnBackend, Sink):
    """Appends rows to a list: the ``value`` column if there is one, else the row as a dict."""

    name = "list"
    structure = "list"
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
        self._locate(name, store, client_config)
        self.guarantee = self.guarantee_option.guarantee(self.backend.kind)
        self.chunk_rows = check_chunk_rows(self.name, chunk_rows)

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        try:
            return self.backend.append(self.stored, self._items(data), progress_of(ctx))
        except (StoreError, ValueMappingError) as exc:
            raise SinkError(f"sink 'list' writing list '{self.display_name}': {exc}") from exc

    def _items(self, data: Iterator[pa.RecordBatch]) -> Iterator[tuple[list[Any], str]]:
        """Each chunk's items, and the column they came from: ``value`` alone, or the row's."""
        for chunk in row_chunks(data, self.chunk_rows):
            items: list[Any] = []
            column = "<row>"
            for batch in chunk:
                plain = batch.schema.names == ["value"]
                column = "value" if plain else "<row>"
                items.extend(json_ready(batch.column("value") if plain else batch.to_struct_array(), column))
            yield items, column
