"""The plugin registry: pluggy, built-ins first, then the ``jetconnect`` entry points.

A plugin that fails to import becomes a :class:`~jetconnect.errors.PluginLoadWarning` naming it,
so one broken package never hides the others. ``JETCONNECT_PLUGINS`` (comma-separated entry-point
names) narrows which installed plugins load; an empty value loads none but the built-ins.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import os
import threading
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import pluggy

import jetconnect._hookspecs as hookspecs
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect.errors import PluginError, PluginLoadWarning

if TYPE_CHECKING:  # pragma: no cover
    from jetconnect._guarantees import Declared

ENTRY_POINT_GROUP = "jetconnect"
Kind = Literal["source", "sink"]


@dataclass(frozen=True)
class ConnectorSpec:
    """One registered source or sink factory and what ``jetconnect plugins`` says of it."""

    kind: Kind
    name: str
    factory: Callable[..., Any]
    plugin: str
    version: str
    from_options: Callable[[Options], Any] | None = None
    description: str = ""

    @cached_property
    def declared(self) -> Declared:
        """The guarantee as the connector declares it (:func:`jetconnect._guarantees.declared`)."""
        from jetconnect._guarantees import declared

        return declared(self)

    @property
    def guarantee(self) -> str:
        """``exactly-once``, ..., or each value's when an option changes it: read from the
        connector (its class, or an instance built from default options), never declared twice."""
        return self.declared.text()

    def create_from_options(self, options: Options) -> Any:
        """Build the connector from Spark's string options (the format-string way in)."""
        if self.from_options is not None:
            return self.from_options(options)
        return call_with_options(self.factory, options, owner=f"{self.kind} '{self.name}'")


class Register:
    """The callable handed to ``register_sources`` / ``register_sinks`` hooks."""

    def __init__(self, registry: Registry, kind: Kind, plugin: str, version: str) -> None:
        self._registry, self._kind, self._plugin, self._version = registry, kind, plugin, version

    def __call__(
        self,
        factory: Callable[..., Any],
        name: str | None = None,
        *,
        from_options: Callable[[Options], Any] | None = None,
        description: str | None = None,
    ) -> None:
        """Register ``factory`` (a function or class making the connector) under ``name``.

        No guarantee is given here: it is read from the connector (``guarantee``,
        ``guarantee_option`` on the class the factory's return annotation names), so the listing
        says what actually runs.
        """
        if not callable(factory):
            raise PluginError(f"plugin '{self._plugin}' registered a {self._kind} that is not callable: {factory!r}")
        name = name or factory.__name__
        doc = description or (inspect.getdoc(factory) or "").split("\n", 1)[0]
        spec = ConnectorSpec(self._kind, name, factory, self._plugin, self._version, from_options, doc)
        self._registry._add(spec)


@dataclass
class Registry:
    """All sources and sinks of the installed plugins, loaded once per process."""

    manager: pluggy.PluginManager = field(default_factory=lambda: pluggy.PluginManager("jetconnect"))
    sources: dict[str, ConnectorSpec] = field(default_factory=dict)
    sinks: dict[str, ConnectorSpec] = field(default_factory=dict)
    plugins: dict[str, str] = field(default_factory=dict)  # name -> version
    #: URL scheme -> ``resolve(url) -> (FileSystem, path)`` (hook ``register_file_systems``).
    file_systems: dict[str, Callable[[str], Any]] = field(default_factory=dict)

    def _add(self, spec: ConnectorSpec) -> None:
        table = self.sources if spec.kind == "source" else self.sinks
        if spec.name in table and table[spec.name].plugin != spec.plugin:
            raise PluginError(
                f"{spec.kind} '{spec.name}' is registered by both plugin '{table[spec.name].plugin}' "
                f"and plugin '{spec.plugin}'; uninstall one or narrow JETCONNECT_PLUGINS"
            )
        table[spec.name] = spec

    def load(self, modules: Iterable[tuple[str, str, types.ModuleType]] = ()) -> Registry:
        self.manager.add_hookspecs(hookspecs)
        for name, version, module in modules:
            self._register_plugin(name, version, module)
        wanted = _wanted_plugins()
        for ep in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if wanted is not None and ep.name not in wanted:
                continue
            if self.manager.has_plugin(ep.name):
                continue
            version = ep.dist.version if ep.dist is not None else "?"
            try:
                module = ep.load()
                self._register_plugin(ep.name, version, module)
            except Exception as exc:  # catching whatever a plugin raised is the point: the rest must load
                warnings.warn(
                    f"jetconnect plugin '{ep.name}' ({ep.value}) could not be loaded: {type(exc).__name__}: {exc}",
                    PluginLoadWarning,
                    stacklevel=2,
                )
        self.manager.check_pending()
        self._collect()
        return self

    def _register_plugin(self, name: str, version: str, module: types.ModuleType) -> None:
        self.manager.register(module, name=name)
        self.plugins[name] = version

    def _collect(self) -> None:
        # Each hook implementation is called with a Register bound to its own plugin, so that
        # `jetconnect plugins` can say which package provides which connector.
        kinds: tuple[tuple[Literal["source", "sink"], Any], ...] = (
            ("source", self.manager.hook.register_sources),
            ("sink", self.manager.hook.register_sinks),
        )
        for kind, caller in kinds:
            for impl in caller.get_hookimpls():  # in registration order: built-ins first
                version = self.plugins.get(impl.plugin_name, "?")
                try:
                    impl.function(register=Register(self, kind, impl.plugin_name, version))
                except PluginError:
                    raise
                except Exception as exc:  # a plugin's registration bug must not hide the others
                    warnings.warn(
                        f"jetconnect plugin '{impl.plugin_name}' failed to register its {kind}s: "
                        f"{type(exc).__name__}: {exc}",
                        PluginLoadWarning,
                        stacklevel=3,
                    )
        for impl in self.manager.hook.register_file_systems.get_hookimpls():
            try:
                impl.function(register=self._file_system_register(impl.plugin_name))
            except PluginError:
                raise
            except Exception as exc:  # as above: one plugin's bug must not hide the others
                warnings.warn(
                    f"jetconnect plugin '{impl.plugin_name}' failed to register its file systems: "
                    f"{type(exc).__name__}: {exc}",
                    PluginLoadWarning,
                    stacklevel=3,
                )

    def _file_system_register(self, plugin: str) -> Callable[[str, Callable[[str], Any]], None]:
        def register(scheme: str, resolve: Callable[[str], Any]) -> None:
            scheme = scheme.lower()
            if scheme in self.file_systems:
                raise PluginError(f"file system scheme '{scheme}://' is registered twice (plugin '{plugin}')")
            self.file_systems[scheme] = resolve

        return register


def _wanted_plugins() -> set[str] | None:
    raw = os.environ.get("JETCONNECT_PLUGINS")
    if raw is None:
        return None
    return {p.strip() for p in raw.split(",") if p.strip()}


_lock = threading.Lock()
_registry: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, loaded on first use."""
    global _registry
    with _lock:
        if _registry is None:
            _registry = Registry().load(list(_builtin_plugins))
        return _registry


def reset_registry() -> None:
    """Forget the loaded plugins (tests, or after installing a plugin in a running process)."""
    global _registry
    with _lock:
        _registry = None


#: The core's own connectors, a plugin like the others: ``jetconnect/__init__`` hands them over,
#: so the registry never imports the builders (which reach the registry for file systems).
_builtin_plugins: list[tuple[str, str, types.ModuleType]] = []


def add_builtin_plugin(name: str, version: str, module: types.ModuleType) -> None:
    """Register ``module``'s hooks before every installed plugin's, under ``name``."""
    with _lock:
        if all(existing is not module for _, _, existing in _builtin_plugins):
            _builtin_plugins.append((name, version, module))


__all__ = [
    "ConnectorSpec",
    "Register",
    "Registry",
    "get_registry",
    "reset_registry",
]
