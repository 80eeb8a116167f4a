"""The embedded backend: maps, caches, lists and journals in the SQLite store (``sqlite:///...``,
the default), with exactly-once writes.

Keys and values are kept as canonical JSON text (:mod:`.serde`), the journal is the store's own
(:mod:`.sqlite_store`), and a cache is the map ``cache/<name>`` whose values carry their expiry
(:mod:`.cache_entries`). Every write of a chunk carries the task's progress record in the same
transaction, so a re-delivered micro-batch is skipped. Predicates, projections, merge and update
functions and entry processors are Python, run in the Spark task where the entries are updated.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.types import DataType, StringType, StructType

from jetconnect.errors import OptionError
from jetconnect_imap.backend import (
    Backend,
    CompactFormat,
    EntryChunk,
    KeyFn,
    MapConfig,
    NewValue,
    Progress,
    Structure,
    WriteReport,
    fingerprint,
)
from jetconnect_imap.canonical_json import dumps, loads
from jetconnect_imap.embedded import cache_entries
from jetconnect_imap.embedded.names import cache_store_name, check_name
from jetconnect_imap.embedded.serde import dumps_column, dumps_keys, partition_of, partitions_of, text_of
from jetconnect_imap.embedded.sqlite_store import Change, SqliteStore, open_store
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import RawEvent
from jetconnect_imap.json_values import needs_typing, typed
from jetconnect_imap.queries import is_member_side


class EmbeddedCodec:
    """Stored values are canonical JSON text: a string column takes the text as it is (a string
    unquoted), any other column its parsed value."""

    def column(self, data_type: DataType) -> Callable[[Any], Any]:
        if isinstance(data_type, StringType):
            return text_of
        if needs_typing(data_type):
            return lambda stored: typed(loads(stored), data_type)
        return loads

    def column_values(
        self, data_type: DataType, values: Sequence[Any], describe: Callable[[int], str]
    ) -> list[Any] | pa.Array:
        read = self.column(data_type)
        return [read(v) for v in values]

    def plain(self, stored: Any) -> Any:
        return loads(stored)

    def derived_type(self, values: Sequence[Any]) -> StructType | None:
        return None  # JSON text says no more than its values: the source's default types stand


_CODEC = EmbeddedCodec()


class MutableEntry:
    """What an embedded entry processor sees: ``key``, and ``value`` to read or assign (None removes)."""

    __slots__ = ("key", "row", "value")

    def __init__(self, key: Any, value: Any, row: dict[str, Any]) -> None:
        self.key, self.value, self.row = key, value, row

    def __repr__(self) -> str:
        return f"MutableEntry({self.key!r}, {self.value!r})"


def _chunk_progress(progress: Progress | None, index: int) -> Progress | None:
    return None if progress is None else progress.chunk(index)


class EmbeddedBackend(Backend):
    """The SQLite store of ``url`` (one per URL and process: :func:`.sqlite_store.open_store`)."""

    kind = "sqlite"

    @property
    def store(self) -> SqliteStore:
        return open_store(self.url)

    # --- checks where a connector is built -------------------------------------------------------

    def stored_name(self, structure: Structure, name: str) -> str:
        """Plain words only; a cache is kept as the map ``cache/<name>``."""
        return cache_store_name(name) if structure == "cache" else check_name(structure, name)

    def layout(
        self, owner: str, partitions: int | None, journal_capacity: int | None, journal_ttl: float | None
    ) -> MapConfig | None:
        """The layout of :meth:`MapConfig.asked` (a bad value is an OptionError naming the sink)."""
        try:
            return MapConfig.asked(partitions, journal_capacity, journal_ttl)
        except StoreError as exc:
            raise OptionError(f"{owner}: {exc}") from None

    def check_queries(self, owner: str, structure: Structure, predicate: Any, projection: Any) -> None:
        if is_member_side(predicate) or is_member_side(projection):
            raise OptionError(
                f"{owner}: a Hazelcast predicate or projection runs on Hazelcast members; "
                "the embedded store takes Python functions (predicate(key, value), projection(key, value))"
            )

    # --- reads -----------------------------------------------------------------------------------

    @property
    def codec(self) -> EmbeddedCodec:
        return _CODEC

    def partition_count(self, structure: Structure, name: str) -> int:
        return self.store.map_config(name).partitions

    def read_partition(self, structure: Structure, name: str, partition: int) -> Iterator[tuple[str, str]]:
        """A cache's live entries only, values unwrapped (expired ones are removed as found)."""
        if structure == "cache":
            return cache_entries.live_entries(self.store, name, partition, _shown(name))
        return self.store.scan(name, partition)

    def read_list(self, name: str) -> list[str]:
        return self.store.list_read(name)

    # --- journals --------------------------------------------------------------------------------

    def journal_bounds(self, structure: Structure, name: str) -> list[tuple[int, int]]:
        store = self.store
        return store.journal_bounds(name, store.map_config(name))

    def read_journal(
        self, structure: Structure, name: str, spans: Mapping[int, tuple[int, int]]
    ) -> dict[int, list[RawEvent]]:
        """A cache's events under JCache's names, values unwrapped (the expiry stays in the store)."""
        store = self.store
        read = {p: store.read_journal(name, p, start, end) for p, (start, end) in spans.items()}
        if structure != "cache":
            return read
        shown = _shown(name)
        return {p: [cache_entries.as_cache_event(event, shown) for event in events] for p, events in read.items()}

    def journal_retention(self, structure: Structure, name: str) -> tuple[str, str]:
        config = self.store.map_config(name)
        kept = f"{config.partition_capacity} events per partition" + (
            f" for {config.journal_ttl:g} s" if config.journal_ttl else ""
        )
        return kept, "raise journal_capacity"

    def journal_identity(self, structure: Structure, name: str) -> str:
        """The map's incarnation in this file: a file wiped or replaced, or a map made again,
        has another."""
        return f"map incarnation {self.store.map_incarnation(name)}"

    def journal_fingerprint(self, structure: Structure, name: str, partition: int, sequence: int) -> str | None:
        events = self.store.read_journal(name, partition, sequence, sequence + 1)
        if not events or events[0][0] != sequence:
            return None
        _seq, kind, key, old, new, ts = events[0]
        return fingerprint(dumps([kind.value, key, old, new, ts]).encode())

    # --- writes ----------------------------------------------------------------------------------

    def put(
        self,
        structure: Structure,
        name: str,
        chunks: Iterable[EntryChunk],
        progress: Progress | None,
        layout: MapConfig | None = None,
        expiry_s: float | None = None,
        compact: Mapping[str, CompactFormat] | None = None,
    ) -> WriteReport:
        """Each chunk in one transaction with its progress record (a null value removes the key;
        a cache's values carry the chunk's expiry time)."""
        store = self.store
        config = store.map_config(name, layout)
        rows = 0
        replayed = False
        for index, chunk in enumerate(chunks):
            keys = [key for column in chunk.keys for key in dumps_keys(column, chunk.key_column)]
            values = [value for column in chunk.values for value in dumps_column(column, chunk.value_column)]
            if structure == "cache":
                # one expiry time per chunk: the chunk is written in one store call right after
                expires = cache_entries.expiry_time(expiry_s)
                values = [None if text is None else cache_entries.wrap(text, expires) for text in values]
            changes: dict[int, list[Change]] = defaultdict(list)
            for key, value, partition in zip(keys, values, partitions_of(keys, config.partitions)):
                changes[partition].append(Change(key, value))
            rows += len(keys)
            replayed |= not store.apply(name, config, changes, _chunk_progress(progress, index))
        return WriteReport(rows, replayed)

    def update(
        self,
        name: str,
        chunks: Iterable[list[dict[str, Any]]],
        key_fn: KeyFn,
        new_value: NewValue,
        progress: Progress | None,
        layout: MapConfig | None = None,
    ) -> WriteReport:
        """A key's rows in later chunks are applied to what the earlier chunks made of it, in
        order, so chunking changes nothing but the number of journal events."""
        store = self.store
        config = store.map_config(name, layout)
        rows = 0
        replayed = False
        for index, chunk in enumerate(chunks):
            replayed |= not self._update_chunk(store, name, config, chunk, key_fn, new_value, progress, index)
            rows += len(chunk)
        return WriteReport(rows, replayed)

    @staticmethod
    def _update_chunk(
        store: SqliteStore,
        name: str,
        config: MapConfig,
        chunk: list[dict[str, Any]],
        key_fn: KeyFn,
        new_value: NewValue,
        progress: Progress | None,
        index: int,
    ) -> bool:
        # partition -> serialised key -> (key, its rows in arrival order)
        grouped: dict[int, dict[str, tuple[Any, list[dict[str, Any]]]]] = defaultdict(dict)
        for row in chunk:
            key = key_fn(row)
            k = dumps(key)
            grouped[partition_of(k, config.partitions)].setdefault(k, (key, []))[1].append(row)

        def compute(partition: int, current: Mapping[str, str | None]) -> list[Change]:
            changes = []
            for k, (key, key_rows) in grouped[partition].items():
                old = loads(current.get(k))
                new = new_value(key, old, key_rows)
                if new is not None or old is not None:
                    changes.append(Change(k, None if new is None else dumps(new)))
            return changes

        keys = {p: list(by_key) for p, by_key in grouped.items()}
        return store.update(name, config, keys, compute, _chunk_progress(progress, index))

    def process(
        self,
        name: str,
        chunks: Iterable[list[dict[str, Any]]],
        key_fn: KeyFn,
        processor_fn: Callable[[Any], Any],
        progress: Progress | None,
        layout: MapConfig | None = None,
    ) -> WriteReport:
        """``processor_fn(entry)`` is a Python function that changes ``entry.value`` (a
        :class:`MutableEntry`) in place, run where the entries are updated, atomically per partition."""

        def new_value(key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
            entry = MutableEntry(key, old, {})
            for row in rows:
                entry.row = row
                processor_fn(entry)
            return entry.value

        return self.update(name, chunks, key_fn, new_value, progress, layout)

    def append(self, name: str, chunks: Iterable[tuple[list[Any], str]], progress: Progress | None) -> WriteReport:
        """Each chunk appended in one transaction with its progress record."""
        rows = 0
        replayed = False
        for index, (items, _column) in enumerate(chunks):
            values = [dumps(v) for v in items]
            rows += len(values)
            replayed |= not self.store.list_append(name, values, _chunk_progress(progress, index))
        return WriteReport(rows, replayed)


def _shown(stored_name: str) -> str:
    """A cache's own name, from the name the store keeps it under."""
    return stored_name.split("/", 1)[-1]


__all__ = ["EmbeddedBackend", "EmbeddedCodec", "MutableEntry"]
