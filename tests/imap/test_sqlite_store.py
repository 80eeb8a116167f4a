"""The embedded SQLite store: opened by many workers at once, and its journal of chunks."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from jetconnect_imap.backend import MapConfig
from jetconnect_imap.canonical_json import dumps, loads
from jetconnect_imap.embedded.sqlite_store import Change, SqliteStore
from jetconnect_imap.events import EventType


def _open_and_close(url: str) -> None:
    SqliteStore(url).close()


def test_many_processes_open_a_new_file_together(tmp_path: Path) -> None:
    # Spark starts several Python workers that open the same new file in the same instant;
    # switching it to WAL must wait for the others rather than fail with "database is locked".
    for round_ in range(10):
        url = f"sqlite:///{tmp_path}/store{round_}.db"
        ctx = multiprocessing.get_context("fork")
        workers = [ctx.Process(target=_open_and_close, args=(url,)) for _ in range(16)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert [w.exitcode for w in workers] == [0] * 16
        store = SqliteStore(url)
        assert store._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        store.close()


def test_a_forked_worker_opens_its_own_store_and_writes_through_it(tmp_path: Path) -> None:
    # Spark forks its Python workers from a daemon: a child that used its parent's connection
    # would share its file handle (or, on Redis, its socket). open_store keeps one per process.
    from jetconnect_imap import connect
    from jetconnect_imap.embedded.sqlite_store import open_store

    url = f"sqlite:///{tmp_path}/fork.db"
    parent = open_store(url)
    assert open_store(url) is parent
    connect(url).map("forked", partitions=2).put("before", 1)
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_put_in_a_fresh_store, args=(url, id(parent)))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert connect(url).map("forked").to_dict() == {"before": 1, "child": 2}
    assert open_store(url) is parent  # the parent keeps its own


def _put_in_a_fresh_store(url: str, parent_id: int) -> None:
    from jetconnect_imap import connect
    from jetconnect_imap.embedded.sqlite_store import open_store

    if id(open_store(url)) == parent_id:
        raise SystemExit(3)
    connect(url).map("forked").put("child", 2)


# --- the journal's chunks: one row per write and partition ------------------------------------


def _put_all(store: SqliteStore, name: str, config: MapConfig, keys: list[str]) -> None:
    """One write putting ``keys`` (as JSON strings) into partition 0, one event each."""
    store.apply(name, config, {0: [Change(dumps(k), dumps(k.upper())) for k in keys]})


def _seqs(store: SqliteStore, name: str, start: int, end: int) -> list[tuple[int, str]]:
    return [(seq, loads(key)) for seq, _kind, key, _old, _new, _ts in store.read_journal(name, 0, start, end)]


def test_the_ring_cuts_a_chunk_and_keeps_its_newer_events(tmp_path: Path) -> None:
    store = SqliteStore(f"sqlite:///{tmp_path}/j.db")
    config = store.map_config("m", MapConfig(partitions=1, journal_capacity=5))
    _put_all(store, "m", config, ["a", "b", "c", "d"])  # seq 0-3, one chunk
    _put_all(store, "m", config, ["e", "f", "g"])  # seq 4-6: the ring keeps 2-6
    assert store.journal_bounds("m", config) == [(2, 7)]
    assert _seqs(store, "m", 0, 7) == [(2, "c"), (3, "d"), (4, "e"), (5, "f"), (6, "g")]
    assert _seqs(store, "m", 3, 5) == [(3, "d"), (4, "e")]  # a range across the two chunks
    assert _seqs(store, "m", 5, 6) == [(5, "f")]  # a range inside one
    assert _seqs(store, "m", 7, 9) == []
    _put_all(store, "m", config, ["h", "i", "j", "k", "l", "m", "n"])  # more than the ring at once
    assert store.journal_bounds("m", config) == [(9, 14)]
    assert _seqs(store, "m", 0, 14) == [(9, "j"), (10, "k"), (11, "l"), (12, "m"), (13, "n")]
    assert store._conn.execute("SELECT count(*) FROM journal_chunks").fetchone()[0] == 1


def test_expired_chunks_leave_the_journal(tmp_path: Path) -> None:
    store = SqliteStore(f"sqlite:///{tmp_path}/j.db")
    config = store.map_config("m", MapConfig(partitions=1, journal_capacity=100, journal_ttl=0.2))
    _put_all(store, "m", config, ["a", "b"])
    time.sleep(0.3)
    _put_all(store, "m", config, ["c"])
    assert store.journal_bounds("m", config) == [(2, 3)]
    assert _seqs(store, "m", 0, 3) == [(2, "c")]


def test_a_first_write_that_puts_a_key_twice_or_removes_one_gets_every_event(tmp_path: Path) -> None:
    # A write to an empty partition whose keys are all new and distinct takes a shorter path
    # (every event ADDED); a key put twice or a removal in that write must still take the long one.
    store = SqliteStore(f"sqlite:///{tmp_path}/j.db")
    config = store.map_config("m", MapConfig(partitions=1, journal_capacity=100))
    a, b, c = dumps("a"), dumps("b"), dumps("c")
    store.apply("m", config, {0: [Change(a, "1"), Change(a, "2"), Change(b, None), Change(c, "3")]})
    store.apply("m", config, {0: [Change(c, None, evict=True), Change(b, "4")]})
    events = [(e[1], loads(e[2]), e[3], e[4]) for e in store.read_journal("m", 0, 0, 10)]
    assert events == [
        (EventType.ADDED, "a", None, "1"),
        (EventType.UPDATED, "a", "1", "2"),
        (EventType.ADDED, "c", None, "3"),
        (EventType.EVICTED, "c", "3", None),
        (EventType.ADDED, "b", None, "4"),
    ]
    assert dict(store.scan("m", 0)) == {a: "2", b: "4"}
