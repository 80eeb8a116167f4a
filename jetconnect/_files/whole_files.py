"""Whole files as ``(path, content)`` rows: a batch source, and a stream of new (and grown) files.

Jet's HDFS source could hand a mapper whole files rather than lines; the HDFS plugin offers it as
``format="bytes"``. The stream's offset is ``{file name: size}``: a new file is read whole, a file
that grew gives its new bytes, and the same ``[start, end)`` read again gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from jetconnect._connector import BatchSource, Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect._files.filesystem import FileInfo, FileSystem, child_path, read_exactly, relative_name
from jetconnect._files.line_splits import FileRange, check_count
from jetconnect._files.mapper import mapped_batch
from jetconnect._offsets import integer_positions
from jetconnect._options import check_function_option
from jetconnect.errors import OffsetError, SourceError

_SCHEMA = pa.schema([("path", pa.string()), ("content", pa.binary())])


class WholeFilesSource(BatchSource, StreamSource):
    """Each file matching ``glob`` under ``directory`` as one row ``path string, content binary``.

    ``path`` is the full path. ``mapper``: Jet's function of (path, content) making each row of
    ``mapped_schema`` (DDL, default ``value string``); a file it returns None for is left out, as in
    Jet. Splits pack whole files up to
    ``max_split_bytes``; ``max_files_per_batch`` (0: no limit) caps a micro-batch, oldest first.
    """

    name = "whole_files"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        glob: str = "*",
        *,
        recursive: bool = False,
        max_split_bytes: int = 128 << 20,
        max_files_per_batch: int = 0,
        mapper: Callable[[str, bytes], Any] | None = None,
        mapped_schema: str | None = None,
        owner: str = "whole_files",
        name: str | None = None,
    ) -> None:
        self.name = name or type(self).name
        self.fs, self.directory, self.glob, self.recursive, self.owner = (
            fs,
            directory.rstrip("/") or "/",
            glob,
            recursive,
            owner,
        )
        self.max_split_bytes = check_count(max_split_bytes, "max_split_bytes", owner)
        self.max_files_per_batch = check_count(max_files_per_batch, "max_files_per_batch", owner, 0)
        check_function_option(mapper, "mapper", owner, "(path, content)", schema=mapped_schema)
        self.mapper, self.mapped_schema = mapper, mapped_schema

    def schema(self) -> Any:
        from jetconnect._ddl import parse_schema

        if self.mapper is not None:
            return parse_schema(self.mapped_schema or "value string")
        return parse_schema("path string, content binary")

    # --- batch -----------------------------------------------------------------------------------

    def splits(self) -> Sequence[list[FileRange]]:
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        return _packed([FileRange(f.path, 0, f.size) for f in files], self.max_split_bytes)

    def read_split(self, split: list[FileRange]) -> ReadOutput:
        for range_ in split:
            yield from self._read(range_)

    # --- stream ----------------------------------------------------------------------------------

    def initial_offset(self) -> Offset:
        return {}

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        positions = self._positions(start)
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        changed = sorted(
            (f for f in files if f.size > positions.get(self._name(f), -1)), key=lambda f: (f.mtime, f.path)
        )
        if self.max_files_per_batch:
            changed = changed[: self.max_files_per_batch]
        return dict(sorted({**start, **{self._name(f): f.size for f in changed}}.items()))

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        """Deterministic from the two offsets alone: a replayed micro-batch gets the same ranges."""
        before, after = self._positions(start), self._positions(end)
        changed: list[FileRange] = []
        for name, stop in sorted(after.items()):
            position = before.get(name, -1)
            if stop < position:
                raise OffsetError(
                    f"{self.owner}: offset entry {name!r} goes back from {position} to {stop}; offsets only grow"
                )
            if stop > position:
                changed.append(FileRange(name, max(position, 0), stop))
        return [
            _Files(f"split-{i:05d}", None, None, tuple(split))
            for i, split in enumerate(_packed(changed, self.max_split_bytes))
        ]

    def read_range(self, range_: Range) -> ReadOutput:
        assert isinstance(range_, _Files), range_
        for r in range_.files:
            path = child_path(self.directory, r.path)
            if path is None:
                raise OffsetError(f"{self.owner}: offset entry {r.path!r} names a file outside '{self.directory}'")
            yield from self._read(FileRange(path, r.start, r.end))

    # --- plumbing --------------------------------------------------------------------------------

    def _read(self, range_: FileRange) -> Iterator[pa.RecordBatch]:
        try:
            with self.fs.open(range_.path, range_.start) as stream:
                content = read_exactly(stream, range_.length)
        except FileNotFoundError:
            raise SourceError(f"{self.owner}: '{range_.path}' was listed but is gone (deleted since?)") from None
        if len(content) < range_.length:
            raise SourceError(
                f"{self.owner}: '{range_.path}' ends at byte {range_.start + len(content)}, before {range_.end}"
            )
        if self.mapper is None:
            yield pa.RecordBatch.from_pydict({"path": [range_.path], "content": [content]}, schema=_SCHEMA)
            return
        what = "the content" if range_.start == 0 else f"the bytes from {range_.start}"
        # a file the mapper returns None for is left out (Jet's rule for mapping functions)
        batch = mapped_batch(
            self.mapper, range_.path, range_.path, [content], self.schema(), self.owner, lambda _: what
        )
        if batch.num_rows:
            yield batch

    def _name(self, info: FileInfo) -> str:
        return relative_name(self.directory, info.path)

    def _positions(self, offset: Offset) -> dict[str, int]:
        def check_name(name: str) -> None:
            if child_path(self.directory, name) is None:
                raise OffsetError(
                    f"{self.owner}: offset entry {name!r} does not name a file inside '{self.directory}' "
                    f"(absolute paths and '..' are refused); was the checkpoint edited?"
                )

        return integer_positions(offset, self.owner, "file name", check_name)


@dataclass(frozen=True)
class _Files(Range):
    """A streaming range carrying the byte ranges (by file name) one Spark task reads."""

    files: tuple[FileRange, ...] = ()


def _packed(ranges: Sequence[FileRange], max_split_bytes: int) -> list[list[FileRange]]:
    """Whole files (in a stream, their new bytes) packed in path order into splits of about ``max_split_bytes``."""
    splits: list[list[FileRange]] = []
    size = 0
    for r in sorted(ranges, key=lambda r: r.path):
        if not splits or (size + r.length > max_split_bytes and splits[-1]):
            splits.append([])
            size = 0
        splits[-1].append(r)
        size += r.length
    return splits


__all__ = ["WholeFilesSource"]
