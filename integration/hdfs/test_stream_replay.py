"""The HDFS stream against a file still being written: a half-written line waits, a replay is identical.

The HDFS plugin's own reading copy once took the file's length as the offset, so a line appended in
two WebHDFS calls came out as two rows, and a replay of that micro-batch read a different line. HDFS
now reads through the core's growing-files stream (jetconnect._files.growing_files), whose offsets stop
after the last complete line: the defect is gone by construction, on HDFS as on the local disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jetconnect import sources

WEBHDFS_URL, USER = "http://127.0.0.1:9870", "root"  # scripts/servers/hdfs.sh


def checkpointed_offsets(checkpoint: Path) -> dict[int, dict]:
    """The source offset Spark wrote for each micro-batch (checkpoint/offsets/N, last line)."""
    folder = checkpoint / "offsets"
    return {int(p.name): json.loads(p.read_text().splitlines()[-1]) for p in folder.iterdir() if p.name.isdigit()}


# 5 bytes: the new bytes of a micro-batch are cut into tasks every 5 bytes, so lines also cross the
# cuts between tasks (a read boundary), not only the end of the file.
@pytest.mark.parametrize("max_split_bytes", [128 << 20, 5], ids=["one-task", "cut-every-5-bytes"])
def test_a_half_written_line_arrives_once_and_whole_and_replays_the_same(
    spark, hdfs_fs, hdfs_dir, tmp_path, max_split_bytes
):
    path = f"{hdfs_dir}/in/log.txt"
    with hdfs_fs.create(path) as out:
        out.write(b"one\ntwo\n")
    source = sources.hdfs(WEBHDFS_URL, f"{hdfs_dir}/in", user=USER, max_split_bytes=max_split_bytes)
    emitted: dict[int, list[str]] = {}

    def keep(batch, batch_id: int) -> None:
        emitted[batch_id] = [row.value for row in batch.collect()]

    checkpoint = tmp_path / "checkpoint"
    query = (
        source.read_stream(spark).writeStream.foreachBatch(keep).option("checkpointLocation", str(checkpoint)).start()
    )
    try:
        query.processAllAvailable()
        with hdfs_fs.append(path) as out:
            out.write(b"three, half")  # a writer half-way through a line
        query.processAllAvailable()
        assert [v for b in sorted(emitted) for v in emitted[b]] == ["one", "two"], "the half line came out"
        with hdfs_fs.append(path) as out:
            out.write(b" written\nfour\n")
        query.processAllAvailable()
    finally:
        query.stop()
    assert [v for b in sorted(emitted) for v in emitted[b]] == ["one", "two", "three, half written", "four"]

    # Replay: each micro-batch's [start, end) read again from the checkpointed offsets gives its rows.
    offsets = checkpointed_offsets(checkpoint)
    assert sorted(offsets) == sorted(emitted)
    for batch_id, rows in emitted.items():
        start, end = offsets.get(batch_id - 1, {}), offsets[batch_id]
        again = [v for r in source.ranges(start, end) for b in source.read_range(r) for v in b.column(0).to_pylist()]
        assert again == rows, batch_id


def test_a_file_without_a_complete_new_line_takes_no_slot_of_max_files_per_batch(hdfs_fs, hdfs_dir):
    with hdfs_fs.create(f"{hdfs_dir}/in/a.txt") as out:
        out.write(b"still being written")  # the oldest file: would hold the only slot for good
    with hdfs_fs.create(f"{hdfs_dir}/in/b.txt") as out:
        out.write(b"b1\nb2\n")
    source = sources.hdfs(WEBHDFS_URL, f"{hdfs_dir}/in", user=USER, max_files_per_batch=1)
    assert source.latest_offset({}, None) == {"b.txt": 6}  # names relative to the source's path
    with hdfs_fs.append(f"{hdfs_dir}/in/a.txt") as out:
        out.write(b" and done\nnext, half")
    assert source.latest_offset({"b.txt": 6}, None) == {"a.txt": 29, "b.txt": 6}
