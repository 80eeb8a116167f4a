"""SIGKILL of the whole driver mid-stream, restart from the checkpoint: every item exactly once.

Both ways a builder stream replays are covered: snapshot functions (the counter) and the
write-ahead log (a destructive dispenser that never hands an item out twice).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until

PIPELINE = Path(__file__).resolve().parent.parent / "pipelines" / "core_counter.py"


def _mid_batch(ckpt: Path) -> bool:
    offsets, commits = checkpoint_batches(ckpt, "offsets"), checkpoint_batches(ckpt, "commits")
    return len(offsets) >= 3 and len(offsets) > len(commits)


def _between_batches(ckpt: Path) -> bool:
    offsets, commits = checkpoint_batches(ckpt, "offsets"), checkpoint_batches(ckpt, "commits")
    return len(commits) >= 2 and len(offsets) == len(commits)


def _crash_and_restart(spark, tmp_path: Path, mode: str, total: int, kill_when) -> list[int]:
    ckpt, out, work = tmp_path / "ckpt", tmp_path / "out", tmp_path / "work"
    work.mkdir()
    args = ["--mode", mode, "--checkpoint", str(ckpt), "--out", str(out), "--total", str(total), "--work", str(work)]
    first = start_pipeline(PIPELINE, args, tmp_path / "run1.log")
    wait_until(lambda: kill_when(ckpt), 180, "the kill point", first)
    first.kill()
    killed_at = (checkpoint_batches(ckpt, "offsets"), checkpoint_batches(ckpt, "commits"))
    second = start_pipeline(PIPELINE, args, tmp_path / "run2.log")
    second.wait(timeout=300)
    assert killed_at[0], "the first run was killed before it planned any batch"
    return sorted(r.n for r in spark.read.parquet(str(out)).collect())


@pytest.mark.crash
def test_snapshot_stream_killed_mid_batch_restarts_exactly_once(spark, tmp_path):
    total = 400
    got = _crash_and_restart(spark, tmp_path, "snapshot", total, _mid_batch)
    assert got == list(range(total))


@pytest.mark.crash
def test_wal_stream_killed_mid_batch_loses_nothing_received(spark, tmp_path):
    total = 600
    got = _crash_and_restart(spark, tmp_path, "wal", total, _mid_batch)
    assert got == list(range(total))


@pytest.mark.crash_matrix
@pytest.mark.parametrize("mode,total", [("snapshot", 400), ("wal", 600)])
def test_killed_between_batches_restarts_exactly_once(spark, tmp_path, mode, total):
    got = _crash_and_restart(spark, tmp_path, mode, total, _between_batches)
    expected = list(range(total))
    assert got == expected
