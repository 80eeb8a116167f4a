"""User code travels by value with its connector; installed distributions stay by reference."""

from __future__ import annotations

import textwrap
import uuid

import pytest
from pyspark import cloudpickle

from jetconnect import SourceBuilder
from jetconnect._builders import fill_from_iterator
from jetconnect.spark._shipping import is_user_module, referenced_modules, ship_user_modules


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """Import a module written to a folder only this process has on its path."""

    def make(code: str):
        name = f"usermod_{uuid.uuid4().hex[:8]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(code))
        monkeypatch.syspath_prepend(str(tmp_path))
        return __import__(name)

    yield make


def _source(create):
    return SourceBuilder.batch("s", create).fill_buffer_fn(fill_from_iterator).build()


def test_a_users_module_is_found_and_shipped_by_value(user_module):
    mod = user_module("""
        def create(ctx):
            return iter(["a"])
    """)
    source = _source(mod.create)
    found = referenced_modules(source)
    assert mod.__name__ in found and "jetconnect._builders._batch_source" in found  # the builders package's modules
    assert is_user_module(mod.__name__) and not is_user_module("jetconnect._builders._batch_source")
    try:
        assert ship_user_modules(source) == [mod.__name__]
        assert mod.__name__ not in referenced_modules(source)  # now pickled by value
        # the pickle no longer needs the module: it loads where the module cannot be imported
        del __import__("sys").modules[mod.__name__]
        assert cloudpickle.loads(cloudpickle.dumps(source)).spec.create_fn(None) is not None
    finally:
        cloudpickle.unregister_pickle_by_value(mod)


def test_a_module_whose_globals_do_not_pickle_stays_by_reference(user_module):
    mod = user_module("""
        import threading
        LOCK = threading.Lock()

        def create(ctx):
            with LOCK:
                return iter(["a"])
    """)
    source = _source(mod.create)
    assert ship_user_modules(source) == []
    assert mod.__name__ in referenced_modules(source)
