"""Which database errors are worth retrying: a lost connection, a server restarting, a locked file.

Constraint violations, bad SQL and bad data are not: retrying them only delays the same error.
"""

from __future__ import annotations

import sqlalchemy as sa

#: SQLSTATE classes and codes of errors that go away by themselves (PostgreSQL and the standard).
_TRANSIENT_CLASSES = ("08", "53", "57P")  # connection exception, insufficient resources, shutdown
_TRANSIENT_CODES = ("40001", "40P01")  # serialization failure, deadlock


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
    # A driver error without SQLSTATE is raised before the server answered: the connection failed.
    return isinstance(exc, sa.exc.OperationalError)
