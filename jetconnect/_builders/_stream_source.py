"""The stream a :class:`SourceBuilder` builds: processors pull in executor tasks, round by round.

Spark's driver fixes each micro-batch's ``[start, end)`` before any executor reads, while a Jet
processor pulls for as long as the job runs. The offset therefore names a *round* per processor
(:class:`~jetconnect._builders._position.RoundPosition`): the driver only opens rounds; processor
i pulls its round in the read task of partition i, records what the round held under
``wal_location`` (:mod:`jetconnect._round_log`, laid out by :mod:`jetconnect._run_directory`),
and a re-read of the round replays the record (:mod:`jetconnect._builders._round_reader`). Each
item is pulled once; the driver never calls ``create_fn`` or ``fill_buffer_fn``.

The driver decides from the last round's record whether to open the next one: at once if it
brought items, after a growing pause (up to ``idle_poll_ms``) if it brought none, so an idle
stream costs one small Spark job per pause, not one per trigger. Under ``Trigger.AvailableNow``
rounds go on until a round of every processor ends on a fill that adds nothing.
"""

from __future__ import annotations

import copy
import os
import signal
import sys
import threading
import time
import uuid
import weakref
from collections.abc import Sequence
from typing import Any

from pyspark.sql.types import StructType

from jetconnect._builders._log_rounds import LogRounds
from jetconnect._builders._position import RoundPosition, parse_offset, parse_position
from jetconnect._builders._query_beacon import QueryBeacon
from jetconnect._builders._receiver import (
    DEFAULT_LINGER_MS,
    DEFAULT_MAX_BACKLOG,
    DEFAULT_MAX_BACKLOG_BYTES,
    DEFAULT_SEGMENT_ROWS,
    Backlog,
    Sealing,
)
from jetconnect._builders._round_reader import ProcessorRun, RoundPlan, RoundReader
from jetconnect._builders._snapshot_rounds import SnapshotRounds
from jetconnect._builders._spec import SourceSpec
from jetconnect._connector import Guarantee, Offset, Range, ReadOutput, StreamSource
from jetconnect._locations import CHECKPOINT_CONF, WAL_FOLDER, WAL_LOCATION, default_wal_location, resolve_location
from jetconnect._options import Options
from jetconnect._round_log import RoundFacts, RoundLog
from jetconnect._run_directory import RunDirectory
from jetconnect.errors import OffsetError, OptionError


class StreamOptions:
    """The names of the options a builder stream reads: a plugin that builds on it sets them.

    Names, not values: the defaults are the ``DEFAULT_*`` constants beside this class.
    """

    #: Rows a receiver (streams that cannot replay) may spool ahead of the rounds before it pauses.
    MAX_BACKLOG = "max_backlog"
    MAX_BACKLOG_BYTES = "max_backlog_bytes"
    BACKLOG_PAST_COMMITS = "backlog_past_commits"
    #: How long a receiver lingers before it seals a spool segment, in ms (at most
    #: :data:`SPOOL_LINGER_MS_LIMIT`), and the rows that seal one sooner (streams that cannot replay).
    SPOOL_LINGER_MS = "spool_linger_ms"
    SPOOL_SEGMENT_ROWS = "spool_segment_rows"
    #: How long one round may pull, in ms: a round also ends on a fill that adds nothing.
    MAX_PULL_MS = "max_pull_ms"
    #: How long one round planned by ``Trigger.AvailableNow`` without an item limit may pull, in ms:
    #: it wants everything available, so it pulls until dry; the cap only lets Spark commit now and then.
    AVAILABLE_NOW_MAX_PULL_MS = "available_now_max_pull_ms"
    #: Items one round of one processor may pull when the query sets no ``max_records_per_batch``.
    MAX_PULL_RECORDS = "max_pull_records"
    #: Rows of each spool a commit leaves in place behind what Spark committed (streams that cannot
    #: replay): a source that recognises a redelivered message by its id looks for it there (JMS).
    SPOOL_KEEP_COMMITTED_ROWS = "spool_keep_committed_rows"
    #: The longest pause, in ms, before a processor whose last round brought nothing gets another.
    IDLE_POLL_MS = "idle_poll_ms"
    #: How long a Python worker keeps an idle processor for its next round, in ms (0: destroy it
    #: after every round, as sources holding upstream resources between rounds must).
    KEEP_ALIVE_MS = "processor_keep_alive_ms"


#: The longest spool linger allowed, in ms: the receiver renews its lease between segments.
SPOOL_LINGER_MS_LIMIT = 1000
DEFAULT_MAX_PULL_MS = 1000
DEFAULT_AVAILABLE_NOW_MAX_PULL_MS = 60_000
DEFAULT_IDLE_POLL_MS = 1000
DEFAULT_KEEP_ALIVE_MS = 60_000
#: The first pause after an empty round; each further empty round doubles it.
_FIRST_IDLE_PAUSE_S = 0.025


class BuilderStreamSource(StreamSource):
    """A stream made by :class:`SourceBuilder`, replayable by snapshots or by a write-ahead log.

    Offsets are ``{processor: {"run", "round", "of"[, "limit"]}}``. Option ``wal_location`` (a
    durable directory every executor and the driver see, beside the checkpoint) is required.
    """

    def __init__(self, spec: SourceSpec, options: Options | None = None) -> None:
        self.spec = spec
        self.name = spec.name
        options = options or Options(owner=f"source '{spec.name}'")
        # no wal_location given: under the session's checkpoint root, when the adapter passed one
        default = None if WAL_LOCATION in options else default_wal_location(options, spec.name)
        self.options = options.merged({WAL_LOCATION: default}) if default else options
        self.guarantee = Guarantee.EXACTLY_ONCE
        if spec.kind == "timestamped_stream":
            self.watermark = (spec.timestamp_column, f"{spec.allowed_lateness_ms} milliseconds")
        self._reset_driver_state()

    def _reset_driver_state(self) -> None:
        # Driver-side memory only paces and caches; every offset comes from `start` and the records.
        self._run: str | None = None
        self._facts: dict[tuple[int, int], RoundFacts] = {}
        self._pause: dict[int, float] = {}
        self._due: dict[int, tuple[int, float]] = {}
        self._available_now_from: dict[int, int] | None = None
        #: The round log of the run this reader plans (known once Spark gave a start offset).
        self._active: RoundLog | None = None
        #: Tells the run's receivers that this query is alive (streams that cannot replay).
        self._beacon: QueryBeacon | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(_facts={}, _pause={}, _due={}, _active=None, _beacon=None)
        return state

    def with_options(self, options: Any) -> BuilderStreamSource:
        return BuilderStreamSource(self.spec, self.options.merged(options))

    def schema(self) -> StructType:
        return self.spec.output_schema

    @property
    def replays_by_snapshot(self) -> bool:
        return self.spec.create_snapshot_fn is not None

    @property
    def total_parallelism(self) -> int:
        return self.spec.total_parallelism(self.options)

    def _rounds(self, run: str) -> RoundLog:
        if WAL_LOCATION not in self.options:
            what = (
                "how many items each round pulled and where it left off"
                if self.replays_by_snapshot
                else "what each round received"
            )
            raise OptionError(
                f"source '{self.name}': option '{WAL_LOCATION}' is required: processors pull in executor tasks "
                f"and record {what} there before it counts as read (a durable directory the driver and every "
                f"executor see, e.g. beside the query's checkpoint), or set the session's {CHECKPOINT_CONF} "
                f"and read_stream(spark) keeps it under <that>/{WAL_FOLDER}/{self.name}"
            )
        fs, path = resolve_location(self.options[WAL_LOCATION], f"source '{self.name}': option '{WAL_LOCATION}'")
        return RoundLog(fs, path, run)

    # -- driver side: plans rounds, never pulls --

    def initial_offset(self) -> Offset:
        # Spark asks more than once (at start and again when it plans batch 0): answer the same.
        # A fresh run id keeps a new checkpoint from replaying rounds another query left behind.
        if self._run is None:
            self._check_wal_location(self._rounds("check"))  # the option's errors belong to the query's start
            self._check_options()  # and so do those of the others, read later in executor tasks
            self._run = uuid.uuid4().hex[:16]
        total = self.total_parallelism
        return {str(i): RoundPosition(self._run, 0, total).to_json() for i in range(total)}

    def prepare_available_now(self) -> None:
        self._available_now_from = {}

    def latest_offset(self, start: Offset, max_records: int | None) -> Offset:
        positions = parse_offset(start, self.name)
        if not positions:
            return start
        rounds = self._rounds(next(iter(positions.values())).run)
        if self._active is None:  # the query (re)starts: its receivers must not find a stop marker
            self._active = rounds
            if not self.replays_by_snapshot:
                rounds.run_dir.clear_stopped()
                # beats while this reader's process lives: receivers stop within seconds of its end,
                # even when Spark never calls stop() (or the driver was killed)
                self._beacon = QueryBeacon(rounds.fs, rounds.run_dir.beacon, self)
                self._beacon.start()
                self._stop_on_sigterm()
        ready = [i for i, position in sorted(positions.items()) if self._opens_round(rounds, i, position)]
        if max_records is not None and len(ready) > max_records:
            # fewer items allowed than processors ready: the ones that waited longest go first
            ready = sorted(ready, key=lambda i: (positions[i].round, i))[:max_records]
        if not ready:
            if self._available_now_from is not None:
                self.stop()  # every processor is done: the receivers need not wait for the query's end
            return start
        end = copy.deepcopy(start)
        for n, i in enumerate(ready):
            limit = None
            if max_records is not None:
                limit = max_records // len(ready) + (1 if n < max_records % len(ready) else 0)
            elif StreamOptions.MAX_PULL_RECORDS in self.options:
                limit = self.options.get_int(StreamOptions.MAX_PULL_RECORDS, minimum=1)
            drain = limit is None and self._available_now_from is not None
            end[str(i)] = positions[i].next(limit, drain).to_json()
        return end

    def _opens_round(self, rounds: RoundLog, index: int, position: RoundPosition) -> bool:
        """Whether processor ``index`` gets a round in the next micro-batch."""
        facts = self._last_facts(rounds, index, position.round)
        if self._available_now_from is not None:
            first = self._available_now_from.setdefault(index, position.round)
            # a round since the trigger started that found nothing more: this processor is done
            return not (position.round > first and facts is not None and facts.ended == "dry" and not facts.carried)
        if facts is None or facts.emitted:
            self._pause.pop(index, None)
            return True
        due = self._due.get(index)
        if due is None or due[0] != position.round:  # first look at this empty round: pause, longer each time
            pause = min(
                self.options.get_int(StreamOptions.IDLE_POLL_MS, DEFAULT_IDLE_POLL_MS, minimum=0) / 1000,
                self._pause.get(index, _FIRST_IDLE_PAUSE_S / 2) * 2,
            )
            self._pause[index] = pause
            due = self._due[index] = (position.round, time.monotonic() + pause)
        return time.monotonic() >= due[1]

    def _last_facts(self, rounds: RoundLog, index: int, round_: int) -> RoundFacts | None:
        if round_ == 0:
            return None
        facts = self._facts.get((index, round_))
        if facts is None:
            facts = rounds.facts(index, round_)
            if facts is None:
                return None  # planned but not read: the next round completes it first
            self._facts = {k: v for k, v in self._facts.items() if k[0] != index}
            self._facts[(index, round_)] = facts
        return facts

    def ranges(self, start: Offset, end: Offset) -> Sequence[Range]:
        begin, finish = parse_offset(start, self.name), parse_offset(end, self.name)
        moved = []
        for i, position in sorted(finish.items()):
            before = begin.get(i)
            if before is not None and before.run == position.run and before.round == position.round:
                continue
            if position.round == 1 and (before is None or before.round == 0):
                # the first round of a run: Spark replays a first micro-batch that was planned but not
                # committed from a *new* initial offset (a fresh run id, made by the restarted driver);
                # round 0 of any run is the fresh state, so the checkpoint's run goes on
                before = RoundPosition(position.run, 0, position.total)
            elif before is None or position.round != before.round + 1 or position.run != before.run:
                raise OffsetError(
                    f"source '{self.name}': processor {i} goes from {before} to {position} in one micro-batch; "
                    f"jetconnect plans one round at a time: was the checkpoint edited?"
                )
            moved.append(Range(str(i), before.to_json(), position.to_json()))
        return moved

    def commit(self, end: Offset) -> None:
        positions = parse_offset(end, self.name)
        if not positions:
            return
        rounds = self._rounds(next(iter(positions.values())).run)
        keep = (
            0
            if self.replays_by_snapshot
            else self.options.get_int(StreamOptions.SPOOL_KEEP_COMMITTED_ROWS, 0, minimum=0)
        )
        for i, position in positions.items():
            rounds.trim(i, position.round)  # the end round's record starts the next round
            if not self.replays_by_snapshot and position.round:
                facts = rounds.facts(i, position.round)
                if facts is not None:
                    rounds.run_dir.spool(i).trim(facts.log_to - keep)

    def stop(self) -> None:
        # the receivers in the executors stop (and close their connections) when they see this.
        # Spark calls it on most query.stop()s but not all (not when it replaces the
        # reader's process under load); receivers then stop when the beacon that process ran goes
        # quiet. AvailableNow calls it itself when every processor is done.
        if self._beacon is not None:
            self._beacon.stop()
            self._beacon = None
        if self._active is not None and not self.replays_by_snapshot:
            self._active.run_dir.mark_stopped()

    def _stop_on_sigterm(self) -> None:
        """In Spark's stream reader process, call :meth:`stop` when Spark ends the process.

        ``query.stop()`` need not call the reader's ``stop()``: PySpark 4.x's
        ``PythonStreamingSourceRunner.stop`` destroys the reader's process (SIGTERM). Caught
        here, the stop marker is written first, so receivers stop at their next heartbeat
        instead of when the beacon has been quiet for ``QUERY_GONE_S``; then the process ends as
        it would have. Only in that process's main thread, and only if nobody else handles SIGTERM.
        """
        main = getattr(sys.modules.get("__main__"), "__spec__", None)
        in_runner = "python_streaming_source_runner" in (getattr(main, "name", "") or "") + " ".join(sys.argv[:1])
        if (
            not in_runner
            or threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
        ):
            return
        source = weakref.ref(self)

        def on_sigterm(signum: int, frame: object) -> None:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            try:
                alive = source()
                if alive is not None:
                    alive.stop()
            finally:
                os.kill(os.getpid(), signal.SIGTERM)  # end as Spark meant it to

        signal.signal(signal.SIGTERM, on_sigterm)

    # -- executor side: processor i pulls or replays its round --

    def run_of(self, range_: Range) -> str:
        """The stream run a range belongs to (it names where the run's records and spools live)."""
        return parse_position(range_.partition, range_.end, self.name).run

    def rounds_of(self, run: str) -> RoundLog:
        """The round records (and, through their ``run_dir``, the spools) of stream run ``run``."""
        return self._rounds(run)

    def _check_wal_location(self, rounds: RoundLog) -> None:
        """``wal_location`` must be (or become) a directory: a file there fails naming the option."""
        where = self.options[WAL_LOCATION]
        try:
            rounds.fs.mkdirs(rounds.run_dir.location)  # the location itself, made once anyway
        except Exception as exc:  # any file system's refusal (a file there, no permission): name the option
            raise OptionError(
                f"source '{self.name}': option '{WAL_LOCATION}' {where!r} is not a directory jetconnect can "
                f"write in (a file there?): {type(exc).__name__}: {getattr(exc, 'strerror', None) or exc}"
            ) from None

    def _check_options(self) -> None:
        """Read every option once, so a bad value fails the query's start naming it, not a task later."""
        self._max_pull_ms(RoundPosition("check", 0, 1, drain=True))
        self._max_pull_ms(RoundPosition("check", 0, 1))
        self._backlog()
        self.options.get_int(StreamOptions.MAX_PULL_RECORDS, None, minimum=1)
        self.options.get_int(StreamOptions.IDLE_POLL_MS, DEFAULT_IDLE_POLL_MS, minimum=0)
        self.options.get_int(StreamOptions.KEEP_ALIVE_MS, DEFAULT_KEEP_ALIVE_MS, minimum=0)
        self.options.get_int(StreamOptions.SPOOL_KEEP_COMMITTED_ROWS, 0, minimum=0)

    def _max_pull_ms(self, position: RoundPosition) -> int:
        if position.drain:
            return self.options.get_int(
                StreamOptions.AVAILABLE_NOW_MAX_PULL_MS, DEFAULT_AVAILABLE_NOW_MAX_PULL_MS, minimum=1
            )
        return self.options.get_int(StreamOptions.MAX_PULL_MS, DEFAULT_MAX_PULL_MS, minimum=1)

    def _backlog(self) -> Backlog:
        return Backlog(
            rows=self.options.get_int(StreamOptions.MAX_BACKLOG, DEFAULT_MAX_BACKLOG, minimum=1),
            bytes=self.options.get_int(StreamOptions.MAX_BACKLOG_BYTES, DEFAULT_MAX_BACKLOG_BYTES, minimum=1),
            past_commits=self.options.get_bool(StreamOptions.BACKLOG_PAST_COMMITS, False),
        )

    def _sealing(self) -> Sealing:
        linger = self.options.get_int(StreamOptions.SPOOL_LINGER_MS, DEFAULT_LINGER_MS, minimum=0)
        if linger > SPOOL_LINGER_MS_LIMIT:
            raise OptionError(
                f"source '{self.name}': option '{StreamOptions.SPOOL_LINGER_MS}' must be at most {SPOOL_LINGER_MS_LIMIT} (ms), got "
                f"{linger}: a receiver renews its lease between segments"
            )
        return Sealing(
            linger / 1000, self.options.get_int(StreamOptions.SPOOL_SEGMENT_ROWS, DEFAULT_SEGMENT_ROWS, minimum=1)
        )

    def read_range(self, range_: Range) -> ReadOutput:
        position = parse_position(range_.partition, range_.end, self.name)
        before = parse_position(range_.partition, range_.start, self.name)
        run = ProcessorRun(
            self.spec,
            self.options,
            self._rounds(position.run),
            int(range_.partition),
            position.total,
            max_pull_s=self._max_pull_ms(position) / 1000,
            keep_alive_s=self.options.get_int(StreamOptions.KEEP_ALIVE_MS, DEFAULT_KEEP_ALIVE_MS, minimum=0) / 1000,
        )
        reader: RoundReader
        if self.replays_by_snapshot:
            reader = SnapshotRounds(run)
        else:
            reader = LogRounds(run, self._backlog(), position.drain, self._sealing())
        return reader.read(RoundPlan(position.round, position.limit, before.limit))


def stop_receivers(wal_location: str) -> int:
    """Tell the receivers of every stream run recorded under ``wal_location`` to stop; returns how many runs.

    What a query's ``stop()`` does for its own run, for when Spark did not call it (it skips the
    driver-side reader's ``stop()`` now and then, e.g. after replacing the reader's process):
    without it, the receivers of a stream that cannot replay go on pulling (up to ``max_backlog``)
    until ``processor_keep_alive_ms`` runs out. Only use it on runs whose query has ended: a
    running query's receivers would stop too.
    """
    fs, path = resolve_location(wal_location, f"option '{WAL_LOCATION}'")
    runs = RunDirectory.runs(fs, path)
    for run in runs:
        run.mark_stopped()
    return len(runs)


__all__ = [
    "DEFAULT_IDLE_POLL_MS",
    "DEFAULT_KEEP_ALIVE_MS",
    "SPOOL_LINGER_MS_LIMIT",
    "WAL_LOCATION",
    "BuilderStreamSource",
    "StreamOptions",
    "stop_receivers",
]
