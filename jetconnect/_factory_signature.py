"""The options a registered factory takes, read from its signature and annotations.

A factory is a function or a connector class (then its ``__init__``). A parameter
``**options: Unpack[Shared]`` stands for the keys of the TypedDict ``Shared``: options that several
connectors share are declared once there, with their types, and get their defaults from the
nearest base class whose ``__init__`` names them. Spark's string options, the checks of a Python
call, ``jetconnect plugins`` and the docs check all read a factory's options through here, so
they see the same list.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Unpack, get_args, get_origin, get_type_hints, is_typeddict


def _annotated(factory: Callable[..., Any]) -> Callable[..., Any]:
    """What holds the parameters' annotations: a class's constructor, or the function itself."""
    if isinstance(factory, type):  # the nearest constructor a class defines (or inherits)
        return next(vars(cls)["__init__"] for cls in factory.__mro__ if "__init__" in vars(cls))
    return factory


def _declared_hints(factory: Callable[..., Any]) -> dict[str, Any]:
    try:
        return get_type_hints(_annotated(factory))
    except Exception:  # annotations that do not resolve are treated as strings
        return {}


def _shared(hint: Any) -> type | None:
    """The TypedDict of an ``Unpack[...]`` annotation, else None."""
    if get_origin(hint) is Unpack:
        (shared,) = get_args(hint)
        if is_typeddict(shared):
            return shared
    return None


def _base_defaults(factory: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter's default in the nearest base class constructor that names it."""
    defaults: dict[str, Any] = {}
    if not isinstance(factory, type):
        return defaults
    for base in factory.__mro__[1:]:
        if "__init__" not in vars(base):
            continue
        try:
            parameters = inspect.signature(vars(base)["__init__"]).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in parameters:
            if p.default is not p.empty:
                defaults.setdefault(p.name, p.default)
    return defaults


def factory_options(factory: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any]]:
    """``factory``'s signature, with a ``**options: Unpack[Shared]`` parameter replaced by one
    keyword-only parameter per key of ``Shared`` (default: a base class's, else None), and the
    resolved annotation of each option, the unpacked ones included: both from one reading."""
    signature, hints = inspect.signature(factory), _declared_hints(factory)
    var_keyword = next((p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None)
    shared = None if var_keyword is None else _shared(hints.get(var_keyword.name))
    if var_keyword is None or shared is None:
        return signature, hints
    shared_hints = get_type_hints(shared)
    del hints[var_keyword.name]
    for key, hint in shared_hints.items():
        hints.setdefault(key, hint)
    defaults = _base_defaults(factory)
    unpacked = [
        inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=defaults.get(key), annotation=hint)
        for key, hint in shared_hints.items()
        if key not in signature.parameters
    ]
    kept = [p for p in signature.parameters.values() if p is not var_keyword]
    return signature.replace(parameters=[*kept, *unpacked]), hints


def factory_signature(factory: Callable[..., Any]) -> inspect.Signature:
    """The signature part of :func:`factory_options`: the options a factory takes, unpacked."""
    return factory_options(factory)[0]


__all__ = ["factory_options", "factory_signature"]
