"""Receivers: the processors of streams that cannot replay, pulling for as long as the query runs.

A socket or a broker consumer must not be reopened per micro-batch (what the server sends in
between would be lost, and two open connections would both be sent the same lines), yet Spark
gives no task a fixed worker. So the read task of processor i starts a *receiver*, a daemon
thread in that Python worker that owns the processor and goes on pulling between micro-batches,
as Jet's processor does: it appends what it receives to the processor's durable
:class:`~jetconnect._spool.Spool` and only then calls ``acknowledge_fn``. A round, in whatever
worker Spark runs it, takes a range of the spool.

A :class:`~jetconnect._builders._lease.Lease` (files beside the spool, renewed every :data:`HEARTBEAT_S`) makes sure one
receiver per processor runs in the whole cluster: a round that finds a fresh lease held by
another worker reads the spool that worker fills; one that finds it stale (the worker died, the
query was restarted) takes the next generation of the lease, exclusively, and starts a receiver.
A receiver stops when the query stops (a marker the driver writes), when its query's
:class:`~jetconnect._builders._query_beacon.QueryBeacon` stops beating for :data:`QUERY_GONE_S`
(the driver's reader process ended without calling ``stop()``, which Spark does now and then, or
was killed with its driver), when a newer lease exists, when no round of its processor was
recorded, in any worker, for ``keep_alive_s`` (the only sign left when no beacon exists), or on
an error, which it leaves for the next round to raise. What it gathered before it stopped is
spooled (and acknowledged); what its source holds unacknowledged, ``destroy_fn`` hands back (JMS
closes its connection, and the broker redelivers its prefetched messages).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from jetconnect._builders._lease import Lease
from jetconnect._builders._processor import Items, Processor, destroy_quietly
from jetconnect._spool import Spool
from jetconnect.errors import SourceError

log = logging.getLogger("jetconnect.source")

#: How often a receiver renews its lease and looks whether it should stop.
HEARTBEAT_S = 0.5
#: How long a receiver lingers, from the fill that brought a segment's first row, before it seals
#: the segment (one file, one fsync; on HDFS a create, a rename and later a delete): a stream of
#: any rate writes at most 1 / linger segments a second (see :class:`Sealing`).
DEFAULT_LINGER_MS = 200
#: Rows that seal a segment before its linger is up: a fast stream's segments stay this small.
DEFAULT_SEGMENT_ROWS = 100_000
#: How long a receiver's first segment may linger at most (its rows' size is not known before).
FIRST_SEGMENT_S = 0.05
#: How long a lingering receiver waits after a fill that found nothing before it fills again.
_DRY_PAUSE_S = 0.005
#: Rows, and bytes (Arrow's in-memory size), a receiver may keep spooled past the rows a round has
#: taken before it pauses (the source holds the rest); whichever is reached first. Paused, it looks
#: for a round's claim or a commit's trim every :data:`BACKLOG_LOOK_S`.
DEFAULT_MAX_BACKLOG = 10_000_000
DEFAULT_MAX_BACKLOG_BYTES = 256 * 1024 * 1024
BACKLOG_LOOK_S = 0.02
#: How often a receiver looks at its query's beacon (:mod:`~jetconnect._builders._query_beacon`,
#: beating every second), and how long it may stay unchanged before the receiver takes its query
#: for gone: a receiver stops within about ``QUERY_GONE_S + BEACON_LOOK_S + HEARTBEAT_S`` (6.5 s)
#: of its query's reader process ending.
BEACON_LOOK_S = 1.0
QUERY_GONE_S = 5.0


@dataclass(frozen=True)
class Backlog:
    """How far a receiver may spool: ``rows`` and ``bytes`` past what rounds have taken, or,
    with ``past_commits``, past what Spark committed (a source that must bound the whole spool,
    as JMS does for its window of redelivered ids)."""

    rows: int = DEFAULT_MAX_BACKLOG
    bytes: int = DEFAULT_MAX_BACKLOG_BYTES
    past_commits: bool = False


#: The default bounds (frozen, so one shared default is safe).
DEFAULT_BACKLOG = Backlog()


@dataclass(frozen=True)
class Sealing:
    """When a receiver seals what it gathered into a spool segment, like a producer's ``linger.ms`` /
    ``batch.size``: ``linger_s`` after the fill that brought the segment's first row, or once it
    holds ``segment_rows``, whichever comes first. A gather also ends at once when the receiver
    stops, when the backlog is full, and, in a round of ``Trigger.AvailableNow`` in the receiver's
    worker, on a fill that finds nothing (the round needs the rows now, not after the linger).

    So a processor writes at most ``1 / linger_s + rate / segment_rows`` segments a second
    (5 + rate / 100,000 with the defaults), whatever its rate, instead of one per fill that
    happens to find nothing (~500 a second at 1,000 items a second before lingering).
    """

    linger_s: float = DEFAULT_LINGER_MS / 1000
    segment_rows: int = DEFAULT_SEGMENT_ROWS


DEFAULT_SEALING = Sealing()


class _SpooledBytes:
    """The bytes spooled per range of positions, to measure the backlog past any position."""

    def __init__(self) -> None:
        self._ends: deque[tuple[int, int]] = deque()  # (end position, bytes spooled up to it)
        self._total = 0
        self._before = 0  # bytes up to the first kept end
        self._row_size: int | None = None

    def add(self, end: int, rows: int, nbytes: int) -> None:
        self._total += nbytes
        self._ends.append((end, self._total))
        self._row_size = max(1, nbytes // max(1, rows))

    def row_size(self) -> int | None:
        """Bytes per row of the last append (None before the first)."""
        return self._row_size

    def since(self, position: int) -> int:
        """Bytes spooled past ``position`` (counted by whole appends; earlier appends are forgotten)."""
        while self._ends and self._ends[0][0] <= position:
            self._before = self._ends.popleft()[1]
        return self._total - self._before


class Receiver(threading.Thread):
    """Pulls one processor for as long as the query runs, into its spool, acknowledging after."""

    def __init__(
        self,
        processor: Processor,
        spool: Spool,
        lease: Lease,
        stop_marker: str,
        keep_alive_s: float,
        backlog: Backlog,
        last_round_at: Callable[[], float | None],
        sealing: Sealing = DEFAULT_SEALING,
        beacon: str | None = None,
    ) -> None:
        super().__init__(name=f"jetconnect receiver {processor.where}", daemon=True)
        self.processor = processor
        self.spool = spool
        self.lease = lease
        self.stop_marker = stop_marker
        self.keep_alive_s = keep_alive_s
        self.backlog = backlog
        self.sealing = sealing
        #: Set by a round that wants everything received now (``Trigger.AvailableNow``): a fill
        #: that finds nothing seals the segment without waiting out the linger.
        self.seal_when_dry = False
        self.error: BaseException | None = None
        self.stopped = threading.Event()
        #: Set whenever rows were appended: a waiting round wakes up.
        self.appended = threading.Condition()
        self.start_pos, self.end = spool.bounds()
        #: Where the last round recorded in this worker ended: rows before it are taken, so they
        #: no longer count against the backlog (Spark's commit trims them a moment later).
        self.claimed_to = self.start_pos
        self._bytes = _SpooledBytes()
        self.last_seen = time.monotonic()
        #: When a round of this processor was last recorded, in any worker (epoch seconds).
        self.last_round_at = last_round_at
        #: How many fills found nothing (after what came before was spooled): "nothing more now".
        self.dry_fills = 0
        self._stop_asked = False
        #: The query's beacon file (None: keep-alive alone decides), what it said last and since when.
        self.beacon = beacon
        self._beacon_seen: bytes | None = None
        self._beacon_since = time.monotonic()
        self._beacon_look = 0.0
        #: Why the receiver stopped, for a person reading the log.
        self.stop_reason = ""

    def stop(self) -> None:
        """Stop pulling and destroy the processor (the worker is going away, or a test ends)."""
        self._stop_asked = True
        self.stopped.wait(5)

    def claim(self, upto: int) -> None:
        """A round recorded that it takes the spool up to ``upto``: spool on past it meanwhile."""
        self.claimed_to = max(self.claimed_to, upto)

    def backlog_room(self) -> int:
        """How many more rows may be spooled: 0 once the rows, or the bytes, spooled past what
        rounds took (or Spark committed) reach their bound."""
        held_from = self.start_pos if self.backlog.past_commits else max(self.start_pos, self.claimed_to)
        bytes_left = self.backlog.bytes - self._bytes.since(held_from)
        rows_left = self.backlog.rows - (self.end - held_from)
        if bytes_left <= 0 or rows_left <= 0:
            return 0
        row_size = self._bytes.row_size()  # learned from what was spooled (the first gather is by rows)
        return min(rows_left, max(1, bytes_left // row_size)) if row_size else rows_left

    def touch(self) -> None:
        """A round looked at this receiver: it is still wanted."""
        self.last_seen = time.monotonic()

    def run(self) -> None:
        next_beat = 0.0
        try:
            while True:
                now = time.monotonic()
                if now >= next_beat:
                    if not self._still_wanted():
                        break
                    next_beat = now + HEARTBEAT_S
                if self._stop_asked:
                    break
                room = self.backlog_room()
                if room == 0:
                    # the rounds are behind: the source holds the rest until a round takes rows or
                    # Spark commits (the driver trims the spool), looked for far more often than the heartbeat
                    time.sleep(BACKLOG_LOOK_S)
                    self.start_pos = self.spool.bounds()[0]
                    continue
                self._gather_and_spool(room)
        except BaseException as exc:  # kept for the next round to raise: the query must hear of it
            self.error = exc
            log.warning("%s: receiver stopped: %s", self.processor.where, exc)
            try:
                self.lease.release(f"{type(exc).__name__}: {exc}")
            except OSError:
                log.warning("%s: could not release the lease", self.processor.where, exc_info=True)
        else:
            self.lease.release()
        finally:
            destroy_quietly(self.processor)
            self.stopped.set()
            with self.appended:
                self.appended.notify_all()

    def _still_wanted(self) -> bool:
        if self._stop_asked:
            self.stop_reason = "asked to stop"
            return False
        if self.spool.fs.exists(self.stop_marker):
            self.stop_reason = "the query stopped"
            log.info("%s: the query stopped; stopping", self.processor.where)
            return False
        if self._query_gone():
            self.stop_reason = "the query's beacon stopped"
            log.info("%s: the query's beacon has not beaten for %.0f s; stopping", self.processor.where, QUERY_GONE_S)
            return False
        if time.monotonic() - self.last_seen > self.keep_alive_s:
            # rounds in other workers read the spool without touching this receiver: their records count
            recorded = self.last_round_at()
            age = None if recorded is None else max(0.0, time.time() - recorded)
            if age is None or age > self.keep_alive_s:
                self.stop_reason = "no round for processor_keep_alive_ms"
                log.info("%s: no round for %.0f s, stopping", self.processor.where, self.keep_alive_s)
                return False
            self.last_seen = time.monotonic() - age
        if not self.lease.renew({"dry_fills": self.dry_fills, "end": self.end}):
            self.stop_reason = "another worker took the processor over"
            log.warning("%s: another worker took this processor over; stopping", self.processor.where)
            return False
        self.start_pos = self.spool.bounds()[0]
        return True

    def _query_gone(self) -> bool:
        """Whether the query's beacon (if it has one) stayed unchanged for :data:`QUERY_GONE_S`."""
        now = time.monotonic()
        if self.beacon is None or now < self._beacon_look:
            return False
        self._beacon_look = now + BEACON_LOOK_S
        try:
            with self.spool.fs.open(self.beacon) as handle:
                seen: bytes | None = handle.read()
        except OSError:  # gone, or being rewritten on a file system without atomic overwrites
            seen = None
        if seen != self._beacon_seen or not seen:  # beating, caught mid-write, or no beacon (an older driver)
            self._beacon_seen, self._beacon_since = seen, now
            return False
        return now - self._beacon_since > QUERY_GONE_S

    def _gather_and_spool(self, room: int) -> None:
        """Fill until the segment is due (:class:`Sealing`; ``room``, the backlog's bound, counts
        too: a fill may overshoot it by what it adds); append what came, then acknowledge.

        A gather with nothing yet ends at the first fill that finds nothing (reported as a dry
        fill: "nothing more now"); one holding rows lingers through such fills until it is due.
        """
        items = Items(self.processor.spec)
        limit = min(room, self.sealing.segment_rows)
        linger_s, seal_when_dry = self.sealing.linger_s, self.seal_when_dry
        if self._bytes.row_size() is None:
            # the first segment is sealed early (at the first dry fill, within FIRST_SEGMENT_S):
            # until its rows' size is known, the byte bound of the backlog cannot be applied
            linger_s, seal_when_dry = min(linger_s, FIRST_SEGMENT_S), True
        first_at: float | None = None  # when the fill that brought the first row began
        received = 0
        dry = False
        try:
            while len(items) < limit and not self._stop_asked:
                began = time.monotonic()
                if first_at is not None and began - first_at >= linger_s:
                    break
                buf = self.processor.fill()
                dry = not buf.items
                if dry:
                    if first_at is None or seal_when_dry:  # nothing gathered yet (first_at comes with the first row)
                        break
                    time.sleep(min(_DRY_PAUSE_S, max(0.0, first_at + linger_s - time.monotonic())))
                    continue
                if first_at is None:
                    first_at = began
                items.extend(buf)
        finally:  # what fills received before an error is spooled before the error surfaces
            received = len(items)
            if received:
                batch = items.take_batch()
                self.end = self.spool.append(self.end, pa.Table.from_batches([batch]))
                self._bytes.add(self.end, batch.num_rows, batch.nbytes)
        if received:
            self.processor.acknowledge()
        if dry:
            with self.appended:
                self.dry_fills += 1
                self.appended.notify_all()
            if not received:
                time.sleep(0.005)  # nothing now: do not spin a core
        elif received:
            with self.appended:
                self.appended.notify_all()

    def wait_beyond(self, position: int, dry_before: int | None, timeout: float) -> None:
        """Wait until the spool goes past ``position``, a fill finds nothing more (``dry_fills`` passes
        ``dry_before``; None: not looked at), the receiver stops, or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        with self.appended:
            while (
                self.end <= position
                and (dry_before is None or self.dry_fills == dry_before)
                and not self.stopped.is_set()
            ):
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self.appended.wait(left)


#: A receiver's key: (source token, run, processor index), as for the live processors.
ReceiverKey = tuple[str, str, int]


class Receivers:
    """The receivers this Python worker runs, by (source, run, processor).

    Rounds of several tasks may look at the same worker's receivers at once (task threads, a
    test's rounds): every look and change holds the lock. A receiver that stopped stays until a
    round takes it out, to raise its error once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[ReceiverKey, Receiver] = {}

    def get(self, key: ReceiverKey) -> Receiver | None:
        """The receiver kept under ``key`` (stopped or not), if any."""
        with self._lock:
            return self._running.get(key)

    def add(self, key: ReceiverKey, receiver: Receiver) -> None:
        """Keep a receiver that was just started (it replaces any under ``key``, which a round took out)."""
        with self._lock:
            self._running[key] = receiver

    def discard(self, key: ReceiverKey, receiver: Receiver) -> None:
        """Forget ``receiver`` (it stopped); a newer one under the same key stays."""
        with self._lock:
            if self._running.get(key) is receiver:
                del self._running[key]

    def all(self) -> list[Receiver]:
        """Every receiver kept now."""
        with self._lock:
            return list(self._running.values())

    def clear(self) -> None:
        """Forget every receiver, leaving them running (a test acting as another worker)."""
        with self._lock:
            self._running.clear()

    def stop_all(self) -> None:
        """Stop and forget every receiver (the worker is going away, or a test ends)."""
        with self._lock:
            doomed, self._running = list(self._running.values()), {}
        for receiver in doomed:
            receiver.stop()


#: This worker's receivers.
RECEIVERS = Receivers()


def raise_receiver_error(where: str, error: BaseException | str) -> None:
    """Fail the round with the receiver's error, naming the processor."""
    if isinstance(error, BaseException):
        if isinstance(error, SourceError):
            raise error
        raise SourceError(f"{where}: the receiver failed: {type(error).__name__}: {error}") from error
    raise SourceError(f"{where}: the receiver failed: {error}")


__all__ = [
    "DEFAULT_MAX_BACKLOG",
    "DEFAULT_MAX_BACKLOG_BYTES",
    "DEFAULT_LINGER_MS",
    "DEFAULT_SEGMENT_ROWS",
    "Backlog",
    "RECEIVERS",
    "Receiver",
    "ReceiverKey",
    "Receivers",
    "Sealing",
    "raise_receiver_error",
]
