"""Sink tasks stream a partition in bounded chunks and stay exactly-once per micro-batch.

A task's rows are cut into chunks of ``chunk_rows`` (at the same rows however Spark sizes its
Arrow batches), each written with its own progress record. These tests write partitions much
larger than a chunk, kill the write mid-way (the input fails, as when the executor dies), and
re-deliver the batch cut into other Arrow batch sizes: every row must land exactly once.
"""

from __future__ import annotations

import tracemalloc
from collections import Counter

import pyarrow as pa
import pytest
from pyspark.sql.types import StructType

from jetconnect._connector import WriteContext
from jetconnect.errors import OptionError
from jetconnect_imap import EventType, connect
from jetconnect_imap.factories import list_sink, map_sink, map_with_merging
from jetconnect_imap.map_sinks import row_chunks

ALL_STORES = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)  # the embedded store's progress records


class ExecutorDied(Exception):
    """What the input raises when the test 'kills' a task mid-partition."""


def _ctx(batch: int | None, partition: int = 0) -> WriteContext:
    return WriteContext(partition_id=partition, attempt=0, batch_id=batch, query_id="q-chunks", schema=StructType())


def _rows(n: int, batch_rows: int, die_after: int | None = None, value=lambda i: i):
    """``n`` rows ``{key: k<i>, value: value(i)}`` in Arrow batches of ``batch_rows``, made lazily;
    with ``die_after``, the input fails once that many rows were handed out."""
    for offset in range(0, n, batch_rows):
        if die_after is not None and offset >= die_after:
            raise ExecutorDied(f"killed after {offset} rows")
        yield pa.RecordBatch.from_pylist(
            [{"key": f"k{i}", "value": value(i)} for i in range(offset, min(offset + batch_rows, n))]
        )


def test_chunks_are_cut_at_the_same_rows_whatever_the_batch_sizes() -> None:
    for batch_rows in (1, 7, 100, 333, 1000, 5000):
        chunks = list(row_chunks(_rows(2_500, batch_rows), 400))
        assert [sum(b.num_rows for b in c) for c in chunks] == [400] * 6 + [100]
        assert [c[0].column("key")[0].as_py() for c in chunks] == [f"k{i}" for i in range(0, 2_500, 400)]
    assert list(row_chunks(iter([]), 10)) == []
    with pytest.raises(OptionError, match="'chunk_rows' must be a whole number of at least 1, got 0"):
        map_sink("m", chunk_rows=0)


def test_a_task_holds_one_chunk_not_its_partition(tmp_path) -> None:
    # Python memory only (SQLite's page cache is not Python's): the rows held while writing.
    url = f"sqlite:///{tmp_path}/imap.db"
    map_sink("warm", store=url).write_partition(_rows(10, 10), _ctx(batch=0))  # imports, store, tables

    def peak(rows: int, chunk_rows: int) -> int:
        sink = map_sink(f"mem{rows}-{chunk_rows}", store=url, partitions=16, journal_capacity=0, chunk_rows=chunk_rows)
        tracemalloc.start()
        try:
            sink.write_partition(_rows(rows, 1_000), _ctx(batch=0))
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(3_000, 250), peak(12_000, 250)
    whole = peak(12_000, 12_000)  # the old behaviour: the partition in one go
    assert connect(url).map("mem12000-250").to_dict() == connect(url).map("mem12000-12000").to_dict()
    assert len(connect(url).map("mem12000-250")) == 12_000
    # bounded: four times the rows, about the same peak; holding the partition costs far more
    assert large < small * 1.5 + 64_000, f"peak {small} B for 3,000 rows, {large} B for 12,000"
    assert large * 4 < whole, f"chunked peak {large} B vs whole-partition peak {whole} B"


@ALL_STORES
def test_a_redelivered_batch_after_a_crash_mid_partition_lands_once(store_url, name) -> None:
    target = name("chunks")
    connect(store_url).map(target, partitions=8, journal_capacity=1_000_000)
    sink = map_sink(target, store=store_url, chunk_rows=500)
    # first delivery dies after 3,200 rows: chunks 0-5 are written, chunk 6 was being read
    with pytest.raises(ExecutorDied):
        sink.write_partition(_rows(10_000, 800, die_after=3_200), _ctx(batch=4))
    m = connect(store_url).map(target)
    assert len(m) == 3_000
    # Spark re-delivers batch 4 with other Arrow batch sizes: chunks 0-5 are skipped
    report = sink.write_partition(_rows(10_000, 333), _ctx(batch=4))
    assert report.replayed and report.rows == 10_000
    again = sink.write_partition(_rows(10_000, 1_024), _ctx(batch=4))
    assert again.replayed
    assert m.to_dict() == {f"k{i}": i for i in range(10_000)}
    events = Counter((e.type, e.key) for e in m.journal())
    assert set(events.values()) == {1} and len(events) == 10_000 and {t for t, _ in events} == {EventType.ADDED}
    # the next batch, smaller: one chunk, applied
    sink.write_partition(_rows(10, 3, value=lambda i: -i), _ctx(batch=5))
    assert m.get("k3") == -3 and len(m.journal()) == 10_010


@ALL_STORES
def test_merging_and_list_sinks_stream_chunks_once(store_url, name) -> None:
    counts, items = name("counts"), name("items")
    merging = map_with_merging(
        counts,
        key_fn=lambda r: r["key"][-1],
        value_fn=lambda r: 1,
        merge_fn=lambda old, new: old + new,
        store=store_url,
        partitions=4,
        chunk_rows=300,
    )
    appending = list_sink(items, store=store_url, chunk_rows=300)
    for sink in (merging, appending):
        with pytest.raises(ExecutorDied):
            sink.write_partition(_rows(3_000, 250, die_after=1_000), _ctx(batch=0))
        sink.write_partition(_rows(3_000, 1_000), _ctx(batch=0))
        assert sink.write_partition(_rows(3_000, 7), _ctx(batch=0)).replayed
    assert connect(store_url).map(counts).to_dict() == {str(d): 300 for d in range(10)}
    assert sorted(v["value"] for v in connect(store_url).list(items)) == list(range(3_000))
