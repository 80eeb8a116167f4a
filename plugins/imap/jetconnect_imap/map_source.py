"""``sources.map``: a batch read of a whole map, each Spark partition reading its own map
partitions.

A Hazelcast predicate or projection (``hazelcast.predicate`` / ``hazelcast.projection``) runs on
the member owning each partition, and Spark's filters on a numeric or boolean key or value
column become such a predicate too, where the backend runs them (Hazelcast). A Python predicate
or projection runs in the Spark task, on every entry read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect import BatchSource, Guarantee
from jetconnect.api import PlainFilter, ReadOutput, columns_to_batch, parse_schema, spread
from jetconnect.errors import SchemaError, SourceError
from jetconnect_imap.connector import OnBackend
from jetconnect_imap.errors import StoreError
from jetconnect_imap.queries import is_member_side
from jetconnect_imap.rows import row_shaper

DEFAULT_MAP_SCHEMA = "key string, value string"
DEFAULT_PROJECTED_SCHEMA = "value string"


class MapSource(OnBackend, BatchSource):
    """Every entry of a map as ``(key, value)`` rows, or what ``projection(key, value)`` makes."""

    name = "map"
    guarantee = Guarantee.EXACTLY_ONCE  # a bounded snapshot read; nothing to lose or repeat

    def __init__(
        self,
        name: str,
        store: str | None = None,
        predicate: Callable[[Any, Any], bool] | None = None,
        projection: Callable[[Any, Any], Any] | None = None,
        schema: str | StructType | None = None,
        parallelism: int = 4,
        client_config: Mapping[str, Any] | None = None,
    ) -> None:
        self._locate(name, store, client_config)
        self.backend.check_queries(f"source '{self.name}'", self.structure, predicate, projection)
        self.predicate = predicate
        self.projection = projection
        #: Spark's filters the backend evaluates where the data is (plain tuples: the source pickles).
        self._pushed: list[PlainFilter] = []
        self._schema = parse_schema(schema or (DEFAULT_PROJECTED_SCHEMA if projection else DEFAULT_MAP_SCHEMA))
        if projection is None and len(self._schema.fields) != 2:
            raise SchemaError(
                f"source '{self.name}': schema <{self._schema.simpleString()}> must have two columns, "
                "key and value, unless a projection makes the rows"
            )
        self.parallelism = parallelism

    def schema(self) -> StructType:
        return self._schema

    def push_filters(self, filters: list[Any]) -> list[Any]:
        """Spark's filters on a numeric or boolean key or value column, for a backend that runs
        them where the data is (only for the default two columns read as they are)."""
        if self.projection is not None:
            return filters
        key_field, value_field = self._schema.fields
        columns = {key_field.name: ("__key", key_field.dataType), value_field.name: ("this", value_field.dataType)}
        rejected = []
        for spark_filter in filters:
            plain = self.backend.pushable(spark_filter, columns)
            if plain is None:
                rejected.append(spark_filter)
            else:
                self._pushed.append(plain)
        return rejected

    def splits(self) -> Sequence[list[int]]:
        try:
            count = self.backend.partition_count(self.structure, self.stored)
        except StoreError as exc:
            raise self._source_error(exc) from exc
        return spread(range(count), self.parallelism)

    def read_split(self, split: list[int]) -> ReadOutput:
        return self._guarded(self._read(split))

    def _source_error(self, exc: Exception) -> SourceError:
        return SourceError(f"source '{self.name}' reading {self.display_name!r}: {exc}")

    def _guarded(self, rows: Iterator[Any]) -> Iterator[Any]:
        """``rows``, with a backend's failure raised as a SourceError naming this source."""
        try:
            yield from rows
        except StoreError as exc:
            raise self._source_error(exc) from exc

    def _read(self, partitions: list[int]) -> Iterator[Any]:
        backend, codec = self.backend, self.backend.codec
        member_predicate = self.predicate if is_member_side(self.predicate) else None
        member_projection = self.projection if is_member_side(self.projection) else None
        local_predicate = None if member_predicate is not None else self.predicate
        local_projection = None if member_projection is not None else self.projection
        queried = member_predicate is not None or member_projection is not None or self._pushed

        def entries(partition: int) -> Iterable[Any]:
            if queried:
                return backend.query(self.stored, partition, member_predicate, member_projection, self._pushed)
            return backend.read_partition(self.structure, self.stored, partition)

        owner = f"source '{self.name}' {self.display_name!r}"
        if member_projection is not None:  # the members made the rows' values
            shape = row_shaper(self._schema, owner)
            for partition in partitions:
                yield from (shape(codec.plain(item)) for item in entries(partition))
            return
        if local_predicate is None and local_projection is None:  # the common case: a column at a time
            key_of, value_of = (codec.column(f.dataType) for f in self._schema.fields)
            for partition in partitions:
                yield from self._column_batch(list(entries(partition)), key_of, value_of, owner)
            return
        shape = row_shaper(self._schema, owner)
        for partition in partitions:
            for k, v in entries(partition):
                key, value = codec.plain(k), codec.plain(v)
                if local_predicate is not None and not local_predicate(key, value):
                    continue
                row = local_projection(key, value) if local_projection is not None else (key, value)
                if row is not None:  # Jet's rule: a projection that returns None filters the entry out
                    yield shape(row)

    def _column_batch(
        self,
        entries: list[tuple[Any, Any]],
        key_of: Callable[[Any], Any],
        value_of: Callable[[Any], Any],
        owner: str,
    ) -> Iterator[pa.RecordBatch]:
        """One partition's entries as one batch, a column at a time (no row tuples in between)."""
        if entries:
            yield columns_to_batch(
                [[key_of(k) for k, _ in entries], [value_of(v) for _, v in entries]], self._schema, owner
            )
