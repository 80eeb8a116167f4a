"""``from jetconnect import sources, sinks``: every installed plugin's factories by name."""

from __future__ import annotations

import functools
from typing import Any

from jetconnect._factory_calls import check_arguments, first_own_words, shared_refusal
from jetconnect._option_aliases import resolve_aliases
from jetconnect._registry import ConnectorSpec, get_registry
from jetconnect.errors import PluginError


class Catalog:
    """Attribute access to the registered factories of one kind: ``sources.kafka(...)``."""

    def __init__(self, kind: str) -> None:
        self._kind = kind

    def _table(self) -> dict[str, ConnectorSpec]:
        registry = get_registry()
        return registry.sources if self._kind == "source" else registry.sinks

    def spec(self, name: str) -> ConnectorSpec:
        table = self._table()
        if name not in table:
            known = ", ".join(sorted(table)) or "none"
            raise PluginError(
                f"no {self._kind} named '{name}' is installed (installed: {known}); "
                f"is its plugin package installed, or excluded by JETCONNECT_PLUGINS?"
            )
        return table[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return _checked(self.spec(name))
        except PluginError as exc:
            raise AttributeError(str(exc)) from None

    def __getitem__(self, name: str) -> Any:
        return _checked(self.spec(name))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._table()

    def __dir__(self) -> list[str]:
        return sorted(self._table())

    def names(self) -> list[str]:
        return sorted(self._table())

    def __repr__(self) -> str:
        return f"<jetconnect {self._kind}s: {', '.join(self.names())}>"


def _checked(spec: ConnectorSpec) -> Any:
    """``spec``'s factory, whose arguments are checked as Spark's string options are
    (:func:`~jetconnect._factory_calls.check_arguments`): one check per option for every way in."""
    factory = spec.factory
    owner = f"{spec.kind} '{spec.name}'"

    @functools.wraps(factory)
    def checked(*args: Any, **kwargs: Any) -> Any:
        kwargs = resolve_aliases(factory, kwargs, owner)
        refused = shared_refusal(lambda: check_arguments(factory, args, kwargs, owner))
        if refused is not None:
            first_own_words(lambda: factory(*args, **kwargs), refused)
        return factory(*args, **kwargs)

    return checked


sources = Catalog("source")
sinks = Catalog("sink")

__all__ = ["Catalog", "sinks", "sources"]
