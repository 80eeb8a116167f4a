"""Lines appended to the files of a directory, and new files, as a replayable stream over any :class:`FileSystem`.

The offset is ``{file name: byte position}`` (names relative to the directory), each position just
past the last *complete* line taken: a line without its newline yet waits for it, and comes out
whole, once, in the micro-batch after its newline arrives. The files only grow, so reading the same
``[start, end)`` again gives the same lines: the stream replays exactly after a restart, which Jet's
watcher did not. A deleted directory fails the query with an error naming it (Jet's job ended; a
Spark source cannot end a running stream, and idling without a word would hide it).

An offset is read back from the checkpoint, which anyone may edit: every entry must name a file
inside the directory (no absolute path, no ``..``, no symbolic link out of it) and hold a position
at a line boundary, or the stream stops with an :class:`OffsetError` naming the entry.

The files plugin registers it as ``file_watcher`` on the local disk, the HDFS plugin as ``hdfs`` on
WebHDFS (reading what the files hold already, ``read_existing=True``). It is also a
:class:`~jetconnect._files.lines_source.LinesSource`: the same options read the files once as a batch.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from jetconnect._connector import Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect._files.filesystem import FileInfo, child_path, relative_name
from jetconnect._files.line_splits import FileRange, advance_lines, check_count, last_line_end
from jetconnect._files.lines_source import LinesSource
from jetconnect._offsets import integer_positions
from jetconnect.errors import OffsetError, SourceError


class GrowingLinesSource(LinesSource, StreamSource):
    """New files and lines appended to files under ``directory``; exactly-once replay.

    Takes :class:`LinesSource`'s options, plus ``read_existing`` (False, Jet's watcher: only what is
    appended after the query starts) and ``max_files_per_batch`` (0: no limit; else at most that
    many changed files per micro-batch, the least recently modified first). ``max_split_bytes``
    cuts the new bytes of one file into several tasks.
    """

    name = "file_watcher"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        fs: Any,
        directory: str,
        glob: str = "*",
        charset: str = "utf-8",
        *,
        read_existing: bool = False,
        max_files_per_batch: int = 0,
        max_split_bytes: int = 64 << 20,
        owner: str = "file_watcher",
        **options: Any,
    ) -> None:
        # A split size below 1 once planned no range while the offset still moved past the lines.
        super().__init__(fs, directory, glob, charset, max_split_bytes=max_split_bytes, owner=owner, **options)
        self.read_existing = read_existing
        self.max_files_per_batch = check_count(max_files_per_batch, "max_files_per_batch", owner, 0)

    def initial_offset(self) -> Offset:
        # Jet's watcher emits only what is appended after the job starts; read_existing=True
        # also emits what the files already hold (files missing from an offset start at 0).
        if not self.fs.exists(self.directory):
            raise SourceError(f"{self.owner}: directory '{self.directory}' does not exist")
        if self.read_existing:
            return {}
        offset = {}
        for name, info in self._files().items():
            if (end := last_line_end(self.fs, info, 0)) > 0:
                self._path(name, listed=True)
                offset[name] = end
        return offset

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        """``start`` moved past the complete lines that arrived since: derived from ``start`` and a
        listing, never from memory (docs/ARCHITECTURE.md section 4); ``max_records`` caps the lines taken."""
        positions = self._positions(start)
        self._check_directory("no new lines can be found")
        end = dict(start)
        budget = max_records
        files = sorted(self._files().items())
        if self.max_files_per_batch:
            files.sort(key=lambda item: item[1].mtime)  # stable: by name within one mtime
        taken_files = 0
        for name, info in files:
            position = positions.get(name, 0)
            if info.size < position:
                raise OffsetError(
                    f"{self.owner}: '{info.path}' is {info.size} bytes, shorter than its checkpointed "
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
                # A file whose new bytes hold no complete line yet takes no slot of max_files_per_batch.
                end[name] = new
                taken_files += 1
            if budget == 0 or taken_files == self.max_files_per_batch:
                break
        return dict(sorted(end.items()))

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        """Deterministic from the two offsets alone: a replayed micro-batch gets the same ranges."""
        # A file that grew a lot is cut into several ranges (tasks); line ownership makes the
        # cuts safe anywhere (see jetconnect._files.line_splits). Every byte between the two offsets is
        # in exactly one range: an offset never moves past lines no task reads.
        before, after = self._positions(start), self._positions(end)
        ranges = []
        for name, stop in sorted(after.items()):
            position = before.get(name, 0)
            if stop < position:
                raise OffsetError(
                    f"{self.owner}: offset entry {name!r} goes back from {position} to {stop}; offsets only grow"
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
            raise SourceError(f"{self.owner}: planned {covered} bytes of the {wanted} between {start} and {end}")
        return ranges

    def read_range(self, range_: Range) -> ReadOutput:
        path = self._path(range_.partition)
        first, last = (range_.first, range_.last) if isinstance(range_, _Cut) else (True, True)
        file_range = FileRange(path, int(range_.start or 0), int(range_.end), starts_line=first, ends_line=last)
        try:
            yield from self.read_file_range(file_range)
        except FileNotFoundError:
            self._check_directory(f"the lines [{range_.start}, {range_.end}) of '{path}' cannot be read")
            raise SourceError(
                f"{self.owner}: '{path}' was deleted before its lines [{range_.start}, {range_.end}) "
                f"were read; files must only be appended to"
            ) from None
        except OffsetError as exc:
            raise OffsetError(f"{self.owner}: offset entry {range_.partition!r}: {exc}") from None

    def _check_directory(self, consequence: str) -> None:
        """Fail the query, naming the directory, once the watched directory is gone: Spark gives a
        source no way to end a running stream, and idling without a word would hide it."""
        if not self.fs.exists(self.directory):
            raise SourceError(
                f"{self.owner}: the watched directory '{self.directory}' was deleted or moved, so {consequence}; "
                f"the stream stops here (restore the directory and restart from the checkpoint to go on)"
            )

    def _files(self) -> dict[str, FileInfo]:
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        return {relative_name(self.directory, f.path): f for f in files}

    def _positions(self, offset: Offset) -> dict[str, int]:
        """The entries of an offset as positions; an entry that is not a file name and a byte
        position is an OffsetError naming it (offsets come back from an editable checkpoint)."""

        def check_name(name: str) -> None:
            if name != "." and child_path(self.directory, name) is None:
                raise OffsetError(
                    f"{self.owner}: offset entry {name!r} does not name a file inside the watched directory "
                    f"'{self.directory}' (absolute paths and '..' are refused); was the checkpoint edited?"
                )

        return integer_positions(offset, self.owner, "file name", check_name)

    def _path(self, name: str, listed: bool = False) -> str:
        """The path of the file an offset entry (or, ``listed``, a listing) names, if inside the directory.

        ``.`` is the directory itself, when it is a file (a file system may list a file path as itself).
        """
        path = self.directory if name == "." else child_path(self.directory, name)
        if path is not None:
            resolve = getattr(self.fs, "real_path", None)  # file systems with symbolic links
            if resolve is None:
                return path
            root, real = resolve(self.directory), resolve(path)
            if real.startswith(root.rstrip("/") + "/") or name == ".":
                return path
            if listed:
                raise SourceError(
                    f"{self.owner}: '{path}' is a link to '{real}', outside the watched directory "
                    f"'{self.directory}'; the watcher reads only files inside it (watch the target's directory)"
                )
        raise OffsetError(
            f"{self.owner}: offset entry {name!r} names a file outside the watched directory "
            f"'{self.directory}'; was the checkpoint edited?"
        )


@dataclasses.dataclass(frozen=True)
class _Cut(Range):
    """One task's part of a file's offset range: ``first``/``last`` if it starts/ends at an offset."""

    first: bool = True
    last: bool = True


__all__ = ["GrowingLinesSource"]
