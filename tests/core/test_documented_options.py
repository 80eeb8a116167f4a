"""Every connector's page documents exactly the options it takes, with the code's defaults: docs
that claim only what runs.

Checked per connector, not per plugin: a plugin page that documents ``topic`` for its source says
nothing about its sink. The options are read from each registered source's and sink's factory
signature (what ``sources.x(...)`` and ``spark.read.format(...).option`` accept); the page is read
as a person reads it (docs/connectors' page shape, issue #47): under ``## Options``, a
``### sources.NAME`` / ``### sinks.NAME`` heading (several connectors sharing every option may
share one: ``### sources.a, sources.b``), then a table headed ``| option | type | default |
meaning |``, one row per option, the option's name in backticks in the first cell. A default cell
that is a plain value (``required``, ``none``, ``true``, ``10,000``, ``128 MiB``, a backticked
``part``) must be the signature's default; prose is not compared.

A plugin's connectors are on its README (``plugins/NAME/README.md``, ``contrib/NAME/README.md``,
which the docs site shows as ``connectors/NAME.md``); the core's built-in connectors on
``docs/connectors/builtins.md``.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jetconnect._factory_signature import factory_signature
from jetconnect._registry import get_registry

ROOT = Path(__file__).resolve().parents[2]
#: Options the Spark adapter and the core take for every source or stream (not a factory's): a
#: table may list them, none has to.
ADAPTER_OPTIONS = {"max_records_per_batch"}
#: Factory parameters that are not options: the connector's positional name, the passthrough of
#: client settings (documented as "anything else"; a table may list it beside the options).
NOT_OPTIONS = {"name", "client_config"}
#: The plugin name of the core's built-in connectors (items, item_stream, logger, noop).
CORE_PLUGIN = "jetconnect"
BUILTINS_PAGE = ROOT / "docs" / "connectors" / "builtins.md"
HEADER = ["option", "type", "default", "meaning"]
#: The ``## `` headings every connector page has, in this order (others may follow them).
SECTIONS = ["Example", "Options", "Guarantee", "Failures", "Limits"]


def page_of(plugin: str) -> Path:
    """The page that documents a plugin's connectors (whether it exists or not)."""
    if plugin == CORE_PLUGIN:
        return BUILTINS_PAGE
    for folder in (ROOT / "plugins" / plugin, ROOT / "contrib" / plugin):
        if (folder / "README.md").exists():
            return folder / "README.md"
    return ROOT / "plugins" / plugin / "README.md"


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT))


# --- reading a page --------------------------------------------------------------------------------


@dataclass
class Table:
    """One ``### sources.x`` heading of a page's Options section and the first table under it."""

    heading: str
    line: int
    connectors: set[str]
    header: list[str] = field(default_factory=list)
    rows: list[tuple[int, list[str]]] = field(default_factory=list)


def _cells(line: str) -> list[str]:
    # a `|` inside backticks (`a \| b`) is escaped in Markdown tables
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def headings(text: str) -> list[str]:
    """The ``## `` headings of a page, outside code blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## "):
            found.append(line[3:].strip())
    return found


def option_tables(text: str) -> list[Table]:
    """The ``### `` headings of the ``## Options`` section, each with the first table under it."""
    tables: list[Table] = []
    in_options = fenced = False
    current: Table | None = None
    table_done = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        if line.startswith("## "):
            in_options, current = line[3:].strip() == "Options", None
            continue
        if not in_options:
            continue
        if line.startswith("### "):
            named = {f"{kind}.{name}" for kind, name in re.findall(r"\b(sources|sinks)\.([a-z_][a-z0-9_]*)", line)}
            current, table_done = Table(line[4:].strip(), number, named), False
            tables.append(current)
        elif current is not None and not table_done and line.startswith("|"):
            cells = _cells(line)
            if not current.header:
                current.header = [cell.lower() for cell in cells]
            elif not set(line) <= set("|-: "):
                current.rows.append((number, cells))
        elif current is not None and current.header:
            table_done = True
    return tables


_OPTION_CELL = re.compile(r"`([a-z_][a-z0-9_]*)`")

#: A default cell that is a plain value, not prose: ``required``, ``none``, ``true``/``false``, a
#: number (``10,000``, ``128 MiB``), or a word (``utf-8``, a backticked ``part``).
_UNITS = {"": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_NUMBER = re.compile(r"(-?[\d,]+(?:\.\d+)?)(?: (KiB|MiB|GiB))?")
_NOT_PLAIN = object()


def _plain_default(text: str) -> object:
    """The value a page's default cell states, or ``_NOT_PLAIN`` for prose (then nothing is compared)."""
    text = re.split(r"[:;]| \(", text.strip(), maxsplit=1)[0].strip()  # "0 (no limit)", "0: no rolling"
    quoted = len(text) > 1 and text[0] == text[-1] == "`" and "`" not in text[1:-1]
    word = text[1:-1] if quoted else text
    if text == "required":
        return inspect.Parameter.empty
    if word in ("none", "true", "false"):
        return {"none": None, "true": True, "false": False}[word]
    if number := _NUMBER.fullmatch(word):
        return float(number[1].replace(",", "")) * _UNITS[number[2] or ""]
    if quoted and word:
        return word  # `part`, `.txt`, `*.avro`, `INFO`
    if re.fullmatch(r"[\w.-]+", word) and not word.isalpha():
        return word  # utf-8, 127.0.0.1
    return _NOT_PLAIN


def _same(stated: object, actual: object) -> bool:
    if isinstance(stated, float):  # a number: not a bool, which == 1 would take for one
        return not isinstance(actual, bool) and isinstance(actual, int | float) and stated == actual
    if isinstance(stated, str) and actual is None:
        return True  # None in the code stands for a derived value the page names (`earliest`, `.txt`)
    return type(stated) is type(actual) and stated == actual


# --- what the registry says ------------------------------------------------------------------------


def _connectors() -> dict[str, object]:
    """``sources.NAME`` / ``sinks.NAME`` -> the registered spec."""
    registry = get_registry()
    found: dict[str, object] = {f"sources.{name}": spec for name, spec in registry.sources.items()}
    found.update({f"sinks.{name}": spec for name, spec in registry.sinks.items()})
    return dict(sorted(found.items()))


def options_of(spec: object) -> dict[str, inspect.Parameter]:
    """The options a connector's factory takes, by name."""
    parameters = factory_signature(spec.factory).parameters.values()  # type: ignore[attr-defined]
    return {
        p.name: p for p in parameters if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name not in NOT_OPTIONS
    }


CONNECTORS = _connectors()
PAGES = sorted({page_of(spec.plugin) for spec in CONNECTORS.values()})  # type: ignore[attr-defined]


def _table_of(connector: str) -> tuple[Path, Table]:
    """The page and the table that document ``connector``: the test fails naming what is missing."""
    spec = CONNECTORS[connector]
    page = page_of(spec.plugin)  # type: ignore[attr-defined]
    assert page.exists(), (
        f"{connector} (plugin {spec.plugin!r}) is documented on {_shown(page)}, which does not exist"  # type: ignore[attr-defined]
    )
    tables = [table for table in option_tables(page.read_text()) if connector in table.connectors]
    assert tables, f"{_shown(page)} has no '### {connector}' heading under '## Options'"
    assert len(tables) == 1, f"{_shown(page)} has {len(tables)} headings naming {connector} under '## Options'"
    table = tables[0]
    if options_of(spec) or table.header:
        assert table.header == HEADER, (
            f"{_shown(page)}:{table.line}: the table under '### {table.heading}' must be headed "
            f"'| {' | '.join(HEADER)} |', not {table.header or 'missing'}"
        )
    return page, table


@pytest.mark.parametrize("connector", list(CONNECTORS))
def test_its_table_lists_exactly_the_options_its_factory_takes(connector: str) -> None:
    page, table = _table_of(connector)
    options = set(options_of(CONNECTORS[connector]))
    listed: list[str] = []
    malformed = []
    for number, cells in table.rows:
        name = _OPTION_CELL.fullmatch(cells[0])
        if name is None:
            malformed.append(f"{_shown(page)}:{number}: first cell {cells[0]!r} is not one `option`")
        else:
            listed.append(name[1])
    twice = sorted({name for name in listed if listed.count(name) > 1})
    missing = sorted(options - set(listed))
    unknown = sorted(set(listed) - options - ADAPTER_OPTIONS - NOT_OPTIONS)
    assert (missing, unknown, twice, malformed) == ([], [], [], []), (
        f"{_shown(page)}, '### {table.heading}': options {connector} takes that the table lacks: {missing}; "
        f"rows of options it does not take: {unknown}; rows twice: {twice}; rows not naming one option: {malformed}"
    )


@pytest.mark.parametrize("connector", list(CONNECTORS))
def test_each_row_states_a_type_and_the_codes_default(connector: str) -> None:
    """A page that says ``60`` where the code says 30 is wrong in a way no reader can tell."""
    page, table = _table_of(connector)
    options = options_of(CONNECTORS[connector])
    wrong = []
    for number, cells in table.rows:
        where = f"{_shown(page)}:{number}"
        if len(cells) != len(HEADER):
            wrong.append(f"{where}: {len(cells)} cells, not {len(HEADER)}")
            continue
        name, type_, default = (_OPTION_CELL.fullmatch(cells[0]), cells[1], cells[2])
        if not type_ or not default:
            wrong.append(f"{where}: {cells[0]} states no {'type' if not type_ else 'default'}")
        if name is None or name[1] not in options:
            continue
        stated, actual = _plain_default(default), options[name[1]].default
        if stated is not _NOT_PLAIN and not _same(stated, actual):
            shown = "required" if actual is inspect.Parameter.empty else repr(actual)
            wrong.append(f"{where}: {connector} {name[1]}: the page says {default!r}, the code {shown}")
    assert wrong == []


@pytest.mark.parametrize("page", PAGES, ids=_shown)
def test_every_connector_page_has_the_sections_in_order(page: Path) -> None:
    assert page.exists(), f"{_shown(page)} does not exist"
    found = headings(page.read_text())
    assert found[: len(SECTIONS)] == SECTIONS, f"{_shown(page)}: '## ' headings {found}, must begin with {SECTIONS}"


@pytest.mark.parametrize("page", PAGES, ids=_shown)
def test_every_options_heading_names_a_connector_of_its_page(page: Path) -> None:
    if not page.exists():
        pytest.skip(f"{_shown(page)} does not exist (the connectors' own tests say so)")
    stale = [
        f"line {table.line}: '### {table.heading}'"
        for table in option_tables(page.read_text())
        if not table.connectors
        or any(
            name not in CONNECTORS or page_of(CONNECTORS[name].plugin) != page  # type: ignore[attr-defined]
            for name in table.connectors
        )
    ]
    assert stale == [], f"{_shown(page)}: Options headings naming no connector documented here"


# --- the checks check something --------------------------------------------------------------------

_PAGE = """# x

## Options

### sources.a, sources.b

| option | type | default | meaning |
|---|---|---|---|
| `size` | int | 10,000 | rows |
| `mode` | str | `fast` (or `slow`) | how |
| `fn` | function | none | Python only: `a \\| b` |

Prose after the table, and `other` in it.

| not | the | options | table |
|---|---|---|---|
| `x` | | | |

### sinks.c

```
### sinks.d
```

## Guarantee
"""


def test_the_page_reader_finds_each_connectors_table_and_nothing_else() -> None:
    tables = option_tables(_PAGE)
    assert [(t.heading, t.connectors) for t in tables] == [
        ("sources.a, sources.b", {"sources.a", "sources.b"}),
        ("sinks.c", {"sinks.c"}),
    ]
    assert tables[0].header == HEADER and [cells[0] for _, cells in tables[0].rows] == ["`size`", "`mode`", "`fn`"]
    assert tables[0].rows[2][1][3] == "Python only: `a \\| b`" and tables[1].rows == []
    assert headings(_PAGE) == ["Options", "Guarantee"]


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("required", inspect.Parameter.empty),
        ("none", None),
        ("`false`", False),
        ("10,000", 10_000),
        ("128 MiB", 128 << 20),
        ("0 (no limit)", 0),
        ("0: no rolling", 0),
        ("`part`", "part"),
        ("`.txt`", ".txt"),
        ("`*.avro`", "*.avro"),
        ("utf-8", "utf-8"),
        ("`earliest`, or what `auto_offset_reset` says", _NOT_PLAIN),
        ("the cache's", _NOT_PLAIN),
        ("cores", _NOT_PLAIN),
    ],
)
def test_a_default_cell_is_read_as_a_value_or_as_prose(cell: str, value: object) -> None:
    assert _plain_default(cell) == value if value is not _NOT_PLAIN else _plain_default(cell) is _NOT_PLAIN


def test_a_stated_default_is_compared_by_type() -> None:
    assert _same(30.0, 30) and _same(30.0, 30.0) and not _same(1.0, True) and not _same(30.0, "30")
    assert _same(True, True) and not _same(True, 1) and not _same(None, "x") and _same("x", None)
    assert _same(inspect.Parameter.empty, inspect.Parameter.empty) and not _same(inspect.Parameter.empty, None)


def test_the_registry_has_connectors_of_every_kind_to_check() -> None:
    """The parametrized tests above check something: the registry lists the plugins' connectors."""
    assert {"sources.items", "sinks.noop", "sources.kafka", "sinks.kafka", "sources.jdbc"} <= set(CONNECTORS)
    assert options_of(CONNECTORS["sinks.kafka"])["broker_timeout_s"].default == 30
