"""Line splits: every line read by exactly one range wherever the cuts fall (LineRecordReader)."""

from __future__ import annotations

import pytest

from jetconnect._charsets import check_charset
from jetconnect._files.filesystem import FileInfo, LocalFileSystem
from jetconnect._files.line_splits import FileRange, plan_splits, read_lines
from jetconnect.errors import OptionError, SourceError


def _lines(path, start: int, end: int, **kw) -> list[str]:
    return [
        s for array in read_lines(LocalFileSystem(), FileRange(str(path), start, end), **kw) for s in array.to_pylist()
    ]


@pytest.mark.parametrize(
    "content", [b"alpha\nbeta\n\ngamma\r\ndelta", b"a\nbb\nccc\n", b"\n\n\n", b"x", "ünï\ncødé\n€\n".encode()]
)
def test_any_cuts_read_each_line_exactly_once(tmp_path, content: bytes) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(content)
    expected = content.decode().replace("\r\n", "\n")
    expected_lines = expected[:-1].split("\n") if expected.endswith("\n") else expected.split("\n")
    for cut1 in range(len(content) + 1):
        for cut2 in range(cut1, len(content) + 1):
            got = _lines(path, 0, cut1) + _lines(path, cut1, cut2) + _lines(path, cut2, len(content))
            assert got == expected_lines, (cut1, cut2)


def test_small_blocks_and_long_lines(tmp_path) -> None:
    lines = [("x" * (i * 7 % 50)) + str(i) for i in range(500)]
    path = tmp_path / "f.txt"
    path.write_text("\n".join(lines) + "\n")
    size = path.stat().st_size
    got = []
    for start in range(0, size, 333):
        got += _lines(path, start, min(start + 333, size), block_size=16)
    assert got == lines


def test_other_charsets_and_bad_bytes(tmp_path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("café\nnaïve\n".encode("latin-1"))
    assert _lines(path, 0, 100, charset="latin-1") == ["café", "naïve"]
    with pytest.raises(SourceError, match=r"latin.txt.*offset 3"):
        _lines(path, 0, 100)
    with pytest.raises(OptionError, match="charset"):
        check_charset("utf-16")
    with pytest.raises(OptionError, match="unknown charset"):
        check_charset("no-such-charset")


def test_plan_splits_cuts_large_files_and_packs_small_ones() -> None:
    files = [FileInfo("big", 1000, 0), FileInfo("s1", 10, 0), FileInfo("s2", 10, 0), FileInfo("empty", 0, 0)]
    splits = plan_splits(files, max_split_bytes=400, open_cost_bytes=5)
    ranges = sorted((r.path, r.start, r.end) for split in splits for r in split)
    assert ranges == [("big", 0, 400), ("big", 400, 800), ("big", 800, 1000), ("s1", 0, 10), ("s2", 0, 10)]
    assert len(splits) == 3
    assert plan_splits([]) == []
    many = plan_splits(
        [FileInfo(f"f{i}", 100, 0) for i in range(8)], max_split_bytes=10_000, open_cost_bytes=0, min_splits=4
    )
    assert len(many) == 4
