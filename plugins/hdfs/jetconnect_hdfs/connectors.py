"""The user-facing factories: ``sources.hdfs(...)`` and ``sinks.hdfs(...)``.

Their parameters are the options of ``spark.read.format("jetconnect.hdfs")`` too: the registry
converts Spark's string options by these annotations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jetconnect.errors import OptionError
from jetconnect.files.line_splits import check_count
from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.filesystem import WebHdfsFileSystem
from jetconnect_hdfs.sink import HdfsSink, make_sink
from jetconnect_hdfs.source import HdfsSource, make_source, split_path


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
    token: str | None = None,
    timeout: float = 60.0,
    mapper: Callable[[str, Any], Any] | None = None,
    schema: str | None = None,
) -> HdfsSource:
    """Lines (or whole files) of HDFS files, read in parallel by block-aligned byte ranges.

    ``url`` is the NameNode's WebHDFS address (``http://namenode:9870``); ``path`` a file, a
    directory, or a directory with a glob in its last part (``/logs/2024-*.txt``).
    ``format="avro"`` reads Avro container files (batch only; ``avro_schema``: a reader schema).
    ``mapper``: Jet's function of (key, value), here of the file's path and each line (or, with
    ``format="bytes"``, its content), returning a row of ``schema`` (default ``value string``).
    """
    fs = WebHdfsFileSystem(HdfsConnection(url, user, proxy_user, kerberos, kerberos_principal, token=token, timeout=timeout))
    if format == "avro":
        if mapper is not None:
            raise OptionError("hdfs: option 'mapper' works with format lines or bytes; Avro records come typed "
                              "by their schema (map them with Spark)")
        directory, glob = split_path(path)
        avro = _files_family("avro_source")
        glob = "*.avro" if glob == "*" else glob
        return avro.AvroSource(fs, directory, glob, avro_schema, recursive, max_split_bytes, min_splits)
    return make_source(
        fs,
        path,
        format=format,
        recursive=recursive,
        charset=charset,
        include_path=include_path,
        max_split_bytes=max_split_bytes,
        min_splits=min_splits,
        max_files_per_batch=max_files_per_batch,
        mapper=mapper,
        schema=schema,
    )


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
    token: str | None = None,
    timeout: float = 60.0,
) -> HdfsSink:
    """Text (or Avro) files in an HDFS directory, one per partition and micro-batch, committed exactly once."""
    fs = WebHdfsFileSystem(HdfsConnection(url, user, proxy_user, kerberos, kerberos_principal, token=token, timeout=timeout))
    if format == "avro":
        check_count(max_file_bytes, "max_file_bytes", "hdfs", minimum=0)
        avro = _files_family("avro_sink")
        return avro.AvroSink(fs, directory, avro_schema, codec, prefix, suffix or ".avro", max_file_bytes)
    return make_sink(
        fs, directory, format=format, prefix=prefix, suffix=suffix, charset=charset, max_file_bytes=max_file_bytes
    )


def _files_family(module: str) -> Any:
    """The Avro reader or writer of the files family, which works over any jetconnect FileSystem."""
    import importlib

    try:
        return importlib.import_module(f"jetconnect_files.{module}")
    except ImportError as exc:
        raise OptionError(
            "hdfs: option 'format' 'avro' needs the jetconnect-files plugin (pip install 'jetconnect-hdfs[avro]')"
        ) from exc


__all__ = ["hdfs_sink", "hdfs_source"]
