"""The plugin registry: pluggy, built-ins first, then the ``jetconnect`` entry points.

A plugin that fails to import becomes a :class:`~jetconnect.errors.PluginLoadWarning` naming it,
so one broken package never hides the others. ``JETCONNECT_PLUGINS`` (comma-separated entry-point
names) narrows which installed plugins load; an empty value loads none but the built-ins.
"""

from __future__ import annotations

import importlib.metadata
import inspect
import math
import numbers
import os
import threading
import types
import warnings
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, NoReturn, Union, get_args, get_origin

import pluggy

import jetconnect._hookspecs as hookspecs
from jetconnect._factory_signature import factory_options
from jetconnect._option_aliases import aliases_of, resolve_aliases
from jetconnect._options import Options, check_option, option_error
from jetconnect.errors import OptionError, PluginError, PluginLoadWarning

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


# --- string options -> factory arguments -------------------------------------------------------


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


__all__ = [
    "ConnectorSpec",
    "Register",
    "Registry",
    "call_with_options",
    "check_arguments",
    "get_registry",
    "reset_registry",
]
