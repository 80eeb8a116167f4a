"""The seam between the connectors and the place their data lives.

The connectors (``map_source``, ``journal_source``, ``map_sinks``, ``cache_connectors``,
``list_connectors``) keep everything above the data once: options, schemas, row shaping,
chunking of a task's rows, a journal's offsets and overflow rules. A :class:`Backend` does the
rest, as whole operations on one Spark task's share: read these partitions, query them on the
members, read these journal ranges, put / update / process this chunk, append these items. Two
implement it:

* :class:`~jetconnect_imap.embedded.backend.EmbeddedBackend` (``sqlite:///...``, the default):
  jetconnect's own SQLite imitation of Hazelcast's structures, whose writes carry a progress
  record atomically with the data (exactly-once sinks);
* :class:`~jetconnect_imap.hazelcast.backend.HazelcastBackend` (``hazelcast://...``): a client
  of a Hazelcast 5 cluster, whose members keep typed values and their own journals.

A connector picks one, once, where it is built (:func:`jetconnect_imap.connector.locate`), and
never asks which it has: what differs is a method here. A backend object holds only its URL and
client settings (it pickles with the connector); the connection is the process's, made on first use.
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, NamedTuple, Protocol

import pyarrow as pa
from pyspark.sql.types import DataType, StructType

from jetconnect.api import PlainFilter, redact_url
from jetconnect.errors import OptionError
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import RawEvent

#: Jet's (and Hazelcast's) default partition count.
DEFAULT_PARTITIONS = 271
#: Jet's default event journal capacity, per map, split evenly over the partitions.
DEFAULT_JOURNAL_CAPACITY = 10_000

#: What a connector reads or writes: a map, a JCache cache or a list.
Structure = Literal["map", "cache", "list"]


@dataclass(frozen=True)
class MapConfig:
    """How a map is laid out; fixed when the map is first created, like Hazelcast's config."""

    partitions: int = DEFAULT_PARTITIONS
    #: Journal events kept per map, split evenly over the partitions (0: no journal).
    journal_capacity: int = DEFAULT_JOURNAL_CAPACITY
    #: Seconds a journal event lives (0: until pushed out by newer ones).
    journal_ttl: float = 0.0

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise StoreError(f"partitions must be at least 1, got {self.partitions}")
        if self.journal_capacity < 0 or self.journal_ttl < 0:
            raise StoreError("journal_capacity and journal_ttl must not be negative")

    @classmethod
    def asked(cls, partitions: int | None, journal_capacity: int | None, journal_ttl: float | None) -> MapConfig | None:
        """The layout asked for by the options that were given, the defaults for the others; None
        when none was given: the map as it is (asking for the default 271 partitions would refuse
        an existing map of another count)."""
        if partitions is None and journal_capacity is None and journal_ttl is None:
            return None
        defaults = cls()
        return cls(
            defaults.partitions if partitions is None else partitions,
            defaults.journal_capacity if journal_capacity is None else journal_capacity,
            defaults.journal_ttl if journal_ttl is None else journal_ttl,
        )

    @property
    def partition_capacity(self) -> int:
        """Events kept per partition (Hazelcast splits the map's capacity the same way)."""
        return math.ceil(self.journal_capacity / self.partitions) if self.journal_capacity else 0


@dataclass(frozen=True)
class Progress:
    """A writer's position: ``writer`` (e.g. ``query/spark-partition``) has written ``batch``.

    A write carrying a progress whose batch is not newer than the one recorded is skipped.
    """

    writer: str
    batch: int

    def chunk(self, index: int) -> Progress:
        """The progress of the ``index``-th chunk of this writer's batch.

        A task streams its rows in chunks of a fixed row count, each written with its own
        record; a re-delivered batch brings the same rows in the same order (the premise of every
        replayable source), so chunk ``i`` holds the same rows again and is skipped exactly when
        it was written. Chunk 0 keeps the writer's own name, the record of an unchunked write.
        """
        return self if index == 0 else Progress(f"{self.writer}#{index}", self.batch)


@dataclass(frozen=True)
class WriteReport:
    """What a write task tells the commit: rows seen and whether the batch was a replay."""

    rows: int
    replayed: bool


class EntryChunk(NamedTuple):
    """One chunk of a map or cache sink's rows: the keys and the values as Arrow columns, one of
    each per record batch of the chunk (batches need not share one type), and the columns' names
    for errors (``<row>`` when the values are the row's other columns)."""

    keys: Sequence[pa.Array]
    values: Sequence[pa.Array]
    key_column: str
    value_column: str

    @property
    def rows(self) -> int:
        return sum(len(keys) for keys in self.keys)


@dataclass(frozen=True)
class CompactFormat:
    """A key or value column written as Compact records of ``type_name`` (``com.acme.Order``),
    its nested structs as records of the type names ``nested`` gives by path within the column
    (``{"address": "com.acme.Address"}``)."""

    type_name: str
    nested: Mapping[str, str]


class ValueCodec(Protocol):
    """How a backend's stored keys and values become Spark values and Python values."""

    def column(self, data_type: DataType) -> Callable[[Any], Any]:
        """How one stored key or value fills a column of ``data_type`` (a string column shows a
        non-string value as its JSON text)."""
        ...

    def column_values(
        self, data_type: DataType, values: Sequence[Any], describe: Callable[[int], str]
    ) -> list[Any] | pa.Array:
        """A whole column of stored keys or values for a column of ``data_type``: Python values,
        or an Arrow array of the column's type; ``describe(i)`` names row ``i`` for errors."""
        ...

    def plain(self, stored: Any) -> Any:
        """A stored key or value as the plain Python value a predicate or projection gets."""
        ...

    def derived_type(self, values: Sequence[Any]) -> StructType | None:
        """The Spark struct a sample of stored values reads as, when the values say (application
        objects with schemas of their own); None: the source's default column type."""
        ...


#: ``key_fn(row)``: the key a row updates; ``new_value(key, old, rows)``: the value after
#: applying ``rows`` in order to ``old`` (None removes the entry).
KeyFn = Callable[[dict[str, Any]], Any]
NewValue = Callable[[Any, Any, list[dict[str, Any]]], Any]


def fingerprint(data: bytes) -> str:
    """The digest :meth:`Backend.journal_fingerprint` gives of an event's stored bytes: 64 bits
    of BLAKE2b as hex (two different events agree by chance once in 2**64)."""
    return hashlib.blake2b(data, digest_size=8).hexdigest()


class Backend(ABC):
    """Maps, caches, lists and journals in one place; every method names the structure it acts on."""

    #: The ``store`` kind the guarantee tables name: ``sqlite`` or ``hazelcast``.
    kind: ClassVar[str]

    def __init__(self, url: str, client_config: Mapping[str, Any] | None = None) -> None:
        self.url = url
        self.client_config = dict(client_config or {})

    @property
    def display_url(self) -> str:
        """The URL with any password hidden: what errors and logs may show."""
        return redact_url(self.url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display_url!r})"

    # --- what a connector checks where it is built (nothing is contacted) ----------------------

    @abstractmethod
    def stored_name(self, structure: Structure, name: str) -> str:
        """The name the backend keeps ``structure`` ``name`` under; a
        :class:`~jetconnect_imap.errors.StructureNameError` for a name it cannot hold as given."""

    def layout(
        self, owner: str, partitions: int | None, journal_capacity: int | None, journal_ttl: float | None
    ) -> MapConfig | None:
        """The layout a sink asks for a new map (None: the map as it is). Only the embedded store
        lays out maps; elsewhere that is the server's configuration, and asking is an error."""
        if partitions is not None or journal_capacity is not None or journal_ttl:
            raise OptionError(
                f"{owner}: partitions, journal_capacity and journal_ttl lay out the embedded store's maps; "
                f"on {self.kind} they are the server's configuration, not options of a client"
            )
        return None

    def check_queries(self, owner: str, structure: Structure, predicate: Any, projection: Any) -> None:
        """Refuse a predicate or projection this backend cannot run for ``structure``."""

    def check_expiry(self, owner: str, expiry_s: float | None) -> None:
        """Refuse a cache sink's ``expiry_s`` where entries expire by the server's policy instead."""

    def check_compact(self, owner: str) -> None:
        """Refuse a Compact key or value format where the backend keeps no Compact records."""
        raise OptionError(
            f"{owner}: Compact is Hazelcast's format for application objects; {self.display_url} keeps JSON "
            "(write to a hazelcast:// store, or leave key_format and value_format 'auto')"
        )

    # --- reads -----------------------------------------------------------------------------------

    @property
    @abstractmethod
    def codec(self) -> ValueCodec:
        """How this backend's stored keys and values read."""

    @abstractmethod
    def partition_count(self, structure: Structure, name: str) -> int: ...

    @abstractmethod
    def read_partition(self, structure: Structure, name: str, partition: int) -> Iterable[tuple[Any, Any]]:
        """Every live ``(key, value)`` of one partition of a map or cache, in stored form."""

    def query(
        self, name: str, partition: int, predicate: Any, projection: Any, pushed: Sequence[PlainFilter] = ()
    ) -> Iterable[Any]:
        """What a member-side ``predicate`` and the ``pushed`` Spark filters select in one map
        partition (and a member-side ``projection`` makes of it): ``(key, value)`` pairs, or the
        projected values. Only where members run queries."""
        raise StoreError(f"{self.display_url} runs no member-side queries")

    def pushable(self, spark_filter: Any, columns: Mapping[str, tuple[str, DataType]]) -> PlainFilter | None:
        """The plain form of a Spark filter this backend evaluates where the data is (``columns``:
        column name -> attribute and type), or None: Spark keeps it."""
        return None

    @abstractmethod
    def read_list(self, name: str) -> list[Any]:
        """The items of a list, in order, in stored form."""

    def sample(self, structure: Structure, name: str) -> list[tuple[Any, Any]]:
        """A few stored ``(key, value)`` entries of a map or cache, for a schema derived from the
        data (the first of each partition); a list's items are values with None keys."""
        return []

    # --- journals --------------------------------------------------------------------------------

    @abstractmethod
    def journal_bounds(self, structure: Structure, name: str) -> list[tuple[int, int]]:
        """Per partition, ``(oldest, next)``: the oldest sequence still kept and the next one."""

    @abstractmethod
    def read_journal(
        self, structure: Structure, name: str, spans: Mapping[int, tuple[int, int]]
    ) -> dict[int, list[RawEvent]]:
        """The kept events of each partition's ``[start, end)`` (``spans``), oldest first, one
        for each stored event (a source's overflow rule counts on their sequences): events
        dropped before they were read are missing and the first kept sequence shows the gap."""

    @abstractmethod
    def journal_retention(self, structure: Structure, name: str) -> tuple[str, str]:
        """What the journal keeps and how to keep more, as text for the overflow error."""

    @abstractmethod
    def journal_identity(self, structure: Structure, name: str) -> str | None:
        """What the journal's sequences belong to now, as text that changes whenever they start
        again from 0 under the same name (None: this backend cannot tell). A journal source keeps
        it in its offset, so that a restart tells the same journal further on from a new one."""

    @abstractmethod
    def journal_fingerprint(self, structure: Structure, name: str, partition: int, sequence: int) -> str | None:
        """A short digest of the event at ``sequence`` of one partition, the same however often
        it is read (None: the journal does not keep that sequence, dropped or not written yet).
        A different digest at a sequence read before says the journal is another one."""

    # --- writes ----------------------------------------------------------------------------------

    @abstractmethod
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
        """Put each chunk's values under its keys (a null value removes the key; a key's last
        row wins), chunk after chunk, so that a later row of a key wins over an earlier chunk;
        ``compact`` says which of ``key`` and ``value`` are written as Compact records."""

    @abstractmethod
    def update(
        self,
        name: str,
        chunks: Iterable[list[dict[str, Any]]],
        key_fn: KeyFn,
        new_value: NewValue,
        progress: Progress | None,
        layout: MapConfig | None = None,
    ) -> WriteReport:
        """Read-modify-write: per chunk, each key's value recomputed from its current one and its
        rows in order, no concurrent update lost."""

    @abstractmethod
    def process(
        self,
        name: str,
        chunks: Iterable[list[dict[str, Any]]],
        key_fn: KeyFn,
        processor_fn: Callable[[Any], Any],
        progress: Progress | None,
        layout: MapConfig | None = None,
    ) -> WriteReport:
        """Jet's entry processors: ``processor_fn`` applied to each row's entry where the backend
        runs processors (what ``processor_fn`` takes and returns is the backend's: see its class)."""

    @abstractmethod
    def append(self, name: str, chunks: Iterable[tuple[list[Any], str]], progress: Progress | None) -> WriteReport:
        """Append each chunk's items (and the column they came from, for errors) to a list."""


__all__ = [
    "DEFAULT_JOURNAL_CAPACITY",
    "DEFAULT_PARTITIONS",
    "Backend",
    "CompactFormat",
    "EntryChunk",
    "KeyFn",
    "MapConfig",
    "NewValue",
    "Progress",
    "Structure",
    "ValueCodec",
    "WriteReport",
    "fingerprint",
]
