"""The embedded store: one SQLite file in WAL mode, no server (``sqlite:///abs/path.db``).

jetconnect's own imitation of Hazelcast's structures, for notebooks, demos and tests without a
server: per map, 271 (by default) partitions of serialised entries (:mod:`.serde`) and, per
partition, a ring of journal events with consecutive sequence numbers. Every write of one
partition updates the entries and the journal in one transaction, and may carry a
:class:`~jetconnect_imap.backend.Progress` record: a writer's batch that the store has already
recorded is skipped, atomically with the data, which is what makes a re-delivered Spark
micro-batch harmless.

Several processes (Spark's Python workers) may write at once: each write is one ``BEGIN
IMMEDIATE`` transaction (entries, journal events and the progress record together), and a
writer that finds the file locked waits (``busy_timeout``) rather than failing. WAL with
``synchronous=NORMAL`` survives a killed process; only an OS crash can lose the last commits.

The journal keeps the events one write makes in one partition as one row, a *chunk*: their
types, keys and values as one JSON array, their first and end sequence and their one timestamp.
A write of 100,000 puts adds 271 rows rather than 100,000, and a read decodes 271 arrays. The
ring drops whole chunks and records in ``kept_from`` where a chunk it cut now starts.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from jetconnect.api import Backoff, ClientCache, RetriesExhausted, redact_url, retry_call
from jetconnect_imap.backend import MapConfig, Progress
from jetconnect_imap.embedded.names import check_name, check_stored_name, default_url
from jetconnect_imap.errors import StoreError
from jetconnect_imap.events import EventType, RawEvent


class Change(NamedTuple):
    """A change to apply to one entry: put ``value`` (serialised), or remove it when None.

    ``evict`` marks a removal as an eviction (journal type EVICTED instead of REMOVED). A named
    tuple rather than a dataclass: a sink makes one per row, and a tuple is made in half the time.
    """

    key: str
    value: str | None
    evict: bool = False


#: ``compute(partition, current)`` gets the current serialised values of the requested keys
#: (None for absent ones) and returns the changes to apply to that partition.
Compute = Callable[[int, Mapping[str, "str | None"]], Sequence[Change]]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS maps (
    name TEXT PRIMARY KEY, partitions INTEGER NOT NULL,
    journal_capacity INTEGER NOT NULL, journal_ttl REAL NOT NULL, incarnation TEXT);
CREATE TABLE IF NOT EXISTS entries (
    map TEXT NOT NULL, partition INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (map, partition, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal_chunks (
    map TEXT NOT NULL, partition INTEGER NOT NULL, first_seq INTEGER NOT NULL, end_seq INTEGER NOT NULL,
    kept_from INTEGER NOT NULL, ts INTEGER NOT NULL, events TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS journal_chunks_by_seq ON journal_chunks (map, partition, first_seq);
CREATE TABLE IF NOT EXISTS journal_heads (
    map TEXT NOT NULL, partition INTEGER NOT NULL, next_seq INTEGER NOT NULL,
    PRIMARY KEY (map, partition)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS progress (
    owner TEXT NOT NULL, writer TEXT NOT NULL, batch INTEGER NOT NULL,
    PRIMARY KEY (owner, writer)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS list_items (
    list TEXT NOT NULL, idx INTEGER NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (list, idx)) WITHOUT ROWID;
"""
_CHUNK = 500  # keys per "IN (...)" query, well under SQLite's variable limit


class SqliteStore:
    """Maps, journals and lists in one SQLite file (``sqlite:///absolute/path.db``); process-safe."""

    def __init__(self, url: str, busy_timeout_s: float = 120.0) -> None:
        self.url = url
        parts = urlsplit(url)
        if parts.scheme.lower() != "sqlite":
            raise StoreError(
                f"store URL {redact_url(url)!r} is not supported: use sqlite:///path/file.db (embedded) or "
                "hazelcast://host:port[,host:port...]/cluster-name (a Hazelcast cluster, through the connectors)"
            )
        path = unquote(parts.path)
        if not path or path == "/":
            raise StoreError(f"store URL {redact_url(url)!r} names no file; use sqlite:///absolute/path.db")
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        # isolation_level=None: we issue BEGIN IMMEDIATE ourselves, so that a read-modify-write
        # holds the write lock from its first read (a deferred transaction could deadlock).
        self._conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False)
        self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        self._enter_wal_mode(busy_timeout_s)
        self._conn.execute("PRAGMA synchronous = NORMAL")
        # One script, one transaction: several workers may create the tables at the same time.
        self._conn.executescript(f"BEGIN IMMEDIATE; {_SCHEMA} COMMIT;")
        self._add_incarnations()

    @property
    def display_url(self) -> str:
        """The URL with any password hidden: what errors and logs may show."""
        return redact_url(self.url)

    def __repr__(self) -> str:
        return f"SqliteStore({self.display_url!r})"

    def _enter_wal_mode(self, busy_timeout_s: float) -> None:
        """Switch the file to WAL once; it stays so. SQLite answers "database is locked" at once,
        without its busy handler, when workers open a new file together, so we retry here."""

        def switch() -> None:
            if self._conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                self._conn.execute("PRAGMA journal_mode = WAL")

        try:
            retry_call(
                switch,
                retry_on=(sqlite3.OperationalError,),
                retry_if=lambda e: "locked" in str(e),
                what=f"switching {self.path} to WAL mode",
                backoff=Backoff(initial=0.01, maximum=0.2, deadline=busy_timeout_s),
                on_retry=lambda _exc, _delay: None,
            )  # waiting for the other workers is normal
        except (RetriesExhausted, sqlite3.OperationalError) as exc:
            raise StoreError(f"cannot open {self.path} in WAL mode: {exc}") from exc

    def _add_incarnations(self) -> None:
        """Give the ``maps`` table of a file written before maps had an incarnation its column
        (its maps get theirs when a journal source first asks: :meth:`map_incarnation`)."""
        if any(row[1] == "incarnation" for row in self._conn.execute("PRAGMA table_info(maps)")):
            return  # a file of this version: no write lock taken
        with self._write() as db:
            columns = {row[1] for row in db.execute("PRAGMA table_info(maps)")}
            if "incarnation" not in columns:
                db.execute("ALTER TABLE maps ADD COLUMN incarnation TEXT")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # --- config ------------------------------------------------------------------------------

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

    def _load_config(self, name: str) -> MapConfig | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT partitions, journal_capacity, journal_ttl FROM maps WHERE name = ?", (name,)
            ).fetchone()
        return MapConfig(*row) if row else None

    def _create_config(self, name: str, config: MapConfig) -> MapConfig:
        """Store ``config`` unless another process stored one first; return the winner."""
        with self._write() as db:
            db.execute(
                "INSERT OR IGNORE INTO maps VALUES (?, ?, ?, ?, ?)",
                (name, config.partitions, config.journal_capacity, config.journal_ttl, uuid.uuid4().hex),
            )
            row = db.execute(
                "SELECT partitions, journal_capacity, journal_ttl FROM maps WHERE name = ?", (name,)
            ).fetchone()
        return MapConfig(*row)

    def map_incarnation(self, name: str) -> str:
        """The map's incarnation: a random id made with the map (or, in a file written before
        maps had one, the first time it is asked), which a new file or a map made again under
        the same name does not share. A journal source keeps it in its offset."""
        self.map_config(name)
        with self._lock:
            row = self._conn.execute("SELECT incarnation FROM maps WHERE name = ?", (name,)).fetchone()
        if row[0] is not None:
            return str(row[0])
        with self._write() as db:  # the first process to ask gives it; the others read the winner's
            db.execute(
                "UPDATE maps SET incarnation = ? WHERE name = ? AND incarnation IS NULL", (uuid.uuid4().hex, name)
            )
            return str(db.execute("SELECT incarnation FROM maps WHERE name = ?", (name,)).fetchone()[0])

    # --- entries -----------------------------------------------------------------------------

    def apply(
        self, name: str, config: MapConfig, changes: Mapping[int, Sequence[Change]], progress: Progress | None = None
    ) -> bool:
        """Apply ``changes`` per partition, each partition atomically with its journal events.

        Returns False if ``progress`` shows the batch was already written (nothing applied).
        """
        keys = {p: [c.key for c in cs] for p, cs in changes.items()}
        return self._write_changes(name, config, keys, lambda p, _found: changes[p], progress)

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
        return self._write_changes(
            name, config, keys, lambda p, found: compute(p, {k: found.get(k) for k in keys[p]}), progress
        )

    def _write_changes(
        self,
        name: str,
        config: MapConfig,
        keys: Mapping[int, Sequence[str]],
        changes_of: Callable[[int, dict[str, str]], Sequence[Change]],
        progress: Progress | None,
    ) -> bool:
        """Read the entries of ``keys``, and write what ``changes_of(partition, found)`` makes of
        them with their events, in one transaction (skipped if ``progress`` was recorded)."""
        now = int(time.time() * 1000)
        with self._write() as db:
            if progress is not None and not _claim(db, f"map:{name}", progress):
                return False
            # Every partition's changes are gathered first and written with one statement per
            # kind of row: a chunk touches all 271 partitions, and a statement per partition
            # and kind cost more than the rows themselves.
            batch = _WriteBatch(name, config, now, _heads(db, name) if config.partition_capacity else {})
            for partition, partition_keys in keys.items():
                found = _select(db, name, partition, partition_keys)
                batch.add(partition, found, changes_of(partition, found))
            batch.write(db)
        return True

    def get(self, name: str, partition: int, keys: Sequence[str]) -> dict[str, str]:
        """The serialised values of those ``keys`` of ``partition`` that are present."""
        with self._lock:
            return _select(self._conn, name, partition, keys)

    def scan(self, name: str, partition: int) -> Iterator[tuple[str, str]]:
        """Every serialised ``(key, value)`` of one partition, in no particular order."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT key, value FROM entries WHERE map = ? AND partition = ?", (name, partition)
            ).fetchall()
        return iter(rows)

    def size(self, name: str) -> int:
        with self._lock:
            return self._conn.execute("SELECT count(*) FROM entries WHERE map = ?", (name,)).fetchone()[0]

    def clear(self, name: str, config: MapConfig) -> None:
        """Remove every entry; each partition's journal gets one CLEARED event."""
        now = int(time.time() * 1000)
        with self._write() as db:
            db.execute("DELETE FROM entries WHERE map = ?", (name,))
            batch = _WriteBatch(name, config, now, _heads(db, name) if config.partition_capacity else {})
            for partition in range(config.partitions):
                batch.journal(partition, [("CLEARED", None, None, None)])
            batch.write(db)

    # --- journal -----------------------------------------------------------------------------

    def journal_bounds(self, name: str, config: MapConfig) -> list[tuple[int, int]]:
        """Per partition, ``(oldest, next)``: the oldest sequence still kept and the next one."""
        with self._lock:
            heads = dict(self._conn.execute("SELECT partition, next_seq FROM journal_heads WHERE map = ?", (name,)))
            oldest = dict(
                self._conn.execute(
                    "SELECT partition, min(kept_from) FROM journal_chunks WHERE map = ? GROUP BY partition", (name,)
                )
            )
        out = []
        for p in range(config.partitions):
            nxt = heads.get(p, 0)
            out.append((oldest.get(p, nxt), nxt))
        return out

    def read_journal(self, name: str, partition: int, start: int, end: int) -> list[RawEvent]:
        """The kept events of ``partition`` with ``start <= sequence < end``, in order."""
        with self._lock:
            # The chunks that hold [start, end): the last one starting at or before `start`, and
            # every later one starting before `end` (the index finds both).
            chunks = self._conn.execute(
                "SELECT first_seq, kept_from, ts, events FROM journal_chunks WHERE map = ?1 AND partition = ?2 "
                "AND first_seq < ?4 AND first_seq >= coalesce((SELECT max(first_seq) FROM journal_chunks "
                "WHERE map = ?1 AND partition = ?2 AND first_seq <= ?3), 0) ORDER BY first_seq",
                (name, partition, start, end),
            ).fetchall()
        out: list[RawEvent] = []
        kind_of = _EVENT_TYPES
        for first, kept_from, ts, events in chunks:
            lo = max(start, kept_from, first)
            out.extend(
                (seq, kind_of[kind], key, old, new, ts)
                for seq, (kind, key, old, new) in enumerate(json.loads(events)[lo - first : end - first], start=lo)
            )
        return out

    # --- lists -------------------------------------------------------------------------------

    def list_append(self, name: str, values: Sequence[str], progress: Progress | None = None) -> bool:
        check_name("list", name)
        with self._write() as db:
            if progress is not None and not _claim(db, f"list:{name}", progress):
                return False
            start = db.execute("SELECT coalesce(max(idx) + 1, 0) FROM list_items WHERE list = ?", (name,)).fetchone()[0]
            db.executemany(
                "INSERT INTO list_items VALUES (?, ?, ?)", [(name, start + i, v) for i, v in enumerate(values)]
            )
        return True

    def list_read(self, name: str) -> list[str]:
        with self._lock:
            return [
                v for (v,) in self._conn.execute("SELECT value FROM list_items WHERE list = ? ORDER BY idx", (name,))
            ]

    def list_clear(self, name: str) -> None:
        with self._write() as db:
            db.execute("DELETE FROM list_items WHERE list = ?", (name,))


def _claim(db: sqlite3.Connection, owner: str, progress: Progress) -> bool:
    """Record ``progress`` unless the writer already got that far (then the batch is a replay)."""
    row = db.execute("SELECT batch FROM progress WHERE owner = ? AND writer = ?", (owner, progress.writer)).fetchone()
    if row is not None and row[0] >= progress.batch:
        return False
    db.execute("INSERT OR REPLACE INTO progress VALUES (?, ?, ?)", (owner, progress.writer, progress.batch))
    return True


def _select(db: sqlite3.Connection, name: str, partition: int, keys: Sequence[str]) -> dict[str, str]:
    unique = list(dict.fromkeys(keys))
    found: dict[str, str] = {}
    for i in range(0, len(unique), _CHUNK):
        chunk = unique[i : i + _CHUNK]
        marks = ",".join("?" * len(chunk))
        found.update(
            db.execute(
                f"SELECT key, value FROM entries WHERE map = ? AND partition = ? AND key IN ({marks})",
                (name, partition, *chunk),
            ).fetchall()
        )
    return found


#: A chunk's events as compact JSON (the events hold only strings and None: no cycle to look for).
_encode_events = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode

#: Event types by their stored names (a dict lookup costs less than the enum's call).
_EVENT_TYPES = {kind.value: kind for kind in EventType}


def _heads(db: sqlite3.Connection, name: str) -> dict[int, int]:
    """The next journal sequence of every partition of map ``name`` that has one (one query)."""
    return dict(db.execute("SELECT partition, next_seq FROM journal_heads WHERE map = ?", (name,)))


class _WriteBatch:
    """The rows one write makes in every partition it touches, written with one statement each.

    Per partition, the events follow the changes in order (ADDED or UPDATED against what the
    entry held before, including earlier changes of the same write), the journal ring keeps
    only its last ``partition_capacity`` events, and expired ones go when it is written.
    """

    def __init__(self, name: str, config: MapConfig, now: int, heads: dict[int, int]) -> None:
        self.name, self.config, self.now, self.heads = name, config, now, heads
        self.upserts: list[tuple[str, int, str, str]] = []
        self.deletes: list[tuple[str, int, str]] = []
        self.chunks: list[tuple[Any, ...]] = []
        self.new_heads: list[tuple[str, int, int]] = []
        self.trims: list[tuple[str, int, int]] = []
        self.expiries: list[tuple[str, int, int]] = []

    def add(self, partition: int, current: dict[str, str], changes: Sequence[Change]) -> None:
        """Queue ``changes`` to ``partition`` whose entries hold ``current``, and their events."""
        name = self.name
        if not current:
            # Most writes put keys the partition does not hold yet, once each: then every change
            # is an ADDED event, and the loop below would only confirm it, change by change.
            added = {key: value for key, value, _evict in changes if value is not None}
            if len(added) == len(changes):  # no removal, no key twice
                self.upserts.extend([(name, partition, key, value) for key, value in added.items()])
                self.journal(partition, [("ADDED", key, None, value) for key, value in added.items()])
                return
        events: list[tuple[str, str | None, str | None, str | None]] = []
        final: dict[str, str | None] = {}
        stored = current.get
        for key, value, evict in changes:
            old = final[key] if key in final else stored(key)
            if value is not None:
                events.append(("UPDATED" if old is not None else "ADDED", key, old, value))
            elif old is not None:
                events.append(("EVICTED" if evict else "REMOVED", key, old, None))
            final[key] = value
        for key, value in final.items():
            if value is not None:
                self.upserts.append((name, partition, key, value))
            elif key in current:
                self.deletes.append((name, partition, key))
        self.journal(partition, events)

    def journal(self, partition: int, events: list[tuple[str, str | None, str | None, str | None]]) -> None:
        """Queue ``events`` as one chunk of the partition's ring, and the removal of what
        overflowed or expired."""
        capacity = self.config.partition_capacity
        if not capacity or not events:
            return
        first = self.heads.get(partition, 0)
        nxt = first + len(events)
        self.heads[partition] = nxt
        name, now = self.name, self.now
        # Only the last `capacity` events can survive, so older ones of this write are not written.
        skip = max(0, len(events) - capacity)
        self.chunks.append((name, partition, first + skip, nxt, first + skip, now, _encode_events(events[skip:])))
        self.new_heads.append((name, partition, nxt))
        if nxt > capacity:
            self.trims.append((name, partition, nxt - capacity))
        if self.config.journal_ttl:
            self.expiries.append((name, partition, now - int(self.config.journal_ttl * 1000)))

    def write(self, db: sqlite3.Connection) -> None:
        db.executemany(
            "INSERT INTO entries VALUES (?, ?, ?, ?) ON CONFLICT (map, partition, key) DO UPDATE SET value = excluded.value",
            self.upserts,
        )
        db.executemany("DELETE FROM entries WHERE map = ? AND partition = ? AND key = ?", self.deletes)
        db.executemany("INSERT INTO journal_chunks VALUES (?, ?, ?, ?, ?, ?, ?)", self.chunks)
        db.executemany("INSERT OR REPLACE INTO journal_heads VALUES (?, ?, ?)", self.new_heads)
        # The ring keeps sequences from `kept`: chunks wholly older go, one cut in two keeps its newer part.
        db.executemany(
            "DELETE FROM journal_chunks WHERE map = ?1 AND partition = ?2 AND first_seq < ?3 AND end_seq <= ?3",
            self.trims,
        )
        db.executemany(
            "UPDATE journal_chunks SET kept_from = ?3 WHERE map = ?1 AND partition = ?2 AND first_seq < ?3 "
            "AND kept_from < ?3",
            self.trims,
        )
        db.executemany("DELETE FROM journal_chunks WHERE map = ? AND partition = ? AND ts < ?", self.expiries)


#: One store per URL and process: a forked Spark worker starts without its parent's connections.
_stores: ClientCache[str, SqliteStore] = ClientCache("imap stores", on_close=lambda store: store.close())


def open_store(url: str | None = None) -> SqliteStore:
    """The store at ``url`` (default :func:`~jetconnect_imap.embedded.names.default_url`), one per
    URL per process (Spark reuses its Python workers)."""
    url = url or default_url()
    return _stores.get(url, lambda: SqliteStore(url))


__all__ = ["Change", "Compute", "SqliteStore", "open_store"]
