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


def test_avro_through_spark_avro_on_hdfs_gives_the_same_rows(spark, need_spark_avro, hdfs_fs, hdfs_dir):
    """With spark-avro on the session, a plain write and read go to Spark's writer and reader at
    the NameNode's hdfs:// address; what each writer leaves reads back the same through each reader."""
    df = spark.range(0, 3000, numPartitions=3).selectExpr(
        "id",
        "CONCAT('n\\u00e9-', id) AS name",
        "DATE_ADD(DATE'0001-01-01', CAST(id * 300 AS INT)) AS day",
        "IF(id % 3 = 0, NULL, CAST(id / 7 AS DECIMAL(12, 3))) AS money",
        "NAMED_STRUCT('x', id, 'tags', ARRAY('a', CAST(id AS STRING))) AS inner",
    )
    expected = sorted(map(repr, df.collect()))
    for writer in ("spark", "jetconnect"):
        out = f"{hdfs_dir}/{writer}"
        sink = sinks.hdfs(WEBHDFS_URL, out, user=USER, format="avro", codec="snappy", batch_writer=writer)
        assert sink.batch_writer_choice(df).reader == writer
        sink.write(df)
        names = [f.path.rsplit("/", 1)[-1] for f in hdfs_fs.list_files(out)]
        assert names and all(n.startswith("part-") and n.endswith(".avro") for n in names), names
        for reader in ("spark", "jetconnect"):
            source = sources.hdfs(WEBHDFS_URL, out, user=USER, format="avro", batch_reader=reader)
            back = source.read(spark)
            assert ("FileScan avro" in back._jdf.queryExecution().toString()) == (reader == "spark")
            assert sorted(map(repr, back.collect())) == expected, (writer, reader)
    # what Spark's client would not do as WebHDFS does keeps jetconnect's side
    other = sinks.hdfs(WEBHDFS_URL, f"{hdfs_dir}/other", user="someone-else", format="avro")
    assert "is not the Hadoop user Spark" in other.batch_writer_choice(df).reason
    proxied = sources.hdfs(WEBHDFS_URL, f"{hdfs_dir}/spark", user=USER, proxy_user="x", format="avro")
    assert "proxy_user" in proxied.batch_reader_choice(spark).reason
