"""Registers the files family: ``files``, ``file_watcher`` and ``avro`` sources, ``files`` and ``avro`` sinks."""

from __future__ import annotations

from jetconnect import hookimpl
from jetconnect_files import factories


@hookimpl
def register_sources(register) -> None:
    register(factories.files_source, name="files")
    register(factories.file_watcher, name="file_watcher")
    register(factories.avro_source, name="avro")


@hookimpl
def register_sinks(register) -> None:
    register(factories.files_sink, name="files")
    register(factories.avro_sink, name="avro")
