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
    return factory.__init__ if isinstance(factory, type) else factory  # type: ignore[misc]  # the constructor's own hints


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


def factory_hints(factory: Callable[..., Any]) -> dict[str, Any]:
    """The resolved annotation of each option ``factory`` takes, the unpacked ones included."""
    hints = _declared_hints(factory)
    for name, hint in list(hints.items()):
        shared = _shared(hint)
        if shared is not None:
            del hints[name]
            for key, value in get_type_hints(shared).items():
                hints.setdefault(key, value)
    return hints


def factory_signature(factory: Callable[..., Any]) -> inspect.Signature:
    """``factory``'s signature with a ``**options: Unpack[Shared]`` parameter replaced by one
    keyword-only parameter per key of ``Shared`` (default: a base class's, else None)."""
    signature = inspect.signature(factory)
    var_keyword = next((p for p in signature.parameters.values() if p.kind is p.VAR_KEYWORD), None)
    shared = None if var_keyword is None else _shared(_declared_hints(factory).get(var_keyword.name))
    if var_keyword is None or shared is None:
        return signature
    defaults = _base_defaults(factory)
    unpacked = [
        inspect.Parameter(key, inspect.Parameter.KEYWORD_ONLY, default=defaults.get(key), annotation=hint)
        for key, hint in get_type_hints(shared).items()
        if key not in signature.parameters
    ]
    kept = [p for p in signature.parameters.values() if p is not var_keyword]
    return signature.replace(parameters=[*kept, *unpacked])


__all__ = ["factory_hints", "factory_signature"]
