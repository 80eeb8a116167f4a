"""jetconnect's TCP socket connector: lines from a TCP server (made replayable by the
write-ahead log) and lines to a TCP server."""

from jetconnect_socket.sink import socket_sink
from jetconnect_socket.source import socket_source

__all__ = ["socket_sink", "socket_source"]
