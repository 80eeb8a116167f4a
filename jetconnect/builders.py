"""Jet's source and sink builders, in Python's snake_case.

A source is a ``create_fn(ctx) -> state`` and a ``fill_buffer_fn(state, buf)`` that adds what is
available now; a sink is a ``create_fn(ctx) -> state`` and a ``receive_fn(state, row)``. The
built objects are ordinary :mod:`jetconnect.connector` sources and sinks, so they run on Spark::

    numbers = (
        SourceBuilder.batch("numbers", lambda ctx: iter(range(ctx.global_processor_index, 100, ctx.total_parallelism)))
        .fill_buffer_fn(fill_from_iterator)
        .schema("n bigint")
        .distributed(2)
        .build()
    )
    numbers.read(spark).count()  # 100

How a stream survives a restart (DESIGN section 3): with ``create_snapshot_fn`` and
``restore_snapshot_fn`` the driver-side reader pulls to learn how far each processor's data goes
and stores the processor's snapshot in the offset; an executor restores the start snapshot and
pulls the same number of items again (the functions must make that deterministic). Without
them, what the driver pulls is first written to a write-ahead log (option ``wal_location``) and
executors read the log, so nothing the driver received is lost or read twice.
"""

from __future__ import annotations

import copy
import json
import logging
import math
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from datetime import datetime, timezone
from typing import Any, Generic, Literal, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import StructField, StructType, TimestampType

from jetconnect.arrow import DEFAULT_BATCH_ROWS, parse_schema, rows_to_batch, to_arrow_schema
from jetconnect.connector import BatchSource, Guarantee, Offset, Range, ReadOutput, Sink, StreamSource, WriteContext
from jetconnect.errors import OffsetError, OptionError, SinkError, SourceError
from jetconnect.options import Options
from jetconnect.wal import WriteAheadLog

S = TypeVar("S")
Kind = Literal["batch", "stream", "timestamped_stream"]

#: Options the builder sources read themselves.
WAL_LOCATION = "wal_location"
MAX_PULL_MS = "max_pull_ms"
MAX_PULL_RECORDS = "max_pull_records"
MEMBERS = "jetconnect.members"
#: How long a replay waits for a source that has stopped giving the items it gave before.
REPLAY_PATIENCE_S = 30.0


@dataclass(frozen=True)
class ProcessorContext:
    """What ``create_fn`` learns about the processor it creates state for (Jet's Context)."""

    source_name: str
    global_processor_index: int
    total_parallelism: int
    local_processor_index: int
    local_parallelism: int
    options: Options
    logger: logging.Logger


@dataclass(frozen=True)
class SinkContext:
    """What a sink's ``create_fn`` learns: its partition and, in a streaming query, the batch."""

    sink_name: str
    partition_id: int
    attempt: int
    batch_id: int | None
    query_id: str | None
    options: Options
    logger: logging.Logger

    @property
    def global_processor_index(self) -> int:
        """Jet's name for the partition this sink instance writes."""
        return self.partition_id


class SourceBuffer:
    """Where ``fill_buffer_fn`` puts items: ``add(item)``, ``add(item, timestamp)``, ``close()``."""

    __slots__ = ("_source", "_kind", "items", "timestamps", "closed")

    def __init__(self, source: str, kind: Kind) -> None:
        self._source = source
        self._kind = kind
        self.items: list[Any] = []
        self.timestamps: list[Any] | None = [] if kind == "timestamped_stream" else None
        self.closed = False

    def add(self, item: Any, timestamp: int | datetime | None = None) -> None:
        """Emit ``item``; a timestamped stream also takes its event time (epoch ms or datetime)."""
        if self.timestamps is not None:
            if timestamp is None:
                raise SourceError(f"source '{self._source}' is a timestamped stream: call buf.add(item, timestamp)")
            self.timestamps.append(timestamp)
        elif timestamp is not None:
            raise SourceError(
                f"source '{self._source}' is not timestamped: buf.add(item, timestamp) needs "
                f"SourceBuilder.timestamped_stream"
            )
        self.items.append(item)

    def add_all(self, items: Sequence[Any]) -> None:
        """Emit many items at once (not for timestamped streams)."""
        if self.timestamps is not None:
            raise SourceError(f"source '{self._source}' is a timestamped stream: add items one by one with timestamps")
        self.items.extend(items)

    def close(self) -> None:
        """End a batch source: no more items will come."""
        if self._kind != "batch":
            raise SourceError(f"source '{self._source}' is a stream: buf.close() ends only batch sources")
        self.closed = True

    def __len__(self) -> int:
        return len(self.items)


def fill_from_iterator(state: Iterator[Any], buf: SourceBuffer, max_items: int = 1024) -> None:
    """A ready ``fill_buffer_fn`` for a batch source whose state is an iterator."""
    for _ in range(max_items):
        try:
            buf.add(next(state))
        except StopIteration:
            buf.close()
            return


# --- source builder ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _SourceSpec:
    kind: Kind
    name: str
    create_fn: Callable[[ProcessorContext], Any]
    fill_buffer_fn: Callable[[Any, SourceBuffer], None] | None = None
    destroy_fn: Callable[[Any], None] | None = None
    create_snapshot_fn: Callable[[Any], Any] | None = None
    restore_snapshot_fn: Callable[[Any, Any], None] | None = None
    local_parallelism: int | None = None  # None: not distributed, one processor in the whole job
    schema: StructType = field(default_factory=lambda: parse_schema("value string"))
    timestamp_column: str = "event_time"
    allowed_lateness_ms: int = 0

    def total_parallelism(self, options: Options) -> int:
        """Processors in the job: ``local_parallelism`` on each member once distributed, else one."""
        if self.local_parallelism is None:
            return 1
        return self.local_parallelism * options.get_int(MEMBERS, 1, minimum=1)

    @cached_property
    def output_schema(self) -> StructType:
        """The items' schema, plus the event-time column for a timestamped stream.

        Cached: converting it to Arrow per batch is keyed by the object, so it must be one object.
        """
        if self.kind != "timestamped_stream":
            return self.schema
        return StructType([*self.schema.fields, StructField(self.timestamp_column, TimestampType(), False)])


class SourceBuilder(Generic[S]):
    """Fluent builder of a source; every method returns a new builder (builders can be shared)."""

    def __init__(self, spec: _SourceSpec) -> None:
        self._spec = spec

    @staticmethod
    def batch(name: str, create_fn: Callable[[ProcessorContext], S]) -> "SourceBuilder[S]":
        """A finite source: ``fill_buffer_fn`` calls ``buf.close()`` when it is done."""
        return SourceBuilder(_SourceSpec("batch", _check_name(name), create_fn))

    @staticmethod
    def stream(name: str, create_fn: Callable[[ProcessorContext], S]) -> "SourceBuilder[S]":
        """An infinite source: ``fill_buffer_fn`` adds what is available now and returns."""
        return SourceBuilder(_SourceSpec("stream", _check_name(name), create_fn))

    @staticmethod
    def timestamped_stream(name: str, create_fn: Callable[[ProcessorContext], S]) -> "SourceBuilder[S]":
        """A stream whose items carry event times: an event-time column and a watermark on it."""
        return SourceBuilder(_SourceSpec("timestamped_stream", _check_name(name), create_fn))

    def _with(self, **changes: Any) -> "SourceBuilder[S]":
        return SourceBuilder(replace(self._spec, **changes))

    def fill_buffer_fn(self, fn: Callable[[S, SourceBuffer], None]) -> "SourceBuilder[S]":
        """Add the items available now to the buffer; called again and again."""
        return self._with(fill_buffer_fn=fn)

    def destroy_fn(self, fn: Callable[[S], None]) -> "SourceBuilder[S]":
        """Release the state (close connections); called once per processor, also after errors."""
        return self._with(destroy_fn=fn)

    def distributed(self, local_parallelism: int) -> "SourceBuilder[S]":
        """Run ``local_parallelism`` processors per executor instead of one in the whole job."""
        if not isinstance(local_parallelism, int) or local_parallelism < 1:
            raise SourceError(f"source '{self._spec.name}': distributed() needs a positive int, got {local_parallelism!r}")
        return self._with(local_parallelism=local_parallelism)

    def schema(self, schema: str | StructType) -> "SourceBuilder[S]":
        """The items' schema as DDL (``"id bigint, name string"``) or a StructType."""
        return self._with(schema=parse_schema(schema))

    def create_snapshot_fn(self, fn: Callable[[S], Any]) -> "SourceBuilder[S]":
        """Return the processor's position as a JSON value (stored in Spark's offset log)."""
        return self._with(create_snapshot_fn=fn)

    def restore_snapshot_fn(self, fn: Callable[[S, Any], None]) -> "SourceBuilder[S]":
        """Move a fresh state to a position taken by ``create_snapshot_fn``, deterministically."""
        return self._with(restore_snapshot_fn=fn)

    def allowed_lateness(self, millis: int) -> "SourceBuilder[S]":
        """How late an event may be, in ms: the watermark delay of the event-time column."""
        if self._spec.kind != "timestamped_stream":
            raise SourceError(f"source '{self._spec.name}': allowed_lateness() is for timestamped streams")
        if millis < 0:
            raise SourceError(f"source '{self._spec.name}': allowed_lateness must be >= 0 ms, got {millis}")
        return self._with(allowed_lateness_ms=int(millis))

    def timestamp_column(self, name: str) -> "SourceBuilder[S]":
        """Name of the event-time column a timestamped stream adds (default ``event_time``)."""
        if self._spec.kind != "timestamped_stream":
            raise SourceError(f"source '{self._spec.name}': timestamp_column() is for timestamped streams")
        return self._with(timestamp_column=name)

    def build(self) -> "BuilderBatchSource | BuilderStreamSource":
        """The source, ready for ``.read(spark)`` (batch) or ``.read_stream(spark)`` (streams)."""
        spec = self._spec
        if spec.fill_buffer_fn is None:
            raise SourceError(f"source '{spec.name}': fill_buffer_fn is required")
        if (spec.create_snapshot_fn is None) != (spec.restore_snapshot_fn is None):
            raise SourceError(f"source '{spec.name}': create_snapshot_fn and restore_snapshot_fn go together")
        if spec.kind == "batch":
            if spec.create_snapshot_fn is not None:
                raise SourceError(f"source '{spec.name}': a batch source is re-read whole; snapshots are for streams")
            return BuilderBatchSource(spec)
        if spec.kind == "timestamped_stream" and spec.timestamp_column in spec.schema.fieldNames():
            raise SourceError(
                f"source '{spec.name}': the schema already has a column '{spec.timestamp_column}'; "
                f"choose another with timestamp_column()"
            )
        return BuilderStreamSource(spec)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise SourceError(f"a source needs a non-empty name, got {name!r}")
    return name


class _Processor:
    """One processor's state, with every call into user code turned into a SourceError."""

    def __init__(self, spec: _SourceSpec, index: int, total: int, options: Options) -> None:
        self.spec = spec
        self.where = f"source '{spec.name}' processor {index}/{total}"
        local = spec.local_parallelism or 1
        self.ctx = ProcessorContext(
            source_name=spec.name,
            global_processor_index=index,
            total_parallelism=total,
            local_processor_index=index % local,
            local_parallelism=local,
            options=options,
            logger=logging.getLogger(f"jetconnect.source.{spec.name}"),
        )
        self.seq = 0
        self.state = self._call("create_fn", spec.create_fn, self.ctx)

    def _call(self, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except SourceError:
            raise
        except Exception as exc:  # user code may raise anything; the error must say where it was
            raise SourceError(f"{self.where}: {what} raised {type(exc).__name__}: {exc}") from exc

    def fill(self) -> SourceBuffer:
        buf = SourceBuffer(self.spec.name, self.spec.kind)
        self._call("fill_buffer_fn", self.spec.fill_buffer_fn, self.state, buf)  # type: ignore[arg-type]
        return buf

    def snapshot(self) -> Any:
        position = self._call("create_snapshot_fn", self.spec.create_snapshot_fn, self.state)  # type: ignore[arg-type]
        try:
            json.dumps(position)
        except (TypeError, ValueError) as exc:
            raise SourceError(f"{self.where}: create_snapshot_fn must return a JSON value, got {position!r}: {exc}") from exc
        return position

    def restore(self, position: Any) -> None:
        self._call("restore_snapshot_fn", self.spec.restore_snapshot_fn, self.state, position)  # type: ignore[arg-type]

    def destroy(self) -> None:
        if self.spec.destroy_fn is not None:
            self._call("destroy_fn", self.spec.destroy_fn, self.state)


class _Items:
    """Items (and event times) gathered from fills, converted to Arrow in chunks."""

    def __init__(self, spec: _SourceSpec) -> None:
        self.spec = spec
        self.items: list[Any] = []
        self.timestamps: list[Any] = []

    def extend(self, buf: SourceBuffer) -> None:
        if not self.items:  # adopt the buffer's lists: the buffer is not used after a fill
            self.items = buf.items
            self.timestamps = buf.timestamps if buf.timestamps is not None else []
            return
        self.items.extend(buf.items)
        if buf.timestamps is not None:
            self.timestamps.extend(buf.timestamps)

    def __len__(self) -> int:
        return len(self.items)

    def truncate(self, count: int) -> None:
        del self.items[count:]
        del self.timestamps[count:]

    def take_batch(self) -> pa.RecordBatch:
        items, timestamps = self.items, self.timestamps
        self.items, self.timestamps = [], []
        return _to_batch(self.spec, items, timestamps)


def _to_batch(spec: _SourceSpec, items: list[Any], timestamps: list[Any]) -> pa.RecordBatch:
    owner = f"source '{spec.name}'"
    batch = rows_to_batch(items, spec.schema, owner)
    if spec.kind != "timestamped_stream":
        return batch
    try:
        if all(type(t) is int for t in timestamps):
            micros = pc.multiply(pa.array(timestamps, pa.int64()), 1000)
            times = micros.cast(pa.timestamp("us", tz="UTC"))
        else:
            times = pa.array(
                [datetime.fromtimestamp(t / 1000, tz=timezone.utc) if isinstance(t, (int, float)) else t for t in timestamps],
                pa.timestamp("us", tz="UTC"),
            )
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise SourceError(f"{owner}: event times must be epoch milliseconds or datetimes: {exc}") from exc
    schema = to_arrow_schema(spec.output_schema)
    return pa.RecordBatch.from_arrays([*batch.columns, times], schema=schema)


class BuilderBatchSource(BatchSource):
    """A batch source made by :class:`SourceBuilder`: one split per processor."""

    guarantee = Guarantee.EXACTLY_ONCE

    def __init__(self, spec: _SourceSpec, options: Options | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.options = options or Options(owner=f"source '{spec.name}'")

    def with_options(self, options: Any) -> "BuilderBatchSource":
        return BuilderBatchSource(self.spec, self.options.merged(options))

    def schema(self) -> StructType:
        return self.spec.schema

    @property
    def total_parallelism(self) -> int:
        return self.spec.total_parallelism(self.options)

    def splits(self) -> list[int]:
        return list(range(self.total_parallelism))

    def read_split(self, split: int) -> ReadOutput:
        processor = _Processor(self.spec, split, self.total_parallelism, self.options)
        items = _Items(self.spec)
        idle = _Idle()
        try:
            while True:
                buf = processor.fill()
                items.extend(buf)
                if len(items) >= DEFAULT_BATCH_ROWS:
                    yield items.take_batch()
                if buf.closed:
                    break
                idle.after(len(buf))
            if len(items):
                yield items.take_batch()
        finally:
            processor.destroy()


class _Idle:
    """Sleeps a little longer after each empty fill so a quiet source does not spin a core."""

    def __init__(self) -> None:
        self.delay = 0.0

    def after(self, added: int) -> None:
        if added:
            self.delay = 0.0
            return
        self.delay = min(0.05, self.delay * 2 or 0.0005)
        time.sleep(self.delay)


class BuilderStreamSource(StreamSource):
    """A stream made by :class:`SourceBuilder`, replayable by snapshots or by a write-ahead log.

    Offsets are ``{processor: position}``; a position is ``{"seq": n, "snapshot": s}`` when the
    builder has snapshot functions and the WAL sequence ``n`` otherwise.
    """

    def __init__(self, spec: _SourceSpec, options: Options | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.options = options or Options(owner=f"source '{spec.name}'")
        self.guarantee = Guarantee.EXACTLY_ONCE
        self._live: dict[int, _Processor] = {}
        self._initial: Offset | None = None
        self._available_now = False
        self._available_now_end: Offset | None = None
        if spec.kind == "timestamped_stream":
            self.watermark = (spec.timestamp_column, f"{spec.allowed_lateness_ms} milliseconds")

    def __getstate__(self) -> dict[str, Any]:
        # live processors hold connections: they stay in the driver-side reader process
        state = self.__dict__.copy()
        state["_live"] = {}
        state["_initial"] = None
        return state

    def with_options(self, options: Any) -> "BuilderStreamSource":
        return BuilderStreamSource(self.spec, self.options.merged(options))

    def schema(self) -> StructType:
        return self.spec.output_schema

    @property
    def replays_by_snapshot(self) -> bool:
        return self.spec.create_snapshot_fn is not None

    @property
    def total_parallelism(self) -> int:
        return self.spec.total_parallelism(self.options)

    def _wal(self) -> WriteAheadLog:
        if WAL_LOCATION not in self.options:
            raise OptionError(
                f"source '{self.name}': option '{WAL_LOCATION}' is required: the source has no snapshot "
                f"functions, so what it receives is kept in a write-ahead log there before it counts as "
                f"read (a durable directory shared by driver and executors, e.g. beside the checkpoint)"
            )
        return WriteAheadLog(self.options[WAL_LOCATION])

    # -- driver side --

    def initial_offset(self) -> Offset:
        # Spark asks more than once (at start and again when it plans batch 0): answer the same
        if self._initial is None:
            if not self.replays_by_snapshot:
                wal = self._wal()
                self._initial = {str(i): wal.start(str(i)) for i in range(self.total_parallelism)}
            else:
                total = self.total_parallelism
                self._initial = {
                    str(i): {"seq": 0, "snapshot": self._processor(i, None, total).snapshot(), "of": total}
                    for i in range(total)
                }
        return copy.deepcopy(self._initial)

    def prepare_available_now(self) -> None:
        # A pull source cannot tell how much is "available": one round of pulls is.
        self._available_now = True

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        if self._available_now:
            if self._available_now_end is None:
                self._available_now_end = self._pull_round(start, max_records)
            return copy.deepcopy(self._available_now_end)
        return self._pull_round(start, max_records)

    def _pull_round(self, start: Offset, max_records: int | None) -> Offset:
        # A restarted stream keeps the processors its checkpoint has, even if the number of members
        # changed: a snapshot or a log position belongs to processor i of n, not of some other n.
        total = len(start) or self.total_parallelism
        default_budget = self.options.get_int(MAX_PULL_RECORDS, 100_000, minimum=1)
        budget = max(1, math.ceil(max_records / total)) if max_records else default_budget
        deadline = self.options.get_int(MAX_PULL_MS, 200, minimum=1) / 1000
        end: Offset = {}
        wal = None if self.replays_by_snapshot else self._wal()
        for i in range(total):
            key = str(i)
            if wal is not None:
                position = int(start[key]) if key in start else wal.start(key)
                end[key] = self._pull_to_wal(wal, i, total, position, budget, deadline)
            else:
                end[key] = self._pull_counting(i, total, start.get(key), budget, deadline)
        return end

    def _processor(self, index: int, position: Any, total: int) -> _Processor:
        """The live processor ``index`` of ``total``, restored to ``position`` unless it is already there."""
        live = self._live.get(index)
        seq = position["seq"] if isinstance(position, dict) else position
        if live is not None and live.ctx.total_parallelism == total and (position is None or live.seq == seq):
            return live
        if live is not None:
            live.destroy()
        live = _Processor(self.spec, index, total, self.options)
        if isinstance(position, dict):
            live.restore(position["snapshot"])
            live.seq = position["seq"]
        elif isinstance(position, int):
            live.seq = position
        self._live[index] = live
        return live

    def _pull(self, processor: _Processor, budget: int, deadline: float, items: _Items | None) -> int:
        """Fill until ``budget`` items, an empty fill or ``deadline`` seconds; return the count."""
        started = time.monotonic()
        count = 0
        while count < budget and time.monotonic() - started < deadline:
            buf = processor.fill()
            if not buf.items:
                break
            count += len(buf.items)
            if items is not None:
                items.extend(buf)
        processor.seq += count
        return count

    def _pull_counting(self, index: int, total: int, position: Any, budget: int, deadline: float) -> Any:
        processor = self._processor(index, position, total)
        if self._pull(processor, budget, deadline, None) == 0:
            return position
        return {"seq": processor.seq, "snapshot": processor.snapshot(), "of": total}

    def _pull_to_wal(self, wal: WriteAheadLog, index: int, total: int, position: int, budget: int, deadline: float) -> int:
        key = str(index)
        durable = wal.end(key)
        if durable > position:
            # received and logged before a crash, but never planned by Spark: plan it now,
            # within the batch's budget like any other data
            return min(durable, position + budget)
        if durable < position:
            raise OffsetError(
                f"source '{self.name}': the checkpoint says processor {index} read up to {position} but the "
                f"write-ahead log at {wal.directory} ends at {durable}: was '{WAL_LOCATION}' changed or deleted?"
            )
        processor = self._processor(index, position, total)
        items = _Items(self.spec)
        try:
            self._pull(processor, budget, deadline, items)
        except BaseException:
            # what earlier fills of this pull received is logged before the error surfaces
            if len(items):
                wal.append(key, position, items.take_batch())
            raise
        if not len(items):
            return position
        # a fill may overshoot the budget: all of it is logged, the rest is planned next batch
        return min(wal.append(key, position, items.take_batch()), position + budget)

    def commit(self, end: Offset) -> None:
        if not self.replays_by_snapshot:
            wal = self._wal()
            for key, position in end.items():
                wal.trim(key, int(position))

    def stop(self) -> None:
        live, self._live = self._live, {}
        for processor in live.values():
            processor.destroy()

    # -- executor side --

    def read_range(self, range_: Range) -> ReadOutput:
        index = int(range_.partition)
        if not self.replays_by_snapshot:
            yield from self._wal().read(range_.partition, int(range_.start or 0), int(range_.end))
            return
        yield from self._replay(index, range_.start, range_.end)

    def _replay(self, index: int, start: Any, end: Any) -> Iterator[pa.RecordBatch]:
        need = end["seq"] - start["seq"]
        # the processor count the stream started with (checkpoints before "of" existed: the options')
        processor = _Processor(self.spec, index, start.get("of", self.total_parallelism), self.options)
        try:
            processor.restore(start["snapshot"])
            items = _Items(self.spec)
            got = 0
            idle = _Idle()
            quiet_since = time.monotonic()
            while got < need:
                buf = processor.fill()
                if buf.items:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since > REPLAY_PATIENCE_S:
                    raise SourceError(
                        f"source '{self.name}' processor {index}: replaying from {start['snapshot']!r} gave "
                        f"{got} of the {need} items it gave before: restore_snapshot_fn must make the "
                        f"source deterministic"
                    )
                items.extend(buf)
                got += len(buf.items)
                if len(items) >= DEFAULT_BATCH_ROWS and got < need:
                    yield items.take_batch()
                idle.after(len(buf.items))
            items.truncate(len(items) - (got - need))
            if len(items):
                yield items.take_batch()
        finally:
            processor.destroy()


# --- sink builder --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _SinkSpec:
    name: str
    create_fn: Callable[[SinkContext], Any]
    receive_fn: Callable[[Any, Any], None] | None = None
    receive_batch_fn: Callable[[Any, Any], None] | None = None
    batch_format: Literal["rows", "arrow"] = "rows"
    batch_size: int = 1024
    flush_fn: Callable[[Any], None] | None = None
    destroy_fn: Callable[[Any], None] | None = None
    preferred_local_parallelism: int | None = None


class SinkBuilder(Generic[S]):
    """Fluent builder of a sink (Jet's ``SinkBuilder``); every method returns a new builder."""

    def __init__(self, spec: _SinkSpec) -> None:
        self._spec = spec

    @staticmethod
    def sink(name: str, create_fn: Callable[[SinkContext], S]) -> "SinkBuilder[S]":
        """A sink whose ``create_fn(ctx)`` makes the state of one writing task."""
        if not isinstance(name, str) or not name:
            raise SinkError(f"a sink needs a non-empty name, got {name!r}")
        return SinkBuilder(_SinkSpec(name, create_fn))

    def _with(self, **changes: Any) -> "SinkBuilder[S]":
        return SinkBuilder(replace(self._spec, **changes))

    def receive_fn(self, fn: Callable[[S, Any], None]) -> "SinkBuilder[S]":
        """Called with the state and each pyspark ``Row``."""
        return self._with(receive_fn=fn, receive_batch_fn=None)

    def receive_batch_fn(self, fn: Callable[[S, Any], None], *, format: Literal["rows", "arrow"] = "rows", batch_size: int = 1024) -> "SinkBuilder[S]":
        """Called with the state and a list of up to ``batch_size`` Rows, or a ``pyarrow.RecordBatch``."""
        if format not in ("rows", "arrow"):
            raise SinkError(f"sink '{self._spec.name}': receive_batch_fn format must be 'rows' or 'arrow', got {format!r}")
        return self._with(receive_batch_fn=fn, receive_fn=None, batch_format=format, batch_size=batch_size)

    def flush_fn(self, fn: Callable[[S], None]) -> "SinkBuilder[S]":
        """Called after each batch of received items and at the end of the task."""
        return self._with(flush_fn=fn)

    def destroy_fn(self, fn: Callable[[S], None]) -> "SinkBuilder[S]":
        """Release the state; called once per task, also after errors."""
        return self._with(destroy_fn=fn)

    def preferred_local_parallelism(self, n: int) -> "SinkBuilder[S]":
        """Write with ``n`` tasks per executor: ``sink.write(df)`` repartitions ``df`` to that."""
        if not isinstance(n, int) or n < 1:
            raise SinkError(f"sink '{self._spec.name}': preferred_local_parallelism needs a positive int, got {n!r}")
        return self._with(preferred_local_parallelism=n)

    def build(self) -> "BuilderSink":
        if self._spec.receive_fn is None and self._spec.receive_batch_fn is None:
            raise SinkError(f"sink '{self._spec.name}': receive_fn or receive_batch_fn is required")
        return BuilderSink(self._spec)


class BuilderSink(Sink):
    """A sink made by :class:`SinkBuilder`: at-least-once (a re-delivered batch is received again)."""

    guarantee = Guarantee.AT_LEAST_ONCE

    def __init__(self, spec: _SinkSpec, options: Options | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        self.options = options or Options(owner=f"sink '{spec.name}'")
        self.input_format = "arrow" if spec.receive_batch_fn is not None and spec.batch_format == "arrow" else "rows"
        self.preferred_parallelism = spec.preferred_local_parallelism

    def with_options(self, options: Any) -> "BuilderSink":
        return BuilderSink(self.spec, self.options.merged(options))

    def _call(self, where: str, what: str, fn: Callable[..., Any], *args: Any) -> Any:
        try:
            return fn(*args)
        except SinkError:
            raise
        except Exception as exc:  # user code may raise anything; the error must say where it was
            raise SinkError(f"{where}: {what} raised {type(exc).__name__}: {exc}") from exc

    def write_partition(self, data: Iterator[Any], ctx: WriteContext) -> None:
        spec = self.spec
        where = f"sink '{self.name}' partition {ctx.partition_id}" + (f" batch {ctx.batch_id}" if ctx.batch_id is not None else "")
        sink_ctx = SinkContext(
            sink_name=self.name,
            partition_id=ctx.partition_id,
            attempt=ctx.attempt,
            batch_id=ctx.batch_id,
            query_id=ctx.query_id,
            options=self.options,
            logger=logging.getLogger(f"jetconnect.sink.{self.name}"),
        )
        state = self._call(where, "create_fn", spec.create_fn, sink_ctx)
        try:
            if spec.receive_fn is not None:
                receive = spec.receive_fn
                for row in data:
                    self._call(where, "receive_fn", receive, state, row)
            elif self.input_format == "arrow":
                for batch in data:
                    self._call(where, "receive_batch_fn", spec.receive_batch_fn, state, batch)
                    self._flush(where, state)
            else:
                chunk: list[Any] = []
                for row in data:
                    chunk.append(row)
                    if len(chunk) >= spec.batch_size:
                        self._call(where, "receive_batch_fn", spec.receive_batch_fn, state, chunk)
                        self._flush(where, state)
                        chunk = []
                if chunk:
                    self._call(where, "receive_batch_fn", spec.receive_batch_fn, state, chunk)
            self._flush(where, state)
        finally:
            if spec.destroy_fn is not None:
                self._call(where, "destroy_fn", spec.destroy_fn, state)

    def _flush(self, where: str, state: Any) -> None:
        if self.spec.flush_fn is not None:
            self._call(where, "flush_fn", self.spec.flush_fn, state)


__all__ = [
    "BuilderBatchSource",
    "BuilderSink",
    "BuilderStreamSource",
    "ProcessorContext",
    "SinkBuilder",
    "SinkContext",
    "SourceBuffer",
    "SourceBuilder",
    "fill_from_iterator",
]
