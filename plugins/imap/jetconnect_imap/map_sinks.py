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

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypedDict, Unpack

import pyarrow as pa
from pyspark.sql.types import NullType, StructField, StructType

from jetconnect import Guarantee, Sink, WriteContext
from jetconnect.api import GuaranteeOption
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect_imap.backend import CompactFormat, EntryChunk, Progress, WriteReport
from jetconnect_imap.connector import OnBackend
from jetconnect_imap.embedded.backend import MutableEntry
from jetconnect_imap.errors import StoreError
from jetconnect_imap.hazelcast.compact.writer import check_type_name
from jetconnect_imap.hazelcast.values import ValueMappingError

#: Rows a sink task holds and writes at once: its memory is bounded by this, not by the partition.
DEFAULT_CHUNK_ROWS = 10_000


def progress_of(ctx: WriteContext) -> Progress | None:
    """The progress record of a streaming write task, from its idempotence key; None for a batch
    write. The record is ``key.writer -> key.batch_id`` (``query/partition -> batch``)."""
    key = ctx.key
    if key is None or not key.query_id:
        return None
    return Progress(key.writer, key.batch_id)


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


def row_dicts(batches: Iterable[pa.RecordBatch], size: int) -> Iterator[list[dict[str, Any]]]:
    """:func:`row_chunks` as lists of row dicts, what a function of a row (``key_fn``) takes."""
    for chunk in row_chunks(batches, size):
        yield [row for batch in chunk for row in batch.to_pylist()]


def check_chunk_rows(owner: str, chunk_rows: int) -> int:
    """``chunk_rows`` if it is a usable chunk size, else an OptionError naming sink and option."""
    if not isinstance(chunk_rows, int) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise OptionError(
            f"sink '{owner}': option 'chunk_rows' must be a whole number of at least 1, got {chunk_rows!r}"
        )
    return chunk_rows


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


class EntryOptions(StoreOptions, total=False):
    """The options of the sinks that put each row's value under its key (``sinks.map``,
    ``sinks.cache``), declared once (their defaults are :class:`MapSink`'s): which columns are
    the key and the value, and how each is written (``auto`` or ``compact``)."""

    key_column: str
    value_column: str | None
    key_format: str
    value_format: str
    key_compact_type_name: str | None
    value_compact_type_name: str | None
    compact_type_names: dict[str, str] | None


class _MapSinkBase(OnBackend, Sink):
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

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
        self._locate(name, store, client_config)
        if self.guarantee_option is not None:
            self.guarantee = self.guarantee_option.guarantee(self.backend.kind)
        #: The layout a new map gets (None: the map as it is).
        self.layout = self.backend.layout(f"sink '{self.name}'", partitions, journal_capacity, journal_ttl)
        self.chunk_rows = check_chunk_rows(self.name, chunk_rows)

    def _fail(self, exc: Exception) -> SinkError:
        return SinkError(f"sink '{self.name}' writing {self._subject}: {exc}")


class MapSink(_MapSinkBase):
    """Puts each row's ``value`` under its ``key``; a null value removes the key.

    ``value_column`` names the value's column; by default the ``value`` column, or, when the frame
    has none, the row's other columns as one value (a dict). A column named that the frame lacks
    is an error, never the other columns stored in its place.
    """

    name = "map"
    #: When the entries written expire (the cache sink's ``expiry_s``; a map's never do).
    expiry_s: float | None = None

    def __init__(
        self,
        name: str,
        *,
        key_column: str = "key",
        value_column: str | None = None,
        key_format: str = "auto",
        value_format: str = "auto",
        key_compact_type_name: str | None = None,
        value_compact_type_name: str | None = None,
        compact_type_names: dict[str, str] | None = None,
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(name, **store_options)
        self.key_column, self.value_column = key_column, value_column
        #: Which of ``key`` and ``value`` are written as Compact records, and of what type names.
        self.compact = compact_formats(
            f"sink '{self.name}'",
            {"key": (key_format, key_compact_type_name), "value": (value_format, value_compact_type_name)},
            compact_type_names,
        )
        if self.compact:
            self.backend.check_compact(f"sink '{self.name}'")

    def check_schema(self, schema: StructType) -> None:
        names = schema.fieldNames()
        if self.key_column not in names:
            raise SchemaError(
                f"sink '{self.name}': the DataFrame has no column '{self.key_column}' to use as the key "
                f"(columns: {', '.join(names)}); rename one or set key_column"
            )
        if self.value_column is not None and self.value_column not in names:
            raise SchemaError(
                f"sink '{self.name}': the DataFrame has no column '{self.value_column}' named by value_column "
                f"(columns: {', '.join(names)}); leave value_column unset to store the other columns as one value"
            )

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        chunks = (self._entries(chunk) for chunk in row_chunks(data, self.chunk_rows))
        try:
            return self.backend.put(
                self.structure, self.stored, chunks, progress_of(ctx), self.layout, self.expiry_s, self.compact
            )
        except (StoreError, ValueMappingError) as exc:
            raise self._fail(exc) from exc

    def _entries(self, chunk: list[pa.RecordBatch]) -> EntryChunk:
        """A chunk's keys and values: the value column, or the other columns as one struct."""
        keys = [batch.column(self.key_column) for batch in chunk]
        names = chunk[0].schema.names
        if self.value_column is not None and self.value_column not in names:
            self.check_schema(StructType([StructField(name, NullType()) for name in names]))  # names it
        column = self.value_column if self.value_column is not None else "value" if "value" in names else None
        if column is not None:
            values = [batch.column(column) for batch in chunk]
            return EntryChunk(keys, values, self.key_column, column)
        # a key alone: {} per row
        values = [batch.drop_columns([self.key_column]).to_struct_array() for batch in chunk]
        return EntryChunk(keys, values, self.key_column, "<row>")


#: How a key or value column is written: ``auto`` (each Spark type as the Java type every client
#: reads; structs, maps and arrays as Hazelcast JSON) or ``compact`` (records of a type name).
FORMATS = ("auto", "compact")


def compact_formats(
    owner: str, formats: Mapping[str, tuple[str, str | None]], nested: Mapping[str, str] | None
) -> dict[str, CompactFormat]:
    """The Compact formats of a sink's ``key_format`` / ``value_format`` options (``{"key": (format,
    type name)}``) and ``compact_type_names`` (nested type names by ``column.path``), checked:
    a format other than auto or compact, compact without a type name, a type name or nested name
    without compact, a bad type name, each an OptionError naming the option."""
    out: dict[str, CompactFormat] = {}
    given = dict(nested or {})
    for column, (form, type_name) in formats.items():
        if form not in FORMATS:
            raise OptionError(f"{owner}: option '{column}_format' must be auto or compact, got {form!r}")
        if form == "auto":
            if type_name is not None:
                raise OptionError(
                    f"{owner}: option '{column}_compact_type_name' is for {column}_format='compact' "
                    f"(the {column} is written as {form})"
                )
            continue
        if type_name is None:
            raise OptionError(
                f"{owner}: {column}_format='compact' needs option '{column}_compact_type_name', the type name "
                "the records are of (a Java class's full name, e.g. 'com.acme.Order')"
            )
        check_type_name(f"{column}_compact_type_name", type_name)
        prefix = f"{column}."
        mine = {path[len(prefix) :]: name for path, name in given.items() if path.startswith(prefix)}
        out[column] = CompactFormat(type_name, mine)
    stray = sorted(path for path in given if path.split(".", 1)[0] not in out or "." not in path)
    if stray:
        raise OptionError(
            f"{owner}: option 'compact_type_names' names {', '.join(map(repr, stray))}: its keys are paths of nested "
            "structs in a Compact column, 'value.address' or 'key.region'"
        )
    return out


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
        super().__init__(name, **store_options)
        self.key_fn = key_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        """The value after applying ``rows`` (in order) to ``old``; None removes the entry."""
        raise NotImplementedError

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        chunks = row_dicts(data, self.chunk_rows)
        try:
            return self.backend.update(self.stored, chunks, self.key_fn, self._new_value, progress_of(ctx), self.layout)
        except (StoreError, ValueMappingError) as exc:
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
        super().__init__(name, key_fn, **store_options)
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
        super().__init__(name, key_fn, **store_options)
        self.update_fn = update_fn

    def _new_value(self, key: Any, old: Any, rows: list[dict[str, Any]]) -> Any:
        value = old
        for row in rows:
            value = self.update_fn(value, row)
        return value


class MapWithEntryProcessorSink(_MapSinkBase):
    """Jet's ``mapWithEntryProcessor``. On Hazelcast, ``processor_fn(row)`` returns an entry
    processor the members know (e.g. :mod:`jetconnect_imap.hazelcast.processors`), run on the
    member owning ``key_fn(row)``; on the embedded store, ``processor_fn(entry)`` is a Python
    function that changes ``entry.value`` (a :class:`MutableEntry`) in place, run where the
    entries are updated, atomically per partition."""

    name = "map_with_entry_processor"
    guarantee_option = _BY_STORE

    def __init__(
        self,
        name: str,
        key_fn: Callable[[dict[str, Any]], Any],
        processor_fn: Callable[[MutableEntry], Any],
        **store_options: Unpack[StoreOptions],
    ) -> None:
        super().__init__(name, **store_options)
        self.key_fn, self.processor_fn = key_fn, processor_fn

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> WriteReport:
        chunks = row_dicts(data, self.chunk_rows)
        try:
            return self.backend.process(
                self.stored, chunks, self.key_fn, self.processor_fn, progress_of(ctx), self.layout
            )
        except (StoreError, ValueMappingError) as exc:
            raise self._fail(exc) from exc


__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "FORMATS",
    "MapSink",
    "MapWithEntryProcessorSink",
    "MapWithMergingSink",
    "MapWithUpdatingSink",
    "MutableEntry",
    "StoreOptions",
    "check_chunk_rows",
    "compact_formats",
    "progress_of",
    "row_chunks",
    "row_dicts",
]
