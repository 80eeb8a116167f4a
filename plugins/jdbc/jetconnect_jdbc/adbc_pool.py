"""ADBC connections to PostgreSQL, kept per URL and process like the SQLAlchemy engines.

ADBC's PostgreSQL driver (libpq, C++) moves rows between COPY's binary format and Arrow columns
without a Python object per row. Opening a connection costs tens of milliseconds, a noticeable
share of one Spark partition's read, so each Python worker keeps the ones it opened for later tasks.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy.engine import make_url

from jetconnect_jdbc.engines import scrub

_idle: dict[str, list[Any]] = {}
_lock = threading.Lock()


class AdbcConnectError(Exception):
    """No ADBC connection could be opened; the message is free of the password."""


def libpq_uri(url: str) -> str:
    """The libpq URI of a SQLAlchemy PostgreSQL URL (``postgresql+psycopg://`` -> ``postgresql://``)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@contextmanager
def adbc_connection(url: str) -> Iterator[Any]:
    """An autocommit ADBC connection for ``url``, returned to this process's pool if the block
    ends normally and closed if it raises (its state is then unknown)."""
    connection = _checkout(url)
    try:
        yield connection
    except BaseException:
        _close_quietly(connection)
        raise
    with _lock:
        _idle.setdefault(url, []).append(connection)


def _checkout(url: str) -> Any:
    import adbc_driver_manager

    while True:
        with _lock:
            pooled = _idle.get(url)
            connection = pooled.pop() if pooled else None
        if connection is None:
            break
        if _alive(connection):
            return connection
        _close_quietly(connection)  # the server restarted or dropped it while idle
    import adbc_driver_postgresql.dbapi

    try:
        connection = adbc_driver_postgresql.dbapi.connect(libpq_uri(url), autocommit=True)
    except adbc_driver_manager.Error as exc:
        raise AdbcConnectError(scrub(str(exc).strip(), url)) from None
    with connection.cursor() as cursor:
        # Only text forms depend on these (columns read as text): the same on every server.
        cursor.execute("SET TimeZone = 'UTC'")
        cursor.execute("SET DateStyle = 'ISO, YMD'")
    return connection


def _alive(connection: Any) -> bool:
    import adbc_driver_manager

    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchall()
        return True
    except adbc_driver_manager.Error:
        return False


def _close_quietly(connection: Any) -> None:
    try:
        connection.close()
    except Exception:  # closing a broken connection may fail too; it is dropped either way
        pass


def close_all() -> None:
    """Close every pooled ADBC connection of this process (tests, and after a server restart)."""
    with _lock:
        connections = [c for pooled in _idle.values() for c in pooled]
        _idle.clear()
    for connection in connections:
        _close_quietly(connection)
