"""bench/_harness.py: the ratio, the JSON a run leaves, best-of timing and the memory sampler."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "bench" / "_harness.py"
_spec = importlib.util.spec_from_file_location("bench_harness", _PATH)
harness = importlib.util.module_from_spec(_spec)
sys.modules["bench_harness"] = harness  # dataclasses resolve the module by name
_spec.loader.exec_module(harness)


def test_ratio_is_theirs_over_ours_and_met_compares_it_with_the_target():
    faster = harness.Row("a", ours_s=2.0, theirs_s=3.0, target=1.0)
    slower = harness.Row("b", ours_s=4.0, theirs_s=3.0, target=0.8)
    plain = harness.Row("c", ours_s=1.0, theirs_s=0.5)
    assert faster.ratio == pytest.approx(1.5) and faster.met is True
    assert slower.ratio == pytest.approx(0.75) and slower.met is False
    assert plain.met is None
    assert harness.Row("d", 1.0, 1.0).extra is not harness.Row("e", 1.0, 1.0).extra


def test_best_of_runs_the_warmups_untimed_and_keeps_the_fastest_run():
    durations = iter([0.2, 0.05, 0.01, 0.03])  # the first is the warm-up: slow, and not counted
    calls = []

    def fn() -> None:
        seconds = next(durations)
        calls.append(seconds)
        time.sleep(seconds)

    best = harness.best_of(fn, repeat=3, warmup=1)
    assert calls == [0.2, 0.05, 0.01, 0.03]
    assert 0.01 <= best < 0.03
    with pytest.raises(ValueError, match="repeat"):
        harness.best_of(fn, repeat=0)


def test_best_of_turns_alternates_the_sides_and_times_each():
    order = []
    fast, slow = (lambda: order.append("a")), (lambda: (order.append("b"), time.sleep(0.02)))
    a, b = harness.best_of_turns([fast, slow], repeat=2, warmup=1)
    assert order == ["a", "b"] * 3
    assert a < 0.02 <= b


def test_a_run_writes_its_rows_command_date_load_and_versions_as_json(tmp_path, capsys):
    with harness.Bench("demo", {"repeat": 3, "rows": 10}, results=tmp_path, title="a demo") as bench:
        with bench.measure("case one"):
            pass
        bench.add(harness.Row("case one", ours_s=1.0, theirs_s=2.0, target=0.8, note="why", extra={"rows": 10}))
        bench.add(harness.Row("case two", ours_s=2.0, theirs_s=1.0))
    data = json.loads((tmp_path / "demo.json").read_text())
    assert data["name"] == "demo" and data["args"] == {"repeat": 3, "rows": 10}
    assert data["command"] and data["date_utc"].endswith("Z")
    assert len(data["load_start"]) == 3 and len(data["load_end"]) == 3
    assert data["python"] == ".".join(map(str, sys.version_info[:3]))
    assert len(data["git_commit"]) == 40 and isinstance(data["git_changed_files"], int)
    one, two = data["rows"]
    assert (one["case"], one["ratio"], one["met"], one["extra"]) == ("case one", 2.0, True, {"rows": 10})
    assert one["driver_py_mb"] > 10  # this very Python process, sampled
    assert two["ratio"] == 0.5 and two["met"] is None and two["driver_py_mb"] is None  # not measured
    table = capsys.readouterr().out
    assert "case one" in table and "2.00x" in table and "0.80x" in table and "yes" in table


def test_a_failing_run_leaves_no_json(tmp_path):
    with pytest.raises(RuntimeError):
        with harness.Bench("broken", {}, results=tmp_path) as bench:
            bench.add(harness.Row("x", 1.0, 1.0))
            raise RuntimeError("the benchmark failed half-way")
    assert not (tmp_path / "broken.json").exists()


def test_the_sampler_sees_a_python_child_that_allocates():
    allocate = "import time; block = bytearray(300 << 20); block[::4096] = b'x' * len(block[::4096]); time.sleep(1.0)"
    with harness.sample_memory(interval=0.05) as idle:
        time.sleep(0.2)
    with harness.sample_memory(interval=0.05) as peaks:
        subprocess.run([sys.executable, "-c", allocate], check=True)
    assert idle.workers_mb == 0 and idle.workers_max_count == 0
    assert peaks.samples >= 5
    assert peaks.workers_max_count == 1
    assert 300 <= peaks.worker_max_mb < 400  # 300 MiB touched, plus the interpreter
    assert peaks.workers_mb == peaks.worker_max_mb


def test_measure_puts_the_peaks_on_every_case_it_names(tmp_path):
    with harness.Bench("two", {}, results=tmp_path) as bench:
        with bench.measure("read", "read, mapped"):
            allocate = "import time; b = bytearray(100 << 20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.5)"
            subprocess.run([sys.executable, "-c", allocate], check=True)
        bench.add(harness.Row("read", 1.0, 1.0))
        bench.add(harness.Row("read, mapped", 1.0, 1.0))
    assert [r.worker_max_mb >= 100 for r in bench.rows] == [True, True]


def test_the_chart_draws_the_json_a_run_wrote_and_rejects_a_foreign_file(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("bench_chart", _PATH.parent / "chart.py")
    chart = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(chart)
    with harness.Bench("files", {"repeat": 2}, results=tmp_path) as bench:
        bench.add(harness.Row("lines", ours_s=1.0, theirs_s=0.9, target=0.8))
        bench.add(harness.Row("avro", ours_s=1.0, theirs_s=1.2))
    runs = chart.load_runs(tmp_path)
    chart.draw(runs, tmp_path / "bench.png")
    assert (tmp_path / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = chart.markdown(runs)
    assert "| lines | 1.00 | 0.90 | 0.90× (≥ 0.8×, met) |" in table and "| avro | 1.00 | 1.20 | 1.20× |" in table
    (tmp_path / "other.json").write_text('{"name": "other"}')
    with pytest.raises(SystemExit, match="other.json: missing command"):
        chart.load_runs(tmp_path)
