"""The registered factories: keyword parameters typed so Spark's string options convert to them,
handed on by keyword (a reordered parameter fails loudly instead of sending a value to the wrong one).

Each builds its connector on the local file system (or any POSIX mount); another file system
plugs in by building the connector classes with its own :class:`~jetconnect.api.FileSystem`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetconnect.api import check_function_option
from jetconnect.errors import OptionError
from jetconnect.files_family import (
    FileMapper,
    GrowingLinesSource,
    LocalFileSystem,
    LocalLinesSource,
    shared_path,
    split_options_given,
)
from jetconnect_files.avro_sink import AvroSink
from jetconnect_files.avro_source import AvroSource
from jetconnect_files.lines_sink import FilesSink


def files_source(
    directory: str,
    glob: str = "*",
    charset: str = "utf-8",
    include_file_name: bool = False,
    shared_file_system: bool = True,
    recursive: bool = False,
    max_split_bytes: int = 128 << 20,
    min_splits: int = 0,
    batch_reader: str = "auto",
    mapper: FileMapper | None = None,
    schema: str | None = None,
) -> LocalLinesSource:
    """Lines of the files in a directory (batch), large files split by byte ranges.

    ``mapper``: Jet's ``mapOutputFn`` (Python only), a function of (file name, line) making each
    row of ``schema`` (DDL, default ``value string``); a line it returns None for is left out. A
    mapper keeps the read in jetconnect's reader (it runs in Python).

    ``batch_reader``: ``auto`` hands a batch read whose rows Spark's own text reader gives
    identically (UTF-8, no file-name column, nothing compressed, no byte order mark, ...) to
    ``spark.read.text`` over the files jetconnect listed; ``jetconnect`` always reads in Python
    workers; ``spark`` forces Spark's or fails saying why not (see
    :mod:`jetconnect._files.batch_reader`, the decision the HDFS source shares).

    The driver lists the directory and executors read the splits, so the directory must be visible
    at the same path everywhere (local mode, or a shared mount): Jet's ``shared_file_system=True``.
    Jet's ``False`` (each member reads its own local directory) is refused, not ignored: Spark does
    not pin a task to an executor, so no plan can give each executor its own directory once.
    """
    if not shared_file_system:
        raise OptionError(
            "files source: option 'shared_file_system' = false (Jet's 'each member reads its own local "
            "directory') cannot be honoured on Spark, which does not pin tasks to executors; put the files "
            "on a file system every executor sees at the same path (local mode, a shared mount, HDFS) and "
            "leave the option out (it is true)"
        )
    directory = shared_path(directory, "files source: option 'directory'")
    _check_mapper(mapper, schema, include_file_name, "files source", "sources.files")
    return LocalLinesSource(
        LocalFileSystem(),
        directory,
        glob=glob,
        charset=charset,
        path_column="file_name" if include_file_name else None,
        recursive=recursive,
        max_split_bytes=max_split_bytes,
        min_splits=min_splits or None,
        batch_reader=batch_reader,
        own_options=split_options_given(max_split_bytes, min_splits),
        mapper=mapper,
        mapped_schema=schema,
    )


def _check_mapper(mapper: object, schema: str | None, include_file_name: bool, owner: str, factory: str) -> None:
    """A mapper is a Python function, and its rows are its own: a file-name column beside them
    would be silently dropped, so ``include_file_name`` with a mapper is refused."""
    check_function_option(mapper, "mapper", owner, "(file, line)", schema=schema, factory=factory)
    if mapper is not None and include_file_name:
        raise OptionError(
            f"{owner}: give option 'include_file_name' or 'mapper', not both (the mapper is given the "
            f"file's name: put it in the row it returns)"
        )


def file_watcher(
    directory: str,
    glob: str = "*",
    charset: str = "utf-8",
    include_file_name: bool = False,
    read_existing: bool = False,
    recursive: bool = False,
    max_split_bytes: int = 64 << 20,
    mapper: FileMapper | None = None,
    schema: str | None = None,
) -> GrowingLinesSource:
    """Lines appended to the files of a directory, and new files (stream, exactly-once replay).

    ``mapper`` and ``schema``: as for :func:`files_source` (Jet's ``buildWatcher(mapOutputFn)``).
    """
    directory = shared_path(directory, "file_watcher source: option 'directory'")
    _check_mapper(mapper, schema, include_file_name, "file_watcher", "sources.file_watcher")
    return GrowingLinesSource(
        LocalFileSystem(),
        directory,
        glob=glob,
        charset=charset,
        path_column="file_name" if include_file_name else None,
        read_existing=read_existing,
        recursive=recursive,
        max_split_bytes=max_split_bytes,
        mapper=mapper,
        mapped_schema=schema,
    )


def files_sink(
    directory: str,
    prefix: str = "part",
    suffix: str = ".txt",
    charset: str = "utf-8",
    roll_bytes: int = 0,
    column: str | None = None,
    to_string_fn: Callable[[Any], str] | None = None,
    append: bool = True,
) -> FilesSink:
    """One line per row into files committed atomically per partition and micro-batch: a string
    column, or Jet's ``to_string_fn`` of each row; ``append=False`` replaces the directory's files."""
    directory = shared_path(directory, "files sink: option 'directory'")
    return FilesSink(
        LocalFileSystem(),
        directory,
        prefix=prefix,
        suffix=suffix,
        charset=charset,
        roll_bytes=roll_bytes,
        column=column,
        to_string_fn=to_string_fn,
        append=append,
    )


def avro_source(
    directory: str,
    glob: str = "*.avro",
    schema: str | None = None,
    recursive: bool = False,
    max_split_bytes: int = 128 << 20,
    min_splits: int = 0,
    batch_reader: str = "auto",
    mapper: FileMapper | None = None,
    mapped_schema: str | None = None,
) -> AvroSource:
    """Records of Avro container files; ``schema`` is an optional Avro reader schema (JSON).

    ``mapper``: Jet's ``AvroSources.files(directory, mapOutputFn)`` (Python only), a function of
    (file name, record) making each row of ``mapped_schema`` (DDL, default ``value string``; named
    apart from ``schema``, which is the Avro reader schema); a record it returns None for is left out.

    ``batch_reader``: ``auto`` hands a batch read to Spark's own Avro reader (spark-avro, when the
    session has it) over the files jetconnect listed where its rows are provably the same (one
    writer schema, no reader schema that differs from it, ...); ``jetconnect`` always reads in
    Python workers; ``spark`` forces Spark's or fails saying why not (see
    :mod:`jetconnect_files.avro_source`).
    """
    directory = shared_path(directory, "avro source: option 'directory'")
    return AvroSource(
        LocalFileSystem(),
        directory,
        glob=glob,
        schema=schema,
        recursive=recursive,
        max_split_bytes=max_split_bytes,
        min_splits=min_splits or None,
        batch_reader=batch_reader,
        own_options=split_options_given(max_split_bytes, min_splits),
        mapper=mapper,
        mapped_schema=mapped_schema,
    )


def avro_sink(
    directory: str,
    schema: str | None = None,
    codec: str = "null",
    prefix: str = "part",
    suffix: str = ".avro",
    roll_bytes: int = 0,
    batch_writer: str = "auto",
) -> AvroSink:
    """Avro container files (codec null, deflate, snappy or zstd), committed atomically per micro-batch.

    ``batch_writer``: ``auto`` hands a plain batch ``write`` (no ``schema``, no ``roll_bytes``, the
    default names) to Spark's own Avro writer (spark-avro, when the session has it); ``jetconnect``
    always writes in Python workers; ``spark`` forces Spark's or fails saying why not.
    """
    directory = shared_path(directory, "avro sink: option 'directory'")
    return AvroSink(
        LocalFileSystem(),
        directory,
        schema=schema,
        codec=codec,
        prefix=prefix,
        suffix=suffix,
        roll_bytes=roll_bytes,
        batch_writer=batch_writer,
    )
