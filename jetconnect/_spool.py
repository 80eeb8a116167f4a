"""A durable, append-only log of Arrow rows over a :class:`~jetconnect._files.filesystem.FileSystem`.

What a receiver takes from a source that cannot replay (a socket, a message broker) is appended
here before it is acknowledged upstream or counted as read; rounds then name ranges of it, read
as often as Spark asks, and it is trimmed once Spark has committed past them. Positions count
rows from 0.

Layout: ``<directory>/<start>-<end>.arrow``, one Arrow IPC stream file per append, with a CRC32C
trailer (:mod:`jetconnect._checksums`), written under a hidden name, made durable and renamed
without overwriting: a crash leaves the whole segment or none, and a second writer at the same
position fails instead of replacing it. Every read checks the trailer: a segment whose bytes
changed on disk fails with a :class:`~jetconnect.errors.ChecksumError` naming it and its rows.
"""

from __future__ import annotations

import posixpath
import re
import uuid
from collections.abc import Iterator

import pyarrow as pa

from jetconnect._checksums import trailer, verified
from jetconnect._files.filesystem import FileSystem
from jetconnect.errors import OffsetError

_SEGMENT = re.compile(r"(\d{20})-(\d{20})\.arrow")


class Spool:
    """Rows appended in order under ``directory``, each segment written once.

    ``owner`` names whose rows these are (e.g. ``"processor 2"``) in errors.
    """

    def __init__(self, fs: FileSystem, directory: str, owner: str = "") -> None:
        self.fs = fs
        self.directory = directory
        self.owner = owner

    def __repr__(self) -> str:
        return f"Spool({self.directory!r})"

    def _segments(self) -> list[tuple[int, int, str]]:
        found = []
        for info in self.fs.list_files(self.directory, "*.arrow"):
            match = _SEGMENT.fullmatch(posixpath.basename(info.path))
            if match:
                found.append((int(match.group(1)), int(match.group(2)), info.path))
        return sorted(found)

    def bounds(self) -> tuple[int, int]:
        """The first position still held and the position after the last row (``(n, n)`` when empty)."""
        segments = self._segments()
        if segments:
            return segments[0][0], segments[-1][1]
        marker = posixpath.join(self.directory, "_trimmed")
        if self.fs.exists(marker):
            with self.fs.open(marker) as handle:
                end = int(handle.read().decode() or 0)
            return end, end
        return 0, 0

    def append(self, start: int, rows: pa.Table) -> int:
        """Make ``rows`` durable as positions ``[start, start + len(rows))``; return the new end."""
        if rows.num_rows == 0:
            return start
        end = start + rows.num_rows
        self.fs.mkdirs(self.directory)
        target = posixpath.join(self.directory, f"{start:020d}-{end:020d}.arrow")
        _write_once(self.fs, target, rows)
        return end

    def read(self, start: int, end: int) -> Iterator[pa.RecordBatch]:
        """The rows at ``[start, end)``, exactly as appended."""
        position = start
        for seg_start, seg_end, path in self._segments():
            if seg_end <= position or position >= end:
                continue
            if seg_start > position:
                break
            table = _read(self.fs, path, f"{self.owner + ' ' if self.owner else ''}spool rows {seg_start}..{seg_end}")
            if table.num_rows != seg_end - seg_start:
                raise OffsetError(
                    f"spool segment {path} holds {table.num_rows} rows, its name says {seg_end - seg_start}: it was "
                    f"truncated or edited"
                )
            yield from table.slice(position - seg_start, min(end, seg_end) - position).to_batches()
            position = min(end, seg_end)
        if position < end:
            raise OffsetError(
                f"{self}: rows {position}..{end} are missing (needed for [{start}, {end})): the spool was deleted, "
                f"trimmed too early, or belongs to another query"
            )

    def trim(self, upto: int) -> None:
        """Delete whole segments that end at or before ``upto``; the end they held is kept in a marker."""
        segments = self._segments()
        doomed = [(seg_end, path) for _, seg_end, path in segments if seg_end <= upto]
        if not doomed:
            return
        if doomed[-1][0] == segments[-1][1]:  # the last segment goes: its end must survive it
            marker = posixpath.join(self.directory, "_trimmed")
            scratch = posixpath.join(self.directory, f".tmp-{uuid.uuid4().hex}")
            with self.fs.create(scratch) as handle:
                handle.write(str(doomed[-1][0]).encode())
            self.fs.delete(marker)
            self.fs.rename(scratch, marker)
        for _, path in doomed:
            self.fs.delete(path)


def _write_once(fs: FileSystem, target: str, rows: pa.Table) -> None:
    scratch = posixpath.join(posixpath.dirname(target), f".tmp-{uuid.uuid4().hex}")
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, rows.schema) as writer:
        writer.write_table(rows)
    payload = memoryview(sink.getvalue())
    with fs.create(scratch) as handle:
        handle.write(payload)
        handle.write(trailer(payload))  # inside the hidden file: the rename publishes rows and checksum at once
    if not fs.rename(scratch, target):
        fs.delete(scratch)
        raise OffsetError(f"{target} exists already: two writers share one spool (two queries with one wal_location?)")


def _read(fs: FileSystem, path: str, what: str) -> pa.Table:
    with fs.open(path) as handle:
        data = handle.read()
    payload = verified(data, f"spool segment {path}", what)
    try:
        return pa.ipc.open_stream(pa.py_buffer(payload)).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise OffsetError(f"spool segment {path} is corrupt: {exc}") from exc


__all__ = ["Spool"]
