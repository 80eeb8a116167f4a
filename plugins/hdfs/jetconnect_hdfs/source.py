"""The HDFS source: files under a path, read in parallel as block-aligned byte ranges.

Batch: the driver lists the input once and plans splits with the core's
:func:`~jetconnect.files.line_splits.plan_splits`; executors read their ranges with WebHDFS ranged reads
and Hadoop's line-reader rule (a range owns the lines that *start* inside it), so every line is
read exactly once wherever the cuts fall.

Stream: the offset is ``{path: position}`` for every file read so far. Each micro-batch lists the
path, takes the files that are new (or grew, HDFS files being append-only) and reads exactly the
bytes between the two offsets, so a restarted query replays a batch byte for byte. For lines the
position is just past the last *complete* line (the core's :func:`~jetconnect.files.line_splits.last_line_end`,
as the files watcher does): a line still being written waits for its newline instead of coming out
in two pieces. An offset entry naming a path outside the source's path is an :class:`OffsetError`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import pyarrow as pa

from jetconnect.arrow import parse_schema, rows_to_batch
from jetconnect.connector import BatchSource, Guarantee, Offset, Range, StreamSource
from jetconnect.errors import OffsetError, OptionError
from jetconnect.offsets import integer_positions
from jetconnect.files.filesystem import child_path
from jetconnect.files.line_splits import BLOCK_SIZE, FileRange, check_charset, check_count, last_line_end, plan_splits, read_lines
from jetconnect_hdfs.filesystem import HdfsFileInfo, WebHdfsFileSystem, hdfs_path

FORMATS = ("lines", "bytes")
_GLOB_CHARS = set("*?[")
_MIN_READ = 64 << 10


@dataclass(frozen=True)
class SplitRange(Range):
    """A streaming range that carries the byte ranges of the files one Spark task reads."""

    files: tuple[FileRange, ...] = ()


@dataclass(frozen=True)
class HdfsSource(BatchSource, StreamSource):
    """Lines (or whole files as bytes) of the files under ``directory`` matching ``glob``."""

    fs: WebHdfsFileSystem
    directory: str
    glob: str = "*"
    recursive: bool = False
    format: str = "lines"
    charset: str = "utf-8"
    include_path: bool = False
    max_split_bytes: int = 128 << 20
    min_splits: int = 2
    max_files_per_batch: int = 0
    #: Jet's mapper of (key, value): here (the file's path, its line or, for ``bytes``, its content).
    mapper: Callable[[str, Any], Any] | None = None
    #: DDL of what ``mapper`` returns (default ``value string``).
    mapped_schema: str | None = None

    name = "hdfs"
    # Exact replay holds while files are immutable or only appended to (HDFS allows nothing else
    # but delete-and-recreate, which the stream does not see as new data).
    guarantee = Guarantee.EXACTLY_ONCE

    def schema(self) -> Any:
        if self.mapper is not None:
            return parse_schema(self.mapped_schema or "value string")
        if self.format == "bytes":
            return parse_schema("path string, content binary")
        return parse_schema("value string, path string" if self.include_path else "value string")

    # --- batch -----------------------------------------------------------------------------------

    def splits(self) -> Sequence[list[FileRange]]:
        files = self.fs.list_files(self.directory, self.glob, self.recursive)
        if self.format == "bytes":
            return _whole_files(files, self.max_split_bytes)
        total = sum(f.size for f in files)
        splits: list[list[FileRange]] = []
        for block_size, group in groupby(sorted(files, key=_block_size), key=_block_size):
            # Cut files into ranges of whole blocks: target about total/min_splits (for
            # parallelism), at most max_split_bytes, rounded up to a multiple of the block size.
            wanted = min(self.max_split_bytes, max(1, total // max(1, self.min_splits)))
            splits += plan_splits(list(group), max_split_bytes=_round_up(wanted, block_size), min_splits=1)
        return splits

    def read_split(self, split: list[FileRange]) -> Iterator[pa.RecordBatch]:
        for file_range in split:
            yield from self._read(file_range)

    # --- stream ----------------------------------------------------------------------------------

    def initial_offset(self) -> Offset:
        return {}

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        """``start`` plus the files that appeared or grew, oldest first, at most ``max_files_per_batch``.

        Derived from ``start`` and the listing only, never from memory (DESIGN section 4);
        ``max_records`` is not used: admission control counts files (``max_files_per_batch``).
        Lines move to the end of the last complete line; whole files (``bytes``) to the length.
        """
        positions = self._positions(start)
        files = self.fs.list_files(self.directory, self.glob, self.recursive)
        changed = sorted((f for f in files if f.size > positions.get(f.path, -1)), key=lambda f: (f.mtime, f.path))
        latest = dict(start)
        taken = 0
        for f in changed:
            if self.max_files_per_batch and taken >= self.max_files_per_batch:
                break
            if self.format == "bytes":
                latest[f.path] = f.size
            else:
                # A file whose new bytes hold no newline yet takes no slot of max_files_per_batch.
                position = last_line_end(self.fs, f, max(positions.get(f.path, 0), 0))
                if position <= positions.get(f.path, 0):
                    continue
                latest[f.path] = position
            taken += 1
        return latest

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        """Deterministic from the two offsets alone: a replayed batch gets the same ranges."""
        before_all, after_all = self._positions(start), self._positions(end)
        new_files: list[HdfsFileInfo] = []
        grown: list[list[FileRange]] = []
        for path in sorted(after_all):
            before, after = before_all.get(path, -1), after_all[path]
            if after == before:
                continue
            if after < before:
                raise OffsetError(f"hdfs: offset entry {path!r} goes back from {before} to {after}; offsets only grow")
            if before <= 0:
                new_files.append(HdfsFileInfo(path, after, 0.0))
            else:
                grown.append([FileRange(path, before, after, starts_line=True, ends_line=self.format == "lines")])
        if self.format == "bytes":
            planned = _whole_files(new_files, self.max_split_bytes)
        else:
            ends = {f.path: f.size for f in new_files}
            planned = [
                [FileRange(r.path, r.start, r.end, ends_line=r.end == ends[r.path]) for r in split]
                for split in plan_splits(new_files, max_split_bytes=self.max_split_bytes, min_splits=1)
            ]
        return [
            SplitRange(f"split-{i:05d}", None, None, tuple(split))
            for i, split in enumerate(planned + grown)
        ]

    def read_range(self, range_: Range) -> Iterator[pa.RecordBatch]:
        assert isinstance(range_, SplitRange), range_
        for file_range in range_.files:
            self._check_entry(file_range.path)
            try:
                yield from self._read(file_range)
            except OffsetError as exc:
                raise OffsetError(f"hdfs: offset entry {file_range.path!r}: {exc}") from None

    def _positions(self, offset: Offset) -> dict[str, int]:
        """The entries of an offset; one that is not a path under ``directory`` with a byte position
        is an OffsetError naming it (offsets come back from a checkpoint anyone may edit)."""
        return integer_positions(offset, "hdfs", "path", self._check_entry)

    def _check_entry(self, path: object) -> None:
        root = self.directory.rstrip("/")
        inside = isinstance(path, str) and (
            path == self.directory
            or (path.startswith(root + "/") and child_path(root or "/", path[len(root) + 1 :]) == path)
        )
        if not inside:
            raise OffsetError(
                f"hdfs: offset entry {path!r} names a file outside the source's path '{self.directory}' "
                f"(absolute paths elsewhere and '..' are refused); was the checkpoint edited?"
            )

    # --- reading ---------------------------------------------------------------------------------

    def _read(self, file_range: FileRange) -> Iterator[pa.RecordBatch]:
        if self.mapper is None:
            yield from self._read_columns(file_range)
            return
        value_column = "content" if self.format == "bytes" else "value"
        owner = f"hdfs: the mapper of '{file_range.path}' from byte {file_range.start}"
        for batch in self._read_columns(file_range):
            rows = [self.mapper(file_range.path, value) for value in batch.column(value_column).to_pylist()]
            yield rows_to_batch(rows, self.schema(), owner)

    def _read_columns(self, file_range: FileRange) -> Iterator[pa.RecordBatch]:
        if self.format == "bytes":
            content = self.fs.read_range(file_range.path, file_range.start, file_range.length)
            yield pa.RecordBatch.from_pydict(
                {"path": [file_range.path], "content": [content]},
                schema=pa.schema([("path", pa.string()), ("content", pa.binary())]),
            )
            return
        # Reads no bigger than the range: WebHDFS streams from the range's start to the end of the
        # file, and a small range should not pull a whole 8 MiB block of its neighbours' bytes.
        block_size = max(_MIN_READ, min(BLOCK_SIZE, file_range.length))
        for lines in read_lines(self.fs, file_range, self.charset, block_size=block_size):
            columns = [lines]
            if self.include_path:
                columns.append(pa.array([file_range.path] * len(lines), pa.string()))
            yield pa.RecordBatch.from_arrays(columns, names=["value", "path"][: len(columns)])


def _block_size(f: HdfsFileInfo) -> int:
    return getattr(f, "block_size", 0) or 1


def _round_up(value: int, multiple: int) -> int:
    return max(multiple, -(-value // multiple) * multiple)


def _whole_files(files: Sequence[HdfsFileInfo], max_split_bytes: int) -> list[list[FileRange]]:
    """Whole files packed in path order into splits of about ``max_split_bytes`` (``bytes`` format)."""
    splits: list[list[FileRange]] = []
    size = 0
    for f in sorted(files, key=lambda f: f.path):
        if not splits or (size + f.size > max_split_bytes and splits[-1]):
            splits.append([])
            size = 0
        splits[-1].append(FileRange(f.path, 0, f.size))
        size += f.size
    return splits


def split_path(path_or_glob: str) -> tuple[str, str]:
    """``/data/logs/*.txt`` -> (``/data/logs``, ``*.txt``); a path without a glob -> (path, ``*``)."""
    path = hdfs_path(path_or_glob)
    parent, last = posixpath.split(path)
    if _GLOB_CHARS & set(parent):
        raise OptionError(
            f"hdfs: option 'path' may have a glob only in its last part (like /data/logs/*.txt), got {path_or_glob!r}"
        )
    if _GLOB_CHARS & set(last):
        return parent or "/", last
    return path, "*"


def make_source(
    fs: WebHdfsFileSystem,
    path: str,
    *,
    format: str = "lines",
    recursive: bool = False,
    charset: str = "utf-8",
    include_path: bool = False,
    max_split_bytes: int = 128 << 20,
    min_splits: int = 2,
    max_files_per_batch: int = 0,
    mapper: Callable[[str, Any], Any] | None = None,
    schema: str | None = None,
) -> HdfsSource:
    """Validate the options (errors name them) and build the source."""
    if mapper is not None and not callable(mapper):
        raise OptionError("hdfs: option 'mapper' must be a Python function of (path, value) (pass it to "
                          "sources.hdfs(...) in Python; a string option cannot carry one)")
    if schema is not None and mapper is None:
        raise OptionError("hdfs: option 'schema' describes what 'mapper' returns; give both or neither")
    if format not in FORMATS:
        raise OptionError(f"hdfs: option 'format' must be one of {', '.join(FORMATS)}, avro; got {format!r}")
    max_split_bytes = check_count(max_split_bytes, "max_split_bytes", "hdfs")
    min_splits = check_count(min_splits, "min_splits", "hdfs")
    max_files_per_batch = check_count(max_files_per_batch, "max_files_per_batch", "hdfs", minimum=0)
    if format == "lines":
        charset = check_charset(charset)
    try:
        directory, glob = split_path(path)
    except ValueError as exc:
        raise OptionError(f"hdfs: option 'path': {exc}") from None
    return HdfsSource(
        fs, directory, glob, recursive, format, charset, include_path, max_split_bytes, min_splits, max_files_per_batch,
        mapper, schema,
    )


__all__ = ["FORMATS", "HdfsSource", "SplitRange", "make_source", "split_path"]
