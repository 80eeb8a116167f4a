"""HDFS as a :class:`jetconnect.api.FileSystem`, through WebHDFS and the ``hdfs`` client.

Everything the core's file machinery (split planning, line reading, the staged commit) needs, plus
what only HDFS has: block sizes and block locations, ranged reads with a length, append, checksums.
Every call retries transient failures (a restarting NameNode, a DataNode not yet registered) with
backoff, and a read that loses its connection mid-stream resumes at the byte where it stopped.
Paths are absolute HDFS paths (``/data/x`` or ``hdfs://namenode:8020/data/x``).
"""

from __future__ import annotations

import fnmatch
import functools
import io
import logging
import posixpath
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, BinaryIO, TypeVar, cast
from urllib.parse import urlsplit

from hdfs.util import HdfsError

from jetconnect.api import (
    Backoff,
    FileInfo,
    RetriesExhausted,
    describe,
    explain_connection_failure,
    raise_unchained,
    retry_call,
)
from jetconnect.files_family import is_hidden
from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.errors import NETWORK_ERRORS, WebHdfsError, as_os_error, is_transient

T = TypeVar("T")
log = logging.getLogger("jetconnect.hdfs")

#: Uploads are spooled in memory up to this size, then on local disk, and sent in one request:
#: a request body that can be rewound is what lets a failed upload be retried whole.
_SPOOL_BYTES = 64 << 20
_READ_CHUNK = 4 << 20


@dataclass(frozen=True)
class BlockLocation:
    """One block of a file: its byte range and the DataNode hosts that hold a replica."""

    offset: int
    length: int
    hosts: tuple[str, ...]


class _Transient(Exception):
    """Carries a retryable failure through :func:`retry_call` (which retries by type)."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(cause)
        self.cause = cause


@dataclass(frozen=True)
class WebHdfsFileSystem:
    """:class:`~jetconnect.api.FileSystem` over WebHDFS; picklable (clients are per process)."""

    connection: HdfsConnection
    backoff: Backoff = Backoff(initial=0.2, maximum=2.0, deadline=60.0)

    # --- the FileSystem protocol -----------------------------------------------------------------

    def list_files(self, directory: str, glob: str = "*", recursive: bool = False) -> list[FileInfo]:
        """Visible files under ``directory`` matching ``glob``, sorted; a file path lists as itself."""
        root = hdfs_path(directory)
        st = self._call(f"status of {root}", lambda: self._client.status(root, strict=False))
        if st is None:
            return []
        if st["type"] == "FILE":
            return [_file_info(root, st)] if fnmatch.fnmatchcase(posixpath.basename(root), glob) else []
        found: list[FileInfo] = []
        pending = [root]
        while pending:
            folder = pending.pop()
            try:
                entries = self._call(f"list {folder}", functools.partial(self._list_with_status, folder))
            except FileNotFoundError:
                continue  # deleted while listing
            for name, st in entries:
                if is_hidden(name):
                    continue
                path = posixpath.join(folder, name)
                if st["type"] == "DIRECTORY":
                    if recursive:
                        pending.append(path)
                elif fnmatch.fnmatchcase(name, glob):
                    found.append(_file_info(path, st))
        found.sort(key=lambda f: f.path)
        return found

    def check(self, directory: str) -> str:
        """Ask the NameNode for ``directory``'s status, once (no retry): what ``jetconnect doctor``
        asks of a sink. Says what was checked; raises as a write would when the NameNode cannot
        be reached, TLS refuses it, or it refuses the user. The DataNodes, which a write reaches
        through the NameNode's redirect, are not contacted."""
        path = hdfs_path(directory)
        st = self._call(f"status of {path}", lambda: self._client.status(path, strict=False), retry=False)
        url = self.connection.url
        tls = (
            f"TLS handshake (certificate verified against {self.connection.tls_ca_file or 'the system CAs'})"
            if url.startswith("https://")
            else "no TLS"
        )
        if self.connection.token:
            who = "authenticated by a delegation token"
        elif self.connection.kerberos:
            who = f"authenticated by Kerberos (SPNEGO) as {self._kerberos_user()}"
        else:
            who = f"simple authentication as {self.connection.user or 'the local user'} (nothing checks it)"
        there = (
            "exists"
            if st is not None and st["type"] == "DIRECTORY"
            else "does not exist yet"
            if st is None
            else "is a file"
        )
        return f"WebHDFS NameNode at {url}: reachable, {tls}, {who}; directory {path} {there}"

    def _kerberos_user(self) -> str:
        """Who the NameNode took the client for (GETHOMEDIRECTORY names the user it authenticated)."""
        try:
            home = self._call("home directory", lambda: self._client._get_home_directory("/").json(), retry=False)
        except OSError:
            return "the client's principal"
        return str(home.get("Path", "")).rsplit("/", 1)[-1] or "the client's principal"

    def status(self, path: str) -> FileInfo | None:
        path = hdfs_path(path)
        st = self._call(f"status of {path}", lambda: self._client.status(path, strict=False))
        if st is None or st["type"] != "FILE":
            return None
        return _file_info(path, st)

    def open(self, path: str, offset: int = 0, length: int | None = None) -> BinaryIO:
        """The bytes of ``path`` from ``offset``, ``length`` of them (None: to the end of the file).

        Give ``length`` when known: WebHDFS then streams only that range from the DataNode.
        """
        stream = _RangeReader(self, hdfs_path(path), offset, length)
        return io.BufferedReader(stream, buffer_size=_READ_CHUNK)

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        """Exactly the ``length`` bytes at ``offset`` (fewer only at the end of the file)."""
        with self.open(path, offset, length) as stream:
            return stream.read()

    def create(self, path: str, overwrite: bool = False) -> BinaryIO:
        """A file that appears on HDFS, complete, when the stream is closed without error."""
        # cast: typing's BinaryIO is a class, not a protocol, and io.RawIOBase does not derive from it;
        # _Upload has the binary stream methods the FileSystem protocol's writers use
        return cast(BinaryIO, _Upload(self, hdfs_path(path), overwrite=overwrite, append=False))

    def append(self, path: str) -> BinaryIO:
        """Bytes written to the stream are appended to ``path`` when it is closed."""
        # cast: a raw binary stream used as BinaryIO, as in create()
        return cast(BinaryIO, _Upload(self, hdfs_path(path), overwrite=False, append=True))

    def rename(self, source: str, target: str) -> bool:
        """Move ``source`` to ``target``; False (nothing moved) if ``target`` exists.

        HDFS's rename never overwrites a file, which is the guarantee the staged commit needs.
        (A ``target`` that is an existing *directory* would receive ``source`` inside it: callers
        rename files onto file names.)
        """
        source, target = hdfs_path(source), hdfs_path(target)
        self.mkdirs(posixpath.dirname(target))
        moved = self._call(
            f"rename {source} to {target}",
            lambda: self._client._rename(source, destination=target).json()["boolean"],
        )
        if moved:
            return True
        if not self.exists(source):
            raise FileNotFoundError(f"rename {source} to {target}: {source} does not exist")
        if self.exists(target):
            return False
        raise WebHdfsError(f"rename {source} to {target} was refused by the NameNode at {self.connection}")

    def exists(self, path: str) -> bool:
        path = hdfs_path(path)
        return self._call(f"status of {path}", lambda: self._client.status(path, strict=False)) is not None

    def delete(self, path: str, recursive: bool = False) -> bool:
        path = hdfs_path(path)
        return bool(self._call(f"delete {path}", lambda: self._client.delete(path, recursive=recursive)))

    def mkdirs(self, path: str) -> None:
        path = hdfs_path(path)
        self._call(f"mkdirs {path}", lambda: self._client.makedirs(path))

    # --- what only HDFS has ----------------------------------------------------------------------

    def checksum(self, path: str) -> dict[str, Any]:
        """HDFS's file checksum (``algorithm``, ``bytes``, ``length``): equal files, equal sums."""
        path = hdfs_path(path)
        return self._call(f"checksum of {path}", lambda: self._client.checksum(path))

    def block_locations(self, path: str) -> list[BlockLocation]:
        """The blocks of ``path`` and their DataNode hosts; ``[]`` if the server does not say.

        Hadoop 2.x answers ``GET_BLOCK_LOCATIONS``, Hadoop 3 ``GETFILEBLOCKLOCATIONS``.
        """
        path = hdfs_path(path)
        for op, parse in (
            ("GETFILEBLOCKLOCATIONS", _parse_block_locations_v3),
            ("GET_BLOCK_LOCATIONS", _parse_located_blocks),
        ):
            try:
                body = self._call(f"{op} of {path}", functools.partial(self._get_json, path, op))
            except (WebHdfsError, ValueError):
                continue  # that server version does not know this operation
            return parse(body)
        return []

    # --- plumbing --------------------------------------------------------------------------------

    @property
    def _client(self) -> Any:
        return self.connection.client()

    def _list_with_status(self, folder: str) -> Any:
        """``(name, status)`` of each entry of ``folder`` (the client is looked up on every attempt)."""
        return self._client.list(folder, status=True)

    def _get_json(self, path: str, op: str) -> Any:
        # The hdfs client has no method for block locations; its request helper still adds the
        # authentication (user.name or delegation token) that the session carries.
        from hdfs.client import _to_error

        client = self._client
        params = {"op": op, **({"doas": client._proxy} if client._proxy else {})}
        response = client._request("GET", f"{client.url.rstrip('/')}/webhdfs/v1{path}", params=params)
        if not response.ok:
            raise _to_error(response)
        return response.json()

    def _call(self, what: str, fn: Callable[[], T], retry: bool = True) -> T:
        """``fn()`` with transient failures retried; permanent ones as OSErrors naming ``what``."""

        def attempt() -> T:
            try:
                return fn()
            except HdfsError as exc:
                if is_transient(exc):
                    raise _Transient(exc) from None
                # scrubbed whole (the NameNode's message too) and unchained: HdfsError quotes
                # request URLs, which may carry the token
                error = as_os_error(exc, f"{what} on {self.connection}")
                raise_unchained(type(error)(self.connection.redact(str(error))))
            except NETWORK_ERRORS as exc:
                if is_transient(exc):
                    raise _Transient(exc) from None
                # a certificate not trusted, plain HTTP to an HTTPS port: waiting cannot cure it
                described = self._describe(exc)
                raise_unchained(
                    WebHdfsError(
                        f"{what} on {self.connection}: cannot connect: "
                        f"{explain_connection_failure(described)}{described}"
                    )
                )

        def on_retry(exc: BaseException, delay: float) -> None:
            assert isinstance(exc, _Transient)
            log.warning(
                "%s on %s failed (%s); retrying in %.2f s", what, self.connection, self._describe(exc.cause), delay
            )

        try:
            backoff = self.backoff if retry else Backoff(deadline=0.0)
            return retry_call(attempt, retry_on=(_Transient,), what=what, backoff=backoff, on_retry=on_retry)
        except RetriesExhausted as exc:
            last = exc.__cause__
            assert isinstance(last, _Transient)
            # unchained: the chained exceptions hold request URLs, which may carry a token.
            tried = f"kept failing for {self.backoff.deadline:.0f} s" if retry else "failed"
            raise_unchained(WebHdfsError(f"{what} on {self.connection} {tried}: {self._describe(last.cause)}"))

    def _describe(self, exc: BaseException) -> str:
        return describe(exc, [self.connection.token])


def hdfs_path(path: str) -> str:
    """The absolute path part of ``/a/b`` or ``hdfs://namenode:8020/a/b`` (or ``webhdfs://``)."""
    if "://" in path:
        path = urlsplit(path).path or "/"
    if not path.startswith("/"):
        raise ValueError(f"HDFS paths must be absolute (start with '/'), got {path!r}")
    return posixpath.normpath(path) if path != "/" else path


def _file_info(path: str, st: dict[str, Any]) -> FileInfo:
    return FileInfo(path, int(st["length"]), st["modificationTime"] / 1000.0, int(st.get("blockSize") or 0))


def _parse_located_blocks(body: dict[str, Any]) -> list[BlockLocation]:
    blocks = body.get("LocatedBlocks", {}).get("locatedBlocks", [])
    return [
        BlockLocation(
            int(b["startOffset"]),
            int(b["block"]["numBytes"]),
            tuple(loc.get("hostName") or loc["ipAddr"] for loc in b.get("locations", [])),
        )
        for b in blocks
    ]


def _parse_block_locations_v3(body: dict[str, Any]) -> list[BlockLocation]:
    blocks = body.get("BlockLocations", {}).get("BlockLocation", [])
    return [BlockLocation(int(b["offset"]), int(b["length"]), tuple(b.get("hosts", []))) for b in blocks]


class _RangeReader(io.RawIOBase):
    """A WebHDFS ranged read that reopens at its current position if the connection breaks."""

    def __init__(self, fs: WebHdfsFileSystem, path: str, offset: int, length: int | None) -> None:
        self._fs, self._path = fs, path
        self._position, self._end = offset, (None if length is None else offset + length)
        self._context: AbstractContextManager[Any] | None = None
        self._raw: Any = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._end is not None and self._position >= self._end:
            return 0
        view = memoryview(buffer).cast("B")
        if self._end is not None:
            view = view[: self._end - self._position]
        for _ in range(5):
            if self._raw is None and not self._reopen():
                return 0
            try:
                n = self._raw.readinto(view)
            except NETWORK_ERRORS as exc:
                # The DataNode went away mid-stream: the bytes so far are good, resume after them.
                # (A stream cut short raises too: urllib3 enforces Content-Length.)
                log.warning("reading %s at byte %d: %s; resuming", self._path, self._position, self._fs._describe(exc))
                self._drop()
                continue
            if n == 0 and self._end is not None and self._position < self._end:
                # a body that ends early without an error (a DataNode or NameNode restarting): taken
                # for the end of the range, the rest of the range would silently be missing
                log.warning(
                    "reading %s: the stream ended at byte %d, before byte %d; resuming",
                    self._path,
                    self._position,
                    self._end,
                )
                self._drop()
                continue
            self._position += n
            return n
        raise WebHdfsError(
            f"reading {self._path} at byte {self._position} on {self._fs.connection}: the stream kept breaking"
        )

    def _reopen(self) -> bool:
        """Open the stream at the current position; False if that is the end of the file."""
        length = None if self._end is None else self._end - self._position
        client = self._fs._client

        def open_stream() -> tuple[AbstractContextManager[Any], Any]:
            context = client.read(self._path, offset=self._position, length=length)
            return context, context.__enter__()

        try:
            self._context, self._raw = self._fs._call(f"read {self._path} at byte {self._position}", open_stream)
        except WebHdfsError:
            # WebHDFS refuses to open at the end of a file; a reader asking there just gets EOF.
            info = self._fs.status(self._path) if self._position > 0 else None
            if info is not None and self._position >= info.size:
                self._end = self._position
                return False
            raise
        return True

    def _drop(self) -> None:
        context, self._context, self._raw = self._context, None, None
        if context is not None:
            try:
                context.__exit__(None, None, None)
            except Exception:  # closing a broken connection may fail again; it is gone either way
                pass

    def close(self) -> None:
        self._drop()
        super().close()


class _Upload(io.RawIOBase):
    """Bytes spooled locally and sent in one WebHDFS CREATE (or APPEND) when closed."""

    def __init__(self, fs: WebHdfsFileSystem, path: str, overwrite: bool, append: bool) -> None:
        self._fs, self._path, self._overwrite, self._append = fs, path, overwrite, append
        self._spool = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self._spool.write(data)

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._upload()
        finally:
            self._spool.close()
            super().close()

    def discard(self) -> None:
        """Close without sending anything (a failed writer)."""
        self._spool.close()
        super().close()

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        # A with-block that failed must not publish what it wrote so far.
        if exc_type is not None:
            self.discard()
        else:
            self.close()

    def _upload(self) -> None:
        client = self._fs._client

        def send() -> None:
            self._spool.seek(0)
            client.write(self._path, data=self._spool, overwrite=self._overwrite, append=self._append)

        # An append that failed half-way cannot be told from one that failed before writing:
        # retrying it could append twice, so only a create (which replaces) is retried.
        verb = "append to" if self._append else "create"
        self._fs._call(f"{verb} {self._path}", send, retry=not self._append)


__all__ = ["BlockLocation", "WebHdfsFileSystem", "hdfs_path"]
