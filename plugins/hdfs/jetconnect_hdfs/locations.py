"""``webhdfs://`` locations: where jetconnect keeps a query's state (``wal_location``) on HDFS.

``webhdfs://namenode:9870/checkpoints/q1-rounds?user=etl`` names the path ``/checkpoints/q1-rounds``
on the WebHDFS endpoint ``http://namenode:9870``, as simple-authenticated user ``etl``
(``webhdfss://`` for https). The round records and spools of builder streams then live on HDFS,
which every executor of a cluster sees.
"""

from __future__ import annotations

import urllib.parse

from jetconnect.errors import OptionError
from jetconnect_hdfs.connection import HdfsConnection
from jetconnect_hdfs.filesystem import WebHdfsFileSystem


def resolve_webhdfs(url: str) -> tuple[WebHdfsFileSystem, str]:
    """The file system and path a ``webhdfs://`` or ``webhdfss://`` URL names."""
    parts = urllib.parse.urlsplit(url)
    if not parts.hostname or not parts.path.startswith("/"):
        raise OptionError(
            f"a webhdfs location needs a host and an absolute path, like webhdfs://namenode:9870/path, got {url!r}"
        )
    query = urllib.parse.parse_qs(parts.query)
    unknown = set(query) - {"user"}
    if unknown:
        raise OptionError(
            f"webhdfs location {parts.scheme}://{parts.netloc}{parts.path}: unknown parameter(s) {sorted(unknown)}; only 'user'"
        )
    http = "https" if parts.scheme == "webhdfss" else "http"
    endpoint = f"{http}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    user = query.get("user", [None])[-1]
    return WebHdfsFileSystem(HdfsConnection(endpoint, user=user)), parts.path


__all__ = ["resolve_webhdfs"]
