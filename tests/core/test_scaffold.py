"""The plugin scaffold refuses names that cannot be a module and never overwrites a directory."""

from __future__ import annotations

import pytest

from jetconnect._scaffold import new_plugin
from jetconnect.errors import OptionError


@pytest.mark.parametrize("name", ["Bad", "a-b", "../x", "o'q", "a%b", "x@y", "class", "", "9lives", "x" * 51, 5, None])
def test_a_name_that_cannot_be_a_module_is_refused_naming_it(tmp_path, name):
    with pytest.raises(OptionError, match="NAME"):
        new_plugin(name, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_is_left_alone(tmp_path):
    (tmp_path / "jetconnect-orders").mkdir()
    (tmp_path / "jetconnect-orders" / "mine.txt").write_text("keep")
    with pytest.raises(OptionError, match="already exists"):
        new_plugin("orders", tmp_path)
    assert (tmp_path / "jetconnect-orders" / "mine.txt").read_text() == "keep"


def test_the_package_has_what_a_plugin_needs(tmp_path):
    root = new_plugin("orders", tmp_path)
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert files == {
        "pyproject.toml",
        "README.md",
        "tests/test_orders.py",
        "jetconnect_orders/__init__.py",
        "jetconnect_orders/connectors.py",
        "jetconnect_orders/plugin.py",
        "jetconnect_orders/py.typed",
    }
    pyproject = (root / "pyproject.toml").read_text()
    assert 'orders = "jetconnect_orders.plugin"' in pyproject and "jetconnect>=0.1,<0.2" in pyproject
    for path in root.rglob("*.py"):
        compile(path.read_text(), str(path), "exec")
