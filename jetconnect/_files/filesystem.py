"""The file system a file connector talks to: a small protocol, and its local implementation.

File sources and sinks (lines, Avro, the staged-commit protocol) are written once against
:class:`FileSystem`; a plugin for another store (WebHDFS, an object store) implements the same
few operations. Paths are plain ``/``-separated strings.

Names that start with ``.`` or ``_`` are *hidden* (Hadoop's convention): listings skip them, so a
sink can stage files under hidden names that no reader ever sees.
"""

from __future__ import annotations

import fnmatch
import io
import os
import posixpath
import shutil
import urllib.parse
from dataclasses import dataclass
from typing import BinaryIO, Protocol, runtime_checkable

from jetconnect.errors import OptionError


@dataclass(frozen=True)
class FileInfo:
    """One file found by :meth:`FileSystem.list_files`."""

    path: str
    size: int
    #: Modification time, seconds since the epoch.
    mtime: float
    #: The storage's block size (HDFS), 0 if it has none: splits are then cut on block boundaries.
    block_size: int = 0


def is_hidden(name: str) -> bool:
    """Whether a file or directory name is hidden from readers (starts with ``.`` or ``_``)."""
    return name.startswith((".", "_"))


@runtime_checkable
class FileSystem(Protocol):
    """The operations file connectors need; every method takes full paths."""

    def list_files(self, directory: str, glob: str = "*", recursive: bool = False) -> list[FileInfo]:
        """Visible files under ``directory`` whose name matches ``glob``, sorted by path.

        Hidden files and directories are skipped. A missing directory gives ``[]``.
        """

    def status(self, path: str) -> FileInfo | None:
        """The file at ``path``, or None if there is none."""

    def open(self, path: str, offset: int = 0) -> BinaryIO:
        """A binary stream of the file's bytes from ``offset`` to its end (readers stop early)."""

    def create(self, path: str, overwrite: bool = False) -> BinaryIO:
        """A new file open for writing; durable once the stream is closed without error."""

    def rename(self, source: str, target: str) -> bool:
        """Move ``source`` to ``target`` atomically; False (and nothing moved) if ``target`` exists."""

    def exists(self, path: str) -> bool:
        """Whether a file or directory exists at ``path``."""

    def delete(self, path: str, recursive: bool = False) -> bool:
        """Remove a file (or a directory tree when ``recursive``); False if nothing was there."""

    def mkdirs(self, path: str) -> None:
        """Create a directory and its parents; no error if it exists."""


class _DurableWriter(io.BufferedWriter):
    """A buffered file whose ``close`` also fsyncs, so a closed file survives a machine crash."""

    def close(self) -> None:
        if not self.closed:
            try:
                self.flush()
                os.fsync(self.fileno())
            finally:
                super().close()


class LocalFileSystem:
    """:class:`FileSystem` over the local disk (or any POSIX mount shared by all executors)."""

    def list_files(self, directory: str, glob: str = "*", recursive: bool = False) -> list[FileInfo]:
        found: list[FileInfo] = []
        for root, dirs, files in os.walk(directory):
            # Pruning in place is how os.walk is told not to descend.
            dirs[:] = sorted(d for d in dirs if recursive and not is_hidden(d))
            for name in files:
                if is_hidden(name) or not fnmatch.fnmatchcase(name, glob):
                    continue
                path = os.path.join(root, name)
                try:
                    st = os.stat(path)
                except FileNotFoundError:  # deleted while listing
                    continue
                found.append(FileInfo(path, st.st_size, st.st_mtime))
        found.sort(key=lambda f: f.path)
        return found

    def status(self, path: str) -> FileInfo | None:
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return FileInfo(path, st.st_size, st.st_mtime)

    def open(self, path: str, offset: int = 0) -> BinaryIO:
        # Unbuffered: line and block readers ask for large reads, an extra copy would only cost.
        stream = open(path, "rb", buffering=0)
        if offset:
            stream.seek(offset)
        return stream

    def create(self, path: str, overwrite: bool = False) -> BinaryIO:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        raw = io.FileIO(path, "w" if overwrite else "x")
        return _DurableWriter(raw, buffer_size=1 << 20)

    def rename(self, source: str, target: str) -> bool:
        # link() fails if the target exists, which rename() would silently replace: that is the
        # "no overwrite" guarantee the staged commit relies on to skip finals already committed.
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        try:
            os.link(source, target)
        except FileExistsError:
            return False
        os.unlink(source)
        fsync_directory(os.path.dirname(target) or ".")
        return True

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def delete(self, path: str, recursive: bool = False) -> bool:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                if recursive:
                    shutil.rmtree(path)
                else:
                    os.rmdir(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            return False
        return True

    def mkdirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    def real_path(self, path: str) -> str:
        """``path`` with every symbolic link resolved (only file systems with links offer this)."""
        return os.path.realpath(path)


def fsync_directory(directory: str) -> None:
    """Make the entries of ``directory`` (a file created, renamed or removed in it) survive a crash.

    fsync of a file makes its bytes durable, not its name: that takes an fsync of the directory.
    """
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_exactly(stream: BinaryIO, size: int) -> bytes:
    """``size`` bytes of ``stream`` (fewer only at its end): a raw or remote stream may return
    fewer bytes than asked from one ``read`` long before its end."""
    parts, have = [], 0
    while have < size:
        part = stream.read(size - have)
        if not part:
            break
        parts.append(part)
        have += len(part)
    return b"".join(parts)


def shared_path(path: str | os.PathLike[str], what: str) -> str:
    """``path`` as given, if absolute; a relative path is an OptionError naming ``what``.

    Drivers, executors and a Spark Connect server each have a working directory of their own, so a
    relative path would name a different place in each: only an absolute one (on storage they all
    see) means the same everywhere. ``file://`` URLs are accepted and reduced to their path.
    """
    text = os.fspath(path)
    if text.startswith("file://"):
        text = urllib.parse.urlparse(text).path
    text = os.path.expanduser(text)
    if not os.path.isabs(text):
        raise OptionError(
            f"{what}: '{text}' is a relative path; give an absolute one, on storage the driver and every "
            f"executor see (they do not share a working directory)"
        )
    return text


def relative_name(directory: str, path: str) -> str:
    """``path`` relative to ``directory`` with ``/`` separators (what offsets and file-name columns hold)."""
    return posixpath.relpath(path.replace(os.sep, "/"), directory.replace(os.sep, "/"))


def child_path(directory: str, name: object) -> str | None:
    """``directory/name`` if ``name`` is a plain relative path below ``directory``, else None.

    For names read back from somewhere a user can edit (a checkpointed offset): an absolute path,
    an empty, ``.`` or ``..`` part or a NUL byte could point outside the directory.
    """
    if not isinstance(name, str) or not name or "\x00" in name or name.startswith("/"):
        return None
    if any(part in ("", ".", "..") for part in name.split("/")):
        return None
    return posixpath.join(directory, name)


__all__ = [
    "FileInfo",
    "FileSystem",
    "LocalFileSystem",
    "child_path",
    "fsync_directory",
    "is_hidden",
    "read_exactly",
    "relative_name",
    "shared_path",
]
