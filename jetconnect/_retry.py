"""Retries with exponential backoff, shared by every connector that talks to a server."""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from jetconnect._redaction import describe, raise_unchained
from jetconnect.errors import JetconnectError, OptionError

T = TypeVar("T")
log = logging.getLogger("jetconnect.retry")


class RetriesExhausted(JetconnectError):
    """An operation kept failing with a transient error until the backoff's deadline."""


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: ``initial`` doubling up to ``maximum``, for ``deadline`` s."""

    initial: float = 0.1
    maximum: float = 5.0
    deadline: float = 30.0
    multiplier: float = 2.0

    def __post_init__(self) -> None:
        # a NaN or infinite deadline retried for ever (NaN compares false with everything); the
        # connector checked its own option first, this is the core's last word for any caller
        from jetconnect._options import check_duration

        check_duration(self.initial, "initial", "retry backoff")
        check_duration(self.maximum, "maximum", "retry backoff")
        check_duration(self.deadline, "deadline", "retry backoff", allow_zero=True)
        if check_duration(self.multiplier, "multiplier", "retry backoff") < 1:
            raise OptionError(f"retry backoff: option 'multiplier' must be at least 1, got {self.multiplier!r}")

    def delays(self) -> Iterator[float]:
        """Delays to sleep between attempts, ending when the deadline would be passed."""
        start = time.monotonic()
        delay = self.initial
        while True:
            remaining = self.deadline - (time.monotonic() - start)
            if remaining <= 0:
                return
            # full jitter keeps many tasks that failed together from retrying in lockstep
            yield min(remaining, random.uniform(delay / 2, delay))
            delay = min(self.maximum, delay * self.multiplier)


def retry_call(
    fn: Callable[[], T],
    *,
    retry_on: tuple[type[BaseException], ...],
    what: str,
    backoff: Backoff = Backoff(),
    retry_if: Callable[[BaseException], bool] | None = None,
    on_retry: Callable[[BaseException, float], None] | None = None,
    secrets: Sequence[str] = (),
) -> T:
    """Call ``fn`` until it succeeds; retry only ``retry_on`` errors, until ``backoff.deadline``.

    ``retry_if`` narrows further (e.g. a client with one exception type for transient and
    permanent failures); an error it rejects is raised at once. The final error is a
    :class:`RetriesExhausted` that says ``what`` was being done, how long it was tried and the
    last error. Given ``secrets`` (the caller's word that an error may quote one), every spelling
    of them is masked in what is logged and raised, and the last error is quoted, scrubbed, but
    not chained: a chained exception would carry the secret into every traceback. Without
    ``secrets`` the last error is chained as the cause.
    """
    started = time.monotonic()
    attempts = 0
    delays = backoff.delays()
    while True:
        attempts += 1
        try:
            return fn()
        except retry_on as exc:
            if retry_if is not None and not retry_if(exc):
                raise
            delay = next(delays, None)
            last = describe(exc, secrets)
            if delay is None:
                error = RetriesExhausted(
                    f"{what} failed {attempts} time(s) over {time.monotonic() - started:.1f} s; last error: {last}"
                )
                if secrets:
                    raise_unchained(error)
                raise error from exc
            if on_retry is not None:
                on_retry(exc, delay)
            else:
                log.warning("%s failed (%s); retrying in %.2f s", what, last, delay)
            time.sleep(delay)


__all__ = ["Backoff", "RetriesExhausted", "retry_call"]
