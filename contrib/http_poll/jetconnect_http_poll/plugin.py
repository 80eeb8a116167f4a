"""Registers the ``http_poll`` source with jetconnect."""

from jetconnect import hookimpl
from jetconnect_http_poll.source import http_poll


@hookimpl
def register_sources(register):
    register(http_poll, name="http_poll")
