"""Can the Python that runs Spark's workers import what a connector needs? Asked once per session.

Spark starts its Python workers with ``PYSPARK_PYTHON``, else whatever ``python3`` is first on the
PATH, which need not be the driver's interpreter: run ``.venv/bin/python pipeline.py`` without
activating the venv and the workers run the system's Python, where every read fails deep inside
a task with ``ModuleNotFoundError: No module named 'pyarrow'``. Before a classic session's first
read or write jetconnect runs a one-row job that imports the modules a connector needs in a worker,
and raises :class:`WorkerSetupError` naming the worker's interpreter, what it lacks and the fix.
Spark Connect servers are asked the same question, with the same probe (``_connect``).

A local master whose workers run the driver's own interpreter cannot differ from the driver, so
that case asks nothing.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jetconnect.errors import WorkerSetupError
from jetconnect.spark._shipping import distributions, referenced_modules

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

#: What a probe reports: the worker's ``sys.executable`` and, per module asked, its import error or None.
Answer = tuple[str, dict[str, "str | None"]]

#: Modules every read and write needs in the workers, whatever the connector refers to.
WORKER_MODULES = frozenset({"jetconnect", "pyarrow"})


@dataclass
class _Known:
    executable: str = ""
    errors: dict[str, str | None] = field(default_factory=dict)


#: What each session's workers answered, by session (application id, or Connect session id).
_answers: dict[str, _Known] = {}


def import_probe(modules: Iterable[str]) -> Callable[[Any], tuple[str, list[str | None]]]:
    """A function that imports ``modules`` wherever it runs; it returns ``(sys.executable, errors)``.

    The function is nested, so cloudpickle sends it by value, and it uses nothing but the standard
    library: it runs in a worker that has neither jetconnect nor pyarrow, which is what it asks about.
    """
    names = list(modules)

    def probe(_: Any = None) -> tuple[str, list[str | None]]:
        import importlib
        import sys

        errors: list[str | None] = []
        for name in names:
            try:
                importlib.import_module(name)
                errors.append(None)
            except Exception as exc:  # any import failure is what we are asking about
                errors.append(f"{type(exc).__name__}: {exc}")
        return sys.executable, errors

    return probe


def installed_probe(
    modules: Iterable[str], dists: Iterable[str]
) -> Callable[[Any], tuple[str, list[str | None], list[str | None]]]:
    """:func:`import_probe` that also reports the installed version of each of ``dists`` (None: absent).

    ``jetconnect doctor`` compares them with the driver's: a worker with another version of a
    plugin unpickles the driver's connector with different code.
    """
    probe = import_probe(modules)
    names = list(dists)

    def installed(_: Any = None) -> tuple[str, list[str | None], list[str | None]]:
        import importlib.metadata

        executable, errors = probe(None)
        versions: list[str | None] = []
        for name in names:
            try:
                versions.append(importlib.metadata.version(name))
            except importlib.metadata.PackageNotFoundError:
                versions.append(None)
        return executable, errors, versions

    return installed


def cannot_import(key: str, modules: Iterable[str], ask: Callable[[list[str]], Answer]) -> tuple[str, dict[str, str]]:
    """The workers' interpreter and ``{module: error}`` for the ``modules`` they cannot import.

    ``ask`` runs :func:`import_probe` on a worker of the session ``key`` names; it is called only
    for modules that session has not been asked about yet, so a session pays for one job.
    """
    known = _answers.setdefault(key, _Known())
    wanted = sorted(set(modules))
    unknown = [m for m in wanted if m not in known.errors]
    if unknown:
        known.executable, answered = ask(unknown)
        known.errors.update(answered)
    return known.executable, {m: error for m in wanted if (error := known.errors.get(m)) is not None}


def check_worker_imports(spark: SparkSession, what: str, obj: Any = None) -> None:
    """Raise WorkerSetupError unless a classic session's Python workers can import what ``obj`` needs.

    ``what`` names the connector in the message, e.g. ``"source 'kafka'"``; ``obj`` is what Spark
    will pickle to the workers (the data source class), None for jetconnect and pyarrow alone.
    """
    sc = spark.sparkContext
    if workers_run_driver_python(spark):
        return
    modules = WORKER_MODULES | (referenced_modules(obj) if obj is not None else set())
    try:
        executable, missing = cannot_import(sc.applicationId, modules, lambda names: _ask_workers(spark, names))
    except Exception as exc:  # the job failed before our code ran: the workers' Python cannot even start
        raise WorkerSetupError(_unusable_message(what, sc.pythonExec)) from exc
    if missing:
        raise WorkerSetupError(worker_setup_message(what, executable, missing))


def workers_run_driver_python(spark: SparkSession) -> bool:
    """True when the workers are sure to run this very interpreter: a local master and
    ``PYSPARK_PYTHON`` (or, unset, PATH's ``python3``) naming ``sys.executable``.

    The path is compared as spelled, not resolved: a venv's ``bin/python`` is a symlink to the
    system interpreter that the system's ``python3`` resolves to as well, yet only one sees the venv.
    """
    sc = spark.sparkContext
    if not (sc.master or "").startswith("local"):
        return False
    python = shutil.which(sc.pythonExec)
    return python is not None and os.path.abspath(python) == os.path.abspath(sys.executable)


def _ask_workers(spark: SparkSession, modules: list[str]) -> Answer:
    # an RDD job, not mapInArrow or a UDF: it needs nothing in the worker but pyspark itself
    executable, errors = spark.sparkContext.parallelize([0], 1).map(import_probe(modules)).first()
    return executable, dict(zip(modules, errors))


def worker_setup_message(what: str, executable: str, missing: dict[str, str]) -> str:
    """What the user reads: which interpreter the workers run, what it lacks, and how to fix it."""
    lines = [f"{what} cannot run: Spark's Python workers run {executable}, which cannot import what it needs:"]
    # a submodule failing for the same reason as its listed package adds nothing
    shown = {
        module: error
        for module, error in missing.items()
        if not any(module.startswith(f"{parent}.") and missing[parent] == error for parent in missing)
    }
    lines += [f"  - {module} ({error})" for module, error in shown.items()]
    lines.append(_fix(executable, missing))
    return "\n".join(lines)


def _unusable_message(what: str, python_exec: str) -> str:
    return (
        f"{what} cannot run: Spark's Python workers ({python_exec}) could not run a one-row job "
        f"that only imports modules (the cause follows).\n{_fix(python_exec, {})}"
    )


def _fix(executable: str, missing: dict[str, str]) -> str:
    driver = sys.executable
    # PySpark reads PYSPARK_PYTHON when the SparkContext starts; spark.pyspark.python only reaches
    # it through spark-submit, which sets PYSPARK_PYTHON for the driver it launches
    fix = (
        f"The driver runs {driver}: start the workers on it with PYSPARK_PYTHON={driver} in the "
        f"environment before the SparkSession starts (spark-submit: --conf spark.pyspark.python={driver})"
    )
    if sys.prefix != sys.base_prefix:
        fix += f", or activate its environment first (source {sys.prefix}/bin/activate)"
    if missing:
        pins = sorted({_pin(module) for module in missing})
        fix += f"; on a cluster, install into {executable} on every node: pip install {' '.join(pins)}"
    return fix + "."


def _pin(module: str) -> str:
    dists = distributions(module)
    if not dists:
        return module.split(".", 1)[0]
    return " ".join(f"{d}=={importlib.metadata.version(d)}" for d in dists)


__all__ = [
    "WORKER_MODULES",
    "cannot_import",
    "check_worker_imports",
    "import_probe",
    "installed_probe",
    "workers_run_driver_python",
]
