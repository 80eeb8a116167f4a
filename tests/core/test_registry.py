"""The plugin registry: built-ins, entry points, broken plugins as warnings, string options."""

import importlib.metadata
import sys
import types

import pytest

from jetconnect import OptionError, PluginError, PluginLoadWarning, hookimpl
from jetconnect._catalog import Catalog
from jetconnect._factory_calls import call_with_options
from jetconnect._options import Options
from jetconnect._registry import Registry


def _plugin(name, **factories):
    module = types.ModuleType(name)

    @hookimpl
    def register_sources(register):
        for fname, fn in factories.items():
            register(fn, name=fname)

    module.register_sources = register_sources
    return module


def test_builtins_register_first_and_catalog_finds_them(monkeypatch):
    monkeypatch.setenv("JETCONNECT_PLUGINS", "")
    registry = Registry().load([("jetconnect", "0.1.0", __import__("jetconnect._builtins", fromlist=["x"]))])
    assert {"items", "item_stream"} <= set(registry.sources)
    assert registry.sources["items"].plugin == "jetconnect"
    assert registry.sinks["logger"].guarantee == "at-least-once"


def test_broken_entry_point_becomes_a_warning_naming_it(monkeypatch):
    good = _plugin("good_plugin", ticks=lambda n=1: n)
    sys.modules["good_plugin"] = good
    eps = [
        importlib.metadata.EntryPoint("broken", "no_such_module_xyz.plugin", "jetconnect"),
        importlib.metadata.EntryPoint("good", "good_plugin", "jetconnect"),
    ]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    monkeypatch.delenv("JETCONNECT_PLUGINS", raising=False)
    with pytest.warns(PluginLoadWarning, match="jetconnect plugin 'broken'.*could not be loaded"):
        registry = Registry().load()
    assert "ticks" in registry.sources


def test_environment_variable_narrows_plugins(monkeypatch):
    sys.modules["good_plugin"] = _plugin("good_plugin", ticks=lambda: 1)
    eps = [importlib.metadata.EntryPoint("good", "good_plugin", "jetconnect")]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    monkeypatch.setenv("JETCONNECT_PLUGINS", "other")
    assert "ticks" not in Registry().load().sources


def test_two_plugins_claiming_one_name_is_an_error():
    a, b = _plugin("a", dup=lambda: 1), _plugin("b", dup=lambda: 2)
    with pytest.raises(PluginError, match="registered by both plugin 'a' and plugin 'b'"):
        Registry().load([("a", "1", a), ("b", "1", b)])


def test_string_options_are_converted_by_annotations():
    def factory(
        topic: str, partitions: int = 1, compact: bool = False, hosts: list[str] | None = None, ratio: float = 1.0
    ):
        return topic, partitions, compact, hosts, ratio

    opts = Options({"topic": "t", "PARTITIONS": "3", "compact": "true", "hosts": "a,b", "ratio": "0.5"})
    assert call_with_options(factory, opts, "source 'x'") == ("t", 3, True, ["a", "b"], 0.5)
    with pytest.raises(OptionError, match=r"source 'x': unknown option\(s\) colour; known options: topic"):
        call_with_options(factory, Options({"topic": "t", "colour": "red"}), "source 'x'")
    with pytest.raises(OptionError, match=r"option\(s\) topic required"):
        call_with_options(factory, Options({}), "source 'x'")


def test_catalog_error_lists_what_is_installed(monkeypatch):
    catalog = Catalog("source")
    with pytest.raises(AttributeError, match="no source named 'nope' is installed"):
        _ = catalog.nope


class _ClassFactory:
    def __init__(self, path: str, port: int = 1, secure: bool = False) -> None:
        self.args = (path, port, secure)


def test_a_class_as_factory_converts_by_its_init_annotations():
    made = call_with_options(_ClassFactory, Options({"path": "/x", "port": "9", "secure": "yes"}), "sink 'c'")
    assert made.args == ("/x", 9, True)


def test_union_annotations_keep_text_where_the_factory_accepts_it():
    def factory(bound: str | int = 0, topics: str | list[str] = "", limit: int | None = None):
        return bound, topics, limit

    assert call_with_options(factory, Options({"bound": "2024-01-01", "topics": "a,b", "limit": "5"}), "s") == (
        "2024-01-01",
        ["a", "b"],
        5,
    )
