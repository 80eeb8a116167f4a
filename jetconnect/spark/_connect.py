"""Spark Connect: make sure the server can unpickle what a connector sends it.

Under Spark Connect the client pickles each data source class and the *server's* Python unpickles
it, in its driver and on its executors. User modules already travel by value (``_shipping``);
what remains by reference belongs to installed distributions (jetconnect, a plugin, a client
library), which must be installed in the server's Python at the client's version. Before a
connector is registered jetconnect asks the server once (a one-row job, remembered per session)
which of those modules it cannot import, and raises :class:`ConnectSetupError` naming what to install.
"""

from __future__ import annotations

import importlib.metadata
import warnings
from typing import TYPE_CHECKING, Any

from jetconnect.errors import ConnectSetupError
from jetconnect.spark._imports import Answer, cannot_import, import_probe
from jetconnect.spark._shipping import distributions, referenced_modules

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession


class ConnectPluginWarning(UserWarning):
    """A plugin installed on the client is missing on the Spark Connect server."""


def is_connect(spark: Any) -> bool:
    """True when ``spark`` is a Spark Connect session (``SparkSession.builder.remote(...)``)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def check_server_imports(spark: SparkSession, obj: Any, what: str) -> None:
    """Raise ConnectSetupError unless the Connect server can import every module ``obj`` refers to.

    ``what`` names the connector in the message, e.g. ``"source 'kafka'"``.
    """
    missing = _server_cannot_import(spark, referenced_modules(obj))
    if missing:
        raise ConnectSetupError(_install_message(what, missing))


def check_plugins_on_server(spark: SparkSession, plugin_modules: dict[str, str]) -> list[str]:
    """Warn about plugins (name -> module) the Connect server cannot import; return their names.

    jetconnect itself missing on the server is an error: no format could work there.
    """
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


def _server_cannot_import(spark: SparkSession, modules: set[str]) -> dict[str, str]:
    """``{module: error}`` for the modules the server's Python workers cannot import."""
    key = getattr(spark, "session_id", None) or str(id(spark))
    return cannot_import(key, modules, lambda names: _probe(spark, names))[1]


def _probe(spark: SparkSession, modules: list[str]) -> Answer:
    """The server's worker interpreter and, per module, its import error there (``None``: it imports)."""
    probe = import_probe(modules)

    # Nested, so pickled by value: with the probe it refers to nothing but the standard library and
    # pyarrow (which a Connect server has), so it runs even on a server without jetconnect.
    def in_arrow(batches: Any) -> Any:
        import pyarrow as pa

        for _ in batches:
            pass
        executable, errors = probe(None)
        yield pa.RecordBatch.from_pydict({"module": modules, "error": errors, "python": [executable] * len(modules)})

    rows = spark.range(1).mapInArrow(in_arrow, "module string, error string, python string").collect()
    return (rows[0]["python"] if rows else ""), {row["module"]: row["error"] for row in rows}


def _pip_hint(module: str) -> str:
    pins = " ".join(f"{d}=={importlib.metadata.version(d)}" for d in distributions(module)) or module
    return f"install it in the server's Python (the PYSPARK_PYTHON of the server and its executors): pip install {pins}"


def _install_message(what: str, missing: dict[str, str]) -> str:
    lines = [f"{what} cannot run on the Spark Connect server: its Python cannot import what it needs:"]
    lines += [f"  - {module} ({error}); {_pip_hint(module)}" for module, error in missing.items()]
    return "\n".join(lines)


__all__ = ["ConnectPluginWarning", "check_plugins_on_server", "check_server_imports", "is_connect"]
