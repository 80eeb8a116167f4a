"""Every option a plugin's connectors take is in its README, and every option its README's tables
name is taken by one of them: docs that claim only what runs.

Options are read from the registered factories' signatures (what ``spark.read.format(...).option``
and ``sources.x(...)`` accept); the README's option tables are read as a person reads them: the
first cell of a table headed ``option``, and the names of a cell headed ``options`` outside the
parentheses that give defaults.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
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


def _table_rows(readme: str) -> Iterator[tuple[int, str, list[str], list[str]]]:
    """``(line number, heading above, header cells lowered, cells)`` of each body row of a README's tables."""
    heading, header = "", None
    for number, line in enumerate(readme.splitlines(), 1):
        if line.startswith("#"):
            heading = line
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = [c.lower() for c in cells]
        elif not set(line) <= set("|-: "):
            yield number, heading, header, cells


def _table_options(readme: str) -> set[str]:
    """The names a README's option tables list as options."""
    names: set[str] = set()
    for _, _, header, cells in _table_rows(readme):
        column = next((i for i, c in enumerate(header) if c in ("option", "options", "options (default)")), -1)
        if column < 0 or column >= len(cells):
            continue
        cell = cells[column]
        names |= _names(cell if header[column] == "option" else _without_parentheses(cell))
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


#: A default cell that is a plain value, not prose: ``required``, ``none``, ``true``/``false``, a
#: number (``10,000``, ``128 MiB``), or one word (``utf-8``, a backticked ``part``).
_UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_NUMBER = re.compile(r"(-?[\d,]+(?:\.\d+)?)(?: (KiB|MiB|GiB))?")
_NOT_PLAIN = object()


def _plain_default(text: str) -> object:
    """The value a README's default cell states, or ``_NOT_PLAIN`` for prose (then nothing is compared)."""
    text = re.split(r"[:;]| \(", text.strip(), maxsplit=1)[0].strip()  # "0 (no limit)", "0: no rolling"
    word = text[1:-1] if len(text) > 1 and text[0] == text[-1] == "`" and "`" not in text[1:-1] else text
    if text == "required":
        return inspect.Parameter.empty
    if text in ("none", "true", "false"):
        return {"none": None, "true": True, "false": False}[text]
    if number := _NUMBER.fullmatch(word):
        return float(number[1].replace(",", "")) * _UNITS[number[2] or ""]
    if re.fullmatch(r"[\w.-]+", word) and (word != text or not word.isalpha()):
        return word
    return _NOT_PLAIN


def _connectors(text: str, kind: str, plugin: str) -> list[object]:
    """The registered connectors of ``kind`` a heading or cell names (``sources.x``, ``x(``, `` `x` ``);
    all of the plugin's connectors of that kind when it names none."""
    registry = get_registry()
    table = registry.sources if kind == "source" else registry.sinks
    named = set(re.findall(r"(?:sources|sinks)\.([a-z_]+)|`([a-z_]+)[(`]", text))
    found = [table[name] for pair in named for name in pair if name in table and table[name].plugin == plugin]
    return found or [spec for spec in table.values() if spec.plugin == plugin]


def _stated_defaults(plugin: str) -> list[tuple[str, str, object, list[object]]]:
    """``(where, option, stated default, connectors)`` for each plain default a README's tables state:
    a ``default`` column beside an ``option`` column, or ``name (default)`` in an ``options (default)`` cell."""
    readme = _readme(plugin)
    stated = []
    for number, heading, header, cells in _table_rows(readme.read_text()):
        if len(cells) != len(header):
            continue
        where = f"{readme.relative_to(ROOT)}:{number}"
        lowered = heading.lower()
        kind = "source" if "source" in lowered else "sink"
        by_heading = ("source" in lowered) != ("sink" in lowered)
        names = re.findall(r"`([a-z_][a-z0-9_]*)`", cells[0])
        if header[:3] == ["option", "default", "meaning"] and by_heading:
            defaults = re.split(r", | / ", cells[1]) if len(names) > 1 else [cells[1]]
            for name, default in zip(names, defaults, strict=False) if len(defaults) == len(names) else []:
                stated.append((where, name, _plain_default(default), _connectors(heading, kind, plugin)))
        elif header[:2] == ["option", "meaning"] and by_heading:
            default = re.search(r"\(default ([^()]*)\)", cells[1])
            if len(names) == 1 and default:
                stated.append((where, names[0], _plain_default(default[1]), _connectors(heading, kind, plugin)))
        elif header[1:2] in (["options (default)"], ["options"]) and header[0] in ("source", "sink", "connector"):
            for kind in ("source", "sink"):
                if header[0] == "connector" and f"{kind}s." not in cells[0]:
                    continue
                if header[0] in ("source", "sink") and header[0] != kind:
                    continue
                for name, default in re.findall(r"`([a-z_][a-z0-9_]*)` \(([^()]*)\)", cells[1]):
                    stated.append((where, name, _plain_default(default), _connectors(cells[0], kind, plugin)))
    return [entry for entry in stated if entry[2] is not _NOT_PLAIN]


@pytest.mark.parametrize("plugin", sorted(PLUGINS))
def test_the_defaults_a_readme_states_are_the_codes(plugin: str) -> None:
    """A README that says ``60`` where the code says 30 is wrong in a way no reader can tell."""
    wrong = []
    for where, name, stated, specs in _stated_defaults(plugin):
        for spec in specs:
            parameter = factory_signature(spec.factory).parameters.get(name)
            if parameter is None:
                continue
            actual = parameter.default
            same = stated == actual if not isinstance(stated, float) else stated == actual and actual is not True
            if not same and not (isinstance(stated, str) and actual is None):
                wrong.append(f"{where}: {spec.name} {name}: README {stated!r}, code {actual!r}")
    assert wrong == []


def test_the_readme_defaults_check_reads_the_tables() -> None:
    """The check above compares something: the Kafka source's and JMS's tables yield plain defaults."""
    kafka = {name: stated for _, name, stated, _ in _stated_defaults("kafka")}
    assert kafka["broker_timeout_s"] == 30 and kafka["bootstrap_servers"] is inspect.Parameter.empty
    jms = {name: stated for _, name, stated, _ in _stated_defaults("jms")}
    assert (jms["host"], jms["port"], jms["prefetch"]) == ("127.0.0.1", 61613, 2000)
