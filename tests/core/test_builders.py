"""The builder contracts, run without Spark: what a processor sees and every error it can cause."""

from __future__ import annotations

import pyarrow as pa
import pytest

from jetconnect import SinkBuilder, SourceBuilder, SourceError, SinkError, SchemaError, WriteContext
from jetconnect.builders import SourceBuffer, fill_from_iterator
from jetconnect.connector import Range
from jetconnect.errors import OptionError
from jetconnect.arrow import parse_schema


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


def test_context_has_jet_fields_and_options():
    seen = []

    def create(ctx):
        seen.append((ctx.global_processor_index, ctx.total_parallelism, ctx.local_processor_index, ctx.options.get("greeting")))
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
    with pytest.raises(SourceError, match=r"source 'remote' processor 0/1: create_fn raised ConnectionRefusedError: no server"):
        _rows(source, 0)


def test_stream_calling_close_is_an_error():
    def fill(state, buf):
        buf.close()

    source = (
        SourceBuilder.stream("endless", lambda ctx: None).fill_buffer_fn(fill)
        .create_snapshot_fn(lambda s: 0).restore_snapshot_fn(lambda s, p: None).build()
    )
    with pytest.raises(SourceError, match=r"source 'endless' is a stream: buf.close\(\) ends only batch sources"):
        source.initial_offset()
        source.latest_offset(source.initial_offset(), None)


def test_schema_mismatch_names_source_and_item():
    def fill(state, buf):
        buf.add((1, "ok"))
        buf.add(("not a number", "bad"))
        buf.close()

    source = SourceBuilder.batch("typed", lambda ctx: None).fill_buffer_fn(fill).schema("id bigint, name string").build()
    with pytest.raises(SchemaError, match=r"source 'typed': item #1 of the batch, \('not a number', 'bad'\), does not match schema"):
        _rows(source, 0)


def test_wrong_number_of_fields_is_a_schema_error():
    with pytest.raises(SchemaError, match="2 values for 3 columns"):
        from jetconnect.arrow import rows_to_batch

        rows_to_batch([(1, 2)], parse_schema("a int, b int, c int"), "source 'x'")


def test_builder_misuse_is_reported_at_build_time():
    with pytest.raises(SourceError, match="fill_buffer_fn is required"):
        SourceBuilder.batch("x", lambda ctx: None).build()
    with pytest.raises(SourceError, match="go together"):
        SourceBuilder.stream("x", lambda ctx: None).fill_buffer_fn(lambda s, b: None).create_snapshot_fn(lambda s: 0).build()
    with pytest.raises(SourceError, match="positive int"):
        SourceBuilder.batch("x", lambda ctx: None).distributed(0)
    with pytest.raises(SourceError, match="for timestamped streams"):
        SourceBuilder.stream("x", lambda ctx: None).allowed_lateness(10)
    with pytest.raises(SourceError, match="snapshots are for streams"):
        SourceBuilder.batch("x", lambda ctx: None).fill_buffer_fn(fill_from_iterator).create_snapshot_fn(lambda s: 0).restore_snapshot_fn(lambda s, p: None).build()
    with pytest.raises(SinkError, match="receive_fn or receive_batch_fn is required"):
        SinkBuilder.sink("s", lambda ctx: None).build()


def test_buffer_timestamps_only_for_timestamped_streams():
    buf = SourceBuffer("plain", "stream")
    with pytest.raises(SourceError, match="not timestamped"):
        buf.add("x", 5)
    tbuf = SourceBuffer("ts", "timestamped_stream")
    with pytest.raises(SourceError, match="call buf.add\\(item, timestamp\\)"):
        tbuf.add("x")


class _Counter:
    def __init__(self, ctx):
        self.n = ctx.global_processor_index * 1000


def _fill_counter(state, buf):
    for _ in range(5):
        buf.add(state.n)
        state.n += 1


def _counter_stream(parallelism=2):
    return (
        SourceBuilder.stream("counter", _Counter).fill_buffer_fn(_fill_counter).schema("n bigint")
        .create_snapshot_fn(lambda s: s.n).restore_snapshot_fn(lambda s, p: setattr(s, "n", p))
        .distributed(parallelism).build()
    )


def test_snapshot_stream_replays_exactly_what_the_driver_counted():
    source = _counter_stream()
    start = source.initial_offset()
    assert source.initial_offset() == start  # Spark asks twice; the answer must not move
    end = source.latest_offset(start, 12)
    assert end == {"0": {"seq": 10, "snapshot": 10, "of": 2}, "1": {"seq": 10, "snapshot": 1010, "of": 2}}
    replayed = {r.partition: [x["n"] for b in source.read_range(r) for x in b.to_pylist()] for r in source.ranges(start, end)}
    assert replayed == {"0": list(range(0, 10)), "1": list(range(1000, 1010))}
    # a re-read of the same range (Spark re-running a batch) gives the same records
    again = [x["n"] for b in source.read_range(Range("0", start["0"], end["0"])) for x in b.to_pylist()]
    assert again == list(range(10))
    # the next batch starts where the last ended, even in a fresh reader (a restart)
    restarted = _counter_stream()
    end2 = restarted.latest_offset(end, 4)
    assert [x["n"] for b in restarted.read_range(Range("0", end["0"], end2["0"])) for x in b.to_pylist()] == list(range(10, 15))


def test_a_restarted_stream_keeps_the_processors_of_its_checkpoint_when_members_change():
    # processor i of n partitions its data by (i, n): restarting it as i of some other n would
    # emit other items from the restored position
    def create(ctx):
        return {"first": ctx.global_processor_index, "step": ctx.total_parallelism, "k": 0}

    def fill(state, buf):
        for _ in range(3):
            buf.add(state["first"] + state["k"] * state["step"])
            state["k"] += 1

    def stream(members: str):
        built = (
            SourceBuilder.stream("strided", create).fill_buffer_fn(fill).schema("n bigint").distributed(1)
            .create_snapshot_fn(lambda s: s["k"]).restore_snapshot_fn(lambda s, k: s.update(k=k)).build()
        )
        return built.with_options({"jetconnect.members": members})

    first = stream("2")
    start = first.initial_offset()
    end = first.latest_offset(start, 6)
    restarted = stream("3")  # a third executor joined before the restart
    end2 = restarted.latest_offset(end, 6)
    assert sorted(end2) == ["0", "1"]
    read = sorted(x["n"] for r in restarted.ranges(start, end2) for b in restarted.read_range(r) for x in b.to_pylist())
    assert read == list(range(12))


def test_nondeterministic_restore_is_detected(monkeypatch):
    import jetconnect.builders as builders

    source = (
        SourceBuilder.stream("liar", _Counter).fill_buffer_fn(_fill_counter)
        .create_snapshot_fn(lambda s: s.n).restore_snapshot_fn(lambda s, p: None).build()
    )
    start = source.initial_offset()
    end = source.latest_offset(start, 5)
    # a source that gives fewer items on replay than before: make fills return nothing
    source2 = (
        SourceBuilder.stream("liar", _Counter).fill_buffer_fn(lambda s, b: None)
        .create_snapshot_fn(lambda s: s.n).restore_snapshot_fn(lambda s, p: None).build()
    )
    monkeypatch.setattr(builders, "REPLAY_PATIENCE_S", 0.2)
    with pytest.raises(SourceError, match="restore_snapshot_fn must make the source deterministic"):
        list(source2.read_range(Range("0", start["0"], end["0"])))


def test_stream_without_snapshots_needs_a_wal_location():
    source = SourceBuilder.stream("socketish", lambda ctx: None).fill_buffer_fn(lambda s, b: None).build()
    with pytest.raises(OptionError, match="option 'wal_location' is required"):
        source.initial_offset()


def test_wal_stream_logs_before_counting_and_recovers_unplanned_segments(tmp_path):
    dispensed = iter(range(100))

    def fill(state, buf):
        for _ in range(3):
            buf.add(str(next(dispensed)))

    def build():
        return SourceBuilder.stream("queue", lambda ctx: None).fill_buffer_fn(fill).build().with_options({"wal_location": str(tmp_path)})

    source = build()
    start = source.initial_offset()
    end = source.latest_offset(start, 6)
    assert end == {"0": 6}
    assert [r["value"] for b in source.read_range(Range("0", 0, 6)) for r in b.to_pylist()] == [str(i) for i in range(6)]
    # the driver pulled and logged a batch, then died before Spark recorded the offset:
    source.latest_offset(end, 3)
    restarted = build()
    assert restarted.latest_offset(end, 3) == {"0": 9}  # adopted from the log, nothing pulled
    restarted.commit({"0": 6})
    with pytest.raises(Exception, match="has no records 0..6"):
        list(restarted.read_range(Range("0", 0, 6)))


def test_timestamped_stream_adds_event_time_and_watermark():
    def fill(state, buf):
        buf.add(("a",), 1_700_000_000_000)

    source = (
        SourceBuilder.timestamped_stream("events", lambda ctx: None).fill_buffer_fn(fill).schema("v string")
        .create_snapshot_fn(lambda s: 0).restore_snapshot_fn(lambda s, p: None).allowed_lateness(250).build()
    )
    assert source.schema().simpleString() == "struct<v:string,event_time:timestamp>"
    assert source.watermark == ("event_time", "250 milliseconds")
    start = source.initial_offset()
    end = source.latest_offset(start, 1)
    (batch,) = list(source.read_range(Range("0", start["0"], end["0"])))
    assert batch.column("event_time").type == pa.timestamp("us", tz="UTC")
    assert batch.column("event_time")[0].value == 1_700_000_000_000_000


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
    sink = SinkBuilder.sink("b", lambda ctx: batches).receive_batch_fn(lambda s, rows: s.append(list(rows)), batch_size=2).build()
    _write(sink, [1, 2, 3])
    assert batches == [[1, 2], [3]]
    bad = SinkBuilder.sink("bad", lambda ctx: None).receive_fn(lambda s, r: 1 / 0).build()
    with pytest.raises(SinkError, match=r"sink 'bad' partition 3: receive_fn raised ZeroDivisionError"):
        _write(bad, [1])


def test_wal_keeps_what_earlier_fills_received_when_a_later_fill_fails(tmp_path):
    calls = {"n": 0}

    def fill(state, buf):
        calls["n"] += 1
        if calls["n"] == 3:
            raise ConnectionResetError("peer went away")
        buf.add(f"line {calls['n']}")

    source = SourceBuilder.stream("flaky", lambda ctx: None).fill_buffer_fn(fill).build().with_options({"wal_location": str(tmp_path)})
    start = source.initial_offset()
    with pytest.raises(SourceError, match="ConnectionResetError"):
        source.latest_offset(start, None)
    from jetconnect.wal import WriteAheadLog

    assert WriteAheadLog(tmp_path).end("0") == 2  # both lines received before the error are durable
    # after a restart they are planned first, within the batch budget
    restarted = SourceBuilder.stream("flaky", lambda ctx: None).fill_buffer_fn(lambda s, b: None).build().with_options({"wal_location": str(tmp_path)})
    assert restarted.latest_offset(start, 1) == {"0": 1}


def test_wal_mode_admission_is_exact_even_when_a_fill_overshoots(tmp_path):
    counter = iter(range(1000))

    def fill(state, buf):
        for _ in range(7):
            buf.add(str(next(counter)))

    source = SourceBuilder.stream("sevens", lambda ctx: None).fill_buffer_fn(fill).build().with_options({"wal_location": str(tmp_path)})
    start = source.initial_offset()
    first = source.latest_offset(start, 10)
    second = source.latest_offset(first, 10)  # the 4 logged past the first batch, nothing pulled
    third = source.latest_offset(second, 10)
    assert (first, second, third) == ({"0": 10}, {"0": 14}, {"0": 24})
    values = [r["value"] for b in source.read_range(Range("0", 10, 24)) for r in b.to_pylist()]
    assert values == [str(i) for i in range(10, 24)]
