"""The lease that keeps one receiver per processor in the whole cluster.

Generation-numbered files ``lease-<g>`` in the processor's folder
(:meth:`~jetconnect._run_directory.RunDirectory.lease_folder`): the highest generation owns the
processor while its holder renews it (every receiver heartbeat); one not renewed for
:data:`STALE_S` belongs to a receiver that is gone, and a round that finds it so takes the next
generation, exclusively (renamed without overwriting: of two takers one wins). A holder that
stops releases it, with its error for the next round to raise.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import socket
import time
import uuid

from jetconnect._files.filesystem import FileSystem

#: A lease not renewed for this long belongs to a receiver that is gone.
STALE_S = 3.0

_LEASE = re.compile(r"lease-(\d{8})")


class Lease:
    """Generation-numbered lease files ``lease-<g>``: the highest generation owns the processor."""

    def __init__(self, fs: FileSystem, folder: str) -> None:
        self.fs = fs
        self.folder = folder
        self.generation: int | None = None

    def _generations(self) -> list[int]:
        # lease files have no extension: list_files' glob sees them, hidden files it does not
        return sorted(
            int(m.group(1))
            for info in self.fs.list_files(self.folder, "lease-*")
            if (m := _LEASE.fullmatch(posixpath.basename(info.path)))
        )

    def _path(self, generation: int) -> str:
        return posixpath.join(self.folder, f"lease-{generation:08d}")

    def holder(self) -> tuple[int, dict] | None:
        """The current generation and what its holder wrote, if it is alive (renewed lately, not released)."""
        generations = self._generations()
        if not generations:
            return None
        path = self._path(generations[-1])
        info = self.fs.status(path)
        if info is None or time.time() - info.mtime > STALE_S:
            return None
        with self.fs.open(path) as handle:
            raw = handle.read()
        try:
            content = json.loads(raw or b"{}")
        except ValueError:  # caught mid-renewal: alive
            return generations[-1], {}
        return None if content.get("released") else (generations[-1], content)

    def acquire(self, owner: dict) -> bool:
        """Take the next generation, unless a live holder has it or another taker got there first."""
        if self.holder() is not None:
            return False
        generations = self._generations()
        generation = (generations[-1] if generations else 0) + 1
        self.fs.mkdirs(self.folder)
        # renamed without overwriting, as every FileSystem promises: of two takers one wins
        scratch = posixpath.join(self.folder, f".tmp-lease-{uuid.uuid4().hex}")
        with self.fs.create(scratch) as handle:
            handle.write(json.dumps(owner).encode())
        if not self.fs.rename(scratch, self._path(generation)):
            self.fs.delete(scratch)
            return False
        self.generation = generation
        self.owner = owner
        return True

    def renew(self, status: dict | None = None) -> bool:
        """Renew the lease, with the holder's ``status`` for rounds in other workers to read.

        False if a newer generation exists (this holder was given up for dead).
        """
        generations = self._generations()
        if self.generation is None or not generations or generations[-1] != self.generation:
            return False  # superseded, or the folder was deleted under it
        with self.fs.create(self._path(self.generation), overwrite=True) as handle:
            handle.write(json.dumps({**self.owner, **(status or {})}).encode())
        return True

    def release(self, error: str | None = None) -> None:
        """Give the lease up at once (and leave an error for the next round to raise)."""
        if self.generation is None:
            return
        with self.fs.create(self._path(self.generation), overwrite=True) as handle:
            handle.write(json.dumps({**self.owner, "released": True, "error": error}).encode())

    def error(self) -> str | None:
        """The error the last holder released the lease with, if any."""
        generations = self._generations()
        if not generations:
            return None
        try:
            with self.fs.open(self._path(generations[-1])) as handle:
                return json.loads(handle.read() or b"{}").get("error")
        except (ValueError, FileNotFoundError):
            return None

    def clear_error(self) -> None:
        """The error was raised: the next round starts a receiver afresh."""
        generations = self._generations()
        if generations:
            with self.fs.create(self._path(generations[-1]), overwrite=True) as handle:
                handle.write(json.dumps({"released": True}).encode())


def owner_description() -> dict:
    """Who holds a lease, for a person reading it."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "id": uuid.uuid4().hex}


__all__ = ["STALE_S", "Lease", "owner_description"]
