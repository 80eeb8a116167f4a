"""Lines files cut anywhere (mid-line, mid-UTF-8 sequence), read by any splits: the lines, or an error.

Batch reads (``sources.files``) follow Spark's text source: a last line without its newline is
still a line, so a file cut mid-line gives that line's first part, as the file now holds it. A cut
inside a UTF-8 sequence is an error naming the file and the byte where the sequence starts. The
stream (``sources.file_watcher``) never emits a line before its newline, so a cut line waits.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jetconnect import sources
from jetconnect.errors import SourceError

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Line breaks, multi-byte characters of every UTF-8 length, and plain text.
text_st = st.lists(
    st.sampled_from(["a", "bc", " ", "\n", "\r\n", "\r", "é", "€", "𝄞", "\u2028", "\x00"]), max_size=40
).map("".join)


def expected_lines(data: bytes) -> list[str]:
    """Lines split at "\\n", one "\\r" before it dropped; a "\\r" ending the file is taken for a "\\r\\n"
    cut in two (as the reader does), so a last line never ends with "\\r"."""
    text = data.decode("utf-8")
    if not text:
        return []
    pieces = text.split("\n")
    if text.endswith("\n"):
        pieces.pop()
    return [p[:-1] if p.endswith("\r") else p for p in pieces]


def read_files(directory: str, max_split_bytes: int) -> list[str]:
    source = sources.files(directory=directory, max_split_bytes=max_split_bytes, min_splits=1)
    ranges = sorted((r for split in source.splits() for r in split), key=lambda r: r.start)
    return [line for r in ranges for batch in source.read_split([r]) for line in batch.column(0).to_pylist()]


@FUZZ
@given(text_st, st.data())
def test_a_file_cut_anywhere_gives_its_lines_or_names_the_cut_sequence(text: str, data) -> None:
    whole = text.encode()
    cut = data.draw(st.integers(0, len(whole)), label="cut")
    split = data.draw(st.integers(1, len(whole) + 1), label="max_split_bytes")
    kept = whole[:cut]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "f.txt"
        path.write_bytes(kept)
        try:
            kept.decode("utf-8")
        except UnicodeDecodeError as exc:
            try:
                read_files(directory, split)
            except SourceError as error:
                assert re.search(
                    rf"'{re.escape(str(path))}': bytes at offset {exc.start} are not valid utf-8", str(error)
                )
            else:
                raise AssertionError(f"a file cut inside a UTF-8 sequence at byte {cut} read without an error")
        else:
            assert read_files(directory, split) == expected_lines(kept)


@FUZZ
@given(text_st, st.data())
def test_the_watcher_emits_complete_lines_only(text: str, data) -> None:
    """A file cut anywhere (a writer half-way through a line or a character): only whole lines come out,
    and the rest arrives whole once written, in as many micro-batches as admission control makes."""
    whole = text.encode()
    cut = data.draw(st.integers(0, len(whole)), label="cut")
    budget = data.draw(st.none() | st.integers(1, 5), label="max_records")
    split = data.draw(st.integers(1, 64), label="max_split_bytes")
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "f.txt"
        path.write_bytes(whole[:cut])
        watcher = sources.file_watcher(directory=directory, read_existing=True, max_split_bytes=split)
        offset, seen = watcher.initial_offset(), []

        def drain() -> None:
            nonlocal offset
            while (end := watcher.latest_offset(offset, budget)) != offset:
                for r in watcher.ranges(offset, end):
                    seen.extend(line for batch in watcher.read_range(r) for line in batch.column(0).to_pylist())
                offset = end

        drain()
        complete = whole[: whole.rfind(b"\n", 0, cut) + 1]
        assert seen == expected_lines(complete)
        with open(path, "ab") as f:
            f.write(whole[cut:] + (b"" if whole.endswith(b"\n") else b"\n"))
        drain()
        assert seen == expected_lines(whole if whole.endswith(b"\n") else whole + b"\n")
