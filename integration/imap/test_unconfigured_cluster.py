"""A cluster nobody configured for jetconnect: one member with Hazelcast's defaults (cluster name
``dev``, no event journal, none of jetconnect's Java classes), started by the test itself. The
sources and the plain, merging and updating sinks simply work; a journal source and jetconnect's
entry processors fail within seconds saying what to add to the members; and the processors' jar,
built by the plugin's documented command, makes the second work."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from pyspark.sql import functions as F

from jetconnect import sinks, sources
from jetconnect_imap.hazelcast.processors import FACTORY_CLASS, FACTORY_ID, AddDelta

#: Ports 5710-5749 are this file's and test_compact_*'s own members.
PORT, WITH_PROCESSORS = 5712, 5713


@pytest.fixture
def defaults(own_member):
    return own_member(PORT, journal=False, cluster="dev")


def test_sources_and_the_plain_merging_and_updating_sinks_simply_work(spark, defaults) -> None:
    url = defaults.url
    df = spark.range(0, 1_000, numPartitions=2).selectExpr("id AS key", "id * 2 AS value")
    sinks.map("plain", store=url).write(df)
    assert sorted(
        tuple(r) for r in sources.map("plain", store=url, schema="key long, value long").read(spark).collect()
    ) == [(i, i * 2) for i in range(1_000)]
    rows = spark.range(0, 300).select((F.col("id") % 3).alias("k"), F.lit(1).cast("long").alias("n"))
    sinks.map_with_merging(
        "merged", key_fn=lambda r: r["k"], value_fn=lambda r: r["n"], merge_fn=lambda a, b: a + b, store=url
    ).write(rows)
    sinks.map_with_updating(
        "updated", key_fn=lambda r: r["k"], update_fn=lambda old, r: (old or 0) + r["n"], store=url
    ).write(rows)
    for name in ("merged", "updated"):
        back = sources.map(name, store=url, schema="key long, value long").read(spark).collect()
        assert sorted(tuple(r) for r in back) == [(0, 100), (1, 100), (2, 100)]
    sinks.list("results", store=url).write(spark.range(5).selectExpr("id AS value"))
    assert sorted(int(r["value"]) for r in sources.list("results", store=url).read(spark).collect()) == list(range(5))


def test_a_journal_source_on_a_map_without_a_journal_says_what_to_configure(spark, defaults, tmp_path) -> None:
    started = time.monotonic()
    query = (
        sources.map_journal("orders", store=defaults.url)
        .read_stream(spark)
        .writeStream.format("noop")
        .option("checkpointLocation", str(tmp_path / "chk"))
        .trigger(availableNow=True)
        .start()
    )
    with pytest.raises(Exception) as failure:
        query.awaitTermination(120)
    message = str(failure.value)
    assert time.monotonic() - started < 60, "an error within seconds, never a hang or an empty stream"
    assert "map 'orders'" in message and "event-journal: enabled: true" in message, message


def test_jetconnects_entry_processors_name_the_missing_class_and_the_command(spark, defaults) -> None:
    rows = spark.range(0, 10).selectExpr("id % 2 AS k")
    with pytest.raises(Exception) as failure:
        sinks.map_with_entry_processor(
            "counters", key_fn=lambda r: r["k"], processor_fn=lambda r: AddDelta(1), store=defaults.url
        ).write(rows)
    message = str(failure.value)
    assert FACTORY_CLASS in message and "python -m jetconnect_imap.hazelcast.processors jar" in message
    assert f"factory-id {FACTORY_ID}" in message


def test_the_processors_jar_the_command_builds_runs_on_the_members(
    spark, own_member, member_classpath, tmp_path
) -> None:
    jar = tmp_path / "jetconnect-processors.jar"
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "jetconnect_imap.hazelcast.processors",
            "jar",
            "--classpath",
            member_classpath,
            "--out",
            str(jar),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    member = own_member(
        WITH_PROCESSORS,
        journal=False,
        cluster="dev",
        extra_classpath=(str(jar),),
        factories={FACTORY_ID: FACTORY_CLASS},
    )
    rows = spark.range(0, 100).selectExpr("id % 4 AS k")
    sinks.map_with_entry_processor(
        "counters", key_fn=lambda r: r["k"], processor_fn=lambda r: AddDelta(1), store=member.url
    ).write(rows)
    back = sources.map("counters", store=member.url, schema="key long, value long").read(spark).collect()
    assert sorted(tuple(r) for r in back) == [(0, 25), (1, 25), (2, 25), (3, 25)]
