"""SIGKILL the whole driver, or HDFS's DataNode, mid-stream: every line exactly once.

The pipeline (integration/pipelines/hdfs_stream_to_hdfs.py) streams HDFS files into the HDFS sink,
one input file per micro-batch, so a kill lands between or inside batches.
"""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest

from jetconnect.testing import checkpoint_batches, start_pipeline, wait_until

WEBHDFS_URL = "http://127.0.0.1:9870"  # scripts/servers/hdfs.sh
PIPELINE = Path(__file__).resolve().parents[1] / "pipelines" / "hdfs_stream_to_hdfs.py"
HDFS_SH = Path(__file__).resolve().parents[2] / "scripts" / "servers" / "hdfs.sh"
FILES, LINES_PER_FILE = 4, 3000


def write_inputs(hdfs_fs, hdfs_dir: str, files: range = range(FILES)) -> list[str]:
    """Input files of numbered lines, numbered by ``files``; return every line written."""
    inputs = []
    for f in files:
        lines = [f"file{f}-line{i:05d}" for i in range(LINES_PER_FILE)]
        with hdfs_fs.create(f"{hdfs_dir}/in/{f}.txt") as out:
            out.write(("\n".join(lines) + "\n").encode())
        inputs += lines
    return inputs


def assert_each_line_once(hdfs_fs, hdfs_dir: str, inputs: list[str]) -> None:
    outputs: list[str] = []
    for f in hdfs_fs.list_files(f"{hdfs_dir}/out"):
        outputs += hdfs_fs.read_range(f.path, 0, f.size).decode().splitlines()
    counts = Counter(outputs)
    assert sorted(counts) == sorted(inputs), "lines lost"
    assert max(counts.values()) == 1, f"lines written twice: {[k for k, v in counts.items() if v > 1][:5]}"


def run_with_a_kill(hdfs_fs, hdfs_dir: str, tmp_path: Path, kill_when: str, batches: int) -> None:
    inputs = write_inputs(hdfs_fs, hdfs_dir)
    checkpoint = tmp_path / "checkpoint"
    args = [WEBHDFS_URL, f"{hdfs_dir}/in", f"{hdfs_dir}/out", str(checkpoint), "1"]
    log = tmp_path / "pipeline.log"

    first = start_pipeline(PIPELINE, args, log)
    try:
        wait_until(
            lambda: len(checkpoint_batches(checkpoint, kill_when)) >= batches, 240, f"{batches} {kill_when}", first
        )
    finally:
        first.kill()
    assert len(checkpoint_batches(checkpoint, "commits")) < FILES, "the kill came after the end: nothing tested"

    start_pipeline(PIPELINE, [*args, "--until-done"], log).wait(timeout=300)
    assert_each_line_once(hdfs_fs, hdfs_dir, inputs)


@pytest.mark.crash
def test_kill_mid_batch_then_restart_writes_every_line_once(hdfs_fs, hdfs_dir, tmp_path):
    # Offsets of batch 1 are logged before it is written and committed: the kill hits inside it.
    run_with_a_kill(hdfs_fs, hdfs_dir, tmp_path, "offsets", 2)


@pytest.mark.crash
@pytest.mark.crash_matrix
@pytest.mark.parametrize("kill_when, batches", [("offsets", 1), ("commits", 1), ("commits", 3)])
def test_kill_at_other_points(hdfs_fs, hdfs_dir, tmp_path, kill_when, batches):
    run_with_a_kill(hdfs_fs, hdfs_dir, tmp_path, kill_when, batches)


def hdfs_sh(verb: str) -> None:
    subprocess.run(["bash", str(HDFS_SH), verb], check=True, capture_output=True, timeout=180)


@pytest.mark.crash
def test_datanode_sigkill_and_restart_mid_stream_loses_nothing(hdfs_fs, hdfs_dir, tmp_path):
    """The DataNode (every block, every WebHDFS read and write goes through it) dies by SIGKILL
    while the stream runs and comes back on the same storage: the running query rides it out
    (WebHDFS calls retry), and every line arrives once."""
    inputs = write_inputs(hdfs_fs, hdfs_dir, range(3))
    checkpoint = tmp_path / "checkpoint"
    args = [WEBHDFS_URL, f"{hdfs_dir}/in", f"{hdfs_dir}/out", str(checkpoint), "1"]
    log = tmp_path / "pipeline.log"

    run = start_pipeline(PIPELINE, args, log)
    try:
        wait_until(lambda: len(checkpoint_batches(checkpoint, "commits")) >= 1, 240, "a first commit", run)
        hdfs_sh("kill-datanode")
        try:
            time.sleep(3)  # calls fail against the dead DataNode meanwhile
        finally:
            hdfs_sh("start-datanode")
        assert run.running(), f"the query died with the DataNode; log:\n{run.tail()}"
        inputs += write_inputs(hdfs_fs, hdfs_dir, range(3, 6))  # read and written through the new DataNode
        wait_until(lambda: len(checkpoint_batches(checkpoint, "commits")) >= 6, 240, "every file committed", run)
    finally:
        run.kill()
    assert_each_line_once(hdfs_fs, hdfs_dir, inputs)
