"""Registers the JDBC source and sink with jetconnect (entry point ``jdbc``)."""

from __future__ import annotations

from jetconnect import hookimpl
from jetconnect_jdbc.factories import jdbc_sink, jdbc_source


@hookimpl
def register_sources(register) -> None:
    register(jdbc_source, name="jdbc")


@hookimpl
def register_sinks(register) -> None:
    register(jdbc_sink, name="jdbc")
