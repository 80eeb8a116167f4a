"""``from jetconnect import sources, sinks``: every installed plugin's factories by name."""

from __future__ import annotations

from typing import Any

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
            return self.spec(name).factory
        except PluginError as exc:
            raise AttributeError(str(exc)) from None

    def __getitem__(self, name: str) -> Any:
        return self.spec(name).factory

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._table()

    def __dir__(self) -> list[str]:
        return sorted(self._table())

    def names(self) -> list[str]:
        return sorted(self._table())

    def __repr__(self) -> str:
        return f"<jetconnect {self._kind}s: {', '.join(self.names())}>"


sources = Catalog("source")
sinks = Catalog("sink")

__all__ = ["Catalog", "sinks", "sources"]
