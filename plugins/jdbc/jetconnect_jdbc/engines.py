"""Connections: one SQLAlchemy engine per URL and process, and URLs safe to show in messages.

Sources and sinks are pickled to executors with their URL only; each Python worker builds its own
engine (connection pool) the first time it needs one and reuses it for every later task. The
engines live in a core :class:`~jetconnect.api.ClientCache`: a forked worker never uses its
parent's pooled connections.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from jetconnect.api import ClientCache, check_function_option, redact_url
from jetconnect.errors import OptionError

#: Engines by (URL, connection function's key); disposing one closes its pooled connections.
_engines: ClientCache[tuple[str, str], Engine] = ClientCache("jdbc engines", on_close=Engine.dispose)

#: Jet's connection supplier: a function of nothing returning a new DB-API connection.
ConnectionFn = Callable[[], Any]


def _function_key(connection_fn: ConnectionFn | None) -> str:
    """One key per function *definition*: a task unpickles its own copy, which must share the pool."""
    if connection_fn is None:
        return ""
    from pyspark import cloudpickle

    return hashlib.sha1(cloudpickle.dumps(connection_fn)).hexdigest()


def engine_for(url: str, connection_fn: ConnectionFn | None = None) -> Engine:
    """The process-wide engine for ``url``; SQLite gets a lock time-out instead of failing fast.

    With ``connection_fn`` (Jet's connection supplier) the engine's connections come from it, as
    SQLAlchemy's ``creator``; the URL then only names the dialect and driver.
    """
    return _engines.get((url, _function_key(connection_fn)), lambda: _new_engine(url, connection_fn))


def _new_engine(url: str, connection_fn: ConnectionFn | None) -> Engine:
    parsed = make_url(url)
    kwargs: dict = {"pool_pre_ping": True}
    if connection_fn is not None:
        kwargs["creator"] = functools.partial(_connection_of, connection_fn)
    if parsed.get_backend_name() == "sqlite":
        # Several Spark tasks write one SQLite file: wait for the lock rather than fail.
        kwargs["connect_args"] = {"timeout": 60}
    engine = sa.create_engine(parsed, **kwargs)
    if parsed.get_backend_name() == "sqlite":
        _use_real_sqlite_transactions(engine)
    return engine


def _connection_of(connection_fn: ConnectionFn) -> Any:
    """What ``connection_fn`` returns, if it is a DB-API connection (has ``cursor``): else an
    OptionError naming the option, where SQLAlchemy would fail later on a ``None`` without a word of why."""
    connection = connection_fn()
    if connection is None or not callable(getattr(connection, "cursor", None)):
        raise OptionError(
            f"jdbc: option 'connection_fn' returned {type(connection).__name__}, not a DB-API connection "
            f"(one with a cursor() method){'; a function that forgot its return?' if connection is None else ''}"
        )
    return connection


def _use_real_sqlite_transactions(engine: Engine) -> None:
    """SQLAlchemy's documented fix for pysqlite, which otherwise starts transactions late and
    breaks SAVEPOINT: the sink's transaction must hold the rows and the progress record together."""

    @sa.event.listens_for(engine, "connect")
    def _autocommit_driver(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None

    @sa.event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        conn.exec_driver_sql("BEGIN")


def check_connection_fn(connection_fn: Any, owner: str) -> None:
    """A connection supplier must be a Python function (a string option cannot carry one)."""
    check_function_option(
        connection_fn,
        "connection_fn",
        owner,
        "no arguments returning a new DB-API connection (option 'url' then only names the dialect)",
    )


def dispose_all() -> None:
    """Close every pooled connection of this process (tests, and after a server restart)."""
    _engines.close_all()


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
_USERINFO = re.compile(r"(?P<head>[\w+.-]+://[^:/@]*:)(?P<password>.*)(?P<tail>@[^@]*)", re.DOTALL)


def _raw_password(url: str | URL) -> str | None:
    """The password as typed in a URL string (SQLAlchemy's parser stops at its first ``@``)."""
    typed = _USERINFO.fullmatch(url) if isinstance(url, str) else None
    return typed["password"] if typed else None
