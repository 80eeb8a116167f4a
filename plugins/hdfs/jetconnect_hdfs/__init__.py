"""HDFS for jetconnect over WebHDFS: a block-aligned parallel source and an exactly-once sink.

``from jetconnect import sources, sinks`` then ``sources.hdfs(url, path)`` /
``sinks.hdfs(url, directory)``, or this package's names directly.
"""

from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.connectors import hdfs_sink, hdfs_source
from jetconnect_hdfs.errors import WebHdfsError
from jetconnect_hdfs.filesystem import BlockLocation, HdfsFileInfo, WebHdfsFileSystem
from jetconnect_hdfs.sink import HdfsSink
from jetconnect_hdfs.source import HdfsSource

__all__ = [
    "BlockLocation",
    "HdfsConnection",
    "HdfsFileInfo",
    "HdfsSink",
    "HdfsSource",
    "WebHdfsError",
    "WebHdfsFileSystem",
    "hdfs_sink",
    "hdfs_source",
]
