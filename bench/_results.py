"""Every benchmark's last run (bench/results/*.json) as rows: loaded and checked, and as a Markdown table.

Shared by ``bench/chart.py`` (the picture, docs/bench.png) and the docs site's benchmarks page
(``docs/hooks/jetconnect_docs.py`` puts :func:`markdown` there at build time), so the table and the
chart come from the same files and neither needs copying. No matplotlib here: the docs build runs
without it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: the order of the groups on the chart and in the table; a benchmark not listed comes after, by name
ORDER = ["core", "files", "hdfs", "jdbc", "kafka", "jms", "imap"]


def load_runs(results: Path) -> list[dict[str, Any]]:
    """Every ``<name>.json`` under ``results`` with at least one row, in chart order."""
    runs = []
    for path in sorted(results.glob("*.json")):
        try:
            run = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise SystemExit(f"{path}: not a benchmark result ({exc})") from None
        missing = {"name", "command", "date_utc", "load_start", "load_end", "rows"} - run.keys()
        if missing:
            raise SystemExit(f"{path}: missing {', '.join(sorted(missing))}; was it written by bench/_harness.py?")
        if run["rows"]:
            runs.append(run)
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(runs, key=lambda run: (rank.get(run["name"], len(ORDER)), run["name"]))


def _mib(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def markdown(runs: list[dict[str, Any]]) -> str:
    """The chart's rows as a Markdown table: times, ratio against target, peak memory, and per
    benchmark the command, date and load they were taken at."""
    out = [
        "| case | jetconnect s | alternative s | ratio (target) | driver MiB (Python + JVM) | "
        "Python workers MiB (all / largest) |",
        "|---|---|---|---|---|---|",
    ]
    for run in runs:
        load = f"load {run['load_start'][0]:.1f}-{run['load_end'][0]:.1f} on {run.get('cpu_count', '?')} cores"
        out.append(f"| **{run['name']}**: `{run['command']}`, {run['date_utc'].replace('T', ' ')}, {load} | | | | | |")
        for row in run["rows"]:
            target = (
                "" if row.get("target") is None else f" (≥ {row['target']:g}×{', met' if row['met'] else ', missed'})"
            )
            driver = (
                "-"
                if row.get("driver_py_mb") is None
                else f"{_mib(row['driver_py_mb'])} + {_mib(row.get('driver_jvm_mb'))}"
            )
            out.append(
                f"| {row['case']} | {row['ours_s']:.2f} | {row['theirs_s']:.2f} | {row['ratio']:.2f}×{target} | "
                f"{driver} | {_mib(row.get('workers_mb'))} / {_mib(row.get('worker_max_mb'))} |"
            )
    return "\n".join(out)
