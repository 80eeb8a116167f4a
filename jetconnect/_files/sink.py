"""The exactly-once file sink, written once: subclasses only say how batches go into a file.

Staging, rolling to a new file by size, the commit that renames staged files to their final
names and the clean-up of a failed task live here (over :mod:`jetconnect._files.staged_commit`), so the
text sinks of the files and HDFS plugins differ only in their encoding and file system, and the
Avro sink only in its :class:`FileWriter`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Protocol, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jetconnect._connector import CommitContext, Guarantee, Sink, WriteContext
from jetconnect._files.staged_commit import StagedCommit
from jetconnect.errors import SinkError

#: Turns one Arrow batch into the bytes appended to the current file.
Encoder = Callable[[pa.RecordBatch], bytes]


class FileWriter(Protocol):
    """Writes a task's Arrow batches into one staged file, in some file format."""

    def write(self, batch: pa.RecordBatch) -> None:
        """Add ``batch`` to the file."""

    def close(self) -> None:
        """Write what the format still holds (a last block, a footer); the task closes the file."""


#: Opens a :class:`FileWriter` on each new staged file of one task.
FileWriters = Callable[[BinaryIO], FileWriter]


def encode_lines(column: pa.Array, charset: str, owner: str = "files sink") -> bytes:
    """The strings of ``column`` as newline-terminated lines (a null is an empty line).

    A value holding a newline, or ending with ``\\r``, would not read back as itself (it would be
    two lines, or lose its ``\\r`` to the ``\\r\\n`` rule): a :class:`SinkError` names the row.
    """
    strings = column.cast(pa.string()).fill_null("")
    joined = pc.binary_join_element_wise(strings, "", "\n")  # each value + "\n", no Python loop
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32, count=len(joined) + 1, offset=joined.offset * 4)
    data = joined.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]] if len(joined) else b""
    # One newline per row and no "\r\n" is the whole check, at memchr speed.
    if data.count(b"\n") != len(joined) or b"\r\n" in data:
        _reject_multiline(strings, owner)
    if charset == "utf-8":
        return data
    try:
        return data.decode("utf-8").encode(charset)
    except UnicodeEncodeError as exc:
        raise SinkError(f"{owner}: character {exc.object[exc.start]!r} cannot be written in {charset}") from None


def _reject_multiline(strings: pa.Array, owner: str) -> None:
    bad = pc.or_(pc.match_substring(strings, "\n"), pc.ends_with(strings, "\r"))
    row = pc.index(bad, True).as_py()
    # The value itself is not shown: it is the user's data, and may be a secret.
    raise SinkError(
        f"{owner}: the value of row {row} (of a batch of {len(strings)}) holds a line break, so it would not "
        f"read back as one line; replace or escape line breaks first (regexp_replace), or write JSON"
    )


class StagedFileSink(Sink):
    """A sink writing files through :class:`StagedCommit`: exactly-once per micro-batch.

    Subclasses provide :attr:`staged` (where and how files are named), :attr:`roll_bytes` (0: one
    file per task; else a new file once the current one holds that many bytes, between batches)
    and either :meth:`encoder` (formats whose batches encode on their own, like lines of text) or
    :meth:`file_writers` (formats with state across a file, like Avro's header and blocks).
    """

    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"
    roll_bytes: int = 0

    @property
    @abstractmethod
    def staged(self) -> StagedCommit:
        """The commit protocol over this sink's file system and directory."""

    def encoder(self, ctx: WriteContext) -> Encoder:
        """How a batch of this task becomes bytes (schema checks belong in ``check_schema``)."""
        raise NotImplementedError(f"{type(self).__name__} gives neither encoder() nor file_writers()")

    def file_writers(self, ctx: WriteContext) -> FileWriters:
        """What writes this task's files; by default each batch's :meth:`encoder` bytes, appended."""
        encode = self.encoder(ctx)
        return lambda out: _EncodedFile(out, encode)

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> Any:
        open_writer = self.file_writers(ctx)
        task = self.staged.task(ctx)
        out: _CountingFile | None = None
        writer: FileWriter | None = None
        try:
            for batch in data:
                if not batch.num_rows:
                    continue
                if writer is None or out is None or (self.roll_bytes and out.written >= self.roll_bytes):
                    if writer is not None:
                        writer.close()
                    out = _CountingFile(task.new_file())
                    writer = open_writer(cast(BinaryIO, out))  # a binary file by duck typing
                writer.write(batch)
            if writer is not None:
                writer.close()
            return task.finish()
        except BaseException:
            task.discard()
            raise

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        self.staged.commit(messages, ctx)

    def abort(self, messages: list[Any], ctx: CommitContext) -> None:
        self.staged.abort(messages, ctx)


class _EncodedFile:
    """The :class:`FileWriter` of formats whose batches encode on their own."""

    def __init__(self, out: BinaryIO, encode: Encoder) -> None:
        self.out = out
        self.encode = encode

    def write(self, batch: pa.RecordBatch) -> None:
        self.out.write(self.encode(batch))

    def close(self) -> None:
        pass


class _CountingFile:
    """A staged file that counts the bytes written to it, for rolling on any file system."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.written = 0

    def write(self, data: bytes) -> int:
        self.out.write(data)
        self.written += len(data)
        return len(data)

    def __getattr__(self, name: str) -> Any:  # flush, tell, ... of the staged file
        return getattr(self.out, name)


__all__ = ["Encoder", "FileWriter", "FileWriters", "StagedFileSink", "encode_lines"]
