"""Connections: one SQLAlchemy engine per URL and process, and URLs safe to show in messages.

Sources and sinks are pickled to executors with their URL only; each Python worker builds its own
engine (connection pool) the first time it needs one and reuses it for every later task.
"""

from __future__ import annotations

import threading

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from jetconnect.options import redact

_engines: dict[str, Engine] = {}
_lock = threading.Lock()


def engine_for(url: str) -> Engine:
    """The process-wide engine for ``url``; SQLite gets a lock time-out instead of failing fast."""
    with _lock:
        engine = _engines.get(url)
        if engine is None:
            parsed = make_url(url)
            kwargs: dict = {"pool_pre_ping": True}
            if parsed.get_backend_name() == "sqlite":
                # Several Spark tasks write one SQLite file: wait for the lock rather than fail.
                kwargs["connect_args"] = {"timeout": 60}
            engine = sa.create_engine(parsed, **kwargs)
            if parsed.get_backend_name() == "sqlite":
                _use_real_sqlite_transactions(engine)
            _engines[url] = engine
        return engine


def _use_real_sqlite_transactions(engine: Engine) -> None:
    """SQLAlchemy's documented fix for pysqlite, which otherwise starts transactions late and
    breaks SAVEPOINT: the sink's transaction must hold the rows and the progress record together."""

    @sa.event.listens_for(engine, "connect")
    def _autocommit_driver(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None

    @sa.event.listens_for(engine, "begin")
    def _begin(conn):  # type: ignore[no-untyped-def]
        conn.exec_driver_sql("BEGIN")


def dispose_all() -> None:
    """Close every pooled connection of this process (tests, and after a server restart)."""
    with _lock:
        for engine in _engines.values():
            engine.dispose()
        _engines.clear()


def dialect_name(url: str) -> str:
    """``postgresql``, ``sqlite``, ... without connecting."""
    return make_url(url).get_backend_name()


def safe_url(url: str | URL) -> str:
    """``url`` with its password replaced by ``***``, fit for errors and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as nothing rather than risk a secret
        return "<unparsable database URL>"


def scrub(text: str, url: str | URL) -> str:
    """``text`` with the password of ``url`` (plain and URL-encoded) removed."""
    try:
        parsed = make_url(url)
    except Exception:
        return text
    password = parsed.password
    if not password:
        return text
    from urllib.parse import quote_plus

    return redact(text, [str(password), quote_plus(str(password))])
