"""The HDFS sink through a real SparkSession: committed files only, each batch exactly once."""

from __future__ import annotations

import pytest

from jetconnect import sinks
from jetconnect._connector import CommitContext, WriteContext

WEBHDFS_URL, USER = "http://127.0.0.1:9870", "root"  # scripts/servers/hdfs.sh


def visible_lines(fs, directory: str) -> list[str]:
    lines: list[str] = []
    for f in fs.list_files(directory):
        lines += fs.read_range(f.path, 0, f.size).decode().splitlines()
    return lines


def test_a_batch_write_lands_as_one_file_per_partition(spark, hdfs_fs, hdfs_dir):
    df = spark.range(0, 1000, numPartitions=3).selectExpr("CAST(id AS STRING) AS value")
    sinks.hdfs(WEBHDFS_URL, f"{hdfs_dir}/out", user=USER).write(df)
    files = hdfs_fs.list_files(f"{hdfs_dir}/out")
    assert len(files) == 3 and all(f.path.endswith(".txt") for f in files)
    assert sorted(int(v) for v in visible_lines(hdfs_fs, f"{hdfs_dir}/out")) == list(range(1000))
    assert hdfs_fs.list_files(f"{hdfs_dir}/out", recursive=True) == files  # no staging left visible


def test_jsonl_and_the_format_string_way(spark, hdfs_fs, hdfs_dir):
    df = spark.createDataFrame([(1, "a"), (2, None)], "id int, name string").coalesce(1)
    (
        df.write.format("jetconnect.hdfs")
        .mode("append")
        .option("url", WEBHDFS_URL)
        .option("user", USER)
        .option("directory", hdfs_dir)
        .option("format", "jsonl")
        .save()
    )
    assert sorted(visible_lines(hdfs_fs, hdfs_dir)) == ['{"id": 1, "name": "a"}', '{"id": 2, "name": null}']


def test_lines_need_one_string_column(spark, hdfs_dir):
    # Spark wraps the SchemaError the sink raised while it plans the write.
    with pytest.raises(Exception, match="SchemaError: sink 'hdfs': format 'lines' writes one string column"):
        sinks.hdfs(WEBHDFS_URL, hdfs_dir, user=USER).write(spark.range(3))


def test_a_redelivered_batch_is_not_written_twice_and_leftovers_stay_hidden(hdfs_fs, hdfs_dir, spark):
    """What Spark does after a crash between write and commit, step by step on the real HDFS."""
    import pyarrow as pa

    sink = sinks.hdfs(WEBHDFS_URL, hdfs_dir, user=USER)
    schema = spark.range(1).selectExpr("CAST(id AS STRING) AS value").schema
    batch = pa.record_batch([pa.array(["x", "y"])], names=["value"])

    def task(attempt: int) -> list:
        ctx = WriteContext(partition_id=0, attempt=attempt, batch_id=7, query_id="q-1", schema=schema)
        return sink.write_partition(iter([batch]), ctx)

    task(0)  # an attempt killed before its commit: staged, never committed
    assert visible_lines(hdfs_fs, hdfs_dir) == []
    first = task(1)
    sink.commit([first], CommitContext(batch_id=7, query_id="q-1"))
    redelivered = task(0)  # the restarted query writes batch 7 again and commits it again
    sink.commit([redelivered], CommitContext(batch_id=7, query_id="q-1"))
    assert visible_lines(hdfs_fs, hdfs_dir) == ["x", "y"]
    assert [f.path for f in hdfs_fs.list_files(hdfs_dir, recursive=True)] == [
        f"{hdfs_dir}/part-0000000007-00000-000-q1.txt"
    ]
    assert not [f for f in hdfs_fs.list_files(f"{hdfs_dir}/.jetconnect-staging", recursive=True)]
