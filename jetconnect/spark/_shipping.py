"""User code travels with its connector: modules no installed distribution provides go by value.

Spark pickles each data source class, with the connector object and the user's functions inside,
and unpickles it in Python workers elsewhere: executors on other machines, a Spark Connect server.
cloudpickle sends a function of an importable module by reference (module and name), which only
works where that module can be imported too. A pipeline's own helper module usually cannot be (it
sits beside the driver script, or on a path added at run time), so jetconnect registers such
modules with cloudpickle to be pickled by value. Modules of installed distributions (jetconnect, a
plugin, a client library) stay by reference: they must be installed wherever Spark runs Python.
"""

from __future__ import annotations

import functools
import importlib.metadata
import io
import sys
import sysconfig
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pyspark import cloudpickle
from pyspark.cloudpickle import cloudpickle as _impl

#: Modules every Spark Python worker has.
_ALWAYS_THERE = frozenset({"pyspark", "py4j", "builtins", "__main__"}) | frozenset(sys.stdlib_module_names)
_INSTALL_DIRS = tuple({Path(sysconfig.get_paths()[key]).resolve() for key in ("purelib", "platlib", "stdlib")})
#: Shipping is settled in at most this many rounds: code sent by value may name more modules.
_MAX_ROUNDS = 5


def referenced_modules(obj: Any) -> set[str]:
    """Modules that pickling ``obj`` refers to by name (so the unpickling side must import them)."""
    found: set[str] = set()

    class Recorder(_impl.Pickler):
        def reducer_override(self, item: Any) -> Any:
            if isinstance(item, types.ModuleType):
                if not _impl._is_registered_pickle_by_value(item):
                    found.add(item.__name__)
            elif isinstance(item, (type, types.FunctionType)) and _impl._should_pickle_by_reference(item):
                found.add(getattr(item, "__module__", None) or "")
            return super().reducer_override(item)

    Recorder(io.BytesIO(), protocol=cloudpickle.DEFAULT_PROTOCOL).dump(obj)
    return {name for name in found if name and top_level(name) not in _ALWAYS_THERE}


def top_level(module: str) -> str:
    return module.split(".", 1)[0]


def distributions(module: str) -> list[str]:
    """The installed distributions that provide ``module`` (none for a user's own file)."""
    return sorted(set(_packages_distributions(tuple(sys.path)).get(top_level(module), [])))


@functools.lru_cache(maxsize=4)
def _packages_distributions(path: tuple[str, ...]) -> Mapping[str, list[str]]:
    # scanning every installed distribution takes tens of milliseconds: once per sys.path
    return importlib.metadata.packages_distributions()


def is_user_module(name: str) -> bool:
    """A module of the user's own (no distribution provides it, it lives outside site-packages)."""
    module = sys.modules.get(name)
    if module is None or distributions(name):
        return False
    file = getattr(module, "__file__", None)
    if not file:
        return False
    path = Path(file).resolve()
    return not any(path.is_relative_to(folder) for folder in _INSTALL_DIRS)


def ship_user_modules(obj: Any) -> list[str]:
    """Register the user modules ``obj`` refers to for pickling by value; return their names.

    If ``obj`` cannot be pickled that way (a module global that does not pickle, say) the
    registration is undone and the modules stay by reference, as Spark would have sent them.
    """
    shipped: list[str] = []
    try:
        for _ in range(_MAX_ROUNDS):
            new = sorted(name for name in referenced_modules(obj) if is_user_module(name))
            if not new:
                break
            for name in new:
                cloudpickle.register_pickle_by_value(sys.modules[name])
            shipped += new
        if shipped:
            cloudpickle.dumps(obj)
    except Exception:  # whatever stops pickling by value: fall back to what worked before
        for name in shipped:
            cloudpickle.unregister_pickle_by_value(sys.modules[name])
        return []
    return shipped
