"""``sinks.files``: each row's string as one line; one file per partition and micro-batch.

Exactly-once through :mod:`jetconnect.staged_commit`: tasks write hidden staging files, the commit
renames them to deterministic names, and a micro-batch Spark re-delivers after a crash lands on
the names already committed instead of adding a second copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jetconnect.connector import WriteContext
from jetconnect.errors import SchemaError
from jetconnect.file_sink import Encoder, StagedFileSink, encode_lines
from jetconnect.filesystem import FileSystem
from jetconnect.line_splits import check_charset, check_count
from jetconnect.staged_commit import StagedCommit

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
    ) -> None:
        self._staged = StagedCommit(fs, directory.rstrip("/") or "/", prefix, suffix)
        self.charset = check_charset(charset)
        self.roll_bytes = check_count(roll_bytes, "roll_bytes", "files sink", 0)
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

    @property
    def staged(self) -> StagedCommit:
        return self._staged

    def encoder(self, ctx: WriteContext) -> Encoder:
        index = self._column_index(ctx.schema)
        return lambda batch: encode_lines(batch.column(index), self.charset)
