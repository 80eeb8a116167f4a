"""The file watcher's offsets: complete lines only, exact replay, admission control, clean end."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jetconnect.errors import OffsetError, SourceError
from jetconnect.filesystem import LocalFileSystem
from jetconnect_files.watcher import FileWatcherSource


def _read(source: FileWatcherSource, start: dict, end: dict) -> list[str]:
    lines = []
    for range_ in source.ranges(start, end):
        for batch in source.read_range(range_):
            lines += pa.Table.from_batches([batch]).column("value").to_pylist()
    return lines


def test_new_files_and_appended_complete_lines(tmp_path) -> None:
    (tmp_path / "old.log").write_text("before start\n")
    source = FileWatcherSource(LocalFileSystem(), str(tmp_path))
    start = source.initial_offset()
    assert start == {"old.log": 13}
    assert source.latest_offset(start, None) == start
    with open(tmp_path / "old.log", "a") as f:
        f.write("one\ntwo\nhalf")
    (tmp_path / "new.log").write_text("n1\n")
    (tmp_path / ".hidden").write_text("never\n")
    end = source.latest_offset(start, None)
    assert end == {"new.log": 3, "old.log": 21}
    assert sorted(_read(source, start, end)) == ["n1", "one", "two"]
    with open(tmp_path / "old.log", "a") as f:
        f.write("-line\n")
    later = source.latest_offset(end, None)
    assert _read(source, end, later) == ["half-line"]
    # replay of an old range gives the same lines
    assert sorted(_read(source, start, end)) == ["n1", "one", "two"]


def test_read_existing_and_max_records(tmp_path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"a{i}\n" for i in range(10)))
    (tmp_path / "b.txt").write_text("".join(f"b{i}\n" for i in range(10)))
    source = FileWatcherSource(LocalFileSystem(), str(tmp_path), read_existing=True)
    offset = source.initial_offset()
    seen = []
    while (end := source.latest_offset(offset, 7)) != offset:
        batch = _read(source, offset, end)
        assert len(batch) <= 7
        seen += batch
        offset = end
    assert sorted(seen) == sorted([f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)])


def test_big_growth_is_cut_into_several_ranges(tmp_path) -> None:
    lines = [f"line {i} " + "x" * (i % 17) for i in range(2000)]
    (tmp_path / "f").write_text("\n".join(lines) + "\n")
    source = FileWatcherSource(LocalFileSystem(), str(tmp_path), read_existing=True, max_split_bytes=1000)
    end = source.latest_offset({}, None)
    assert len(source.ranges({}, end)) > 10
    assert _read(source, {}, end) == lines


def test_truncated_file_is_an_error_naming_it(tmp_path) -> None:
    (tmp_path / "f").write_text("short\n")
    source = FileWatcherSource(LocalFileSystem(), str(tmp_path))
    with pytest.raises(OffsetError, match=r"'.*/f' is 6 bytes, shorter than its checkpointed position 100"):
        source.latest_offset({"f": 100}, None)


def test_missing_directory_at_start_is_an_error(tmp_path) -> None:
    with pytest.raises(SourceError, match=r"directory '.*/nope' does not exist"):
        FileWatcherSource(LocalFileSystem(), str(tmp_path / "nope")).initial_offset()


def test_deleted_directory_ends_the_stream_cleanly(tmp_path) -> None:
    watched = tmp_path / "in"
    watched.mkdir()
    (watched / "f").write_text("a\nb\n")
    source = FileWatcherSource(LocalFileSystem(), str(watched), read_existing=True)
    end = source.latest_offset({}, None)
    (watched / "f").unlink()
    watched.rmdir()
    assert source.latest_offset(end, None) == end
    assert _read(source, {}, end) == []


def test_file_name_column(tmp_path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    source = FileWatcherSource(LocalFileSystem(), str(tmp_path), read_existing=True, include_file_name=True)
    batch = next(source.read_range(source.ranges({}, source.latest_offset({}, None))[0]))
    assert batch.to_pylist() == [{"value": "x", "file_name": "f.txt"}]
    assert [f.name for f in source.schema().fields] == ["value", "file_name"]
