"""``sources.files``: the lines of the text files in a directory, as a batch source."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from jetconnect.connector import BatchSource, Guarantee, ReadOutput
from jetconnect.errors import SourceError
from jetconnect.files.filesystem import FileSystem, relative_name
from jetconnect.files.line_splits import FileRange, check_charset, check_count, plan_splits, read_lines

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType


def lines_schema(include_file_name: bool) -> "StructType":
    """``value string`` (as Spark's text source), plus ``file_name`` relative to the directory."""
    from pyspark.sql.types import StringType, StructField, StructType

    fields = [StructField("value", StringType(), True)]
    if include_file_name:
        fields.append(StructField("file_name", StringType(), True))
    return StructType(fields)


def lines_batch(lines: pa.StringArray, file_name: str | None) -> pa.RecordBatch:
    """One Arrow batch of lines, with the file name column when asked for."""
    if file_name is None:
        return pa.RecordBatch.from_arrays([lines], names=["value"])
    names = pa.repeat(pa.scalar(file_name, pa.string()), len(lines))
    return pa.RecordBatch.from_arrays([lines, names], names=["value", "file_name"])


class FilesSource(BatchSource):
    """Lines of every file matching ``glob`` under ``directory``; large files split by byte ranges.

    Exactly-once: a batch read of files that do not change while it runs.
    """

    name = "files"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        glob: str = "*",
        charset: str = "utf-8",
        include_file_name: bool = False,
        recursive: bool = False,
        max_split_bytes: int = 128 << 20,
        min_splits: int | None = None,
    ) -> None:
        self.fs = fs
        self.directory = directory.rstrip("/") or "/"
        self.glob = glob
        self.charset = check_charset(charset)
        self.include_file_name = include_file_name
        self.recursive = recursive
        self.max_split_bytes = check_count(max_split_bytes, "max_split_bytes", "files source")
        # Enough splits to keep every core busy on small inputs, as Spark's own file sources do.
        self.min_splits = check_count(min_splits or 0, "min_splits", "files source", 0) or os.cpu_count() or 2

    def schema(self) -> "StructType":
        return lines_schema(self.include_file_name)

    def splits(self) -> Sequence[list[FileRange]]:
        if not self.fs.exists(self.directory):
            raise SourceError(f"files source: directory '{self.directory}' does not exist")
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        return plan_splits(files, self.max_split_bytes, min_splits=self.min_splits)

    def read_split(self, split: list[FileRange]) -> ReadOutput:
        for range_ in split:
            name = relative_name(self.directory, range_.path) if self.include_file_name else None
            try:
                for lines in read_lines(self.fs, range_, self.charset):
                    yield lines_batch(lines, name)
            except FileNotFoundError:
                raise SourceError(
                    f"files source: '{range_.path}' was listed but cannot be read here: deleted since, "
                    f"or the directory is not on a file system shared by the driver and all executors"
                ) from None
