"""``sinks.map`` and its merging, updating and entry-processor forms.

Each Spark task collects its rows per map partition and writes them in one store call: every
map partition is updated atomically with its journal events. In a streaming query the write
also carries a progress record ``(query id / Spark partition -> batch id)``, checked and stored
in the same atomic step, so when Spark re-delivers a micro-batch after a crash, the partitions
that already have it are skipped: exactly-once when the input is replayable (the same batch id
brings the same rows to the same Spark partition). Batch writes carry no progress record.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect.connector import Guarantee, Sink, WriteContext
from jetconnect.errors import SchemaError, SinkError
from jetconnect_imap.events import Change
from jetconnect_imap.serde import dumps, loads, partition_of
from jetconnect_imap.store import (
    MapConfig,
    Progress,
    Store,
    StoreError,
    check_name,
    default_url,
    open_store,
)

_BATCH_FLUSH_ROWS = 50_000  # batch (non-streaming) writes are flushed in chunks of this size


def progress_of(ctx: WriteContext) -> Progress | None:
    """The progress record of a streaming write task; None for a batch write."""
    if ctx.batch_id is None or not ctx.query_id:
        return None
    return Progress(f"{ctx.query_id}/{ctx.partition_id}", ctx.batch_id)


@dataclass(frozen=True)
class WriteReport:
    """What a task tells the commit: rows seen and whether the batch was a replay."""

    rows: int
    replayed: bool


class _MapSinkBase(Sink):
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

    def __init__(self, map_name: str, store: str | None, partitions: int | None,
                 journal_capacity: int | None, journal_ttl: float | None) -> None:
        self.map_name = check_name("map", map_name)
        self.store_url = store or default_url()
        defaults = MapConfig()
        self.wanted = MapConfig(
            partitions or defaults.partitions,
            defaults.journal_capacity if journal_capacity is None else journal_capacity,
            journal_ttl or 0.0,
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.map_name!r})"

    def _open(self) -> tuple[Store, MapConfig]:
        store = open_store(self.store_url)
        return store, store.map_config(self.map_name, self.wanted)

    def _fail(self, exc: Exception) -> SinkError:
        return SinkError(f"sink '{self.name}' writing map '{self.map_name}': {exc}")


class MapSink(_MapSinkBase):
    """Puts each row's ``value`` under its ``key``; a null value removes the key.

    Without a ``value`` column, the value is the row's other columns as a dict.
    """

    name = "map"

    def __init__(self, map_name: str, store: str | None = None, key_column: str = "key",
                 value_column: str = "value", partitions: int | None = None,
                 journal_capacity: int | None = None, journal_ttl: float | None = None) -> None:
        super().__init__(map_name, store, partitions, journal_capacity, journal_ttl)
        self.key_column, self.value_column = key_column, value_column

    def check_schema(self, schema: StructType) -> None:
        if self.key_column not in schema.fieldNames():
            raise SchemaError(
                f"sink 'map': the DataFrame has no column '{self.key_column}' to use as the key "
                f"(columns: {', '.join(schema.fieldNames())}); rename one or set key_column"
            )

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        store, config = self._open()
        progress = progress_of(ctx)
        changes: dict[int, list[Change]] = defaultdict(list)
        rows = pending = 0
        replayed = False
        for batch in data:
            for key, value in self._pairs(batch):
                k = dumps(key)
                changes[partition_of(k, config.partitions)].append(Change(k, None if value is None else dumps(value)))
            rows += batch.num_rows
            pending += batch.num_rows
            # A streaming task is written in one go: its progress record must cover all of it.
            if progress is None and pending >= _BATCH_FLUSH_ROWS:
                self._apply(store, config, changes, None)
                changes, pending = defaultdict(list), 0
        if changes:
            replayed = not self._apply(store, config, changes, progress)
        return WriteReport(rows, replayed)

    def _pairs(self, batch: pa.RecordBatch) -> Iterator[tuple[Any, Any]]:
        keys = batch.column(self.key_column).to_pylist()
        if self.value_column in batch.schema.names:
            return zip(keys, batch.column(self.value_column).to_pylist())
        rest = batch.drop_columns([self.key_column]).to_pylist()
        return zip(keys, rest)

    def _apply(self, store: Store, config: MapConfig, changes: Mapping[int, Sequence[Change]],
               progress: Progress | None) -> bool:
        try:
            return store.apply(self.map_name, config, changes, progress)
        except StoreError as exc:
            raise self._fail(exc) from exc


class _ReadModifyWriteSink(_MapSinkBase):
    """Base of the sinks that compute a new value from the current one and the row."""

    def __init__(self, map_name: str, key_fn: Callable[[dict[str, Any]], Any], store: str | None,
                 partitions: int | None, journal_capacity: int | None, journal_ttl: float | None) -> None:
        super().__init__(map_name, store, partitions, journal_capacity, journal_ttl)
        self.key_fn = key_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        """The value after applying ``rows`` (in order) to ``old``; None removes the entry."""
        raise NotImplementedError

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        store, config = self._open()
        # partition -> serialised key -> (key, its rows in arrival order)
        grouped: dict[int, dict[str, tuple[Any, list[dict[str, Any]]]]] = defaultdict(dict)
        rows = 0
        for batch in data:
            for row in batch.to_pylist():
                key = self.key_fn(row)
                k = dumps(key)
                grouped[partition_of(k, config.partitions)].setdefault(k, (key, []))[1].append(row)
            rows += batch.num_rows
        if not grouped:
            return WriteReport(0, False)

        def compute(partition: int, current: Mapping[str, str | None]) -> list[Change]:
            changes = []
            for k, (key, key_rows) in grouped[partition].items():
                old = loads(current.get(k))
                new = self._new_value(key, old, key_rows)
                if new is not None or old is not None:
                    changes.append(Change(k, None if new is None else dumps(new)))
            return changes

        keys = {p: list(by_key) for p, by_key in grouped.items()}
        try:
            applied = store.update(self.map_name, config, keys, compute, progress_of(ctx))
        except StoreError as exc:
            raise self._fail(exc) from exc
        return WriteReport(rows, not applied)


class MapWithMergingSink(_ReadModifyWriteSink):
    """``value_fn(row)`` merged into the current value with ``merge_fn(old, new)`` (Jet's
    ``mapWithMerging``); the first value of an absent key is taken as is; None removes."""

    name = "map_with_merging"

    def __init__(self, map_name: str, key_fn: Callable[[dict[str, Any]], Any],
                 value_fn: Callable[[dict[str, Any]], Any], merge_fn: Callable[[Any, Any], Any],
                 store: str | None = None, partitions: int | None = None,
                 journal_capacity: int | None = None, journal_ttl: float | None = None) -> None:
        super().__init__(map_name, key_fn, store, partitions, journal_capacity, journal_ttl)
        self.value_fn, self.merge_fn = value_fn, merge_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        value = old
        for row in rows:
            new = self.value_fn(row)
            value = new if value is None else self.merge_fn(value, new)
        return value


class MapWithUpdatingSink(_ReadModifyWriteSink):
    """``update_fn(old_value_or_None, row)`` gives the new value (Jet's ``mapWithUpdating``);
    None removes the entry."""

    name = "map_with_updating"

    def __init__(self, map_name: str, key_fn: Callable[[dict[str, Any]], Any],
                 update_fn: Callable[[Any, dict[str, Any]], Any], store: str | None = None,
                 partitions: int | None = None, journal_capacity: int | None = None,
                 journal_ttl: float | None = None) -> None:
        super().__init__(map_name, key_fn, store, partitions, journal_capacity, journal_ttl)
        self.update_fn = update_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        value = old
        for row in rows:
            value = self.update_fn(value, row)
        return value


class MutableEntry:
    """What an entry processor sees: ``key``, and ``value`` to read or assign (None removes)."""

    __slots__ = ("key", "row", "value")

    def __init__(self, key: Any, value: Any, row: dict[str, Any]) -> None:
        self.key, self.value, self.row = key, value, row

    def __repr__(self) -> str:
        return f"MutableEntry({self.key!r}, {self.value!r})"


class MapWithEntryProcessorSink(_ReadModifyWriteSink):
    """``processor_fn(entry)`` changes ``entry.value`` in place for each row (Jet's
    ``mapWithEntryProcessor``), run where the entries are updated, atomically per partition."""

    name = "map_with_entry_processor"

    def __init__(self, map_name: str, key_fn: Callable[[dict[str, Any]], Any],
                 processor_fn: Callable[[MutableEntry], Any], store: str | None = None,
                 partitions: int | None = None, journal_capacity: int | None = None,
                 journal_ttl: float | None = None) -> None:
        super().__init__(map_name, key_fn, store, partitions, journal_capacity, journal_ttl)
        self.processor_fn = processor_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        entry = MutableEntry(key, old, {})
        for row in rows:
            entry.row = row
            self.processor_fn(entry)
        return entry.value
