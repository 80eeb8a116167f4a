"""The declared plugin API holds: plugins import only public core names, and the core has no import cycle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: What a plugin may import from the core: everything else there is private.
PUBLIC = {
    "jetconnect",
    "jetconnect.api",
    "jetconnect.files_family",
    "jetconnect.avro_schemas",
    "jetconnect.errors",
    "jetconnect.testing",
    "jetconnect.fuzzing",
}
#: The modules that exist for plugins (``jetconnect`` and ``jetconnect.errors`` serve users too).
PLUGIN_MODULES = ("jetconnect.api", "jetconnect.files_family", "jetconnect.avro_schemas")


def _sources(*folders: str) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if not any(part.endswith(".egg-info") or part in ("build", ".venv") for part in path.parts):
                yield path


def _imports(tree: ast.AST, package: str) -> Iterator[tuple[str, str | None, int]]:
    """``(module, name or None, line)`` per import, skipping ``if TYPE_CHECKING:`` blocks (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                yield base, alias.name, node.lineno


def test_plugins_import_only_the_declared_plugin_api():
    reached = []
    for path in _sources("plugins", "contrib"):
        for module, name, line in _imports(ast.parse(path.read_text()), ""):
            if module.split(".")[0] != "jetconnect":
                continue
            if module not in PUBLIC or (name or "").startswith("_"):
                reached.append(f"{path.relative_to(ROOT)}:{line}: {module}" + (f" import {name}" if name else ""))
    assert not reached, "plugins reach past jetconnect.api:\n" + "\n".join(reached)


def test_the_plugin_api_names_only_what_exists():
    import importlib

    for module_name in PLUGIN_MODULES:
        module = importlib.import_module(module_name)
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing and len(set(module.__all__)) == len(module.__all__), module_name


def test_each_plugin_api_name_has_one_import_path():
    """A name in ``jetconnect`` or ``jetconnect.errors`` is not offered again, nor one module's name by another."""
    import importlib

    import jetconnect
    import jetconnect.errors

    homes: dict[str, list[str]] = {}
    for module_name in ("jetconnect", *PLUGIN_MODULES):
        for name in importlib.import_module(module_name).__all__:
            homes.setdefault(name, []).append(module_name)
    errors = {name for name in vars(jetconnect.errors) if name.endswith("Error")}
    twice = {name: where for name, where in homes.items() if len(where) > 1}
    assert twice == {}
    assert errors.isdisjoint(name for name, where in homes.items() if where != ["jetconnect"])


def test_every_plugin_api_name_is_used_by_a_plugin():
    """The plugin modules hold what plugins need, no more: a name no plugin imports leaves them."""
    import importlib

    used: set[tuple[str, str]] = set()
    for path in _sources("plugins", "contrib"):
        used.update((module, name or "") for module, name, _ in _imports(ast.parse(path.read_text()), ""))
    scaffold = ROOT / "jetconnect" / "_scaffold.py"
    used.update((module, name or "") for module, name, _ in _imports(ast.parse(scaffold.read_text()), ""))
    unused = [
        f"{module_name}.{name}"
        for module_name in PLUGIN_MODULES
        for name in importlib.import_module(module_name).__all__
        if (module_name, name) not in used
    ]
    assert unused == []


def _core_graph() -> dict[str, set[str]]:
    modules: dict[str, Path] = {}
    for path in (ROOT / "jetconnect").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path

    def owner(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        deps = set()
        for base, name, _ in _imports(ast.parse(path.read_text()), package):
            if base.split(".")[0] == "jetconnect":
                full = f"{base}.{name}" if name else base
                deps.add(owner(full) if full in modules else owner(base))
        graph[module] = deps - {module, None}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if dep not in index:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in stack:
                low[node] = min(low[node], index[dep])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_core_has_no_import_cycle():
    """Function-level (lazy) imports count: they only hide a cycle until the call."""
    assert _cycles(_core_graph()) == []


@pytest.mark.parametrize("graph, cyclic", [({"a": {"b"}, "b": {"a"}}, True), ({"a": {"b"}, "b": set()}, False)])
def test_the_cycle_check_finds_a_cycle(graph, cyclic):
    assert bool(_cycles(graph)) is cyclic


def _commented_assignment(name: str) -> bool:
    """Whether a core module assigns ``name`` under a ``#:`` comment (one may cover a run of them)."""
    for path in (ROOT / "jetconnect").rglob("*.py"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.startswith(f"{name} = "):
                j = i - 1
                while j >= 0 and not lines[j].startswith("#:") and lines[j][:1].isupper() and " = " in lines[j]:
                    j -= 1  # a run of related assignments shares the comment above it
                return j >= 0 and lines[j].startswith("#:")
    return False


def test_every_plugin_api_name_is_documented():
    """Functions and classes by their docstrings, constants and type aliases by a ``#:`` comment."""
    import importlib
    import inspect

    undocumented = []
    for module_name in PLUGIN_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value) or inspect.isclass(value):
                documented = bool((value.__doc__ or "").strip())
            else:
                documented = _commented_assignment(name)
            if not documented:
                undocumented.append(f"{module_name}.{name}")
    assert undocumented == []
