"""The hooks a jetconnect plugin implements (pluggy project name ``jetconnect``).

A plugin is a module with ``@hookimpl`` functions, found through the entry-point group
``jetconnect``::

    from jetconnect import hookimpl

    @hookimpl
    def register_sources(register):
        register(my_source, name="my_source")

The guarantee is not given at ``register()``: ``jetconnect plugins`` reads it from the connector
(the ``guarantee`` and ``guarantee_option`` of the class the factory's return annotation names).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    from collections.abc import Callable

    from jetconnect._files.filesystem import FileSystem
    from jetconnect._registry import Register

hookspec = pluggy.HookspecMarker("jetconnect")
hookimpl = pluggy.HookimplMarker("jetconnect")


@hookspec
def register_sources(register: Register) -> None:
    """Register source factories: ``register(factory, name=..., from_options=...)``.

    ``factory(**kwargs)`` returns a :class:`~jetconnect._connector.Source`; it serves both
    ``sources.<name>(...)`` and ``spark.read.format(<name>)``, whose string options are converted
    to the factory's parameters by their annotations (or by ``from_options(Options)`` if given).
    """


@hookspec
def register_sinks(register: Register) -> None:
    """Register sink factories, as :func:`register_sources` does for sources."""


@hookspec
def register_file_systems(register: Callable[[str, Callable[[str], tuple[FileSystem, str]]], None]) -> None:
    """Register file systems by URL scheme: ``register("webhdfs", resolve)``.

    ``resolve(url)`` returns ``(file_system, path)``: the :class:`~jetconnect._files.filesystem.FileSystem`
    that serves the URL and the path on it. Locations jetconnect keeps state in (``wal_location``)
    are resolved this way, so they may live on any registered file system.
    """
