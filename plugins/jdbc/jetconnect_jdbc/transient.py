"""Which database errors are worth retrying: a lost connection, a server restarting, a locked file.

Constraint violations, bad SQL and bad data are not: retrying them only delays the same error.
Nor is a connection the server refused for good: a wrong password, an unknown role or database, a
server certificate the client does not trust (or that names another host), a plaintext client on
a TLS-only server (the core's :func:`~jetconnect.api.connection_failure` tells those apart).
"""

from __future__ import annotations

import sqlalchemy as sa

from jetconnect.api import Backoff, connection_failure, explain_connection_failure, is_permanent_connection_failure

#: SQLSTATE classes and codes of errors that go away by themselves (PostgreSQL and the standard).
_TRANSIENT_CLASSES = ("08", "53", "57P")  # connection exception, insufficient resources, shutdown
_TRANSIENT_CODES = ("40001", "40P01")  # serialization failure, deadlock
#: What a server says when it refuses a connection for good, beyond credentials and TLS (which the
#: core knows): an unknown database, a missing privilege. Drivers raise these at connect time
#: without a SQLSTATE.
_REFUSALS = (
    "does not exist",
    "permission denied",
)


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (a SQLAlchemy ``DBAPIError``) may succeed if the work is simply done again."""
    if not isinstance(exc, sa.exc.DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate:
        return sqlstate.startswith(_TRANSIENT_CLASSES) or sqlstate in _TRANSIENT_CODES
    if type(orig).__module__ == "sqlite3":
        message = str(orig).lower()
        return "locked" in message or "busy" in message
    # A driver error without SQLSTATE is raised at connect time: the server was not reached (worth
    # retrying) or it refused the credentials or the database (retrying only delays the error)
    return isinstance(exc, sa.exc.OperationalError) and not is_refusal(str(orig))


def is_refusal(message: str) -> bool:
    """Whether a failure to connect, told by ``message`` alone, is the server refusing for good
    (credentials, certificate, protocol, role, database, an access rule) rather than not being reached."""
    lowered = message.lower()
    return is_permanent_connection_failure(message) or any(refusal in lowered for refusal in _REFUSALS)


def cannot_connect(owner: str, message: str) -> str:
    """The text of the error a refused or failed connection becomes: the owner, what kind of failure
    it was and what to check (authentication refused, certificate not trusted, ...), then the
    driver's own words (``message``, already free of secrets)."""
    return f"{owner}: cannot connect: {explain_connection_failure(message)}{message}"


def connection_failure_words(message: str) -> str:
    """``"not reachable "`` (the kind ``message`` tells, and a space) or ``""``: for the end of a
    message that already quotes the driver's error."""
    kind = connection_failure(message)
    return f"{kind.value} " if kind is not None else ""


def retry_backoff(deadline: float) -> Backoff:
    """The backoff of every JDBC retry (source connections, COPY's connection, sink writes): 0.2 s
    doubling up to 5 s, for ``deadline`` seconds (the connector's ``retry_deadline``)."""
    return Backoff(initial=0.2, maximum=5.0, deadline=deadline)
