"""No secret leaves the adapter in an error: the one net under every plugin's own redaction.

Plugins mask what they know their clients quote; a client library or a user's function may still
raise with a password in its message. Every call Spark makes into jetconnect passes through
:func:`secrets_kept_out`: an error that quotes a secret of the connector or of its options, in
any spelling, is replaced by a copy with the secret masked and no raw cause chained to it. Secrets
are looked up only when something failed, so the happy path pays nothing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from jetconnect._redaction import quotes_secret, raise_unchained, scrubbed, secrets_in

T = TypeVar("T")


@contextmanager
def secrets_kept_out(*holders: Any) -> Iterator[None]:
    """Re-raise an error that quotes a secret held by ``holders`` (connectors, options) masked."""
    try:
        yield
    except Exception as exc:
        secrets = tuple(secret for holder in holders for secret in secrets_in(holder))
        if quotes_secret(exc, secrets):
            raise_unchained(scrubbed(exc, secrets))
        raise


def guarded(method: Callable[..., T]) -> Callable[..., T]:
    """A method of a reader, writer or data source whose errors keep ``self``'s secrets out."""

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> T:
        with secrets_kept_out(*self.secret_holders()):
            return method(self, *args, **kwargs)

    return call


def guarded_iter(items: Iterator[T], *holders: Any) -> Iterator[T]:
    """``items``, whose errors (raised while Spark pulls them) keep ``holders``' secrets out."""
    with secrets_kept_out(*holders):
        yield from items
