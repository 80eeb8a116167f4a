"""Registers the socket source and sink with jetconnect."""

from jetconnect import hookimpl
from jetconnect_socket.sink import socket_sink
from jetconnect_socket.source import socket_source


@hookimpl
def register_sources(register):
    # exactly-once for what was received: the write-ahead log replays it after a crash
    register(socket_source, name="socket")


@hookimpl
def register_sinks(register):
    register(socket_sink, name="socket")
