"""The files of a builder stream's run under ``wal_location``: the one place that knows their layout.

A *run* is one stream run of one source (a fresh id per new checkpoint, kept across restarts from
it). Everything the run needs to replay exactly lives in its directory::

    <wal_location>/<run>/
        _alive                    the driver's query beacon, rewritten while the query runs
        _stopped                  the stop marker: the query stopped, so its receivers stop
        <processor>/              everything of processor i
            <round>.arrow         the round records (12 digits; :class:`~jetconnect._round_log.RoundLog`)
            lease-<generation>    the receiver's lease (:class:`~jetconnect._builders._lease.Lease`)
            spool/                what the receiver received (:class:`~jetconnect._spool.Spool`:
                                  ``<start>-<end>.arrow`` segments and a ``_trimmed`` end marker)

Hidden ``.tmp-*`` files are records, leases and segments being written (renamed into place). The
round log, the lease and the spool each own the names inside the folder this module gives them;
every path above the folder is made here, and nowhere else.
"""

from __future__ import annotations

import posixpath

from jetconnect._files.filesystem import FileSystem
from jetconnect._locations import WAL_LOCATION, resolve_location
from jetconnect._spool import Spool

#: A round record's file name pattern (the round's number, then this suffix).
RECORD_GLOB = "*.arrow"


class RunDirectory:
    """The directory of stream run ``run`` under ``location`` (a resolved ``wal_location``) on ``fs``."""

    def __init__(self, fs: FileSystem, location: str, run: str) -> None:
        self.fs = fs
        self.location = location
        self.run = run
        self.path = posixpath.join(location, run)

    def __repr__(self) -> str:
        return f"RunDirectory({self.path!r})"

    @classmethod
    def runs(cls, fs: FileSystem, location: str) -> list[RunDirectory]:
        """Every run that left a file under ``location`` (the file system lists files, not directories)."""
        root = location.rstrip("/") + "/"
        files = fs.list_files(location, recursive=True)
        names = {f.path[len(root) :].split("/", 1)[0] for f in files if f.path.startswith(root)}
        return [cls(fs, location, name) for name in sorted(names)]

    # -- the run's own files --

    @property
    def stop_marker(self) -> str:
        """The file whose presence tells the run's receivers that the query stopped."""
        return posixpath.join(self.path, "_stopped")

    @property
    def beacon(self) -> str:
        """The file the driver's query beacon rewrites while the query runs."""
        return posixpath.join(self.path, "_alive")

    def mark_stopped(self) -> None:
        """Write the stop marker: every receiver of the run stops at its next heartbeat."""
        self.fs.mkdirs(self.path)
        with self.fs.create(self.stop_marker, overwrite=True) as handle:
            handle.write(b"stopped")

    def clear_stopped(self) -> None:
        """Remove the stop marker: the query (re)starts, its receivers must not find one."""
        self.fs.delete(self.stop_marker)

    # -- a processor's files --

    def processor(self, index: int) -> str:
        """The folder of processor ``index``: its round records, and its lease and spool if it has them."""
        return posixpath.join(self.path, str(index))

    def record(self, index: int, round_: int) -> str:
        """Where the record of round ``round_`` of processor ``index`` lives."""
        return posixpath.join(self.processor(index), f"{round_:012d}.arrow")

    @staticmethod
    def round_of(path: str) -> int | None:
        """The round a record's path names, or None for another file."""
        stem = posixpath.basename(path).split(".", 1)[0]
        return int(stem) if stem.isdigit() else None

    def lease_folder(self, index: int) -> str:
        """The folder the lease of processor ``index``'s receiver keeps its generations in."""
        return self.processor(index)

    def spool(self, index: int) -> Spool:
        """The spool of processor ``index``: what its receiver received, in order."""
        return Spool(self.fs, posixpath.join(self.processor(index), "spool"), owner=f"processor {index}")


def run_spools(location: str, run: str, total: int) -> list[Spool]:
    """The spools of processors ``0..total-1`` of stream run ``run`` under ``location`` (the
    ``wal_location`` option as given): what a connector whose receivers spool (JMS) reads back."""
    fs, path = resolve_location(location, f"option '{WAL_LOCATION}'")
    run_dir = RunDirectory(fs, path, run)
    return [run_dir.spool(index) for index in range(total)]


__all__ = ["RECORD_GLOB", "RunDirectory", "run_spools"]
