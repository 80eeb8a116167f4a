"""One round of one processor, in an executor task: replay its record, or pull it and record it.

Two strategies, one per way a builder stream replays (docs/ARCHITECTURE.md section 3):

* :class:`SnapshotRounds`, for streams with snapshot functions: a round streams its rows out as
  it pulls, then records how many items it pulled and the processor's snapshot after them. A
  replay restores the snapshot the round started from and pulls the same number again.
* :class:`LogRounds`, for streams that cannot replay (sockets, brokers): the processor lives in a
  receiver that spools what it receives (a write-ahead log) and acknowledges it upstream after;
  a round records the spool range it takes. A replay reads the range.

Both keep the round's item limit exact: in snapshot rounds, rows a last fill brings past it are
the round's *carry*, kept in its record and delivered first by the next round. Snapshot rounds
leave the processor in this worker's :data:`~jetconnect._builders._processor.LIVE` cache, so a
next round that lands here goes on without restoring anything.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections.abc import Generator, Iterator

import pyarrow as pa

from jetconnect._arrow import DEFAULT_BATCH_ROWS, to_arrow_schema
from jetconnect._builders._processor import LIVE, Items, LiveProcessor, Processor, destroy_quietly
from jetconnect._builders._receiver import (
    DEFAULT_BACKLOG,
    DEFAULT_SEALING,
    Backlog,
    Lease,
    Receiver,
    Sealing,
    owner_description,
    raise_receiver_error,
)
from jetconnect._builders._spec import SourceSpec
from jetconnect._options import Options
from jetconnect._rounds import Round, RoundFacts, RoundLog, new_attempt_id
from jetconnect._spool import Spool
from jetconnect.errors import OffsetError, SourceError

#: The option naming where rounds and spools live (named in errors).
WAL_LOCATION = "wal_location"

log = logging.getLogger("jetconnect.source")

#: How long a replay waits for a source that has stopped giving the items it gave before.
REPLAY_PATIENCE_S = 30.0


class Gathered:
    """What one pull of a snapshot round brought: rows delivered, rows carried past the limit, why it ended."""

    def __init__(self, schema: pa.Schema) -> None:
        self.carry: pa.Table = schema.empty_table()
        self.emitted = 0
        self.pulled = 0
        self.ended = "dry"


class RoundReader:
    """Reads rounds of processor ``index`` of ``total`` (base of the two strategies)."""

    def __init__(
        self,
        spec: SourceSpec,
        options: Options,
        rounds: RoundLog,
        index: int,
        total: int,
        max_pull_s: float,
        keep_alive_s: float,
    ) -> None:
        self.spec = spec
        self.options = options
        self.rounds = rounds
        self.index = index
        self.total = total
        self.max_pull_s = max_pull_s
        self.keep_alive_s = keep_alive_s
        self.where = f"source '{spec.name}' processor {index}/{total}"
        self.key = (spec.token, rounds.run, index)
        self.arrow_schema = to_arrow_schema(spec.output_schema)
        #: The limit the round before the one being read was planned with (to complete it if need be).
        self.previous_limit: int | None = None

    def read(self, round_: int, limit: int | None, previous_limit: int | None = None) -> Iterator[pa.RecordBatch]:
        """The rows of ``round_``: exactly what its record says if it has one, else pulled now.

        ``previous_limit`` is the limit the round before was planned with, should it need completing.
        """
        self.previous_limit = previous_limit
        record = self.rounds.read(self.index, round_)
        if record is not None:
            return self.replay(round_, record)
        return self.pull(round_, limit)

    def replay(self, round_: int, record: Round) -> Iterator[pa.RecordBatch]:
        raise NotImplementedError

    def pull(self, round_: int, limit: int | None) -> Iterator[pa.RecordBatch]:
        raise NotImplementedError

    # -- shared steps --

    def previous(self, round_: int) -> RoundFacts | None:
        """The facts of the round before ``round_`` (None before the first), completed if it never ran.

        Spark may plan a round that is never read (an action that did not need every partition);
        its successor cannot start without it, so it is pulled and recorded now.
        """
        if round_ <= 1:
            return None
        facts = self.rounds.facts(self.index, round_ - 1)
        if facts is None:
            log.warning(
                "%s: round %d was planned but never read; completing it before round %d", self.where, round_ - 1, round_
            )
            limit, self.previous_limit = self.previous_limit, None  # an older missing round: no limit known
            for _ in self.pull(round_ - 1, limit):
                pass
            facts = self.rounds.facts(self.index, round_ - 1)
            if facts is None:  # pragma: no cover - pull() records or raises
                raise OffsetError(f"{self.where}: round {round_ - 1} could not be recorded in {self.rounds}")
        return facts


class SnapshotRounds(RoundReader):
    """Rounds of a stream with snapshot functions: rows stream out, the record keeps a count and a snapshot."""

    def carry_of(self, facts: RoundFacts | None) -> pa.Table | None:
        """The carry a recorded round left for the next one (read from its record only if it has one)."""
        if facts is None or not facts.carried:
            return None
        record = self.rounds.read(self.index, facts.round)
        if record is None:
            raise OffsetError(f"{self.where}: the record of round {facts.round} vanished from {self.rounds}")
        return record.carry

    def resume(self, round_: int, previous: RoundFacts | None) -> tuple[Processor, pa.Table | None, bool]:
        """A processor where ``previous`` left off, its carry, and whether it came live from this worker."""
        live = LIVE.take(self.key)
        if live is not None and live.round == round_ - 1 and (previous is None or live.attempt == previous.attempt):
            return live.processor, live.carry, True
        if live is not None:  # left by a round another attempt recorded, or by an older round
            destroy_quietly(live.processor)
        return Processor(self.spec, self.index, self.total, self.options), self.carry_of(previous), False

    def keep(self, processor: Processor, round_: int, attempt: str, carry: pa.Table | None) -> None:
        """Leave ``processor`` in this worker for the next round."""
        LIVE.put(self.key, LiveProcessor(processor, round_, attempt, carry), self.keep_alive_s)

    def gather(
        self, processor: Processor, carry: pa.Table | None, limit: int | None, out: Gathered
    ) -> Iterator[pa.RecordBatch]:
        """Deliver ``carry``, then pull until ``limit`` rows, a fill that adds nothing, or the time is up.

        Rows are yielded as they are converted; ``out`` says what was pulled, delivered and carried.
        """
        if carry is not None and carry.num_rows:
            take = carry.num_rows if limit is None else min(limit, carry.num_rows)
            yield from carry.slice(0, take).to_batches()
            out.emitted = take
            if take < carry.num_rows:
                out.carry, out.ended = carry.slice(take), "limit"
                return
        items = Items(self.spec)
        started = time.monotonic()
        while True:
            if limit is not None and out.emitted + len(items) >= limit:
                out.ended = "limit"
                break
            if time.monotonic() - started >= self.max_pull_s:
                out.ended = "time"
                break
            buf = processor.fill()
            if not buf.items:
                break
            out.pulled += len(buf.items)
            items.extend(buf)
            if len(items) >= DEFAULT_BATCH_ROWS and (limit is None or out.emitted + len(items) <= limit):
                batch = items.take_batch()
                out.emitted += batch.num_rows
                yield batch
        if len(items):
            batch = items.take_batch()
            room = batch.num_rows if limit is None else min(batch.num_rows, limit - out.emitted)
            if room:
                out.emitted += room
                yield batch.slice(0, room)
            if room < batch.num_rows:
                out.carry = pa.Table.from_batches([batch.slice(room)])

    def _start(self, round_: int, record: Round | None) -> tuple[Processor, pa.Table | None, object]:
        """A processor at the start of ``round_``, its carry, and the start snapshot to record (round 1).

        ``record`` is the round's own record when it is replayed.
        """
        previous = self.previous(round_)
        processor, carry, live = self.resume(round_, previous)
        start_snapshot = None
        try:
            if previous is not None:
                if not live:
                    processor.restore(previous.snapshot)
            elif record is not None:
                if record.facts.start_snapshot is not None:
                    processor.restore(record.facts.start_snapshot)
            elif not live:
                start_snapshot = processor.snapshot()
        except BaseException:
            destroy_quietly(processor)
            raise
        return processor, carry, start_snapshot

    def pull(self, round_: int, limit: int | None) -> Iterator[pa.RecordBatch]:
        processor, carry, start_snapshot = self._start(round_, None)
        attempt = new_attempt_id()
        out = Gathered(self.arrow_schema)
        try:
            yield from self.gather(processor, carry, limit, out)
            facts = RoundFacts(
                out.emitted,
                out.pulled,
                out.ended,
                attempt,
                carried=out.carry.num_rows,
                round=round_,
                snapshot=processor.snapshot(),
                start_snapshot=start_snapshot,
                total=self.total,
            )
            winner = self.rounds.write(self.index, round_, Round(facts, out.carry))
            if winner.facts.attempt != attempt and not winner.facts.same_contents(facts):
                raise SourceError(
                    f"{self.where}: another attempt recorded round {round_} first, with other contents "
                    f"({winner.facts} against {facts}); this attempt's rows are discarded and a retry replays "
                    f"the record (is speculation on?)"
                )
            processor.acknowledge()
        except BaseException:
            destroy_quietly(processor)
            raise
        self.keep(processor, round_, winner.facts.attempt, winner.carry)

    def replay(self, round_: int, record: Round) -> Iterator[pa.RecordBatch]:
        processor, carry, _ = self._start(round_, record)
        facts = record.facts
        try:
            from_carry = 0
            if carry is not None and carry.num_rows:
                from_carry = min(carry.num_rows, facts.emitted)
                yield from carry.slice(0, from_carry).to_batches()
            exact = yield from self._pull_exactly(processor, facts.pulled, facts.emitted - from_carry, round_)
        except BaseException:
            destroy_quietly(processor)
            raise
        if exact:
            self.keep(processor, round_, facts.attempt, record.carry)
        else:  # a fill went past the round's items: the state is beyond the round's end
            destroy_quietly(processor)

    def _pull_exactly(
        self, processor: Processor, count: int, deliver: int, round_: int
    ) -> Generator[pa.RecordBatch, None, bool]:
        """Pull ``count`` items, deliver the first ``deliver``; True if no fill went past ``count``."""
        items = Items(self.spec)
        got = delivered = 0
        quiet_since = time.monotonic()
        while got < count:
            buf = processor.fill()
            if buf.items:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > REPLAY_PATIENCE_S:
                raise SourceError(
                    f"{self.where}: replaying round {round_} gave {got} of the {count} items it gave before: "
                    f"restore_snapshot_fn must make the source deterministic"
                )
            else:
                time.sleep(0.001)
            items.extend(buf)
            got += len(buf.items)
            if len(items) >= DEFAULT_BATCH_ROWS and got < count:
                batch = items.take_batch()
                room = min(batch.num_rows, deliver - delivered)
                if room:
                    yield batch.slice(0, room)
                    delivered += room
        if len(items):
            items.truncate(len(items) - (got - count))
            batch = items.take_batch()
            room = min(batch.num_rows, deliver - delivered)
            if room:
                yield batch.slice(0, room)
        return got == count


class LogRounds(RoundReader):
    """Rounds of a stream that cannot replay: a receiver spools what it receives, a round takes a range.

    The processor lives in a :class:`~jetconnect._builders._receiver.Receiver` (one in the whole
    cluster, in the worker that started it); a round, wherever it runs, waits briefly for rows past
    where the round before ended, records the spool range it takes, and delivers it. A replay
    reads the same range.
    """

    #: How often a round looks whether rows keep arriving.
    LOOK_S = 0.02
    #: How long the spool may stop growing before a round ends: a round of Trigger.AvailableNow
    #: (``drain``) waits out a receiver's slow append or a pause on its backlog, since every
    #: round it ends early costs a micro-batch; any other round ends at the first stall (a slow
    #: stream's round takes about one lingered segment: its rows wait one linger, not more).
    STALL_S = 0.05
    DRAIN_STALL_S = 0.5

    def __init__(
        self,
        *args: object,
        backlog: Backlog = DEFAULT_BACKLOG,
        drain: bool = False,
        sealing: Sealing = DEFAULT_SEALING,
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]  # the base class parameters, passed through
        self.drain = drain
        self.sealing = sealing
        self.stall_s = self.DRAIN_STALL_S if drain else self.STALL_S
        self.spool = spool_of(self.rounds, self.index)
        self.lease = Lease(self.rounds.fs, self.rounds.folder(self.index))
        self.stop_marker = stop_marker(self.rounds)
        self.beacon = beacon_path(self.rounds)
        self.backlog = backlog

    def pull(self, round_: int, limit: int | None) -> Iterator[pa.RecordBatch]:
        """Take the spool from where the round before ended, delivering rows while the receiver
        appends them (Spark consumes them meanwhile), then record the range taken.

        Rows go out before the record is written, as a snapshot round's do: should another attempt
        of the round have recorded a different range first, this attempt fails, so Spark discards
        its rows and a retry replays the record.
        """
        previous = self.previous(round_)
        begin = previous.log_to if previous is not None else 0
        receiver = self._receiver()
        if receiver is not None and self.drain:
            receiver.seal_when_dry = True  # AvailableNow wants what was received now, not after the linger
        attempt = new_attempt_id()
        delivered = begin
        growth = self._wait_for_rows(receiver, begin, limit)
        while True:
            try:
                spooled = next(growth)
            except StopIteration as done:
                end, ended = done.value
                break
            if spooled > delivered:
                yield from self.spool.read(delivered, spooled)
                delivered = spooled
                if receiver is not None:
                    receiver.claim(delivered)
        if end > delivered:
            yield from self.spool.read(delivered, end)
        facts = RoundFacts(
            end - begin,
            end - begin,
            ended,
            attempt,
            total=self.total,
            round=round_,
            log_from=begin,
            log_to=end,
        )
        winner = self.rounds.write(self.index, round_, Round(facts, self.arrow_schema.empty_table()))
        if winner.facts.attempt != attempt and not winner.facts.same_contents(facts):
            raise SourceError(
                f"{self.where}: another attempt recorded round {round_} first, with other contents (the spool "
                f"range [{winner.facts.log_from}, {winner.facts.log_to}) against this attempt's [{begin}, {end})); "
                f"this attempt's rows are discarded and a retry replays the record (is speculation on?)"
            )
        if receiver is not None:
            receiver.claim(end)

    def replay(self, round_: int, record: Round) -> Iterator[pa.RecordBatch]:
        yield from self.spool.read(record.facts.log_from, record.facts.log_to)

    def _receiver(self) -> Receiver | None:
        """This worker's receiver of the processor, started here if no live one exists anywhere.

        None when another worker's receiver is alive: its spool is read. A receiver that failed
        has its error raised here, once; the next round starts a new one.
        """
        receiver = RECEIVERS.get(self.key)
        if receiver is not None and not receiver.stopped.is_set():
            receiver.touch()
            return receiver
        if receiver is not None:
            del RECEIVERS[self.key]
            if receiver.error is not None:
                self._fail_with(receiver.error)
        if self.lease.holder() is not None:
            return None
        error = self.lease.error()
        if error is not None:
            self.lease.clear_error()
            raise_receiver_error(self.where, error)
        if not self.lease.acquire(owner_description()):
            return None  # another worker took it a moment ago
        processor = Processor(self.spec, self.index, self.total, self.options)
        rounds, index = self.rounds, self.index
        receiver = Receiver(
            processor,
            self.spool,
            self.lease,
            self.stop_marker,
            self.keep_alive_s,
            self.backlog,
            last_round_at=lambda: rounds.last_written(index),
            sealing=self.sealing,
            beacon=self.beacon,
        )
        receiver.start()
        RECEIVERS[self.key] = receiver
        return receiver

    def _fail_with(self, error: BaseException) -> None:
        """Raise a receiver's error once: the lease forgets it, so the next round starts a new receiver."""
        self.lease.clear_error()
        raise_receiver_error(self.where, error)

    def _wait_for_rows(
        self, receiver: Receiver | None, begin: int, limit: int | None
    ) -> Generator[int, None, tuple[int, str]]:
        """How far the round goes, and why it ends there; meanwhile, each time the spool has grown,
        how far it reaches (never past the limit), so the round can deliver what is there.

        It waits for rows past ``begin`` (or a fill that finds nothing), then, while rows keep
        arriving, until ``max_pull_ms`` is up or the limit is reached. It ended ``"dry"`` only if
        the receiver reported a fill that found nothing during the round: a receiver still
        connecting under load must not make an AvailableNow query end early.
        """
        cap = None if limit is None else begin + limit

        def look() -> tuple[int, int]:
            """The spool's end and the receiver's count of fills that found nothing."""
            if receiver is not None:
                if receiver.error is not None and receiver.end <= begin:
                    RECEIVERS.pop(self.key, None)
                    self._fail_with(receiver.error)
                return receiver.end, receiver.dry_fills
            holder = self.lease.holder()
            status = holder[1] if holder is not None else {}
            return self.spool.bounds()[1], int(status.get("dry_fills", 0))

        started = time.monotonic()
        end, dry_before = look()
        # A lingering receiver holds rows it received while its fills find nothing more: a fill that
        # finds nothing ends the wait only after a linger (unless it seals at once: AvailableNow here)
        patience = 0.0 if receiver is not None and receiver.seal_when_dry else self.sealing.linger_s + self.STALL_S
        patience = min(patience, self.max_pull_s)
        if receiver is not None:
            receiver.wait_beyond(begin, None, patience)
            receiver.wait_beyond(begin, dry_before, self.max_pull_s - (time.monotonic() - started))
        else:
            while time.monotonic() - started < self.max_pull_s:
                now, dry = look()
                if now > begin or (dry != dry_before and time.monotonic() - started >= patience):
                    break
                time.sleep(self.LOOK_S)
        end, dry = look()
        moved_at = time.monotonic()
        while end > begin and (cap is None or end < cap) and time.monotonic() - started < self.max_pull_s:
            yield end if cap is None else min(end, cap)
            time.sleep(self.LOOK_S * 2.5)  # rows are flowing: a bigger round costs Spark less per row
            now, dry = look()
            if now != end:
                end, moved_at = now, time.monotonic()
            elif dry > dry_before or time.monotonic() - moved_at >= self.stall_s:
                break
        if end < begin:
            raise OffsetError(
                f"{self.where}: the spool {self.spool} ends at {end}, before {begin} where the last round ended: "
                f"was '{WAL_LOCATION}' changed or emptied?"
            )
        if cap is not None and end >= cap:
            return cap, "limit"
        return end, "dry" if dry > dry_before else "time"


def spool_of(rounds: RoundLog, index: int) -> Spool:
    """Where processor ``index`` of the run ``rounds`` keeps what its receiver receives."""
    return Spool(rounds.fs, posixpath.join(rounds.folder(index), "spool"), owner=f"processor {index}")


#: The receivers this Python worker runs, by (source, run, processor).
RECEIVERS: dict[tuple[str, str, int], Receiver] = {}


def stop_marker(rounds: RoundLog) -> str:
    """The file whose presence tells a run's receivers that the query stopped."""
    return posixpath.join(rounds.directory, "_stopped")


def beacon_path(rounds: RoundLog) -> str:
    """The file the driver's :class:`~jetconnect._builders._receiver.QueryBeacon` rewrites while the query runs."""
    return posixpath.join(rounds.directory, "_alive")


__all__ = [
    "LogRounds",
    "REPLAY_PATIENCE_S",
    "RoundReader",
    "SnapshotRounds",
    "beacon_path",
    "spool_of",
    "stop_marker",
]
