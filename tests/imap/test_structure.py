"""The IMap plugin's shape: its import graph has no circle (function-level imports included), the
connectors never ask which backend they have, and each layer imports only the layers below it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import jetconnect_imap

PACKAGE = Path(jetconnect_imap.__file__).parent
CONNECTORS = ("map_source", "journal_source", "map_sinks", "cache_connectors", "list_connectors")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Every module of the plugin and the plugin's modules it imports, at any depth of its code."""
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            found |= {target for target in targets if target in modules and target != name}
        graph[name] = found
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` if there is one (a depth-first walk with the path kept)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_import_graph_has_no_circle() -> None:
    graph = _imports()
    assert len(graph) > 30  # the walk found the package's modules
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_a_circle_would_be_found() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_connectors_never_ask_which_backend_they_have() -> None:
    asking = re.compile(
        r"on_hazelcast|store is None|is_hazelcast|isinstance\([^)]*Backend|\.kind\s*==|EmbeddedBackend|HazelcastBackend"
    )
    for name in CONNECTORS:
        text = (PACKAGE / f"{name}.py").read_text()
        assert not asking.findall(text), f"{name}.py asks which backend it has: {asking.findall(text)}"


def test_each_layer_imports_only_the_layers_below_it() -> None:
    """Connectors -> connector (locate) -> the two backends -> their parts -> the seam's vocabulary."""
    graph = _imports()
    codecs = {m for m in graph if m.startswith("jetconnect_imap.hazelcast.codecs")}
    for module in codecs:  # a codec is bytes in, bytes out: no sending, decoding or backend
        assert graph[module] <= codecs, (module, graph[module] - codecs)
    backends = {"jetconnect_imap.embedded.backend", "jetconnect_imap.hazelcast.backend"}
    for module, targets in graph.items():
        below_connectors = module.startswith(("jetconnect_imap.embedded", "jetconnect_imap.hazelcast"))
        if below_connectors and module not in backends:
            assert not targets & backends, f"{module} imports a backend: {targets & backends}"
        if below_connectors:
            connectors = {f"jetconnect_imap.{c}" for c in CONNECTORS} | {"jetconnect_imap.connector"}
            assert not targets & connectors, f"{module} imports a connector: {targets & connectors}"
    embedded = {m for m in graph if m.startswith("jetconnect_imap.embedded")}
    hazelcast = {m for m in graph if m.startswith("jetconnect_imap.hazelcast")}
    for module in embedded:  # the two backends stand side by side
        assert not graph[module] & hazelcast, (module, graph[module] & hazelcast)
    for module in hazelcast:
        assert not graph[module] & embedded, (module, graph[module] & embedded)
