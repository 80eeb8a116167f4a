"""Connections: one SQLAlchemy engine per URL and process, and URLs safe to show in messages.

Sources and sinks are pickled to executors with their URL only; each Python worker builds its own
engine (connection pool) the first time it needs one and reuses it for every later task.
"""

from __future__ import annotations

import json
import re
import threading
from typing import NoReturn
from urllib.parse import quote, quote_plus

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine, make_url

from jetconnect.errors import OptionError
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
    typed = _USERINFO.match(url) if isinstance(url, str) else None
    if typed and "@" in typed["password"]:
        # SQLAlchemy would cut the password at its '@' and render the rest as the host
        return f"{typed['head']}***{typed['tail']}"
    try:
        shown = make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as nothing rather than risk a secret
        return "<unparsable database URL>"
    return scrub(shown, url)


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


def password_forms(url: str | URL) -> list[str]:
    """Every spelling of ``url``'s password a message may quote, longest first: as typed, decoded,
    URL-encoded, and quoted the way libpq, SQL, Python and JSON quote it."""
    try:
        password = make_url(url).password
    except Exception:
        password = None
    plain = [str(p) for p in (password, _raw_password(url)) if p]
    forms: set[str] = set()
    for text in plain:
        libpq = text.replace("\\", "\\\\").replace("'", "\\'")  # how libpq_dsn quotes it
        forms.update({
            text, quote_plus(text), quote(text), quote(text, safe=""), libpq, libpq.replace("'", "''"),
            text.replace("'", "''"), repr(text)[1:-1], json.dumps(text)[1:-1],
        })
    return sorted((f for f in forms if f), key=len, reverse=True)


#: ``password=...`` of a libpq connection string, quoted or not, whatever the password is.
_LIBPQ_PASSWORD = re.compile(r"""(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s'"]+)""", re.IGNORECASE)


def scrub(text: str, url: str | URL) -> str:
    """``text`` with the password of ``url`` removed, in every form :func:`password_forms` knows,
    and any libpq ``password=...`` setting masked (a driver may quote its connection string)."""
    return _LIBPQ_PASSWORD.sub(r"\1***", redact(text, password_forms(url)))


def raise_unchained(error: BaseException) -> NoReturn:
    """Raise ``error`` with no chained exception: the driver's own exception, which ``from None``
    only hides from tracebacks (it stays in ``__context__``), may quote the password."""
    try:
        raise error
    finally:
        error.__cause__ = None
        error.__context__ = None
