"""Spark Connect: make sure the server can unpickle what a connector sends it.

Under Spark Connect the client pickles each data source class, with the connector object inside,
and the *server's* Python unpickles it, in its driver and on its executors. cloudpickle sends the
functions and classes of importable modules by reference, so the server must be able to import
those modules. Before a connector is registered jetconnect lists the modules it refers to, asks the
server once (a one-row job, remembered per session) which of them it cannot import, then:

- ships the user's own modules (files that belong to no installed distribution) by value, so a
  pipeline's helper module works without being copied to the server;
- raises :class:`ConnectSetupError` naming the distributions (jetconnect, a plugin, a client
  library) that must be installed in the server's Python, because they carry dependencies of their
  own and must match the client's version.
"""

from __future__ import annotations

import importlib.metadata
import io
import sys
import types
import warnings
from typing import TYPE_CHECKING, Any

from pyspark import cloudpickle
from pyspark.cloudpickle import cloudpickle as _cloudpickle_impl

from jetconnect.errors import ConnectSetupError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

#: Modules every Spark Connect server has; never probed.
_ALWAYS_THERE = frozenset({"pyspark", "py4j", "builtins", "__main__"}) | frozenset(sys.stdlib_module_names)
#: Shipping user modules by value is settled in at most this many rounds (each may reveal more).
_MAX_ROUNDS = 5
#: What each server session answered: session id -> {module: import error or None}.
_answers: dict[str, dict[str, str | None]] = {}


class ConnectPluginWarning(UserWarning):
    """A plugin installed on the client is missing on the Spark Connect server."""


def is_connect(spark: Any) -> bool:
    """True when ``spark`` is a Spark Connect session (``SparkSession.builder.remote(...)``)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def prepare_for_server(spark: "SparkSession", obj: Any, what: str) -> None:
    """Make ``obj`` unpicklable on the Connect server of ``spark``, or raise saying what is missing.

    ``what`` names the connector in messages, e.g. ``"source 'kafka'"``.
    """
    for _ in range(_MAX_ROUNDS):
        missing = _server_cannot_import(spark, referenced_modules(obj))
        if not missing:
            return
        installed = {name: error for name, error in missing.items() if _distributions(name)}
        if installed:
            raise ConnectSetupError(_install_message(what, installed))
        for name in missing:  # the user's own code: send it along instead of by name
            cloudpickle.register_pickle_by_value(sys.modules[name])
    raise ConnectSetupError(f"{what}: the modules it refers to could not all be shipped to the Spark Connect server")


def check_plugins_on_server(spark: "SparkSession", plugin_modules: dict[str, str]) -> list[str]:
    """Warn about plugins (name -> top-level module) the Connect server cannot import; return their names."""
    missing = _server_cannot_import(spark, set(plugin_modules.values()) | {"jetconnect"})
    if "jetconnect" in missing:
        raise ConnectSetupError(_install_message("jetconnect.register(spark)", {"jetconnect": missing["jetconnect"]}))
    absent = sorted(name for name, module in plugin_modules.items() if module in missing)
    for name in absent:
        module = plugin_modules[name]
        warnings.warn(
            f"jetconnect plugin '{name}' is installed here but not on the Spark Connect server "
            f"({missing[module]}): its formats will fail there; {_pip_hint(module)}",
            ConnectPluginWarning,
            stacklevel=3,
        )
    return absent


def referenced_modules(obj: Any) -> set[str]:
    """Top-level modules that pickling ``obj`` refers to by name (and the server must import)."""
    found: set[str] = set()

    class Recorder(_cloudpickle_impl.Pickler):
        def reducer_override(self, item: Any) -> Any:
            if isinstance(item, types.ModuleType):
                if not _cloudpickle_impl._is_registered_pickle_by_value(item):
                    found.add(item.__name__)
            elif isinstance(item, (type, types.FunctionType)) and _cloudpickle_impl._should_pickle_by_reference(item):
                found.add(getattr(item, "__module__", None) or "")
            elif isinstance(item, types.BuiltinFunctionType) and item.__module__:
                found.add(item.__module__)
            return super().reducer_override(item)

    Recorder(io.BytesIO(), protocol=cloudpickle.DEFAULT_PROTOCOL).dump(obj)
    tops = {name.split(".", 1)[0] for name in found if name}
    return {name for name in tops if name not in _ALWAYS_THERE and not name.startswith("_")}


# --- the probe ------------------------------------------------------------------------------------


def _server_cannot_import(spark: "SparkSession", modules: set[str]) -> dict[str, str]:
    """``{module: error}`` for the modules the server's Python workers cannot import."""
    cache = _answers.setdefault(getattr(spark, "session_id", None) or str(id(spark)), {})
    unknown = sorted(m for m in modules if m not in cache)
    if unknown:
        for name, error in _probe(spark, unknown).items():
            cache[name] = error
    return {m: cache[m] for m in sorted(modules) if cache.get(m) is not None}  # type: ignore[misc]


def _probe(spark: "SparkSession", modules: list[str]) -> dict[str, str | None]:
    """Import ``modules`` in one of the server's Python workers; ``None`` for each that imports."""

    # A nested function is pickled by value and refers to nothing but the standard library and
    # pyarrow, so the probe runs even on a server without jetconnect.
    def probe(batches: Any) -> Any:
        import importlib

        import pyarrow as pa

        for _ in batches:
            pass
        errors = []
        for name in modules:
            try:
                importlib.import_module(name)
                errors.append(None)
            except Exception as exc:  # any import failure is what we are asking about
                errors.append(f"{type(exc).__name__}: {exc}")
        yield pa.RecordBatch.from_pydict({"module": modules, "error": errors})

    rows = spark.range(1).mapInArrow(probe, "module string, error string").collect()
    return {row["module"]: row["error"] for row in rows}


# --- messages ---------------------------------------------------------------------------------------


def _distributions(module: str) -> list[str]:
    """The installed distributions that provide top-level ``module`` (none for a user's own file)."""
    return importlib.metadata.packages_distributions().get(module, [])


def _pip_hint(module: str) -> str:
    dists = sorted(set(_distributions(module)))
    pins = " ".join(f"{d}=={importlib.metadata.version(d)}" for d in dists) or module
    return f"install it in the server's Python (the PYSPARK_PYTHON of the server and its executors): pip install {pins}"


def _install_message(what: str, missing: dict[str, str]) -> str:
    lines = [f"{what} cannot run on the Spark Connect server: its Python cannot import what it needs:"]
    lines += [f"  - {module} ({error}); {_pip_hint(module)}" for module, error in missing.items()]
    return "\n".join(lines)


__all__ = ["ConnectPluginWarning", "ConnectSetupError", "check_plugins_on_server", "is_connect", "prepare_for_server", "referenced_modules"]
