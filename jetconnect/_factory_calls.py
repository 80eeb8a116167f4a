"""Calling a connector's factory with Spark's string options, and checking a Python call of it by
the same rules: each option converted by its parameter's annotation (the factory's signature, as
:mod:`jetconnect._factory_signature` reads it, is its option list), another system's names for
the options resolved (:mod:`jetconnect._option_aliases`), unknown and missing options refused, and
the shared option rules (:func:`jetconnect._options.check_option`) applied to every way in."""

from __future__ import annotations

import inspect
import math
import numbers
import types
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, NoReturn, Union, get_args, get_origin

from jetconnect._factory_signature import factory_options
from jetconnect._option_aliases import aliases_of, resolve_aliases
from jetconnect._options import Options, check_option, option_error
from jetconnect.errors import OptionError


def call_with_options(factory: Callable[..., Any], options: Options, owner: str) -> Any:
    """Call ``factory`` with Spark's string options converted by the parameters' annotations.

    Unknown options are an error naming them, unless the factory takes ``**kwargs`` (client
    configuration passed through, e.g. to a Kafka client). The factory's option aliases
    (:mod:`jetconnect._option_aliases`) are resolved first.
    """
    signature, hints = factory_options(factory)
    if aliases_of(factory):  # another system's names for the options (e.g. Spark's Kafka source's)
        options = Options(resolve_aliases(factory, options, owner), owner=options.owner)
    by_lower = {name.lower(): p for name, p in signature.parameters.items()}
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    kwargs: dict[str, Any] = {}
    extra: dict[str, str] = {}
    for key in options:
        param = by_lower.get(key.lower())
        if param is None or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            extra[key] = options[key]
            continue
        kwargs[param.name] = _convert(options, key, hints.get(param.name, param.annotation), param.default)
    if extra and not takes_kwargs:
        known = ", ".join(n for n, p in signature.parameters.items() if p.kind is not p.VAR_KEYWORD)
        raise OptionError(f"{owner}: unknown option(s) {', '.join(sorted(extra))}; known options: {known}")
    kwargs.update(extra)
    missing = [
        n
        for n, p in signature.parameters.items()
        if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n not in kwargs
    ]
    if missing:
        raise OptionError(f"{owner}: option(s) {', '.join(missing)} required")
    declared = {name: kwargs[name] for name in signature.parameters if name in kwargs and name not in extra}
    refused = shared_refusal(lambda: [check_option(name, value, owner) for name, value in declared.items()])
    if refused is not None:
        first_own_words(lambda: factory(**kwargs), refused)
    return factory(**kwargs)


def shared_refusal(check: Callable[[], Any]) -> OptionError | None:
    """The OptionError the shared option rules raise for a call, or None if they pass it."""
    try:
        check()
    except OptionError as exc:
        return exc
    return None


def first_own_words(build: Callable[[], Any], refused: OptionError) -> NoReturn:
    """Raise the connector's own OptionError for a call the shared rules refused, if it names the
    same option (its words, as its docs and tests say them), else the shared rules' ``refused``.

    Whatever else the connector does with the bad value (a TypeError deep inside, or nothing at
    all) is what the shared rules are for: the user gets ``refused``, naming the option.
    """
    option = refused.option
    try:
        build()
    except OptionError as own:
        if option is None or f"'{option}'" in str(own):
            raise
    except Exception:  # noqa: BLE001 - a consequence of the refused value; the refusal says why
        pass
    raise refused


def check_arguments(factory: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], owner: str) -> None:
    """Check a Python call of ``factory`` as :func:`call_with_options` checks Spark's strings.

    A parameter annotated int, float or bool takes only such a value (``True`` is no count, ``2.5``
    no int: it would end up a fractional position in Spark's offset log), floats are finite, and
    each option passes the rule every connector shares for its name (:func:`check_option`): so a
    value ``read_stream(...)`` or a Spark option refuses is refused here too, with the same words.
    """
    signature, hints = factory_options(factory)
    try:
        bound = signature.bind_partial(*args, **kwargs)
    except TypeError:
        return  # the call itself says what is wrong when it is made
    for name, value in bound.arguments.items():
        param = signature.parameters[name]
        if value is None or param.kind in (param.VAR_KEYWORD, param.VAR_POSITIONAL):
            continue
        target = _plain_type(hints.get(name, param.annotation), param.default)
        if target is int and (isinstance(value, bool) or not isinstance(value, numbers.Integral)):
            raise option_error(owner, name, f"must be a whole number, got {value!r}")
        if target is float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise option_error(owner, name, f"must be a number, got {value!r}")
        if target is float and not math.isfinite(float(value)):
            raise option_error(owner, name, f"must be a finite number, got {value!r}")
        if target is bool and not isinstance(value, bool):
            raise option_error(owner, name, f"must be true or false, got {value!r}")
        check_option(name, value, owner)


def _convert(options: Options, key: str, annotation: Any, default: Any) -> Any:
    target = _plain_type(annotation, default)
    if target is bool:
        return options.get_bool(key)
    if target is int:
        return options.get_int(key)
    if target is float:
        return options.get_float(key)
    if target in (list, tuple):
        return options.get_list(key)
    if target is dict:
        return options.get_json(key)
    return options[key]


def _plain_type(annotation: Any, default: Any) -> Any:
    if annotation is inspect.Parameter.empty or annotation is Any:
        return type(default) if default not in (None, inspect.Parameter.empty) else str
    origin = get_origin(annotation)
    if origin in (types.UnionType, Union):
        args = [a for a in get_args(annotation) if a is not type(None)]
        kinds = {_LIST_LIKE.get(get_origin(a) or a, get_origin(a) or a) for a in args}
        # Text can spell a list or a dict, so those win over str ("a,b" for str | list[str]);
        # but a str alternative to a number means the factory wants the text as it is.
        for container in (list, tuple, dict):
            if container in kinds:
                return container
        if str in kinds:
            return str
        for scalar in (bool, int, float):
            if scalar in kinds:
                return scalar
        return str
    if origin is not None:
        return _LIST_LIKE.get(origin, origin)
    return annotation


#: Annotations that take any sequence of values (``Iterable[str]``): Spark's text for them is a list.
_LIST_LIKE: dict[Any, type] = {abc: list for abc in (Iterable, Sequence, Collection)}


__all__ = ["call_with_options", "check_arguments", "first_own_words", "shared_refusal"]
