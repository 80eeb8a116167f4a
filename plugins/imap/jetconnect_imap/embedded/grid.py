"""The plain Python API of the embedded store: ``connect(url).map("name")`` and ``.list("name")``,
outside Spark (a Hazelcast cluster has its own client, ``hazelcast.HazelcastClient``).

Keys and values are any JSON-serialisable Python values (plus dates, timestamps, decimals).
Every write goes through the store's atomic partition update, so the journal sees it::

    orders = connect().map("orders")  # the embedded store; on Hazelcast use its own client
    orders.put("o-1", {"qty": 2})
    orders.get("o-1")            # {'qty': 2}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from jetconnect_imap.backend import MapConfig
from jetconnect_imap.canonical_json import dumps, loads
from jetconnect_imap.embedded.names import check_name
from jetconnect_imap.embedded.serde import partition_of
from jetconnect_imap.embedded.sqlite_store import Change, SqliteStore, open_store
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import EventType, JournalEvent

_PUT_ALL_CHUNK = 10_000  # entries per store write in put_all: bounded memory, few round trips


class Grid:
    """A connection to one store, handing out maps and lists by name."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store

    def map(
        self,
        name: str,
        *,
        partitions: int | None = None,
        journal_capacity: int | None = None,
        journal_ttl: float | None = None,
    ) -> IMap:
        """The map ``name``; the layout arguments only count when the map is created."""
        check_name("map", name)  # the store also takes caches' names, 'cache/<name>': a map may not
        wanted = MapConfig.asked(partitions, journal_capacity, journal_ttl)
        return IMap(self.store, name, self.store.map_config(name, wanted))

    def list(self, name: str) -> IList:
        return IList(self.store, check_name("list", name))

    def __repr__(self) -> str:
        return f"Grid({self.store.display_url!r})"


def connect(url: str | None = None) -> Grid:
    """A :class:`Grid` on the embedded store ``url`` (default: ``$JETCONNECT_IMAP_STORE`` or
    ~/.jetconnect/imap.db). A Hazelcast cluster is reached with its own client (``hazelcast.HazelcastClient``)."""
    return Grid(open_store(url))


class IMap:
    """A partitioned map with an event journal (Hazelcast's IMap, the parts Jet uses)."""

    def __init__(self, store: SqliteStore, name: str, config: MapConfig) -> None:
        self.store, self.name, self.config = store, name, config

    def __repr__(self) -> str:
        return f"IMap({self.name!r}, {self.store.display_url!r})"

    def _partition(self, serialised_key: str) -> int:
        return partition_of(serialised_key, self.config.partitions)

    def _swap(self, key: Any, change_of: Any) -> Any:
        """Apply ``change_of(serialised_key)`` to one key atomically; return the old value."""
        k = dumps(key)
        seen: dict[str, Any] = {}

        def compute(_p: int, current: Mapping[str, str | None]) -> list[Change]:
            seen["old"] = current[k]
            return [change_of(k)]

        self.store.update(self.name, self.config, {self._partition(k): [k]}, compute)
        return loads(seen.get("old"))

    def put(self, key: Any, value: Any) -> Any:
        """Set ``key`` to ``value``; return the previous value (or None)."""
        v = dumps(value)
        return self._swap(key, lambda k: Change(k, v))

    def set(self, key: Any, value: Any) -> None:
        """Set ``key`` to ``value`` without reading the previous value (faster than :meth:`put`)."""
        k = dumps(key)
        self.store.apply(self.name, self.config, {self._partition(k): [Change(k, dumps(value))]})

    def remove(self, key: Any) -> Any:
        """Remove ``key``; return its value (or None if absent)."""
        return self._swap(key, lambda k: Change(k, None))

    def evict(self, key: Any) -> Any:
        """Remove ``key`` as an eviction (journal event EVICTED); return its value."""
        return self._swap(key, lambda k: Change(k, None, evict=True))

    def get(self, key: Any, default: Any = None) -> Any:
        k = dumps(key)
        found = self.store.get(self.name, self._partition(k), [k])
        return loads(found[k]) if k in found else default

    def put_all(self, entries: Mapping[Any, Any] | Iterable[tuple[Any, Any]]) -> None:
        """Set many entries: one atomic write per partition, few round trips."""
        items = entries.items() if isinstance(entries, Mapping) else entries
        by_partition: dict[int, list[Change]] = defaultdict(list)
        count = 0
        for key, value in items:
            k = dumps(key)
            by_partition[self._partition(k)].append(Change(k, dumps(value)))
            count += 1
            if count >= _PUT_ALL_CHUNK:
                self.store.apply(self.name, self.config, by_partition)
                by_partition, count = defaultdict(list), 0
        if by_partition:
            self.store.apply(self.name, self.config, by_partition)

    def entries(self) -> Iterator[tuple[Any, Any]]:
        """Every ``(key, value)``, partition by partition."""
        for p in range(self.config.partitions):
            for k, v in self.store.scan(self.name, p):
                yield loads(k), loads(v)

    def keys(self) -> Iterator[Any]:
        return (k for k, _ in self.entries())

    def values(self) -> Iterator[Any]:
        return (v for _, v in self.entries())

    def to_dict(self) -> dict[Any, Any]:
        """All entries as a dict (keys must be hashable: lists and dicts are not)."""
        return dict(self.entries())

    def clear(self) -> None:
        """Remove every entry; the journal of each partition gets a CLEARED event."""
        self.store.clear(self.name, self.config)

    def size(self) -> int:
        return self.store.size(self.name)

    __len__ = size

    def __contains__(self, key: Any) -> bool:
        k = dumps(key)
        return k in self.store.get(self.name, self._partition(k), [k])

    def journal(self, partition: int | None = None) -> list[JournalEvent]:
        """The events still kept in the journal (of one partition, or of all), oldest first."""
        bounds = self.store.journal_bounds(self.name, self.config)
        parts = range(self.config.partitions) if partition is None else [partition]
        return [event for p in parts for event in self.journal_range(p, *bounds[p])]

    def journal_range(self, partition: int, start: int, end: int) -> list[JournalEvent]:
        """The kept events of ``partition`` with ``start <= sequence < end``."""
        return [
            JournalEvent(partition, seq, kind, loads(key), loads(old), loads(new), ts)
            for seq, kind, key, old, new, ts in self.store.read_journal(self.name, partition, start, end)
        ]


class IList:
    """An append-only list in one partition (Jet's IList, for prototyping and small results)."""

    def __init__(self, store: SqliteStore, name: str) -> None:
        self.store, self.name = store, name

    def __repr__(self) -> str:
        return f"IList({self.name!r}, {self.store.display_url!r})"

    def add(self, value: Any) -> None:
        self.store.list_append(self.name, [dumps(value)])

    def add_all(self, values: Iterable[Any]) -> None:
        """Append each of ``values``: a collection, so a string, bytes or a mapping is refused (it
        would append its characters, bytes or keys one by one)."""
        if isinstance(values, (str, bytes, bytearray, memoryview, Mapping)):
            raise StoreError(
                f"{self!r}.add_all() takes a collection of values, got a {type(values).__name__}; use add(value)"
            )
        self.store.list_append(self.name, [dumps(v) for v in values])

    def __iter__(self) -> Iterator[Any]:
        return (loads(v) for v in self.store.list_read(self.name))

    def to_list(self) -> list[Any]:
        return list(self)

    def __len__(self) -> int:
        return len(self.store.list_read(self.name))

    def clear(self) -> None:
        self.store.list_clear(self.name)


__all__ = ["EventType", "Grid", "IList", "IMap", "JournalEvent", "connect"]
