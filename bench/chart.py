"""Draw every benchmark's last run (bench/results/*.json) as one chart: docs/bench.png (#20).

    python bench/chart.py [--results bench/results] [--out docs/bench.png] [--markdown]

One horizontal bar per case, its length the ratio their time / our time (log scale, 1 = as fast,
right of 1 = jetconnect faster), coloured by whether it reaches its target, which is drawn as a
black tick on the bar. Cases are grouped by benchmark; each group is headed by the command that
produced it, the UTC date and the load average at start and end, so the picture carries the
conditions of its figures. Renders headless (matplotlib's Agg backend). ``--markdown`` also prints
the same rows as a Markdown table (with the memory columns): the docs' benchmarks page, which
builds the table itself from the same files (bench/_results.py).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display: the chart is a file
import matplotlib.pyplot as plt  # noqa: E402

# run as a script or loaded by path: the results module is beside this file either way
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _results import load_runs, markdown  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COLOURS = {True: "#2e8b57", False: "#c0392b", None: "#8c8c8c"}


def heading(run: dict[str, Any]) -> str:
    load = f"load average {run['load_start'][0]:.1f} at start, {run['load_end'][0]:.1f} at end"
    return f"{run['name']}: {run['date_utc'].replace('T', ' ')}, {load}, {run.get('cpu_count', '?')} cores"


def draw(runs: list[dict[str, Any]], out: Path) -> None:
    """Lay the groups out top to bottom, a heading line above each group's bars."""
    lines: list[tuple[str, Any]] = []  # ("head" or "command", run) or ("row", row), top to bottom
    for run in runs:
        lines.extend([("head", run), ("command", run)])
        lines.extend(("row", row) for row in run["rows"])
    ratios = [row["ratio"] for kind, row in lines if kind == "row"]
    targets = [row["target"] for kind, row in lines if kind == "row" and row.get("target")]
    low = min([*ratios, *targets, 1.0]) / 1.6
    high = max([*ratios, *targets, 1.0]) * 1.6

    fig, ax = plt.subplots(figsize=(13, 0.34 * len(lines) + 1.6))
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.set_ylim(len(lines) - 0.4, -0.8)
    labels = []
    for y, (kind, item) in enumerate(lines):
        if kind == "head":
            ax.text(low * 1.02, y + 0.2, heading(item), fontsize=8.5, fontweight="bold", va="center", ha="left")
            labels.append("")
            continue
        if kind == "command":
            ax.text(low * 1.02, y, item["command"], fontsize=7.5, family="monospace", va="center", ha="left")
            labels.append("")
            continue
        row = item
        colour = COLOURS[row.get("met")]
        ax.barh(y, row["ratio"] - low, left=low, height=0.62, color=colour)
        target = row.get("target") or 0
        # the label right of the bar, or right of the target's tick when that stands just beyond it
        at = target if row["ratio"] < target < row["ratio"] * 1.3 else row["ratio"]
        ax.text(at * 1.03, y, f"{row['ratio']:.2f}x", va="center", fontsize=8)
        if row.get("target"):
            ax.plot([row["target"]] * 2, [y - 0.42, y + 0.42], color="black", linewidth=2.2)
        labels.append(row["case"])
    ax.set_yticks(range(len(lines)), labels, fontsize=8.5)
    ax.tick_params(axis="y", length=0)
    ax.axvline(1.0, color="black", linestyle=":", linewidth=1)
    ticks = [t for t in (0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 0.8, 1, 1.25, 2, 4, 8) if low <= t <= high]
    ax.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    ax.minorticks_off()
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel("ratio = alternative's time / jetconnect's time (log scale; right of 1: jetconnect faster)")
    dates = sorted(run["date_utc"][:10] for run in runs)
    span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    ax.set_title(
        f"jetconnect against the raw or native alternative, same data, one run per benchmark ({span})\n"
        "bar: ratio, green = target met, red = missed, grey = no target; black tick: the target",
        fontsize=10,
    )
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=str(ROOT / "bench" / "results"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "bench.png"))
    parser.add_argument("--markdown", action="store_true", help="also print the rows as a Markdown table")
    args = parser.parse_args()
    runs = load_runs(Path(args.results))
    if not runs:
        raise SystemExit(f"no results in {args.results}: run a benchmark first (scripts/bench.sh NAME)")
    bad = [
        f"{run['name']}: {row['case']}"
        for run in runs
        for row in run["rows"]
        if not (isinstance(row.get("ratio"), (int, float)) and math.isfinite(row["ratio"]) and row["ratio"] > 0)
    ]
    if bad:
        raise SystemExit(f"rows without a positive ratio: {'; '.join(bad)}")
    draw(runs, Path(args.out))
    print(f"{args.out}: {sum(len(run['rows']) for run in runs)} cases from {len(runs)} benchmarks")
    if args.markdown:
        print(markdown(runs))


if __name__ == "__main__":
    main()
