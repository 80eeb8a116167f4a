"""Avro on HDFS: the files family's Avro reader and writer over WebHdfsFileSystem."""

from __future__ import annotations

import datetime

import pytest

pytest.importorskip("jetconnect_files.avro_source")

from jetconnect import sinks, sources  # noqa: E402

WEBHDFS_URL, USER = "http://127.0.0.1:9870", "root"  # scripts/servers/hdfs.sh


def test_avro_round_trip_through_hdfs(spark, hdfs_fs, hdfs_dir):
    df = spark.createDataFrame(
        [(i, f"name-{i}", datetime.date(2024, 1, 1 + i % 28)) for i in range(5000)],
        "id bigint, name string, day date",
    ).repartition(2)
    sinks.hdfs(WEBHDFS_URL, hdfs_dir, user=USER, format="avro", codec="deflate").write(df)
    files = hdfs_fs.list_files(hdfs_dir)
    assert len(files) == 2 and all(f.path.endswith(".avro") for f in files)
    back = sources.hdfs(WEBHDFS_URL, hdfs_dir, user=USER, format="avro", max_split_bytes=4096).read(spark)
    assert back.schema.simpleString() == "struct<id:bigint,name:string,day:date>"
    assert sorted(back.collect()) == sorted(df.collect())
