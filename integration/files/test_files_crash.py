"""SIGKILL the whole driver mid-stream, restart from the checkpoint: nothing lost, nothing twice.

Pipeline: file watcher -> files sink (integration/pipelines/files_watcher_to_files.py).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until

PIPELINE = Path(__file__).resolve().parents[1] / "pipelines" / "files_watcher_to_files.py"


def _append(path: Path, lines: list[str], tail: str = "") -> None:
    with open(path, "a") as f:
        f.write("".join(line + "\n" for line in lines) + tail)


def _visible_lines(directory: Path) -> Counter:
    return Counter(
        line
        for path in sorted(directory.glob("*"))
        if path.is_file() and not path.name.startswith((".", "_"))
        for line in path.read_text().splitlines()
    )


def _in_flight(checkpoint: Path) -> bool:
    """A micro-batch is planned (offsets/N written) but not committed: the riskiest moment."""
    offsets, commits = checkpoint_batches(checkpoint, "offsets"), checkpoint_batches(checkpoint, "commits")
    return len(commits) >= 1 and bool(offsets) and offsets[-1] not in commits


def _run_crash(tmp_path: Path, kill_when) -> None:
    source, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "checkpoint"
    source.mkdir()
    expected = []
    for name in ("a", "b", "c"):
        lines = [f"{name}-{i}" for i in range(1000)]
        _append(source / f"{name}.log", lines)
        expected += lines
    log = tmp_path / "pipeline.log"
    first = start_pipeline(PIPELINE, [str(source), str(out), str(checkpoint), "300"], log)
    try:
        wait_until(lambda: kill_when(checkpoint), timeout=300, what="the kill point", proc=first)
        # Data keeps arriving around the crash: appended lines, a line split across writes, a new file.
        more = [f"a-{i}" for i in range(1000, 1500)]
        _append(source / "a.log", more, tail="a-split")
        expected += more
    finally:
        first.kill()
    _append(source / "a.log", [" line"])
    expected.append("a-split line")
    later = [f"d-{i}" for i in range(500)]
    _append(source / "d.log", later)
    expected += later
    # Bigger batches after the restart: the re-delivered batch keeps its checkpointed range, the
    # rest is drained in few batches (each costs seconds on a busy 2-core machine).
    second = start_pipeline(PIPELINE, [str(source), str(out), str(checkpoint), "5000", "--until-done"], log)
    second.wait(timeout=400)
    got = _visible_lines(out)
    twice = {line: n for line, n in got.items() if n > 1}
    missing = set(expected) - set(got)
    assert not twice, f"{len(twice)} lines written twice, e.g. {list(twice.items())[:5]}"
    assert not missing, f"{len(missing)} lines lost, e.g. {sorted(missing)[:5]}"
    assert set(got) == set(expected)


@pytest.mark.crash
def test_watcher_to_files_sink_survives_sigkill_mid_batch(tmp_path) -> None:
    _run_crash(tmp_path, _in_flight)


@pytest.mark.crash_matrix
@pytest.mark.parametrize("commits", [1, 4])
def test_watcher_to_files_sink_survives_sigkill_after_commits(tmp_path, commits: int) -> None:
    _run_crash(tmp_path, lambda checkpoint: len(checkpoint_batches(checkpoint)) >= commits)
