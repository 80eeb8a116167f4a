"""A processor (one ``create_fn`` state), the items its fills gather, and the live ones a worker keeps.

Jet runs a processor for as long as the job runs; Spark runs a task per micro-batch. A processor
therefore lives in the Python worker that ran its last round (:class:`LiveProcessors`), so the
next round that lands in the same worker goes on with the same state, connection and all,
instead of restoring a snapshot or reconnecting.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from jetconnect._arrow_rows import rows_to_batch
from jetconnect._arrow_schema import to_arrow_schema
from jetconnect._builders._contexts import ProcessorContext, SourceBuffer
from jetconnect._builders._spec import SourceSpec
from jetconnect._options import Options
from jetconnect.errors import SourceError

log = logging.getLogger("jetconnect.source")


class Processor:
    """One processor's state, with every call into user code turned into a SourceError."""

    def __init__(self, spec: SourceSpec, index: int, total: int, options: Options) -> None:
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
        self.state = self._call("create_fn", spec.create_fn, self.ctx)

    def _call(self, what: str, fn: Callable[..., Any] | None, *args: Any) -> Any:
        if fn is None:  # build() requires fill_buffer_fn, and only sources with snapshots snapshot
            raise SourceError(f"{self.where}: {what} is not set, yet it was to be called")
        try:
            return fn(*args)
        except SourceError:
            raise
        except Exception as exc:  # user code may raise anything; the error must say where it was
            raise SourceError(f"{self.where}: {what} raised {type(exc).__name__}: {exc}") from exc

    def fill(self) -> SourceBuffer:
        buf = SourceBuffer(self.spec.name, self.spec.kind)
        self._call("fill_buffer_fn", self.spec.fill_buffer_fn, self.state, buf)
        return buf

    def snapshot(self) -> Any:
        position = self._call("create_snapshot_fn", self.spec.create_snapshot_fn, self.state)
        try:
            json.dumps(position)
        except (TypeError, ValueError) as exc:
            raise SourceError(
                f"{self.where}: create_snapshot_fn must return a JSON value, got {position!r}: {exc}"
            ) from exc
        return position

    def restore(self, position: Any) -> None:
        self._call("restore_snapshot_fn", self.spec.restore_snapshot_fn, self.state, position)

    def acknowledge(self) -> None:
        if self.spec.acknowledge_fn is not None:
            self._call("acknowledge_fn", self.spec.acknowledge_fn, self.state)

    def destroy(self) -> None:
        if self.spec.destroy_fn is not None:
            self._call("destroy_fn", self.spec.destroy_fn, self.state)


class Items:
    """Items (and event times) gathered from fills, converted to Arrow in chunks."""

    def __init__(self, spec: SourceSpec) -> None:
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
        return to_batch(self.spec, items, timestamps)


def to_batch(spec: SourceSpec, items: list[Any], timestamps: list[Any]) -> pa.RecordBatch:
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
                [datetime.fromtimestamp(t / 1000, tz=UTC) if isinstance(t, (int, float)) else t for t in timestamps],
                pa.timestamp("us", tz="UTC"),
            )
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise SourceError(f"{owner}: event times must be epoch milliseconds or datetimes: {exc}") from exc
    schema = to_arrow_schema(spec.output_schema)
    return pa.RecordBatch.from_arrays([*batch.columns, times], schema=schema)


class Idle:
    """Sleeps a little longer after each empty fill so a quiet source does not spin a core."""

    def __init__(self) -> None:
        self.delay = 0.0

    def after(self, added: int) -> None:
        if added:
            self.delay = 0.0
            return
        self.delay = min(0.05, self.delay * 2 or 0.0005)
        time.sleep(self.delay)


@dataclass
class LiveProcessor:
    """A processor kept between rounds, with where its last round left it."""

    processor: Processor
    #: The round it completed last, and the attempt that recorded that round.
    round: int
    attempt: str
    #: Rows pulled past the last round's limit, delivered first by the next round.
    carry: pa.Table | None
    last_used: float = 0.0


class LiveProcessors:
    """The processors this Python worker keeps between rounds, destroyed after ``keep_alive_s`` idle.

    Keyed by (source, run, processor index): a round that lands in this worker takes its
    processor out (no other task can use it meanwhile) and puts it back when it is done.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[tuple[str, str, int], tuple[LiveProcessor, float]] = {}
        self._reaper: threading.Thread | None = None

    def take(self, key: tuple[str, str, int]) -> LiveProcessor | None:
        with self._lock:
            entry = self._live.pop(key, None)
        return entry[0] if entry is not None else None

    def put(self, key: tuple[str, str, int], live: LiveProcessor, keep_alive_s: float) -> None:
        if keep_alive_s <= 0:
            destroy_quietly(live.processor)
            return
        live.last_used = time.monotonic()
        with self._lock:
            old = self._live.pop(key, None)
            self._live[key] = (live, keep_alive_s)
            if self._reaper is None or not self._reaper.is_alive():
                self._reaper = threading.Thread(target=self._reap, name="jetconnect processor reaper", daemon=True)
                self._reaper.start()
        if old is not None:
            destroy_quietly(old[0].processor)

    def _reap(self) -> None:
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            with self._lock:
                idle = [k for k, (live, keep) in self._live.items() if now - live.last_used > keep]
                doomed = [self._live.pop(k)[0] for k in idle]
                finished = not self._live
                if finished:
                    self._reaper = None
            for live in doomed:
                destroy_quietly(live.processor)
            if finished:
                return


def destroy_quietly(processor: Processor) -> None:
    """Destroy a processor no task uses any more; its error is logged, as no query is there to fail."""
    try:
        processor.destroy()
    except Exception:  # nothing can be failed at this point: say it and go on
        log.warning("%s: destroy_fn failed", processor.where, exc_info=True)


#: This worker's live processors.
LIVE = LiveProcessors()
