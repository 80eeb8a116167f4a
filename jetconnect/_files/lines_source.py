"""The lines of the text files in a directory, as a batch source over any :class:`FileSystem`.

The driver lists the directory and plans splits (:func:`~jetconnect._files.line_splits.plan_splits`,
cut on storage blocks where the file system has them); executors read their byte ranges with
Hadoop's line-reader rule, so every line is read exactly once wherever the cuts fall. The files
plugin builds it on the local disk, the HDFS plugin on WebHDFS.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from jetconnect._charsets import check_charset
from jetconnect._connector import BatchSource, Guarantee, ReadOutput
from jetconnect._files.filesystem import FileSystem, relative_name
from jetconnect._files.line_splits import (
    FileRange,
    check_count,
    lines_before,
    plan_splits,
    read_line_blocks,
    read_lines,
)
from jetconnect._files.mapper import mapped_batch
from jetconnect._options import check_function_option
from jetconnect.errors import SourceError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql.types import StructType

#: Jet's ``mapOutputFn``: (the file, its line) -> a row of the source's ``schema``, or None.
LineMapper = Callable[[str, str], Any]


def lines_schema(path_column: str | None) -> StructType:
    """``value string`` (as Spark's text source), plus the file's name in ``path_column`` if given."""
    from pyspark.sql.types import StringType, StructField, StructType

    fields = [StructField("value", StringType(), True)]
    if path_column is not None:
        fields.append(StructField(path_column, StringType(), True))
    return StructType(fields)


class LinesSource(BatchSource):
    """Lines of every file matching ``glob`` under ``directory``; large files split by byte ranges.

    ``path_column``: also a column of that name holding each line's file, relative to ``directory``
    (or its full path with ``full_paths``). ``mapper``: Jet's function of (file, line) making each
    row of ``mapped_schema`` (DDL, default ``value string``), called per line in the Spark task; a
    line it returns None for is left out, as in Jet, and an error names the file and the line
    (:mod:`jetconnect._files.mapper`).
    ``owner`` starts every error message, ``name`` is the registered name. Exactly-once: a batch read of files that do not change
    while it runs.
    """

    name = "files"
    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(
        self,
        fs: FileSystem,
        directory: str,
        glob: str = "*",
        charset: str = "utf-8",
        *,
        path_column: str | None = None,
        full_paths: bool = False,
        recursive: bool = False,
        max_split_bytes: int = 128 << 20,
        min_splits: int | None = None,
        mapper: LineMapper | None = None,
        mapped_schema: str | None = None,
        owner: str = "files source",
        name: str | None = None,
    ) -> None:
        self.name = name or type(self).name
        self.fs = fs
        self.directory = directory.rstrip("/") or "/"
        self.glob = glob
        self.owner = owner
        self.charset = check_charset(charset, owner=owner)
        self.path_column = path_column
        self.full_paths = full_paths
        self.recursive = recursive
        self.max_split_bytes = check_count(max_split_bytes, "max_split_bytes", owner)
        # Enough splits to keep every core busy on small inputs, as Spark's own file sources do.
        self.min_splits = check_count(min_splits or 0, "min_splits", owner, 0) or os.cpu_count() or 2
        check_function_option(mapper, "mapper", owner, "(file, line)", schema=mapped_schema)
        self.mapper = mapper
        self.mapped_schema = mapped_schema

    def schema(self) -> StructType:
        if self.mapper is not None:
            from jetconnect._ddl import parse_schema

            return parse_schema(self.mapped_schema or "value string")
        return lines_schema(self.path_column)

    def splits(self) -> Sequence[list[FileRange]]:
        if not self.fs.exists(self.directory):
            raise SourceError(f"{self.owner}: directory '{self.directory}' does not exist")
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        return plan_splits(files, self.max_split_bytes, min_splits=self.min_splits)

    def read_split(self, split: list[FileRange]) -> ReadOutput:
        for range_ in split:
            try:
                yield from self.read_file_range(range_)
            except FileNotFoundError:
                raise SourceError(
                    f"{self.owner}: '{range_.path}' was listed but cannot be read here: deleted since, "
                    f"or the directory is not on a file system shared by the driver and all executors"
                ) from None

    def read_file_range(self, range_: FileRange) -> Iterator[pa.RecordBatch]:
        """The lines starting in ``range_`` as Arrow batches of this source's schema."""
        name = self._shown_name(range_.path)
        mapper = self.mapper
        if mapper is None:
            for lines in read_lines(self.fs, range_, self.charset):
                yield _lines_batch(lines, self.path_column, name)
            return
        schema = self.schema()
        for position, lines in read_line_blocks(self.fs, range_, self.charset):
            yield mapped_batch(
                mapper, name, range_.path, lines.to_pylist(), schema, self.owner, self._line_at(range_.path, position)
            )

    def _shown_name(self, path: str) -> str:
        return path if self.full_paths else relative_name(self.directory, path)

    def _line_at(self, path: str, position: int) -> Callable[[int], str]:
        """Names line ``i`` of a block starting at byte ``position``: its number in the file."""
        return lambda index: f"line {lines_before(self.fs, path, position) + index + 1}"


def _lines_batch(lines: pa.StringArray, path_column: str | None, name: str) -> pa.RecordBatch:
    if path_column is None:
        return pa.RecordBatch.from_arrays([lines], names=["value"])
    names = pa.repeat(pa.scalar(name, pa.string()), len(lines))
    return pa.RecordBatch.from_arrays([lines, names], names=["value", path_column])


__all__ = ["LineMapper", "LinesSource", "lines_schema"]
