"""``sources.map``: a batch read of a whole map, each Spark partition reading its own map
partitions.

On Hazelcast a task reads its partitions with ``Map.fetchEntries``; a Hazelcast predicate or
projection (``hazelcast.predicate`` / ``hazelcast.projection``) runs on the member owning each
partition, and Spark's filters on a numeric or boolean key or value column become such a
predicate too. A Python predicate or projection runs in the Spark task, on every entry read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from hazelcast.errors import HazelcastSerializationError
from pyspark.sql.types import StructType

from jetconnect import BatchSource, Guarantee
from jetconnect.api import ReadOutput, columns_to_batch, parse_schema, redact_url, spread
from jetconnect.errors import OptionError, SchemaError, SourceError
from jetconnect_imap.hz_store import HazelcastStore, open_hazelcast
from jetconnect_imap.hz_values import from_hazelcast
from jetconnect_imap.located import StoreClient
from jetconnect_imap.pushdown import is_member_side, to_plain, to_predicate
from jetconnect_imap.rows import column_decoder, row_shaper
from jetconnect_imap.serde import loads
from jetconnect_imap.store import StoreError, check_name, open_store

DEFAULT_MAP_SCHEMA = "key string, value string"
DEFAULT_PROJECTED_SCHEMA = "value string"


class MapSource(StoreClient, BatchSource):
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
        self.display_name = name
        self._locate(store, client_config)
        self.map_name = self._stored_name(name) if not self.on_hazelcast else self._cluster_name(name)
        self.predicate = predicate
        self.projection = projection
        if not self.on_hazelcast and (is_member_side(predicate) or is_member_side(projection)):
            raise OptionError(
                f"source '{self.name}': a Hazelcast predicate or projection runs on Hazelcast members; "
                "the embedded store takes Python functions (predicate(key, value), projection(key, value))"
            )
        #: Member-side predicates made of Spark's pushed filters (Hazelcast only).
        self._pushed: list[Any] = []
        self._schema = parse_schema(schema or (DEFAULT_PROJECTED_SCHEMA if projection else DEFAULT_MAP_SCHEMA))
        if projection is None and len(self._schema.fields) != 2:
            raise SchemaError(
                f"source '{self.name}': schema <{self._schema.simpleString()}> must have two columns, "
                "key and value, unless a projection makes the rows"
            )
        self.parallelism = parallelism

    @staticmethod
    def _stored_name(name: str) -> str:
        """The name the store keeps the structure under (a cache's differs from its own)."""
        return check_name("map", name)

    @staticmethod
    def _cluster_name(name: str) -> str:
        """The name of the structure on a Hazelcast cluster: the name itself."""
        if not isinstance(name, str) or not name:
            raise OptionError(f"map name must be a non-empty string, got {name!r}")
        return name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display_name!r}, store={redact_url(self.store_url)!r})"

    def schema(self) -> StructType:
        return self._schema

    def push_filters(self, filters: list[Any]) -> list[Any]:
        """Spark's filters on a numeric or boolean key or value column become a member-side
        predicate (Hazelcast only, and only for the default two columns read as they are)."""
        if not self.on_hazelcast or self.projection is not None:
            return filters
        key_field, value_field = self._schema.fields
        rejected = []
        for spark_filter in filters:
            columns = {key_field.name: ("__key", key_field.dataType), value_field.name: ("this", value_field.dataType)}
            plain = to_plain(spark_filter, columns)
            if plain is None:
                rejected.append(spark_filter)
            else:
                self._pushed.append(plain)
        return rejected

    def splits(self) -> Sequence[list[int]]:
        if self.on_hazelcast:
            try:
                return spread(range(self._hazelcast().partition_count()), self.parallelism)
            except StoreError as exc:
                raise self._source_error(exc) from exc
        config = open_store(self.store_url).map_config(self.map_name)
        return spread(range(config.partitions), self.parallelism)

    def read_split(self, split: list[int]) -> ReadOutput:
        if self.on_hazelcast:
            return self._guarded(self._read_hazelcast(split))
        return self._read(open_store(self.store_url).scan, split)

    def _source_error(self, exc: Exception) -> SourceError:
        return SourceError(f"source '{self.name}' reading {self.display_name!r}: {exc}")

    def _guarded(self, rows: Iterator[Any]) -> Iterator[Any]:
        """``rows``, with a store's failure (a member's error, a value this client cannot read)
        raised as a SourceError naming this source."""
        try:
            yield from rows
        except StoreError as exc:
            raise self._source_error(exc) from exc
        except HazelcastSerializationError as exc:
            raise self._source_error(
                StoreError(f"a key or value this client cannot deserialise (written by another client?): {exc}")
            ) from exc

    def _scan_hazelcast(self, store: HazelcastStore, partition: int) -> list[tuple[Any, Any]]:
        """Every entry of one partition (a cache reads its own way)."""
        return store.scan(self.map_name, partition)

    def _hazelcast(self) -> Any:
        return open_hazelcast(self.store_url, self.client_config)

    def _member_predicate(self) -> Any:
        """The predicate the members evaluate: the user's Hazelcast one and the pushed filters."""
        from hazelcast.predicate import and_

        parts = ([self.predicate] if is_member_side(self.predicate) else []) + [to_predicate(f) for f in self._pushed]
        return None if not parts else parts[0] if len(parts) == 1 else and_(*parts)

    def _read_hazelcast(self, partitions: list[int]) -> Iterator[Any]:
        store = self._hazelcast()
        member_predicate = self._member_predicate()
        member_projection = self.projection if is_member_side(self.projection) else None
        local_predicate = None if is_member_side(self.predicate) else self.predicate
        local_projection = None if is_member_side(self.projection) else self.projection

        def entries(partition: int) -> Iterable[Any]:
            if member_predicate is None and member_projection is None:
                return self._scan_hazelcast(store, partition)
            return store.query(self.map_name, partition, member_predicate, member_projection)

        if member_projection is not None:  # the members made the rows' values
            shape = row_shaper(self._schema, f"source '{self.name}' {self.display_name!r}")
            for partition in partitions:
                yield from (shape(from_hazelcast(item)) for item in entries(partition))
            return
        if local_predicate is None and local_projection is None:
            key_of, value_of = (column_decoder(f.dataType, on_hazelcast=True) for f in self._schema.fields)
            for partition in partitions:
                yield from self._column_batch(list(entries(partition)), key_of, value_of)
            return
        shape = row_shaper(self._schema, f"source '{self.name}' {self.display_name!r}")
        for partition in partitions:
            for k, v in entries(partition):
                key, value = from_hazelcast(k), from_hazelcast(v)
                if local_predicate is not None and not local_predicate(key, value):
                    continue
                row = local_projection(key, value) if local_projection is not None else (key, value)
                if row is not None:  # Jet's rule: a projection that returns None filters the entry out
                    yield shape(row)

    def _column_batch(
        self, entries: list[tuple[Any, Any]], key_of: Callable[[Any], Any], value_of: Callable[[Any], Any]
    ) -> Iterator[pa.RecordBatch]:
        """One partition's entries as one batch, a column at a time (no row tuples in between)."""
        if entries:
            owner = f"source '{self.name}' {self.display_name!r}"
            yield columns_to_batch(
                [[key_of(k) for k, _ in entries], [value_of(v) for _, v in entries]], self._schema, owner
            )

    def _read(self, scan: Callable[[str, int], Iterator[tuple[str, str]]], partitions: list[int]) -> Iterator[Any]:
        predicate, projection = self.predicate, self.projection
        if predicate is None and projection is None:  # the common case: no decoding needed
            key_of, value_of = (column_decoder(f.dataType, on_hazelcast=False) for f in self._schema.fields)
            for partition in partitions:
                yield from self._column_batch(list(scan(self.map_name, partition)), key_of, value_of)
            return
        shape = row_shaper(self._schema, f"source '{self.name}' {self.display_name!r}")
        for partition in partitions:
            for k, v in scan(self.map_name, partition):
                key, value = loads(k), loads(v)
                if predicate is not None and not predicate(key, value):
                    continue
                row = projection(key, value) if projection is not None else (key, value)
                if row is not None:  # Jet's rule: a projection that returns None filters the entry out
                    yield shape(row)
