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
