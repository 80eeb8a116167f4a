"""Lines of text files, split by byte ranges and read straight into Arrow.

Planning (:func:`plan_splits`) works like Spark's file sources: large files are cut into ranges of a
target size, small ones kept whole, and ranges are packed into splits (one Spark task each) with a
per-file open cost, so ten thousand small files do not become ten thousand tasks.

Reading (:func:`read_lines`) follows Hadoop's ``LineRecordReader``: a range owns the lines that
*start* inside it, so it skips the partial first line (unless it starts at 0) and reads past its end
to finish its last line; every line of a file is read by exactly one range wherever the cuts fall.
Lines end with ``\\n`` or ``\\r\\n``; a last line without a newline is still a line.

This is the hot path of the files source: blocks of several MiB are read at once, complete lines
are found with ``bytes`` methods and numpy, and a block becomes one Arrow string array without a
Python object per line (UTF-8 is validated by Arrow; other charsets are decoded once per block).
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from jetconnect.errors import OptionError, SourceError
from jetconnect.filesystem import FileInfo, FileSystem

#: How much one read asks for; also roughly the bytes of one Arrow batch.
BLOCK_SIZE = 8 << 20


@dataclass(frozen=True)
class FileRange:
    """Bytes ``[start, end)`` of one file; owns the lines that start inside it."""

    path: str
    start: int
    end: int

    @property
    def length(self) -> int:
        return self.end - self.start


def plan_splits(
    files: Sequence[FileInfo],
    max_split_bytes: int = 128 << 20,
    open_cost_bytes: int = 4 << 20,
    min_splits: int = 1,
) -> list[list[FileRange]]:
    """Cut ``files`` into ranges and pack them into splits of about ``max_split_bytes`` each.

    As Spark does: the range size is ``min(max_split_bytes, max(open_cost, total / min_splits))`` so
    that small inputs still use ``min_splits`` tasks; each file costs ``open_cost_bytes`` extra when
    packing; ranges are packed largest first, next-fit. Empty files are left out (no lines).
    """
    files = [f for f in files if f.size > 0]
    if not files:
        return []
    total = sum(f.size + open_cost_bytes for f in files)
    target = max(1, min(max_split_bytes, max(open_cost_bytes, total // max(1, min_splits))))
    ranges = [
        FileRange(f.path, start, min(start + target, f.size))
        for f in files
        for start in range(0, f.size, target)
    ]
    ranges.sort(key=lambda r: r.length, reverse=True)
    splits: list[list[FileRange]] = []
    current: list[FileRange] = []
    size = 0
    for r in ranges:
        if current and size + r.length > target:
            splits.append(current)
            current, size = [], 0
        current.append(r)
        size += r.length + open_cost_bytes
    if current:
        splits.append(current)
    return splits


def check_charset(charset: str, option: str = "charset") -> str:
    """The normalised codec name; an :class:`OptionError` if lines cannot be found by byte ``\\n``."""
    try:
        name = codecs.lookup(charset).name
    except LookupError:
        raise OptionError(f"option '{option}': unknown charset {charset!r}") from None
    if "\n".encode(name) != b"\n" or "\r".encode(name) != b"\r":
        raise OptionError(
            f"option '{option}': charset {charset!r} does not encode newline as one byte 0x0A; "
            f"use an ASCII-compatible charset (utf-8, latin-1, cp1252, ...)"
        )
    return name


def read_lines(
    fs: FileSystem, range_: FileRange, charset: str = "utf-8", block_size: int = BLOCK_SIZE
) -> Iterator[pa.StringArray]:
    """The lines starting inside ``range_``, one Arrow string array per block read.

    Bytes that do not decode raise :class:`SourceError` naming the file and the byte offset.
    """
    if range_.start >= range_.end:
        return
    charset = check_charset(charset)
    stream = fs.open(range_.path, max(range_.start - 1, 0))
    try:
        if range_.start > 0:
            # The byte before the range says whether a line starts exactly at `start`.
            data, pos = _skip_partial_line(stream, range_.start - 1, block_size)
        else:
            data, pos = b"", 0
        while pos < range_.end:
            block = stream.read(block_size)
            eof = not block
            if block:
                data = data + block if data else block
            if not data:
                return
            last_owned = range_.end - 1 - pos  # the line holding this byte is the last one we own
            if last_owned < len(data):
                cut = data.find(b"\n", last_owned)
                if cut >= 0:
                    yield _decode(data[: cut + 1], range_.path, pos, charset)
                    return
                if eof:
                    yield _decode(data + b"\n", range_.path, pos, charset)
                    return
                continue  # the last owned line goes on past this block
            if eof:
                yield _decode(data + b"\n", range_.path, pos, charset)
                return
            cut = data.rfind(b"\n")
            if cut < 0:
                continue  # one line longer than a block: keep reading
            yield _decode(data[: cut + 1], range_.path, pos, charset)
            pos += cut + 1
            data = data[cut + 1 :]
    finally:
        stream.close()


def _skip_partial_line(stream, position: int, block_size: int) -> tuple[bytes, int]:
    """Read from ``position`` (the byte before a range) to just past the next newline."""
    while True:
        block = stream.read(block_size)
        if not block:
            return b"", position
        cut = block.find(b"\n")
        if cut >= 0:
            return block[cut + 1 :], position + cut + 1
        position += len(block)


def _decode(chunk: bytes, path: str, offset: int, charset: str) -> pa.StringArray:
    """Complete lines (``chunk`` ends with ``\\n``) as one Arrow string array."""
    if charset != "utf-8":
        try:
            chunk = chunk.decode(charset).encode("utf-8")
        except UnicodeDecodeError as exc:
            raise _undecodable(path, offset + exc.start, charset, exc.reason) from None
    data = np.frombuffer(chunk, dtype=np.uint8)
    newlines = np.flatnonzero(data == 0x0A)
    count = len(newlines)
    has_cr = b"\r" in chunk  # one byte: a memchr, many times faster than looking for b"\r\n"
    # Line i spans [start_i, newline_i); with every "\n" (and the "\r" of each "\r\n") removed
    # from the bytes, it ends at newline_i minus the bytes removed up to and including it.
    removed = np.arange(1, count + 1, dtype=np.int64)
    if has_cr:
        crlf = np.zeros(count, dtype=np.int64)
        after_first = newlines > 0
        crlf[after_first] = data[newlines[after_first] - 1] == 0x0D
        removed += np.cumsum(crlf)
        values = chunk.replace(b"\r\n", b"").replace(b"\n", b"")
    else:
        values = chunk.replace(b"\n", b"")
    ends = newlines + 1 - removed
    offsets = np.empty(count + 1, dtype=np.int32)
    offsets[0] = 0
    offsets[1:] = ends
    array = pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(values))
    if charset == "utf-8":
        try:
            array.validate(full=True)
        except pa.ArrowInvalid:
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _undecodable(path, offset + exc.start, charset, exc.reason) from None
            raise
    return array


def _undecodable(path: str, offset: int, charset: str, reason: str) -> SourceError:
    return SourceError(f"file '{path}': bytes at offset {offset} are not valid {charset} ({reason})")


__all__ = ["BLOCK_SIZE", "FileRange", "check_charset", "plan_splits", "read_lines"]
