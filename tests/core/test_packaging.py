"""Every jetconnect distribution is packaged alike: the core's PySpark range, and each plugin's
README, ``py.typed`` and compatible range of the core (issue #21)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = sorted(p.parent for p in [*ROOT.glob("plugins/*/pyproject.toml"), *ROOT.glob("contrib/*/pyproject.toml")])


def _project(directory: Path) -> dict:
    return tomllib.loads((directory / "pyproject.toml").read_text())


def _core_version() -> Version:
    return Version(_project(ROOT)["project"]["version"])


def _requirement(requirements: list[str], name: str) -> Requirement:
    found = [Requirement(r) for r in requirements if Requirement(r).name == name]
    assert len(found) == 1, f"expected one requirement on {name} in {requirements}"
    return found[0]


def test_plugins_are_found() -> None:
    assert {p.name for p in PLUGINS} >= {"files", "hdfs", "imap", "jdbc", "jms", "kafka", "socket", "http_poll"}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugin_declares_its_readme(plugin: Path) -> None:
    readme = _project(plugin)["project"].get("readme")
    assert readme == "README.md", f"{plugin / 'pyproject.toml'}: readme is {readme!r}"
    assert (plugin / readme).is_file(), f"{plugin / readme} is missing"


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugin_ships_py_typed(plugin: Path) -> None:
    config = _project(plugin)["tool"]["setuptools"]
    (package,) = [name.rstrip("*") for name in config["packages"]["find"]["include"]]
    assert "py.typed" in config.get("package-data", {}).get(package, []), f"{plugin}: py.typed not in package-data"
    assert (plugin / package / "py.typed").is_file(), f"{plugin / package / 'py.typed'} is missing"


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.name)
def test_plugin_depends_on_a_compatible_range_of_the_core(plugin: Path) -> None:
    core = _requirement(_project(plugin)["project"]["dependencies"], "jetconnect")
    assert core.specifier, f"{plugin}: 'jetconnect' without a version range"
    assert _core_version() in core.specifier, f"{plugin}: {core} excludes the core's {_core_version()}"
    next_minor = Version(f"{_core_version().major}.{_core_version().minor + 1}")
    assert next_minor not in core.specifier, f"{plugin}: {core} admits {next_minor}, whose API may differ"


def test_core_declares_a_pyspark_range_with_the_installed_release_in_it() -> None:
    import pyspark

    project = _project(ROOT)["project"]
    requirements = [
        project["dependencies"],
        project["optional-dependencies"]["connect"],
        project["optional-dependencies"]["test"],
    ]
    specifiers = {str(_requirement(r, "pyspark").specifier) for r in requirements}
    assert len(specifiers) == 1, f"the core and its extras disagree on PySpark: {specifiers}"
    specifier = _requirement(project["dependencies"], "pyspark").specifier
    assert not any(s.operator == "==" for s in specifier), f"PySpark is pinned ({specifier}), not a range"
    assert Version(pyspark.__version__) in specifier, f"pyspark {pyspark.__version__} is outside {specifier}"
