"""A write-ahead log of Arrow segments: how a source that cannot replay becomes replayable.

What a socket or a message broker hands over is appended here *before* its position counts as
read; a micro-batch ``[start, end)`` is then read back from the log, as often as Spark asks, and
the log is trimmed once Spark has committed past it. Sequence numbers count records per
partition from 0. The directory must be durable and, on a cluster, shared by the driver and the
executors (put it beside the query's checkpoint).

Layout: ``<directory>/<partition>/<start>-<end>.arrow``, one Arrow IPC file per append, written
under a temporary name, fsynced and renamed, so a crash leaves either the whole segment or none.
"""

from __future__ import annotations

import os
import re
import tempfile
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa

from jetconnect.errors import OffsetError
from jetconnect.filesystem import shared_path

_SEGMENT = re.compile(r"^(\d{20})-(\d{20})\.arrow$")


class WriteAheadLog:
    """Durable, per-partition, append-only record log under ``directory``."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        # the driver writes it and executors read it: it must name the same place for both
        self.directory = Path(shared_path(directory, "option 'wal_location'"))

    def __repr__(self) -> str:
        return f"WriteAheadLog({str(self.directory)!r})"

    def _dir(self, partition: str) -> Path:
        # quote() keeps partition names such as "orders:3" or "a/b" one safe path component
        return self.directory / urllib.parse.quote(str(partition), safe="")

    def _segments(self, partition: str) -> list[tuple[int, int, Path]]:
        folder = self._dir(partition)
        if not folder.is_dir():
            return []
        found = []
        for entry in folder.iterdir():
            match = _SEGMENT.match(entry.name)
            if match:
                found.append((int(match.group(1)), int(match.group(2)), entry))
        return sorted(found)

    def partitions(self) -> list[str]:
        """The partitions that have a folder in the log."""
        if not self.directory.is_dir():
            return []
        return sorted(urllib.parse.unquote(p.name) for p in self.directory.iterdir() if p.is_dir())

    def start(self, partition: str) -> int:
        """The first sequence still in the log (what trimming has not removed yet)."""
        segments = self._segments(partition)
        return segments[0][0] if segments else self.end(partition)

    def end(self, partition: str) -> int:
        """The sequence after the last durable record of ``partition`` (0 for an empty log)."""
        segments = self._segments(partition)
        if segments:
            return segments[-1][1]
        marker = self._dir(partition) / "trimmed"
        return int(marker.read_text()) if marker.exists() else 0

    def append(self, partition: str, start: int, data: pa.RecordBatch | pa.Table) -> int:
        """Make ``data`` durable as records ``[start, start + len(data))``; return the new end."""
        end_now = self.end(partition)
        if start != end_now:
            raise OffsetError(
                f"write-ahead log {self.directory}: partition '{partition}' ends at {end_now}, "
                f"cannot append at {start} (two queries sharing one wal_location?)"
            )
        if data.num_rows == 0:
            return start
        end = start + data.num_rows
        folder = self._dir(partition)
        folder.mkdir(parents=True, exist_ok=True)
        table = data if isinstance(data, pa.Table) else pa.Table.from_batches([data])

        def write(handle: BinaryIO) -> None:
            with pa.ipc.new_file(handle, table.schema) as writer:
                writer.write_table(table)

        _replace_durably(folder / f"{start:020d}-{end:020d}.arrow", write)
        return end

    def read(self, partition: str, start: int, end: int) -> Iterator[pa.RecordBatch]:
        """The records ``[start, end)`` of ``partition``, exactly as appended."""
        position = start
        for seg_start, seg_end, path in self._segments(partition):
            if seg_end <= position or position >= end:
                continue
            if seg_start > position:
                break
            with pa.memory_map(str(path)) as source:
                table = pa.ipc.open_file(source).read_all()
            piece = table.slice(position - seg_start, min(end, seg_end) - position)
            yield from piece.combine_chunks().to_batches()
            position = min(end, seg_end)
        if position < end:
            raise OffsetError(
                f"write-ahead log {self.directory}: partition '{partition}' has no records "
                f"{position}..{end} (needed for [{start}, {end})); the log was deleted, trimmed "
                f"too early or belongs to another query"
            )

    def trim(self, partition: str, upto: int) -> None:
        """Delete whole segments that end at or before ``upto`` (Spark committed past them).

        When the last segment goes, the end it held is first made durable in a ``trimmed``
        marker, so neither a reader in another thread nor a restart after a crash ever sees
        neither and takes the log for empty (its next append would then reuse old sequences).
        """
        segments = self._segments(partition)
        doomed = [(seg_end, path) for _, seg_end, path in segments if seg_end <= upto]
        if not doomed:
            return
        if doomed[-1][0] == segments[-1][1]:
            last_end = str(doomed[-1][0]).encode()
            _replace_durably(self._dir(partition) / "trimmed", lambda handle: handle.write(last_end))
        for _, path in doomed:
            path.unlink(missing_ok=True)


def _replace_durably(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Give ``target`` the content ``write`` puts in a new file: complete or absent after a crash.

    The content goes to a temporary file beside it (ignored by the segment listing), is fsynced
    and renamed over ``target``, and the rename is fsynced too.
    """
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


__all__ = ["WriteAheadLog"]
