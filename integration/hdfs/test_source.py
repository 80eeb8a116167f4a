"""The HDFS source through a real SparkSession against the real HDFS (1 MiB blocks)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from jetconnect import sources

BLOCK = 1 << 20
WEBHDFS_URL, USER = "http://127.0.0.1:9870", "root"  # scripts/servers/hdfs.sh
SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "servers" / "hdfs.sh"


def write(fs, path: str, data: bytes) -> None:
    with fs.create(path) as out:
        out.write(data)


def lines_crossing_blocks() -> list[str]:
    """~3.3 MiB of lines of varied lengths, one ending exactly at a block end, one a whole block long."""
    lines = [f"{i:07d}-" + "x" * (i * 37 % 1500) for i in range(4000)]
    size = sum(len(line) + 1 for line in lines)
    # Pad so that a newline is the very last byte of the first block (the next line starts a block).
    pad = BLOCK - size % BLOCK - 1
    lines.append("p" * pad)
    lines.append("y" * (BLOCK + 10))  # a line longer than a block
    lines += [f"tail-{i}" for i in range(100)]
    return lines


def read_lines(spark, path: str, **options) -> list[str]:
    source = sources.hdfs(WEBHDFS_URL, path, user=USER, **options)
    return [row.value for row in source.read(spark).collect()]


def test_splits_give_exactly_the_lines_of_the_files(spark, hdfs_fs, hdfs_dir):
    big = lines_crossing_blocks()
    data = ("\n".join(big) + "\n").encode()
    assert (data.index(b"\n" + b"y" * 10) + 1) % BLOCK == 0  # a line starts exactly at a block start
    write(hdfs_fs, f"{hdfs_dir}/big.txt", data)
    write(hdfs_fs, f"{hdfs_dir}/empty.txt", b"")
    write(hdfs_fs, f"{hdfs_dir}/no-final-newline.txt", b"one\r\ntwo\nthree")
    write(hdfs_fs, f"{hdfs_dir}/_SUCCESS", b"hidden\n")
    expected = big + ["one", "two", "three"]

    source = sources.hdfs(WEBHDFS_URL, hdfs_dir, user=USER, max_split_bytes=BLOCK, batch_reader="jetconnect")
    splits = source.splits()
    ranges = [r for split in splits for r in split]
    # Block-aligned: every cut of big.txt falls on a block boundary, and it has several ranges.
    assert all(r.start % BLOCK == 0 for r in ranges) and len(ranges) > 3
    got = [row.value for row in source.read(spark).collect()]
    assert Counter(got) == Counter(expected)
    assert len(got) == len(expected)


def test_a_glob_and_the_path_column(spark, hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/a.txt", b"a1\na2\n")
    write(hdfs_fs, f"{hdfs_dir}/b.log", b"b1\n")
    source = sources.hdfs(WEBHDFS_URL, f"{hdfs_dir}/*.txt", user=USER, include_path=True)
    rows = sorted((r.value, r.path) for r in source.read(spark).collect())
    assert rows == [("a1", f"{hdfs_dir}/a.txt"), ("a2", f"{hdfs_dir}/a.txt")]


def test_format_string_options_and_bytes(spark, hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/a.bin", bytes(range(256)))
    write(hdfs_fs, f"{hdfs_dir}/e.bin", b"")
    df = (
        spark.read.format("jetconnect.hdfs")
        .option("url", WEBHDFS_URL)
        .option("path", hdfs_dir)
        .option("user", USER)
        .option("format", "bytes")
        .load()
    )
    assert sorted((r.path, bytes(r.content)) for r in df.collect()) == [
        (f"{hdfs_dir}/a.bin", bytes(range(256))),
        (f"{hdfs_dir}/e.bin", b""),
    ]


def test_non_utf8_bytes_fail_naming_the_file_and_offset(spark, hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/bad.txt", b"fine\nstill fine\nbad \xff\xfe here\n")
    with pytest.raises(Exception) as failure:  # jetconnect's reader knows the offset (Spark's: test_batch_reader.py)
        read_lines(spark, hdfs_dir, batch_reader="jetconnect")
    message = str(failure.value)
    assert f"{hdfs_dir}/bad.txt" in message and "offset 20" in message and "utf-8" in message
    # The charset option reads the same bytes fine.
    assert read_lines(spark, hdfs_dir, charset="latin-1")[-1] == "bad \xff\xfe here"


def test_a_namenode_restart_during_a_read_loses_nothing(spark, hdfs_fs, hdfs_dir):
    lines = [f"line-{i:08d}" for i in range(400_000)]  # ~5.6 MiB: several blocks and splits
    write(hdfs_fs, f"{hdfs_dir}/f.txt", ("\n".join(lines) + "\n").encode())
    # jetconnect's WebHDFS retries (Spark's own reader fails at once: Hadoop's client does not retry
    # a refused NameNode connection unless dfs.client.retry.policy.enabled)
    source = sources.hdfs(WEBHDFS_URL, hdfs_dir, user=USER, max_split_bytes=BLOCK, batch_reader="jetconnect")
    df = source.read(spark)
    result: dict[str, object] = {}

    def collect() -> None:
        try:
            result["rows"] = [r.value for r in df.collect()]
        except Exception as exc:  # reported by the assertion below
            result["error"] = exc

    subprocess.run(["bash", str(SCRIPT), "stop-namenode"], check=True, capture_output=True)
    try:
        reader = threading.Thread(target=collect)
        reader.start()
        time.sleep(1.5)  # the driver is now retrying its listing against a NameNode that is down
        assert reader.is_alive()
    finally:
        subprocess.run(["bash", str(SCRIPT), "start-namenode"], check=True, capture_output=True)
    reader.join(timeout=120)
    assert "error" not in result, result.get("error")
    assert Counter(result["rows"]) == Counter(lines)


def test_stream_picks_up_new_files_and_grown_ones(spark, hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/in/1.txt", b"a\nb\n")
    source = sources.hdfs(WEBHDFS_URL, f"{hdfs_dir}/in", user=USER)
    name = f"hdfs_stream_{hdfs_dir.rsplit('/', 1)[-1]}"
    query = source.read_stream(spark).writeStream.format("memory").queryName(name).start()
    try:
        query.processAllAvailable()
        write(hdfs_fs, f"{hdfs_dir}/in/2.txt", b"c\n")
        with hdfs_fs.append(f"{hdfs_dir}/in/1.txt") as out:
            out.write(b"d\n")
        query.processAllAvailable()
        values = [r.value for r in spark.sql(f"SELECT value FROM {name}").collect()]
    finally:
        query.stop()
    assert sorted(values) == ["a", "b", "c", "d"]


def test_jets_mapper_of_path_and_line_through_spark(spark, hdfs_fs, hdfs_dir):
    write(hdfs_fs, f"{hdfs_dir}/a.txt", b"3,x\n5,yy\n")
    write(hdfs_fs, f"{hdfs_dir}/b.txt", b"7,zzz\nbad\n")
    source = sources.hdfs(
        WEBHDFS_URL,
        f"{hdfs_dir}/a.txt",
        user=USER,
        schema="file string, n long, text string",
        mapper=lambda path, line: (path.rsplit("/", 1)[-1], int(line.split(",")[0]), line.split(",")[1]),
    )
    assert sorted(tuple(r) for r in source.read(spark).collect()) == [("a.txt", 3, "x"), ("a.txt", 5, "yy")]
    failing = sources.hdfs(
        WEBHDFS_URL, f"{hdfs_dir}/b.txt", user=USER, schema="n long", mapper=lambda path, line: (line.split(",")[0],)
    )
    with pytest.raises(Exception, match=r"hdfs: the mapper's row for line 1 of '.*/b.txt', \('7',\), does not match"):
        failing.read(spark).collect()
