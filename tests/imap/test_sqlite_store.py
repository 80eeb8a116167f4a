"""The embedded SQLite store opened by many workers at once."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from jetconnect_imap.sqlite_store import SqliteStore


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
    from jetconnect_imap.store import open_store

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
    from jetconnect_imap.store import open_store

    if id(open_store(url)) == parent_id:
        raise SystemExit(3)
    connect(url).map("forked").put("child", 2)
