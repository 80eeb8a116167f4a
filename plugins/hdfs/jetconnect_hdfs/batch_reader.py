"""The HDFS lines source, whose batch read goes to Spark's own ``hdfs://`` reader when it can (#35).

``sources.hdfs(url, path).read(spark)`` of plain lines asks nothing only jetconnect can do, and
Spark's text source reads HDFS in the JVM through Hadoop's own client (PySpark ships it), without
a Python worker, a WebHDFS hop or an Arrow conversion. So, with ``batch_reader="auto"`` (the
default), such a read becomes ``spark.read.text`` over the files jetconnect listed, at the
NameNode's RPC address, with rows made equal to jetconnect's
(:func:`jetconnect._files.spark_text.spark_text_lines`). The decision is the core's, shared with the files
source (:class:`jetconnect.files_family.SparkTextLinesSource`: mapper, path column, charset, compressed
names, byte order marks, ...); HDFS adds what Spark's client would not carry (Kerberos,
tokens, impersonation, another user, TLS). Streams (offsets of growing files) and reads through
``spark.read.format("jetconnect.hdfs")`` stay jetconnect's. ``explain()`` shows which: ``FileScan text`` or
``BatchScan jetconnect.hdfs``; :meth:`HdfsLinesSource.batch_reader_choice` says why.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import requests

from jetconnect.api import FileInfo
from jetconnect.errors import OptionError
from jetconnect.files_family import GrowingLinesSource, SparkTextLinesSource
from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.filesystem import WebHdfsFileSystem


class HdfsSparkAccess:
    """How Spark's own Hadoop client reaches what an HDFS connector reaches through WebHDFS: the
    NameNode's RPC address (``rpc_address``, ``hdfs://namenode:8020``; by default asked of the
    NameNode), and why it cannot where WebHDFS carries what Spark's client does not (tokens,
    impersonation, another user, TLS). Shared by the lines source and the Avro source and sink."""

    def __init__(self, connection: HdfsConnection, rpc_address: str | None = None) -> None:
        self.connection = connection
        self.rpc_address = _rpc_uri(rpc_address) if rpc_address else None

    def refusal(self) -> str | None:
        """Why Spark's client cannot act as this connector does, or None."""
        connection = self.connection
        if connection.token or connection.kerberos or connection.proxy_user:
            return "a token, Kerberos or proxy_user is WebHDFS authentication Spark's client does not take"
        if connection.url.startswith("https://"):
            # Spark's client reads over the NameNode's RPC and the DataNodes' data transfer, which
            # an HTTPS-only HDFS without Kerberos leaves unencrypted: the user asked for TLS
            return "an https:// WebHDFS URL asks for TLS, which Spark's hdfs:// client (RPC and data transfer) would not use"
        local_user = os.environ.get("HADOOP_USER_NAME") or getpass.getuser()
        if connection.user not in (None, local_user):
            return f"user {connection.user!r} is not the Hadoop user Spark reads as ({local_user!r})"
        return None

    def uris(self, paths: Sequence[str]) -> tuple[str | None, tuple[str, ...]]:
        """(None, the ``hdfs://`` URIs of ``paths``), or (why there are none, ())."""
        rpc = self.rpc_address or _namenode_rpc(self.connection.url, self.connection.timeout)
        if rpc is None:
            return "the NameNode did not say its RPC address (give option rpc_address)", ()
        return None, tuple(rpc + path for path in paths)


class HdfsLinesSource(SparkTextLinesSource, GrowingLinesSource):
    """The core's growing-lines source over WebHDFS, whose batch read the core's
    :class:`~jetconnect.files_family.SparkTextLinesSource` hands to Spark when it can; this class adds only
    what is HDFS's own: the ``hdfs://`` URIs and what WebHDFS carries that Spark's client does not.

    ``batch_reader``: ``auto``, ``jetconnect`` or ``spark`` (see the module's docstring);
    ``rpc_address``: the NameNode's RPC address for Spark's reader (``hdfs://namenode:8020``),
    by default the ``hdfs://`` authority of ``path`` if it has one, else asked of the NameNode.
    """

    def __init__(self, fs: WebHdfsFileSystem, *args: Any, rpc_address: str | None = None, **options: Any) -> None:
        super().__init__(fs, *args, **options)
        self.spark_access = HdfsSparkAccess(fs.connection, rpc_address)

    def spark_client_refusal(self) -> str | None:
        return self.spark_access.refusal()

    def spark_uris(self, files: Sequence[FileInfo]) -> tuple[str | None, tuple[str, ...]]:
        return self.spark_access.uris([f.path for f in files])


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


__all__ = ["HdfsLinesSource", "HdfsSparkAccess"]
