"""``sinks.map`` and its merging, updating and entry-processor forms.

Each Spark task streams its rows in chunks of ``chunk_rows`` rows (cut at the same rows however
Spark sizes its Arrow batches), and writes each chunk in one store call: every map partition is
updated atomically with its journal events. In a streaming query each chunk's write also carries
a progress record ``(query id / Spark partition / chunk -> batch id)``, checked and stored in the
same atomic step, so when Spark re-delivers a micro-batch after a crash, what already holds it is
skipped: exactly-once when the input is replayable (the same batch id brings the same rows to the
same Spark partition in the same order). Batch writes carry no progress record.

On Hazelcast (``store="hazelcast://..."``) the members keep the entries and their journal, and
no write can carry a progress record atomically with the data, so each sink's guarantee rests on
what the write is: the plain put sink puts a chunk with ``putAll`` (grouped by partition), and a
replayed micro-batch puts the same values again, which leaves the same map (exactly-once for the
map's content; the journal shows the replayed puts as UPDATED events with equal old and new
values). Merging, updating and entry processors are not idempotent: a replayed batch applies
them again, so they are at-least-once there. Merging and updating run the Python function in the
task and write with compare-and-set (no concurrent update is lost); entry processors are
Hazelcast's own, run on the member owning the key.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, TypedDict, Unpack

import pyarrow as pa
from pyspark.sql.types import StructType

from jetconnect import Guarantee, Sink, WriteContext
from jetconnect.api import GuaranteeOption
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect_imap.events import Change
from jetconnect_imap.hz_store import (
    HazelcastStore,
    PreparedPut,
    check_entry_processor,
    hashable,
    open_hazelcast,
)
from jetconnect_imap.hz_values import ValueMappingError, from_hazelcast, to_hazelcast
from jetconnect_imap.located import StoreClient
from jetconnect_imap.serde import dumps, dumps_column, dumps_keys, loads, partition_of, partitions_of
from jetconnect_imap.store import (
    MapConfig,
    Progress,
    Store,
    StoreError,
    check_name,
    open_store,
    redact_url,
)

#: Rows a sink task holds and writes at once: its memory is bounded by this, not by the partition.
DEFAULT_CHUNK_ROWS = 10_000


def progress_of(ctx: WriteContext) -> Progress | None:
    """The progress record of a streaming write task, from its idempotence key; None for a batch
    write. The record is ``key.writer -> key.batch_id`` (``query/partition -> batch``), the
    format every store already holds."""
    key = ctx.key
    if key is None or not key.query_id:
        return None
    return Progress(key.writer, key.batch_id)


def chunk_progress(progress: Progress | None, index: int) -> Progress | None:
    """The progress record of chunk ``index`` of a task (None stays None: a batch write)."""
    return None if progress is None else progress.chunk(index)


def row_chunks(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[list[pa.RecordBatch]]:
    """The rows of ``batches`` in consecutive chunks of exactly ``size`` rows (the last may be
    shorter), whatever the sizes of the incoming batches: chunk ``i`` of a re-delivered
    micro-batch holds the same rows as chunk ``i`` of the first delivery."""
    chunk: list[pa.RecordBatch] = []
    held = 0
    for batch in batches:
        offset = 0
        while offset < batch.num_rows:
            take = min(size - held, batch.num_rows - offset)
            chunk.append(batch.slice(offset, take))
            held += take
            offset += take
            if held == size:
                yield chunk
                chunk, held = [], 0
    if chunk:
        yield chunk


def check_chunk_rows(owner: str, chunk_rows: int) -> int:
    """``chunk_rows`` if it is a usable chunk size, else an OptionError naming sink and option."""
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise OptionError(
            f"sink '{owner}': option 'chunk_rows' must be a whole number of at least 1, got {chunk_rows!r}"
        )
    return chunk_rows


@dataclass(frozen=True)
class WriteReport:
    """What a task tells the commit: rows seen and whether the batch was a replay."""

    rows: int
    replayed: bool


class StoreOptions(TypedDict, total=False):
    """The options every map and cache sink takes besides its own, declared here once with their
    types (their defaults are :class:`_MapSinkBase`'s): where the structure lives (``store``,
    ``client_config``), the embedded store's layout of a new one (``partitions``,
    ``journal_capacity``, ``journal_ttl``) and how many rows go per call (``chunk_rows``)."""

    store: str | None
    partitions: int | None
    journal_capacity: int | None
    journal_ttl: float | None
    chunk_rows: int
    client_config: Mapping[str, Any] | None


class _MapSinkBase(StoreClient, Sink):
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"
    #: What the structure is called in messages; the cache sink says "cache".
    kind = "map"

    def __init__(
        self,
        name: str,
        *,
        store: str | None = None,
        partitions: int | None = None,
        journal_capacity: int | None = None,
        journal_ttl: float | None = None,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        client_config: Mapping[str, Any] | None = None,
    ) -> None:
        self.display_name = name
        self._locate(store, client_config)
        self.map_name = name if self.on_hazelcast else self._stored_name(name)
        if self.on_hazelcast and (partitions is not None or journal_capacity is not None or journal_ttl):
            raise OptionError(
                f"sink '{self.name}': partitions, journal_capacity and journal_ttl are the members' configuration "
                "on Hazelcast (hazelcast.yaml), not options of a client"
            )
        if self.guarantee_option is not None:
            self.guarantee = self.guarantee_option.guarantee("hazelcast" if self.on_hazelcast else "sqlite")
        defaults = MapConfig()
        # As with connect().map(): without layout options the sink writes to the map as it is
        # (asking for the default 271 partitions would refuse an existing map of another count).
        self.wanted: MapConfig | None = None
        if partitions is not None or journal_capacity is not None or journal_ttl is not None:
            try:
                self.wanted = MapConfig(
                    defaults.partitions if partitions is None else partitions,
                    defaults.journal_capacity if journal_capacity is None else journal_capacity,
                    journal_ttl or 0.0,
                )
            except StoreError as exc:
                raise OptionError(f"sink '{self.name}': {exc}") from None
        self.chunk_rows = check_chunk_rows(self.name, chunk_rows)

    @staticmethod
    def _stored_name(name: str) -> str:
        """The name the store keeps the structure under (a cache's differs from its own)."""
        return check_name("map", name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display_name!r}, store={redact_url(self.store_url)!r})"

    def _open(self) -> tuple[Store, MapConfig]:
        try:
            store = open_store(self.store_url)
            return store, store.map_config(self.map_name, self.wanted)
        except StoreError as exc:
            raise self._fail(exc) from exc

    def _fail(self, exc: Exception) -> SinkError:
        return SinkError(f"sink '{self.name}' writing {self.kind} '{self.display_name}': {exc}")

    def _hazelcast(self) -> HazelcastStore:
        try:
            return open_hazelcast(self.store_url, self.client_config)
        except StoreError as exc:
            raise self._fail(exc) from exc


class MapSink(_MapSinkBase):
    """Puts each row's ``value`` under its ``key``; a null value removes the key.

    Without a ``value`` column, the value is the row's other columns as a dict.
    """

    name = "map"

    def __init__(
        self,
        name: str,
        *,
        key_column: str = "key",
        value_column: str = "value",
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(name, **store_options)
        self.key_column, self.value_column = key_column, value_column

    def check_schema(self, schema: StructType) -> None:
        if self.key_column not in schema.fieldNames():
            raise SchemaError(
                f"sink '{self.name}': the DataFrame has no column '{self.key_column}' to use as the key "
                f"(columns: {', '.join(schema.fieldNames())}); rename one or set key_column"
            )

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        if self.on_hazelcast:
            try:
                return self._write_hazelcast(data)
            except (StoreError, ValueMappingError) as exc:
                raise self._fail(exc) from exc
        store, config = self._open()
        progress = progress_of(ctx)
        partitions = config.partitions
        rows = 0
        replayed = False
        for index, chunk in enumerate(row_chunks(data, self.chunk_rows)):
            changes: dict[int, list[Change]] = defaultdict(list)
            encode_values = self._value_encoder()
            for batch in chunk:
                key_column, value_column = self._columns(batch)
                keys = dumps_keys(key_column)
                values = encode_values(value_column)
                for key, value, partition in zip(keys, values, partitions_of(keys, partitions)):
                    changes[partition].append(Change(key, value))
                rows += batch.num_rows
            replayed |= not self._apply(store, config, changes, chunk_progress(progress, index))
        return WriteReport(rows, replayed)

    def _write_hazelcast(self, data: Iterator[pa.RecordBatch]) -> WriteReport:
        """Each chunk with one ``putAll`` per partition (a null value removes its key)."""
        store = self._hazelcast()
        rows = 0
        key_name = self.key_column
        if self.bulk_put:
            return self._write_columns(store, data)
        for chunk in row_chunks(data, self.chunk_rows):
            entries = []
            for batch in chunk:
                key_column, value_column = self._columns(batch)
                value_name = self.value_column if self.value_column in batch.schema.names else "<row>"
                for key, value in zip(key_column.to_pylist(), value_column.to_pylist()):
                    if key is None:
                        raise self._fail(SchemaError(f"column '{key_name}' holds a null key, which Hazelcast refuses"))
                    entries.append((to_hazelcast(key, key_name), self._to_member_value(value, value_name)))
            try:
                rows += self._put_hazelcast(store, entries)
            except StoreError as exc:
                raise self._fail(exc) from exc
        return WriteReport(rows, False)

    #: Whether chunks go through :mod:`jetconnect_imap.hz_bulk` (whole columns serialised at
    #: once, ~3x less time than per object); a sink that maps each value its own way says no.
    bulk_put = True

    def _write_columns(self, store: HazelcastStore, data: Iterator[pa.RecordBatch]) -> WriteReport:
        """Each chunk serialised column by column (:func:`hz_bulk.serialize_column`: the same bytes
        the client makes of each value) while the chunk before it is in flight; a chunk is sent
        only once the one before it has landed, so a later row of a key still wins, even when a
        chunk had to be sent again. At most two chunks are held."""
        in_flight: tuple[PreparedPut, Any] | None = None
        rows = 0
        try:
            for chunk in row_chunks(data, self.chunk_rows):
                prepared = self._prepare_columns(store, chunk)
                if in_flight is not None:
                    store.await_put(*in_flight)
                in_flight = prepared, store.send_put(prepared)
                rows += prepared.pairs
            if in_flight is not None:
                store.await_put(*in_flight)
        except StoreError as exc:
            raise self._fail(exc) from exc
        return WriteReport(rows, False)

    def _prepare_columns(self, store: HazelcastStore, chunk: list[pa.RecordBatch]) -> PreparedPut:
        from jetconnect_imap.hz_bulk import serialize_column

        service = store.client._serialization_service
        to_data, big_endian = service.to_data, getattr(service, "_is_big_endian", True)
        keys: list[Any] = []
        values: list[Any] = []
        for batch in chunk:
            key_column, value_column = self._columns(batch)
            if key_column.null_count:
                raise self._fail(SchemaError(f"column '{self.key_column}' holds a null key, which Hazelcast refuses"))
            value_name = self.value_column if self.value_column in batch.schema.names else "<row>"
            keys += serialize_column(key_column, self.key_column, to_data, big_endian)
            values += serialize_column(value_column, value_name, to_data, big_endian)
        return store.prepare_put(self.map_name, keys, values)

    def _to_member_value(self, value: Any, column: str) -> Any:
        """A row's value as the member keeps it (a cache wraps nothing: JCache expires itself)."""
        return to_hazelcast(value, column)

    def _put_hazelcast(self, store: HazelcastStore, entries: list[tuple[Any, Any]]) -> int:
        return store.put_chunk(self.map_name, entries)

    def _value_encoder(self) -> Callable[[pa.Array], list[str | None]]:
        """How this chunk's values are stored: their JSON text, None (a removal) for a null (a
        cache adds an expiry time)."""
        return dumps_column

    def _columns(self, batch: pa.RecordBatch) -> tuple[pa.Array, pa.Array]:
        """The batch's keys and values: the value column, or the other columns as one struct."""
        keys = batch.column(self.key_column)
        if self.value_column in batch.schema.names:
            return keys, batch.column(self.value_column)
        return keys, batch.drop_columns([self.key_column]).to_struct_array()  # a key alone: {} per row

    def _apply(
        self, store: Store, config: MapConfig, changes: Mapping[int, Sequence[Change]], progress: Progress | None
    ) -> bool:
        try:
            return store.apply(self.map_name, config, changes, progress)
        except StoreError as exc:
            raise self._fail(exc) from exc


#: Exactly-once on the embedded store (progress records in the same transaction as the data);
#: at-least-once on Hazelcast, where a replayed micro-batch applies its functions again.
_BY_STORE = GuaranteeOption("store", {"sqlite": Guarantee.EXACTLY_ONCE, "hazelcast": Guarantee.AT_LEAST_ONCE}, "sqlite")


class _ReadModifyWriteSink(_MapSinkBase):
    """Base of the sinks that compute a new value from the current one and the row."""

    guarantee_option = _BY_STORE

    def __init__(
        self,
        name: str,
        key_fn: Callable[[dict[str, Any]], Any],
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(
            name,
            **store_options,
        )
        self.key_fn = key_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        """The value after applying ``rows`` (in order) to ``old``; None removes the entry."""
        raise NotImplementedError

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        if self.on_hazelcast:
            try:
                return self._write_hazelcast(data)
            except (StoreError, ValueMappingError) as exc:
                raise self._fail(exc) from exc
        store, config = self._open()
        progress = progress_of(ctx)
        rows = 0
        replayed = False
        for index, chunk in enumerate(row_chunks(data, self.chunk_rows)):
            # A key's rows in later chunks are applied to what the earlier chunks made of it,
            # in order, so chunking changes nothing but the number of journal events.
            replayed |= not self._write_chunk(store, config, chunk, chunk_progress(progress, index))
            rows += sum(batch.num_rows for batch in chunk)
        return WriteReport(rows, replayed)

    def _write_hazelcast(self, data: Iterator[pa.RecordBatch]) -> WriteReport:
        """Each chunk's keys read, recomputed from their rows in order and written with
        compare-and-set (recomputed again for a key another writer changed meanwhile)."""
        store = self._hazelcast()
        rows = 0
        to_stored = partial(to_hazelcast, column="the new value")
        for chunk in row_chunks(data, self.chunk_rows):
            member_keys: dict[Any, Any] = {}
            key_rows: dict[Any, list[dict[str, Any]]] = defaultdict(list)
            for batch in chunk:
                for row in batch.to_pylist():
                    member_key = to_hazelcast(self.key_fn(row), "key_fn(row)")
                    stand_in = hashable(member_key)
                    member_keys.setdefault(stand_in, member_key)
                    key_rows[stand_in].append(row)
                rows += batch.num_rows
            try:
                store.compare_and_set(self.map_name, member_keys, self._recompute(member_keys, key_rows), to_stored)
            except StoreError as exc:
                raise self._fail(exc) from exc
        return WriteReport(rows, False)

    def _recompute(
        self, member_keys: Mapping[Any, Any], key_rows: Mapping[Any, list[dict[str, Any]]]
    ) -> Callable[[Any, Any], Any]:
        """``compute(stand_in, old)`` for :meth:`HazelcastStore.compare_and_set`: the new value
        of a key from its current one and its rows, on plain Python values."""

        def compute(stand_in: Any, old: Any) -> Any:
            key = from_hazelcast(member_keys[stand_in])
            return self._new_value(key, from_hazelcast(old), key_rows[stand_in])

        return compute

    def _write_chunk(
        self, store: Store, config: MapConfig, chunk: list[pa.RecordBatch], progress: Progress | None
    ) -> bool:
        # partition -> serialised key -> (key, its rows in arrival order)
        grouped: dict[int, dict[str, tuple[Any, list[dict[str, Any]]]]] = defaultdict(dict)
        for batch in chunk:
            for row in batch.to_pylist():
                key = self.key_fn(row)
                k = dumps(key)
                grouped[partition_of(k, config.partitions)].setdefault(k, (key, []))[1].append(row)

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
            return store.update(self.map_name, config, keys, compute, progress)
        except StoreError as exc:
            raise self._fail(exc) from exc


class MapWithMergingSink(_ReadModifyWriteSink):
    """``value_fn(row)`` merged into the current value with ``merge_fn(old, new)`` (Jet's
    ``mapWithMerging``); the first value of an absent key is taken as is; None removes."""

    name = "map_with_merging"

    def __init__(
        self,
        name: str,
        key_fn: Callable[[dict[str, Any]], Any],
        value_fn: Callable[[dict[str, Any]], Any],
        merge_fn: Callable[[Any, Any], Any],
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(
            name,
            key_fn,
            **store_options,
        )
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

    def __init__(
        self,
        name: str,
        key_fn: Callable[[dict[str, Any]], Any],
        update_fn: Callable[[Any, dict[str, Any]], Any],
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(
            name,
            key_fn,
            **store_options,
        )
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
    """Jet's ``mapWithEntryProcessor``. On Hazelcast, ``processor_fn(row)`` returns an entry
    processor the members know (e.g. :mod:`jetconnect_imap.hz_processors`), run on the member
    owning ``key_fn(row)``; on the embedded store, ``processor_fn(entry)`` is a Python function
    that changes ``entry.value`` in place (run where the entries are updated, atomically per
    partition)."""

    def _write_hazelcast(self, data: Iterator[pa.RecordBatch]) -> WriteReport:
        store = self._hazelcast()
        owner = f"sink '{self.name}'"
        rows = 0
        for chunk in row_chunks(data, self.chunk_rows):
            calls = []
            for batch in chunk:
                for row in batch.to_pylist():
                    key = to_hazelcast(self.key_fn(row), "key_fn(row)")
                    try:
                        processor = check_entry_processor(self.processor_fn(row), owner)
                    except StoreError as exc:
                        raise self._fail(exc) from None
                    calls.append((key, processor))
                rows += batch.num_rows
            try:
                store.execute(self.map_name, calls)
            except StoreError as exc:
                raise self._fail(exc) from exc
        return WriteReport(rows, False)

    name = "map_with_entry_processor"

    def __init__(
        self,
        name: str,
        key_fn: Callable[[dict[str, Any]], Any],
        processor_fn: Callable[[MutableEntry], Any],
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(
            name,
            key_fn,
            **store_options,
        )
        self.processor_fn = processor_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        entry = MutableEntry(key, old, {})
        for row in rows:
            entry.row = row
            self.processor_fn(entry)
        return entry.value
