"""Rounds of a builder stream that cannot replay (sockets, brokers), in executor tasks.

The processor lives in a :class:`~jetconnect._builders._receiver.Receiver` that spools what it
receives (a write-ahead log) and acknowledges it upstream after; a round takes a range of the
spool, records it, and delivers it. A replay reads the same range.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator

import pyarrow as pa

from jetconnect._builders._lease import Lease, owner_description
from jetconnect._builders._processor import Processor
from jetconnect._builders._receiver import (
    DEFAULT_BACKLOG,
    DEFAULT_SEALING,
    RECEIVERS,
    Backlog,
    Receiver,
    Sealing,
    raise_receiver_error,
)
from jetconnect._builders._round_reader import ProcessorRun, RoundPlan, RoundReader
from jetconnect._locations import WAL_LOCATION
from jetconnect._round_log import Round, RoundFacts, new_attempt_id
from jetconnect.errors import OffsetError, SourceError


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
        run: ProcessorRun,
        backlog: Backlog = DEFAULT_BACKLOG,
        drain: bool = False,
        sealing: Sealing = DEFAULT_SEALING,
    ) -> None:
        super().__init__(run)
        self.drain = drain
        self.sealing = sealing
        self.stall_s = self.DRAIN_STALL_S if drain else self.STALL_S
        self.run_dir = self.rounds.run_dir
        self.spool = self.run_dir.spool(self.index)
        self.lease = Lease(self.run_dir.fs, self.run_dir.lease_folder(self.index))
        self.backlog = backlog

    def pull(self, plan: RoundPlan) -> Iterator[pa.RecordBatch]:
        """Take the spool from where the round before ended, delivering rows while the receiver
        appends them (Spark consumes them meanwhile), then record the range taken.

        Rows go out before the record is written, as a snapshot round's do: should another attempt
        of the round have recorded a different range first, this attempt fails, so Spark discards
        its rows and a retry replays the record.
        """
        round_, limit = plan.round, plan.limit
        previous = self.previous(plan)
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

    def replay(self, plan: RoundPlan, record: Round) -> Iterator[pa.RecordBatch]:
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
            RECEIVERS.discard(self.key, receiver)
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
            self.run_dir.stop_marker,
            self.keep_alive_s,
            self.backlog,
            last_round_at=lambda: rounds.last_written(index),
            sealing=self.sealing,
            beacon=self.run_dir.beacon,
        )
        receiver.start()
        RECEIVERS.add(self.key, receiver)
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
                    RECEIVERS.discard(self.key, receiver)
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


__all__ = ["LogRounds"]
