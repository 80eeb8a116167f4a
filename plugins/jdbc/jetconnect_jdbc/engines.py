"""Connections: one SQLAlchemy engine per URL and process, and URLs safe to show in messages.

Sources and sinks are pickled to executors with their URL only; each Python worker builds its own
engine (connection pool) the first time it needs one and reuses it for every later task.
"""

from __future__ import annotations

import re
import threading

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from jetconnect.errors import OptionError
from jetconnect.redaction import redact_url

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
    """``url`` as text with its password replaced by ``***``, fit for errors and logs."""
    return redact_url(url if isinstance(url, str) else url.render_as_string(hide_password=False))


def check_url(url: str, owner: str) -> None:
    """Refuse a URL whose password SQLAlchemy would cut at an unencoded ``@`` (the rest of the
    password would become the host name, be connected to and shown in errors)."""
    raw = _raw_password(url)
    if raw is not None and "@" in raw:
        raise OptionError(
            f"{owner}: option 'url' has a password with an unencoded '@': percent-encode the password "
            "(urllib.parse.quote_plus) or build the URL with sqlalchemy.URL.create"
        )


#: A URL string's parts around the password as typed: from ``user:`` to the *last* ``@``.
_USERINFO = re.compile(r"^(?P<head>[\w+.-]+://[^:/@]*:)(?P<password>.*)(?P<tail>@[^@]*)$", re.DOTALL)


def _raw_password(url: str | URL) -> str | None:
    """The password as typed in a URL string (SQLAlchemy's parser stops at its first ``@``)."""
    typed = _USERINFO.match(url) if isinstance(url, str) else None
    return typed["password"] if typed else None
