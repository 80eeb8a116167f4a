"""Where jetconnect keeps a query's state: a location URL resolved to a file system and a path.

A plain absolute path or a ``file://`` URL is the local disk (on a cluster: a mount every
executor shares); any other scheme is looked up among the file systems plugins register
(hook ``register_file_systems``), e.g. ``webhdfs://namenode:9870/checkpoints/wal``.
"""

from __future__ import annotations

import os
import urllib.parse

from jetconnect._files.filesystem import FileSystem, LocalFileSystem, shared_path
from jetconnect.errors import OptionError


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


__all__ = ["resolve_location"]
