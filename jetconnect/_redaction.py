"""Keeping secrets out of every message, ``repr``, log line and traceback: the one place that knows how.

A secret shows up in more spellings than the one the user typed: percent-encoded in a URL,
backslash-escaped by ``repr`` or JSON, quoted by libpq or SQL. :func:`redact` masks all of them;
:func:`secrets_of` knows which options hold secrets (by name, and the password of any URL value);
:func:`redact_url` masks a URL's password even when it holds ``@``, ``#``, ``/`` or ``%``;
:func:`redact_hosts` masks the passwords pasted into a host list (``user:pass@host:port,...``);
:func:`raise_unchained` raises a clean error without the raw exception it replaces.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn
from urllib.parse import quote, quote_plus, unquote, unquote_plus

MASK = "***"

#: Words that make an option name secret, matched after lower-casing and turning ``_``/``-``
#: into ``.`` (so ``ssl_key_password``, ``sasl.password``, ``api-key`` and ``apiKey`` all count).
SECRET_WORDS = (
    "password",
    "passwd",
    "passcode",
    "secret",
    "token",
    "credential",
    "api.key",
    "apikey",
    "private.key",
    "key.pem",
    "jaas.config",
    "oauthbearer.config",
    # a Schema Registry client's basic.auth.user.info is "user:password"
    "user.info",
)


def is_secret_name(name: str) -> bool:
    """Whether an option called ``name`` holds a secret (its whole value is never shown)."""
    key = re.sub(r"[_\-]", ".", name.lower())
    return any(word in key for word in SECRET_WORDS)


def secret_forms(secret: str) -> set[str]:
    """Every spelling of ``secret`` a message may quote: as is, percent-encoded (both ways) and
    decoded, and escaped the way ``repr``, JSON, libpq, SQL and STOMP headers quote it."""
    if not secret:
        return set()
    forms: set[str] = set()
    for text in {secret, unquote(secret), unquote_plus(secret)}:
        libpq = text.replace("\\", "\\\\").replace("'", "\\'")
        stomp = text.replace("\\", "\\\\").replace("\r", "\\r").replace("\n", "\\n").replace(":", "\\c")
        forms |= {
            text,
            repr(text)[1:-1],
            json.dumps(text)[1:-1],
            libpq,
            libpq.replace("'", "''"),
            text.replace("'", "''"),
            stomp,
            # surrogatepass: a secret no encoding can carry must still be masked, not crash
            quote(text, safe="", errors="surrogatepass"),
            quote(text, errors="surrogatepass"),
            quote_plus(text, errors="surrogatepass"),
        }
    return {f for f in forms if f}


#: ``password=...`` / ``passcode: ...`` settings quoted in a connection string or a protocol frame,
#: whatever the value is (a driver may quote it in a spelling no one predicted); and WebHDFS's
#: ``delegation=`` token, quoted in the URLs of ``requests``' errors.
_SETTING = re.compile(
    r"""(?i)\b(\w*(?:password|passwd|passcode|passphrase)\s*[=:]\s*|(?:pwd|delegation)\s*[=:]\s*)(?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s'",;&]+)"""
)


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every spelling of every secret (see :func:`secret_forms`) replaced by ``***``,
    and any ``password=...`` setting masked."""
    forms: set[str] = set()
    for secret in secrets:
        if secret:
            forms |= secret_forms(secret)
    # longest first: masking a short spelling first would leave the rest of a longer one visible
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, MASK)
    return _SETTING.sub(lambda m: m.group(1) + MASK, text)


# --- URLs ----------------------------------------------------------------------------------------

#: ``password=...`` and the like in a query string (redis-py and libpq take a password there too),
#: also as the end of a longer name: libpq's ``sslpassword`` (a client key's passphrase); and
#: WebHDFS's ``delegation`` (the token a kerberized NameNode puts in its redirects to DataNodes).
_SECRET_QUERY = re.compile(
    r"(?i)[?&;](?:[^=&;#]*(?:password|passwd|passphrase|secret|token)|pass|pwd|auth|api_key|delegation)[^=&;#]*=([^&;#]*)"
)


def _split_userinfo(url: str) -> tuple[str, str | None, str]:
    """``(scheme://, user[:password] or None, host...)`` with the user part ending at the last '@'."""
    scheme, sep, rest = url.partition("://")
    prefix = scheme + sep
    if not sep:
        prefix, rest = "", url
    if rest.startswith("/") or "@" not in rest:  # no authority (sqlite:///path), or no user part
        return prefix, None, rest
    userinfo, _, host = rest.rpartition("@")
    return prefix, userinfo, host


def _secret_spans(url: str) -> list[tuple[int, int]]:
    """Where secrets are in ``url``: the password of the user part and secret query values,
    overlapping spans merged."""
    spans = [m.span(1) for m in _SECRET_QUERY.finditer(url) if m.group(1)]
    prefix, userinfo, _rest = _split_userinfo(url)
    if userinfo is not None and ":" in userinfo:
        begin = len(prefix) + userinfo.index(":") + 1
        spans.append((begin, len(prefix) + len(userinfo)))
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    return merged


def redact_url(url: str) -> str:
    """``url`` with its password, and any password-like query value, replaced by ``***``.

    The user part is taken up to the *last* ``@`` (as :func:`split_credentials` does), so a
    password holding ``@``, ``#``, ``/``, ``?``, ``%``, quotes or backslashes, raw or
    percent-encoded, is hidden whole; where a URL reads two ways, both readings are hidden.
    """
    out, last = [], 0
    for begin, end in _secret_spans(url):
        out += [url[last:begin], MASK]
        last = end
    return "".join(out) + url[last:]


def url_secrets(url: str) -> tuple[str, ...]:
    """The secrets in ``url`` (its password and secret query values) as written and decoded;
    :func:`redact` adds every other spelling."""
    forms: set[str] = set()
    for begin, end in _secret_spans(url):
        written = url[begin:end]
        forms |= {written, unquote(written)}
    return tuple(sorted((f for f in forms if f), key=len, reverse=True))


def split_credentials(url: str) -> tuple[str, str | None, str | None]:
    """``(url without user and password, username, password)``, the last two percent-decoded.

    The user part ends at the *last* ``@``: a password with a raw ``#``, ``/``, ``?`` or ``@``
    is taken whole, where a standard URL parser would cut it there and send the rest as the
    host or path (a literal ``%`` must be written ``%25``, as in any URL).
    """
    prefix, userinfo, rest = _split_userinfo(url)
    if userinfo is None:
        return url, None, None
    user, colon, password = userinfo.partition(":")
    return prefix + rest, unquote(user) or None, unquote(password) if colon else None


# --- host strings --------------------------------------------------------------------------------


def host_secrets(text: str) -> tuple[str, ...]:
    """The passwords pasted into a host string: ``user:password@host:port``, several of them
    comma-separated (Kafka's bootstrap servers, a broker failover list), URLs among them.

    Read like a URL's user part: it ends at the *last* ``@`` of each host, and the password starts
    after the first ``:`` of it. A password holding a comma reads two ways (one host or two), so
    the whole string is read as one host too and both readings are masked.
    """
    if "@" not in text:
        return ()
    found: set[str] = set()
    for entry in {text.strip(), *(part.strip() for part in text.split(","))}:
        if _is_url(entry):
            found.update(url_secrets(entry))
            continue
        userinfo, at, _host = entry.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if at and colon and password:
            found |= {password, unquote(password)}
    return tuple(sorted((f for f in found if f), key=len, reverse=True))


def redact_hosts(text: str) -> str:
    """``text`` (a host, a host list or a URL) with every password in it replaced by ``***``:
    what any message, ``repr`` or log line shows of a host string."""
    if _is_url(text) and "," not in text:
        return redact_url(text)
    return redact(text, host_secrets(text))


# --- options -------------------------------------------------------------------------------------


def _is_url(value: str) -> bool:
    return "://" in value


def secrets_of(options: Mapping[str, Any]) -> tuple[str, ...]:
    """The secrets among ``options``: the value of every secret-named option, and the password
    (and secret query values) of every URL-valued one, such as ``url`` or ``store``."""
    found: set[str] = set()
    for name, value in options.items():
        if value is None:
            continue
        nested = _settings(value)
        if nested is not None:  # a dict of a client's settings (schema_registry_config): its secrets too
            found.update(secrets_of(nested))
        text = value if isinstance(value, str) else str(value)
        if is_secret_name(name):
            found.add(text)
        elif _is_url(text):
            found.update(url_secrets(text))
        if "@" in text and not is_secret_name(name):
            found.update(host_secrets(text))  # user:password@host pasted into a host option
    return tuple(sorted((s for s in found if s), key=len, reverse=True))


def _settings(value: Any) -> Mapping[str, Any] | None:
    """``value`` as a dict of settings, if it is one or the JSON text of one; else None."""
    if isinstance(value, Mapping):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def shown_value(name: str, value: Any) -> Any:
    """What an option's value may show as: ``***`` for a secret name, a URL without its password,
    a dict of settings (or its JSON text) with these rules applied to each of its settings."""
    if is_secret_name(name):
        return MASK
    nested = _settings(value)
    if nested is not None:
        shown = {key: shown_value(str(key), setting) for key, setting in nested.items()}
        return shown if isinstance(value, Mapping) else json.dumps(shown)
    if isinstance(value, str) and (_is_url(value) or "@" in value):
        return redact_hosts(value)
    return value


def redact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` safe to show: secret values masked, URL values without their password."""
    return {name: shown_value(name, value) for name, value in options.items()}


def secrets_in(obj: Any, depth: int = 3) -> tuple[str, ...]:
    """The secrets a configured object holds: :func:`secrets_of` over its attributes (a
    dataclass's fields, an object's ``__dict__``) and over the mappings and objects they hold,
    ``depth`` levels down, so a connector's ``password``, a URL with a password, or a
    ``sasl.password`` in a client config dict are all found without the connector listing them."""
    found: set[str] = set()
    seen: set[int] = set()

    def walk(value: Any, level: int) -> None:
        if (
            level < 0
            or id(value) in seen
            or value is None
            or isinstance(value, (str, bytes, int, float, types.ModuleType))
        ):
            return
        seen.add(id(value))
        if isinstance(value, Mapping):
            fields = value
        elif isinstance(value, (list, tuple, set, frozenset)):
            for item in value:
                walk(item, level - 1)
            return
        elif hasattr(value, "__dict__") and not callable(value) or hasattr(type(value), "__dataclass_fields__"):
            fields = {
                **getattr(value, "__dict__", {}),
                **{name: getattr(value, name, None) for name in getattr(type(value), "__dataclass_fields__", {})},
            }
        else:
            return
        strings = {str(k): v for k, v in fields.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}
        found.update(secrets_of(strings))
        for item in fields.values():
            walk(item, level - 1)

    walk(obj, depth)
    return tuple(sorted(found, key=len, reverse=True))


# --- errors --------------------------------------------------------------------------------------


def describe(exc: BaseException, secrets: Iterable[str | None]) -> str:
    """``Type: message`` of ``exc`` with ``secrets`` masked: the cause's text, fit to quote."""
    return redact(f"{type(exc).__name__}: {exc}", secrets)


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions a traceback would print with it (causes and contexts)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    return chain


def _texts(exc: BaseException) -> list[str]:
    return [str(exc), repr(exc.args), *map(str, getattr(exc, "__notes__", ()))]


def quotes_secret(exc: BaseException, secrets: Iterable[str | None]) -> bool:
    """Whether ``exc``, or any exception a traceback would print with it, quotes one of
    ``secrets`` in any spelling."""
    forms: set[str] = set()
    for secret in secrets:
        if secret:
            forms |= secret_forms(secret)
    if not forms:
        return False
    return any(form in text for e in _chain(exc) for text in _texts(e) for form in forms)


def scrubbed(exc: BaseException, secrets: Iterable[str | None]) -> BaseException:
    """A copy of ``exc`` fit to show: its message and those of its causes with ``secrets`` masked,
    chained to nothing. Of the same type where that type takes a message, else a
    :class:`~jetconnect.errors.JetconnectError` naming the type."""
    from jetconnect.errors import JetconnectError

    secrets = tuple(secrets)
    chain = _chain(exc)
    message = redact(str(exc), secrets)
    causes = "; ".join(describe(e, secrets) for e in chain[1:])
    text = f"{message} (caused by {causes})" if causes else message
    try:
        copy = type(exc)(text)
        if str(copy) != text:
            raise TypeError("the type formats its message")
    except Exception:
        copy = JetconnectError(f"{type(exc).__name__}: {text}")
    copy.__cause__, copy.__context__, copy.__suppress_context__ = None, None, True
    return copy


def raise_unchained(error: BaseException) -> NoReturn:
    """Raise ``error`` chained to nothing, for an error that replaces one that may quote a secret:
    ``raise ... from None`` only hides the raw exception from tracebacks (it stays in
    ``__context__``, where a debugger, a logger or Spark's worker may still print it)."""
    try:
        raise error
    finally:
        error.__cause__ = None
        error.__context__ = None
        error.__suppress_context__ = True


__all__ = [
    "MASK",
    "SECRET_WORDS",
    "describe",
    "host_secrets",
    "is_secret_name",
    "raise_unchained",
    "redact",
    "redact_hosts",
    "redact_options",
    "quotes_secret",
    "redact_url",
    "scrubbed",
    "secret_forms",
    "secrets_in",
    "secrets_of",
    "shown_value",
    "split_credentials",
    "url_secrets",
]
