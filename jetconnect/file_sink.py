"""The exactly-once file sink, written once: subclasses only say how a batch becomes bytes.

Staging, rolling to a new file by size, the commit that renames staged files to their final
names and the clean-up of a failed task live here (over :mod:`jetconnect.staged_commit`), so the
text sinks of the files and HDFS plugins differ only in their encoding and file system.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jetconnect.connector import CommitContext, Guarantee, Sink, WriteContext
from jetconnect.errors import SinkError
from jetconnect.staged_commit import StagedCommit

#: Turns one Arrow batch into the bytes appended to the current file.
Encoder = Callable[[pa.RecordBatch], bytes]


def encode_lines(column: pa.Array, charset: str, owner: str = "files sink") -> bytes:
    """The strings of ``column`` as newline-terminated lines (a null is an empty line)."""
    strings = column.cast(pa.string()).fill_null("")
    joined = pc.binary_join_element_wise(strings, "", "\n")  # each value + "\n", no Python loop
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32, count=len(joined) + 1, offset=joined.offset * 4)
    data = joined.buffers()[2].to_pybytes()[offsets[0] : offsets[-1]] if len(joined) else b""
    if charset == "utf-8":
        return data
    try:
        return data.decode("utf-8").encode(charset)
    except UnicodeEncodeError as exc:
        raise SinkError(f"{owner}: character {exc.object[exc.start]!r} cannot be written in {charset}") from None


class StagedFileSink(Sink):
    """A sink writing files through :class:`StagedCommit`: exactly-once per micro-batch.

    Subclasses provide :attr:`staged` (where and how files are named), :attr:`roll_bytes` (0: one
    file per task) and :meth:`encoder`.
    """

    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"
    roll_bytes: int = 0

    @property
    @abstractmethod
    def staged(self) -> StagedCommit:
        """The commit protocol over this sink's file system and directory."""

    @abstractmethod
    def encoder(self, ctx: WriteContext) -> Encoder:
        """How a batch of this task becomes bytes (schema checks belong in ``check_schema``)."""

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> Any:
        encode = self.encoder(ctx)
        task = self.staged.task(ctx)
        out, written = None, 0
        try:
            for batch in data:
                if not batch.num_rows:
                    continue
                chunk = encode(batch)
                if out is None or (self.roll_bytes and written and written + len(chunk) > self.roll_bytes):
                    out, written = task.new_file(), 0
                out.write(chunk)
                written += len(chunk)
            return task.finish()
        except BaseException:
            task.discard()
            raise

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        self.staged.commit(messages, ctx)

    def abort(self, messages: list[Any], ctx: CommitContext) -> None:
        self.staged.abort(messages, ctx)


__all__ = ["Encoder", "StagedFileSink", "encode_lines"]
