"""``sources.map``: a batch read of a whole map, each Spark partition reading its own map
partitions; the predicate and projection run where the entries are read, before Spark."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pyspark.sql.types import StructType

from jetconnect.api import BatchSource, Guarantee, ReadOutput, parse_schema, spread
from jetconnect.errors import SchemaError
from jetconnect_imap.rows import raw_decoder, row_shaper
from jetconnect_imap.serde import loads
from jetconnect_imap.store import check_name, default_url, open_store, redact_url

DEFAULT_MAP_SCHEMA = "key string, value string"
DEFAULT_PROJECTED_SCHEMA = "value string"


class MapSource(BatchSource):
    """Every entry of a map as ``(key, value)`` rows, or what ``projection(key, value)`` makes."""

    name = "map"
    guarantee = Guarantee.EXACTLY_ONCE  # a bounded snapshot read; nothing to lose or repeat

    def __init__(
        self,
        map_name: str,
        store: str | None = None,
        predicate: Callable[[Any, Any], bool] | None = None,
        projection: Callable[[Any, Any], Any] | None = None,
        schema: str | StructType | None = None,
        parallelism: int = 4,
    ) -> None:
        self.display_name = map_name
        self.map_name = self._stored_name(map_name)
        self.store_url = store or default_url()
        self.predicate = predicate
        self.projection = projection
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

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display_name!r}, store={redact_url(self.store_url)!r})"

    def schema(self) -> StructType:
        return self._schema

    def splits(self) -> Sequence[list[int]]:
        config = open_store(self.store_url).map_config(self.map_name)
        return spread(range(config.partitions), self.parallelism)

    def read_split(self, split: list[int]) -> ReadOutput:
        return self._read(open_store(self.store_url).scan, split)

    def _read(self, scan: Callable[[str, int], Iterator[tuple[str, str]]], partitions: list[int]) -> Iterator[Any]:
        predicate, projection = self.predicate, self.projection
        if predicate is None and projection is None:  # the common case: no decoding needed
            key_of, value_of = (raw_decoder(f.dataType) for f in self._schema.fields)
            for partition in partitions:
                yield from ((key_of(k), value_of(v)) for k, v in scan(self.map_name, partition))
            return
        shape = row_shaper(self._schema, f"source '{self.name}' {self.display_name!r}")
        for partition in partitions:
            for k, v in scan(self.map_name, partition):
                key, value = loads(k), loads(v)
                if predicate is not None and not predicate(key, value):
                    continue
                yield shape(projection(key, value) if projection is not None else (key, value))
