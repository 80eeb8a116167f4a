"""The builder contracts, run without Spark: what a processor sees and every error it can cause."""

from __future__ import annotations

import pytest

from jetconnect import SchemaError, SinkBuilder, SinkError, SourceBuilder, SourceError, WriteContext
from jetconnect._builders import SourceBuffer, fill_from_iterator
from jetconnect._ddl import parse_schema


def _numbers(n: int, parallelism: int = 1):
    return (
        SourceBuilder.batch("numbers", lambda ctx: iter(range(ctx.global_processor_index, n, ctx.total_parallelism)))
        .fill_buffer_fn(fill_from_iterator)
        .schema("n bigint")
        .distributed(parallelism)
        .build()
    )


def _rows(source, split):
    return [r for b in source.read_split(split) for r in b.to_pylist()]


def test_batch_source_splits_work_by_processor_index():
    source = _numbers(10, parallelism=3)
    assert source.splits() == [0, 1, 2]
    assert [r["n"] for r in _rows(source, 1)] == [1, 4, 7]
    assert sorted(r["n"] for s in source.splits() for r in _rows(source, s)) == list(range(10))


def test_batch_source_hands_spark_fewer_larger_batches_within_a_byte_bound(monkeypatch):
    from jetconnect._builders import _batch_source

    source = _numbers(150_000)
    batches = list(source.read_split(0))
    assert [b.num_rows for b in batches] == [65_536, 65_536, 150_000 - 131_072]
    assert [v for b in batches for v in b.column(0).to_pylist()] == list(range(150_000))  # in order, none lost
    # wide rows: the byte bound ends a batch before the row bound does
    monkeypatch.setattr(_batch_source, "OUTGOING_BYTES", 100_000)
    sizes = [b.num_rows for b in source.read_split(0)]
    assert sum(sizes) == 150_000 and max(sizes) < 65_536


def test_context_has_jet_fields_and_options():
    seen = []

    def create(ctx):
        seen.append(
            (ctx.global_processor_index, ctx.total_parallelism, ctx.local_processor_index, ctx.options.get("greeting"))
        )
        return iter([])

    source = SourceBuilder.batch("ctx", create).fill_buffer_fn(fill_from_iterator).distributed(2).build()
    source = source.with_options({"greeting": "hi", "jetconnect.members": "2"})
    for split in source.splits():
        list(source.read_split(split))
    assert seen == [(0, 4, 0, "hi"), (1, 4, 1, "hi"), (2, 4, 0, "hi"), (3, 4, 1, "hi")]


def test_a_source_not_distributed_has_one_processor_however_many_members():
    # Jet: a non-distributed source runs one processor in the whole job, not one per member
    # (found on a two-executor cluster, where sources.items emitted every item twice)
    single = SourceBuilder.batch("one", lambda ctx: iter(["a", "b"])).fill_buffer_fn(fill_from_iterator).build()
    single = single.with_options({"jetconnect.members": "3"})
    assert single.splits() == [0]
    assert [r["value"] for r in _rows(single, 0)] == ["a", "b"]
    stream = SourceBuilder.stream("s", lambda ctx: None).fill_buffer_fn(lambda s, b: None).build()
    assert stream.with_options({"jetconnect.members": "3"}).total_parallelism == 1


def test_items_may_be_tuples_dicts_or_bare_values():
    def fill(state, buf):
        buf.add((1, "a"))
        buf.add({"id": 2, "name": "b"})
        buf.close()

    source = SourceBuilder.batch("mixed", lambda ctx: None).fill_buffer_fn(fill).schema("id int, name string").build()
    # tuples and dicts are both accepted, converted in one Arrow batch
    rows = _rows(source, 0)
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]


def test_default_schema_is_one_string_column():
    def fill(state, buf):
        buf.add("hello")
        buf.close()

    source = SourceBuilder.batch("hello", lambda ctx: None).fill_buffer_fn(fill).build()
    assert source.schema().simpleString() == "struct<value:string>"
    assert _rows(source, 0) == [{"value": "hello"}]


def test_destroy_fn_runs_after_success_and_after_errors():
    destroyed = []

    def fill(state, buf):
        raise RuntimeError("boom")

    source = SourceBuilder.batch("fails", lambda ctx: "state").fill_buffer_fn(fill).destroy_fn(destroyed.append).build()
    with pytest.raises(SourceError, match=r"source 'fails' processor 0/1: fill_buffer_fn raised RuntimeError: boom"):
        _rows(source, 0)
    assert destroyed == ["state"]


def test_create_fn_that_raises_names_the_source():
    def create(ctx):
        raise ConnectionRefusedError("no server")

    source = SourceBuilder.batch("remote", create).fill_buffer_fn(fill_from_iterator).build()
    with pytest.raises(
        SourceError, match=r"source 'remote' processor 0/1: create_fn raised ConnectionRefusedError: no server"
    ):
        _rows(source, 0)


def test_schema_mismatch_names_source_and_item():
    def fill(state, buf):
        buf.add((1, "ok"))
        buf.add(("not a number", "bad"))
        buf.close()

    source = (
        SourceBuilder.batch("typed", lambda ctx: None).fill_buffer_fn(fill).schema("id bigint, name string").build()
    )
    with pytest.raises(
        SchemaError, match=r"source 'typed': item #1 of the batch, \('not a number', 'bad'\), does not match schema"
    ):
        _rows(source, 0)


def test_wrong_number_of_fields_is_a_schema_error():
    with pytest.raises(SchemaError, match="2 values for 3 columns"):
        from jetconnect._arrow_rows import rows_to_batch

        rows_to_batch([(1, 2)], parse_schema("a int, b int, c int"), "source 'x'")


def test_builder_misuse_is_reported_at_build_time():
    with pytest.raises(SourceError, match="fill_buffer_fn is required"):
        SourceBuilder.batch("x", lambda ctx: None).build()
    with pytest.raises(SourceError, match="go together"):
        SourceBuilder.stream("x", lambda ctx: None).fill_buffer_fn(lambda s, b: None).create_snapshot_fn(
            lambda s: 0
        ).build()
    with pytest.raises(SourceError, match="positive int"):
        SourceBuilder.batch("x", lambda ctx: None).distributed(0)
    with pytest.raises(SourceError, match="for timestamped streams"):
        SourceBuilder.stream("x", lambda ctx: None).allowed_lateness(10)
    with pytest.raises(SourceError, match="snapshots are for streams"):
        SourceBuilder.batch("x", lambda ctx: None).fill_buffer_fn(fill_from_iterator).create_snapshot_fn(
            lambda s: 0
        ).restore_snapshot_fn(lambda s, p: None).build()
    with pytest.raises(SinkError, match="receive_fn or receive_batch_fn is required"):
        SinkBuilder.sink("s", lambda ctx: None).build()


def test_buffer_timestamps_only_for_timestamped_streams():
    buf = SourceBuffer("plain", "stream")
    with pytest.raises(SourceError, match="not timestamped"):
        buf.add("x", 5)
    tbuf = SourceBuffer("ts", "timestamped_stream")
    with pytest.raises(SourceError, match="call buf.add\\(item, timestamp\\)"):
        tbuf.add("x")


def _write(sink, rows, batch_id=None):
    ctx = WriteContext(partition_id=3, attempt=0, batch_id=batch_id, query_id="q", schema=parse_schema("a int"))
    return sink.write_partition(iter(rows), ctx)


def test_sink_receives_rows_flushes_and_destroys():
    log = []
    sink = (
        SinkBuilder.sink("collect", lambda ctx: log.append(("create", ctx.partition_id, ctx.batch_id)) or log)
        .receive_fn(lambda state, row: state.append(row))
        .flush_fn(lambda state: state.append("flush"))
        .destroy_fn(lambda state: state.append("destroy"))
        .build()
    )
    _write(sink, [1, 2], batch_id=7)
    assert log == [("create", 3, 7), 1, 2, "flush", "destroy"]


def test_sink_batch_variant_gets_lists_of_rows_and_errors_name_the_sink():
    batches = []
    sink = (
        SinkBuilder.sink("b", lambda ctx: batches)
        .receive_batch_fn(lambda s, rows: s.append(list(rows)), batch_size=2)
        .build()
    )
    _write(sink, [1, 2, 3])
    assert batches == [[1, 2], [3]]
    bad = SinkBuilder.sink("bad", lambda ctx: None).receive_fn(lambda s, r: 1 / 0).build()
    with pytest.raises(SinkError, match=r"sink 'bad' partition 3: receive_fn raised ZeroDivisionError"):
        _write(bad, [1])


def test_a_processor_asked_for_a_function_its_source_lacks_names_it() -> None:
    """A stream built without snapshot functions is never snapshotted; were a processor asked to,
    the error names the function and the processor instead of calling None."""
    from jetconnect._builders._processor import Processor
    from jetconnect._options import Options

    source = SourceBuilder.stream("plain", lambda ctx: None).fill_buffer_fn(lambda state, buf: buf.add("a")).build()
    processor = Processor(source.spec, 0, 1, Options())
    assert processor.fill().items == ["a"]
    with pytest.raises(SourceError, match=r"source 'plain' processor 0/1: create_snapshot_fn is not set"):
        processor.snapshot()
    with pytest.raises(SourceError, match=r"restore_snapshot_fn is not set"):
        processor.restore(3)
