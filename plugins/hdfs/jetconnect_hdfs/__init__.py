"""HDFS for jetconnect: the WebHDFS file system, and factories building the core's files family on it.

``from jetconnect import sources, sinks`` then ``sources.hdfs(url, path)`` /
``sinks.hdfs(url, directory)``, or this package's names directly.
"""

from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.connectors import hdfs_sink, hdfs_source
from jetconnect_hdfs.errors import WebHdfsError
from jetconnect_hdfs.filesystem import BlockLocation, WebHdfsFileSystem
from jetconnect_hdfs.sink import HdfsSink

__all__ = [
    "BlockLocation",
    "HdfsConnection",
    "HdfsSink",
    "WebHdfsError",
    "WebHdfsFileSystem",
    "hdfs_sink",
    "hdfs_source",
]
