"""``sources.file_watcher``: lines appended to the files of a directory, as a replayable stream.

The offset is ``{file name: byte position}``, each position just past the last *complete* line
taken (a line without its newline yet waits for it). The files only grow, so reading the same
``[start, end)`` again gives the same lines: the watcher replays exactly after a restart, which
Jet's watcher did not. A deleted directory ends the stream cleanly: no error, no more data.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jetconnect.connector import Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect.errors import OffsetError, SourceError
from jetconnect.filesystem import FileInfo, FileSystem, relative_name
from jetconnect.line_splits import FileRange, check_charset, read_lines

from jetconnect_files.lines_source import lines_batch, lines_schema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType

#: Bytes read per step when scanning for newlines on the driver.
_SCAN_BLOCK = 1 << 20


class FileWatcherSource(StreamSource):
    """New files and lines appended to files under ``directory``; exactly-once replay."""

    name = "file_watcher"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        glob: str = "*",
        charset: str = "utf-8",
        include_file_name: bool = False,
        read_existing: bool = False,
        recursive: bool = False,
        max_split_bytes: int = 64 << 20,
    ) -> None:
        self.fs = fs
        self.directory = directory.rstrip("/") or "/"
        self.glob = glob
        self.charset = check_charset(charset)
        self.include_file_name = include_file_name
        self.read_existing = read_existing
        self.recursive = recursive
        self.max_split_bytes = max_split_bytes

    def schema(self) -> "StructType":
        return lines_schema(self.include_file_name)

    def initial_offset(self) -> Offset:
        # Jet's watcher emits only what is appended after the job starts; read_existing=True
        # also emits what the files already hold (files missing from an offset start at 0).
        if not self.fs.exists(self.directory):
            raise SourceError(f"file_watcher: directory '{self.directory}' does not exist")
        if self.read_existing:
            return {}
        return {
            name: end
            for name, info in self._files().items()
            if (end := self._last_line_end(info, 0)) > 0
        }

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        end = dict(start)
        budget = max_records
        for name, info in sorted(self._files().items()):
            position = int(start.get(name, 0))
            if info.size < position:
                raise OffsetError(
                    f"file_watcher: '{info.path}' is {info.size} bytes, shorter than its checkpointed "
                    f"position {position}: files must only be appended to (was it truncated or replaced?)"
                )
            if info.size == position:
                continue
            if budget is None:
                new = self._last_line_end(info, position)
            else:
                new, taken = self._advance_lines(info, position, budget)
                budget -= taken
            if new > position:
                end[name] = new
            if budget == 0:
                break
        return dict(sorted(end.items()))

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        # A file that grew a lot is cut into several ranges (tasks); line ownership makes the
        # cuts safe anywhere (see jetconnect.line_splits).
        ranges = []
        for name, stop in end.items():
            position = int(start.get(name, 0))
            for cut in range(position, int(stop), self.max_split_bytes):
                ranges.append(Range(name, cut, min(cut + self.max_split_bytes, int(stop))))
        return ranges

    def read_range(self, range_: Range) -> ReadOutput:
        path = posixpath.join(self.directory, range_.partition)
        name = range_.partition if self.include_file_name else None
        try:
            for lines in read_lines(self.fs, FileRange(path, int(range_.start or 0), int(range_.end)), self.charset):
                yield lines_batch(lines, name)
        except FileNotFoundError:
            if not self.fs.exists(self.directory):
                return  # the directory was deleted: the stream has ended
            raise SourceError(
                f"file_watcher: '{path}' was deleted before its lines [{range_.start}, {range_.end}) "
                f"were read; files must only be appended to"
            ) from None

    def _files(self) -> dict[str, FileInfo]:
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        return {relative_name(self.directory, f.path): f for f in files}

    def _last_line_end(self, info: FileInfo, floor: int) -> int:
        """The position just past the last newline in ``[floor, size)``, or ``floor`` if none."""
        stop = info.size
        while stop > floor:
            begin = max(floor, stop - _SCAN_BLOCK)
            with self.fs.open(info.path, begin) as stream:
                block = stream.read(stop - begin)
            cut = block.rfind(b"\n")
            if cut >= 0:
                return begin + cut + 1
            stop = begin
        return floor

    def _advance_lines(self, info: FileInfo, position: int, budget: int) -> tuple[int, int]:
        """Past at most ``budget`` complete lines from ``position``: (new position, lines taken)."""
        taken = 0
        with self.fs.open(info.path, position) as stream:
            offset = position
            while offset < info.size and taken < budget:
                block = stream.read(min(_SCAN_BLOCK, info.size - offset))
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
        return self._last_line_end(info, position) if taken else position, taken
