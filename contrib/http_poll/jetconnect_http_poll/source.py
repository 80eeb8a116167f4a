"""The polling source: one GET per interval, each answer a row."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime

from jetconnect import ProcessorContext, SourceBuffer, SourceBuilder, StreamSource
from jetconnect.api import check_count


@dataclass
class _Poller:
    url: str
    interval_s: float
    timeout_s: float
    next_due: float = 0.0


def http_poll(url: str, interval_ms: int = 1000, timeout_s: float = 10.0) -> StreamSource:
    """A stream of ``(url, status, body, fetched_at)``, one row per GET of ``url``.

    An ``interval_ms`` that is not a whole number of at least 1 is an ``OptionError`` naming it,
    also when this function is called directly rather than as ``sources.http_poll``.
    """
    interval_ms = check_count(interval_ms, "interval_ms", "http_poll")

    def create(ctx: ProcessorContext) -> _Poller:
        return _Poller(url, interval_ms / 1000, timeout_s)

    def fill(poller: _Poller, buf: SourceBuffer) -> None:
        now = time.monotonic()
        if now < poller.next_due:
            return
        poller.next_due = now + poller.interval_s
        try:
            with urllib.request.urlopen(poller.url, timeout=poller.timeout_s) as response:
                status, body = response.status, response.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:  # an HTTP error answer is data too
            status, body = exc.code, exc.read().decode("utf-8", "replace")
        buf.add((poller.url, status, body, datetime.now(UTC)))

    return (
        SourceBuilder.stream("http_poll", create)
        .fill_buffer_fn(fill)
        .schema("url string, status int, body string, fetched_at timestamp")
        .build()
    )
