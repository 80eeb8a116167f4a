"""What each registered connector guarantees, asked of the connector itself, and the README's matrix.

A plugin registers factories, not connectors, so the guarantee is found where it is declared:

* on the connector built from default options, when the factory needs none (``item_stream``,
  ``logger``): the instance is what actually runs;
* else on the class the factory returns (its return annotation, or the factory if it is a class):
  the class attribute :attr:`~jetconnect._connector.Sink.guarantee`;
* a class whose guarantee an option changes says so with
  :attr:`~jetconnect._connector.Sink.guarantee_option` (the Kafka sink's ``delivery``), and is
  listed once per value of it.

``jetconnect plugins`` prints this, and ``jetconnect plugins --matrix`` prints the source × sink
matrix of README.md, which a test compares with the README.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin, get_type_hints

from jetconnect._connector import Guarantee, GuaranteeOption, Sink, Source
from jetconnect._factory_signature import factory_signature

if TYPE_CHECKING:  # pragma: no cover
    from jetconnect._registry import ConnectorSpec, Registry

#: Strongest first: the order of the matrix's rows and columns.
ORDER = (Guarantee.EXACTLY_ONCE, Guarantee.AT_LEAST_ONCE, Guarantee.AT_MOST_ONCE, Guarantee.NONE)


@dataclass(frozen=True)
class Declared:
    """A connector's guarantee as declared: the default one, and the option that changes it, if any."""

    guarantee: Guarantee | None
    option: GuaranteeOption | None = None
    #: Where it was read: "instance", "class Name", or why it could not be.
    where: str = ""

    def variants(self) -> list[tuple[str, Guarantee | None]]:
        """``(how configured, guarantee)``: ``("", g)`` alone, or one entry per value of the option."""
        if self.option is None:
            return [("", self.guarantee)]
        return [(f"{self.option.name}={value}", g) for value, g in self.option.values.items()]

    def text(self) -> str:
        """``exactly-once``, or ``exactly-once, or at-least-once with delivery=at-least-once``."""
        if self.guarantee is None:
            return f"unknown ({self.where})"
        if self.option is None:
            return str(self.guarantee)
        others = [f"{g} with {self.option.name}={v}" for v, g in self.option.values.items() if v != self.option.default]
        return ", or ".join([str(self.guarantee), *others])


def connector_classes(factory: Callable[..., Any]) -> list[type[Source] | type[Sink]]:
    """The Source or Sink classes ``factory`` makes: itself if it is one, else those its return
    annotation names (one class, or a union of them, e.g. by a ``format`` option)."""
    if isinstance(factory, type):
        return [factory] if issubclass(factory, (Source, Sink)) else []
    try:
        returned = get_type_hints(factory).get("return")
    except Exception:  # an annotation that does not resolve names no class we could ask
        return []
    named = get_args(returned) if get_origin(returned) in (Union, types.UnionType) else (returned,)
    classes = [c for c in named if isinstance(c, type) and issubclass(c, (Source, Sink))]
    return classes if len(classes) == len(named) else []


def _needs_no_options(factory: Callable[..., Any]) -> bool:
    try:
        parameters = factory_signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters)


def declared(spec: ConnectorSpec) -> Declared:
    """The guarantee of ``spec``'s connector: of an instance built from default options when the
    factory needs none, else of the class it returns."""
    if spec.from_options is None and _needs_no_options(spec.factory):
        from jetconnect._options import Options

        try:
            instance = spec.create_from_options(Options({}, owner=f"{spec.kind} '{spec.name}'"))
        except Exception:  # a plugin's factory may fail here (no server, no env): ask its class instead
            instance = None
        if isinstance(instance, (Source, Sink)):
            return Declared(Guarantee(instance.guarantee), type(instance).guarantee_option, "instance")
    classes = connector_classes(spec.factory)
    if not classes:
        return Declared(None, None, "annotate the factory's return type with its Source or Sink class")
    found: list[tuple[Guarantee, GuaranteeOption | None]] = []
    for declaring in classes:
        entry = (Guarantee(declaring.guarantee), declaring.guarantee_option)
        if entry not in found:  # a list: an option's values are a dict, not hashable
            found.append(entry)
    names = ", ".join(c.__name__ for c in classes)
    if len(found) > 1:
        return Declared(None, None, f"its classes {names} declare different guarantees")
    guarantee, option = found[0]
    return Declared(guarantee, option, f"class {names}")


def combine(source: Guarantee, sink: Guarantee) -> Guarantee:
    """What a pipeline from ``source`` to ``sink`` guarantees after a restart: the weaker, and
    none when one may lose and the other may repeat."""
    if source == sink:
        return source
    if Guarantee.EXACTLY_ONCE in (source, sink):
        return sink if source == Guarantee.EXACTLY_ONCE else source
    return Guarantee.NONE


def _groups(specs: Iterable[ConnectorSpec]) -> dict[Guarantee | None, list[str]]:
    groups: dict[Guarantee | None, list[str]] = {}
    for spec in sorted(specs, key=lambda s: s.name):
        for how, guarantee in spec.declared.variants():
            groups.setdefault(guarantee, []).append(f"`{spec.name}`" + (f" ({how})" if how else ""))
    order = {g: i for i, g in enumerate((*ORDER, None))}
    return dict(sorted(groups.items(), key=lambda item: order[item[0]]))


def _label(guarantee: Guarantee | None) -> str:
    return str(guarantee) if guarantee is not None else "unknown"


def matrix(registry: Registry) -> str:
    """The source × sink guarantee matrix as a Markdown table, as README.md shows it."""
    sources, sinks = _groups(registry.sources.values()), _groups(registry.sinks.values())
    header = ["source ↓ / sink →", *(f"{_label(g)} sinks: {', '.join(names)}" for g, names in sinks.items())]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for source, names in sources.items():
        cells = [f"{_label(source)} sources: {', '.join(names)}"]
        for sink in sinks:
            if source is None or sink is None:
                cells.append("unknown")
                continue
            cell = combine(source, sink)
            cells.append(f"**{cell}**" if cell == Guarantee.EXACTLY_ONCE else str(cell))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


__all__ = ["Declared", "combine", "connector_classes", "declared", "matrix"]
