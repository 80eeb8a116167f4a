"""Where jetconnect keeps a query's state: a location URL resolved to a file system and a path.

A plain absolute path or a ``file://`` URL is the local disk (on a cluster: a mount every
executor shares); any other scheme is looked up among the file systems plugins register
(hook ``register_file_systems``), e.g. ``webhdfs://namenode:9870/checkpoints/wal``.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Mapping

from jetconnect._files.filesystem import FileSystem, LocalFileSystem, shared_path
from jetconnect.errors import OptionError

#: Spark's session setting for where a query without a ``checkpointLocation`` option keeps its
#: checkpoint (in ``<root>/<query name>``).
CHECKPOINT_CONF = "spark.sql.streaming.checkpointLocation"
#: The option the Spark adapter passes a stream with the session's :data:`CHECKPOINT_CONF`: the
#: adapter alone sees the session, and a source keeping state of its own defaults beside it.
CHECKPOINT_ROOT = "jetconnect.checkpoint_root"
#: The option naming where a builder stream keeps its round records and spools (its write-ahead
#: log; :mod:`jetconnect._run_directory` knows the layout under it).
WAL_LOCATION = "wal_location"
#: The folder under the checkpoint root that holds the builder streams' state, one folder per source.
WAL_FOLDER = "jetconnect-wal"


def resolve_location(location: str | os.PathLike[str], what: str) -> tuple[FileSystem, str]:
    """The file system serving ``location`` and the path on it; ``what`` names the option in errors."""
    text = os.fspath(location)
    scheme = urllib.parse.urlsplit(text).scheme.lower()
    if scheme in ("", "file") or len(scheme) == 1:  # a one-letter "scheme" is a Windows drive
        return LocalFileSystem(), shared_path(text, what)
    from jetconnect._registry import get_registry

    resolvers = get_registry().file_systems
    if scheme not in resolvers:
        known = ", ".join(f"{s}://" for s in sorted(resolvers)) or "none installed"
        raise OptionError(
            f"{what}: no file system for '{scheme}://' (registered: {known}); use an absolute path on a "
            f"shared mount, or install the plugin that serves the scheme"
        )
    return resolvers[scheme](text)


def default_wal_location(options: Mapping[str, str], source: str) -> str | None:
    """Where a builder stream keeps its round records and spools when no ``wal_location`` is given.

    ``<root>/jetconnect-wal/<source>`` when the session sets :data:`CHECKPOINT_CONF` (the adapter
    passes it as option :data:`CHECKPOINT_ROOT`), else None. The source's name keeps streams apart,
    and each query's records go in a folder named after the run its checkpoint records, so two
    queries reading one source never share one. Beside Spark's own checkpoints, that storage is
    durable and seen by the driver and every executor as the checkpoint is.
    """
    root = options.get(CHECKPOINT_ROOT)
    if not root:
        return None
    if root.startswith("file:") and not root.startswith("file://"):
        root = root[len("file:") :]  # Hadoop's file:/path form, as Spark may print it
    folder = re.sub(r"[^A-Za-z0-9._-]", "_", source) or "source"
    return f"{root.rstrip('/')}/{WAL_FOLDER}/{folder}"


__all__ = [
    "CHECKPOINT_CONF",
    "CHECKPOINT_ROOT",
    "WAL_FOLDER",
    "WAL_LOCATION",
    "default_wal_location",
    "resolve_location",
]
