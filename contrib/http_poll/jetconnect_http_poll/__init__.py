"""Poll an HTTP endpoint as a stream: an example plugin built only with jetconnect's builders."""

from jetconnect_http_poll.source import http_poll

__all__ = ["http_poll"]
