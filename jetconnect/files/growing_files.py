"""``sources.file_watcher``: lines appended to the files of a directory, as a replayable stream.

The offset is ``{file name: byte position}``, each position just past the last *complete* line
taken (a line without its newline yet waits for it). The files only grow, so reading the same
``[start, end)`` again gives the same lines: the watcher replays exactly after a restart, which
Jet's watcher did not. A deleted directory fails the query with an error naming it (Jet's job
ended; a Spark source cannot end a running stream, and idling without a word would hide it).

An offset is read back from the checkpoint, which anyone may edit: every entry must name a file
inside the watched directory (no absolute path, no ``..``, no symbolic link out of it) and hold a
position at a line boundary, or the stream stops with an :class:`OffsetError` naming the entry.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jetconnect.connector import Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect.errors import OffsetError, SourceError
from jetconnect.offsets import integer_positions
from jetconnect.files.filesystem import FileInfo, FileSystem, child_path, relative_name
from jetconnect.files.line_splits import FileRange, advance_lines, check_charset, check_count, last_line_end, read_lines

from jetconnect.files.lines_source import lines_batch, lines_schema

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType


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
        # A split size below 1 once planned no range while the offset still moved past the lines.
        self.max_split_bytes = check_count(max_split_bytes, "max_split_bytes", "file_watcher")

    def schema(self) -> "StructType":
        return lines_schema(self.include_file_name)

    def initial_offset(self) -> Offset:
        # Jet's watcher emits only what is appended after the job starts; read_existing=True
        # also emits what the files already hold (files missing from an offset start at 0).
        if not self.fs.exists(self.directory):
            raise SourceError(f"file_watcher: directory '{self.directory}' does not exist")
        if self.read_existing:
            return {}
        offset = {}
        for name, info in self._files().items():
            if (end := last_line_end(self.fs, info, 0)) > 0:
                self._path(name, listed=True)
                offset[name] = end
        return offset

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        positions = self._positions(start)
        self._check_directory("no new lines can be found")
        end = dict(start)
        budget = max_records
        for name, info in sorted(self._files().items()):
            position = positions.get(name, 0)
            if info.size < position:
                raise OffsetError(
                    f"file_watcher: '{info.path}' is {info.size} bytes, shorter than its checkpointed "
                    f"position {position}: files must only be appended to (was it truncated or replaced?)"
                )
            if info.size == position:
                continue
            self._path(name, listed=True)
            if budget is None:
                new = last_line_end(self.fs, info, position)
            else:
                new, taken = advance_lines(self.fs, info, position, budget)
                budget -= taken
            if new > position:
                end[name] = new
            if budget == 0:
                break
        return dict(sorted(end.items()))

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        # A file that grew a lot is cut into several ranges (tasks); line ownership makes the
        # cuts safe anywhere (see jetconnect.files.line_splits). Every byte between the two offsets is
        # in exactly one range: an offset never moves past lines no task reads.
        before, after = self._positions(start), self._positions(end)
        ranges = []
        for name, stop in after.items():
            position = before.get(name, 0)
            if stop < position:
                raise OffsetError(
                    f"file_watcher: offset entry {name!r} goes back from {position} to {stop}; offsets only grow"
                )
            if stop == position:
                continue
            self._path(name)
            step = self.max_split_bytes
            ranges += [
                _Cut(name, cut, min(cut + step, stop), first=cut == position, last=cut + step >= stop)
                for cut in range(position, stop, step)
            ]
        covered = sum(r.end - r.start for r in ranges)
        wanted = sum(stop - before.get(name, 0) for name, stop in after.items())
        if covered != wanted:  # a guard: the cuts above cover every byte, whatever the options
            raise SourceError(f"file_watcher: planned {covered} bytes of the {wanted} between {start} and {end}")
        return ranges

    def read_range(self, range_: Range) -> ReadOutput:
        path = self._path(range_.partition)
        name = range_.partition if self.include_file_name else None
        first, last = (range_.first, range_.last) if isinstance(range_, _Cut) else (True, True)
        file_range = FileRange(path, int(range_.start or 0), int(range_.end), starts_line=first, ends_line=last)
        try:
            for lines in read_lines(self.fs, file_range, self.charset):
                yield lines_batch(lines, name)
        except FileNotFoundError:
            self._check_directory(f"the lines [{range_.start}, {range_.end}) of '{path}' cannot be read")
            raise SourceError(
                f"file_watcher: '{path}' was deleted before its lines [{range_.start}, {range_.end}) "
                f"were read; files must only be appended to"
            ) from None
        except OffsetError as exc:
            raise OffsetError(f"file_watcher: offset entry {range_.partition!r}: {exc}") from None

    def _check_directory(self, consequence: str) -> None:
        """Fail the query, naming the directory, once the watched directory is gone: Spark gives a
        source no way to end a running stream, and idling without a word would hide it."""
        if not self.fs.exists(self.directory):
            raise SourceError(
                f"file_watcher: the watched directory '{self.directory}' was deleted or moved, so {consequence}; "
                f"the stream stops here (restore the directory and restart from the checkpoint to go on)"
            )

    def _files(self) -> dict[str, FileInfo]:
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        return {relative_name(self.directory, f.path): f for f in files}

    def _positions(self, offset: Offset) -> dict[str, int]:
        """The entries of an offset as positions; an entry that is not a file name and a byte
        position is an OffsetError naming it (offsets come back from an editable checkpoint)."""

        def check_name(name: str) -> None:
            if child_path(self.directory, name) is None:
                raise OffsetError(
                    f"file_watcher: offset entry {name!r} does not name a file inside the watched directory "
                    f"'{self.directory}' (absolute paths and '..' are refused); was the checkpoint edited?"
                )

        return integer_positions(offset, "file_watcher", "file name", check_name)

    def _path(self, name: str, listed: bool = False) -> str:
        """The path of the file an offset entry (or, ``listed``, a listing) names, if inside the directory."""
        path = child_path(self.directory, name)
        if path is not None:
            resolve = getattr(self.fs, "real_path", None)  # file systems with symbolic links
            if resolve is None:
                return path
            root, real = resolve(self.directory), resolve(path)
            if real.startswith(root.rstrip("/") + "/"):
                return path
            if listed:
                raise SourceError(
                    f"file_watcher: '{path}' is a link to '{real}', outside the watched directory "
                    f"'{self.directory}'; the watcher reads only files inside it (watch the target's directory)"
                )
        raise OffsetError(
            f"file_watcher: offset entry {name!r} names a file outside the watched directory "
            f"'{self.directory}'; was the checkpoint edited?"
        )


@dataclasses.dataclass(frozen=True)
class _Cut(Range):
    """One task's part of a file's offset range: ``first``/``last`` if it starts/ends at an offset."""

    first: bool = True
    last: bool = True
