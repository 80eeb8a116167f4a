"""``sinks.files``: each row's string as one line; one file per partition and micro-batch.

Exactly-once through :mod:`jetconnect.staged_commit`: tasks write hidden staging files, the commit
renames them to deterministic names, and a micro-batch Spark re-delivers after a crash lands on
the names already committed instead of adding a second copy.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from jetconnect.connector import CommitContext, Guarantee, Sink, WriteContext
from jetconnect.errors import SchemaError, SinkError
from jetconnect.filesystem import FileSystem
from jetconnect.line_splits import check_charset
from jetconnect.staged_commit import StagedCommit

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType


def encode_lines(column: pa.Array, charset: str) -> bytes:
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
        raise SinkError(f"files sink: character {exc.object[exc.start]!r} cannot be written in {charset}") from None


class FilesSink(Sink):
    """Lines into ``directory``; files named ``<prefix>-<batch>-<partition>-<seq>-<query><suffix>``."""

    name = "files"
    guarantee = Guarantee.EXACTLY_ONCE
    input_format = "arrow"

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        prefix: str = "part",
        suffix: str = ".txt",
        charset: str = "utf-8",
        roll_bytes: int = 0,
        column: str | None = None,
    ) -> None:
        self.staged = StagedCommit(fs, directory.rstrip("/") or "/", prefix, suffix)
        self.charset = check_charset(charset)
        self.roll_bytes = roll_bytes
        self.column = column

    def check_schema(self, schema: "StructType") -> None:
        self._column_index(schema)

    def _column_index(self, schema: "StructType") -> int:
        from pyspark.sql.types import StringType

        names = [f.name for f in schema.fields]
        if self.column is not None:
            if self.column not in names:
                raise SchemaError(f"files sink: option 'column' names '{self.column}', not one of {names}")
            index = names.index(self.column)
        elif len(names) == 1:
            index = 0
        else:
            raise SchemaError(
                f"files sink writes one string column, got {len(names)} ({', '.join(names)}); "
                f"select one, or name it with option 'column'"
            )
        if not isinstance(schema.fields[index].dataType, StringType):
            raise SchemaError(
                f"files sink: column '{names[index]}' is {schema.fields[index].dataType.simpleString()}, "
                f"not string; cast it or format it first"
            )
        return index

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> Any:
        index = self._column_index(ctx.schema)
        task = self.staged.task(ctx)
        out, written = None, 0
        try:
            for batch in data:
                if not batch.num_rows:
                    continue
                chunk = encode_lines(batch.column(index), self.charset)
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
