"""Lines of text files, split by byte ranges and read straight into Arrow.

Planning (:func:`plan_splits`) works like Spark's file sources: large files are cut into ranges of a
target size, small ones kept whole, and ranges are packed into splits (one Spark task each) with a
per-file open cost, so ten thousand small files do not become ten thousand tasks.

Reading (:func:`read_lines`) follows Hadoop's ``LineRecordReader``: a range owns the lines that
*start* inside it, so it skips the partial first line (unless it starts at 0) and reads past its end
to finish its last line; every line of a file is read by exactly one range wherever the cuts fall.
Lines end with ``\\n`` or ``\\r\\n``; a last line without a newline is still a line.

Streams (:func:`last_line_end`, :func:`advance_lines`) keep offsets just past the last *complete*
line, so a line still being written waits for its newline; a range whose bounds are such offsets
says so (``starts_line``, ``ends_line``) and reading it checks them, so a re-read of the same range
gives the same lines or an :class:`~jetconnect.errors.OffsetError`, never a line cut elsewhere.

This is the hot path of the files source: blocks of several MiB are read at once, complete lines
are found with ``bytes`` methods and numpy, and a block becomes one Arrow string array without a
Python object per line (UTF-8 is validated by Arrow; other charsets are decoded once per block).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from jetconnect._charsets import check_charset
from jetconnect._files.filesystem import FileInfo, FileSystem, read_exactly
from jetconnect._options import check_count
from jetconnect.errors import OffsetError, SourceError

#: How much one read asks for; also roughly the bytes of one Arrow batch.
BLOCK_SIZE = 8 << 20
#: The smallest read, for small ranges.
MIN_READ = 64 << 10
#: Bytes read per step when the driver scans for newlines to place a stream offset.
SCAN_BLOCK = 1 << 20


@dataclass(frozen=True)
class FileRange:
    """Bytes ``[start, end)`` of one file; owns the lines that start inside it.

    ``starts_line`` / ``ends_line``: that bound is a stream offset, so a line must start exactly
    at ``start`` / the last line must end exactly at ``end``; reading checks it (a cut between two
    tasks of one offset range needs neither).
    """

    path: str
    start: int
    end: int
    starts_line: bool = False
    ends_line: bool = False

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
    A file with a ``block_size`` (HDFS) is cut on block boundaries: its range size is rounded up
    to whole blocks, so a task reads whole blocks, each from one DataNode.
    """
    files = [f for f in files if f.size > 0]
    if not files:
        return []
    total = sum(f.size + open_cost_bytes for f in files)
    target = max(1, min(max_split_bytes, max(open_cost_bytes, total // max(1, min_splits))))
    ranges = [
        FileRange(f.path, start, min(start + step, f.size))
        for f in files
        for step in [_round_up(target, f.block_size) if f.block_size > 0 else target]
        for start in range(0, f.size, step)
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


def _round_up(value: int, multiple: int) -> int:
    return max(multiple, -(-value // multiple) * multiple)


def read_lines(
    fs: FileSystem, range_: FileRange, charset: str = "utf-8", block_size: int = BLOCK_SIZE
) -> Iterator[pa.StringArray]:
    """The lines starting inside ``range_``, one Arrow string array per block read.

    Bytes that do not decode raise :class:`SourceError` naming the file and the byte offset; a
    bound marked ``starts_line``/``ends_line`` that is not at a line boundary (or past the end of
    the file) raises :class:`OffsetError` naming the file and the offset.
    """
    for _, lines in read_line_blocks(fs, range_, charset, block_size):
        yield lines


def read_line_blocks(
    fs: FileSystem, range_: FileRange, charset: str = "utf-8", block_size: int = BLOCK_SIZE
) -> Iterator[tuple[int, pa.StringArray]]:
    """:func:`read_lines` with the byte position where each block's first line starts (to name a
    line at fault: see :func:`lines_before`)."""
    if range_.start >= range_.end:
        return
    charset = check_charset(charset)
    # Reads no bigger than the range: a remote stream (WebHDFS) sends what is asked for, and a
    # small range should not pull a whole block of its neighbours' bytes.
    block_size = max(MIN_READ, min(block_size, range_.length))
    stream = fs.open(range_.path, max(range_.start - 1, 0))
    try:
        if range_.start > 0 and range_.starts_line:
            before = stream.read(1)
            if before != b"\n":
                why = (
                    "is past the end of the file"
                    if not before
                    else "does not start a line (the byte before it is not a newline)"
                )
                raise _misaligned(range_.path, range_.start, why)
            data, pos = b"", range_.start
        elif range_.start > 0:
            # The byte before the range says whether a line starts exactly at `start`.
            data, pos = _skip_partial_line(stream, range_.start - 1, block_size)
        else:
            data, pos = b"", 0
        while pos < range_.end:
            block = stream.read(block_size)
            eof = not block
            if block:
                data = data + block if data else block
            if eof and range_.ends_line and pos + len(data) < range_.end:
                raise _misaligned(range_.path, range_.end, f"is past the end of the file ({pos + len(data)} bytes)")
            if not data:
                return
            last_owned = range_.end - 1 - pos  # the line holding this byte is the last one we own
            if last_owned < len(data):
                if range_.ends_line and data[last_owned] != 0x0A:
                    why = "does not end a line (the byte before it is not a newline)"
                    raise _misaligned(range_.path, range_.end, why)
                cut = data.find(b"\n", last_owned)
                if cut >= 0:
                    yield pos, _decode(data[: cut + 1], range_.path, pos, charset)
                    return
                if eof:
                    yield pos, _decode(data + b"\n", range_.path, pos, charset)
                    return
                continue  # the last owned line goes on past this block
            if eof:
                yield pos, _decode(data + b"\n", range_.path, pos, charset)
                return
            cut = data.rfind(b"\n")
            if cut < 0:
                continue  # one line longer than a block: keep reading
            yield pos, _decode(data[: cut + 1], range_.path, pos, charset)
            pos += cut + 1
            data = data[cut + 1 :]
    finally:
        stream.close()


def lines_before(fs: FileSystem, path: str, position: int) -> int:
    """How many lines of ``path`` end before byte ``position`` (a line start): the number of the
    line starting there is this plus one. Reads the file up to ``position``: for error messages."""
    count, offset = 0, 0
    with fs.open(path, 0) as stream:
        while offset < position:
            block = read_exactly(stream, min(SCAN_BLOCK, position - offset))
            if not block:
                break
            count += block.count(b"\n")
            offset += len(block)
    return count


def last_line_end(fs: FileSystem, info: FileInfo, floor: int) -> int:
    """The position just past the last newline of ``info`` in ``[floor, size)``, or ``floor`` if none.

    Where a stream's offset may go: a line without its newline yet is still being written.
    Scans backwards from the end, so a file that grew a lot costs one read, not a full scan.
    """
    stop = info.size
    while stop > floor:
        begin = max(floor, stop - SCAN_BLOCK)
        with fs.open(info.path, begin) as stream:
            block = read_exactly(stream, stop - begin)
        cut = block.rfind(b"\n")
        if cut >= 0:
            return begin + cut + 1
        stop = begin
    return floor


def advance_lines(fs: FileSystem, info: FileInfo, position: int, budget: int) -> tuple[int, int]:
    """Past at most ``budget`` complete lines of ``info`` from ``position``: (new position, lines taken)."""
    taken = 0
    with fs.open(info.path, position) as stream:
        offset = position
        while offset < info.size and taken < budget:
            block = read_exactly(stream, min(SCAN_BLOCK, info.size - offset))
            if not block:
                break
            count = block.count(b"\n")
            if taken + count < budget:
                taken += count
                offset += len(block)
                continue
            cut = -1
            for _ in range(budget - taken):
                cut = block.find(b"\n", cut + 1)
            return offset + cut + 1, budget
    return last_line_end(fs, info, position) if taken else position, taken


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


def _misaligned(path: str, offset: int, why: str) -> OffsetError:
    return OffsetError(f"file '{path}': offset {offset} {why}; was the file rewritten, or the offset edited?")


def _undecodable(path: str, offset: int, charset: str, reason: str) -> SourceError:
    return SourceError(f"file '{path}': bytes at offset {offset} are not valid {charset} ({reason})")


__all__ = [
    "BLOCK_SIZE",
    "SCAN_BLOCK",
    "FileRange",
    "advance_lines",
    "check_count",
    "last_line_end",
    "lines_before",
    "plan_splits",
    "read_line_blocks",
    "read_lines",
]
