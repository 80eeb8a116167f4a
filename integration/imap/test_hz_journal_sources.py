"""``sources.map_journal`` and ``sources.cache_journal`` on the members' own event journals
(scripts/servers/hazelcast.sh), through the shared SparkSession; the official client causes the
events. Every event arrives exactly once, a replayed micro-batch reads the same events, and
events the ring dropped are an error naming the partition and the range."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from jetconnect import sources
from jetconnect_imap.hazelcast import caches, journal
from jetconnect_imap.hazelcast.clients import client_for

URL = "hazelcast://127.0.0.1:5701,127.0.0.1:5702,127.0.0.1:5703/jetconnect"


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def run(stream, checkpoint: Path, batches: dict[int, list[tuple]]) -> None:
    """Drain ``stream`` (availableNow) into ``batches``: batch id -> its rows, as foreachBatch saw them."""

    def collect(df, batch_id: int) -> None:
        rows = sorted(tuple(r) for r in df.collect())
        if batch_id in batches:  # a replay: Spark re-ran a batch whose commit it had not recorded
            assert rows == batches[batch_id], f"batch {batch_id} replayed with other events"
        batches[batch_id] = rows

    query = (
        stream.writeStream.foreachBatch(collect)
        .option("checkpointLocation", str(checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(180)
    if query.exception() is not None:
        raise query.exception()


def test_map_journal_gives_every_event_once_and_replays_a_batch_alike(spark, hz, tmp_path) -> None:
    name = unique("journal-src")
    m = hz.get_map(name).blocking()
    m.put_all({f"k{i}": i for i in range(300)})
    for i in range(0, 300, 4):
        m.put(f"k{i}", -i)
    m.remove("k1")
    stream = sources.map_journal(name, store=URL, full_events=True, parallelism=3).read_stream(
        spark, max_records_per_batch=120
    )
    checkpoint = tmp_path / "checkpoint"
    batches: dict[int, list[tuple]] = {}
    run(stream, checkpoint, batches)
    assert len(batches) >= 3  # 376 events, 120 a batch

    # Spark forgets it committed the last batch: the next run replays it from its saved range
    last = max(batches)
    for leftover in (str(last), f".{last}.crc"):
        (checkpoint / "commits" / leftover).unlink(missing_ok=True)
    seen_before = dict(batches)
    run(stream, checkpoint, batches)
    assert batches == seen_before

    m.put("late", 1)  # after the replay, only what is new
    run(stream, checkpoint, batches)
    rows = [row for rows in batches.values() for row in rows]
    positions = [(r[0], r[1]) for r in rows]  # (partition, sequence)
    assert len(positions) == len(set(positions)) == 300 + 75 + 1 + 1
    for partition in {p for p, _ in positions}:
        assert sorted(s for p, s in positions if p == partition) == list(
            range(len([1 for p, _ in positions if p == partition]))
        )
    by_key: dict[str, list[tuple]] = {}
    for partition, _sequence, kind, key, old, new, timestamp in sorted(rows, key=lambda r: (r[0], r[1])):
        assert hz.partition_service.get_partition_id(key) == partition and timestamp is None
        by_key.setdefault(key, []).append((kind, old, new))
    assert by_key["k4"] == [("ADDED", None, "4"), ("UPDATED", "4", "-4")]
    assert by_key["k1"] == [("ADDED", None, "1"), ("REMOVED", "1", None)]
    assert by_key["late"] == [("ADDED", None, "1")]


def test_default_rows_start_current_and_lost_events(spark, hz, tmp_path) -> None:
    name = unique("smalljournal-src")  # hz.yaml: 10 events per partition
    m = hz.get_map(name).blocking()
    m.put_all({f"old{i}": i for i in range(50)})
    current = sources.map_journal(name, store=URL, start="current").read_stream(spark)
    batches: dict[int, list[tuple]] = {}
    run(current, tmp_path / "current", batches)  # starts at the journal's end: nothing yet
    m.put("new", 7)
    m.put("new", 8)
    m.remove("new")  # not a put event: left out by default, as Jet's mapPutEvents
    run(current, tmp_path / "current", batches)
    assert [row for rows in batches.values() for row in rows] == [("new", "7"), ("new", "8")]

    partition = hz.partition_service.get_partition_id("hot")
    m.put("hot", -1)
    oldest = sources.map_journal(name, store=URL).read_stream(spark)
    run(oldest, tmp_path / "oldest", {})  # the query's offsets now stand past "hot"'s event
    saved = journal.subscribe(client_for(URL), journal.MAP_JOURNAL, name, partition)[1] + 1
    for i in range(25):  # 25 events into a ring of 10 while the query is not running
        m.put("hot", i)
    first_kept = journal.subscribe(client_for(URL), journal.MAP_JOURNAL, name, partition)[0]
    with pytest.raises(
        Exception, match=rf"partition {partition} lost events {saved}\.\.{first_kept - 1} before they were read"
    ):
        run(oldest, tmp_path / "oldest", {})


def test_cache_journal_reads_jcache_events(spark, hz, tmp_path) -> None:
    name = unique("cache-src")
    ours = client_for(URL)
    caches.ensure(ours, name)
    caches.put_all(ours, name, {f"k{i}": i for i in range(40)})
    caches.put_all(ours, name, {"k0": "again"})
    batches: dict[int, list[tuple]] = {}
    run(sources.cache_journal(name, store=URL).read_stream(spark), tmp_path / "cache", batches)
    rows = sorted(row for rows in batches.values() for row in rows)
    assert rows == sorted([(f"k{i}", str(i)) for i in range(40)] + [("k0", "again")])


def test_typed_columns_read_what_the_official_client_wrote(spark, hz, tmp_path) -> None:
    """A schema of typed columns reads the members' values column by column: longs as longs, a
    HazelcastJsonValue into a struct (or as its JSON text in a string column, as the map source
    shows it), with the full event's old and new values typed too; a value that does not fit its
    column fails naming the column and the event's values."""
    import datetime as dt

    from hazelcast.core import HazelcastJsonValue

    name = unique("typed-journal-src")
    m = hz.get_map(name).blocking()
    m.put_all({f"k{i}": i * 2**40 for i in range(50)})  # past 32 bits: longs on the wire
    m.put("k0", -1)
    rows = run_rows(sources.map_journal(name, store=URL, schema="key string, value long"), spark, tmp_path / "a")
    assert sorted(rows) == sorted([(f"k{i}", i * 2**40) for i in range(50)] + [("k0", -1)])
    full = run_rows(
        sources.map_journal(
            name,
            store=URL,
            full_events=True,
            schema="partition int, sequence long, type string, key string, old_value long, new_value long, "
            "timestamp timestamp",
        ),
        spark,
        tmp_path / "b",
    )
    assert [(r[2], r[4], r[5]) for r in full if r[3] == "k0"] == [("ADDED", None, 0), ("UPDATED", 0, -1)]

    docs, days = unique("json-journal-src"), unique("date-journal-src")
    j = hz.get_map(docs).blocking()
    j.put("d1", HazelcastJsonValue('{"qty": 3, "name": "x"}'))
    typed = sources.map_journal(docs, store=URL, schema="key string, value struct<qty: bigint, name: string>")
    assert run_rows(typed, spark, tmp_path / "c") == [("d1", (3, "x"))]
    hz.get_map(days).blocking().put("day", dt.date(2024, 2, 29))
    dates = sources.map_journal(days, store=URL, schema="key string, value date")
    assert run_rows(dates, spark, tmp_path / "d") == [("day", dt.date(2024, 2, 29))]
    j.put("d2", HazelcastJsonValue('"just text"'))
    j.put("d3", dt.date(2024, 2, 29))
    texts = dict(run_rows(sources.map_journal(docs, store=URL), spark, tmp_path / "e"))
    mapped = dict(tuple(r) for r in sources.map(docs, store=URL).read(spark).collect())
    assert texts == mapped == {"d1": '{"qty": 3, "name": "x"}', "d2": '"just text"', "d3": "2024-02-29"}

    with pytest.raises(Exception, match=r"item #\d+ of the batch, \('d[123]', .*\), does not match .*column 'value'"):
        run_rows(sources.map_journal(docs, store=URL, schema="key string, value long"), spark, tmp_path / "f")
    with pytest.raises(Exception, match=r"item #\d+ of the batch, \('d[123]', .*\), does not match .*column 'value'"):
        sources.map(docs, store=URL, schema="key string, value long").read(spark).collect()  # the map alike


def run_rows(source, spark, checkpoint: Path) -> list[tuple]:
    """Every row ``source`` streams (availableNow), as tuples of plain values."""
    batches: dict[int, list[tuple]] = {}
    run(source.read_stream(spark), checkpoint, batches)
    return [tuple(tuple(v) if hasattr(v, "asDict") else v for v in row) for rows in batches.values() for row in rows]
