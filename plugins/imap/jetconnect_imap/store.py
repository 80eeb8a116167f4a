"""The store interface behind every map and list, and ``open_store(url)`` to pick one.

A store keeps, per map, 271 (by default) partitions of serialised entries and, per partition,
a ring of journal events with consecutive sequence numbers. Every write of one partition updates
the entries and the journal in one atomic step, and may carry a :class:`Progress` record: a
writer's batch that the store has already recorded is skipped, atomically with the data, which is
what makes a re-delivered Spark micro-batch harmless.

This is the embedded store, ``sqlite:///abs/path.db`` (the default when no ``store`` is given):
jetconnect's own imitation of Hazelcast's structures, for notebooks, demos and tests without a
server. A Hazelcast cluster (``hazelcast://host:port,.../cluster``) keeps its own entries and
journal; the connectors reach it through :mod:`jetconnect_imap.hz_store` instead.
"""

from __future__ import annotations

import math
import os
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from jetconnect.api import ClientCache, redact_url
from jetconnect.errors import JetconnectError
from jetconnect_imap.events import Change, EventType
from jetconnect_imap.serde import DEFAULT_PARTITIONS

#: Jet's default event journal capacity, per map, split evenly over the partitions.
DEFAULT_JOURNAL_CAPACITY = 10_000
#: Where maps live when no store URL is given (an env variable lets a whole job agree on one).
STORE_ENV = "JETCONNECT_IMAP_STORE"

#: ``compute(partition, current)`` gets the current serialised values of the requested keys
#: (None for absent ones) and returns the changes to apply to that partition.
Compute = Callable[[int, Mapping[str, "str | None"]], Sequence[Change]]
#: A raw journal record: sequence, type, serialised key, old value, new value, timestamp (ms).
RawEvent = tuple[int, EventType, "str | None", "str | None", "str | None", int]


class StoreError(JetconnectError):
    """The store cannot do what was asked (wrong URL, map configured differently, bad name)."""


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


_NAME = re.compile(r"[A-Za-z0-9_.:\-]+")


def check_name(kind: str, name: str) -> str:
    """Map, cache and list names are plain words (the embedded store's keys stay simple and safe)."""
    # fullmatch: match(r"...$") also takes "x\n", another name than "x" that a later read misses
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise StoreError(f"{kind} name {name!r} must be letters, digits, '_', '.', ':' or '-'")
    return name


#: A cache is kept as the map ``cache/<name>``: no map name may hold a '/', so ``map("x")`` and
#: ``cache("x")`` never share entries, journal or progress records, in SQLite or in Redis.
CACHE_PREFIX = "cache/"


def cache_store_name(name: str) -> str:
    """The name under which the store keeps cache ``name`` (checked as a plain word first)."""
    return CACHE_PREFIX + check_name("cache", name)


def check_stored_name(name: str) -> str:
    """A map's name or a cache's stored name (``cache/<name>``): what the store accepts."""
    if isinstance(name, str) and name.startswith(CACHE_PREFIX):
        check_name("cache", name[len(CACHE_PREFIX) :])
        return name
    return check_name("map", name)


class Store(ABC):
    """Partitioned maps with event journals, and lists; implementations must be process-safe."""

    def __init__(self, url: str) -> None:
        self.url = url

    @property
    def display_url(self) -> str:
        """The URL with any password hidden: what errors and logs may show."""
        return redact_url(self.url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.display_url!r})"

    # --- map configuration -------------------------------------------------------------------

    def map_config(self, name: str, wanted: MapConfig | None = None) -> MapConfig:
        """The stored config of map ``name``, creating it from ``wanted`` (or defaults) if new.

        Asking for a different partition count than the map has is an error: every key would
        move. A different journal capacity or TTL is ignored, as in Hazelcast after creation.
        """
        check_stored_name(name)
        config = self._load_config(name) or self._create_config(name, wanted or MapConfig())
        if wanted is not None and wanted.partitions != config.partitions:
            raise StoreError(
                f"map '{name}' in {self.display_url} has {config.partitions} partitions, "
                f"not {wanted.partitions}; a map's partition count is fixed when it is created"
            )
        return config

    @abstractmethod
    def _load_config(self, name: str) -> MapConfig | None: ...

    @abstractmethod
    def _create_config(self, name: str, config: MapConfig) -> MapConfig:
        """Store ``config`` unless another process stored one first; return the winner."""

    # --- map entries -------------------------------------------------------------------------

    @abstractmethod
    def apply(
        self, name: str, config: MapConfig, changes: Mapping[int, Sequence[Change]], progress: Progress | None = None
    ) -> bool:
        """Apply ``changes`` per partition, each partition atomically with its journal events.

        Returns False if ``progress`` shows the batch was already written (nothing applied).
        """

    @abstractmethod
    def update(
        self,
        name: str,
        config: MapConfig,
        keys: Mapping[int, Sequence[str]],
        compute: Compute,
        progress: Progress | None = None,
    ) -> bool:
        """Read-modify-write: per partition, read ``keys``, ``compute`` the changes, apply them,
        with no other write to those keys in between. Returns False as :meth:`apply` does."""

    @abstractmethod
    def get(self, name: str, partition: int, keys: Sequence[str]) -> dict[str, str]:
        """The serialised values of those ``keys`` of ``partition`` that are present."""

    @abstractmethod
    def scan(self, name: str, partition: int) -> Iterator[tuple[str, str]]:
        """Every serialised ``(key, value)`` of one partition, in no particular order."""

    @abstractmethod
    def size(self, name: str) -> int: ...

    @abstractmethod
    def clear(self, name: str, config: MapConfig) -> None:
        """Remove every entry; each partition's journal gets one CLEARED event."""

    # --- journal -----------------------------------------------------------------------------

    @abstractmethod
    def journal_bounds(self, name: str, config: MapConfig) -> list[tuple[int, int]]:
        """Per partition, ``(oldest, next)``: the oldest sequence still kept and the next one."""

    @abstractmethod
    def read_journal(self, name: str, partition: int, start: int, end: int) -> list[RawEvent]:
        """The kept events of ``partition`` with ``start <= sequence < end``, in order."""

    def read_journals(self, name: str, spans: Mapping[int, tuple[int, int]]) -> dict[int, list[RawEvent]]:
        """:meth:`read_journal` of several partitions, ``{partition: (start, end)}``; a store
        that can fetch them in one round trip does."""
        return {p: self.read_journal(name, p, start, end) for p, (start, end) in spans.items()}

    # --- lists -------------------------------------------------------------------------------

    @abstractmethod
    def list_append(self, name: str, values: Sequence[str], progress: Progress | None = None) -> bool: ...

    @abstractmethod
    def list_read(self, name: str) -> list[str]: ...

    @abstractmethod
    def list_clear(self, name: str) -> None: ...

    def close(self) -> None:
        """Release connections (the store cache closes what it opened at exit)."""


def default_url() -> str:
    """``$JETCONNECT_IMAP_STORE``, or the SQLite file ``~/.jetconnect/imap.db``.

    Not the working directory: a connector built from Spark's options resolves this default in
    every process that builds it, the driver's and each executor's, and they do not share a working
    directory; the user's home is the same for all of them on one machine.
    """
    return os.environ.get(STORE_ENV) or "sqlite:///" + os.path.join(os.path.expanduser("~"), ".jetconnect", "imap.db")


#: One store per URL and process: a forked Spark worker starts without its parent's connections.
_stores: ClientCache[str, Store] = ClientCache("imap stores", on_close=lambda store: store.close())


def open_store(url: str | None = None) -> Store:
    """The store at ``url``, one per URL per process (Spark reuses its Python workers)."""
    url = url or default_url()
    return _stores.get(url, lambda: _create(url))


def _create(url: str) -> Store:
    scheme = urlsplit(url).scheme.lower()
    if scheme == "sqlite":
        from jetconnect_imap.sqlite_store import SqliteStore

        return SqliteStore(url)
    raise StoreError(
        f"store URL {redact_url(url)!r} is not supported: use sqlite:///path/file.db (embedded) or "
        "hazelcast://host:port[,host:port...]/cluster-name (a Hazelcast cluster, through the connectors)"
    )


__all__ = [
    "CACHE_PREFIX",
    "DEFAULT_JOURNAL_CAPACITY",
    "STORE_ENV",
    "Compute",
    "MapConfig",
    "Progress",
    "RawEvent",
    "Store",
    "StoreError",
    "cache_store_name",
    "check_name",
    "check_stored_name",
    "default_url",
    "open_store",
]
