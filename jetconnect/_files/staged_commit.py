"""Exactly-once file sinks: write under hidden staging names, rename to deterministic names at commit.

The protocol shared by every file sink (lines, Avro, HDFS):

1. A write task writes its files under a hidden staging directory of its batch,
   ``<dir>/.jetconnect-staging/<batch key>/``, with names unique per (partition, attempt, token),
   and returns the picklable list of :class:`StagedFile` (staging path -> final path).
2. :meth:`StagedCommit.commit` (a fresh process, the messages are all it knows) renames each staged
   file to its final name **without overwriting**: a final name that already exists was committed
   by an earlier delivery of the same micro-batch, so the staged copy is dropped. Then it deletes the
   batch's staging directory (leftovers of killed attempts) and those of the query's older batches.

Final names are deterministic in streaming, ``<prefix>-<batch>-<partition>-<seq>-<query><suffix>``
(the write's :class:`~jetconnect._connector.WriteKey`, numbers zero-padded, the query id cut to 8),
so a micro-batch that Spark re-delivers after a crash maps onto the same names and each record ends
up in exactly one visible file. **Premise:** the source replays a micro-batch deterministically
(same records, same partitions, same order), which every replayable jetconnect source promises. A
batch (non-streaming) write gets a fresh job id in its final names instead, as it is never
re-delivered. Readers must ignore hidden names (:func:`jetconnect._files.filesystem.is_hidden`).
"""

from __future__ import annotations

import posixpath
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from jetconnect._connector import CommitContext, WriteContext
from jetconnect._files.filesystem import FileSystem, is_hidden
from jetconnect._options import PLAIN_NAME
from jetconnect.errors import OptionError, SinkError

STAGING_DIR = ".jetconnect-staging"


@dataclass(frozen=True)
class StagedFile:
    """One file a task wrote: where it is staged, and the name it gets when committed."""

    staging_path: str
    final_path: str


def check_name_part(value: object, option: str) -> str:
    """``value`` if it can start (``prefix``) or end (``suffix``) a file name; else an OptionError.

    A ``/`` (or ``\\``, NUL) would put files outside the sink's directory (``../x``); a prefix
    that makes names hidden (``.``, ``_``) would commit files every reader skips.
    """
    if not isinstance(value, str) or any(c in value for c in "/\\") or not PLAIN_NAME.fullmatch(value or "x"):
        raise OptionError(
            f"option '{option}' must be part of a file name, without '/', '\\', NUL or another control "
            f"character such as a newline; got {value!r}"
        )
    if option == "prefix" and (not value or is_hidden(value)):
        raise OptionError(
            f"option 'prefix' must be non-empty and not start with '.' or '_' (readers skip such files); got {value!r}"
        )
    return value


def _short_query(query_id: str | None) -> str:
    return (query_id or "query").replace("-", "")[:8]


@dataclass(frozen=True)
class StagedCommit:
    """The naming and commit rules of one sink directory (picklable: fs, directory and names)."""

    fs: FileSystem
    directory: str
    prefix: str = "part"
    suffix: str = ""

    def __post_init__(self) -> None:
        check_name_part(self.prefix, "prefix")
        check_name_part(self.suffix, "suffix")

    @property
    def staging_root(self) -> str:
        return posixpath.join(self.directory, STAGING_DIR)

    def task(self, ctx: WriteContext) -> StagedTask:
        """The staged files of one write task."""
        partition = f"{ctx.partition_id:05d}"
        key = ctx.key  # the core's WriteKey: the final names spell it, so a re-delivery maps onto them
        if key is None:
            # Batch writes are never re-delivered: a unique job id keeps two writes apart.
            job = uuid.uuid4().hex[:12]
            batch_dir, stem = f"job-{job}", f"{self.prefix}-{job}-{partition}-{{seq:03d}}"
        else:
            # The spelling of files already committed: changing it would commit a re-delivered
            # batch a second time under new names.
            query = _short_query(key.query_id)
            batch_dir = f"{query}-b{key.batch_id:010d}"
            stem = f"{self.prefix}-{key.batch_id:010d}-{key.partition_id:05d}-{{seq:03d}}-{query}"
        token = f"{partition}-{ctx.attempt}-{uuid.uuid4().hex[:8]}"
        return StagedTask(self, posixpath.join(self.staging_root, batch_dir), token, stem)

    def commit(self, messages: Iterable[Any], ctx: CommitContext) -> list[str]:
        """Make every staged file of the batch visible under its final name; idempotent.

        Returns the final paths this call made visible (not those committed before).
        """
        staged = sorted(_staged_files(messages), key=lambda f: f.final_path)
        if ctx.overwrite:
            self._delete_visible(keep={f.final_path for f in staged})
        committed = []
        for f in staged:
            try:
                renamed = self.fs.rename(f.staging_path, f.final_path)
            except FileNotFoundError:
                if self.fs.exists(f.final_path):
                    continue  # this very commit ran before (the same messages, committed again)
                raise SinkError(
                    f"staged file '{f.staging_path}' for '{f.final_path}' is gone before its commit; "
                    f"was the staging directory deleted by hand?"
                ) from None
            if renamed:
                committed.append(f.final_path)
            else:
                # Committed by an earlier delivery of this batch: the copy is the same records.
                self.fs.delete(f.staging_path)
        for directory in {posixpath.dirname(f.staging_path) for f in staged}:
            self.fs.delete(directory, recursive=True)
        if ctx.batch_id is not None:
            self._delete_older_staging(ctx)
        return committed

    def abort(self, messages: Iterable[Any], ctx: CommitContext) -> None:
        """Drop what the tasks staged (best effort; Spark skips it after a hard crash)."""
        for directory in {posixpath.dirname(f.staging_path) for f in _staged_files(messages)}:
            self.fs.delete(directory, recursive=True)

    def _delete_older_staging(self, ctx: CommitContext) -> None:
        # Batches before this one are committed (Spark commits in order), so anything still staged
        # for them is a killed attempt's leftover; this batch's own dir may be left by tasks that
        # staged nothing we were told about (attempts killed mid-write).
        query = _short_query(ctx.query_id)
        batch_dirs = {posixpath.dirname(f.path) for f in self.fs.list_files(self.staging_root, recursive=True)}
        for directory in batch_dirs:
            name = posixpath.basename(directory)
            owner, _, batch = name.rpartition("-b")
            if owner == query and batch.isdigit() and int(batch) <= (ctx.batch_id or 0):
                self.fs.delete(directory, recursive=True)

    def _delete_visible(self, keep: set[str]) -> None:
        for f in self.fs.list_files(self.directory):
            if f.path not in keep:
                self.fs.delete(f.path)


@dataclass
class StagedTask:
    """The files one write task stages, in order; :meth:`finish` gives the commit message."""

    commit: StagedCommit
    staging_dir: str
    token: str
    final_stem: str
    files: list[StagedFile] = field(default_factory=list)
    _open: BinaryIO | None = None

    def new_file(self) -> BinaryIO:
        """Close the current file (if any) and open the next one (rolling)."""
        self._close_current()
        seq = len(self.files)
        staged = StagedFile(
            posixpath.join(self.staging_dir, f"{self.token}-{seq:03d}{self.commit.suffix}"),
            posixpath.join(self.commit.directory, self.final_stem.format(seq=seq) + self.commit.suffix),
        )
        self.commit.fs.mkdirs(self.staging_dir)
        self._open = self.commit.fs.create(staged.staging_path, overwrite=True)
        self.files.append(staged)
        return self._open

    def finish(self) -> list[StagedFile]:
        """Close the last file (durably) and return the picklable commit message."""
        self._close_current()
        return list(self.files)

    def discard(self) -> None:
        """The task failed: remove what it staged."""
        if self._open is not None:
            # a file system that uploads on close (WebHDFS) offers discard() to drop the upload
            getattr(self._open, "discard", self._open.close)()
            self._open = None
        for f in self.files:
            self.commit.fs.delete(f.staging_path)

    def _close_current(self) -> None:
        if self._open is not None:
            self._open.close()
            self._open = None


def _staged_files(messages: Iterable[Any]) -> Iterable[StagedFile]:
    for message in messages:
        if isinstance(message, StagedFile):
            yield message
        elif isinstance(message, (list, tuple)):
            yield from _staged_files(message)
        # None: a task that wrote nothing


__all__ = ["STAGING_DIR", "StagedCommit", "StagedFile", "StagedTask", "check_name_part"]
