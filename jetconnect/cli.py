"""``jetconnect plugins``: what is installed, with versions, connectors and guarantees
(``--matrix``: the source × sink guarantee matrix README.md shows);
``jetconnect doctor``: whether Spark's workers and a connector's server are ready (:mod:`jetconnect._doctor`);
``jetconnect new-plugin NAME``: a plugin package to start from, with its own test."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import jetconnect._doctor as _doctor
from jetconnect import _scaffold
from jetconnect._guarantees import matrix
from jetconnect._registry import get_registry
from jetconnect.errors import OptionError


def plugins_table() -> list[dict[str, object]]:
    """One entry per plugin: name, version, and its sources and sinks with their guarantees, as
    each connector declares them (its class, or an instance built from default options)."""
    registry = get_registry()
    rows: list[dict[str, object]] = []
    for plugin, version in sorted(registry.plugins.items()):
        rows.append(
            {
                "plugin": plugin,
                "version": version,
                "sources": {s.name: s.guarantee for s in registry.sources.values() if s.plugin == plugin},
                "sinks": {s.name: s.guarantee for s in registry.sinks.values() if s.plugin == plugin},
            }
        )
    return rows


def _format(rows: list[dict[str, object]]) -> str:
    lines = [f"{'plugin':<14} {'version':<9} {'kind':<7} {'name':<26} guarantee"]
    for row in rows:
        first = True
        for kind in ("sources", "sinks"):
            connectors = row[kind]
            assert isinstance(connectors, dict)  # plugins_table() puts a dict under each kind
            for name, guarantee in sorted(connectors.items()):
                plugin = f"{row['plugin']:<14} {row['version']:<9}" if first else " " * 24
                lines.append(f"{plugin} {kind[:-1]:<7} {name:<26} {guarantee}")
                first = False
        if first:
            lines.append(f"{row['plugin']:<14} {row['version']:<9} (registers nothing)")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="jetconnect", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    plugins = commands.add_parser("plugins", help="list installed plugins, their sources and sinks")
    output = plugins.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="machine-readable output")
    output.add_argument("--matrix", action="store_true", help="the source x sink guarantee matrix, in README form")
    doctor = commands.add_parser(
        "doctor",
        help="check the workers' Python, the Spark settings and a connector's server",
        description=_doctor.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _doctor.add_arguments(doctor)
    new_plugin = commands.add_parser(
        "new-plugin", help="write a plugin package (a builder source and sink, README, a Spark test) to start from"
    )
    new_plugin.add_argument("name", help="the plugin's name: sources.NAME, sinks.NAME (a lower-case identifier)")
    new_plugin.add_argument("--dir", default=".", help="where to create jetconnect-NAME/ (default: here)")
    args = parser.parse_args(argv)
    if args.command == "new-plugin":
        try:
            root = _scaffold.new_plugin(args.name, args.dir)
        except OptionError as exc:
            print(f"jetconnect: {exc}", file=sys.stderr)
            return 2
        print(f"wrote {root}: pip install -e '{root}[test]' && pytest '{root}/tests'")
        return 0
    if args.command == "doctor":
        return _doctor.run(args)
    if args.command == "plugins":
        if args.matrix:
            print(matrix(get_registry()))
            return 0
        rows = plugins_table()
        print(json.dumps(rows, indent=2) if args.json else _format(rows))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
