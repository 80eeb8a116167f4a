"""``jetconnect new-plugin NAME``: a plugin author's start, a package that installs and passes its own test.

The package holds a builder-based source (a replayable, distributed stream that is also a batch
source) and a builder-based sink (JSON lines, one file per Spark partition), registered through the
``jetconnect`` entry point, with a README options table and a test that runs both through a real
SparkSession. It imports only the public names of ``jetconnect`` and ``jetconnect.api``.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from string import Template

from jetconnect.errors import OptionError

#: A plugin name: what ``sources.NAME`` and the entry point use, so a Python identifier in lower case.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,49}")

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=77"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "A jetconnect plugin: the $name source and sink"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["jetconnect>=$core_floor,<$core_next"]

[project.optional-dependencies]
test = ["pytest>=8"]

[project.entry-points.jetconnect]
$name = "$module.plugin"

[tool.setuptools.packages.find]
include = ["$module*"]

[tool.setuptools.package-data]
$module = ["py.typed"]
"""

_INIT = '''\
"""The $name jetconnect plugin: ``sources.$name`` and ``sinks.$name``."""

from $module.connectors import ${name}_sink, ${name}_source

__all__ = ["${name}_sink", "${name}_source"]
'''

_CONNECTORS = '''\
"""The $name source and sink, built with jetconnect's builders.

Replace the bodies of ``create``/``fill`` and ``open_file``/``write_row`` with calls to your system;
keep the shape: the source's position is a value its snapshot functions save and restore, so Spark
replays a micro-batch exactly after a crash, and the sink's state lives in one Spark task.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import IO, Any

from jetconnect import ProcessorContext, SinkBuilder, SinkContext, SourceBuffer, SourceBuilder
from jetconnect.api import BuilderSink, BuilderStreamSource
from jetconnect.errors import OptionError


@dataclass
class _Counter:
    """Processor i of n emits i, i+n, i+2n, ... below ``total``; ``emitted`` is its position."""

    first: int
    step: int
    total: int
    emitted: int = 0


def ${name}_source(total: int = 1000, per_fill: int = 100, local_parallelism: int = 2) -> BuilderStreamSource:
    """The numbers ``0 .. total-1`` as a stream, each once, even across a restart from the checkpoint."""
    for option, value in (("total", total), ("per_fill", per_fill), ("local_parallelism", local_parallelism)):
        if not isinstance(value, int) or isinstance(value, bool) or value < (0 if option == "total" else 1):
            raise OptionError(f"$name source: {option} must be a whole number of at least "
                              f"{0 if option == 'total' else 1}, got {value!r}")

    def create(ctx: ProcessorContext) -> _Counter:
        return _Counter(ctx.global_processor_index, ctx.total_parallelism, total)

    def fill(state: _Counter, buf: SourceBuffer) -> None:
        for _ in range(per_fill):
            n = state.first + state.emitted * state.step
            if n >= state.total:
                return  # nothing new now; Spark asks again at the next trigger
            buf.add(n)
            state.emitted += 1

    def restore(state: _Counter, emitted: Any) -> None:
        state.emitted = int(emitted)

    source = (
        SourceBuilder.stream("$name", create)
        .fill_buffer_fn(fill)
        .schema("n bigint")
        .distributed(local_parallelism)
        .create_snapshot_fn(lambda state: state.emitted)
        .restore_snapshot_fn(restore)
        .build()
    )
    assert isinstance(source, BuilderStreamSource)
    return source


def ${name}_sink(directory: str) -> BuilderSink:
    """Rows as JSON lines under ``directory``: one file per Spark partition and attempt."""
    if not directory:
        raise OptionError("$name sink: directory is required")

    def open_file(ctx: SinkContext) -> IO[str]:
        os.makedirs(directory, exist_ok=True)
        name = f"part-{ctx.global_processor_index:05d}-{os.getpid()}-{id(ctx):x}.jsonl"
        return open(os.path.join(directory, name), "w", encoding="utf-8")

    def write_row(out: IO[str], row: Any) -> None:
        out.write(json.dumps(row.asDict(), default=str) + "\\n")

    return (
        SinkBuilder.sink("$name", open_file)
        .receive_fn(write_row)
        .flush_fn(lambda out: out.flush())
        .destroy_fn(lambda out: out.close())
        .build()
    )
'''

_PLUGIN = '''\
"""Registers the $name source and sink with jetconnect (found through the ``jetconnect`` entry point)."""

from jetconnect import hookimpl
from $module.connectors import ${name}_sink, ${name}_source


@hookimpl
def register_sources(register):
    register(${name}_source, name="$name")


@hookimpl
def register_sinks(register):
    register(${name}_sink, name="$name")
'''

_README = """\
# $dist

A jetconnect plugin: `sources.$name` and `sinks.$name`, built with jetconnect's builders.

```bash
pip install -e .[test]
pytest tests
```

```python
from jetconnect import sources, sinks

# 0 .. 999, replayed exactly after a crash; wal_location holds each round's record (a shared directory)
stream = sources.$name(total=1000).read_stream(spark, wal_location="/shared/rounds/numbers")
sinks.$name("/tmp/out").write(spark.range(10).toDF("n"))
```

## Source options

| option | default | meaning |
|---|---|---|
| `total` | 1000 | numbers emitted: `0 .. total-1` |
| `per_fill` | 100 | items one `fill_buffer_fn` call adds at most |
| `local_parallelism` | 2 | processors per executor (`distributed(n)`) |

## Sink options

| option | default | meaning |
|---|---|---|
| `directory` | (required) | where the JSON-lines files go |
"""

_TEST = '''\
"""The $name plugin, installed, found by entry point and run through a real SparkSession."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jetconnect import sinks, sources
from jetconnect.errors import OptionError
from jetconnect.testing import spark_builder


@pytest.fixture(scope="module")
def spark():
    session = spark_builder("$name-plugin-test").getOrCreate()
    yield session
    session.stop()


def test_is_found_by_its_entry_point():
    assert "$name" in sources and "$name" in sinks


def _run_until_done(spark, total, checkpoint, out):
    # wal_location: where each round's record lives, a directory the driver and executors share
    df = sources.$name(total=total, per_fill=9).read_stream(spark, wal_location=str(checkpoint) + "-rounds")
    query = (
        df.writeStream.format("parquet").option("path", str(out))
        .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
    )
    assert query.awaitTermination(300), "the stream did not end"


def test_stream_reads_every_number_once_and_resumes_from_its_checkpoint(spark, tmp_path):
    checkpoint, out = tmp_path / "checkpoint", tmp_path / "out"
    _run_until_done(spark, 500, checkpoint, out)
    assert sorted(r.n for r in spark.read.parquet(str(out)).collect()) == list(range(500))
    _run_until_done(spark, 800, checkpoint, out)  # the positions come back from the checkpoint
    assert sorted(r.n for r in spark.read.parquet(str(out)).collect()) == list(range(800))


def test_sink_writes_every_row(spark, tmp_path):
    df = spark.range(300).selectExpr("id as n", "cast(id as string) as text")
    sinks.$name(str(tmp_path / "out")).write(df)
    written = [json.loads(line) for f in Path(tmp_path / "out").glob("*.jsonl") for line in f.read_text().splitlines()]
    assert sorted(row["n"] for row in written) == list(range(300))


def test_bad_options_name_the_option():
    with pytest.raises(OptionError, match="per_fill"):
        sources.$name(per_fill=0)
'''


def new_plugin(name: str, parent: str | Path = ".") -> Path:
    """Write the package ``jetconnect-NAME`` under ``parent`` and return its directory.

    Refuses a name that is not a lower-case Python identifier (it becomes a module, an entry point
    and ``sources.NAME``) and a directory that already exists: nothing is overwritten.
    """
    if not isinstance(name, str) or not _NAME.fullmatch(name) or keyword.iskeyword(name):
        raise OptionError(
            f"new-plugin: NAME must be a lower-case Python identifier (letters, digits, '_', at most 50), got {name!r}"
        )
    dist, module = f"jetconnect-{name.replace('_', '-')}", f"jetconnect_{name}"
    taken = _taken_by(name, dist, module)
    if taken:
        raise OptionError(
            f"new-plugin: NAME {name!r} is taken by {taken}: the new package would shadow it "
            f"(its entry point, module or sources.{name}/sinks.{name}); choose another NAME"
        )
    root = Path(parent) / dist
    if root.exists():
        raise OptionError(f"new-plugin: {root} already exists; choose another NAME or directory")
    from jetconnect import __version__

    major, minor = (int(part) for part in __version__.split(".")[:2])
    values = {
        "name": name,
        "dist": dist,
        "module": module,
        "core_floor": f"{major}.{minor}",
        "core_next": f"{major}.{minor + 1}" if major == 0 else f"{major + 1}",
    }
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{module}/__init__.py": _INIT,
        f"{module}/connectors.py": _CONNECTORS,
        f"{module}/plugin.py": _PLUGIN,
        f"{module}/py.typed": "",
        f"tests/test_{name}.py": _TEST,
    }
    for relative, template in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(template).substitute(values), encoding="utf-8")
    return root


def _taken_by(name: str, dist: str, module: str) -> str | None:
    """What already answers to ``name`` here: an installed plugin (entry point, distribution or
    module of that name) or a source or sink a plugin or the core registers under it."""
    import importlib.metadata
    import importlib.util

    for ep in importlib.metadata.entry_points(group="jetconnect"):
        if ep.name == name:
            return f"the installed plugin '{ep.name}' ({ep.value})"
    try:
        importlib.metadata.distribution(dist)
        return f"the installed distribution '{dist}'"
    except importlib.metadata.PackageNotFoundError:
        pass
    if importlib.util.find_spec(module) is not None:
        return f"the importable module '{module}'"
    from jetconnect._registry import get_registry

    registry = get_registry()
    for kind, table in (("source", registry.sources), ("sink", registry.sinks)):
        if name in table:
            return f"the {kind} '{name}' of plugin '{table[name].plugin}'"
    return None
