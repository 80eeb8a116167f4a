"""The files family, written once over a :class:`FileSystem`: what the files and HDFS plugins build on.

- :mod:`~jetconnect._files.filesystem`: the :class:`FileSystem` protocol and :class:`LocalFileSystem`;
- :mod:`~jetconnect._files.line_splits`: byte-range splits of text files and reading their lines into Arrow;
- :mod:`~jetconnect._files.lines_source`: the lines of a directory's files, as a batch source;
- :mod:`~jetconnect._files.growing_files`: lines appended to a directory's files, as a replayable stream;
- :mod:`~jetconnect._files.whole_files`: whole files as rows, batch or a stream of new files;
- :mod:`~jetconnect._files.staged_commit` and :mod:`~jetconnect._files.sink`: exactly-once file sinks;
- :mod:`~jetconnect._files.avro_schema`: the one mapping between Avro and Spark schemas.

A plugin for another store implements :class:`FileSystem` and registers factories that build
these connectors on it. Names are loaded on first use: core modules that only need the protocol
(round records, spools) do not pay for pyarrow, numpy or pyspark imports they never use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from jetconnect._files.avro_schema import load_avro_schema, to_avro_schema, to_spark_schema
    from jetconnect._files.filesystem import (
        FileInfo,
        FileSystem,
        LocalFileSystem,
        child_path,
        fsync_directory,
        is_hidden,
        relative_name,
        shared_path,
    )
    from jetconnect._files.growing_files import GrowingLinesSource
    from jetconnect._files.line_splits import (
        FileRange,
        advance_lines,
        check_count,
        last_line_end,
        plan_splits,
        read_lines,
    )
    from jetconnect._files.lines_source import LineMapper, LinesSource, lines_schema
    from jetconnect._files.sink import Encoder, FileWriter, FileWriters, StagedFileSink, encode_lines
    from jetconnect._files.staged_commit import StagedCommit, StagedFile, StagedTask, check_name_part
    from jetconnect._files.whole_files import WholeFilesSource

_WHERE = {
    "load_avro_schema": "avro_schema",
    "to_avro_schema": "avro_schema",
    "to_spark_schema": "avro_schema",
    "FileInfo": "filesystem",
    "FileSystem": "filesystem",
    "LocalFileSystem": "filesystem",
    "child_path": "filesystem",
    "fsync_directory": "filesystem",
    "is_hidden": "filesystem",
    "relative_name": "filesystem",
    "shared_path": "filesystem",
    "GrowingLinesSource": "growing_files",
    "FileRange": "line_splits",
    "advance_lines": "line_splits",
    "check_count": "line_splits",
    "last_line_end": "line_splits",
    "plan_splits": "line_splits",
    "read_lines": "line_splits",
    "LineMapper": "lines_source",
    "LinesSource": "lines_source",
    "lines_schema": "lines_source",
    "Encoder": "sink",
    "FileWriter": "sink",
    "FileWriters": "sink",
    "StagedFileSink": "sink",
    "encode_lines": "sink",
    "StagedCommit": "staged_commit",
    "StagedFile": "staged_commit",
    "StagedTask": "staged_commit",
    "check_name_part": "staged_commit",
    "WholeFilesSource": "whole_files",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'jetconnect._files' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"jetconnect._files.{module}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
