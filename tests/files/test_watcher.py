"""The file watcher's offsets: complete lines only, exact replay, admission control, a deleted directory."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest

from jetconnect import sources
from jetconnect._connector import Range
from jetconnect._files.filesystem import LocalFileSystem
from jetconnect.errors import OffsetError, OptionError, SourceError
from jetconnect.files_family import GrowingLinesSource


def _read(source: GrowingLinesSource, start: dict, end: dict) -> list[str]:
    lines = []
    for range_ in source.ranges(start, end):
        for batch in source.read_range(range_):
            lines += pa.Table.from_batches([batch]).column("value").to_pylist()
    return lines


def test_new_files_and_appended_complete_lines(tmp_path) -> None:
    (tmp_path / "old.log").write_text("before start\n")
    source = GrowingLinesSource(LocalFileSystem(), str(tmp_path))
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
    source = GrowingLinesSource(LocalFileSystem(), str(tmp_path), read_existing=True)
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
    source = GrowingLinesSource(LocalFileSystem(), str(tmp_path), read_existing=True, max_split_bytes=1000)
    end = source.latest_offset({}, None)
    assert len(source.ranges({}, end)) > 10
    assert _read(source, {}, end) == lines


def test_truncated_file_is_an_error_naming_it(tmp_path) -> None:
    (tmp_path / "f").write_text("short\n")
    source = GrowingLinesSource(LocalFileSystem(), str(tmp_path))
    with pytest.raises(OffsetError, match=r"'.*/f' is 6 bytes, shorter than its checkpointed position 100"):
        source.latest_offset({"f": 100}, None)


def test_missing_directory_at_start_is_an_error(tmp_path) -> None:
    with pytest.raises(SourceError, match=r"directory '.*/nope' does not exist"):
        GrowingLinesSource(LocalFileSystem(), str(tmp_path / "nope")).initial_offset()


def test_a_deleted_directory_fails_naming_it_never_idles(tmp_path) -> None:
    watched = tmp_path / "in"
    watched.mkdir()
    (watched / "f").write_text("a\nb\n")
    source = GrowingLinesSource(LocalFileSystem(), str(watched), read_existing=True)
    end = source.latest_offset({}, None)
    (watched / "f").unlink()
    watched.rmdir()
    with pytest.raises(SourceError, match=r"watched directory '.*/in' was deleted or moved, so no new lines"):
        source.latest_offset(end, None)
    with pytest.raises(SourceError, match=r"watched directory '.*/in' was deleted or moved, so the lines \[0, 4\) of"):
        _read(source, {}, end)


def test_file_name_column(tmp_path) -> None:
    (tmp_path / "f.txt").write_text("x\n")
    source = GrowingLinesSource(LocalFileSystem(), str(tmp_path), read_existing=True, path_column="file_name")
    batch = next(source.read_range(source.ranges({}, source.latest_offset({}, None))[0]))
    assert batch.to_pylist() == [{"value": "x", "file_name": "f.txt"}]
    assert [f.name for f in source.schema().fields] == ["value", "file_name"]


@pytest.mark.parametrize("value", [0, -1, "x", 1.5, True, None])
def test_a_split_size_that_is_not_a_positive_count_is_an_option_error(tmp_path, value) -> None:
    # 0 and -1 once planned no range at all while the offset moved past the lines: silent loss.
    with pytest.raises(OptionError, match=r"file_watcher: option 'max_split_bytes'"):
        sources.file_watcher(directory=str(tmp_path), max_split_bytes=value)


def test_no_plan_moves_an_offset_past_bytes_it_does_not_read(tmp_path) -> None:
    lines = [f"line {i}" for i in range(300)]
    (tmp_path / "f").write_text("\n".join(lines) + "\n")
    for split in (1, 7, 100, 1 << 20):
        source = sources.file_watcher(directory=str(tmp_path), read_existing=True, max_split_bytes=split)
        end = source.latest_offset({}, None)
        ranges = source.ranges({}, end)
        assert sum(r.end - r.start for r in ranges) == end["f"]
        assert _read(source, {}, end) == lines
    source.max_split_bytes = -1  # what the option check now refuses: the guard still stops the plan
    with pytest.raises(SourceError, match="planned 0 bytes of the"):
        source.ranges({}, end)


OUTSIDE = ["../outside.txt", "../../etc/passwd", "/etc/passwd", "sub/../../outside.txt", "./f", "", "a//b", "f\x00"]


@pytest.mark.parametrize("entry", OUTSIDE)
def test_an_offset_entry_outside_the_directory_is_an_offset_error(tmp_path, entry: str) -> None:
    watched = tmp_path / "in"
    watched.mkdir()
    (watched / "f").write_text("mine\n")
    (tmp_path / "outside.txt").write_text("not yours\n")
    source = sources.file_watcher(directory=str(watched))
    edited = {"f": 5, entry: 10}  # what a hand-edited checkpoint/offsets/N could say
    message = (
        rf"offset entry {re.escape(repr(entry))} (does not name|names) a file (inside|outside) the watched directory"
    )
    with pytest.raises(OffsetError, match=message):
        source.latest_offset(edited, None)
    with pytest.raises(OffsetError, match=message):
        source.ranges({"f": 5}, edited)
    with pytest.raises(OffsetError, match=message):  # the executor checks too, before opening anything
        list(source.read_range(Range(entry, 0, 10)))


def test_a_symlink_out_of_the_directory_is_refused(tmp_path) -> None:
    watched, elsewhere = tmp_path / "in", tmp_path / "elsewhere"
    watched.mkdir()
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("not yours\n")
    (watched / "f").write_text("mine\n")
    (watched / "dir-link").symlink_to(elsewhere, target_is_directory=True)
    source = sources.file_watcher(directory=str(watched), read_existing=True, recursive=True)
    assert source.latest_offset({}, None) == {"f": 5}  # a linked directory is not descended into
    edited = {"f": 5, "dir-link/secret.txt": 10}
    with pytest.raises(OffsetError, match=r"offset entry 'dir-link/secret.txt' names a file outside"):
        source.ranges({"f": 5}, edited)
    with pytest.raises(OffsetError, match=r"offset entry 'dir-link/secret.txt' names a file outside"):
        list(source.read_range(Range("dir-link/secret.txt", 0, 10)))
    # A linked file out of the directory is an error when listed, not read and not skipped silently.
    (watched / "file-link").symlink_to(elsewhere / "secret.txt")
    with pytest.raises(SourceError, match=r"'.*/in/file-link' is a link to '.*/elsewhere/secret.txt', outside"):
        source.latest_offset({"f": 5}, None)


@pytest.mark.parametrize("position", ["7", -1, 2.5, None, True])
def test_an_offset_position_that_is_not_a_byte_position_is_an_offset_error(tmp_path, position) -> None:
    (tmp_path / "f").write_text("one\ntwo\n")
    source = sources.file_watcher(directory=str(tmp_path))
    with pytest.raises(OffsetError, match=r"offset entry 'f' has position"):
        source.latest_offset({"f": position}, None)


def test_offsets_off_a_line_boundary_are_offset_errors_not_half_lines(tmp_path) -> None:
    (tmp_path / "f").write_text("first line\nsecond line\nhalf")
    source = sources.file_watcher(directory=str(tmp_path))
    cases = [
        ({"f": 3}, {"f": 23}, r"offset 3 does not start a line"),  # would skip "st line" silently
        ({"f": 0}, {"f": 15}, r"offset 15 does not end a line"),  # would read past the offset
        ({"f": 11}, {"f": 27}, r"offset 27 does not end a line"),  # would emit the unfinished "half"
        ({"f": 11}, {"f": 90}, r"offset 90 is past the end of the file \(27 bytes\)"),
    ]
    for start, end, error in cases:
        with pytest.raises(OffsetError, match=rf"file_watcher: offset entry 'f': file '.*/f': {error}"):
            _read(source, start, end)
    assert _read(source, {"f": 11}, {"f": 23}) == ["second line"]
