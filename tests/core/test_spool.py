"""The spool (a durable Arrow log over a FileSystem) and the receivers' lease, on the local disk."""

from __future__ import annotations

import os
import time

import pyarrow as pa
import pytest

from jetconnect._builders import _lease
from jetconnect._builders._lease import Lease
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect._spool import Spool
from jetconnect.errors import OffsetError


def _rows(*values: str) -> pa.Table:
    return pa.table({"line": list(values)})


def _read(spool: Spool, start: int, end: int) -> list[str]:
    return [v for b in spool.read(start, end) for v in b.column("line").to_pylist()]


def test_appends_read_back_exactly_across_segments_and_trim_keeps_the_end(tmp_path):
    spool = Spool(LocalFileSystem(), str(tmp_path / "s"))
    assert spool.bounds() == (0, 0)
    end = spool.append(0, _rows("a", "b"))
    end = spool.append(end, _rows("c", "d", "e"))
    assert (end, spool.bounds()) == (5, (0, 5))
    assert _read(spool, 1, 4) == ["b", "c", "d"]
    spool.trim(2)
    assert spool.bounds() == (2, 5)
    spool.trim(5)
    assert spool.bounds() == (5, 5)  # empty, but appends go on from 5, never reusing positions
    assert spool.append(5, _rows("f")) == 6


def test_a_second_writer_at_the_same_position_fails_instead_of_replacing(tmp_path):
    spool = Spool(LocalFileSystem(), str(tmp_path))
    spool.append(0, _rows("a"))
    with pytest.raises(OffsetError, match="exists already: two writers share one spool"):
        spool.append(0, _rows("b"))
    assert _read(spool, 0, 1) == ["a"]


def test_a_corrupt_short_or_missing_segment_is_an_error_naming_it(tmp_path):
    spool = Spool(LocalFileSystem(), str(tmp_path))
    spool.append(0, _rows("a", "b", "c"))
    (segment,) = tmp_path.glob("*.arrow")
    whole = segment.read_bytes()
    segment.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(OffsetError, match=f"spool segment {segment}"):
        _read(spool, 0, 3)
    # a segment that holds fewer rows than its name says: never fewer rows without an error
    short = pa.BufferOutputStream()
    with pa.ipc.new_stream(short, _rows("a").schema) as writer:
        writer.write_table(_rows("a"))
    segment.write_bytes(short.getvalue().to_pybytes())
    with pytest.raises(OffsetError, match=f"spool segment {segment} holds 1 rows, its name says 3"):
        _read(spool, 0, 3)
    with pytest.raises(OffsetError, match="rows 3..5 are missing"):
        _read(spool, 3, 5)


def test_one_lease_holder_at_a_time_and_a_stale_one_is_taken_over(tmp_path, monkeypatch):
    fs = LocalFileSystem()
    first, second = Lease(fs, str(tmp_path)), Lease(fs, str(tmp_path))
    assert first.acquire({"id": "a"})
    assert not second.acquire({"id": "b"})  # a live holder keeps it
    assert first.renew()
    monkeypatch.setattr(_lease, "STALE_S", 0.2)
    time.sleep(0.3)
    assert second.acquire({"id": "b"})  # the first stopped renewing: given up for dead
    assert not first.renew()  # and it learns it was superseded
    second.release("ConnectionResetError: gone")
    assert Lease(fs, str(tmp_path)).error() == "ConnectionResetError: gone"
    Lease(fs, str(tmp_path)).clear_error()
    assert Lease(fs, str(tmp_path)).error() is None
    assert Lease(fs, str(tmp_path)).holder() is None  # released: the next round starts a receiver
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".tmp")]


def test_the_trimmed_end_is_durable_before_the_last_segment_goes(tmp_path, monkeypatch):
    # a crash right after the unlink must not leave a spool that restarts at 0 on the next run
    spool = Spool(LocalFileSystem(), str(tmp_path))
    end = spool.append(0, _rows("a", "b"))
    (segment,) = tmp_path.glob("*.arrow")
    events = []
    fsync, unlink = os.fsync, os.unlink
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), fsync(fd))[1])
    monkeypatch.setattr(
        os, "unlink", lambda path, *a, **k: (events.append(os.path.basename(path)), unlink(path, *a, **k))[1]
    )
    spool.trim(end)
    assert events.index(segment.name) > max(i for i, e in enumerate(events) if e == "fsync")
    assert events.count("fsync") >= 2  # the marker's content, then its directory entry
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_trimmed"]  # no temporary file left
    assert Spool(LocalFileSystem(), str(tmp_path)).bounds() == (2, 2)
