"""Workers on another Python than the driver: the probe, its cache, when it is skipped, the message (#22)."""

from __future__ import annotations

import sys
import uuid
from types import SimpleNamespace

import pytest

from jetconnect import SourceBuilder, WorkerSetupError
from jetconnect._builders import fill_from_iterator
from jetconnect.spark import _imports
from jetconnect.spark._imports import cannot_import, check_worker_imports, import_probe, workers_run_driver_python
from jetconnect.spark._shipping import referenced_modules

SECRET = "s3cr3t-Pa55word"
BARE = "/opt/bare/bin/python3"


def _session(master: str = "spark://10.0.0.1:7077", python_exec: str = "python3") -> SimpleNamespace:
    context = SimpleNamespace(master=master, pythonExec=python_exec, applicationId=f"app-{uuid.uuid4().hex}")
    return SimpleNamespace(sparkContext=context)


def _source_with_a_secret():
    password = SECRET

    def create(ctx):
        return iter([password])

    return SourceBuilder.batch("db", create).fill_buffer_fn(fill_from_iterator).build()


def test_the_probe_travels_by_value_and_needs_only_the_standard_library():
    probe = import_probe(["json", "no_such_module_here"])
    assert referenced_modules(probe) == set()  # not even jetconnect: it is what the probe asks about
    executable, errors = probe(None)
    assert executable == sys.executable
    assert errors[0] is None and errors[1] == "ModuleNotFoundError: No module named 'no_such_module_here'"


def test_the_message_names_interpreter_module_and_fix_but_no_secret(monkeypatch):
    monkeypatch.setattr(
        _imports,
        "_ask_workers",
        lambda spark, names: (BARE, {n: f"ModuleNotFoundError: No module named '{n.split('.')[0]}'" for n in names}),
    )
    with pytest.raises(WorkerSetupError) as caught:
        check_worker_imports(_session(), "source 'db'", _source_with_a_secret())
    message = str(caught.value)
    assert message.startswith(f"source 'db' cannot run: Spark's Python workers run {BARE}, which cannot import")
    assert "  - pyarrow (ModuleNotFoundError: No module named 'pyarrow')" in message
    assert "  - jetconnect (ModuleNotFoundError: No module named 'jetconnect')" in message
    assert "jetconnect._builders" not in message  # its package's line says it all
    assert f"PYSPARK_PYTHON={sys.executable}" in message and f"spark.pyspark.python={sys.executable}" in message
    assert f"install into {BARE} on every node: pip install " in message
    assert SECRET not in message


def test_a_session_asks_once_and_then_only_about_new_modules():
    asked: list[list[str]] = []

    def ask(names):
        asked.append(names)
        return BARE, {n: ("ModuleNotFoundError: x" if n == "pyarrow" else None) for n in names}

    key = f"app-{uuid.uuid4().hex}"
    assert cannot_import(key, {"pyarrow", "jetconnect"}, ask) == (BARE, {"pyarrow": "ModuleNotFoundError: x"})
    assert cannot_import(key, {"jetconnect"}, ask) == (BARE, {})
    cannot_import(key, {"jetconnect", "kafka_lib"}, ask)
    assert asked == [["jetconnect", "pyarrow"], ["kafka_lib"]]


def test_a_local_master_on_the_drivers_own_python_is_not_asked(monkeypatch):
    def fail(spark, names):
        raise AssertionError("asked the workers")

    monkeypatch.setattr(_imports, "_ask_workers", fail)
    check_worker_imports(_session("local[2]", sys.executable), "source 'db'", _source_with_a_secret())
    assert workers_run_driver_python(_session("local[*]", sys.executable))
    # PATH's python3 (what PySpark runs when PYSPARK_PYTHON is unset) is not this venv's python
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert not workers_run_driver_python(_session("local[2]", "python3"))
    assert not workers_run_driver_python(_session("spark://10.0.0.1:7077", sys.executable))


def test_workers_that_cannot_run_the_probe_are_a_setup_error_too(monkeypatch):
    def broken(spark, names):
        raise RuntimeError('Cannot run program "/nowhere/python": error=2, No such file or directory')

    monkeypatch.setattr(_imports, "_ask_workers", broken)
    with pytest.raises(WorkerSetupError, match="workers \\(/nowhere/python\\) could not run") as caught:
        check_worker_imports(_session(python_exec="/nowhere/python"), "sink 'db'")
    assert f"PYSPARK_PYTHON={sys.executable}" in str(caught.value)
    assert "No such file" in str(caught.value.__cause__)
