"""The HDFS lines source, whose batch read goes to Spark's own ``hdfs://`` reader when it can (#35).

``sources.hdfs(url, path).read(spark)`` of plain lines asks nothing only jetconnect can do, and
Spark's text source reads HDFS in the JVM through Hadoop's own client (PySpark ships it), without
a Python worker, a WebHDFS hop or an Arrow conversion. So, with ``batch_reader="auto"`` (the
default), such a read becomes ``spark.read.text`` over the files jetconnect listed, at the
NameNode's RPC address, with rows made equal to jetconnect's
(:func:`jetconnect.api.spark_text_lines`). jetconnect's reader stays where it adds something: a
mapper, a path column, another charset, Kerberos, tokens or impersonation (which Spark's client
would not carry), streams (offsets of growing files), and reads through
``spark.read.format("jetconnect.hdfs")``. ``explain()`` shows which: ``FileScan text`` or
``BatchScan jetconnect.hdfs``; :meth:`HdfsLinesSource.batch_reader_choice` says why.
"""

from __future__ import annotations

import getpass
import logging
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import requests

from jetconnect.api import GrowingLinesSource, check_batch_reader, spark_text_lines, unsafe_file_name
from jetconnect.errors import OptionError
from jetconnect_hdfs.connection import HdfsConnection

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchReaderChoice:
    """Which reader a batch read uses (``spark`` or ``jetconnect``), why, and for Spark its files."""

    reader: str
    reason: str
    uris: tuple[str, ...] = ()


class HdfsLinesSource(GrowingLinesSource):
    """The core's growing-lines source over WebHDFS, plus the choice of reader for a batch read.

    ``batch_reader``: ``auto``, ``jetconnect`` or ``spark`` (see the module's docstring);
    ``rpc_address``: the NameNode's RPC address for Spark's reader (``hdfs://namenode:8020``),
    by default the ``hdfs://`` authority of ``path`` if it has one, else asked of the NameNode.
    """

    def __init__(self, *args: Any, batch_reader: str = "auto", rpc_address: str | None = None, **options: Any) -> None:
        super().__init__(*args, **options)
        self.batch_reader = check_batch_reader(batch_reader, self.owner)
        self.rpc_address = _rpc_uri(rpc_address) if rpc_address else None

    def read(self, spark: SparkSession, **options: Any) -> DataFrame:
        choice = self.batch_reader_choice(**options)
        _log.info("%s: batch read by %s's reader: %s", self.owner, choice.reader, choice.reason)
        if choice.reader == "spark":
            return spark_text_lines(spark, choice.uris, self.owner)
        return super().read(spark, **options)

    def batch_reader_choice(self, **options: Any) -> BatchReaderChoice:
        """The reader :meth:`read` would use now, and why (an :class:`OptionError` if
        ``batch_reader="spark"`` cannot be honoured)."""
        if self.batch_reader == "jetconnect":
            return BatchReaderChoice("jetconnect", "batch_reader='jetconnect'")
        reason, uris = self._why_not_spark(options)
        if reason is None:
            return BatchReaderChoice("spark", f"plain UTF-8 lines of {len(uris)} files", uris)
        if self.batch_reader == "spark":
            raise OptionError(f"{self.owner}: option 'batch_reader' is 'spark' but {reason}")
        return BatchReaderChoice("jetconnect", reason)

    def _why_not_spark(self, options: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
        connection: HdfsConnection = self.fs.connection  # type: ignore[attr-defined]  # a WebHdfsFileSystem
        if self.mapper is not None:
            return "a mapper runs in Python", ()
        if self.path_column is not None:
            return "include_path asks for jetconnect's path column", ()
        if self.charset != "utf-8":
            return f"Spark's text reader reads UTF-8 only, the charset is {self.charset!r}", ()
        if options:
            return f"read options {sorted(options)} are jetconnect's", ()
        if connection.token or connection.kerberos or connection.proxy_user:
            return "a token, Kerberos or proxy_user is WebHDFS authentication Spark's client does not take", ()
        local_user = os.environ.get("HADOOP_USER_NAME") or getpass.getuser()
        if connection.user not in (None, local_user):
            return f"user {connection.user!r} is not the Hadoop user Spark reads as ({local_user!r})", ()
        if not self.fs.exists(self.directory):
            return f"'{self.directory}' does not exist (jetconnect's reader says so)", ()
        files = self.fs.list_files(self.directory, self.glob, recursive=self.recursive)
        if not files:
            return "no file matches", ()
        odd = unsafe_file_name([f.path for f in files])
        if odd is not None:
            return f"the name {odd!r} has characters Spark's reader takes for a glob or a URI", ()
        rpc = self.rpc_address or _namenode_rpc(connection.url, connection.timeout)
        if rpc is None:
            return "the NameNode did not say its RPC address (give option rpc_address)", ()
        return None, tuple(rpc + f.path for f in files)


def _rpc_uri(address: str) -> str:
    """``hdfs://host:port`` from ``hdfs://host:port[/...]`` or ``host:port``."""
    parts = urlsplit(address if "://" in address else f"hdfs://{address}")
    if parts.scheme != "hdfs" or not parts.hostname or parts.port is None:
        raise OptionError(f"hdfs: option 'rpc_address' must be like hdfs://namenode:8020, got {address!r}")
    return f"hdfs://{parts.netloc}"


def _namenode_rpc(url: str, timeout: float) -> str | None:
    """``hdfs://<the WebHDFS host>:<RPC port>``: the port from the NameNode's JMX (``HostAndPort``,
    whose host is the NameNode's own name for itself, which clients may not resolve); None if the
    NameNode does not answer it."""
    query = "Hadoop:service=NameNode,name=NameNodeStatus"
    try:
        response = requests.get(f"{url.rstrip('/')}/jmx", params={"qry": query}, timeout=min(timeout, 10.0))
        response.raise_for_status()
        host_and_port = response.json()["beans"][0]["HostAndPort"]
        port = int(str(host_and_port).rsplit(":", 1)[1])
    except (requests.RequestException, ValueError, KeyError, IndexError, TypeError):
        return None
    host = urlsplit(url).hostname
    return f"hdfs://{host}:{port}" if host else None


__all__ = ["BatchReaderChoice", "HdfsLinesSource"]
