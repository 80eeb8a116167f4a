"""The skeleton every benchmark shares: timing, memory sampling, the table and the JSON rows (#20, #21).

A benchmark times both sides of every ratio in one run on the same data (best of N after a
warm-up), and reports them as :class:`Row` objects to a :class:`Bench`::

    with Bench("files", args) as bench:
        with bench.measure("lines: sum(length(value))"):
            theirs = best_of(lambda: native(), args.repeat)
            ours = best_of(lambda: jetconnect(), args.repeat)
        bench.add(Row("lines: sum(length(value))", ours, theirs, target=0.8))

On exit the bench prints the table (times, ratio against the target, peak memory of the driver and
of the Python workers) and writes ``bench/results/<name>.json`` with the command line, the UTC
date, the load average at start and end, the git commit and the versions, so that ``bench/chart.py``
can draw every figure with the conditions it was taken under.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["Bench", "MemoryPeaks", "Row", "best_of", "best_of_turns", "bench_parser", "bench_spark", "sample_memory"]

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
_PAGE = os.sysconf("SC_PAGE_SIZE")


def best_of(fn: Callable[[], object], repeat: int, warmup: int = 1) -> float:
    """Seconds of the fastest of ``repeat`` timed runs of ``fn``, after ``warmup`` untimed ones
    (page cache, JIT, Python workers: the first run pays what a long-running job pays once)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def best_of_turns(
    fns: Sequence[Callable[[], object]], repeat: int, warmup: int = 1, between: Callable[[], object] | None = None
) -> list[float]:
    """The best time of each of ``fns`` over ``repeat`` rounds in which they take turns, after
    ``warmup`` untimed rounds: a load spike or the JVM warming up over the run favours none.
    ``between`` runs untimed before each call (e.g. dropping what the previous call wrote)."""
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, got {repeat}")
    for _ in range(warmup):
        for fn in fns:
            if between is not None:
                between()
            fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            if between is not None:
                between()
            started = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - started)
    return best


@dataclasses.dataclass
class Row:
    """One case of a benchmark: jetconnect's seconds next to the alternative's, on the same data.

    ``ratio`` is theirs / ours: above 1 jetconnect is faster. ``target`` is the ratio the issue asks
    for (None: shown for information). The memory fields are peaks in MiB filled by
    :meth:`Bench.measure` (None when the case was not measured)."""

    case: str
    ours_s: float
    theirs_s: float
    target: float | None = None
    note: str = ""
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    driver_py_mb: float | None = None
    driver_jvm_mb: float | None = None
    workers_mb: float | None = None
    worker_max_mb: float | None = None
    workers_max_count: int | None = None

    @property
    def ratio(self) -> float:
        return self.theirs_s / self.ours_s

    @property
    def met(self) -> bool | None:
        """Whether the ratio reaches the target (None when there is none)."""
        return None if self.target is None else self.ratio >= self.target

    @property
    def driver_mb(self) -> float | None:
        """The driver's peak: this Python process plus the JVM it started."""
        if self.driver_py_mb is None:
            return None
        return self.driver_py_mb + (self.driver_jvm_mb or 0.0)

    def as_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "ratio": self.ratio, "met": self.met}


@dataclasses.dataclass
class MemoryPeaks:
    """Peak resident memory (MiB) seen while a block ran, by kind of process in this process's tree.

    ``workers_mb`` is the largest sum over the Python processes below this one at one sample (Spark's
    Python workers; forked workers share pages, each counted whole), ``worker_max_mb`` the largest
    single one, ``driver_py_mb`` this process, ``driver_jvm_mb`` the Java processes below it."""

    driver_py_mb: float = 0.0
    driver_jvm_mb: float = 0.0
    workers_mb: float = 0.0
    worker_max_mb: float = 0.0
    workers_max_count: int = 0
    samples: int = 0

    def merge(self, other: MemoryPeaks) -> None:
        for name in ("driver_py_mb", "driver_jvm_mb", "workers_mb", "worker_max_mb", "workers_max_count"):
            setattr(self, name, max(getattr(self, name), getattr(other, name)))
        self.samples += other.samples


def _task_children(pid: int, tids: list[str]) -> tuple[list[int], list[str]]:
    """The children of ``pid`` forked by the threads ``tids``, and which of those threads forked any."""
    kids: list[int] = []
    spawners: list[str] = []
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found = f.read().split()
        except (FileNotFoundError, ProcessLookupError):  # the thread or process ended meanwhile
            continue
        if found:
            kids.extend(int(k) for k in found)
            spawners.append(tid)
    return kids, spawners


def _threads(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return []


def _rss_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * _PAGE / (1 << 20)
    except (FileNotFoundError, ProcessLookupError):
        return None


def _kind(pid: int) -> str:
    """'java', 'python' or 'other', from the executable's name (``python3.11``, ``java``)."""
    try:
        exe = os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return "other"
    if exe.startswith("java"):
        return "java"
    return "python" if exe.startswith("python") else "other"


class _Sampler(threading.Thread):
    """Reads /proc every ``interval`` seconds: the RSS of this process and of its descendants.

    A sample reads a few /proc files per process (finding the JVM's children that way took ~1 ms
    on the loaded 2-core machine), a few per cent of the interval: little of the GIL taken from a
    raw side running in this process."""

    #: a process with more threads (the JVM: ~90) has all of them searched for children only every
    #: FULL_SCAN_EVERY samples, else just the threads that forked before: reading the children of
    #: 90 threads takes ~20 ms on a loaded machine, which every 50 ms would steal the GIL
    MANY_THREADS, FULL_SCAN_EVERY = 16, 20

    def __init__(self, interval: float) -> None:
        super().__init__(name="bench-memory-sampler", daemon=True)
        self.interval, self.peaks = interval, MemoryPeaks()
        self._stop_event = threading.Event()
        self._kinds: dict[int, str] = {}
        self._spawners: dict[int, list[str]] = {}

    def _children(self, pid: int, full: bool) -> list[int]:
        tids = self._spawners.get(pid) if not full else None
        if tids is None:
            tids = _threads(pid)
            if len(tids) <= self.MANY_THREADS:
                return _task_children(pid, tids)[0]
        kids, spawners = _task_children(pid, tids)
        if full or pid not in self._spawners:
            self._spawners[pid] = spawners
        return kids

    def sample(self) -> None:
        me = os.getpid()
        full = self.peaks.samples % self.FULL_SCAN_EVERY == 0
        jvm = workers = worker_max = 0.0
        count = 0
        todo = self._children(me, full)
        while todo:
            pid = todo.pop()
            todo.extend(self._children(pid, full))
            kind = self._kinds.get(pid) or self._kinds.setdefault(pid, _kind(pid))
            rss = _rss_mb(pid)
            if rss is None:
                continue
            if kind == "java":
                jvm += rss
            elif kind == "python":
                workers += rss
                worker_max = max(worker_max, rss)
                count += 1
        p = self.peaks
        p.driver_py_mb = max(p.driver_py_mb, _rss_mb(me) or 0.0)
        p.driver_jvm_mb, p.workers_mb = max(p.driver_jvm_mb, jvm), max(p.workers_mb, workers)
        p.worker_max_mb, p.workers_max_count = max(p.worker_max_mb, worker_max), max(p.workers_max_count, count)
        p.samples += 1

    def run(self) -> None:
        while not self._stop_event.wait(self.interval):
            self.sample()

    def finish(self) -> MemoryPeaks:
        self._stop_event.set()
        self.join()
        self.sample()  # at least one sample, even for a block shorter than the interval
        return self.peaks


@contextmanager
def sample_memory(interval: float = 0.05) -> Iterator[MemoryPeaks]:
    """Sample the process tree's memory while the block runs; the yielded peaks are final after it."""
    sampler = _Sampler(interval)
    sampler.sample()
    sampler.start()
    result = MemoryPeaks()
    try:
        yield result
    finally:
        result.merge(sampler.finish())


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _changed_files() -> int | None:
    """How many tracked files differ from the commit: if any, the commit alone is not the code that ran."""
    status = _git("status", "--porcelain", "--untracked-files=no")
    return None if status is None else len(status.splitlines())


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except ImportError:
        return None


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


class Bench:
    """One run of one benchmark: collects rows, prints the table and writes the JSON on exit.

    ``args`` (an ``argparse.Namespace`` or a dict) goes into the JSON as the run's parameters.
    A block that raises writes nothing: a partial table would look like a finished one."""

    def __init__(
        self, name: str, args: argparse.Namespace | dict[str, Any], results: Path | str | None = None, title: str = ""
    ) -> None:
        self.name, self.title = name, title
        self.args = dict(vars(args) if isinstance(args, argparse.Namespace) else args)
        self.results = Path(results) if results is not None else RESULTS
        self.rows: list[Row] = []
        self._peaks: dict[str, MemoryPeaks] = {}
        self.started_at: dt.datetime | None = None
        self.load_start: list[float] = []
        self.path: Path | None = None

    def __enter__(self) -> Bench:
        self.started_at = dt.datetime.now(dt.UTC)
        self.load_start = _load()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:  # type: ignore[no-untyped-def]
        if exc_type is not None:
            return
        self._fill_memory()
        self.print_table()
        self.path = self.write_json()
        print(f"rows written to {self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path}")

    def add(self, row: Row) -> Row:
        self.rows.append(row)
        return row

    @contextmanager
    def measure(self, case: str, *more_cases: str, interval: float = 0.05) -> Iterator[MemoryPeaks]:
        """Sample memory while the block runs; the peaks go onto the rows of ``case`` (and of
        ``more_cases``: one timed block often serves several rows), added inside or after it.
        Measuring a case twice keeps the larger peaks."""
        with sample_memory(interval) as peaks:
            yield peaks
        for name in (case, *more_cases):
            self._peaks.setdefault(name, MemoryPeaks()).merge(peaks)

    def _fill_memory(self) -> None:
        for row in self.rows:
            peaks = self._peaks.get(row.case)
            if peaks is not None:
                row.driver_py_mb, row.driver_jvm_mb = round(peaks.driver_py_mb, 1), round(peaks.driver_jvm_mb, 1)
                row.workers_mb, row.worker_max_mb = round(peaks.workers_mb, 1), round(peaks.worker_max_mb, 1)
                row.workers_max_count = peaks.workers_max_count

    def print_table(self) -> None:
        load = _load()
        print()
        print(f"{self.name}: {self.title}".rstrip(": "))
        print(
            f"{os.cpu_count()} cores, load average {self.load_start[0]:.1f} at start, {load[0]:.1f} now; "
            f"best of {self.args.get('repeat', '?')} after {self.args.get('warmup', 1)} warm-up run(s)"
        )
        width = max([len("case"), *(len(r.case) for r in self.rows)])
        header = (
            f"{'case':<{width}} {'ours s':>8} {'theirs s':>9} {'ratio':>7} {'target':>7} {'met':>4} "
            f"{'driver MiB':>11} {'workers MiB':>12} {'1 worker':>9}"
        )
        print(header)
        print("-" * len(header))
        for r in self.rows:
            target = "-" if r.target is None else f"{r.target:.2f}x"
            met = "-" if r.met is None else ("yes" if r.met else "NO")
            print(
                f"{r.case:<{width}} {r.ours_s:>8.2f} {r.theirs_s:>9.2f} {r.ratio:>6.2f}x {target:>7} {met:>4} "
                f"{_mb(r.driver_mb):>11} {_mb(r.workers_mb):>12} {_mb(r.worker_max_mb):>9}"
            )
        for r in self.rows:
            if r.note:
                print(f"  {r.case}: {r.note}")
        print(
            "ratio = their seconds / our seconds (above 1: jetconnect is faster); memory = peak RSS while the "
            "case ran: driver = this Python + its JVM, workers = Spark's Python workers together, 1 worker = the largest"
        )

    def as_json(self) -> dict[str, Any]:
        import platform

        return {
            "name": self.name,
            "title": self.title,
            "command": shlex.join([sys.executable.rsplit("/", 1)[-1], *sys.argv]),
            "args": self.args,
            "date_utc": (self.started_at or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "finished_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "load_start": self.load_start,
            "load_end": _load(),
            "cpu_count": os.cpu_count(),
            "git_commit": _git("rev-parse", "HEAD"),
            "git_changed_files": _changed_files(),
            "python": platform.python_version(),
            "pyspark": _version("pyspark"),
            "rows": [r.as_json() for r in self.rows],
        }

    def write_json(self) -> Path:
        self.results.mkdir(parents=True, exist_ok=True)
        path = self.results / f"{self.name}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.as_json(), indent=2, default=str) + "\n")
        tmp.replace(path)  # a reader (the chart) never sees half a file
        return path


def bench_parser(doc: str | None, repeat: int = 2, warmup: int = 1) -> argparse.ArgumentParser:
    """The parser every benchmark starts from: its docstring as help, ``--repeat``, ``--warmup``
    and ``--results`` (where the JSON goes; bench/results/ by default)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--repeat", type=int, default=repeat, help=f"timed runs per side, the best counts (default {repeat})"
    )
    parser.add_argument("--warmup", type=int, default=warmup, help=f"untimed runs per side first (default {warmup})")
    parser.add_argument("--results", default=str(RESULTS), help="directory for <name>.json (default bench/results)")
    return parser


def bench_spark(app: str, master: str | None = None, conf: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    """A quiet SparkSession for a benchmark (no progress bars, ERROR logs), jetconnect registered;
    ``conf`` adds Spark settings (``{"spark.jars": ...}``)."""
    import jetconnect
    from jetconnect.testing import spark_builder

    builder = spark_builder(app, master=master).config("spark.ui.showConsoleProgress", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    jetconnect.register(spark)
    return spark
