"""Typed access to Spark's string options, with errors that name the option at fault.

Spark hands a data source its options as a case-insensitive dict of strings; connectors read
them through :class:`Options` so that every conversion error says which option and value failed.
"""

from __future__ import annotations

import json
import math
import re
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
        return option_error(self.owner, key, message)

    def _absent(self, key: str, default: Any) -> Any:
        """What an option that was not given reads as: ``default`` (None where the caller passed
        None), or the error that it is required when there is no default."""
        if default is _MISSING:
            raise self._error(key, "is required")
        return default

    def _shown(self, key: str, raw: str) -> str:
        return MASK if is_secret_name(key) else repr(shown_value(key, raw))

    def get_str(self, key: str, default: str | None = _MISSING) -> str:
        return self[key] if key in self else self._absent(key, default)

    def get_int(self, key: str, default: int | None = _MISSING, *, minimum: int | None = None) -> int:
        if key not in self:
            return self._absent(key, default)
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
            return self._absent(key, default)
        raw = self[key]
        try:
            value = float(raw)
        except ValueError:
            raise self._error(key, f"must be a number, got {self._shown(key, raw)}") from None
        if not math.isfinite(value):
            # "nan" and "inf" parse, and then every comparison or sleep with them goes wrong
            raise self._error(key, f"must be a finite number, got {self._shown(key, raw)}")
        return value

    def get_duration(self, key: str, default: float | None = _MISSING, *, allow_zero: bool = False) -> float:
        """A timeout or interval: finite, and positive (or zero where ``allow_zero`` says what 0 means).

        A negative or NaN wait becomes an infinite one (or a raw error of the library it reaches),
        so every duration option is checked here, whoever reads it.
        """
        if key not in self:
            return self._absent(key, default)
        raw = self[key]
        value = self.get_float(key)
        if value < 0 or (value == 0 and not allow_zero):
            least = "0 or more" if allow_zero else "more than 0"
            raise self._error(key, f"must be {least}, got {self._shown(key, raw)}")
        return value

    def get_bool(self, key: str, default: bool | None = _MISSING) -> bool:
        if key not in self:
            return self._absent(key, default)
        raw = self[key].strip().lower()
        if raw in _TRUE:
            return True
        if raw in _FALSE:
            return False
        raise self._error(key, f"must be true or false, got {self._shown(key, self[key])}")

    def get_list(self, key: str, default: list[str] | None = _MISSING) -> list[str]:
        """A list given as a JSON array or as comma-separated text."""
        if key not in self:
            return self._absent(key, default)
        raw = self[key].strip()
        if raw.startswith("["):
            value = self.get_json(key)
            if not isinstance(value, list):
                raise self._error(key, "must be a JSON array or comma-separated text")
            return [str(v) for v in value]
        return [part.strip() for part in raw.split(",") if part.strip()]

    def get_json(self, key: str, default: Any = _MISSING) -> Any:
        if key not in self:
            return self._absent(key, default)
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


# --- one check per option, for every way in --------------------------------------------------
#
# A value reaches a connector three ways: a Python factory or constructor, a keyword of
# read_stream/write_stream, and Spark's string options. Each check below turns the value into the
# same Options string form first, so 0, -1, 1.5, True, "nan" and "x" fail alike on every path.


def option_error(owner: str, option: str, message: str) -> OptionError:
    """``OWNER: option 'OPTION' MESSAGE`` as an OptionError that also knows its ``option``
    (so a caller holding two errors of one call can tell whether they blame the same option)."""
    where = f"{owner}: " if owner else ""
    error = OptionError(f"{where}option '{option}' {message}")
    error.option = option
    return error


def check_count(value: object, option: str, owner: str, minimum: int = 1) -> int:
    """``value`` as a whole number of at least ``minimum``; else an OptionError naming ``option``.

    ``True`` is refused although Python counts it as 1: it is never meant as a number.
    """
    if isinstance(value, bool):
        raise option_error(owner, option, f"must be a whole number, got {value!r}")
    return Options({option: value}, owner).get_int(option, minimum=minimum)


def check_duration(value: object, option: str, owner: str, *, allow_zero: bool = False) -> float:
    """``value`` as a finite duration above 0 (or 0 with ``allow_zero``); else an OptionError naming ``option``."""
    if isinstance(value, bool):
        raise option_error(owner, option, f"must be a number, got {value!r}")
    return Options({option: value}, owner).get_duration(option, allow_zero=allow_zero)


def check_name(value: object, option: str, owner: str, pattern: re.Pattern[str], what: str) -> str:
    """``value`` if the *whole* of it matches ``pattern``; else an OptionError naming ``option``.

    Always ``fullmatch``: ``re.match(r"^x$")`` also takes ``"x\n"`` (``$`` matches before a final
    newline), which is then another name than ``"x"`` and a later read finds nothing under it.
    """
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise option_error(owner, option, f"must be {what}, got {value!r}")
    return value


#: A name of a table, queue, topic or file part: anything but control characters. A trailing
#: newline (or any other one) names another object than the one meant, and a later read finds nothing.
PLAIN_NAME = re.compile(r"[^\x00-\x1f\x7f]+")
PLAIN_NAME_IS = "a name without control characters such as a newline"

#: Options whose meaning is the same whichever connector takes them: a whole number of at least 1.
COUNT_OPTIONS = frozenset(
    {
        "max_records_per_batch",
        "parallelism",
        "local_parallelism",
        "batch_size",
        "fetch_size",
        "prefetch",
        "max_backlog",
        "max_backlog_bytes",
        "max_pull_records",
        "max_split_bytes",
        "dedupe_window",
        "num_partitions",
    }
)
#: Words that make an option a duration (finite, not negative; see :func:`duration_rule`).
_DURATION_SUFFIXES = ("_ms", "_s", "_seconds", "_secs")
_DURATION_WORDS = ("timeout", "deadline", "interval", "keep_alive", "linger", "lateness", "ttl")
#: Words that make a ``..._ms`` option a point in time, not a duration (``start_ms``: epoch ms).
_MOMENT_WORDS = ("start", "timestamp", "epoch", "time_ms", "offset")
#: Durations whose 0 means "wait not at all", which is never what a user wants of them.
_POSITIVE_WORDS = ("timeout", "deadline")


def duration_rule(option: str) -> bool | None:
    """Whether an option called ``option`` is a duration, and then whether 0 is allowed.

    None: not a duration; True: 0 allowed (an interval, a keep-alive: 0 has a documented meaning);
    False: a timeout or deadline, which must be more than 0.
    """
    name = option.lower().replace("-", "_").replace(".", "_")
    if not (name.endswith(_DURATION_SUFFIXES) or any(word in name for word in _DURATION_WORDS)):
        return None
    if any(word in name for word in _MOMENT_WORDS):
        return None
    return not any(word in name for word in _POSITIVE_WORDS)


def check_option(option: str, value: Any, owner: str) -> Any:
    """``value`` checked by the rule every connector shares for an option called ``option``.

    Counts (:data:`COUNT_OPTIONS`) are whole numbers of at least 1; durations (see
    :func:`duration_rule`) are finite and not negative, timeouts above 0. None (an option left
    out) and options without a shared rule pass unchanged; a value that passes comes back in its
    own type, so a Python float stays a float.
    """
    if value is None or isinstance(value, str) and value == "":
        return value
    name = option.lower()
    if name in COUNT_OPTIONS:
        check_count(value, option, owner)
        return value
    allow_zero = duration_rule(option)
    if allow_zero is not None and isinstance(value, (int, float, str)) and _is_number(value):
        check_duration(value, option, owner, allow_zero=allow_zero)
    return value


def _is_number(value: Any) -> bool:
    """Whether a duration's value is a number (or its text): other spellings ("1 second") are the
    connector's to parse; a number, NaN and the infinities included, is this module's to check."""
    if isinstance(value, bool):
        return True  # refused by check_duration: True is not a duration
    try:
        float(value)
    except ValueError:
        return False
    return True


def check_options(options: Mapping[str, Any], owner: str) -> None:
    """:func:`check_option` for each of ``options``: what an adapter or a factory gets, all at once."""
    for option, value in options.items():
        check_option(option, value, owner)


__all__ = [
    "COUNT_OPTIONS",
    "PLAIN_NAME",
    "PLAIN_NAME_IS",
    "Options",
    "check_count",
    "check_duration",
    "check_function_option",
    "check_name",
    "check_option",
    "check_options",
    "duration_rule",
    "option_error",
]
