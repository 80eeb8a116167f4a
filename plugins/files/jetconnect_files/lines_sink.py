"""``sinks.files``: each row's string as one line; one file per partition and micro-batch.

The line is a string column, or what Jet's ``toStringFn`` makes of the row (``to_string_fn``,
a Python function called per row: the columnar path stays the fast default). Jet's ``append``
is Spark's write mode: ``append=False`` replaces the directory's files, as ``mode("overwrite")``.

Exactly-once through :mod:`jetconnect._files.staged_commit`: tasks write hidden staging files, the commit
renames them to deterministic names, and a micro-batch Spark re-delivers after a crash lands on
the names already committed instead of adding a second copy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from jetconnect import CommitContext, WriteContext
from jetconnect.api import FileSystem, check_charset, check_count, check_function_option, spark_rows
from jetconnect.errors import OptionError, SchemaError, SinkError
from jetconnect.files_family import Encoder, StagedCommit, StagedFileSink, encode_lines

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType


class FilesSink(StagedFileSink):
    """Lines into ``directory``; files named ``<prefix>-<batch>-<partition>-<seq>-<query><suffix>``."""

    name = "files"

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        prefix: str = "part",
        suffix: str = ".txt",
        charset: str = "utf-8",
        roll_bytes: int = 0,
        column: str | None = None,
        to_string_fn: Callable[[Any], str] | None = None,
        append: bool = True,
    ) -> None:
        self._staged = StagedCommit(fs, directory.rstrip("/") or "/", prefix, suffix)
        self.charset = check_charset(charset, owner="files sink")
        self.roll_bytes = check_count(roll_bytes, "roll_bytes", "files sink", 0)
        self.column = column
        check_function_option(to_string_fn, "to_string_fn", "files sink", "the row", factory="sinks.files")
        if to_string_fn is not None and column is not None:
            raise OptionError("files sink: give option 'column' or 'to_string_fn', not both")
        self.to_string_fn = to_string_fn
        self.append = append

    def check_schema(self, schema: StructType) -> None:
        if self.to_string_fn is None:
            self._column_index(schema)

    def write_partition(self, data: Iterator[pa.RecordBatch], ctx: WriteContext) -> Any:
        if not self.append and ctx.batch_id is not None:
            raise SinkError(
                "files sink: append=false replaces the directory's files on every write, so each "
                "micro-batch of a stream would delete the ones before; leave append true for streams"
            )
        return super().write_partition(data, ctx)

    def commit(self, messages: list[Any], ctx: CommitContext) -> None:
        super().commit(messages, ctx if self.append else dataclasses.replace(ctx, overwrite=True))

    def _column_index(self, schema: StructType) -> int:
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

    @property
    def staged(self) -> StagedCommit:
        return self._staged

    def encoder(self, ctx: WriteContext) -> Encoder:
        if self.to_string_fn is not None:
            return _RowsToLines(self.to_string_fn, self.charset)
        index = self._column_index(ctx.schema)
        return lambda batch: encode_lines(batch.column(index), self.charset)


class _RowsToLines:
    """Jet's ``toStringFn``: each row, as a pyspark ``Row``, made into its line by the user's function."""

    def __init__(self, fn: Callable[[Any], str], charset: str) -> None:
        self.fn, self.charset = fn, charset
        self.rows_before = 0  # rows of earlier batches of this task, to name a row at fault

    def __call__(self, batch: pa.RecordBatch) -> bytes:
        lines = []
        for number, row in enumerate(spark_rows(batch)):
            line = self.fn(row)
            if not isinstance(line, str):
                raise SinkError(
                    f"files sink: to_string_fn returned {type(line).__name__}, not str, for row "
                    f"{self.rows_before + number} of this task"
                )
            lines.append(line)
        self.rows_before += batch.num_rows
        return encode_lines(pa.array(lines, pa.string()), self.charset)
