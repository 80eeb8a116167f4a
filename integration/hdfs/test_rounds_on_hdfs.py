"""A builder stream whose round records and spool live on HDFS (``wal_location=webhdfs://...``)."""

from __future__ import annotations

import pytest

from jetconnect._locations import resolve_location
from jetconnect.testing import counter_stream

TOTAL = 300


@pytest.mark.parametrize("snapshots", [False, True])
def test_a_builder_stream_keeps_its_rounds_on_hdfs(spark, hdfs_fs, hdfs_dir, tmp_path, snapshots):
    url = hdfs_fs.connection.url.replace("http://", "webhdfs://") + f"{hdfs_dir}/rounds?user={hdfs_fs.connection.user}"
    fs, path = resolve_location(url, "option 'wal_location'")
    assert path == f"{hdfs_dir}/rounds" and fs.connection == hdfs_fs.connection
    # without snapshots the receiver's spool is on HDFS too
    source = counter_stream(TOTAL, per_fill=25, local_parallelism=1, snapshots=snapshots)
    df = source.read_stream(spark, wal_location=url, max_records_per_batch=100)
    name = f"on_hdfs_{int(snapshots)}"
    query = (
        df.writeStream.format("memory")
        .queryName(name)
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(300)
    assert query.exception() is None
    assert sorted(r.n for r in spark.sql(f"select n from {name}").collect()) == list(range(TOTAL))
    assert hdfs_fs.list_files(path, "*.arrow", recursive=True), "no round record on HDFS"
