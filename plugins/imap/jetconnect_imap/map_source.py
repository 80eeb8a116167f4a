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
from pyspark.sql.types import StringType, StructField, StructType

from jetconnect import BatchSource, Guarantee
from jetconnect.api import PlainFilter, ReadOutput, columns_to_batch, parse_schema, short_repr, spread
from jetconnect.errors import OptionError, SchemaError, SourceError
from jetconnect_imap.backend import Backend, Structure
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
        for option, function in (("predicate", predicate), ("projection", projection)):
            if function is not None and not callable(function) and not is_member_side(function):
                raise OptionError(
                    f"source '{self.name}': option '{option}' must be a Hazelcast {option} (hazelcast.{option}) or a "
                    f"Python function of (key, value), got {type(function).__name__}"
                )
        self.backend.check_queries(f"source '{self.name}'", self.structure, predicate, projection)
        self.predicate = predicate
        self.projection = projection
        #: Spark's filters the backend evaluates where the data is (plain tuples: the source pickles).
        self._pushed: list[PlainFilter] = []
        #: The schema, given or settled (None: learnt from the data when Spark first asks).
        self._schema: StructType | None = parse_schema(schema) if schema else None
        if projection is not None and schema is None:
            self._schema = parse_schema(DEFAULT_PROJECTED_SCHEMA)
        if projection is None and self._schema is not None and len(self._schema.fields) != 2:
            raise SchemaError(
                f"source '{self.name}': schema <{self._schema.simpleString()}> must have two columns, "
                "key and value, unless a projection makes the rows"
            )
        self.parallelism = parallelism

    def schema(self) -> StructType:
        """The given schema, or ``key``, ``value`` as the data says: structs of the application
        objects' fields where the entries are records with schemas of their own (Compact), else
        ``key string, value string`` (see :meth:`~jetconnect_imap.backend.ValueCodec.derived_type`)."""
        if self._schema is None:
            try:
                self._schema = derived_entry_schema(self.backend, self.structure, self.stored)
            except StoreError as exc:
                raise self._source_error(exc) from exc
        return self._schema

    def bind_schema(self, schema: StructType) -> None:
        if self._schema is None:
            self._schema = schema

    def push_filters(self, filters: list[Any]) -> list[Any]:
        """Spark's filters on a numeric or boolean key or value column (or a field of one), for a
        backend that runs them where the data is (only for the two columns read as they are)."""
        if self.projection is not None:
            return filters
        key_field, value_field = self.schema().fields
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
        schema = self.schema()
        if member_projection is not None:  # the members made the rows' values
            shape = row_shaper(schema, owner)
            for partition in partitions:
                yield from (shape(codec.plain(item)) for item in entries(partition))
            return
        if local_predicate is None and local_projection is None:  # the common case: a column at a time
            for partition in partitions:
                yield from self._column_batch(list(entries(partition)), schema, owner)
            return
        shape = row_shaper(schema, owner)
        for partition in partitions:
            for k, v in entries(partition):
                key, value = codec.plain(k), codec.plain(v)
                if local_predicate is not None and not local_predicate(key, value):
                    continue
                row = local_projection(key, value) if local_projection is not None else (key, value)
                if row is not None:  # Jet's rule: a projection that returns None filters the entry out
                    yield shape(row)

    def _column_batch(self, entries: list[tuple[Any, Any]], schema: StructType, owner: str) -> Iterator[pa.RecordBatch]:
        """One partition's entries as one batch, a column at a time (no row tuples in between)."""
        if not entries:
            return
        codec = self.backend.codec
        keys = [k for k, _ in entries]
        values = [v for _, v in entries]

        def describe(index: int) -> str:
            return f"{owner}: entry {short_repr(codec.plain(keys[index]))}"

        key_field, value_field = schema.fields
        yield columns_to_batch(
            [
                codec.column_values(key_field.dataType, keys, describe),
                codec.column_values(value_field.dataType, values, describe),
            ],
            schema,
            owner,
        )


def derived_entry_schema(
    backend: Backend, structure: Structure, name: str, columns: tuple[str, str] = ("key", "value")
) -> StructType:
    """``key`` and ``value`` as a sample of the structure's entries reads (strings by default)."""
    sample = backend.sample(structure, name)
    codec = backend.codec
    key_type = codec.derived_type([k for k, _ in sample]) or StringType()
    value_type = codec.derived_type([v for _, v in sample]) or StringType()
    return StructType([StructField(columns[0], key_type), StructField(columns[1], value_type)])
