"""Other names a connector's options answer to: another system's spelling of the same option.

A connector declares its options once, as parameters of its ``__init__``. Users coming from another
connector bring that one's option names (Spark's own Kafka source says ``subscribe`` where
jetconnect's says ``topics``). A connector class lists those names in ``option_aliases``, each an
:class:`OptionAlias`: the option it stands for, how a value translates where the two say the same
in other words, or why it cannot carry over and what to give instead. Both ways in resolve them
before anything else reads the options (Spark's string options in
:func:`~jetconnect._factory_calls.call_with_options`, a Python call of ``sources.x`` / ``sinks.x`` in
:mod:`jetconnect._catalog`), so an alias is converted, checked and documented as its option is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jetconnect.errors import OptionError


@dataclass(frozen=True)
class OptionAlias:
    """Another name for option ``option``; ``convert`` turns the alias's value (Spark's string, or
    a Python value) into the option's, raising ``ValueError`` for one it cannot. With ``option``
    None the name cannot carry over, and ``refusal`` says what to give instead."""

    option: str | None
    convert: Callable[[Any], Any] | None = None
    refusal: str | None = None


def aliases_of(factory: Any) -> dict[str, OptionAlias]:
    """``factory``'s aliases by lower-cased name (Spark's options are case-insensitive)."""
    declared: Mapping[str, OptionAlias] = getattr(factory, "option_aliases", None) or {}
    return {name.lower(): alias for name, alias in declared.items()}


def resolve_aliases(factory: Any, options: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """``options`` with every alias of ``factory`` replaced by the option it stands for.

    An alias given beside its option (or beside another alias of it) is an error naming both; an
    alias that cannot carry over is refused with what to give instead.
    """
    aliases = aliases_of(factory)
    if not aliases:
        return dict(options)
    resolved: dict[str, Any] = {}
    given_as: dict[str, str] = {}  # option (lower-cased) -> the name the user gave it as
    for key, value in options.items():
        alias = aliases.get(key.lower())
        name = key
        if alias is not None:
            if alias.option is None:
                raise OptionError(f"{owner}: option '{key}' cannot carry over: {alias.refusal}")
            name = alias.option
            if alias.convert is not None and value is not None:
                try:
                    value = alias.convert(value)
                except ValueError as exc:
                    raise OptionError(f"{owner}: option '{key}' (for '{name}'): {exc}") from None
        earlier = given_as.get(name.lower())
        if earlier is not None:
            raise OptionError(f"{owner}: options '{earlier}' and '{key}' both give '{name}'; give one")
        given_as[name.lower()] = key
        resolved[name] = value
    return resolved


__all__ = ["OptionAlias", "aliases_of", "resolve_aliases"]
