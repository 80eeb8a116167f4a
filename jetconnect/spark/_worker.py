"""Settling a Spark Python worker before each partition it reads or writes."""

from __future__ import annotations

import gc
import sys

#: How many modules were loaded when the worker last froze its objects (-1: never).
_modules_at_freeze = -1


def settle() -> None:
    """Freeze what the worker process has loaded, so that the full garbage collection PySpark's
    daemon runs after every task of a reused worker skips it.

    With pyspark, pyarrow and a connector's client library loaded, that collection walks 100k+
    long-lived objects: 25-80 ms per task on two cores, more than a small task's own
    work. Frozen objects are never collected, so the worker freezes only when it has loaded new
    modules since the last freeze (a connector imports its client library during its first task;
    the next task freezes it). Each freeze also keeps the current task's few cyclic objects
    (its unpickled reader) for good; freezes stop once every connector used has loaded.
    """
    global _modules_at_freeze
    loaded = len(sys.modules)
    if loaded != _modules_at_freeze:
        _modules_at_freeze = loaded
        gc.collect()  # whatever is garbage already goes now, not into the permanent generation
        gc.freeze()
