"""The write-ahead log: atomic appends, exact reads of any range, trimming."""

from pathlib import Path

import pyarrow as pa
import pytest

from jetconnect import OffsetError, OptionError
from jetconnect.wal import WriteAheadLog


def _batch(values):
    return pa.record_batch([pa.array(values, pa.int64())], names=["v"])


def test_append_read_ranges_across_segments(tmp_path):
    wal = WriteAheadLog(tmp_path)
    assert wal.end("p") == 0
    assert wal.append("p", 0, _batch([0, 1, 2])) == 3
    assert wal.append("p", 3, _batch([3, 4])) == 5
    read = lambda s, e: [v for b in wal.read("p", s, e) for v in b.column(0).to_pylist()]
    assert read(0, 5) == [0, 1, 2, 3, 4]
    assert read(2, 4) == [2, 3]
    assert read(4, 4) == []


def test_append_must_continue_the_log(tmp_path):
    wal = WriteAheadLog(tmp_path)
    wal.append("p", 0, _batch([1]))
    with pytest.raises(OffsetError, match="ends at 1, cannot append at 0"):
        wal.append("p", 0, _batch([1]))


def test_partition_names_are_safe_path_components(tmp_path):
    wal = WriteAheadLog(tmp_path)
    wal.append("orders/3:x", 0, _batch([1]))
    assert wal.partitions() == ["orders/3:x"]


def test_trim_keeps_the_end_and_refuses_trimmed_reads(tmp_path):
    wal = WriteAheadLog(tmp_path)
    wal.append("p", 0, _batch([0, 1]))
    wal.append("p", 2, _batch([2]))
    wal.trim("p", 3)
    assert wal.end("p") == 3 and wal.start("p") == 3
    assert wal.append("p", 3, _batch([3])) == 4
    with pytest.raises(OffsetError, match="has no records 0..3"):
        list(wal.read("p", 0, 3))


def test_a_relative_wal_location_is_refused_naming_the_option(tmp_path):
    # executors and a Connect server do not share the driver's working directory
    with pytest.raises(OptionError, match=r"option 'wal_location': 'wal' is a relative path"):
        WriteAheadLog("wal")
    assert WriteAheadLog(f"file://{tmp_path}/wal").directory == tmp_path / "wal"


def test_trimming_the_last_segment_records_the_end_before_deleting_it(tmp_path, monkeypatch):
    # another thread asking end() between the two steps must never see an empty log
    wal = WriteAheadLog(tmp_path)
    end = wal.append("p", 0, pa.RecordBatch.from_pydict({"v": [1, 2, 3]}))
    seen = []
    unlink = Path.unlink

    def watching_unlink(self, *args, **kwargs):
        unlink(self, *args, **kwargs)
        seen.append(wal.end("p"))  # what a reader sees right after the segment is gone

    monkeypatch.setattr(Path, "unlink", watching_unlink)
    wal.trim("p", end)
    assert seen == [end]
    assert wal.end("p") == end and wal.start("p") == end


def test_the_trimmed_marker_is_durable_before_the_last_segment_goes(tmp_path, monkeypatch):
    # a crash right after the unlink must not leave a log that restarts at 0 on the next run
    import os

    wal = WriteAheadLog(tmp_path)
    end = wal.append("p", 0, _batch([1, 2]))
    events = []
    fsync, unlink = os.fsync, Path.unlink
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), fsync(fd))[1])
    monkeypatch.setattr(Path, "unlink", lambda self, *a, **k: (events.append("unlink"), unlink(self, *a, **k))[1])
    wal.trim("p", end)
    assert events == ["fsync", "fsync", "unlink"]  # the marker's content, then its directory entry
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == ["trimmed"]  # no temporary file left
