"""DuckDB connections with a PostgreSQL database attached, kept per URL and process.

DuckDB's PostgreSQL scanner (its ``postgres_scanner`` extension, shipped on PyPI as a package) runs
``COPY (query) TO STDOUT (FORMAT binary)`` and decodes the rows into Arrow columns in C++, with
no Python object per row. On the bench's table it takes half the client CPU of ADBC's PostgreSQL
driver, which jetconnect used before. Attaching opens a PostgreSQL connection (tens of
milliseconds, a noticeable share of one Spark partition's read), so each Python worker keeps the
ones it opened for later tasks, in a core :class:`~jetconnect.api.ClientCache` of idle lists:
a forked worker starts with none of its parent's.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from jetconnect.api import ClientCache, raise_unchained, redact, redact_url, retry_call, url_secrets
from jetconnect_jdbc.transient import is_refusal, retry_backoff

#: The name the PostgreSQL database is attached under, for ``postgres_query``.
ATTACHED = "pg"
#: Text forms (columns read as text) must not depend on the server's settings, nor string literals
#: (values are inlined into COPY's query, quoted for standard-conforming strings).
_SESSION_OPTIONS = "-c TimeZone=UTC -c DateStyle=ISO,YMD -c standard_conforming_strings=on"


class _Idle:
    """The idle connections of one URL in this process: a task checks one out and returns it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connections: list[Any] = []

    def take(self) -> Any | None:
        with self._lock:
            return self._connections.pop() if self._connections else None

    def put(self, connection: Any) -> None:
        with self._lock:
            self._connections.append(connection)

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for connection in connections:
            _close_quietly(connection)


_idle: ClientCache[str, _Idle] = ClientCache("jdbc duckdb connections", on_close=_Idle.close)


class PostgresConnectError(Exception):
    """No connection to PostgreSQL could be opened; the message is free of the password."""


def libpq_dsn(url: str) -> str:
    """The libpq keyword/value connection string of a SQLAlchemy PostgreSQL URL, query options included."""
    parsed = make_url(url)
    settings: dict[str, Any] = {
        "host": parsed.host,
        "port": parsed.port,
        "user": parsed.username,
        "password": parsed.password,
        "dbname": parsed.database,
        **{key: _last(value) for key, value in parsed.query.items()},
    }
    # the URL's own server options stay; ours come last, so they win where both set one
    settings["options"] = " ".join(filter(None, [settings.get("options"), _SESSION_OPTIONS]))
    return " ".join(f"{key}={_quote(value)}" for key, value in settings.items() if value is not None)


def _last(value: str | tuple[str, ...]) -> str:
    """A URL query option given more than once counts with its last value, as in libpq."""
    return value[-1] if isinstance(value, tuple) else value


def _quote(value: Any) -> str:
    text = str(value)
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@contextmanager
def postgres_via_duckdb(url: str, retry_deadline: float = 0.0) -> Iterator[Any]:
    """A DuckDB connection with ``url``'s database attached as :data:`ATTACHED`, returned to
    this process's pool if the block ends normally and closed if it raises (its state is then
    unknown). A server that cannot be reached (restarting) is tried again with backoff for
    ``retry_deadline`` seconds; one that refuses (credentials, database) fails at once."""
    connection = retry_call(
        lambda: _checkout(url),
        retry_on=(PostgresConnectError,),
        retry_if=lambda exc: not is_refusal(str(exc)),
        what=f"connecting to {redact_url(url)} for COPY",
        backoff=retry_backoff(retry_deadline),
        secrets=url_secrets(url),
    )
    try:
        yield connection
    except BaseException:
        _close_quietly(connection)
        raise
    _idle.get(url, _Idle).put(connection)


def _checkout(url: str) -> Any:
    idle = _idle.get(url, _Idle)
    while True:
        connection = idle.take()
        if connection is None:
            return _open(url)
        if _alive(connection):
            return connection
        _close_quietly(connection)  # the server restarted or dropped it while idle


def _open(url: str) -> Any:
    import duckdb

    connection = duckdb.connect(
        config={
            "threads": 1,  # Spark runs the partitions in parallel; one task, one thread
            "autoinstall_known_extensions": False,  # never a download
            "autoload_known_extensions": False,
        }
    )
    try:
        connection.execute("SET TimeZone = 'UTC'")  # Arrow's label for timestamptz (values are UTC anyway)
        connection.execute(f"LOAD '{_extension_path()}'")
        dsn = libpq_dsn(url).replace("'", "''")
        connection.execute(f"ATTACH '{dsn}' AS {ATTACHED} (TYPE postgres, READ_ONLY)")
    except duckdb.Error as exc:
        _close_quietly(connection)
        # DuckDB's message quotes the whole connection string, password included
        error = PostgresConnectError(redact(str(exc).strip(), url_secrets(url)))
    else:
        return connection
    raise_unchained(error)


def _extension_path() -> Path:
    """The postgres_scanner binary the ``duckdb-extension-postgres-scanner`` package installs."""
    import duckdb
    import duckdb_extension_postgres_scanner

    folder = Path(duckdb_extension_postgres_scanner.__file__).parent / "extensions" / f"v{duckdb.__version__}"
    return folder / "postgres_scanner.duckdb_extension"


def _alive(connection: Any) -> bool:
    import duckdb

    try:
        connection.execute(f"SELECT * FROM postgres_query('{ATTACHED}', 'SELECT 1')").fetchall()
        return True
    except duckdb.Error:
        return False


def _close_quietly(connection: Any) -> None:
    try:
        connection.close()
    except Exception:  # closing a broken connection may fail too; it is dropped either way
        pass
