"""Builder sources and sinks in batch jobs through the shared SparkSession."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jetconnect import SinkBuilder, SourceBuilder, sources
from jetconnect._builders import fill_from_iterator
from jetconnect.spark import members


def _numbers(n: int, parallelism: int):
    return (
        SourceBuilder.batch("numbers", lambda ctx: iter(range(ctx.global_processor_index, n, ctx.total_parallelism)))
        .fill_buffer_fn(fill_from_iterator)
        .schema("n bigint")
        .distributed(parallelism)
        .build()
    )


def test_distributed_batch_source_reads_n_partitions_per_member(spark):
    df = _numbers(12_000, 3).read(spark)
    partitions = 3 * members(spark)  # Jet's distributed(n): n processors on each member
    assert df.rdd.getNumPartitions() == partitions
    assert df.agg({"n": "sum"}).collect()[0][0] == sum(range(12_000))
    per_partition = df.rdd.glom().map(len).collect()
    assert per_partition == [12_000 // partitions] * partitions


def test_registered_format_with_string_options(spark):
    df = spark.read.format("jetconnect.items").option("items", '["a", "b", "c"]').load()
    assert sorted(r.value for r in df.collect()) == ["a", "b", "c"]


def test_python_api_via_catalog(spark):
    assert sources.items(["x", "y"], schema="value string").read(spark).count() == 2


def test_bad_item_fails_the_job_naming_source_and_item(spark):
    def fill(state, buf):
        buf.add((1,))
        buf.add(("one",))
        buf.close()

    source = SourceBuilder.batch("typed", lambda ctx: None).fill_buffer_fn(fill).schema("n bigint").build()
    with pytest.raises(Exception, match=r"source 'typed': item #1 of the batch, \('one',\), does not match schema"):
        source.read(spark).collect()


def test_stream_source_cannot_be_read_as_batch(spark):
    stream = sources.item_stream(items_per_second=10)
    with pytest.raises(Exception, match="is a stream: read it with spark.readStream"):
        stream.read(spark).collect()


def test_builder_sink_writes_every_row_with_partition_context(spark, tmp_path: Path):
    folder = str(tmp_path)

    def create(ctx):
        return open(f"{folder}/part-{ctx.partition_id}.jsonl", "w")

    sink = (
        SinkBuilder.sink("jsonl", create)
        .receive_fn(lambda f, row: f.write(json.dumps(row.asDict()) + "\n"))
        .flush_fn(lambda f: f.flush())
        .destroy_fn(lambda f: f.close())
        .preferred_local_parallelism(2)
        .build()
    )
    sink.write(_numbers(1000, 1).read(spark))
    files = sorted(tmp_path.glob("part-*.jsonl"))
    assert len(files) == 2 * members(spark)  # preferred_local_parallelism is per member
    values = sorted(json.loads(line)["n"] for f in files for line in f.read_text().splitlines())
    assert values == list(range(1000))

    # a member count pinned by the option is the one the partitions follow, too
    for f in files:
        f.unlink()
    sink.write(_numbers(1000, 1).read(spark), **{"jetconnect.members": 3})
    assert len(list(tmp_path.glob("part-*.jsonl"))) == 2 * 3


def test_arrow_batch_sink(spark):
    seen = []

    def create(ctx):
        return seen

    # in local mode executors are separate Python processes: count through a file instead
    import tempfile

    out = tempfile.mkdtemp()
    sink = (
        SinkBuilder.sink("arrow", lambda ctx: open(f"{out}/{ctx.partition_id}", "w"))
        .receive_batch_fn(lambda f, batch: f.write(f"{batch.num_rows}\n"), format="arrow")
        .destroy_fn(lambda f: f.close())
        .build()
    )
    sink.write(_numbers(5000, 2).read(spark))
    assert sum(int(x) for p in Path(out).iterdir() for x in p.read_text().split()) == 5000
