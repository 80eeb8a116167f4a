"""The user-facing factories: ``sources.hdfs(...)`` and ``sinks.hdfs(...)``.

HDFS is a file system (:class:`~jetconnect_hdfs.filesystem.WebHdfsFileSystem`) plus these factories:
they build the core's files family (:mod:`jetconnect._files`) on it, so reading lines, following
growing files, whole files, Avro and the exactly-once sink are the same code as the files plugin's.
Their parameters are the options of ``spark.read.format("jetconnect.hdfs")`` too: the registry
converts Spark's string options by these annotations.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from jetconnect.api import check_charset, check_count, check_function_option
from jetconnect.errors import OptionError
from jetconnect.files_family import WholeFilesSource, check_batch_reader, split_options_given
from jetconnect_hdfs.batch_reader import HdfsLinesSource, HdfsSparkAccess
from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.filesystem import WebHdfsFileSystem, hdfs_path
from jetconnect_hdfs.sink import HdfsSink, make_sink

SOURCE_FORMATS = ("lines", "bytes", "avro")
_GLOB_CHARS = set("*?[")


def hdfs_source(
    url: str,
    path: str,
    format: str = "lines",
    recursive: bool = False,
    charset: str = "utf-8",
    include_path: bool = False,
    max_split_bytes: int = 128 << 20,
    min_splits: int = 2,
    max_files_per_batch: int = 0,
    avro_schema: str | None = None,
    user: str | None = None,
    proxy_user: str | None = None,
    kerberos: bool = False,
    kerberos_principal: str | None = None,
    kerberos_keytab: str | None = None,
    kerberos_config: str | None = None,
    token: str | None = None,
    timeout: float = 60.0,
    tls_ca_file: str | None = None,
    mapper: Callable[[str, Any], Any] | None = None,
    schema: str | None = None,
    batch_reader: str = "auto",
    rpc_address: str | None = None,
) -> HdfsLinesSource | WholeFilesSource:  # or, format="avro", the files family's AvroSource
    """Lines (or whole files) of HDFS files, read in parallel by block-aligned byte ranges.

    ``url`` is the NameNode's WebHDFS address (``http://namenode:9870``); ``path`` a file, a
    directory, or a directory with a glob in its last part (``/logs/2024-*.txt``).
    ``format="avro"`` reads Avro container files (batch only; ``avro_schema``: a reader schema).
    ``mapper``: Jet's function of (key, value), here of the file's path and each line (or, with
    ``format="bytes"``, its content), returning a row of ``schema`` (default ``value string``).

    As a stream (lines): files that appear and lines appended to files, each line once and whole
    (a line still being written waits for its newline); the offset is ``{file: byte position}``
    with names relative to the path. ``max_files_per_batch`` caps the changed files per micro-batch.

    ``batch_reader``: ``auto`` hands a batch read of plain UTF-8 lines (no mapper, no path column)
    to Spark's own ``hdfs://`` text reader at ``rpc_address`` (default: ``path``'s ``hdfs://``
    authority, else the NameNode's own answer), with the same rows; ``jetconnect`` or ``spark``
    force one (see :mod:`jetconnect_hdfs.batch_reader`).
    """
    if format not in SOURCE_FORMATS:
        raise OptionError(f"hdfs: option 'format' must be one of {', '.join(SOURCE_FORMATS)}; got {format!r}")
    check_function_option(mapper, "mapper", "hdfs", "(path, value)", schema=schema, factory="sources.hdfs")
    if check_batch_reader(batch_reader, "hdfs") == "spark" and format == "bytes":
        raise OptionError("hdfs: option 'batch_reader' 'spark' reads lines or Avro; format 'bytes' is jetconnect's own")
    max_split_bytes = check_count(max_split_bytes, "max_split_bytes", "hdfs")
    min_splits = check_count(min_splits, "min_splits", "hdfs")
    max_files_per_batch = check_count(max_files_per_batch, "max_files_per_batch", "hdfs", minimum=0)
    directory, glob = split_path(path)
    fs = WebHdfsFileSystem(
        HdfsConnection(
            url,
            user,
            proxy_user,
            token=token,
            timeout=timeout,
            tls_ca_file=tls_ca_file,
            kerberos=kerberos,
            kerberos_principal=kerberos_principal,
            kerberos_keytab=kerberos_keytab,
            kerberos_config=kerberos_config,
        )
    )
    if format == "avro":
        if mapper is not None:
            raise OptionError(
                "hdfs: option 'mapper' works with format lines or bytes; Avro records come typed "
                "by their schema (map them with Spark)"
            )
        glob = "*.avro" if glob == "*" else glob
        return _avro().HdfsAvroSource(
            fs,
            directory,
            glob=glob,
            schema=avro_schema,
            recursive=recursive,
            max_split_bytes=max_split_bytes,
            min_splits=min_splits,
            batch_reader=batch_reader,
            own_options=split_options_given(max_split_bytes, min_splits, default_min_splits=2),
            spark_access=HdfsSparkAccess(fs.connection, _rpc_address(path, rpc_address)),
        )
    if format == "bytes":
        return WholeFilesSource(
            fs,
            directory,
            glob=glob,
            recursive=recursive,
            max_split_bytes=max_split_bytes,
            max_files_per_batch=max_files_per_batch,
            mapper=mapper,
            mapped_schema=schema,
            owner="hdfs",
            name="hdfs",
        )
    return HdfsLinesSource(
        fs,
        directory,
        glob=glob,
        charset=check_charset(charset, owner="hdfs"),
        path_column="path" if include_path else None,
        full_paths=True,
        recursive=recursive,
        max_split_bytes=max_split_bytes,
        min_splits=min_splits,
        read_existing=True,  # a stream starts with what the files hold
        max_files_per_batch=max_files_per_batch,
        mapper=mapper,
        mapped_schema=schema,
        owner="hdfs",
        name="hdfs",
        batch_reader=batch_reader,
        rpc_address=_rpc_address(path, rpc_address),
    )


def _rpc_address(path: str, rpc_address: str | None) -> str | None:
    """The NameNode's RPC address for Spark's reader: the option, else ``path``'s own
    ``hdfs://host:port`` (Spark goes where the user's path points), else None (ask the NameNode)."""
    if rpc_address is None and path.startswith("hdfs://") and urlsplit(path).port is not None:
        return path
    return rpc_address


def split_path(path_or_glob: str) -> tuple[str, str]:
    """``/data/logs/*.txt`` -> (``/data/logs``, ``*.txt``); a path without a glob -> (path, ``*``)."""
    try:
        path = hdfs_path(path_or_glob)
    except ValueError as exc:
        raise OptionError(f"hdfs: option 'path': {exc}") from None
    parent, last = posixpath.split(path)
    if _GLOB_CHARS & set(parent):
        raise OptionError(
            f"hdfs: option 'path' may have a glob only in its last part (like /data/logs/*.txt), got {path_or_glob!r}"
        )
    if _GLOB_CHARS & set(last):
        return parent or "/", last
    return path, "*"


def hdfs_sink(
    url: str,
    directory: str,
    format: str = "lines",
    prefix: str = "part",
    suffix: str | None = None,
    charset: str = "utf-8",
    max_file_bytes: int = 0,
    avro_schema: str | None = None,
    codec: str = "null",
    user: str | None = None,
    proxy_user: str | None = None,
    kerberos: bool = False,
    kerberos_principal: str | None = None,
    kerberos_keytab: str | None = None,
    kerberos_config: str | None = None,
    token: str | None = None,
    timeout: float = 60.0,
    tls_ca_file: str | None = None,
    batch_writer: str = "auto",
    rpc_address: str | None = None,
) -> HdfsSink:
    """Text (or Avro) files in an HDFS directory, one per partition and micro-batch, committed exactly once.

    ``batch_writer`` (Avro): ``auto`` hands a plain batch ``write`` to Spark's own Avro writer
    (spark-avro, when the session has it) at ``rpc_address`` (default: the NameNode's answer);
    ``jetconnect`` or ``spark`` force one (see :mod:`jetconnect_hdfs.avro`).
    """
    fs = WebHdfsFileSystem(
        HdfsConnection(
            url,
            user,
            proxy_user,
            token=token,
            timeout=timeout,
            tls_ca_file=tls_ca_file,
            kerberos=kerberos,
            kerberos_principal=kerberos_principal,
            kerberos_keytab=kerberos_keytab,
            kerberos_config=kerberos_config,
        )
    )
    if format == "avro":
        check_count(max_file_bytes, "max_file_bytes", "hdfs", minimum=0)
        try:
            path = hdfs_path(directory)
        except ValueError as exc:
            raise OptionError(f"hdfs: option 'directory': {exc}") from None
        return _avro().HdfsAvroSink(
            fs,
            path,
            schema=avro_schema,
            codec=codec,
            prefix=prefix,
            suffix=suffix or ".avro",
            roll_bytes=max_file_bytes,
            batch_writer=batch_writer,
            spark_access=HdfsSparkAccess(fs.connection, _rpc_address(directory, rpc_address)),
        )
    if check_batch_reader(batch_writer, "hdfs", "batch_writer") == "spark":
        raise OptionError(f"hdfs: option 'batch_writer' 'spark' writes Avro; format {format!r} is jetconnect's own")
    return make_sink(
        fs, directory, format=format, prefix=prefix, suffix=suffix, charset=charset, max_file_bytes=max_file_bytes
    )


def _avro() -> Any:
    """:mod:`jetconnect_hdfs.avro`, which builds on the files family's Avro reader and writer."""
    try:
        from jetconnect_hdfs import avro
    except ImportError as exc:
        raise OptionError(
            "hdfs: option 'format' 'avro' needs the jetconnect-files plugin (pip install 'jetconnect-hdfs[avro]')"
        ) from exc
    return avro


__all__ = ["SOURCE_FORMATS", "hdfs_sink", "hdfs_source", "split_path"]
