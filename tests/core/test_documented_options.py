"""Every option a plugin's connectors take is in its README, and every option its README's tables
name is taken by one of them: docs that claim only what runs.

Options are read from the registered factories' signatures (what ``spark.read.format(...).option``
and ``sources.x(...)`` accept); the README's option tables are read as a person reads them: the
first cell of a table headed ``option``, and the names of a cell headed ``options`` outside the
parentheses that give defaults.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from jetconnect._factory_signature import factory_signature
from jetconnect._registry import get_registry

ROOT = Path(__file__).resolve().parents[2]
#: Options the Spark adapter and the core take for every source or stream (not a factory's).
ADAPTER_OPTIONS = {"max_records_per_batch"}
#: Factory parameters that are not options: the connector's positional name, the passthrough of
#: client settings (documented as "anything else").
NOT_OPTIONS = {"name", "client_config"}


def _readme(plugin: str) -> Path | None:
    for folder in (ROOT / "plugins" / plugin, ROOT / "contrib" / plugin):
        if (folder / "README.md").exists():
            return folder / "README.md"
    return None


def _plugins() -> dict[str, set[str]]:
    """Plugin name -> the options its registered sources and sinks take."""
    registry = get_registry()
    options: dict[str, set[str]] = {}
    for spec in [*registry.sources.values(), *registry.sinks.values()]:
        params = factory_signature(spec.factory).parameters.values()
        taken = {p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
        options.setdefault(spec.plugin, set()).update(taken - NOT_OPTIONS)
    return {plugin: names for plugin, names in options.items() if _readme(plugin) is not None}


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _without_parentheses(text: str) -> str:
    while (stripped := re.sub(r"\([^()]*\)", "", text)) != text:
        text = stripped
    return text


def _names(text: str) -> set[str]:
    """Option-like names in backticks: `name`, `name(args)`, `a.b` is not one."""
    return set(re.findall(r"`([a-z_][a-z0-9_]*)(?:\([^`]*\)|=[^`]*)?`", text))


def _table_options(readme: str) -> set[str]:
    """The names a README's option tables list as options."""
    names: set[str] = set()
    column = None
    for line in readme.splitlines():
        if not line.startswith("|"):
            column = None
            continue
        cells = _cells(line)
        if column is None:
            header = [c.lower() for c in cells]
            column = next((i for i, c in enumerate(header) if c in ("option", "options", "options (default)")), -1)
            kind = header[column] if column >= 0 else ""
            continue
        if column < 0 or set(line) <= set("|-: ") or column >= len(cells):
            continue
        cell = cells[column]
        names |= _names(cell if kind == "option" else _without_parentheses(cell))
    return names


PLUGINS = _plugins()


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_every_option_in_code_is_in_the_readme(plugin: str) -> None:
    documented = _names(_readme(plugin).read_text())
    assert PLUGINS[plugin] - documented == set(), f"{_readme(plugin)} does not mention these options"


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_every_option_the_readme_lists_is_taken_by_a_connector(plugin: str) -> None:
    listed = _table_options(_readme(plugin).read_text())
    assert listed, f"no option table found in {_readme(plugin)}"
    # client_config is a factory parameter (a passthrough of client settings), not a Spark option:
    # a table may list it beside the options without it counting as one
    unknown = listed - PLUGINS[plugin] - ADAPTER_OPTIONS - NOT_OPTIONS
    assert unknown == set(), f"{_readme(plugin)} lists options no connector takes"
