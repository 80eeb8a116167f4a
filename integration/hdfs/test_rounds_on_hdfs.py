"""A builder stream whose round records and spool live on HDFS (``wal_location=webhdfs://...``)."""

from __future__ import annotations

import pytest

from jetconnect import SourceBuilder
from jetconnect._locations import resolve_location

TOTAL = 300


def _fill(state, buf):
    upto = min(TOTAL, state["n"] + 25)
    buf.add_all(list(range(state["n"], upto)))
    state["n"] = upto


@pytest.mark.parametrize("snapshots", [False, True])
def test_a_builder_stream_keeps_its_rounds_on_hdfs(spark, hdfs_fs, hdfs_dir, tmp_path, snapshots):
    url = hdfs_fs.connection.url.replace("http://", "webhdfs://") + f"{hdfs_dir}/rounds?user={hdfs_fs.connection.user}"
    fs, path = resolve_location(url, "option 'wal_location'")
    assert path == f"{hdfs_dir}/rounds" and fs.connection == hdfs_fs.connection
    builder = SourceBuilder.stream("counter", lambda ctx: {"n": 0}).fill_buffer_fn(_fill).schema("n bigint")
    if snapshots:  # else the receiver's spool is on HDFS too
        builder = builder.create_snapshot_fn(lambda s: s["n"]).restore_snapshot_fn(lambda s, n: s.update(n=n))
    df = builder.build().read_stream(spark, wal_location=url, max_records_per_batch=100)
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
