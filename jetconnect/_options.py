"""Typed access to Spark's string options, with errors that name the option at fault.

Spark hands a data source its options as a case-insensitive dict of strings; connectors read
them through :class:`Options` so that every conversion error says which option and value failed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from jetconnect._redaction import MASK, is_secret_name, redact_options, shown_value
from jetconnect.errors import OptionError

T = TypeVar("T")
_MISSING: Any = object()
_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


class Options(Mapping[str, str]):
    """A read-only, case-insensitive view of string options with typed getters.

    ``owner`` (a source or sink name) is put in every error so that a user with several
    connectors in one query knows which one complained.
    """

    def __init__(self, options: Mapping[str, Any] | None = None, owner: str = "") -> None:
        self._data: dict[str, str] = {}
        self._names: dict[str, str] = {}
        for key, value in (options or {}).items():
            if value is None:
                continue
            self._data[key.lower()] = value if isinstance(value, str) else _to_option_string(value)
            self._names[key.lower()] = key
        self.owner = owner

    def __getitem__(self, key: str) -> str:
        return self._data[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names[k] for k in self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._data

    def __repr__(self) -> str:
        # secret-named values masked whole, URL values (url, store, ...) without their password
        return f"Options({redact_options(self.to_dict())!r})"

    def _error(self, key: str, message: str) -> OptionError:
        where = f"{self.owner}: " if self.owner else ""
        return OptionError(f"{where}option '{key}' {message}")

    def _shown(self, key: str, raw: str) -> str:
        return MASK if is_secret_name(key) else repr(shown_value(key, raw))

    def get_str(self, key: str, default: str | None = _MISSING) -> str:
        if key in self:
            return self[key]
        if default is _MISSING:
            raise self._error(key, "is required")
        return default  # type: ignore[return-value]  # None only when the caller passed default=None

    def get_int(self, key: str, default: int | None = _MISSING, *, minimum: int | None = None) -> int:
        if key not in self:
            if default is _MISSING:
                raise self._error(key, "is required")
            return default  # type: ignore[return-value]  # None only when the caller passed default=None
        raw = self[key]
        try:
            value = int(raw)
        except ValueError:
            raise self._error(key, f"must be a whole number, got {self._shown(key, raw)}") from None
        if minimum is not None and value < minimum:
            raise self._error(key, f"must be at least {minimum}, got {value}")
        return value

    def get_float(self, key: str, default: float | None = _MISSING) -> float:
        if key not in self:
            if default is _MISSING:
                raise self._error(key, "is required")
            return default  # type: ignore[return-value]  # None only when the caller passed default=None
        raw = self[key]
        try:
            return float(raw)
        except ValueError:
            raise self._error(key, f"must be a number, got {self._shown(key, raw)}") from None

    def get_bool(self, key: str, default: bool | None = _MISSING) -> bool:
        if key not in self:
            if default is _MISSING:
                raise self._error(key, "is required")
            return default  # type: ignore[return-value]  # None only when the caller passed default=None
        raw = self[key].strip().lower()
        if raw in _TRUE:
            return True
        if raw in _FALSE:
            return False
        raise self._error(key, f"must be true or false, got {self._shown(key, self[key])}")

    def get_list(self, key: str, default: list[str] | None = _MISSING) -> list[str]:
        """A list given as a JSON array or as comma-separated text."""
        if key not in self:
            if default is _MISSING:
                raise self._error(key, "is required")
            return default  # type: ignore[return-value]  # None only when the caller passed default=None
        raw = self[key].strip()
        if raw.startswith("["):
            value = self.get_json(key)
            if not isinstance(value, list):
                raise self._error(key, "must be a JSON array or comma-separated text")
            return [str(v) for v in value]
        return [part.strip() for part in raw.split(",") if part.strip()]

    def get_json(self, key: str, default: Any = _MISSING) -> Any:
        if key not in self:
            if default is _MISSING:
                raise self._error(key, "is required")
            return default
        try:
            return json.loads(self[key])
        except json.JSONDecodeError as exc:
            raise self._error(key, f"must be JSON ({exc.msg} at character {exc.pos})") from None

    def get_choice(self, key: str, choices: tuple[str, ...], default: str | None = _MISSING) -> str:
        value = self.get_str(key, default)
        if value is None:
            return value
        if value.lower() not in choices:
            raise self._error(key, f"must be one of {', '.join(choices)}, got {self._shown(key, value)}")
        return value.lower()

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """The options that start with ``prefix``, with the prefix removed (for client configs)."""
        p = prefix.lower()
        return {self._names[k][len(p) :]: v for k, v in self._data.items() if k.startswith(p)}

    def merged(self, extra: Mapping[str, Any]) -> Options:
        """These options overridden by ``extra``, for the same owner."""
        return Options({**self.to_dict(), **dict(extra)}, owner=self.owner)

    def to_dict(self) -> dict[str, str]:
        return {self._names[k]: v for k, v in self._data.items()}


def _to_option_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    return str(value)


def check_function_option(
    fn: Any,
    option: str,
    owner: str,
    of: str,
    *,
    schema: Any = None,
    schema_option: str = "schema",
    factory: str | None = None,
) -> None:
    """Refuse a Jet-style function option (mapper, projection, ...) that is not a Python function.

    Such options only come from Python (a Spark string option cannot carry a function), so the
    error says where to pass one; ``schema``, when given, describes what the function returns and
    is refused without it. ``of`` says what the function takes, e.g. ``"the row"``.
    """
    if fn is not None and not callable(fn):
        where = f"to {factory}(...) " if factory else ""
        raise OptionError(
            f"{owner}: option '{option}' must be a Python function of {of} (pass it {where}in Python; "
            f"a string option cannot carry one), got {type(fn).__name__}"
        )
    if schema is not None and fn is None:
        raise OptionError(f"{owner}: option '{schema_option}' describes what '{option}' returns; give both or neither")


__all__ = ["Options", "check_function_option"]
